"""swath allpairs, and inspect / resume of its stores, from the command line."""

from __future__ import annotations

import itertools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

import swath
from swath.cli import main
from swath.results.allpairs import TABLE_COLUMNS
from swath.sequences import read_sequences
from tests.helpers import DNA, write_fasta

BLOCK = 8
COLUMNS = ["qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart", "qend",
           "sstart", "send", "evalue", "bitscore", "score", "cigar"]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def mutate(rng: np.random.Generator, seq: np.ndarray, subs: int, indels: int) -> np.ndarray:
    s = seq.tolist()
    for _ in range(subs):
        i = int(rng.integers(len(s)))
        s[i] = (s[i] + int(rng.integers(1, 4))) % 4
    for _ in range(indels):
        i = int(rng.integers(1, len(s) - 1))
        if rng.random() < 0.5:
            del s[i]
        else:
            s.insert(i, int(rng.integers(4)))
    return np.array(s, dtype=np.uint8)


@pytest.fixture(scope="module")
def fasta(tmp_path_factory) -> Path:
    """30 DNA sequences in groups of near copies (some pairs above 97% identity, some
    just below), of lengths from 40 to 400: several tiles of blocks of 8, pairs ruled out
    by length, by score, and kept."""
    rng = np.random.default_rng(14)
    seqs = []
    for size, copies in ((60, 4), (150, 6), (220, 6), (300, 5), (400, 3)):
        ancestor = rng.integers(0, 4, size).astype(np.uint8)
        seqs += [mutate(rng, ancestor, int(rng.integers(0, size // 60 + 1)),
                        int(rng.integers(0, 3)))
                 for _ in range(copies)]
    seqs += [rng.integers(0, 4, int(n)).astype(np.uint8) for n in rng.integers(40, 400, 6)]
    order = rng.permutation(len(seqs))
    root = tmp_path_factory.mktemp("allpairs")
    write_fasta(root / "empty.fasta", [])
    return write_fasta(root / "seqs.fasta", [(f"s{k}", DNA.alphabet.decode(seqs[i]))
                                             for k, i in enumerate(order)])


def run_args(fasta: Path, out: str, *extra: str) -> list[str]:
    return ["allpairs", "--dna", str(fasta), "-o", out, "--block", str(BLOCK), "--device",
            "cpu", "--no-progress", *extra]


@pytest.fixture(scope="module")
def finished(fasta, tmp_path_factory) -> tuple[str, Result]:
    """A store made by the command, with the clusters and the scores, and what it
    printed (--format tsv)."""
    out = str(tmp_path_factory.mktemp("finished") / "pairs.zarr")
    run = invoke(*run_args(fasta, out, "--clusters", "--scores", "--format", "tsv"))
    assert run.exit_code == 0, run.output
    return out, run


def table(fasta: Path, tmp_path: Path) -> list[Any]:
    """The API's table of the same job."""
    result = swath.allpairs(str(fasta), DNA, min_identity=0.97, store=str(tmp_path / "api.zarr"),
                            device="cpu", block=BLOCK, clusters=True)
    return list(result.to_table())


def fields(row: tuple[object, ...]) -> dict[str, Any]:
    return dict(zip(TABLE_COLUMNS, row, strict=True))


def internal(cigar: str) -> tuple[int, int]:
    """Length and gap opens of the alignment without a leading and a trailing gap run."""
    runs = [(int(n), op) for n, op in re.findall(r"(\d+)([=XID])", cigar)]
    if runs and runs[0][1] in "ID":
        runs = runs[1:]
    if runs and runs[-1][1] in "ID":
        runs = runs[:-1]
    return sum(n for n, _ in runs), sum(op in "ID" for _, op in runs)


# ---------------------------------------------------------------------------------
# the command


def vsearch_percent(r: dict[str, Any]) -> float:
    """A pair's identity in percent as vsearch computes it (pident: 100.0 * matches /
    columns, a C double)."""
    return 100.0 * r["matches"] / r["length"]


def test_allpairs_prints_the_api_table_in_vsearch_blast6out_columns_and_order(
        fasta, finished, tmp_path):
    """The table's pairs, each query's after the one before it in input order, the
    highest identity first (the double, not its rounding), then the earliest target: as
    vsearch --allpairs_global --blast6out writes them."""
    out, run = finished
    rows = [line.split("\t") for line in run.stdout.splitlines()]
    by_pair = {(r["query_name"], r["target_name"]): r
               for r in map(fields, table(fasta, tmp_path))}
    assert len(rows) == len(by_pair) > 10 and all(len(r) == len(COLUMNS) for r in rows)
    want = sorted(by_pair.values(), key=lambda r: (r["query_index"], -vsearch_percent(r),
                                                 r["target_index"]))
    assert [tuple(cells[:2]) for cells in rows] == [(r["query_name"], r["target_name"])
                                                    for r in want]
    assert len({r["query_index"] for r in want}) < len(want)        # queries of many pairs
    for cells in rows:
        r = by_pair[cells[0], cells[1]]
        length, opens = internal(r["cigar"])
        assert cells == [r["query_name"], r["target_name"], f"{vsearch_percent(r):.1f}",
                         str(length), str(r["mismatches"]), str(opens),
                         str(r["query_start"] + 1), str(r["query_end"]),
                         str(r["target_start"] + 1), str(r["target_end"]), "-1", "0",
                         str(r["score"]), r["cigar"]]
        assert (cells[6], cells[8]) == ("1", "1")          # global: whole sequences
        assert r["query_index"] < r["target_index"]        # the query: the earlier record
    summary = run.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"swath: 435 pairs in [\d.]+ s \([\d,]+ pairs/s\): [\d,]+ ruled out "
                        r"by length, [\d,]+ by score, [\d,]+ aligned, "
                        rf"{len(rows)} kept, \d+ clusters", summary), summary
    again = invoke("inspect", out)                          # tsv: the default
    assert again.exit_code == 0 and again.stdout == run.stdout
    rerun = invoke(*run_args(fasta, out, "--clusters", "--scores"))   # the same job again
    assert rerun.exit_code == 0, rerun.output
    assert re.fullmatch(rf"swath: {re.escape(out)} was complete already \(nothing to run\): "
                        r"435 pairs: [\d,]+ ruled out by length, .* kept, \d+ clusters",
                        rerun.stderr.strip().splitlines()[-1]), rerun.stderr


def test_kept_pairs_are_those_whose_alignment_reaches_the_identity(fasta, finished):
    _, run = finished
    seqs = read_sequences(str(fasta), DNA.alphabet)
    names = seqs.names
    kept = set()
    for i in range(len(seqs)):
        for j in range(i + 1, len(seqs)):
            if swath.align(seqs[i], seqs[j], scoring=DNA, mode="global",
                           device="cpu").identity >= 0.97:
                kept.add(frozenset((names[i], names[j])))
    got = {frozenset(line.split("\t")[:2]) for line in run.stdout.splitlines()}
    assert got == kept


def test_inspect_json_is_one_object_per_kept_pair_in_the_tsvs_order(fasta, finished,
                                                                     tmp_path):
    out, run = finished
    lines = invoke("inspect", out, "--format", "json").stdout.splitlines()
    tsv = [line.split("\t") for line in run.stdout.splitlines()]
    by_pair = {(r["query_name"], r["target_name"]): r
               for r in map(fields, table(fasta, tmp_path))}
    assert len(lines) == len(tsv) == len(by_pair)
    for line, cells in zip(lines, tsv, strict=True):
        record = json.loads(line)
        assert list(record)[:len(COLUMNS)] == COLUMNS
        assert [str(record[c]) for c in COLUMNS if c != "pident"] == [
            cell for c, cell in zip(COLUMNS, cells, strict=True) if c != "pident"]
        r = by_pair[cells[0], cells[1]]
        assert record["pident"] == vsearch_percent(r) and f"{record['pident']:.1f}" == cells[2]
        assert (record["query_index"], record["target_index"], record["identity"]) == (
            r["query_index"], r["target_index"], r["identity"])


@pytest.mark.parametrize("budget", [1, 6, 15])
def test_a_store_printed_a_run_of_queries_at_a_time_prints_the_same(finished, budget,
                                                                    tmp_path, monkeypatch):
    """A store of more kept pairs than ``PRINT_PAIRS`` prints in vsearch's order from
    store chunks of ``PRINT_PAIRS`` pairs, through a temporary file a run of queries
    (removed after): the same text in every format of that order; no read of more pairs
    than a chunk, no run of more than a chunk and one query's pairs."""
    from swath.results import allpairs as printers
    from swath.storage.allpairs import AllPairsStore

    out, _ = finished
    result = swath.open(out)
    formats = ("tsv", "blast6out", "json", "text", "uc")
    whole = {name: "".join(result.lines(name)) for name in formats}
    most = int(np.bincount(result.store.pairs()["query"]).max())
    read, pairs = [], AllPairsStore.pairs

    def counted(store, first=0, last=None):
        found = pairs(store, first, last)
        read.append(len(found["query"]))
        return found

    monkeypatch.setattr(AllPairsStore, "pairs", counted)
    monkeypatch.setattr(printers, "PRINT_PAIRS", budget)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    runs = list(printers.query_runs(result))
    assert len(runs) > 1 and max(read) <= budget < len(result)
    assert [(q.start, q.stop) for q, _ in runs] == list(itertools.pairwise(
        [runs[0][0].start, *(q.stop for q, _ in runs)])) and runs[-1][0].stop == 30
    assert all(len(p["query"]) <= budget + most for _, p in runs)
    assert all(set(p["query"].tolist()) <= set(q) for q, p in runs)
    assert sum(len(p["query"]) for _, p in runs) == len(result)
    for name in formats:
        assert "".join(result.lines(name)) == whole[name], name
    assert max(read) <= budget and not list(tmp_path.iterdir())


def test_inspect_text_prints_the_summary_and_every_kept_pair(finished):
    out, run = finished
    kept = len(run.stdout.splitlines())
    text = invoke("inspect", out, "--format", "text")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == f"# {out}: all pairs of 30 sequences"
    assert "# Pairs:        435" in lines and f"# Kept:         {kept}" in lines
    assert any(line.startswith("# By length:") for line in lines)
    assert any(line.startswith("# By score:") for line in lines)
    assert any(line.startswith("# Clusters:") for line in lines)
    assert text.stdout.count("# CIGAR:") == kept
    cigars = [line.split("\t")[13] for line in run.stdout.splitlines()]
    assert [line[len("# CIGAR:        "):] for line in lines if line.startswith("# CIGAR:")] \
        == cigars                                           # the tsv's pairs, in its order
    heads = [line for line in lines if line.startswith("# pair ")]
    assert heads[0].startswith(f"# pair 1 of {kept}: identity ") and heads[0].endswith(
        "% (pident)")


def test_plot_of_an_allpairs_store_is_refused_in_one_line(finished, tmp_path):
    out, _ = finished
    png = tmp_path / "p.png"
    refused = invoke("inspect", out, "--plot", str(png))
    assert refused.exit_code == 2 and not png.exists()
    assert refused.output.startswith("swath: error: --plot ") and "allpairs store" in \
        refused.output and len(refused.output.splitlines()) == 1


def test_progress_bar_counts_tiles_with_pairs_per_second(fasta, tmp_path):
    run = invoke(*run_args(fasta, str(tmp_path / "p.zarr"))[:-1], "--progress")
    assert run.exit_code == 0, run.output
    assert "swath allpairs" in run.stderr and "tile" in run.stderr
    assert "pairs/s" in run.stderr


# ---------------------------------------------------------------------------------
# resume


def printed(path: str) -> list[str]:
    """Everything inspect prints of a store (text without its first line, which names
    the store)."""
    out = [invoke("inspect", path, "--format", fmt) for fmt in ("tsv", "json", "text")]
    assert all(o.exit_code == 0 for o in out), [o.output for o in out]
    return [out[0].stdout, out[1].stdout, out[2].stdout.split("\n", 1)[1]]


def test_resume_finishes_an_interrupted_store_as_an_uninterrupted_run(fasta, finished,
                                                                      tmp_path):
    from swath.engine import allpairs as engine
    from swath.engine.cluster import InProcess
    from swath.engine.intake import file_source
    from swath.storage.allpairs import AllPairsStore

    path = str(tmp_path / "x.zarr")
    job = engine.prepare_allpairs(path, file_source(str(fasta), wildcard=False), DNA,
                                  mode="global", min_identity=0.97, iddef="pident",
                                  block=BLOCK, scores=True, clusters=True, device="cpu")
    assert not AllPairsStore.open(path, complete=False).indexed
    engine.take_sequences(job, InProcess(2, "cpu"))
    tiles = AllPairsStore.open(path, complete=False).tiles
    assert tiles > 4
    for t in range(0, tiles, 2):                          # every other tile done
        engine.run_tile(job, t)
    assert AllPairsStore.open(path, complete=False).attrs["complete"] is False
    unfinished = invoke("inspect", path)
    assert unfinished.exit_code == 2 and f"swath resume {path}" in unfinished.output
    assert len(unfinished.output.splitlines()) == 1
    resumed = invoke("resume", path, "--no-progress", "--device", "cpu")
    assert resumed.exit_code == 0, resumed.output
    assert f"swath: {path} is complete" in resumed.output
    assert printed(path) == printed(finished[0])
    again = invoke("resume", path, "--no-progress", "--device", "cpu")
    assert again.exit_code == 0 and "complete already" in again.output


def test_the_same_command_again_finishes_a_store_and_other_options_are_refused(
        fasta, finished, tmp_path):
    out, run = finished
    again = invoke(*run_args(fasta, out, "--clusters", "--scores", "--format", "tsv"))
    assert again.exit_code == 0 and again.stdout == run.stdout
    other = invoke(*run_args(fasta, out, "--clusters", "--scores", "--min-identity", "0.9"))
    assert other.exit_code == 2 and len(other.stderr.strip().splitlines()) == 1
    assert "other sequences, scoring or options" in other.stderr


# ---------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["{root}/empty.fasta"], "empty.fasta: empty file"),
        (["{root}/missing.fasta"], "missing.fasta: no such file"),
        (["{fasta}", "--min-identity", "1.5"], "--min-identity"),
        (["{fasta}", "--iddef", "7"], "--iddef"),
        (["{fasta}", "--iddef", "pid"], "--iddef"),
        (["{fasta}", "--block", "0"], "--block"),
    ],
)
def test_bad_input_exits_2_with_one_line(fasta, tmp_path, args, needle):
    fill = {"root": str(fasta.parent), "fasta": str(fasta)}
    args = [a.format(**fill) for a in args]
    run = invoke("allpairs", "--dna", *args, "-o", str(tmp_path / "o.zarr"), "--device",
                 "cpu", "--no-progress")
    assert run.exit_code == 2, run.output
    assert run.stderr.startswith("swath: error: ") and needle in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.output


def test_docstring_examples_run():
    import doctest
    import importlib

    module = importlib.import_module("swath.cli.allpairs")   # swath.cli.allpairs: the command
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_named_tsv_columns_are_refused_in_one_line(tmp_path):
    """All pairs print vsearch's columns: blastp's named-column format is refused before
    any work, saying which results take it."""
    fasta = write_fasta(tmp_path / "s.fasta", [("a", "ACGTACGTAC"), ("b", "ACGTACGTTC")])
    run = invoke("allpairs", str(fasta), "-o", str(tmp_path / "p.zarr"), "--device", "cpu",
                 "--format", "6 qseqid score")
    assert run.exit_code == 2 and not (tmp_path / "p.zarr").exists()
    assert "'6 qseqid score': only search and pairs results print named tsv columns" in \
        run.stderr and len(run.stderr.splitlines()) == 1
