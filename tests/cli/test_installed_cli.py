"""The installed ``swath`` console script, run as a user runs it: a subprocess of the
executable beside ``sys.executable`` (not click's CliRunner), so that the entry point, the
installed package data and the process-level setup (logging, Dask clusters) are tested.

Each output is parsed and checked against the plain NumPy reference aligner, in-process.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swath.sequences import read_sequences
from swath.testing import reference_align
from tests.helpers import DNA, PROTEIN, write_fasta

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# beside the interpreter (a venv), else on PATH (pip install --target DIR puts it in DIR/bin)
SCRIPT = shutil.which("swath", path=str(Path(sys.executable).parent)) or shutil.which("swath")

pytestmark = pytest.mark.skipif(
    SCRIPT is None and not os.environ.get("SWATH_TEST_INSTALLED"),
    reason=f"no swath console script beside {sys.executable} or on PATH (pip install the "
           "project)")


def swath_cli(*args: str, cwd: Path) -> str:
    """Run the console script in ``cwd``; its stdout (the test fails on a nonzero exit)."""
    assert SCRIPT is not None, f"no swath console script beside {sys.executable} or on PATH"
    done = subprocess.run([SCRIPT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (f"swath {' '.join(args)} exited {done.returncode}:\n"
                                  f"{done.stdout}\n{done.stderr}")
    return done.stdout


def test_help_lists_the_commands():
    shown = swath_cli("--help", cwd=ROOT)
    assert all(command in shown for command in ("align", "makedb", "search", "inspect"))


def test_makedb_search_inspect_tsv(tmp_path):
    rng = random.Random(7)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    db = {f"d{i}": "".join(rng.choices(letters, k=rng.randint(30, 90))) for i in range(8)}
    queries = {"qa": db["d3"][5:60], "qb": "".join(rng.choices(letters, k=50))}
    write_fasta(tmp_path / "db.fasta", db.items())
    write_fasta(tmp_path / "q.fasta", queries.items())

    swath_cli("makedb", "db.fasta", "db.swdb", "--no-progress", cwd=tmp_path)
    swath_cli("search", "q.fasta", "db.swdb", "-o", "r.zarr", "--top-k", "3", "--device", "cpu",
              "--no-progress", cwd=tmp_path)
    tsv = swath_cli("inspect", "r.zarr", "--format", "tsv", cwd=tmp_path)
    assert {len(line.split("\t")) for line in tsv.splitlines()} == {12}, tsv
    tsv = swath_cli("inspect", "r.zarr", "--format", "6 qseqid sseqid pident length "
                    "mismatch gapopen qstart qend sstart send evalue bitscore score cigar",
                    cwd=tmp_path)
    rows = [line.split("\t") for line in tsv.splitlines()]
    assert all(len(row) == 14 for row in rows), tsv
    for name, query in queries.items():
        q = PROTEIN.alphabet.encode(query)
        want = {target: reference_align(q, PROTEIN.alphabet.encode(seq), PROTEIN, "local")
                for target, seq in db.items()}
        hits = [row for row in rows if row[0] == name]
        # the three best scores, each with the reference's coordinates and CIGAR
        assert [int(row[12]) for row in hits] == sorted(
            (a.score for a in want.values()), reverse=True)[:3]
        for row in hits:
            best = want[row[1]]
            assert (int(row[12]), row[13]) == (best.score, best.cigar)
            assert [int(x) for x in row[6:10]] == [best.query_start + 1, best.query_end,
                                                   best.target_start + 1, best.target_end]
    assert rows[0][:2] == ["qa", "d3"]


def test_align_examples_text():
    text = swath_cli("align", str(EXAMPLES / "query.fasta"), str(EXAMPLES / "target.fasta"),
                     "--device", "cpu", cwd=ROOT)
    header = dict(line[2:].split(":", 1) for line in text.splitlines()
                  if line.startswith("# ") and ":" in line)
    q = read_sequences(EXAMPLES / "query.fasta", PROTEIN.alphabet, limit=1)[0]
    t = read_sequences(EXAMPLES / "target.fasta", PROTEIN.alphabet, limit=1)[0]
    want = reference_align(q, t, PROTEIN, "local")
    assert int(header["Score"]) == want.score
    assert header["CIGAR"].strip() == want.cigar


def test_long_pair_in_tiles_then_inspect_json(tmp_path):
    rng = random.Random(11)
    a = "".join(rng.choices("ACGT", k=260))
    b = "TTGACA" + a[:100] + "G" + a[100:180] + a[186:] + "CCAT"
    write_fasta(tmp_path / "a.fa", [("chrA", a)])
    write_fasta(tmp_path / "b.fa", [("chrB", b)])

    swath_cli("align", "--dna", "a.fa", "b.fa", "-o", "pair.zarr", "--tile-size", "64",
              "--device", "cpu", "--no-progress", cwd=tmp_path)
    record = json.loads(swath_cli("inspect", "pair.zarr", "--format", "json", cwd=tmp_path))

    # --dna's defaults (README): match 2, mismatch -3, gaps 5/2, as tests.helpers.DNA
    want = reference_align(DNA.alphabet.encode(a), DNA.alphabet.encode(b), DNA, "local")
    assert {k: record[k] for k in ("query_name", "target_name", "score", "query_start",
                                   "query_end", "target_start", "target_end", "cigar")} == {
        "query_name": "chrA", "target_name": "chrB", "score": want.score,
        "query_start": want.query_start, "query_end": want.query_end,
        "target_start": want.target_start, "target_end": want.target_end,
        "cigar": want.cigar}
