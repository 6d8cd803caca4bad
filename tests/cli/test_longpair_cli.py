"""``swath align -o``, ``inspect`` and ``resume`` on a long pair's alignment store."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import swath
from swath.cli import main
from swath.storage.longpair import AlignmentStore
from tests.helpers import DNA, write_fasta

A = "".join(random.Random(3).choices("ACGT", k=300))
B = "GATTACA" + A[:120] + "TT" + A[120:200] + A[205:] + "CCGG"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    return (str(write_fasta(tmp_path / "a.fasta", [("chrA first genome", A)])),
            str(write_fasta(tmp_path / "b.fasta", [("chrB second genome", B)])))


DNA_OPTIONS = ["--dna", "--match", "2", "--mismatch", "-3", "--gap-open", "5",
               "--gap-extend", "2", "--no-progress", "--device", "cpu"]


@pytest.mark.parametrize("mode", ["local", "global"])
def test_align_to_a_store_then_inspect_json(pair, tmp_path, mode):
    store = str(tmp_path / "pair.zarr")
    done = run("align", *pair, "-o", store, "--tile-size", "64", "--strip", "16",
               "--mode", mode, *DNA_OPTIONS)
    assert done.exit_code == 0, done.output
    assert done.stdout == ""                       # with -o, nothing unless --format
    shown = run("inspect", store, "--format", "json")
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    want = swath.align(A, B, scoring=DNA, mode=mode, device="cpu")
    assert {k: record[k] for k in ("score", "query_start", "query_end", "target_start",
                                   "target_end", "cigar")} == {
        "score": want.score, "query_start": want.query_start, "query_end": want.query_end,
        "target_start": want.target_start, "target_end": want.target_end,
        "cigar": want.cigar}
    assert record["query_name"] == "chrA" and record["target_name"] == "chrB"
    assert record["identity"] == pytest.approx(want.identity)


def test_inspect_text_and_plot(pair, tmp_path):
    store = str(tmp_path / "pair.zarr")
    assert run("align", *pair, "-o", store, "--tile-size", "50", *DNA_OPTIONS).exit_code == 0
    text = run("inspect", store, "--format", "text")
    assert text.exit_code == 0, text.output
    assert "300 x 308 matrix in 6 x 7 tiles" in text.stdout
    assert "chrA" in text.stdout and "|||" in text.stdout
    png = tmp_path / "path.png"
    drawn = run("inspect", store, "--plot", str(png))
    assert drawn.exit_code == 0, drawn.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_resume_finishes_a_store_stopped_in_phase_one(pair, tmp_path):
    from swath.engine.longpair import prepare_longpair, run_tile

    store = str(tmp_path / "pair.zarr")
    a = swath.Scoring.dna(2, -3, 5, 2).alphabet.encode(A)
    b = swath.Scoring.dna(2, -3, 5, 2).alphabet.encode(B)
    job = prepare_longpair(store, a, b, DNA, mode="local", tile=(40, 40), strip=8,
                           names=("chrA", "chrB"))
    run_tile(job, 0, 0)
    assert AlignmentStore.open(store, complete=False).tiles_done().sum() == 1
    assert run("inspect", store).exit_code == 2              # not finished: one line, exit 2
    resumed = run("resume", store, "--no-progress")
    assert resumed.exit_code == 0, resumed.output
    record = json.loads(run("inspect", store).stdout)
    assert record["cigar"] == swath.align(A, B, scoring=DNA, device="cpu").cigar


def test_a_store_of_another_kind_or_a_plot_of_a_search_is_refused(pair, tmp_path):
    db = tmp_path / "db.swdb"
    assert run("makedb", pair[1], str(db), "--dna", "--no-progress").exit_code == 0
    refused = run("resume", str(db))
    assert refused.exit_code == 2
    assert "'database' store" in refused.output and len(refused.output.splitlines()) == 1


def test_score_only_prints_the_score_and_keeps_it_in_the_store(pair, tmp_path):
    a, b = pair
    store = str(tmp_path / "s.zarr")
    full = json.loads(run("align", a, b, *DNA_OPTIONS, "--format", "json").stdout)
    result = run("align", a, b, *DNA_OPTIONS, "--score-only", "-o", store, "--tile-size", "64",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record == {key: full[key] for key in ("query_name", "target_name", "score",
                                                 "query_end", "target_end")}
    assert json.loads(run("inspect", store, "--format", "json").stdout) == record
    text = run("align", a, b, *DNA_OPTIONS, "--score-only").stdout
    assert f"score {full['score']}" in text and "no traceback" in text
    refused = run("inspect", store, "--plot", str(tmp_path / "p.png"))
    assert refused.exit_code == 2 and "score only" in refused.output
