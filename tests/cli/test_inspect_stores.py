"""``swath inspect`` and ``swath resume`` on every store a job can make.

A search store; a long pair's alignment store with origins (a CPU traceback job), one
without origins whose path is found by splits (a GPU job's default, made here on the
CPU), and a scores-only one. Each prints in full in json, tsv and text, draws its path
(``--plot``) when it holds one and refuses in one line when it does not, and, stopped
in any phase, is finished by ``swath resume`` with the result of an uninterrupted run;
``swath resume`` of a finished store does nothing and says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

import swath
from swath.cli import main
from swath.engine import longpair
from swath.engine.longpair import prepare_longpair, run_longpair
from swath.storage.longpair import AlignmentStore
from swath.testing import rescore
from swath.views import RECORD_FIELDS, alignment_record
from tests.helpers import DNA, lose_worker_at, write_fasta

pytestmark = pytest.mark.slow

TILE, STRIP = (32, 32), 8
KINDS = ("origins", "splits", "scores")
PNG = b"\x89PNG\r\n\x1a\n"


def pair() -> tuple[np.ndarray, np.ndarray]:
    """A DNA pair whose path crosses tiles in H, E and F (indels on both sides)."""
    rng = np.random.default_rng(21)
    a = rng.integers(0, 4, 220).astype(np.uint8)
    b = np.concatenate([rng.integers(0, 4, 17), a[:70], rng.integers(0, 4, 6), a[70:150],
                        a[159:], rng.integers(0, 4, 23)]).astype(np.uint8)
    b[::29] = (b[::29] + 1) % 4
    return a, b


A, B = pair()
NAMES = ("chrA", "chrB")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module", autouse=True)
def small_splits() -> Iterator[None]:
    """Spans of the path by splits traced in small segments, a few a task: many
    segments to stop between (the same for every run of the module)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(longpair.pathsplit, "BASE_CELLS", 300)
        patch.setattr(longpair, "SPANS_PER_TASK", 2)
        yield


def prepare(path: str, kind: str, mode: str) -> longpair.PairJob:
    """The job of a store of ``kind``, as ``swath align -o`` (``--score-only``) makes it
    on the CPU (origins) or on a GPU (splits: no origins)."""
    return prepare_longpair(path, A, B, DNA, mode=mode, tile=TILE, strip=STRIP, names=NAMES,
                            device="cpu", traceback=kind != "scores",
                            origins=kind == "origins")


@pytest.fixture(scope="module")
def stores(client, tmp_path_factory) -> dict[tuple[str, str], tuple[str, Any]]:
    """Finished stores of every kind, local and global: (path, the job's result)."""
    root = tmp_path_factory.mktemp("stores")
    made = {}
    for kind in KINDS:
        for mode in ("local", "global"):
            path = str(root / f"{kind}-{mode}.zarr")
            made[kind, mode] = path, run_longpair(prepare(path, kind, mode), client)
    return made


