"""Paths found by splits: optimal, through every kind of cut, from any slab height."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import swath
from swath.alignment import join_cigars
from swath.engine import pathsplit
from swath.kernels import get_backend
from swath.kernels.tile_origins import F, H
from swath.testing import rescore
from tests.conftest import DNA, PROTEIN
from tests.engine.test_longpair import related_pair, whole_matrix


def alignment_of(spans, a, b, scoring, mode, end):
    """The alignment the segments trace, with the end gaps the mode charges."""
    score, end_i, end_j = end
    cigar = join_cigars([pathsplit.trace_span(s, a, b, scoring) for s in spans])
    i, j = (spans[0].a, spans[0].c) if spans else (end_i, end_j)
    if mode != "local":
        cigar = join_cigars([(f"{j}D" if j and mode == "global" else "") +
                             (f"{i}I" if i else ""), cigar])
        i, j = 0, (0 if mode == "global" else j)
    return swath.Alignment(score, i, end_i, j, end_j, cigar, mode)


@pytest.mark.parametrize("base", [1, 40, 2000])
@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_split_paths_are_optimal(mode, base, monkeypatch):
    """Random related pairs (gaps on both sides, gap opening 0 to 7): the traced path
    scores the whole-matrix optimum and ends where it does; cuts through H and through
    vertical gaps both happen."""
    monkeypatch.setattr(pathsplit, "BASE_CELLS", base)
    rng = np.random.default_rng({"local": 1, "global": 2, "semiglobal": 3}[mode] + base)
    cpu = get_backend("cpu")
    states = set()
    for trial in range(24):
        scoring, alphabet = (DNA, 4) if trial % 2 else (PROTEIN, 20)
        if trial % 3 == 0:
            scoring = swath.Scoring.dna(match=2, mismatch=-3, gap_open=int(rng.integers(0, 8)),
                                        gap_extend=int(rng.integers(1, 4)))
            alphabet = 4
        a, b = related_pair(rng, int(rng.integers(1, 200)), alphabet)
        want = whole_matrix(a, b, scoring, mode)
        end = (want.score, want.query_end, want.target_end)
        spans = pathsplit.find_path(a, b, scoring, mode, end, cpu,
                                    slab=int(rng.integers(1, 60)))
        got = alignment_of(spans, a, b, scoring, mode, end)
        assert rescore(got, a, b, scoring) == want.score, (trial, got.cigar, want.cigar)
        assert all(s.is_segment() for s in spans)
        assert all(x.b == y.a and x.d == y.c and x.end == y.start
                   for x, y in itertools.pairwise(spans))
        states |= {s.start for s in spans[1:]}
    if base == 1:
        assert states == {H, F}


def test_local_start_is_found_in_a_later_slab():
    """A local path longer than the backward pass's slab: the start lies slabs above the
    end."""
    rng = np.random.default_rng(4)
    a, b = related_pair(rng, 300, 4)
    want = whole_matrix(a, b, DNA, "local")
    start = pathsplit.find_start(a, b, DNA, "local", (want.score, want.query_end,
                                                      want.target_end), get_backend("cpu"), 7)
    spans = pathsplit.find_path(a, b, DNA, "local", (want.score, want.query_end,
                                                     want.target_end), get_backend("cpu"), 7)
    assert want.query_end - start[0] > 7 * 10
    assert (spans[0].a, spans[0].c) == start


def test_no_positive_cell_gives_no_segments():
    a = np.zeros(5, dtype=np.uint8)
    b = np.ones(7, dtype=np.uint8)
    assert pathsplit.find_path(a, b, DNA, "local", (0, 0, 0), get_backend("cpu"), 4) == []


def test_a_score_no_path_reaches_is_an_error(monkeypatch):
    """A span whose score no cut matches (a corrupted store) stops with an error."""
    monkeypatch.setattr(pathsplit, "BASE_CELLS", 100)
    a, b = related_pair(np.random.default_rng(8), 80, 4)
    want = whole_matrix(a, b, DNA, "global")
    with pytest.raises(RuntimeError, match="lies on a path of score"):
        pathsplit.find_path(a, b, DNA, "global", (want.score + 1, len(a), len(b)),
                            get_backend("cpu"), 16)
