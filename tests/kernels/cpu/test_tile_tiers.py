"""The unsigned tier lanes of a local DNA tile (``kernels.cpu.tile_tiers``): the same
boundaries and best cell as the general tile kernel and the NumPy oracle, in 16 and 32
bits, and whole pairs through them with parasail's scores."""

from __future__ import annotations

import numpy as np
import pytest

import swath
from swath.kernels.cpu import tile_tiers, tiles
from tests.helpers import BOUNDARY_NEG, parasail_score, reference_tile, tile_pair

DNA = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
U16, U32 = tile_tiers.TYPES


def local_boundary(rng: np.random.Generator, h: int, w: int, base: int
                   ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A local tile's input boundary: H from ``base`` up, gap values around and below 0,
    some closed."""
    top_h = base + rng.integers(0, 40, w + 1)
    left_h = base + rng.integers(0, 40, h)
    top_f = np.where(rng.random(w + 1) < 0.3, BOUNDARY_NEG, top_h - rng.integers(5, 60, w + 1))
    left_e = np.where(rng.random(h) < 0.3, BOUNDARY_NEG, left_h - rng.integers(5, 60, h))
    return (top_h, top_f), (left_h, left_e)


def oracle(q, t, top, left, scoring=DNA):
    bottom, right, best = reference_tile(q, t, scoring.matrix, scoring.gap_open,
                                         scoring.gap_extend, True, top, left)
    return bottom[:2], right[:2], tuple(int(x) for x in best[:3])


def assert_tile(got, want):
    """H and the best cell exactly; gap values as ``max(0, .)``."""
    for g, w in zip(got[:2], want[:2], strict=True):
        np.testing.assert_array_equal(g[0], w[0])
        np.testing.assert_array_equal(np.maximum(g[1], 0), np.maximum(w[1], 0))
    assert tuple(got[2]) == tuple(want[2])


def tiers(q, t, top, left, dtype=None):
    scores = tile_tiers.scheme(DNA.matrix, q, t)
    return tile_tiers.tile_tiers(q, t, scores, DNA.gap_open, DNA.gap_extend, top, left, dtype)


@pytest.mark.parametrize("dtype", [U16, U32], ids=["u16", "u32"])
@pytest.mark.parametrize("shape", [(32, 4), (33, 8), (64, 64), (100, 36), (257, 300), (500, 44)],
                         ids=lambda s: "x".join(map(str, s)))
def test_tiers_equal_the_oracle(shape, dtype):
    rng = np.random.default_rng(hash(shape) % 2**32)
    h, w = shape
    q, t = tile_pair(rng, h, w, 4)
    top, left = local_boundary(rng, h, w, 0)
    assert_tile(tiers(q, t, top, left, dtype), oracle(q, t, top, left))


@pytest.mark.parametrize("seed", range(6))
def test_tile_scores_take_the_tiers_and_equal_the_general_kernel(seed):
    """Any width (the columns past the last block by the general kernel), values in 16
    and 32 bits: the same boundaries and best cell as the general kernel."""
    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(32, 400)), int(rng.integers(4, 400))
    q, t = tile_pair(rng, h, w, 4)
    top, left = local_boundary(rng, h, w, (0, 30_000, 70_000)[seed % 3])
    assert tile_tiers.first_type(2, w, top[0], left[0]) == (U16, U16, U32)[seed % 3]
    general = tiles._run(q, t, DNA, "local", False, 64, top, left)
    score, i, j = (int(x) for x in general[2][:3])
    want = (general[0][:2], general[1][:2], (score, i, j) if i >= 0 else (0, -1, -1))
    assert_tile(tiles.tile_scores(q, t, DNA, "local", 64, top, left), want)


def test_a_best_past_the_last_block_on_an_earlier_row_wins_a_tie():
    """Equal best scores in the tiers' columns and in the columns after the last block:
    the first in row-major order, wherever it lies."""
    q = np.zeros(64, dtype=np.uint8)
    t = np.full(10, 3, dtype=np.uint8)
    q[5], q[40] = 1, 2
    t[9], t[2] = 1, 2         # (41, 3) in the tiers' columns, (6, 10) after them: row 6 first
    top = (np.zeros(11, dtype=np.int64), np.full(11, BOUNDARY_NEG, dtype=np.int64))
    left = (np.zeros(64, dtype=np.int64), np.full(64, BOUNDARY_NEG, dtype=np.int64))
    got = tiles.tile_scores(q, t, DNA, "local", 64, top, left)
    assert got[2] == oracle(q, t, top, left)[2] == (2, 6, 10)


def test_input_at_the_16_bit_ceiling_runs_in_16_bits():
    """Input H up to the ceiling (the 16-bit maximum less a match) starts in 16 bits, one
    more in 32."""
    top_h, left_h = np.zeros(9, dtype=np.int64), np.zeros(40, dtype=np.int64)
    top_h[3] = tile_tiers.ceiling(U16, 2)
    assert tile_tiers.first_type(2, 8, top_h, left_h) == U16
    left_h[7] = tile_tiers.ceiling(U16, 2) + 1
    assert tile_tiers.first_type(2, 8, top_h, left_h) == U32
    assert tile_tiers.first_type(2, 1 << 16, top_h, left_h) == U32      # columns past 16 bits


@pytest.mark.parametrize("base", [65_000, 65_400], ids=["stays-below", "passes-ceiling"])
def test_a_16_bit_tile_passing_its_ceiling_runs_again_in_32(base, monkeypatch):
    """Input H just below the ceiling, in a tile of matches: where a cell's H passes the
    ceiling the 16-bit run is discarded and the tile runs in 32 bits, exact."""
    rng = np.random.default_rng(base)
    q = rng.integers(0, 4, 128).astype(np.uint8)
    t = q[:64].copy()
    top, left = local_boundary(rng, 128, 64, base)
    top[0][:] = np.minimum(top[0], tile_tiers.ceiling(U16, 2))
    left[0][:] = np.minimum(left[0], tile_tiers.ceiling(U16, 2))
    kernels = []
    make = tile_tiers._make_tiers
    monkeypatch.setattr(tile_tiers, "_make_tiers", lambda d, c: kernels.append(d) or make(d, c))
    got = tiers(q, t, top, left)
    want = oracle(q, t, top, left)
    assert_tile(got, want)
    passes = want[2][0] > tile_tiers.ceiling(U16, 2)
    assert passes == (base == 65_400)
    assert kernels == ([U16, U32] if passes else [U16])


@pytest.mark.parametrize("match", [2, 600], ids=["16-bit", "past-16-bit"])
def test_whole_pairs_equal_parasail(match):
    """Pairs through the tiled engine's small tiles (tiers and the general kernel's
    remainders); a match of 600 carries the score past 16 bits, so the later tiles run
    in 32."""
    rng = np.random.default_rng(match)
    scoring = swath.Scoring.dna(match=match, mismatch=-3 * match // 2, gap_open=5 * match // 2,
                                gap_extend=match)
    for _ in range(3):
        q = rng.integers(0, 4, int(rng.integers(300, 700))).astype(np.uint8)
        t = np.concatenate([rng.integers(0, 4, int(rng.integers(0, 50))), q]).astype(np.uint8)
        t[rng.random(len(t)) < 0.1] = rng.integers(0, 4)
        got = swath.score(q, t, scoring=scoring, device="cpu", tile_size=96)
        assert got.score == parasail_score(q, t, scoring, "local")
    if match > 2:
        assert got.score > np.iinfo(np.uint16).max


def test_one_compiled_kernel_a_type():
    """Tiles of any shape and boundary compile the tier kernel once for each type, with
    codes and without."""
    rng = np.random.default_rng(9)
    for h, w, base in [(40, 8, 0), (300, 44, 9), (65, 100, 0), (40, 8, 5), (70, 12, 70_000)]:
        for dtype in (U16, U32, None):
            q, t = tile_pair(rng, h, w, 4)
            boundary = local_boundary(rng, h, w, base)
            tiers(q, t, *boundary, dtype)
            tile_tiers.tile_codes(q, t, tile_tiers.scheme(DNA.matrix, q, t), DNA.gap_open,
                                  DNA.gap_extend, *boundary, dtype)
    for dtype in (U16, U32):
        for codes in (False, True):
            assert len(tile_tiers._make_tiers(dtype, codes).signatures) == 1


def test_protein_and_positive_mismatch_matrices_take_the_general_kernel():
    protein = swath.Scoring.protein()
    q = np.arange(40, dtype=np.uint8) % 20
    assert tile_tiers.scheme(protein.matrix, q, q) is None
    odd = swath.Scoring.dna(match=2, mismatch=1, gap_open=5, gap_extend=2)
    assert tile_tiers.scheme(odd.matrix, q % 4, q % 4) is None
    assert tile_tiers.scheme(DNA.matrix, q % 4, q % 4)[:2] == (2, -3)


def batch(pairs):
    """``align_batch``'s inputs for ``(query, target)`` pairs."""
    q_off = np.cumsum([0] + [len(q) for q, _ in pairs])
    t_off = np.cumsum([0] + [len(t) for _, t in pairs])
    return (np.concatenate([q for q, _ in pairs]), q_off,
            np.concatenate([t for _, t in pairs]), t_off)


