"""Batched traceback through ends.cu: scores and a band first, codes in the band only.

Every test checks that its pairs took the banded path (or did not), so that a change
of routing cannot leave a test comparing the whole-matrix path with itself.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import swath
from swath.kernels import get_backend
from tests.helpers import DNA, mutated_pairs, packed, related

pytestmark = pytest.mark.gpu
SCHEMES = {
    "b1": (2, -3, 5, 2),
    "unit-free-open": (1, -1, 0, 1),      # many equal paths: the tie rules decide
    "unit": (1, -1, 1, 1),
    "wide-match": (5, -4, 10, 1),
}


def banded(queries, targets, scoring, mode):
    from swath.kernels.gpu.traceback.plan import Pairs, banded_pairs

    pairs = Pairs.of(packed(queries)[1], packed(targets)[1], None)
    return banded_pairs(pairs, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                        mode).get()


def assert_equal_cpu(queries, targets, scoring, mode, **options):
    from swath.kernels.gpu.traceback import align_batch

    args = (*packed(queries), *packed(targets), scoring, mode)
    gpu = align_batch(*args, **options)
    cpu = get_backend("cpu").align_batch(*args)
    for g, c, name in zip(gpu, cpu, ("scores", "coords", "cigars", "offsets"), strict=True):
        np.testing.assert_array_equal(g, c, err_msg=name)


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_banded_pairs_equal_cpu(mode, scheme):
    """Mutated copies (B1's shape) and unrelated pairs, queries of one pass and of
    several (ends.cu's passes of 64 to 512 rows), an odd count (one lane alone)."""
    match, mismatch, gap_open, gap_extend = SCHEMES[scheme]
    scoring = swath.Scoring.dna(match, mismatch, gap_open, gap_extend)
    rng = np.random.default_rng(len(scheme) + len(mode))
    queries, targets = mutated_pairs(rng, 120, (1, 300), (1, 1000))
    more_q, more_t = mutated_pairs(rng, 21, (500, 1300), (400, 2500))
    queries += more_q + [rng.integers(0, 4, m).astype(np.uint8) for m in (5, 64, 200, 700)]
    targets += more_t + [rng.integers(0, 4, n).astype(np.uint8) for n in (900, 64, 3, 800)]
    assert banded(queries, targets, scoring, mode).all()
    assert_equal_cpu(queries, targets, scoring, mode)


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_repeats_with_many_equal_paths_equal_cpu(mode):
    """Low-complexity sequences over two letters and tandem repeats: many cells share the
    best score and many paths reach them, in every lane."""
    rng = np.random.default_rng(7)
    queries = [rng.integers(0, 2, m).astype(np.uint8) for m in rng.integers(1, 400, 60)]
    queries += [np.tile(np.array([0, 1, 2], np.uint8), k) for k in (1, 10, 70, 200)]
    targets = [rng.integers(0, 2, n).astype(np.uint8) for n in rng.integers(1, 900, 60)]
    targets += [np.tile(np.array([0, 1, 2, 0, 1], np.uint8), k) for k in (3, 30, 90, 100)]
    for match, mismatch, gap_open, gap_extend in SCHEMES.values():
        scoring = swath.Scoring.dna(match, mismatch, gap_open, gap_extend)
        assert banded(queries, targets, scoring, mode).all()
        assert_equal_cpu(queries, targets, scoring, mode)


def test_local_pairs_without_a_positive_cell_are_empty():
    queries = [np.zeros(m, np.uint8) for m in (1, 40, 300)] + [np.full(30, 4, np.uint8)]
    targets = [np.ones(n, np.uint8) for n in (5, 700, 2)] + [np.full(30, 4, np.uint8)]
    scoring = swath.Scoring.dna()
    assert banded(queries, targets, scoring, "local").all()
    assert_equal_cpu(queries, targets, scoring, "local")


@pytest.mark.parametrize("lengths", [(1, 300), (64, 65), (128, 500), (63, 192)])
def test_two_pairs_of_a_register_with_other_passes_equal_cpu(lengths):
    """The two pairs of one register in ends.cu with different passes (and exact
    multiples of a pass): a semiglobal pair's padding rows above its own."""
    rng = np.random.default_rng(sum(lengths))
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in lengths]
    targets = [np.concatenate([rng.integers(0, 4, 40).astype(np.uint8), q,
                               rng.integers(0, 4, 50).astype(np.uint8)]) for q in queries]
    for mode in ("semiglobal", "local"):
        scoring = swath.Scoring.dna()
        assert banded(queries, targets, scoring, mode).all()
        assert_equal_cpu(queries, targets, scoring, mode)


def longest_banded(m, scoring, mode):
    """The longest target that ends.cu takes beside a query of length ``m``."""
    from swath.kernels.gpu.traceback.plan import ENDS_CELL, Pairs, banded_pairs

    n = np.arange(1, ENDS_CELL // scoring.gap_extend + 2)
    pairs = Pairs.of(np.arange(len(n) + 1) * m, np.concatenate([[0], np.cumsum(n)]), None)
    taken = banded_pairs(pairs, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                         mode).get()
    assert taken[0] and not taken[-1]
    return int(n[taken].max())


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_the_longest_pairs_ends_takes_equal_cpu(mode):
    """Costly gaps and targets as long as `_banded` lets ends.cu take them beside each
    query (one residue more and a pair is computed whole): the deepest cells its bound
    allows. Unrelated pairs and copies at either end of the target, queries of one pass
    and of several, in groups of 4, 8 and 16 threads."""
    gap_open, gap_extend = 30, 7
    scoring = swath.Scoring.dna(2, -3, gap_open, gap_extend)
    rng = np.random.default_rng(11)
    queries, targets = [], []
    for m in (1, 70, 300, 700, 1500):
        n = longest_banded(m, scoring, mode)
        query = rng.integers(0, 4, m).astype(np.uint8)
        flank = rng.integers(0, 4, n - m).astype(np.uint8)
        queries += [query, query, rng.integers(0, 4, m).astype(np.uint8)]
        targets += [np.concatenate([flank, query]), np.concatenate([query, flank]),
                    rng.integers(0, 4, n).astype(np.uint8)]
    assert banded(queries, targets, scoring, mode).all()
    assert not banded([queries[-1]], [np.append(targets[-1], 0)], scoring, mode).any()
    assert_equal_cpu(queries, targets, scoring, mode)


def test_ends_spill_words_lie_at_each_groups_first_pair():
    """ends.cu's spill offsets, made with its plan on the GPU: a group of threads takes
    the pairs 2g and 2g + 1 of its run (an odd run ends with a group of one) and spills,
    at its first pair, the longer target's H and F when the deeper query takes more than
    one pass of its group's rows; pairs left out take nothing."""
    import cupy as cp

    from swath.constants import TRACEBACK_ROWS
    from swath.kernels.gpu.traceback.launches import EndsPhase
    from swath.kernels.gpu.traceback.plan import Pairs

    rng = np.random.default_rng(5)
    m, n = rng.integers(1, 1500, 301), rng.integers(1, 3000, 301)
    pairs = Pairs.of(np.concatenate([[0], np.cumsum(m)]), np.concatenate([[0], np.cumsum(n)]),
                      None)
    taken = rng.random(301) < 0.9
    ends = EndsPhase.make(pairs, cp.asarray(taken), [0, 100, 200, 301])
    plan = ends.plan
    assert len(plan.order) == taken.sum() and any((hi - lo) % 2 for lo, hi, _ in plan.runs)
    assert len(set(plan.parts)) == 3
    q_len, t_len = plan.dev["q_len"].get(), plan.dev["t_len"].get()
    words = np.zeros(len(plan.order), dtype=np.int64)
    for lo, hi, group in plan.runs:
        for k in range(lo, hi, 2):
            group_pairs = slice(k, min(k + 2, hi))
            if q_len[group_pairs].max() > group * TRACEBACK_ROWS:
                words[k] = 2 * t_len[group_pairs].max()
    assert words.any()
    np.testing.assert_array_equal(ends.spill_at.get(), np.concatenate([[0], np.cumsum(words)]))
    assert ends.spill.size == words.sum()


def test_an_empty_batch_gives_empty_results():
    from swath.kernels.gpu.traceback import align_batch

    empty, offsets = np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    scores, coords, text, text_at = align_batch(empty, offsets, empty, offsets,
                                                swath.Scoring.dna(), "local")
    assert scores.shape == (0,) and coords.shape == (0, 4) and text.size == 0
    np.testing.assert_array_equal(text_at, [0])


def test_pairs_the_band_cannot_take_are_computed_whole():
    """Scores past ends.cu's 16 bits, free gap extension, global mode and a protein
    alphabet go the whole-matrix way, beside banded pairs of the same batch."""
    rng = np.random.default_rng(9)
    queries, targets = mutated_pairs(rng, 30, (100, 400), (200, 900))
    wide = swath.Scoring.dna(match=120, mismatch=-3, gap_open=5, gap_extend=2)
    mask = banded(queries, targets, wide, "local")
    assert mask.any() and not mask.all()
    assert_equal_cpu(queries, targets, wide, "local")
    for gap_extend, mode in ((0, "local"), (2, "global")):
        scoring = swath.Scoring.dna(gap_open=5, gap_extend=gap_extend)
        assert not banded(queries, targets, scoring, mode).any()
        assert_equal_cpu(queries, targets, scoring, mode)
    protein = swath.Scoring.protein()
    assert not banded(queries, targets, protein, "local").any()


@pytest.mark.parametrize("parted", [False, True])
def test_banded_pairs_split_into_memory_batches_and_past_the_budget(monkeypatch, parted):
    """Banded pairs in several batches of codes, and unrelated long pairs whose wide
    bands pass the budget (the CPU twin aligns them whole, their coordinates not shifted
    by their windows); parted: the upload in parts, the codes in two waves (a long pair
    in each), each wave with half the budget."""
    from swath.kernels.gpu.traceback import pipeline

    if parted:
        monkeypatch.setattr(pipeline, "PARTED", 0)
    rng = np.random.default_rng(11)
    queries, targets = mutated_pairs(rng, 40, (50, 300), (300, 800))
    for at in (0, len(queries)):
        queries.insert(at, rng.integers(0, 4, 900).astype(np.uint8))
        targets.insert(at, rng.integers(0, 4, 1900).astype(np.uint8))
    queries.append(rng.integers(0, 4, 900).astype(np.uint8))
    targets.append(np.concatenate([rng.integers(0, 4, 1000).astype(np.uint8), queries[-1]]))
    scoring = swath.Scoring.dna()
    assert banded(queries, targets, scoring, "semiglobal").all()
    for mode in ("local", "semiglobal"):
        assert_equal_cpu(queries, targets, scoring, mode, memory_budget=120_000)


def test_pairs_beyond_the_memory_budget_are_aligned_all_the_same():
    from swath.kernels.gpu.traceback import align_batch

    rng = np.random.default_rng(5)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in (60, 700, 90)]
    targets = [related(rng, q, 900, 4) for q in queries]
    args = (*packed(queries), *packed(targets), DNA, "local")
    small_budget = align_batch(*args, memory_budget=100_000)
    for a, b in zip(small_budget, get_backend("cpu").align_batch(*args), strict=True):
        np.testing.assert_array_equal(a, b)
    # chosen pairs of the sets: the CPU fallback takes its pair's pieces
    chosen = align_batch(*args, pairs=(np.array([2, 1, 1]), np.array([0, 1, 2])),
                         memory_budget=100_000)
    gathered = get_backend("cpu").align_batch(
        *packed([queries[2], queries[1], queries[1]]), *packed(targets),
        DNA, "local")
    for a, b in zip(chosen, gathered, strict=True):
        np.testing.assert_array_equal(a, b)


def test_align_batch_splits_into_memory_batches():
    from swath.kernels.gpu.traceback import align_batch

    rng = np.random.default_rng(3)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in rng.integers(50, 300, 40)]
    targets = [related(rng, q, 400, 4) for q in queries]
    args = (*packed(queries), *packed(targets), DNA, "semiglobal")
    whole, split = align_batch(*args), align_batch(*args, memory_budget=200_000)
    for a, b in zip(whole, split, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_band_that_misses_the_path_is_an_error(monkeypatch):
    """The walk checks that the path stays in the computed columns, and the codes' score
    must be the ends' score: a band cut too narrow (a bug) raises instead of returning
    a wrong alignment."""
    import cupy as cp

    from swath.kernels.gpu.traceback.launches import EndsPhase

    found = EndsPhase.run

    def narrow(self, *args):
        done = found(self, *args)
        for event in done.values():      # the parts' streams write the rows
            cp.cuda.get_current_stream().wait_event(event)
        ends = args[-1]
        ends[:, 4] = ends[:, 5] = ends[:, 5] - 3
        return done

    monkeypatch.setattr(EndsPhase, "run", narrow)
    rng = np.random.default_rng(2)
    queries, targets = mutated_pairs(rng, 20, (100, 300), (300, 800))
    with pytest.raises(RuntimeError, match="banded traceback"):
        assert_equal_cpu(queries, targets, swath.Scoring.dna(), "semiglobal")


@pytest.fixture
def small_ring(monkeypatch):
    """Stage every array, in chunks of 1000 bytes through a ring of 3 slots (reused)."""
    from swath.kernels.gpu import transfer

    monkeypatch.setattr(transfer, "STAGED", 0)
    monkeypatch.setattr(transfer, "CHUNK", 1000)
    monkeypatch.setattr(transfer, "SLOTS", 3)


@pytest.mark.parametrize("size", [0, 999, 1000, 12_345])
def test_staged_uploads_and_downloads_are_exact(small_ring, size):
    from swath.kernels.gpu.transfer import Upload, download

    rng = np.random.default_rng(size)
    hosts = [rng.integers(0, 255, size).astype(np.uint8),
             rng.integers(-9, 9, (size, 3)).astype(np.int64)[::2],    # strided, 8 bytes
             rng.integers(0, 4, 17).astype(np.uint8)]
    with Upload(hosts) as upload:
        upload.ready()
        arrays = upload.arrays
    for host, device in zip(hosts, arrays, strict=True):
        np.testing.assert_array_equal(device.get(), host)
        back = download(device)
        np.testing.assert_array_equal(back, host)
        assert back.dtype == host.dtype


def test_group_sizes_and_their_run_keys_match_a_search():
    """The threads a group of each query length (the smallest of GROUP_SIZES whose rows
    hold the query, or a share of it) and their index in FILL_GROUPS, made by elementwise
    kernels, against a search on the host."""
    import cupy as cp

    from swath.constants import TRACEBACK_ROWS
    from swath.kernels.gpu._cuda import FILL_GROUPS, GROUP_SIZES
    from swath.kernels.gpu.traceback.plan import group_sizes, size_index

    lengths, sizes = np.arange(3000), np.array(GROUP_SIZES)
    for share in (1, 8):
        expected = sizes[np.searchsorted(sizes[:-1] * TRACEBACK_ROWS * share, lengths)]
        np.testing.assert_array_equal(group_sizes(cp.asarray(lengths), share).get(), expected)
    groups = np.array(FILL_GROUPS * 3)
    np.testing.assert_array_equal(size_index(cp.asarray(groups)).get(),
                                  np.searchsorted(FILL_GROUPS, groups))


def test_an_upload_in_parts_has_each_part_ready_in_turn(small_ring):
    """Part k of every array is on the GPU once ready(k) has made the stream wait."""
    import cupy as cp

    from swath.kernels.gpu.transfer import Upload

    rng = np.random.default_rng(5)
    hosts = [rng.integers(0, 255, 7_000).astype(np.uint8),
             rng.integers(0, 9, 2_500).astype(np.int32)]
    cuts = [[0, 10, 3_001, 7_000], [0, 2_000, 2_000, 2_500]]    # an empty part too
    with Upload(hosts, cuts) as upload:
        for part in range(3):
            upload.ready(part)
            for host, device, at in zip(hosts, upload.arrays, cuts, strict=True):
                got = cp.asnumpy(device[at[part]:at[part + 1]])
                np.testing.assert_array_equal(got, host[at[part]:at[part + 1]])


def test_an_upload_holds_its_later_parts_until_resumed(small_ring):
    """early=1: the first part's chunks are copied at once, the others only once
    resume() (or ready()) starts them; every part lands exact."""
    import cupy as cp

    from swath.kernels.gpu.transfer import Upload

    rng = np.random.default_rng(8)
    hosts = [rng.integers(0, 255, 9_000).astype(np.uint8)]
    cuts = [[0, 2_500, 6_000, 9_000]]
    with Upload(hosts, cuts, early=1) as upload:
        assert len(upload._tasks) == 3         # part 0's chunks of 1000 bytes
        upload.ready(0)
        np.testing.assert_array_equal(cp.asnumpy(upload.arrays[0][:2_500]), hosts[0][:2_500])
        assert len(upload._tasks) == 3
        upload.resume()
        assert len(upload._tasks) == 10        # and parts 1 and 2: 4 and 3 chunks
        upload.ready()
        np.testing.assert_array_equal(cp.asnumpy(upload.arrays[0]), hosts[0])
    with Upload(hosts, cuts, early=0) as upload:
        assert not upload._tasks
        upload.ready(1)                        # starts parts 0 and 1
        assert len(upload._tasks) == 7
        np.testing.assert_array_equal(cp.asnumpy(upload.arrays[0][2_500:6_000]),
                                      hosts[0][2_500:6_000])


def test_batches_in_upload_parts_equal_cpu(monkeypatch):
    """Pairs k whose residues go in parts: each part's ends.cu launches wait for their
    own residues only (every part must still be exact)."""
    from swath.kernels.gpu import transfer
    from swath.kernels.gpu.traceback import pipeline

    monkeypatch.setattr(pipeline, "PARTED", 0)
    monkeypatch.setattr(transfer, "STAGED", 0)
    monkeypatch.setattr(transfer, "CHUNK", 4096)
    rng = np.random.default_rng(6)
    queries, targets = mutated_pairs(rng, 150, (20, 700), (100, 1500))
    for mode in ("local", "semiglobal"):
        assert_equal_cpu(queries, targets, swath.Scoring.dna(), mode)
        # three pairs in eight parts: most parts, and the first wave's first parts, empty
        assert_equal_cpu(queries[:3], targets[:3], swath.Scoring.dna(), mode)


def test_a_part_that_fails_raises_and_the_next_batch_is_exact(monkeypatch):
    """A failed copy of some part raises from align_batch, with ends.cu already running
    on the parts before it; the next batch is exact (nothing of the failed one was
    reused under those kernels)."""
    import cupy as cp

    from swath.kernels.gpu import traceback, transfer
    from swath.kernels.gpu.traceback import pipeline

    monkeypatch.setattr(pipeline, "PARTED", 0)
    monkeypatch.setattr(transfer, "STAGED", 0)
    monkeypatch.setattr(transfer, "CHUNK", 4096)
    copy, calls, lock = cp.cuda.runtime.memcpyAsync, [], threading.Lock()

    def failing(*args):
        with lock:
            calls.append(args)
            fails = len(calls) == 30      # of about 45 chunks, in a later part
        if fails:
            raise cp.cuda.runtime.CUDARuntimeError(1)
        return copy(*args)

    rng = np.random.default_rng(7)
    queries, targets = mutated_pairs(rng, 150, (20, 700), (100, 1500))
    (q_res, q_off), (t_res, t_off) = packed(queries), packed(targets)
    monkeypatch.setattr(cp.cuda.runtime, "memcpyAsync", failing)
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError):
        traceback.align_batch(q_res, q_off, t_res, t_off, swath.Scoring.dna(),
                              "semiglobal")
    monkeypatch.setattr(cp.cuda.runtime, "memcpyAsync", copy)
    assert_equal_cpu(queries, targets, swath.Scoring.dna(), "semiglobal")


