"""The judge is judged: swath.testing's reference DP against parasail and Biopython."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from swath.testing import reference_align, rescore
from tests.helpers import biopython_score, pairs, parasail_score


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
@given(case=pairs())
@settings(deadline=None, max_examples=200)
def test_reference_equals_parasail(mode, case):
    scoring, query, target = case
    aln = reference_align(query, target, scoring, mode)
    assert aln.score == parasail_score(query, target, scoring, mode)
    assert rescore(aln, query, target, scoring) == aln.score


@pytest.mark.parametrize("mode", ["local", "global"])
@given(case=pairs(max_len=25))
@settings(deadline=None, max_examples=100)
def test_reference_equals_biopython(mode, case):
    scoring, query, target = case
    assert reference_align(query, target, scoring, mode).score == biopython_score(
        query, target, scoring, mode)


def test_semiglobal_aligns_the_whole_query_inside_the_target():
    from tests.helpers import DNA

    query = DNA.alphabet.encode("ACGTTGCA")
    target = DNA.alphabet.encode("GGGGACGTTGCAGGGG")
    aln = reference_align(query, target, DNA, "semiglobal")
    assert (aln.score, aln.query_start, aln.query_end) == (16, 0, 8)
    assert (aln.target_start, aln.target_end, aln.cigar) == (4, 12, "8=")
