"""GPU kernels against their CPU twins: partitions, passes, edge lengths, overflow."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels import get_backend
from tests.conftest import DNA, PROTEIN

pytestmark = pytest.mark.gpu
MODES = ["local", "global", "semiglobal"]
# groups of 4..16 threads x 16 or 32 rows; partitions cut at target lengths 64, 128, 256
EDGE_LENGTHS = [1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511,
                512, 513, 1023, 1024, 1025]


def packed(seqs):
    return (np.concatenate(seqs).astype(np.uint8),
            np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64))


def related(rng, query, length, alphabet):
    """A target of ``length`` holding a mutated piece of ``query`` (so scores are high)."""
    target = rng.integers(0, alphabet, length).astype(np.uint8)
    piece = query[: max(1, min(len(query), length) // 2)].copy()
    piece[rng.random(len(piece)) < 0.1] = rng.integers(0, alphabet)
    at = int(rng.integers(0, length - len(piece) + 1))
    target[at:at + len(piece)] = piece
    return target


def both(function, *args):
    return (getattr(get_backend("gpu"), function)(*args),
            getattr(get_backend("cpu"), function)(*args))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
@pytest.mark.parametrize("query_length", [1, 31, 32, 33, 300, 513, 1100])
def test_scores_equal_cpu_at_edge_lengths(mode, scoring, query_length):
    rng = np.random.default_rng(query_length)
    alphabet = 20 if scoring is PROTEIN else 4
    query = rng.integers(0, alphabet, query_length).astype(np.uint8)
    targets = [related(rng, query, n, alphabet) for n in EDGE_LENGTHS]
    targets += [rng.integers(0, alphabet, n).astype(np.uint8)
                for n in rng.integers(1, 700, 150)]
    # three queries: the shortest pairs with one of the other two in a register, and the
    # third goes alone, two targets a register
    queries = [query, query[::-1].copy(), query[: query_length // 2 + 1].copy()]
    gpu, cpu = both("score_many", *packed(queries), *packed(targets),
                    scoring.matrix, scoring.gap_open, scoring.gap_extend, mode)
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("mode", MODES)
def test_scores_past_16_bits_are_rerun_exactly(mode):
    w = PROTEIN.alphabet.encode("W" * 3100)
    targets = [w, w[:2000], PROTEIN.alphabet.encode("W" * 1500 + "A" + "W" * 1599),
               PROTEIN.alphabet.encode("ACDEFGHIKLMNPQRSTVWY" * 40)]
    gpu, cpu = both("score_many", *packed([w]), *packed(targets), PROTEIN.matrix, 11, 1, mode)
    np.testing.assert_array_equal(gpu, cpu)
    assert gpu[0, 0] == 3100 * 11


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lengths", [(1, 7, 33, 100, 300), (513, 1100, 2000, 3100)],
                         ids=["odd-count", "apart"])
def test_two_queries_to_a_register_equal_cpu(mode, lengths):
    """Queries go two to a register, nearest lengths together: an odd one out; lengths
    whose last rows fall in different passes (513 and 1100 rows in passes of 256); a
    query of 3,100 W past 16 bits in the lane beside one that is not."""
    rng = np.random.default_rng(len(lengths))
    queries = [rng.integers(0, 20, m).astype(np.uint8) for m in lengths[:-1]]
    queries.append(PROTEIN.alphabet.encode("W" * lengths[-1]) if lengths[-1] > 3000
                   else rng.integers(0, 20, lengths[-1]).astype(np.uint8))
    targets = [related(rng, q, n, 20) for q in queries for n in (40, 300, 900)]
    targets += [queries[-1], queries[-1][:2000]]
    targets += [rng.integers(0, 20, n).astype(np.uint8) for n in rng.integers(1, 1200, 100)]
    order = rng.permutation(len(queries))
    gpu, cpu = both("score_many", *packed([queries[i] for i in order]), *packed(targets),
                    PROTEIN.matrix, 11, 1, mode)
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
def test_align_batch_equals_cpu(mode, scoring):
    rng = np.random.default_rng(11)
    alphabet = 20 if scoring is PROTEIN else 4
    lengths = EDGE_LENGTHS[:-3] + rng.integers(1, 400, 60).tolist()
    queries = [rng.integers(0, alphabet, m).astype(np.uint8) for m in lengths]
    targets = [related(rng, q, int(rng.integers(1, 900)), alphabet) for q in queries]
    gpu, cpu = both("align_batch", *packed(queries), *packed(targets), scoring.matrix,
                    scoring.gap_open, scoring.gap_extend, mode)
    for g, c in zip(gpu, cpu, strict=True):
        np.testing.assert_array_equal(g, c)


def test_cigar_counts_equal_cpu():
    rng = np.random.default_rng(5)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in rng.integers(1, 300, 80)]
    targets = [related(rng, q, int(rng.integers(1, 400)), 4) for q in queries]
    _, _, text, text_at = get_backend("cpu").align_batch(
        *packed(queries), *packed(targets), DNA.matrix, DNA.gap_open, DNA.gap_extend, "global")
    made = ["", "5I", "2D3=", "3=4I", "12=1X100=", "1I1D1I", "7D"]
    extra = np.frombuffer("".join(made).encode(), dtype=np.uint8)
    extra_at = np.cumsum([0] + [len(c) for c in made]) + text_at[-1]
    cigars = np.concatenate([text, extra]), np.concatenate([text_at, extra_at[1:]])
    gpu, cpu = both("cigar_counts", cigars)
    assert gpu.keys() == cpu.keys()
    for name in cpu:
        np.testing.assert_array_equal(gpu[name], cpu[name], err_msg=name)
    assert cpu["terminal"][-7:].tolist() == [0, 5, 2, 4, 0, 2, 7]
    assert get_backend("gpu").cigar_counts((np.zeros(0, np.uint8), np.zeros(1, np.int64))
                                           )["matches"].shape == (0,)


@pytest.mark.parametrize("mode", MODES)
def test_score_ends_equal_cpu(mode):
    rng = np.random.default_rng(12)
    queries = [rng.integers(0, 20, m).astype(np.uint8) for m in EDGE_LENGTHS]
    targets = [related(rng, q, int(rng.integers(1, 1500)), 20) for q in queries]
    gpu, cpu = both("score_ends", *packed(queries), *packed(targets), PROTEIN.matrix, 11, 1,
                    mode)
    for g, c in zip(gpu, cpu, strict=True):
        np.testing.assert_array_equal(g, c)


def test_pairs_beyond_the_memory_budget_are_aligned_all_the_same():
    from swath.kernels.gpu.traceback import align_batch

    rng = np.random.default_rng(5)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in (60, 700, 90)]
    targets = [related(rng, q, 900, 4) for q in queries]
    args = (*packed(queries), *packed(targets), DNA.matrix, 5, 2, "local")
    small_budget = align_batch(*args, memory_budget=100_000)
    for a, b in zip(small_budget, get_backend("cpu").align_batch(*args), strict=True):
        np.testing.assert_array_equal(a, b)
    # chosen pairs of the sets: the CPU fallback takes its pair's pieces
    chosen = align_batch(*args, pairs=(np.array([2, 1, 1]), np.array([0, 1, 2])),
                         memory_budget=100_000)
    gathered = get_backend("cpu").align_batch(
        *packed([queries[2], queries[1], queries[1]]), *packed(targets),
        DNA.matrix, 5, 2, "local")
    for a, b in zip(chosen, gathered, strict=True):
        np.testing.assert_array_equal(a, b)


def test_align_batch_splits_into_memory_batches():
    from swath.kernels.gpu.traceback import align_batch

    rng = np.random.default_rng(3)
    queries = [rng.integers(0, 4, m).astype(np.uint8) for m in rng.integers(50, 300, 40)]
    targets = [related(rng, q, 400, 4) for q in queries]
    args = (*packed(queries), *packed(targets), DNA.matrix, 5, 2, "semiglobal")
    whole, split = align_batch(*args), align_batch(*args, memory_budget=200_000)
    for a, b in zip(whole, split, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_long_query_against_long_target():
    """A 40,000-residue query against a 100,000-residue target: 79 passes, spilled rows."""
    rng = np.random.default_rng(4)
    query = rng.integers(0, 4, 40_000).astype(np.uint8)
    target = related(rng, query, 100_000, 4)
    for mode in ("local", "semiglobal"):
        gpu = get_backend("gpu").score_many(*packed([query]), *packed([target]), DNA.matrix, 5, 2,
                                            mode)
        from swath.kernels.cpu.traceback import align_pair

        assert gpu[0, 0] == align_pair(query, target, DNA.matrix, 5, 2, mode)[0]


@pytest.mark.parametrize("launch_rows", [32 * 1024, 640], ids=["one-launch", "launches"])
def test_local_query_streams_equal_cpu(monkeypatch, launch_rows):
    """Many queries in two local streams: queries starting inside a pass and going on
    over several, a thread's rows ending one query, lengths at ROW_GRAIN's edges, W
    queries past 16 bits in both streams (the longest go first, one to each); in one
    launch or several."""
    from swath.kernels.gpu import scores

    monkeypatch.setattr(scores, "LAUNCH_ROWS", launch_rows)
    rng = np.random.default_rng(launch_rows)
    lengths = [1, 2, 31, 32, 33, 63, 64, 65, 200, 255, 256, 257, 511, 700, 1100, 1500]
    queries = [rng.integers(0, 20, m).astype(np.uint8) for m in lengths]
    queries += [PROTEIN.alphabet.encode("W" * 3000), PROTEIN.alphabet.encode("W" * 3100)]
    targets = [related(rng, q, n, 20) for q in queries[::3] for n in (20, 90, 300, 900)]
    targets += [queries[-1], queries[-1][:2000]]
    targets += [rng.integers(0, 20, n).astype(np.uint8) for n in EDGE_LENGTHS]
    targets += [rng.integers(0, 20, n).astype(np.uint8) for n in rng.integers(1, 1200, 100)]
    order = rng.permutation(len(queries))
    gpu, cpu = both("score_many", *packed([queries[i] for i in order]), *packed(targets),
                    PROTEIN.matrix, 11, 1, "local")
    np.testing.assert_array_equal(gpu, cpu)
