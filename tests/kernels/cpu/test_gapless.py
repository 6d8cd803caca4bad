"""Gapless global scores: the score of the better of two real alignments, so never above
the optimal global score."""

from __future__ import annotations

import numpy as np
import pytest

from swath.alignment import Alignment
from swath.kernels.cpu.gapless import gapless_scores
from swath.scoring import Scoring
from swath.testing import reference_align, rescore
from tests.helpers import packed


def _gapless(query: np.ndarray, target: np.ndarray, from_end: bool) -> Alignment:
    k, d = min(len(query), len(target)), abs(len(query) - len(target))
    q, t = (query[-k:], target[-k:]) if from_end else (query[:k], target[:k])
    runs = "".join("1=" if a == b else "1X" for a, b in zip(q, t, strict=True))
    gap = f"{d}{'I' if len(query) > len(target) else 'D'}" if d else ""
    cigar = gap + runs if from_end else runs + gap
    return Alignment(0, 0, len(query), 0, len(target), cigar, "global")


@pytest.mark.parametrize("scoring", [Scoring.dna(), Scoring.vsearch(),
                                     Scoring.protein("BLOSUM62", 11, 1).with_end_gaps(3, 2)],
                         ids=["dna", "vsearch", "blosum62-ends"])
def test_gapless_scores_are_the_better_gapless_alignment_and_at_most_the_optimum(scoring):
    rng = np.random.default_rng(3)
    size = 4 if scoring.matrix.shape[0] <= 5 else 20
    seqs = [rng.integers(0, size, int(rng.integers(1, 30))).astype(np.uint8) for _ in range(9)]
    queries, targets = seqs[:4], seqs[4:]
    got = gapless_scores(*packed(queries), *packed(targets), scoring)
    assert got.shape == (4, 5) and got.dtype == np.int32
    for i, q in enumerate(queries):
        for j, t in enumerate(targets):
            want = max(rescore(_gapless(q, t, end), q, t, scoring) for end in (False, True))
            assert got[i, j] == want
            assert got[i, j] <= reference_align(q, t, scoring, "global").score
