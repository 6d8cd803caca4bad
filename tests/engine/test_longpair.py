"""One long pair in tiles: equal to the whole-matrix aligner, resumable in every phase."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import swath
from swath.constants import STATE_E, STATE_F, STATE_H, STATE_START
from swath.engine import cluster, longpair
from swath.engine.longpair import prepare_longpair, run_longpair
from swath.storage.longpair import AlignmentStore
from swath.testing import rescore
from swath.workloads.longpair import align
from tests.helpers import DNA, PROTEIN, lose_worker_at, related_pair, whole_matrix


def random_jobs(seed, count, lengths):
    """``count`` related pairs of random lengths, protein and DNA in turn, each with a
    random rectangular tile: ``(trial, scoring, a, b, tile)``."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        scoring, alphabet = (DNA, 4) if trial % 2 else (PROTEIN, 20)
        a, b = related_pair(rng, int(rng.integers(*lengths)), alphabet)
        yield trial, scoring, a, b, (int(rng.integers(5, 60)), int(rng.integers(5, 60)))


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_tiled_equals_the_whole_matrix(client, tmp_path, mode):
    """Many tile sizes and strip widths, protein and DNA: the same alignment, and the path
    crosses tile boundaries in every state."""
    rng = np.random.default_rng({"local": 1, "global": 2, "semiglobal": 3}[mode])
    crossed = set()
    for trial in range(14):
        scoring, alphabet = (DNA, 4) if trial % 2 else (PROTEIN, 20)
        a, b = related_pair(rng, int(rng.integers(1, 160)), alphabet)
        # at most about 12 x 12 tiles (each tile is a task and a few chunk writes)
        smallest = max(2, max(len(a), len(b)) // 12)
        tile, strip = int(rng.integers(smallest, smallest + 30)), int(rng.integers(1, 20))
        store = str(tmp_path / f"t{trial}.zarr")
        got = swath.align(a, b, scoring=scoring, mode=mode, device="cpu", store=store,
                          tile_size=tile, strip=strip, client=client)
        assert got == whole_matrix(a, b, scoring, mode), (trial, tile, strip)
        assert rescore(got, a, b, scoring) == got.score
        segments = AlignmentStore.open(store).segments()
        crossed |= {int(code) % 4 for code in segments[:, 3]}
    assert {STATE_H, STATE_E, STATE_F} <= crossed
    if mode == "local":
        assert STATE_START in crossed


def test_one_tile_and_one_strip_per_column(client, tmp_path):
    a, b = related_pair(np.random.default_rng(4), 90, 4)
    want = whole_matrix(a, b, DNA, "local")
    for tile, strip in ((1000, 1000), (len(a), 1), (9, 1)):
        got = swath.align(a, b, scoring=DNA, store=str(tmp_path / f"{tile}-{strip}.zarr"),
                          tile_size=tile, strip=strip, client=client)
        assert got == want


def test_no_positive_cell_gives_the_empty_local_alignment(client, tmp_path):
    got = swath.align("AAAA", "CCCCC", scoring=DNA, tile_size=2, client=client,
                      store=str(tmp_path / "x.zarr"))
    assert (got.score, got.cigar, got.query_end, got.target_end) == (0, "", 0, 0)


@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna-walked", "protein-origins"])
def test_store_reports_its_bytes_and_its_alignment(client, tmp_path, scoring):
    """A local DNA pair walks its path back (boundaries without origins: H and a gap value
    in int32, 8 bytes a cell), a protein pair records origins (32 bytes a cell)."""
    a, b = related_pair(np.random.default_rng(5), 200, 4 if scoring is DNA else 20)
    store = str(tmp_path / "x.zarr")
    aln = swath.align(a, b, scoring=scoring, device="cpu", store=store, tile_size=32,
                      client=client)
    opened = AlignmentStore.open(store)
    assert opened.cigar() == aln.cigar and opened.attrs["alignment"]["score"] == aln.score
    assert (opened.walks, opened.origins) == ((True, False) if scoring is DNA else (False, True))
    rows, cols = opened.tiles
    cell = 32 if opened.origins else 8
    boundaries = cell * (len(a) * cols + len(b) * rows)      # O(m n / tile edge)
    assert opened.stored_bytes() == boundaries + 32 * (rows * cols + len(opened.segments()))


def test_each_phase_resumes_without_redoing_the_last(client, tmp_path, monkeypatch):
    """Stop after some tiles, after phase 2, after some segments: the result is the same
    and finished work is not redone (counted through a file: tasks are pickled)."""
    rng = np.random.default_rng(6)
    a, b = related_pair(rng, 150, 4)
    want = whole_matrix(a, b, DNA, "local")
    store = str(tmp_path / "x.zarr")
    job = prepare_longpair(store, a, b, DNA, mode="local", tile=(16, 16), strip=5,
                           names=("a", "b"))
    opened = AlignmentStore.open(store, complete=False)
    rows, cols = opened.tiles
    for ti in range(rows // 2):            # phase 1 half done (a wavefront-valid prefix)
        for tj in range(cols):
            longpair.run_tile(job, ti, tj)
    log = tmp_path / "tiles.log"
    real_tile = longpair.run_tile

    def counting_tile(job, ti, tj, *after):
        with open(log, "a") as out:
            out.write(f"{ti},{tj}\n")
        return real_tile(job, ti, tj, *after)

    monkeypatch.setattr(longpair, "run_tile", counting_tile)
    real_segment = lose_worker_at(monkeypatch, longpair, "run_segments", 1)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_longpair(job, client)
    redone = {tuple(map(int, line.split(","))) for line in log.read_text().split()}
    assert len(redone) == rows * cols - (rows // 2) * cols
    assert all(ti >= rows // 2 for ti, _ in redone)
    partial = AlignmentStore.open(store, complete=False)
    assert partial.segments() is not None and not partial.segments_done()[1]
    assert partial.attrs["complete"] is False
    monkeypatch.setattr(longpair, "run_segments", real_segment)
    log.unlink()
    assert run_longpair(job, client) == want
    assert not log.exists()                  # phase 1 was not run again


KILLED_JOB = textwrap.dedent("""
    import sys, numpy as np, swath
    from distributed import Client, LocalCluster
    from swath.engine import longpair
    from swath.engine.longpair import prepare_longpair, run_longpair
    from swath.workloads.longpair import align
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 600).astype(np.uint8)
    b = np.concatenate([a[:250], a[262:], rng.integers(0, 4, 50).astype(np.uint8)])
    sc = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster, \\
            Client(cluster) as client:
        if sys.argv[3] == "splits":          # the path by splits, small segments
            longpair.pathsplit.BASE_CELLS, longpair.SPANS_PER_TASK = 200, 2
            run_longpair(prepare_longpair(sys.argv[1], a, b, sc, mode=sys.argv[2],
                                          tile=(60, 60), strip=3, names=("a", "b"),
                                          origins=False), client)
        else:
            align(sys.argv[1], a, b, sc, mode=sys.argv[2], device="cpu", tile_size=60,
                  strip=3, client=client, names=("a", "b"), traceback=sys.argv[3] == "full",
                  progress=None, overwrite=False)
""")


def killed_pair():
    """The pair KILLED_JOB aligns."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 600).astype(np.uint8)
    return a, np.concatenate([a[:250], a[262:], rng.integers(0, 4, 50).astype(np.uint8)])


@functools.cache
def killed_pair_aligned(mode):
    """The whole-matrix alignment of the pair KILLED_JOB aligns (the reference aligner
    takes seconds: once a mode for the tests that kill the job)."""
    return whole_matrix(*killed_pair(), DNA, mode)


def wait_for_tiles(store, job, share, timeout=120.0):
    """Return once ``share`` of ``store``'s phase-1 tiles are done, one at least (or the
    job has ended)."""
    deadline = time.monotonic() + timeout
    while job.poll() is None and time.monotonic() < deadline:
        try:
            done = AlignmentStore.open(store, complete=False).tiles_done()
            if done.sum() >= max(1, share * done.size):
                return
        except (swath.SwathError, KeyError, ValueError, OSError):
            pass                               # not created yet, or half created
        time.sleep(0.005)


def kill_then_resume(tmp_path, mode, kind, check):
    """SIGKILL the job at two points of phase 1, then `swath resume` each store and
    ``check`` it; the phases the kills landed in."""
    from click.testing import CliRunner

    from swath.cli import main

    phases = set()
    # once a tile is done and once half of them are, on any machine's clock (later phases
    # have tests of their own: test_killed_in_phase_two_..., test_each_phase_resumes_...)
    for share in (0.0, 0.5):
        store = str(tmp_path / f"{kind}{share}.zarr")
        job = subprocess.Popen([sys.executable, "-c", KILLED_JOB, store, mode, kind])
        wait_for_tiles(store, job, share)
        os.kill(job.pid, signal.SIGKILL)
        job.wait()
        partial = AlignmentStore.open(store, complete=False)
        assert not partial.attrs["complete"] and partial.tiles_done().any()
        phases.add("tiles" if "segments" not in partial.attrs else "segments")
        resumed = CliRunner().invoke(main, ["resume", store, "--no-progress",
                                            "--device", "cpu"])
        assert resumed.exit_code == 0, resumed.output
        check(AlignmentStore.open(store))
    return phases


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["local", "global"])
def test_killed_in_phase_one_then_resumed(tmp_path, mode):
    """SIGKILL the client after its first tile and halfway through its tiles; `swath
    resume` finishes each with the alignment of an uninterrupted run."""
    want = killed_pair_aligned(mode)

    def check(got):
        assert got.cigar() == want.cigar and got.attrs["alignment"]["score"] == want.score

    assert "tiles" in kill_then_resume(tmp_path, mode, "full", check)


@pytest.mark.slow
def test_splits_killed_in_phase_one_then_resumed(tmp_path, monkeypatch):
    """The same for a job without origins (the path by splits, traced in small
    segments): resumed, the alignment of an uninterrupted run."""
    from distributed import Client, LocalCluster

    a, b = killed_pair()
    monkeypatch.setattr(longpair.pathsplit, "BASE_CELLS", 200)
    monkeypatch.setattr(longpair, "SPANS_PER_TASK", 2)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        want = run_longpair(prepare_longpair(str(tmp_path / "whole.zarr"), a, b, DNA,
                                             mode="local", tile=(60, 60), strip=3,
                                             names=("a", "b"), origins=False), client)
    assert rescore(want, a, b, DNA) == killed_pair_aligned("local").score

    def check(got):
        assert got.cigar() == want.cigar and got.attrs["alignment"]["score"] == want.score

    assert "tiles" in kill_then_resume(tmp_path, "local", "splits", check)


@pytest.mark.slow
def test_scores_only_killed_then_resumed(tmp_path):
    """The same for a scores-only job: the score and end cell of an uninterrupted run."""
    want = killed_pair_aligned("local")

    def check(got):
        end = got.attrs["alignment"]
        assert (end["score"], end["query_end"], end["target_end"]) == (
            want.score, want.query_end, want.target_end)

    assert "tiles" in kill_then_resume(tmp_path, "local", "scores", check)


def test_a_store_of_another_alignment_is_refused(client, tmp_path):
    store = str(tmp_path / "x.zarr")
    swath.align("ACGTACGT", "ACGTTACGT", scoring=DNA, store=store, tile_size=3, client=client)
    with pytest.raises(swath.InvalidParameter, match="another alignment"):
        swath.align("ACGTACGA", "ACGTTACGT", scoring=DNA, store=store, tile_size=3,
                    client=client)
    with pytest.raises(swath.InvalidParameter, match="tile_size"):
        swath.align("ACGT", "ACGT", scoring=DNA, tile_size=0, client=client)
    with pytest.raises(swath.InvalidParameter, match="limit"):    # origins' 32 bits
        swath.align("MKVA", "MKVA", scoring=PROTEIN, device="cpu", tile_size=1 << 20,
                    client=client, store=str(tmp_path / "y.zarr"))
    # a local DNA pair walks its path back: tiles without origins take any size
    swath.align("ACGT", "ACGT", scoring=DNA, device="cpu", tile_size=1 << 20, client=client,
                store=str(tmp_path / "z.zarr"))


def test_killed_in_phase_two_reruns_phase_two_only(client, tmp_path, monkeypatch):
    """Segments are recorded by one attribute write after their arrays: a job stopped
    between the two traces them again from the stored tiles, not from scratch."""
    from swath.storage import longpair as storage

    a, b = related_pair(np.random.default_rng(9), 120, 4)
    store = str(tmp_path / "x.zarr")

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt("stopped in phase 2")

    monkeypatch.setattr(storage, "update_attrs", stopped)
    with pytest.raises(KeyboardInterrupt):
        swath.align(a, b, scoring=DNA, store=store, tile_size=16, client=client)
    partial = AlignmentStore.open(store, complete=False)
    assert partial.tiles_done().all() and partial.segments() is None
    monkeypatch.undo()
    log = tmp_path / "tiles.log"
    real_tile = longpair.run_tile

    def counting_tile(job, ti, tj, *after):
        log.write_text("ran")
        return real_tile(job, ti, tj, *after)

    monkeypatch.setattr(longpair, "run_tile", counting_tile)
    got = swath.align(a, b, scoring=DNA, store=store, tile_size=16, client=client)
    assert got == whole_matrix(a, b, DNA, "local") and not log.exists()


def by_splits(client, path, a, b, scoring, mode, tile, device="cpu", progress=None):
    job = prepare_longpair(path, a, b, scoring, mode=mode, tile=tile, strip=7,
                           names=("a", "b"), device=device, origins=False)
    return run_longpair(job, client, progress)


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
@pytest.mark.parametrize("where", ["cluster", "in process"])
def test_paths_by_splits_are_optimal(client, tmp_path, mode, where, monkeypatch):
    """A job without origins: phase 1 in scores-only tiles, the path by splits, its
    segments traced a few a task (in this process, phase 3's kernels load meanwhile).
    The whole-matrix score and end, a CIGAR that rescores to it, a store without origins
    that holds the segments."""
    if where == "in process":
        client = cluster.InProcess(2, "CPU")
    monkeypatch.setattr(longpair.pathsplit, "BASE_CELLS", 100)
    monkeypatch.setattr(longpair, "SPANS_PER_TASK", 3)
    seed = {"local": 31, "global": 32, "semiglobal": 33}[mode]
    for trial, scoring, a, b, tile in random_jobs(seed, 5, (80, 200)):
        path = str(tmp_path / f"p{trial}.zarr")
        phases: list[tuple[str, bool]] = []

        def progress(phase, done, total, cells, phases=phases):
            phases.append((phase, done == total))

        got = by_splits(client, path, a, b, scoring, mode, tile, progress=progress)
        assert [p for p, last in phases if last] == ["tiles", "splits", "segments"]
        want = whole_matrix(a, b, scoring, mode)
        assert (got.score, got.query_end, got.target_end) == (
            want.score, want.query_end, want.target_end), (trial, tile)
        assert rescore(got, a, b, scoring) == want.score
        opened = AlignmentStore.open(path)
        assert not opened.origins and opened.cigar() == got.cigar
        segments = opened.segments()
        assert len(segments) > 3 and (segments[:, :2] == -1).all()
        assert opened.segments_per_chunk == 3


def test_splits_resume_after_some_segments(client, tmp_path, monkeypatch):
    """A task of phase 3 lost: the rerun traces only the chunks not done."""
    monkeypatch.setattr(longpair.pathsplit, "BASE_CELLS", 300)
    monkeypatch.setattr(longpair, "SPANS_PER_TASK", 2)
    a, b = related_pair(np.random.default_rng(35), 150, 4)
    path = str(tmp_path / "x.zarr")
    job = prepare_longpair(path, a, b, DNA, mode="local", tile=(40, 40), strip=7,
                           names=("a", "b"), origins=False)
    real = lose_worker_at(monkeypatch, longpair, "run_segments", 2)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_longpair(job, client)
    done = AlignmentStore.open(path, complete=False).segments_done()
    assert not done[2:4].any() and done.sum() > 0
    log = tmp_path / "chunks.log"

    def counting(job, first, rows):
        with open(log, "a") as out:
            out.write(f"{first}\n")
        return real(job, first, rows)

    monkeypatch.setattr(longpair, "run_segments", counting)
    got = run_longpair(job, client)
    assert rescore(got, a, b, DNA) == whole_matrix(a, b, DNA, "local").score
    redone = {int(x) for x in log.read_text().split()}
    assert 2 in redone and all(not done[k] for k in redone)


def score_only(client, path, a, b, scoring, mode, tile, device="cpu"):
    return align(path, a, b, scoring, mode=mode, device=device, tile_size=None, strip=7,
                 client=client, names=("a", "b"), traceback=False, progress=None,
                 overwrite=False) \
        if tile is None else _score_only_tiles(client, path, a, b, scoring, mode, tile, device)


def _score_only_tiles(client, path, a, b, scoring, mode, tile, device):
    job = prepare_longpair(path, a, b, scoring, mode=mode, tile=tile, strip=7,
                           names=("a", "b"), device=device, traceback=False)
    return run_longpair(job, client)


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_scores_only_equal_the_whole_matrix(client, tmp_path, mode):
    """StripedScore in rectangular tiles (taller, wider): the score and end cell of the
    whole-matrix aligner; boundaries without origins, 8 bytes a cell."""
    seed = {"local": 11, "global": 12, "semiglobal": 13}[mode]
    for trial, scoring, a, b, tile in random_jobs(seed, 6, (20, 160)):
        path = str(tmp_path / f"s{trial}.zarr")
        got = score_only(client, path, a, b, scoring, mode, tile)
        want = whole_matrix(a, b, scoring, mode)
        assert (got.score, got.query_end, got.target_end) == (
            want.score, want.query_end, want.target_end), (trial, tile)
        opened = AlignmentStore.open(path)
        assert not opened.origins and "cigar" not in opened.group
        rows, cols = opened.tiles
        assert opened.stored_bytes() == 8 * (len(a) * cols + len(b) * rows) + 32 * rows * cols


def test_scores_only_resume_after_some_tiles(client, tmp_path):
    a, b = related_pair(np.random.default_rng(14), 150, 4)
    path = str(tmp_path / "x.zarr")
    job = prepare_longpair(path, a, b, DNA, mode="local", tile=(20, 30), strip=7,
                           names=("a", "b"), traceback=False)
    for ti, tj in ((0, 0), (0, 1), (1, 0)):                    # a killed job's first tiles
        longpair.run_tile(job, ti, tj)
    got = run_longpair(job, client)
    want = whole_matrix(a, b, DNA, "local")
    assert (got.score, got.query_end, got.target_end) == (want.score, want.query_end,
                                                            want.target_end)
    again = score_only(client, path, a, b, DNA, "local", None)  # reopened: the stored tiles
    assert again == got


@pytest.mark.parametrize("mode", ["local", "global"])
def test_a_streamed_tile_reads_only_the_corner_of_the_row_above(tmp_path, mode):
    """A tile whose row above streams in on the GPU gets the same corner and left column
    as one that reads the row above, and of the top row nothing else."""
    a, b = related_pair(np.random.default_rng(21), 90, 4)
    job = prepare_longpair(str(tmp_path / "x.zarr"), a, b, DNA, mode=mode, tile=(30, 40),
                           strip=7, names=("a", "b"), traceback=False)
    store = longpair._open_worker(job)
    rows, cols = store.tiles
    for ti in range(rows):
        for tj in range(cols):
            longpair.run_tile(job, ti, tj)
    for ti in range(1, rows):
        for tj in range(cols):
            (top_h, top_f), left = longpair.tile_input(job, store, ti, tj)
            (corner, closed), streamed_left = longpair.tile_input(job, store, ti, tj,
                                                                  above=False)
            assert corner.tolist() == top_h[:1].tolist() and len(top_h) > 1
            assert closed.tolist() == top_f[:1].tolist()
            np.testing.assert_array_equal(streamed_left[0], left[0])
            np.testing.assert_array_equal(streamed_left[1], left[1])


def test_pairs_below_the_tile_kernels_range_are_refused(tmp_path):
    """Values below the kernels' minus infinity (-2^30), though inside int32: refused."""
    steep = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=60_000)
    a = np.zeros(20_000, dtype=np.uint8)
    with pytest.raises(swath.InvalidParameter, match="range"):
        prepare_longpair(str(tmp_path / "x.zarr"), a, a, steep, mode="global", tile=(64, 64),
                         strip=8, names=("a", "b"))
    with pytest.raises(swath.InvalidParameter, match="range"):    # one tile in this process
        swath.score(a, a, scoring=steep, device="cpu")


def test_cpu_tiles_report_no_best_cell_in_global_mode():
    from swath.kernels.cpu.tiles import tile_scores

    top = (np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64))
    left = (np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64))
    q = np.zeros(4, dtype=np.uint8)
    assert tile_scores(q, q[:1].repeat(5), DNA, "global", 8, top, left)[2] == (0, -1, -1)


def test_default_tiles():
    assert longpair.default_tile("cpu", 10**6, 10**6, 4, True) == (8192, 8192)
    assert longpair.default_tile("cpu", 10**6, 10**6, 4, False) == (16384, 16384)  # scores
    assert longpair.default_tile("gpu", 10**6, 10**6, 4, True) == (16384, 16384)  # origins
    # L1: equal slabs of whole tiers, as many on each GPU, the whole target in each
    assert longpair.default_tile("gpu", 4_646_332, 4_617_703, 1, False) == (774_656,
                                                                            4_617_703)
    assert longpair.default_tile("gpu", 4_646_332, 4_617_703, 2, False) == (774_656,
                                                                            4_617_703)
    assert longpair.default_tile("gpu", 4_646_332, 4_617_703, 4, False) == (581_120,
                                                                            4_617_703)
    assert longpair.default_tile("gpu", 100, 50, 1, False) == (100, 50)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_gpu_tiles_give_the_cpu_alignment(client, tmp_path, mode, monkeypatch):
    """The GPU's path by splits is the CPU's (twin kernels), scores the whole-matrix
    optimum, and the GPU's scores-only result is the same; with origins, phase 1 on
    the GPU gives the whole-matrix alignment."""
    monkeypatch.setattr(longpair.pathsplit, "BASE_CELLS", 2000)
    rng = np.random.default_rng(21)
    for trial in range(3):
        a, b = related_pair(rng, int(rng.integers(200, 700)), 4)
        want = whole_matrix(a, b, DNA, mode)
        got = swath.align(a, b, scoring=DNA, mode=mode, device="gpu", client=client,
                          store=str(tmp_path / f"g{trial}.zarr"), tile_size=97, strip=9)
        assert not AlignmentStore.open(str(tmp_path / f"g{trial}.zarr")).origins
        assert got == by_splits(client, str(tmp_path / f"c{trial}.zarr"), a, b, DNA, mode,
                                (97, 97))
        assert (got.score, got.query_end, got.target_end) == (
            want.score, want.query_end, want.target_end)
        assert rescore(got, a, b, DNA) == want.score
        origins = prepare_longpair(str(tmp_path / f"o{trial}.zarr"), a, b, DNA, mode=mode,
                                   tile=(97, 97), strip=9, names=("a", "b"), device="gpu")
        assert run_longpair(origins, client) == want
        scores = score_only(client, str(tmp_path / f"gs{trial}.zarr"), a, b, DNA, mode,
                            (300, 150), device="gpu")
        assert (scores.score, scores.query_end, scores.target_end) == (
            want.score, want.query_end, want.target_end)


def test_streamed_tile_rows_report_progress_as_they_are_stored(client, tmp_path,
                                                                 monkeypatch):
    """Phase 1 as one task (streamed tile rows on several GPUs): the client reports the
    tile rows the store marks done while the task runs, counting only this run's cells."""
    a, b = related_pair(np.random.default_rng(43), 1500, 4)
    job = prepare_longpair(str(tmp_path / "s.zarr"), a, b, DNA, mode="local",
                           tile=(400, len(b)), strip=7, names=("a", "b"), traceback=False)
    store = AlignmentStore.open(job.store, complete=False)
    longpair.run_tile(job, 0, 0)

    def slabs(job, gpus):       # the CPU's tiles, one after another, slowly
        for ti in range(1, 4):
            time.sleep(0.2)
            longpair.run_tile(job, ti, 0)
        return (len(a) - 400) * len(b)

    monkeypatch.setattr(longpair, "run_slabs", slabs)
    monkeypatch.setattr(cluster, "POLL", 0.02)
    reports = []
    longpair._run_slabs(job, store, cluster.runner(client), 2, lambda *r: reports.append(r))
    assert reports[0] == ("tiles", 1, 4, 0)
    assert reports[-1] == ("tiles", 4, 4, (len(a) - 400) * len(b))
    seen = {done: cells for _, done, _, cells in reports}
    assert set(seen) == {1, 2, 3, 4}         # every tile row reported as it was stored
    assert seen[2] == 400 * len(b) and seen[3] == 800 * len(b)


@pytest.mark.gpu
def test_slabs_stream_into_each_other(tmp_path, monkeypatch):
    """Tile rows on every GPU of the host (at least one), each streaming into the next:
    the stored tiles are the CPU's. A tile row that fails lets the rows waiting on it
    finish unwritten; the job then resumes to the same tiles."""
    import cupy as cp

    gpus = cp.cuda.runtime.getDeviceCount()
    a, b = related_pair(np.random.default_rng(41), 3000, 4)
    tile = (530, len(b))
    cpu = prepare_longpair(str(tmp_path / "cpu.zarr"), a, b, DNA, mode="local", tile=tile,
                           strip=7, names=("a", "b"), traceback=False)
    for ti in range(AlignmentStore.open(cpu.store, complete=False).tiles[0]):
        longpair.run_tile(cpu, ti, 0)
    job = prepare_longpair(str(tmp_path / "gpu.zarr"), a, b, DNA, mode="local", tile=tile,
                           strip=7, names=("a", "b"), device="gpu", traceback=False)
    real = longpair.compute_tile

    def failing(job, store, ti, tj, streams=None):
        if ti == 3:
            raise RuntimeError("a GPU failed")
        return real(job, store, ti, tj, streams)

    monkeypatch.setattr(longpair, "compute_tile", failing)
    with pytest.raises(RuntimeError, match="a GPU failed"):
        longpair.run_slabs(job, gpus)
    done = AlignmentStore.open(job.store, complete=False).tiles_done()[:, 0]
    assert not done[3:].any()
    monkeypatch.undo()
    assert longpair.run_slabs(job, gpus) == len(a) * len(b) - int(done.sum()) * tile[0] * len(b)
    want, got = (AlignmentStore.open(j.store, complete=False) for j in (cpu, job))
    assert got.tiles_done().all()
    np.testing.assert_array_equal(got.tile_best(), want.tile_best())
    # H exactly; gap values of at most 0 as any such value (the CPU's tier lanes give 0)
    for ti in range(-1, got.tiles[0]):
        pair = [s.right(0, 0, len(a)) if ti < 0 else s.bottom(ti, 0, len(b))
                for s in (got, want)]
        np.testing.assert_array_equal(*(p[0] for p in pair))
        np.testing.assert_array_equal(*(np.maximum(p[1], 0) for p in pair))
