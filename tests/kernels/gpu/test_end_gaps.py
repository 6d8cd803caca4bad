"""Terminal gap costs on the GPU (traceback.cu's fill with end costs, for the traceback
and, without codes, for the score phase) equal the CPU's kernels, which equal the
reference DP (tests/kernels/cpu/test_end_gaps.py)."""

from __future__ import annotations

import numpy as np
import pytest

import swath
from swath.kernels import get_backend
from tests.helpers import DNA, PROTEIN, packed, related

pytestmark = pytest.mark.gpu

SCHEMES = {
    "vsearch": swath.Scoring.vsearch(),
    "dna-dearer-ends": DNA.with_end_gaps(9, 3),
    "protein-free-end-opens": PROTEIN.with_end_gaps(0, 1),
}


def pairs(rng: np.random.Generator, alphabet: int, count: int
          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Related pairs of 1 to 300 residues, some cut or grown at an end, and a few long
    ones (several passes of a group's rows: spilled rows)."""
    lengths = [*rng.integers(1, 300, count).tolist(), 1, 2, 700, 1500]
    queries = [rng.integers(0, alphabet, n).astype(np.uint8) for n in lengths]
    targets = []
    for q in queries:
        t = related(rng, q, max(1, len(q) + int(rng.integers(-5, 6))), alphabet)
        targets.append(t[int(rng.integers(0, 3)):] if len(t) > 3 else t)
    return queries, targets


@pytest.mark.parametrize("name", list(SCHEMES))
def test_align_batch_equals_cpu(name):
    scoring = SCHEMES[name]
    rng = np.random.default_rng(len(name))
    alphabet = 4 if scoring.alphabet.letters == "ACGTN" else 20
    queries, targets = pairs(rng, alphabet, 200)
    args = (*packed(queries), *packed(targets), scoring, "global")
    gpu = get_backend("gpu").align_batch(*args)
    cpu = get_backend("cpu").align_batch(*args)
    for got, want in zip(gpu, cpu, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("budget", [1 << 30, 8 * 1600 * 50], ids=["one-call", "calls"])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_score_many_equals_cpu(monkeypatch, name, budget):
    """In one call of the fill, or in calls of about 50 pairs (the spill budget)."""
    from swath.kernels.gpu import scores

    monkeypatch.setattr(scores, "SPILL_BUDGET", budget)
    scoring = SCHEMES[name]
    rng = np.random.default_rng(20 + len(name))
    alphabet = 4 if scoring.alphabet.letters == "ACGTN" else 20
    queries, targets = pairs(rng, alphabet, 40)
    args = (*packed(queries[:15]), *packed(targets), scoring, "global")
    np.testing.assert_array_equal(get_backend("gpu").score_many(*args),
                                  get_backend("cpu").score_many(*args))


def test_allpairs_with_vsearch_defaults_equals_cpu(tmp_path):
    """Copies of an amplicon with substitutions and a few residues cut from its ends."""
    rng = np.random.default_rng(34)
    ancestor = rng.integers(0, 4, 200).astype(np.uint8)
    seqs = []
    for _ in range(40):
        copy = ancestor.copy()
        copy[rng.integers(0, 200, 4)] = rng.integers(0, 4, 4)
        cut = copy[int(rng.integers(0, 4)):200 - int(rng.integers(0, 4))]
        seqs.append(swath.Scoring.vsearch().alphabet.decode(cut))
    results = [swath.allpairs(seqs, swath.Scoring.vsearch(), iddef=2, min_identity=0.9,
                              device=device, store=str(tmp_path / f"{device}.zarr"), block=16)
               for device in ("gpu", "cpu")]
    assert len(results[0]) > 0 and results[0].to_table() == results[1].to_table()