def test_download_lands_in_page_locked_memory():
    import cupy as cp

    from swath.kernels.gpu.transfer import download

    host = download(cp.arange(100_000, dtype=np.int64))
    np.testing.assert_array_equal(host, np.arange(100_000))
    assert cp.cuda.runtime.pointerGetAttributes(host.ctypes.data).type == 1   # host, locked


def test_a_failed_chunk_raises_once_every_copy_is_done(small_ring, monkeypatch):
    """A copy that fails raises from ready(); the chunks waiting for its slot go on."""
    import cupy as cp

    from swath.kernels.gpu.transfer import Upload

    copy, calls, lock = cp.cuda.runtime.memcpyAsync, [], threading.Lock()

    def failing(*args):
        with lock:
            calls.append(args)
            fails = len(calls) == 2
        if fails:
            raise cp.cuda.runtime.CUDARuntimeError(1)
        return copy(*args)

    monkeypatch.setattr(cp.cuda.runtime, "memcpyAsync", failing)
    upload = Upload([np.zeros(10_000, dtype=np.uint8)])
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError):
        upload.ready()
    assert len(calls) == 10


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
@pytest.mark.parametrize("function", ["align_batch", "score_ends"])
def test_batches_through_the_ring_are_exact_and_leave_inputs_unlocked(small_ring, function,
                                                                      mode):
    """Staged residues give the CPU's results; the caller's arrays are never page-locked
    (CUDA would refuse to lock them a second time)."""
    import cupy as cp

    from swath.kernels.gpu import traceback

    rng = np.random.default_rng(4)
    queries, targets = mutated_pairs(rng, 30, (20, 300), (100, 600))
    (q_res, q_off), (t_res, t_off) = packed(queries), packed(targets)
    args = (q_res, q_off, t_res, t_off, swath.Scoring.dna(), mode)
    got = getattr(traceback, function)(*args)
    expected = getattr(get_backend("cpu"), function)(*args)
    for g, c in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, c)
    for host in (q_res, t_res):
        cp.cuda.runtime.hostRegister(host.ctypes.data, host.nbytes, 0)
        cp.cuda.runtime.hostUnregister(host.ctypes.data)


