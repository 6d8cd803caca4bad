"""Paths found by splits: optimal, through every kind of cut, from any slab height."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import swath
from swath.alignment import cigar_runs, join_cigars
from swath.constants import STATE_F, STATE_H
from swath.engine import pathsplit
from swath.kernels import get_backend
from swath.testing import rescore
from tests.helpers import DNA, PROTEIN, related_pair, whole_matrix


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
        assert states == {STATE_H, STATE_F}


def edge_pair(rng, kind, alphabet):
    """Pairs where paths are hard to pin down: tiny, all mismatches, one long gap, two
    letters (many tied paths), very different lengths, repeats."""
    def seq(length, letters=alphabet):
        return rng.integers(0, letters, length).astype(np.uint8)

    if kind == 0:
        return seq(int(rng.integers(1, 3))), seq(int(rng.integers(1, 3)))
    if kind == 1:
        return np.zeros(int(rng.integers(1, 50)), np.uint8), np.ones(int(rng.integers(1, 50)),
                                                                      np.uint8)
    if kind == 2:
        a = seq(int(rng.integers(40, 90)))
        at = int(rng.integers(0, len(a)))
        b = np.delete(a, slice(at, at + int(rng.integers(10, 40))))
        return (a, b) if rng.random() < 0.5 else (b, a)
    if kind == 3:
        return seq(int(rng.integers(1, 60)), 2), seq(int(rng.integers(1, 60)), 2)
    if kind == 4:
        return seq(int(rng.integers(1, 5))), seq(int(rng.integers(20, 80)))
    unit = seq(int(rng.integers(1, 4)))
    return np.tile(unit, int(rng.integers(1, 20))), np.tile(unit, int(rng.integers(1, 20)))


def piece_score(span, piece, a, b, scoring):
    """A traced piece's score, its leading insertion charged without opening when the
    span starts inside a vertical gap; and where the piece ends."""
    i, j, total = span.a, span.c, 0
    for k, (length, op) in enumerate(cigar_runs(piece)):
        if op in "=X":
            total += int(scoring.matrix[a[i:i + length], b[j:j + length]].sum())
            i, j = i + length, j + length
            continue
        total -= scoring.gap_cost(length) - (
            scoring.gap_open if k == 0 and op == "I" and span.start == STATE_F else 0)
        i, j = (i + length, j) if op == "I" else (i, j + length)
    return total, (i, j)


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_split_paths_on_edge_pairs(mode, monkeypatch):
    """Edge pairs under edge scorings (gap opening 0, gap extension 0, gaps dearer than
    any match): every piece scores its span's score and ends at its end, and the path
    scores the optimum."""
    rng = np.random.default_rng({"local": 7, "global": 8, "semiglobal": 9}[mode])
    cpu = get_backend("cpu")
    for trial in range(300):
        monkeypatch.setattr(pathsplit, "BASE_CELLS", int(rng.choice([1, 2, 50])))
        gap_open = int(rng.choice([0, 1, 5, 40, 1000]))
        gap_extend = int(rng.choice([1, 2, 500] if gap_open == 0 else [0, 1, 7, 5000]))
        scoring = swath.Scoring.dna(match=int(rng.integers(1, 6)),
                                    mismatch=-int(rng.integers(1, 8)), gap_open=gap_open,
                                    gap_extend=gap_extend)
        a, b = edge_pair(rng, trial % 6, 4)
        want = whole_matrix(a, b, scoring, mode)
        end = (want.score, want.query_end, want.target_end)
        spans = pathsplit.find_path(a, b, scoring, mode, end, cpu,
                                    slab=int(rng.choice([1, 2, 7, 1000])))
        for span in spans:
            piece = pathsplit.trace_span(span, a, b, scoring)
            assert piece_score(span, piece, a, b, scoring) == (span.score, (span.b, span.d))
        got = alignment_of(spans, a, b, scoring, mode, end)
        assert rescore(got, a, b, scoring) == want.score, (trial, got.cigar, want.cigar)


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
