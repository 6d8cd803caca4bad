"""Banded global scores: against a plain banded Gotoh, the full pass, and CPU against GPU."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels import get_backend
from swath.kernels.band_geometry import SKIPPED
from tests.conftest import DNA, PROTEIN
from tests.kernels.test_gpu import packed, related

NEG = float("-inf")


def reference_band(q, t, lo, hi, scoring):
    """Gotoh's global recurrences over the whole matrix, cells off diagonals lo..hi
    excluded (a gap of length k costs open + k * extend); None if no path."""
    m, n = len(q), len(t)
    go, ge = scoring.gap_open, scoring.gap_extend
    H = np.full((m + 1, n + 1), NEG)
    E = np.full((m + 1, n + 1), NEG)
    F = np.full((m + 1, n + 1), NEG)
    for i in range(m + 1):
        for j in range(n + 1):
            if not lo <= i - j <= hi:
                continue
            if i == 0 and j == 0:
                H[i, j] = 0
                continue
            if i > 0:
                E[i, j] = max(E[i - 1, j] - ge, H[i - 1, j] - go - ge)
            if j > 0:
                F[i, j] = max(F[i, j - 1] - ge, H[i, j - 1] - go - ge)
            diag = H[i - 1, j - 1] + scoring.matrix[q[i - 1], t[j - 1]] if i and j else NEG
            H[i, j] = max(diag, E[i, j], F[i, j])
    return None if H[m, n] == NEG else int(H[m, n])


def random_set(rng, count, longest, alphabet):
    return [rng.integers(0, alphabet, int(rng.integers(1, longest + 1))).astype(np.uint8)
            for _ in range(count)]


@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
@pytest.mark.parametrize("nq, nt", [(9, 11), (37, 41)])   # 41: two or three lane groups
@pytest.mark.parametrize("width", ["16-bit", "32-bit"])
def test_bands_equal_a_plain_banded_gotoh(scoring, nq, nt, width, monkeypatch):
    if width == "32-bit":   # the lanes pairs take when their values do not fit 16 bits
        monkeypatch.setattr("swath.kernels.cpu.band.fits_every_mode", lambda *_, **__: False)
    rng = np.random.default_rng(11)
    alphabet = 4 if scoring is DNA else 20
    queries, targets = random_set(rng, nq, 14, alphabet), random_set(rng, nt, 14, alphabet)
    lo = rng.integers(-16, 4, (nq, nt))
    hi = lo + rng.integers(-2, 20, (nq, nt))
    got = get_backend("cpu").band_scores(*packed(queries), *packed(targets), lo, hi,
                                         scoring.matrix, scoring.gap_open, scoring.gap_extend)
    skipped = 0
    for a, q in enumerate(queries):
        for b, t in enumerate(targets):
            want = reference_band(q, t, lo[a, b], hi[a, b], scoring)
            assert got[a, b] == (SKIPPED if want is None else want), (a, b)
            skipped += want is None
    assert 0 < skipped < got.size          # both kinds of band were drawn


def test_an_empty_band_far_off_the_matrix_stays_skipped():
    """Bands are kept relative to their lane group's: an empty one must not wrap into a
    band that looks whole (16 bits: 32,763 diagonals off; 32 bits: 2^31)."""
    rng = np.random.default_rng(5)
    q = rng.integers(0, 4, 5).astype(np.uint8)
    targets = [rng.integers(0, 4, 5).astype(np.uint8) for _ in range(2)]   # union from -5
    cpu = get_backend("cpu")
    for lo in (32763, 2**31 - 5):
        got = cpu.band_scores(q, np.array([0, 5]), *packed(targets), np.array([[-5, lo]]),
                              np.array([[5, lo + 7]]), DNA.matrix, DNA.gap_open,
                              DNA.gap_extend)
        assert got[0, 1] == SKIPPED
        assert got[0, 0] == reference_band(q, targets[0], -5, 5, DNA)


def test_a_band_wider_than_16_bits_of_diagonals():
    """No gap extension: the values fit 16 bits at any length, the diagonals do not."""
    rng = np.random.default_rng(6)
    matrix = np.where(np.eye(4, dtype=bool), 1, -1).astype(np.int32)
    q, t = rng.integers(0, 4, 10).astype(np.uint8), rng.integers(0, 4, 32760).astype(np.uint8)
    args = (q, np.array([0, 10]), t, np.array([0, 32760]))
    cpu = get_backend("cpu")
    band = cpu.band_scores(*args, np.array([[-10**6]]), np.array([[10**6]]), matrix, 5, 0)
    assert band[0, 0] == cpu.score_many(*args, matrix, 5, 0, "global")[0, 0]


@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_a_band_of_every_diagonal_is_the_optimal_global_score(scoring):
    rng = np.random.default_rng(12)
    alphabet = 4 if scoring is DNA else 20
    queries, targets = random_set(rng, 7, 90, alphabet), random_set(rng, 13, 90, alphabet)
    backend = get_backend("cpu")
    args = (*packed(queries), *packed(targets))
    band = backend.band_scores(*args, np.full((7, 13), -10**6), np.full((7, 13), 10**6),
                               scoring.matrix, scoring.gap_open, scoring.gap_extend)
    full = backend.score_many(*args, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                              "global")
    np.testing.assert_array_equal(band, full)


@pytest.mark.gpu
@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_gpu_bands_equal_cpu_in_every_width_class(scoring):
    """Bands of every instance (16 to 4,096 diagonals, registers and local memory) and
    wider ones (the CPU twin's), empty bands, related and unrelated pairs."""
    rng = np.random.default_rng(13)
    alphabet = 4 if scoring is DNA else 20
    queries = [*random_set(rng, 6, 300, alphabet),
               rng.integers(0, alphabet, 4500).astype(np.uint8)]
    targets = [related(rng, queries[k % len(queries)], int(rng.integers(1, 400)), alphabet)
               for k in range(40)] + random_set(rng, 20, 300, alphabet)
    targets.append(rng.integers(0, alphabet, 4400).astype(np.uint8))
    shape = (len(queries), len(targets))
    half = rng.choice([3, 10, 30, 60, 120, 500, 2000, 5000], shape)
    m, n = np.array([len(q) for q in queries])[:, None], np.array([len(t) for t in targets])
    centre = (m - n) // 2 + rng.integers(-2, 3, shape)
    lo, hi = centre - half, centre + half
    lo[0, :5], hi[0, :5] = 1, 0                                  # empty bands
    args = (*packed(queries), *packed(targets), lo, hi, scoring.matrix, scoring.gap_open,
            scoring.gap_extend)
    gpu, cpu = (get_backend(d).band_scores(*args) for d in ("gpu", "cpu"))
    np.testing.assert_array_equal(gpu, cpu)
    assert (cpu == SKIPPED).any() and (cpu != SKIPPED).any()
