"""The GPU tile kernel against its CPU twin: tiers, tails, origins, best cells."""

from __future__ import annotations

import numpy as np
import pytest

from swath.constants import MINUS_INFINITY_64 as NEG
from swath.kernels import get_backend
from tests.conftest import DNA, PROTEIN

pytestmark = pytest.mark.gpu
# tiers are 32 lanes x 4, 8 or 16 rows, then half tiers: shapes below, at and above a
# tier, half tiers with and without a tail; widths above the ring of 1,024 columns
SHAPES = [(1, 1), (5, 70), (31, 33), (256, 40), (257, 300), (600, 129), (768, 50),
          (1100, 515), (300, 2500)]


def boundary(rng, h, w, alphabet_scale):
    """Random input boundaries (H in a plausible range, some gaps closed: -inf)."""
    top_h = rng.integers(-40, 40, w + 1) * alphabet_scale
    top_f = np.where(rng.random(w + 1) < 0.3, NEG, top_h - rng.integers(5, 30, w + 1))
    left_h = rng.integers(-40, 40, h) * alphabet_scale
    left_e = np.where(rng.random(h) < 0.3, NEG, left_h - rng.integers(5, 30, h))
    return (top_h.astype(np.int64), top_f.astype(np.int64)), (left_h.astype(np.int64),
                                                              left_e.astype(np.int64))


def related_pair(rng, h, w, alphabet):
    q = rng.integers(0, alphabet, h).astype(np.uint8)
    t = rng.integers(0, alphabet, w).astype(np.uint8)
    k = min(h, w) // 2
    t[:k] = np.where(rng.random(k) < 0.8, q[:k], t[:k])
    return q, t


@pytest.mark.parametrize("local", [True, False], ids=["local", "global"])
@pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
@pytest.mark.parametrize("shape", SHAPES)
def test_tile_forward_equals_cpu(shape, scoring, local):
    rng = np.random.default_rng(hash((shape, local)) % 2**32)
    h, w = shape
    q, t = related_pair(rng, h, w, scoring.matrix.shape[0])
    top, left = boundary(rng, h, w, 1)
    args = (q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, local, (1000, 2000),
            5000, 64, top, left)
    gpu = get_backend("gpu").tile_forward(*args)
    cpu = get_backend("cpu").tile_forward(*args)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    np.testing.assert_array_equal(gpu[1], cpu[1])
    assert gpu[2] == cpu[2]


@pytest.mark.parametrize("rows", [4, 8, 16])
@pytest.mark.parametrize("local", [True, False], ids=["local", "global"])
@pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
@pytest.mark.parametrize("shape", [*SHAPES, (3000, 2100)])
def test_tile_scores_equal_cpu(shape, scoring, local, rows):
    rng = np.random.default_rng(hash((shape, local, rows)) % 2**32)
    h, w = shape
    q, t = related_pair(rng, h, w, scoring.matrix.shape[0])
    top, left = boundary(rng, h, w, 1)
    args = (q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, local, 64, top, left)
    gpu = get_backend("gpu").tile_scores(*args, rows=rows)
    cpu = get_backend("cpu").tile_scores(*args)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    np.testing.assert_array_equal(gpu[1], cpu[1])
    assert gpu[2] == cpu[2]
    assert cpu[2][1] >= 0 or min(h, w) < 30 or not local   # related pairs: a best cell


@pytest.mark.parametrize("origins", [False, True], ids=["scores", "origins"])
def test_tile_in_several_launches(origins):
    """A tile taller than one launch's slab of tiers: each launch's last row feeds the next."""
    import cupy as cp

    from swath.kernels.gpu.tiles import _launch

    rng = np.random.default_rng(7)
    h, w = 2000, 1500
    q, t = related_pair(rng, h, w, DNA.matrix.shape[0])
    top, left = boundary(rng, h, w, 1)
    sc = (DNA.matrix, DNA.gap_open, DNA.gap_extend, True)
    whole = _launch(q, t, *sc, origins, top, left, rows=4)
    slabs = _launch(q, t, *sc, origins, top, left, rows=4, slab=3)
    for x, y in zip(whole, slabs, strict=True):
        np.testing.assert_array_equal(cp.asnumpy(x), cp.asnumpy(y))
    cpu = get_backend("cpu").tile_scores(q, t, *sc, 64, top, left)
    np.testing.assert_array_equal(cp.asnumpy(slabs[0])[:2], cpu[0])
    np.testing.assert_array_equal(cp.asnumpy(slabs[1])[:2], cpu[1])


def test_alphabets_past_the_shared_memory_are_refused():
    from swath.errors import InvalidParameter

    big = np.zeros((120, 120), dtype=np.int64)
    top = (np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64))
    with pytest.raises(InvalidParameter, match="at most 110 letters"):
        get_backend("gpu").tile_scores(np.zeros(3, np.uint8), np.zeros(3, np.uint8), big, 5, 2,
                                       True, 64, top, (top[0][:3], top[1][:3]))


def test_best_cell_ties_take_the_first_row():
    """Equal best scores in several tiers and lanes: the first in row-major order."""
    q = np.zeros(2000, dtype=np.uint8)
    t = np.ones(300, dtype=np.uint8)
    q[[100, 700, 1500]] = 1           # three single-residue matches, one per tier or lane
    top = (np.zeros(301, dtype=np.int64), np.full(301, NEG, dtype=np.int64))
    left = (np.zeros(2000, dtype=np.int64), np.full(2000, NEG, dtype=np.int64))
    args = (q, t, DNA.matrix, DNA.gap_open, DNA.gap_extend, True, 64, top, left)
    gpu = get_backend("gpu").tile_scores(*args)
    assert gpu[2] == get_backend("cpu").tile_scores(*args)[2] == (2, 101, 1)