def record_of(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


# ---------------------------------------------------------------------------------
# inspect


@pytest.mark.parametrize("mode", ["local", "global"])
@pytest.mark.parametrize("kind", ["origins", "splits"])
def test_inspect_prints_the_whole_alignment_of_a_traceback_store(stores, kind, mode):
    """With or without origins, a traceback store prints its alignment, CIGAR and all:
    json, tsv, text. The whole-matrix aligner's (origins), or one as good (splits)."""
    path, got = stores[kind, mode]
    want = swath.align(A, B, scoring=DNA, mode=mode, device="cpu")
    assert (got.score, got.query_end, got.target_end) == (want.score, want.query_end,
                                                          want.target_end)
    assert rescore(got, A, B, DNA) == want.score
    if kind == "origins":
        assert got == want
    opened = AlignmentStore.open(path)
    assert opened.origins == (kind == "origins") and opened.traceback
    assert len(opened.segments()) > 4                           # the path crosses tiles
    record = alignment_record(got, *NAMES)
    assert record_of(invoke("inspect", path, "--format", "json")) == record
    assert record_of(invoke("inspect", path)) == record             # json: the default

    tsv = invoke("inspect", path, "--format", "tsv")
    assert tsv.exit_code == 0, tsv.output
    header, row = (line.split("\t") for line in tsv.stdout.splitlines())
    assert header == list(RECORD_FIELDS)
    assert row == [repr(v) if isinstance(v, float) else str(v) for v in record.values()]

    text = invoke("inspect", path, "--format", "text")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    how = "path by origins" if kind == "origins" else "path by splits"
    tiles = f"{-(-len(A) // TILE[0])} x {-(-len(B) // TILE[1])}"
    assert lines[0] == (f"# {path}: a {len(A)} x {len(B)} matrix in {tiles} tiles, "
                        f"{opened.stored_bytes():,} bytes of boundaries ({how})")
    assert f"# Score:        {got.score}" in lines
    assert f"# CIGAR:        {got.cigar}" in lines
    query_rows = [line.split() for line in lines if line.startswith("chrA ")]
    assert "".join(row[2] for row in query_rows).replace("-", "") == \
        DNA.alphabet.decode(A[got.query_start:got.query_end])


@pytest.mark.parametrize("kind", ["origins", "splits"])
def test_plot_draws_the_path_of_every_store_that_holds_one(stores, tmp_path, kind):
    path, got = stores[kind, "local"]
    png = tmp_path / "path.png"
    drawn = invoke("inspect", path, "--plot", str(png))
    assert drawn.exit_code == 0, drawn.output
    assert record_of(drawn) == alignment_record(got, *NAMES)
    assert png.read_bytes()[:8] == PNG and png.stat().st_size > 5000


@pytest.mark.parametrize("mode", ["local", "global"])
def test_inspect_prints_the_score_of_a_scores_only_store(stores, tmp_path, mode):
    path, got = stores["scores", mode]
    want = swath.align(A, B, scoring=DNA, mode=mode, device="cpu")
    score = {"query_name": "chrA", "target_name": "chrB", "score": want.score,
             "query_end": want.query_end, "target_end": want.target_end}
    assert (got.score, got.query_end, got.target_end) == (want.score, want.query_end,
                                                          want.target_end)
    assert not AlignmentStore.open(path).traceback
    assert record_of(invoke("inspect", path, "--format", "json")) == score
    tsv = invoke("inspect", path, "--format", "tsv").stdout.splitlines()
    assert [line.split("\t") for line in tsv] == [list(score), [str(v) for v in score.values()]]
    text = invoke("inspect", path, "--format", "text")
    assert text.exit_code == 0
    assert text.stdout.splitlines()[0].endswith("bytes of boundaries (scores only)")
    assert (f"score {want.score}, ending at query {want.query_end}, target "
            f"{want.target_end} (scores only: no traceback)") in text.stdout
    png = tmp_path / "p.png"
    refused = invoke("inspect", path, "--plot", str(png))
    assert refused.exit_code == 2 and not png.exists()
    assert refused.output.startswith("swath: error: --plot: ") and "score only" in \
        refused.output and len(refused.output.splitlines()) == 1


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> tuple[str, str, list[str]]:
    """A DNA database store and queries: two with hits in the database, one random."""
    rng = np.random.default_rng(4)
    seqs = [DNA.alphabet.decode(rng.integers(0, 4, int(n)).astype(np.uint8))
            for n in rng.integers(60, 140, 12)]
    queries = [seqs[3][10:70], seqs[8][5:60] + "ACGTAC" + seqs[8][60:100],
               DNA.alphabet.decode(rng.integers(0, 4, 50).astype(np.uint8))]
    root = tmp_path_factory.mktemp("search")
    write_fasta(root / "db.fasta", [(f"d{i}", s) for i, s in enumerate(seqs)])
    write_fasta(root / "q.fasta", [(f"q{i}", s) for i, s in enumerate(queries)])
    made = invoke("makedb", str(root / "db.fasta"), str(root / "db.swdb"), "--dna",
                  "--partition-residues", "300", "--no-progress")
    assert made.exit_code == 0, made.output
    return str(root / "q.fasta"), str(root / "db.swdb"), queries


def search(client, database, path: str, mode: str = "local") -> swath.SearchResult:
    q, db, _ = database
    return swath.search(q, db, scoring=DNA, mode=mode, top_k=2, client=client, store=path,
                        device="cpu", query_block=1)


@pytest.mark.parametrize("mode", ["local", "global"])
def test_inspect_prints_every_hit_of_a_search_store(client, database, tmp_path, mode):
    path = str(tmp_path / "s.zarr")
    result = search(client, database, path, mode)
    rows = result.to_table()
    assert len(rows) == 6 and rows[0][:2] == ("q0", "d3") and rows[2][:2] == ("q1", "d8")
    tsv = invoke("inspect", path)                                   # tsv: the default
    assert tsv.exit_code == 0, tsv.output
    cells = [line.split("\t") for line in tsv.stdout.splitlines()]
    assert [c[:2] for c in cells] == [list(r[:2]) for r in rows] and {len(c) for c in cells} == {12}
    named = invoke("inspect", path, "--format", "6 qseqid score cigar").stdout.splitlines()
    assert named == [f"{r[0]}\t{r[12]}\t{r[13]}" for r in rows]
    assert all(bool(c[10]) == (mode == "local") for c in cells)   # e-values: local only
    lines = invoke("inspect", path, "--format", "json").stdout.splitlines()
    assert [json.loads(line)["cigar"] for line in lines] == [r[13] for r in rows]
    text = invoke("inspect", path, "--format", "text")
    assert text.exit_code == 0, text.output
    heads = [line for line in text.stdout.splitlines() if line.startswith("# hit: ")]
    assert len(heads) == 6 and ("e-value" in heads[0]) and ("nan" not in text.stdout)
    assert text.stdout.count("# CIGAR:") == 6 and f"# CIGAR:        {rows[0][13]}" in text.stdout


def test_plot_of_a_search_store_is_refused_in_one_line(client, database, tmp_path):
    path = str(tmp_path / "s.zarr")
    search(client, database, path)
    png = tmp_path / "p.png"
    refused = invoke("inspect", path, "--plot", str(png))
    assert refused.exit_code == 2 and not png.exists()
    assert refused.output.startswith("swath: error: --plot ") and "search store" in \
        refused.output and len(refused.output.splitlines()) == 1


# ---------------------------------------------------------------------------------
# resume


def stop_in_tiles(job: longpair.PairJob, client: Any, monkeypatch: Any) -> None:
    """Phase 1 stopped: the first tile row and a tile of the next done."""
    for tj in range(AlignmentStore.open(job.store, complete=False).tiles[1]):
        longpair.run_tile(job, 0, tj)
    longpair.run_tile(job, 1, 0)


def stop_after_tiles(job: longpair.PairJob, client: Any, monkeypatch: Any) -> None:
    """Phase 1 done, nothing after it (stopped before the path is found)."""
    rows, cols = AlignmentStore.open(job.store, complete=False).tiles
    for ti in range(rows):
        for tj in range(cols):
            longpair.run_tile(job, ti, tj)


def stop_in_segments(job: longpair.PairJob, client: Any, monkeypatch: Any) -> None:
    """Phase 3 stopped: a task of segments lost, the others done."""
    real = lose_worker_at(monkeypatch, longpair, "run_segments", 2)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_longpair(job, client)
    monkeypatch.setattr(longpair, "run_segments", real)


STOPS: dict[str, Callable[..., None]] = {"tiles": stop_in_tiles, "after-tiles": stop_after_tiles,
                                         "segments": stop_in_segments}


def resume(path: str, client: Any) -> Result:
    return invoke("resume", path, "--no-progress", "--device", "cpu",
                  "--scheduler", client.scheduler.address)


def printed(path: str) -> list[str]:
    """Everything inspect prints of a store: json, tsv, text (its first line names the
    store)."""
    out = [invoke("inspect", path, "--format", fmt) for fmt in ("json", "tsv", "text")]
    assert all(o.exit_code == 0 for o in out), [o.output for o in out]
    return [out[0].stdout, out[1].stdout, out[2].stdout.split("\n", 1)[1]]


@pytest.mark.parametrize(("kind", "stop"), [
    ("origins", "tiles"), ("origins", "after-tiles"), ("origins", "segments"),
    ("splits", "tiles"), ("splits", "after-tiles"), ("splits", "segments"),
    ("scores", "tiles"),
])
def test_resume_finishes_a_stopped_alignment_store_as_an_uninterrupted_run(
        stores, client, tmp_path, monkeypatch, kind, stop):
    path = str(tmp_path / "x.zarr")
    job = prepare(path, kind, "local")
    STOPS[stop](job, client, monkeypatch)
    partial = AlignmentStore.open(path, complete=False)
    assert partial.attrs["complete"] is False
    if stop == "segments":
        assert partial.segments() is not None and not partial.segments_done().all()
        assert partial.segments_done().any()
    unfinished = invoke("inspect", path)
    assert unfinished.exit_code == 2 and f"swath resume {path}" in unfinished.output
    assert len(unfinished.output.splitlines()) == 1
    resumed = resume(path, client)
    assert resumed.exit_code == 0, resumed.output
    assert f"swath: {path} is complete" in resumed.output
    whole, _ = stores[kind, "local"]
    assert printed(path) == printed(whole)
    opened = AlignmentStore.open(path)
    if kind != "scores":
        assert opened.cigar() == AlignmentStore.open(whole).cigar()


def test_resume_finishes_a_search_store_with_a_unit_lost(client, database, tmp_path,
                                                          monkeypatch):
    from swath.engine import search as engine

    whole = str(tmp_path / "whole.zarr")
    search(client, database, whole)
    path = str(tmp_path / "x.zarr")
    real = lose_worker_at(monkeypatch, engine, "write_unit", 1)
    with pytest.raises(RuntimeError, match="worker lost"):
        search(client, database, path)
    monkeypatch.setattr(engine, "write_unit", real)
    unfinished = invoke("inspect", path)
    assert unfinished.exit_code == 2 and f"swath resume {path}" in unfinished.output
    resumed = resume(path, client)
    assert resumed.exit_code == 0, resumed.output
    assert printed(path) == printed(whole)


@pytest.mark.parametrize("kind", [*KINDS, "search"])
def test_resume_of_a_finished_store_does_nothing_and_says_so(stores, client, database,
                                                             tmp_path, monkeypatch, kind):
    from swath.engine import search as engine

    if kind == "search":
        path = str(tmp_path / "s.zarr")
        search(client, database, path)
    else:
        path = stores[kind, "local"][0]
    before = printed(path)
    files = {p: p.stat().st_mtime_ns for p in Path(path).rglob("*") if p.is_file()}

    def ran(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a finished store was run again")

    monkeypatch.setattr(longpair, "run_longpair", ran)
    monkeypatch.setattr(engine, "run_search", ran)
    again = invoke("resume", path, "--no-progress", "--device", "cpu")
    assert again.exit_code == 0, again.output
    assert again.output == f"swath: {path} is complete already: nothing to resume\n"
    assert {p: p.stat().st_mtime_ns for p in Path(path).rglob("*") if p.is_file()} == files
    assert printed(path) == before


def test_a_closed_pipe_ends_the_printing_quietly(tmp_path: Path) -> None:
    """``swath inspect STORE | head -1``: the reader closes the pipe after a line; swath
    ends as a command that SIGPIPE ends (status 141), printing nothing on stderr."""
    import subprocess
    import sys

    store = tmp_path / "p.zarr"
    swath.allpairs(["ACGTACGT" * 4] * 300, scoring=DNA, store=str(store), device="cpu",
                   min_identity=0.5, block=128)
    shell = (f"{sys.executable} -m swath inspect {store} --format tsv 2>{tmp_path / 'err'} "
             "| head -1; echo ${PIPESTATUS[0]}")
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120)
    first, status = done.stdout.splitlines()
    assert first.startswith("sequences[0]\tsequences[1]\t100.0") and status == "141"
    assert (tmp_path / "err").read_text() == ""


@pytest.mark.parametrize("node", ["work/done", "work/kept/0", "score"])
def test_metadata_that_cannot_be_read_is_refused_in_one_line(node: str, tmp_path: Path
                                                             ) -> None:
    """A store whose zarr.json of an array or group is not JSON: verify, resume and
    inspect each refuse in one line, exit 2, naming it (nothing in the store changes)."""
    store = tmp_path / "p.zarr"
    swath.allpairs(["ACGTACGT" * 4] * 30, scoring=DNA, store=str(store), device="cpu",
                   min_identity=0.5, block=16)
    (store / node / "zarr.json").write_text('{"bad')
    for command in (["verify"], ["resume", "--device", "cpu", "--no-progress"], ["inspect"]):
        refused = invoke(*command[:1], str(store), *command[1:])
        assert refused.exit_code == 2, refused.output
        assert refused.stderr.splitlines() == [
            f"swath: error: {store}: damaged beyond repair: the metadata (zarr.json) of node "
            f"{node} cannot be read; run the job again with --overwrite"]
    assert (store / node / "zarr.json").read_text() == '{"bad'