@pytest.mark.parametrize("match", [2, 600], ids=["16-bit", "past-16-bit"])
def test_long_local_pairs_fill_in_the_tiers_as_the_one_pair_kernel(match, monkeypatch):
    """Scores, coordinates and CIGARs of pairs filled in the tier lanes (any target
    length, 16 and 32 bits, a pair with no positive cell) equal ``_fill``'s, with pairs
    of the pair lanes in the same batch."""
    from swath.alignment import cigar_from_path
    from swath.kernels.cpu import traceback

    scoring = swath.Scoring.dna(match=match, mismatch=-3 * match // 2, gap_open=5 * match // 2,
                                gap_extend=match)
    rng = np.random.default_rng(match)
    pairs = []
    for m in (32, 47, 300, 1000):
        q = rng.integers(0, 4, m).astype(np.uint8)
        t = np.concatenate([rng.integers(0, 4, int(rng.integers(0, 60))), q,
                            rng.integers(0, 4, int(rng.integers(0, 7)))]).astype(np.uint8)
        t[rng.random(len(t)) < 0.1] = rng.integers(0, 4)
        pairs.append((q, t))
    pairs.append((np.zeros(64, np.uint8), np.ones(100, np.uint8)))     # no positive cell
    pairs.append((pairs[0][0][:20], pairs[0][1][:30]))                   # short: pair lanes
    monkeypatch.setattr(traceback, "TIER_CELLS", 1)
    filled = []
    codes = tile_tiers.pair_codes
    monkeypatch.setattr(tile_tiers, "pair_codes",
                        lambda q, *a: filled.append(len(q)) or codes(q, *a))
    scores, coords, text, offsets = traceback.align_batch(*batch(pairs), scoring, "local")
    assert sorted(filled) == [32, 47, 64, 300, 1000]
    for k, (q, t) in enumerate(pairs):
        score, q0, q1, t0, t1, ops = traceback.align_pair(q, t, scoring, "local")
        assert (scores[k], *coords[k]) == (score, q0, q1, t0, t1)
        assert bytes(text[offsets[k]:offsets[k + 1]]).decode() == \
            (cigar_from_path(ops, q, t, q0, t0) if score else "")
    if match > 2:
        assert scores.max() > np.iinfo(np.uint16).max
