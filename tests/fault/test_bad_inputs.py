"""A corpus of bad inputs, each refused as a user should see it: exit status 2, one
line ``swath: error: ...`` on stderr naming what is wrong, no traceback, and no file
of the user's created, changed or deleted."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr
from click.testing import CliRunner

from swath.cli import main
from swath.engine.database import write_database
from swath.scoring import Scoring

GOOD_PROTEIN = ">q1\nMKTAYIAKQRQISFVKSHFSRQ\n>q2\nMKVLAAGIVGLLLA\n"
GOOD_DNA = ">a\nACGTACGTACGTTGCA\n>b\nACGTACGAACGTTGCA\n>c\nTTGTACGTACGTTGCA\n"

# malformed inputs: file name -> bytes (each is a FASTA/FASTQ slot's bad value)
MALFORMED: dict[str, bytes] = {
    "empty.fa": b"",
    "blank.fa": b"\n\n  \n",
    "no_header.fa": b"MKTAYIAKQR\n",
    "header_only.fa": b">q1\n",
    "empty_record.fa": b">q1\n>q2\nMKV\n",
    "digit.fa": b">q1\nMKT1AYI\n",
    "binary.fa": bytes(range(256)),
    "truncated.fq": b"@r1\nMKV\n+\n",
    "quality_length.fq": b"@r1\nMKV\n+\nII\n",
    "truncated_gzip.fa.gz": gzip.compress(GOOD_PROTEIN.encode())[:20],
    "unknown_residue.fa": b">q1\nMKTJAYI\n",     # J: not in the protein alphabet
}


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``root``: size and modification time."""
    out = {}
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(here, name)
            stat = os.lstat(path)
            out[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad-inputs")
    (root / "q.fa").write_text(GOOD_PROTEIN)
    (root / "one.fa").write_text(GOOD_PROTEIN.split(">q2")[0])
    (root / "db.fa").write_text(GOOD_PROTEIN + ">t3\nWWWWKKKK\n")
    (root / "dna.fa").write_text(GOOD_DNA)
    (root / "dupes.fa").write_text(GOOD_DNA + ">a\nACGTTT\n")
    for name, content in MALFORMED.items():
        (root / name).write_bytes(content)
    write_database(root / "db.fa", root / "db.swdb", Scoring.protein().alphabet)
    (root / "full").mkdir()
    (root / "full" / "notes.txt").write_text("a user's notes")
    (root / "holds_inputs").mkdir()
    (root / "holds_inputs" / "q.fa").write_text(GOOD_PROTEIN)
    zarr.open_group(str(root / "foreign.zarr"), mode="w", zarr_format=3).create_array(
        "x", data=np.arange(3))
    (root / "a_file.txt").write_text("not a store")
    (root / "unknown.tsv").write_text("# query target\nq1\tq2\nq2 nope\n")
    (root / "onecol.tsv").write_text("q1 q2\nq2\n")
    (root / "comments.tsv").write_text("# query target\n\n")
    (root / "ab.tsv").write_text("a b\n")
    (root / "emptydir").mkdir()
    return root


def _commands_with_slot() -> Iterator[tuple[str, list[str]]]:
    """Each input slot of each command, as argv with ``{}`` where the file goes."""
    yield "search-queries", ["search", "{}", "db.swdb", "-o", "new.zarr"]
    yield "search-database", ["search", "q.fa", "{}", "-o", "new.zarr"]
    yield "allpairs", ["allpairs", "{}", "-o", "new.zarr"]
    yield "align-query", ["align", "{}", "q.fa"]
    yield "align-target", ["align", "q.fa", "{}"]
    yield "makedb", ["makedb", "{}", "new.swdb"]
    yield "pairs-queries", ["pairs", "{}", "q.fa", "-o", "new.zarr"]
    yield "pairs-targets", ["pairs", "q.fa", "{}", "-o", "new.zarr"]


def _cases() -> Iterator[tuple[str, list[str], str]]:
    """(id, argv, a fragment the one line must hold)."""
    for slot, argv in _commands_with_slot():
        for name in [*MALFORMED, "missing.fa", "emptydir"]:
            yield (f"{slot}-{name}", [a.replace("{}", name) for a in argv],
                   name if name != "emptydir" else "emptydir")
    scoring = {
        "gap-open-negative": (["--gap-open", "-1"], "gap"),
        "gap-extend-huge": (["--gap-extend", "1000000000"], "at most"),
        "gap-open-huge": (["--gap-open", "2000000"], "at most"),
        "gap-open-text": (["--gap-open", "eleven"], "gap-open"),
        "gaps-free": (["--gap-open", "0", "--gap-extend", "0"], "free"),
        "matrix-unknown": (["--matrix", "NOPE62"], "NOPE62"),
        "matrix-file-missing": (["--matrix", "missing.mat"], "missing.mat"),
        "mode-unknown": (["--mode", "sideways"], "sideways"),
        "device-unknown": (["--device", "tpu"], "tpu"),
    }
    commands = {"search": ["search", "q.fa", "db.swdb", "-o", "new.zarr"],
                "allpairs": ["allpairs", "q.fa", "-o", "new.zarr"],
                "align": ["align", "q.fa", "q.fa"],
                "pairs": ["pairs", "q.fa", "q.fa", "-o", "new.zarr"]}
    for command, argv in commands.items():
        for name, (options, fragment) in scoring.items():
            yield f"{command}-{name}", argv + options, fragment
    dna = {"match-zero": (["--dna", "--match", "0"], "match"),
           "mismatch-above-match": (["--dna", "--match", "1", "--mismatch", "2"], "mismatch")}
    for command, argv in commands.items():
        for name, (options, fragment) in dna.items():
            yield f"{command}-{name}", [a.replace("q.fa", "dna.fa") for a in argv] + options, \
                fragment
    outputs = {"a-file": "a_file.txt", "dir-with-files": "full", "cwd": ".",
               "dir-holding-inputs": "holds_inputs", "foreign-zarr": "foreign.zarr",
               "a-database": "db.swdb", "under-a-file": "a_file.txt/r.zarr",
               "the-queries": "q.fa"}
    writers = {"search": ["search", "q.fa", "db.swdb", "-o"],
               "allpairs": ["allpairs", "dna.fa", "--dna", "-o"],
               "align": ["align", "one.fa", "one.fa", "-o"],
               "pairs": ["pairs", "q.fa", "q.fa", "-o"]}
    for command, argv in writers.items():
        for name, path in outputs.items():
            fragment = path.split("/")[0] if path != "." else "current directory"
            yield f"{command}-output-{name}", [*argv, path], fragment
    for name in ("a-file", "foreign-zarr", "a-database"):     # refused before it starts
        yield f"align-on-a-cluster-output-{name}", [*writers["align"], outputs[name],
                                                    "--workers", "2"], outputs[name]
    for command in ("inspect", "resume", "verify"):
        for name, path in {"missing": "nothing.zarr", "file": "a_file.txt",
                           "empty-dir": "emptydir", "foreign": "foreign.zarr"}.items():
            yield f"{command}-{name}", [command, path], path
    for command in ("inspect", "resume"):
        yield f"{command}-database", [command, "db.swdb"], "not a result store"
    yield "align-output-many-pairs", ["align", "q.fa", "q.fa", "-o", "new.zarr"], \
        "makes 2 pairs"
    options = {
        "top-k-zero": (["search", "q.fa", "db.swdb", "-o", "n.zarr", "--top-k", "0"], "top-k"),
        "query-block-zero": (["search", "q.fa", "db.swdb", "-o", "n.zarr", "--query-block",
                              "0"], "query-block"),
        "max-evalue-negative": (["search", "q.fa", "db.swdb", "-o", "n.zarr", "--max-evalue",
                                 "-1"], "max-evalue"),
        "max-evalue-global": (["search", "q.fa", "db.swdb", "-o", "n.zarr", "--mode", "global",
                               "--max-evalue", "1"], "applies to local searches"),
        "max-evalue-without-statistics": (["search", "q.fa", "db.swdb", "-o", "n.zarr",
                                           "--gap-open", "7", "--gap-extend", "3",
                                           "--max-evalue", "1"], "needs e-values"),
        "min-identity-two": (["allpairs", "dna.fa", "--dna", "-o", "n.zarr",
                              "--min-identity", "2"], "min-identity"),
        "block-zero": (["allpairs", "dna.fa", "--dna", "-o", "n.zarr", "--block", "0"],
                       "block"),
        "iddef-unknown": (["allpairs", "dna.fa", "--dna", "-o", "n.zarr", "--iddef", "9"],
                          "iddef"),
        "tile-size-zero": (["align", "q.fa", "q.fa", "--tile-size", "0"], "tile-size"),
        "partition-zero": (["makedb", "q.fa", "n.swdb", "--partition-residues", "0"],
                           "partition-residues"),
        "duplicate-names-allpairs": (["allpairs", "dupes.fa", "--dna", "-o", "n.zarr"],
                                     "'a' is given twice"),
        "duplicate-names-makedb": (["makedb", "--dna", "dupes.fa", "n.swdb"],
                                   "'a' is given twice"),
        "makedb-over-database": (["makedb", "db.fa", "db.swdb"], "already exists"),
        "makedb-over-notes": (["makedb", "db.fa", "full", "--overwrite"], "not a swath"),
        "search-missing-database": (["search", "q.fa", "nothing.swdb", "-o", "n.zarr"],
                                    "nothing.swdb"),
        "search-database-is-a-dir": (["search", "q.fa", "full", "-o", "n.zarr"], "full"),
        "search-dna-against-protein": (["search", "dna.fa", "db.swdb", "--dna", "-o",
                                        "n.zarr"], "alphabet"),
        "overwrite-a-user-dir": (["search", "q.fa", "db.swdb", "-o", "full", "--overwrite"],
                                 "full"),
        "pairs-unequal-counts": (["pairs", "q.fa", "db.fa", "-o", "n.zarr"],
                                 "q.fa has 2 records and db.fa 3: pairs by position"),
        "pairs-unknown-name": (["pairs", "q.fa", "q.fa", "--pairs", "unknown.tsv", "-o",
                                "n.zarr"], "unknown.tsv line 3: target 'nope' is not a record"),
        "pairs-one-column": (["pairs", "q.fa", "q.fa", "--pairs", "onecol.tsv", "-o", "n.zarr"],
                             "onecol.tsv line 2: expected two names (query, target)"),
        "pairs-no-pair": (["pairs", "q.fa", "q.fa", "--pairs", "comments.tsv", "-o", "n.zarr"],
                          "comments.tsv: holds no pair"),
        "pairs-file-missing": (["pairs", "q.fa", "q.fa", "--pairs", "nothing.tsv", "-o",
                                "n.zarr"], "nothing.tsv: no such file"),
        "pairs-file-a-dir": (["pairs", "q.fa", "q.fa", "--pairs", "emptydir", "-o", "n.zarr"],
                             "emptydir: is a directory"),
        "pairs-file-binary": (["pairs", "q.fa", "q.fa", "--pairs", "binary.fa", "-o",
                               "n.zarr"], "binary.fa: not a text file"),
        "pairs-duplicate-query-names": (["pairs", "--dna", "dupes.fa", "dna.fa", "--pairs",
                                         "ab.tsv", "-o", "n.zarr"],
                                        "dupes.fa: name 'a' is given twice (records 1 and 4)"),
        "pairs-duplicate-target-names": (["pairs", "--dna", "dna.fa", "dupes.fa", "--pairs",
                                          "ab.tsv", "-o", "n.zarr"],
                                         "dupes.fa: name 'a' is given twice"),
        "pairs-chunk-zero": (["pairs", "q.fa", "q.fa", "-o", "n.zarr", "--chunk", "0"],
                             "chunk"),
        "pairs-out-exists": (["pairs", "q.fa", "q.fa", "-o", "n.zarr", "--out", "a_file.txt"],
                             "a_file.txt exists"),
        "pairs-outfmt-unknown": (["pairs", "q.fa", "q.fa", "-o", "n.zarr", "--outfmt", "xml"],
                                 "xml"),
    }
    for name, (argv, fragment) in options.items():
        yield name, argv, fragment


CASES = list(_cases())


def test_the_corpus_is_large() -> None:
    assert len(CASES) >= 100 and len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize(("argv", "fragment"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_refused_in_one_line(inputs: Path, argv: list[str], fragment: str,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(inputs)
    before = _tree(inputs)
    result = CliRunner().invoke(main, argv, catch_exceptions=True)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    assert len(lines) == 1 and lines[0].startswith("swath: error: "), result.stderr
    assert fragment in lines[0], lines[0]
    assert _tree(inputs) == before