# single matches (query row, target column offset, residue) whose cells score the best, 2,
# and the first of them in row-major order (row, column offset), both 1-based
ARRANGEMENTS = {"later-row-first": ([(5, 0, 1), (3, 1, 2)], (4, 2)),
                "earlier-row-first": ([(3, 0, 1), (5, 1, 2)], (4, 1)),
                "same-row": ([(3, 0, 1), (3, 1, 1)], (4, 1)),
                "same-column": ([(5, 0, 1), (3, 0, 1)], (4, 1))}


@pytest.mark.parametrize("rows", [4, 8, 16])
@pytest.mark.parametrize("column", [40, 41], ids=["one-pair-of-steps", "two-pairs"])
@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_equal_best_cells_in_a_lane_take_the_first(rows, column, arrangement):
    """Equal best scores in one lane, in one column or two adjacent ones (looked for in the
    same pair of steps or in two): the first in row-major order."""
    matches, (row, offset) = ARRANGEMENTS[arrangement]
    q = np.zeros(600, dtype=np.uint8)
    t = np.full(300, 3, dtype=np.uint8)
    for i, j, residue in matches:
        q[i], t[column + j] = residue, residue
    top = (np.zeros(301, dtype=np.int64), np.full(301, NEG, dtype=np.int64))
    left = (np.zeros(600, dtype=np.int64), np.full(600, NEG, dtype=np.int64))
    args = (q, t, DNA.matrix, DNA.gap_open, DNA.gap_extend, True, 64, top, left)
    gpu = get_backend("gpu").tile_scores(*args, rows=rows)
    assert gpu[2] == get_backend("cpu").tile_scores(*args)[2] == (2, row, column + offset)


@pytest.mark.parametrize("rows", [4, 8, 16])
@pytest.mark.parametrize("seed", range(3))
def test_repeats_with_many_equal_scores_equal_cpu(rows, seed):
    """Two-letter and periodic sequences: equal best scores in many rows and columns."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 2, 1500).astype(np.uint8)
    t = np.tile(q[:37], 20)[:700] if seed else rng.integers(0, 2, 700).astype(np.uint8)
    top, left = boundary(rng, len(q), len(t), 0)
    args = (q, t, DNA.matrix, DNA.gap_open, DNA.gap_extend, True, 64, top, left)
    gpu = get_backend("gpu").tile_scores(*args, rows=rows)
    cpu = get_backend("cpu").tile_scores(*args)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    assert gpu[2] == cpu[2]


@pytest.mark.parametrize("rows", [None, 4, 8, 16])
@pytest.mark.parametrize("capacity", [None, 3], ids=["gpu", "three-blocks"])
@pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
def test_tile_batch_equals_cpu(scoring, capacity, rows, monkeypatch):
    """Tiles of every shape in one batch, global mode: each one's last row as the CPU
    gives it. On a GPU that holds three blocks, the batch takes several launches and
    the tallest tile launches of its own."""
    from swath.kernels.gpu import tiles

    if capacity:
        monkeypatch.setattr(tiles, "_resident_blocks", lambda fn, shared: capacity)
    rng = np.random.default_rng(hash((capacity, rows)) % 2**32)
    batch = []
    for h, w in [*SHAPES, (3000, 2100), (40, 1), (1, 900)]:
        q, t = related_pair(rng, h, w, scoring.matrix.shape[0])
        batch.append((q, t, *boundary(rng, h, w, 1)))
    costs = (scoring.matrix, scoring.gap_open, scoring.gap_extend)
    gpu = get_backend("gpu").tile_batch(batch, *costs, rows=rows)
    cpu = get_backend("cpu").tile_batch(batch, *costs)
    assert len(gpu) == len(batch)
    for g, c, tile in zip(gpu, cpu, batch, strict=True):
        assert g.shape == (2, len(tile[1]))
        np.testing.assert_array_equal(g, c)


@pytest.mark.parametrize("local", [True, False], ids=["local", "global"])
def test_a_streamed_row_feeds_the_launch_below(local):
    """A tile whose last row streams out, and the tile below reading it as its top row
    (on one GPU, one after the other; side by side on two: the engine's slab test):
    both give what the CPU gives, and the stream counts every column."""
    from swath.kernels.gpu import tiles

    rng = np.random.default_rng(31)
    (h1, h2), w = (300, 200), 2500
    q1, t = related_pair(rng, h1, w, 4)
    q2, _ = related_pair(rng, h2, w, 4)
    top, left1 = boundary(rng, h1, w, 1)
    _, left2 = boundary(rng, h2, w, 1)
    costs = (DNA.matrix, DNA.gap_open, DNA.gap_extend, local, 64)
    cpu = get_backend("cpu")
    upper_cpu = cpu.tile_scores(q1, t, *costs, top, left1)
    corner = int(left1[0][-1])
    lower_cpu = cpu.tile_scores(q2, t, *costs, (np.r_[corner, upper_cpu[0][0]],
                                                np.r_[NEG, upper_cpu[0][1]]), left2)
    stream = tiles.row_stream(w)
    upper = tiles.tile_scores(q1, t, *costs, top, left1, rows=4, stream_out=stream)
    assert int(stream.ready[0]) == w
    lower = tiles.tile_scores(q2, t, *costs, (np.array([corner]), np.array([NEG])), left2,
                              rows=4, stream_in=stream)
    for got, want in ((upper, upper_cpu), (lower, lower_cpu)):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2] == want[2]
