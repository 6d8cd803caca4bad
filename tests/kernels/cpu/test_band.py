"""The CPU band kernel's 32-bit lanes against a plain banded Gotoh (its 16-bit lanes, and
the GPU's band kernel, are in the backend suite, tests/kernels/test_backends.py)."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels import get_backend
from swath.kernels.band_geometry import SKIPPED
from tests.helpers import DNA, PROTEIN, packed, random_bands, reference_band


@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
@pytest.mark.parametrize("nq, nt", [(9, 11), (37, 41)])   # 41: two or three lane groups
def test_32_bit_bands_equal_a_plain_banded_gotoh(scoring, nq, nt, monkeypatch):
    """The lanes pairs take when their values do not fit 16 bits."""
    monkeypatch.setattr("swath.kernels.cpu.band.fits_every_mode", lambda *_, **__: False)
    rng = np.random.default_rng(11)
    queries, targets, lo, hi = random_bands(rng, nq, nt, 4 if scoring is DNA else 20)
    got = get_backend("cpu").band_scores(*packed(queries), *packed(targets), lo, hi, scoring)
    skipped = 0
    for a, q in enumerate(queries):
        for b, t in enumerate(targets):
            want = reference_band(q, t, lo[a, b], hi[a, b], scoring.matrix, scoring.gap_open,
                                  scoring.gap_extend)
            assert got[a, b] == (SKIPPED if want is None else want), (a, b)
            skipped += want is None
    assert 0 < skipped < got.size          # both kinds of band were drawn