ALIGN_IN_A_FRESH_PROCESS = """
import sys
import numpy as np
import swath
from swath.kernels.gpu.traceback import align_batch
rng = np.random.default_rng(1)
m, n = rng.integers(1, 600, 300), rng.integers(1, 900, 300)
q_res = rng.integers(0, 4, m.sum()).astype(np.uint8)
t_res = rng.integers(0, 4, n.sum()).astype(np.uint8)
q_off, t_off = np.r_[0, np.cumsum(m)], np.r_[0, np.cumsum(n)]
for mode in ("local", "semiglobal", "global"):
    for budget in (4 << 30, 100_000):
        align_batch(q_res, q_off, t_res, t_off, swath.Scoring.dna(), mode,
                    memory_budget=budget)
print(*sorted(name for name in sys.modules if name.startswith("cupyx.scipy")))
"""


def test_align_batch_imports_no_cupyx_scipy():
    """The plan's arithmetic stays off CuPy's operators on Python numbers (and
    cupy.bincount), whose first use imports cupyx.scipy, a cost in every process."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    package = str(Path(swath.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (package, os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-c", ALIGN_IN_A_FRESH_PROCESS], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout


def test_warm_up_runs_without_error():
    """What the GPU probe thread runs ahead of a command (its errors are only logged
    there, so a test must see them)."""
    from swath.kernels.gpu.traceback import warm_up

    warm_up()
