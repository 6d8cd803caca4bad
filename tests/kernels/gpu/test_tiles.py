"""The GPU tile kernel's launches: slabs of bands, batches past the resident blocks,
streamed rows, alphabets past the shared memory (its results against the CPU's are in
the backend suite, tests/kernels/test_backends.py)."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels import get_backend
from swath.scoring import Alphabet, Scoring
from tests.helpers import BOUNDARY_NEG as NEG
from tests.helpers import DNA, PROTEIN, tile_batch_inputs, tile_boundary, tile_pair

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("origins", [False, True], ids=["scores", "origins"])
def test_tile_in_several_launches(origins):
    """A tile taller than one launch's slab of bands: each launch's last row feeds the next."""
    import cupy as cp

    from swath.kernels.gpu.tiles import _launch

    rng = np.random.default_rng(7)
    h, w = 2000, 1500
    q, t = tile_pair(rng, h, w, DNA.matrix.shape[0])
    top, left = tile_boundary(rng, h, w, 1)
    sc = (DNA, "local")
    whole = _launch(q, t, *sc, origins, top, left, rows=4)
    slabs = _launch(q, t, *sc, origins, top, left, rows=4, slab=3)
    for x, y in zip(whole, slabs, strict=True):
        np.testing.assert_array_equal(cp.asnumpy(x), cp.asnumpy(y))
    cpu = get_backend("cpu").tile_scores(q, t, *sc, 64, top, left)
    np.testing.assert_array_equal(cp.asnumpy(slabs[0])[:2], cpu[0])
    np.testing.assert_array_equal(cp.asnumpy(slabs[1])[:2], cpu[1])


def test_alphabets_past_the_shared_memory_are_refused():
    from swath.errors import InvalidParameter

    letters = "".join(chr(33 + k) for k in range(120))
    big = Scoring("big", Alphabet(letters, None), np.zeros((120, 120), dtype=np.int64), 5, 2)
    top = (np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64))
    with pytest.raises(InvalidParameter, match="at most 110 letters"):
        get_backend("gpu").tile_scores(np.zeros(3, np.uint8), np.zeros(3, np.uint8), big,
                                       "local", 64, top, (top[0][:3], top[1][:3]))


@pytest.mark.parametrize("rows", [None, 4, 8, 16])
@pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
def test_a_tile_batch_past_the_resident_blocks_equals_cpu(scoring, rows, monkeypatch):
    """Tiles of every shape in one batch, global mode, on a GPU that holds three blocks:
    the batch takes several launches and the tallest tile launches of its own; each
    tile's last row as the CPU gives it."""
    from swath.kernels.gpu import tiles

    monkeypatch.setattr(tiles, "_resident_blocks", lambda fn, shared: 3)
    rng = np.random.default_rng([3, rows or 0])
    batch = tile_batch_inputs(rng, scoring)
    gpu = get_backend("gpu").tile_batch(batch, scoring, rows=rows)
    cpu = get_backend("cpu").tile_batch(batch, scoring)
    assert len(gpu) == len(batch)
    for g, c, tile in zip(gpu, cpu, batch, strict=True):
        assert g.shape == (2, len(tile[1]))
        np.testing.assert_array_equal(g, c)


@pytest.mark.parametrize("mode", ["local", "global"])
def test_a_streamed_row_feeds_the_launch_below(mode):
    """A tile whose last row streams out, and the tile below reading it as its top row
    (on one GPU, one after the other; side by side on two: the engine's slab test):
    both give what the CPU gives, and the stream counts every column."""
    from swath.kernels.gpu import tiles

    rng = np.random.default_rng(31)
    (h1, h2), w = (300, 200), 2500
    q1, t = tile_pair(rng, h1, w, 4)
    q2, _ = tile_pair(rng, h2, w, 4)
    top, left1 = tile_boundary(rng, h1, w, 1)
    _, left2 = tile_boundary(rng, h2, w, 1)
    costs = (DNA, mode, 64)
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
