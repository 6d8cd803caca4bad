"""Identity definitions and the lazy traceback filters of ``swath.identity``.

The filters are judged against every alignment of two short sequences: an exhaustive
enumerator below lists every path (diagonal, ``I`` and ``D`` steps in any order, gaps of
both kinds side by side included) of the query against the target (global) or against
every window of the target (semiglobal), scores it with swath's gap convention (a gap
of length k costs ``gap_open + k * gap_extend``) and counts what the identity
definitions read.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import swath
from swath.alignment import Alignment
from swath.errors import InvalidParameter
from swath.identity import (
    DEFINITIONS,
    NO_BOUND,
    UNREACHABLE,
    band_limits,
    cigar_counts,
    identity,
    identity_from_counts,
    identity_percent,
    least_score,
    length_can_pass,
    surplus_fraction,
    surplus_scheme,
    terminal_gap_columns,
)
from swath.identity.filters import _least_matches, _most_differences
from swath.identity.surplus import LARGEST_DENOMINATOR
from swath.scoring import Alphabet, Scoring

DNA = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
BLOSUM62 = Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
THRESHOLDS = (0.0, 0.5, 0.6, 0.75, 0.8, 0.97, 1.0)
PAD = 3                     # path ops: 0 diagonal, 1 I (query residue), 2 D (target residue)


# ---------------------------------------------------------------------------------------
# identity values on hand-made alignments


def _aln(cigar: str, mode: str = "global", qs: int = 0, ts: int = 0) -> Alignment:
    q = sum(int(k) for k, op in _runs(cigar) if op in "=XI")
    t = sum(int(k) for k, op in _runs(cigar) if op in "=XD")
    return Alignment(0, qs, qs + q, ts, ts + t, cigar, mode)


def _runs(cigar: str) -> list[tuple[str, str]]:
    return re.findall(r"(\d+)([=XID])", cigar)


@pytest.mark.parametrize(("cigar", "m", "n", "mode", "expected"), [
    # leading I run and trailing D run are terminal; the 1D inside is internal
    ("2I3=1X1D2=3D", 8, 10, "global",
     {"pident": 5 / 12, 0: 5 / 8, 1: 5 / 12, 2: 5 / 7, 3: 1 - 4 / 10, 4: 5 / 12}),
    # terminal gaps on the other sides (a D run first, an I run last)
    ("3D4=1I", 5, 7, "global",
     {"pident": 4 / 8, 0: 4 / 5, 1: 4 / 8, 2: 4 / 4, 3: 1 - 2 / 7, 4: 4 / 8}),
    # two gap runs at the start: only the first is terminal (vsearch's align_trim)
    ("1D2I4=1I", 7, 5, "global",
     {"pident": 4 / 8, 0: 4 / 5, 1: 4 / 8, 2: 4 / 6, 3: 1 - 3 / 7, 4: 4 / 8}),
    # no gaps
    ("5=1X4=", 10, 10, "global",
     {"pident": 0.9, 0: 0.9, 1: 0.9, 2: 0.9, 3: 0.9, 4: 0.9}),
    # semiglobal: the target's ends outside the alignment are not columns
    ("4=1X3=", 8, 20, "semiglobal",
     {"pident": 7 / 8, 0: 7 / 8, 1: 7 / 8, 2: 7 / 8, 3: 1 - 1 / 20, 4: 7 / 8}),
    # semiglobal with a query residue against a gap at the end: a terminal gap
    ("6=2I", 8, 12, "semiglobal",
     {"pident": 6 / 8, 0: 6 / 8, 1: 6 / 8, 2: 6 / 6, 3: 1 - 1 / 12, 4: 6 / 8}),
    # local: both sequences' ends outside it do not count; terminal runs inside do
    ("2I6=1X2=1D", 30, 14, "local",
     {"pident": 8 / 12, 0: 8 / 14, 1: 8 / 12, 2: 8 / 9, 3: 1 - 3 / 30, 4: 8 / 12}),
    # one gap run only: terminal once, nothing internal
    ("4D", 1, 4, "global", {"pident": 0.0, 0: 0.0, 1: 0.0, 2: 0.0, 3: 1 - 1 / 4, 4: 0.0}),
    # gaps only, both kinds
    ("3I2D", 3, 2, "global", {"pident": 0.0, 0: 0.0, 1: 0.0, 2: 0.0, 3: 1 - 2 / 3, 4: 0.0}),
    # MBL below zero is 0
    ("2X1I1D", 3, 3, "global", {"pident": 0.0, 0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}),
    # an empty alignment (local) is 0 under every definition
    ("", 5, 5, "local", {"pident": 0.0, 0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}),
])
def test_identity_by_hand(cigar: str, m: int, n: int, mode: str, expected: dict) -> None:
    aln = _aln(cigar, mode, ts=3 if mode != "global" else 0)
    for definition, value in expected.items():
        assert identity(aln, m, n, definition) == pytest.approx(value, abs=1e-12), definition
    assert identity(aln, m, n) == aln.identity            # pident is Alignment.identity


def test_identity_exact_floats() -> None:
    """Each definition is exactly its float64 expression (the filters rely on it)."""
    aln = _aln("29=71X")
    assert identity(aln, 100, 100) == 29 / 100
    assert identity(aln, 100, 100, 3) == 1.0 - 71 / 100
    assert identity(aln, 100, 120, 0) == 29 / 100


def test_identity_percent_is_vsearchs_double() -> None:
    """In percent, each definition is vsearch's C expression exactly (``100.0 * matches /
    denominator``; 3: ``100.0 * (1.0 - (mismatches + gaps) / longest)``), which ``%.1f``
    prints as vsearch does: 49 of 80 is 61.2, where 100 times the fraction prints 61.3."""
    cigars = [f"{m}={x}X{d}D" if d else f"{m}={x}X" for m in range(1, 60, 7)
              for x in range(1, 40, 3) for d in (0, 2)]
    counts = cigar_counts(cigars)
    m, n = counts["columns"] - 1, counts["columns"] + 3
    for definition in (0, 1, 2, 3, 4, "pident"):
        percent = identity_percent(counts, m, n, definition).tolist()
        for k, (same, other, columns, gaps, ends) in enumerate(zip(*(
                counts[name].tolist() for name in ("matches", "mismatches", "columns",
                                                   "gap_opens", "terminal")), strict=True)):
            denominator = {0: min(m[k], n[k]), 2: columns - ends}.get(definition, columns)
            want = (max(0.0, 100.0 * (1.0 - (other + gaps) / max(m[k], n[k])))
                    if definition == 3 else 100.0 * same / denominator
                    if denominator > 0 and columns > 0 else 0.0)
            assert percent[k] == want, (cigars[k], definition)
    fraction = cigar_counts(["49=31X"])
    assert f"{identity_percent(fraction, 80, 80, 2)[0]:.1f}" == "61.2"
    assert f"{100 * identity_from_counts(49, 31, 80, 0, 0, 80, 80, 2):.1f}" == "61.3"


def test_terminal_gap_columns() -> None:
    assert terminal_gap_columns("") == 0
    assert terminal_gap_columns("5=") == 0
    assert terminal_gap_columns("2I3=") == 2
    assert terminal_gap_columns("3=4D") == 4
    assert terminal_gap_columns("2D3I5=1X4I") == 6
    assert terminal_gap_columns("6D") == 6
    assert terminal_gap_columns("3I2D") == 5


def test_definitions_accepted_and_refused() -> None:
    aln = _aln("5=")
    for spelled in ("pident", 0, 1, 2, 3, 4, "0", "3", np.int64(2)):
        assert identity(aln, 5, 5, spelled) == 1.0  # type: ignore[arg-type]
    for bad in ("blast", 5, -1, True, 1.0, None):
        with pytest.raises(InvalidParameter, match="identity definition must be"):
            identity(aln, 5, 5, bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="mode must be one of"):
        length_can_pass(5, 5, 0.9, "pident", "glocal")
    with pytest.raises(InvalidParameter, match="threshold must be a number"):
        length_can_pass(5, 5, float("nan"))
    with pytest.raises(InvalidParameter, match=r"m \(sequence lengths\) must be >= 1"):
        length_can_pass([0, 3], 5, 0.9)
    with pytest.raises(InvalidParameter, match="residues must be codes"):
        least_score(5, 5, 0.9, DNA, residues=[0, 7])
    with pytest.raises(InvalidParameter, match=r"residues .* is empty"):
        least_score(5, 5, 0.9, DNA, residues=[])


def test_float_threshold_counts() -> None:
    """The least matches and most differences solve the float64 comparison exactly."""
    columns = np.arange(1, 3000, dtype=np.int64)
    for threshold in (0.29, 0.3, 0.5, 0.7, 0.97, 0.99, 1 / 3, 2 / 3, 1.0, 1e-9):
        least = _least_matches(columns, threshold)
        assert np.all(least / columns >= threshold)
        assert np.all((least == 0) | ((least - 1) / columns < threshold))
        if threshold > 0:
            most = _most_differences(columns, threshold)
            assert np.all(1.0 - most / columns >= threshold)
            assert np.all(1.0 - (most + 1) / columns < threshold)
    assert _least_matches(np.array([100]), 0.29)[0] == 29     # 0.29 * 100 == 28.999999999999996


# ---------------------------------------------------------------------------------------
# the exhaustive enumerator


@functools.cache
def global_paths(m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every path from (0, 0) to (m, n): ops (paths x (m + n), PAD after the end), lengths."""
    if m == 0 and n == 0:
        return np.zeros((1, 0), dtype=np.int8), np.zeros(1, dtype=np.int64)
    ops_parts, length_parts = [], []
    for op, (i, j) in ((0, (m - 1, n - 1)), (1, (m - 1, n)), (2, (m, n - 1))):
        if i < 0 or j < 0:
            continue
        ops, lengths = global_paths(i, j)
        grown = np.full((len(ops), m + n), PAD, dtype=np.int8)
        grown[:, :ops.shape[1]] = ops
        grown[np.arange(len(ops)), lengths] = op
        ops_parts.append(grown)
        length_parts.append(lengths + 1)
    return np.concatenate(ops_parts), np.concatenate(length_parts)


def test_enumerator_counts_paths() -> None:
    """The number of paths is the Delannoy number, all distinct, all ending at (m, n)."""
    delannoy = {(1, 1): 3, (2, 2): 13, (3, 3): 63, (3, 5): 231, (8, 8): 265729}
    for (m, n), count in delannoy.items():
        ops, lengths = global_paths(m, n)
        assert len(ops) == count == len({row.tobytes() for row in ops})
        assert np.all(((ops == 0) | (ops == 1)).sum(1) == m)
        assert np.all(((ops == 0) | (ops == 2)).sum(1) == n)
        assert np.all((ops != PAD).sum(1) == lengths)


def path_counts(ops: np.ndarray, lengths: np.ndarray, query: np.ndarray, target: np.ndarray,
                scoring: Scoring) -> dict[str, np.ndarray]:
    """Score and counts of every path of ``query`` against ``target``."""
    count, width = ops.shape
    diagonal = ops == 0
    q_pos = np.cumsum((ops == 0) | (ops == 1), axis=1) - 1
    t_pos = np.cumsum((ops == 0) | (ops == 2), axis=1) - 1
    q = np.concatenate([query, [0]]).astype(np.intp)          # the pad: never read as a pair
    t = np.concatenate([target, [0]]).astype(np.intp)
    qa = q[np.where(diagonal, q_pos, len(query))]
    ta = t[np.where(diagonal, t_pos, len(target))]
    same = diagonal & (qa == ta)
    substitution = np.where(diagonal, scoring.matrix[qa, ta], 0).sum(1, dtype=np.int64)
    gap = (ops == 1) | (ops == 2)
    before = np.concatenate([np.full((count, 1), PAD, dtype=np.int8), ops[:, :-1]], axis=1)
    opens = (gap & (ops != before)).sum(1)
    gap_columns = gap.sum(1)
    rows = np.arange(count)
    first = ops[:, 0]
    first_run = np.argmax(ops != first[:, None], axis=1)      # PAD ends every row's run
    first_run = np.where((ops == first[:, None]).all(1), width, first_run)
    last = ops[rows, lengths - 1]
    back = lengths[:, None] - 1 - np.arange(width)[None, :]
    reversed_ops = np.where(back >= 0, ops[rows[:, None], np.maximum(back, 0)], PAD + 1)
    last_run = np.argmax(reversed_ops != last[:, None], axis=1)
    terminal = np.where(first != 0, first_run, 0) + np.where(
        (last != 0) & (first_run < lengths), last_run, 0)
    terminal_opens = (first != 0).astype(np.int64) + ((last != 0) & (first_run < lengths))
    diagonals = np.cumsum(np.where(ops == 1, 1, np.where(ops == 2, -1, 0)), axis=1)
    return {"score": substitution - opens * scoring.gap_open - gap_columns * scoring.gap_extend,
            "lowest": np.minimum(diagonals.min(1, initial=0), 0),
            "highest": np.maximum(diagonals.max(1, initial=0), 0),
            "matches": same.sum(1), "mismatches": (diagonal & ~same).sum(1),
            "columns": lengths, "opens": opens, "terminal": terminal,
            "terminal_opens": terminal_opens}


def all_alignments(query: np.ndarray, target: np.ndarray, scoring: Scoring, mode: str
                   ) -> dict[str, np.ndarray]:
    """Counts of every global alignment, or of every semiglobal one (each target window)."""
    n = len(target)
    windows = [(0, n)] if mode == "global" else [
        (start, end) for start in range(n + 1) for end in range(start, n + 1)]
    parts = []
    for start, end in windows:
        ops, lengths = global_paths(len(query), end - start)
        parts.append(path_counts(ops, lengths, query, target[start:end], scoring))
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def _cigar(ops: np.ndarray, length: int, query: np.ndarray, target: np.ndarray) -> str:
    from swath.alignment import cigar_from_path

    return cigar_from_path(ops[:length].astype(np.uint8), query, target, 0, 0)


def test_enumerator_agrees_with_alignment_and_rescore() -> None:
    """The enumerator's counts are those of Alignment, and its scores swath's (rescore)."""
    from swath.testing import reference_align, rescore

    rng = np.random.default_rng(5)
    query, target = rng.integers(0, 3, 5), rng.integers(0, 3, 4)
    ops, lengths = global_paths(5, 4)
    counts = path_counts(ops, lengths, query, target, DNA)
    for k in rng.choice(len(ops), 300, replace=False):
        aln = Alignment(int(counts["score"][k]), 0, 5, 0, 4, _cigar(ops[k], lengths[k], query,
                                                                        target), "global")
        assert rescore(aln, query, target, DNA) == counts["score"][k]
        assert (aln.matches, aln.mismatches, aln.length, aln.gap_opens,
                terminal_gap_columns(aln.cigar)) == tuple(int(counts[key][k]) for key in (
                    "matches", "mismatches", "columns", "opens", "terminal"))
        for definition in DEFINITIONS:
            assert identity(aln, 5, 4, definition) == identity_from_counts(
                counts["matches"][k], counts["mismatches"][k], counts["columns"][k],
                counts["opens"][k], counts["terminal"][k], 5, 4, definition)
    for mode in ("global", "semiglobal"):                     # the optimum is among them
        best = all_alignments(query, target, DNA, mode)["score"].max()
        assert best == reference_align(query, target, DNA, mode).score


# ---------------------------------------------------------------------------------------
# the filters against every alignment


def _custom(matrix: list[list[int]], gap: tuple[int, int]) -> Scoring:
    return Scoring("custom", Alphabet("ABC", None), np.array(matrix), *gap)


gaps = st.tuples(st.integers(0, 8), st.integers(0, 3)).filter(lambda g: g[0] + g[1] > 0)
scorings = st.one_of(
    st.builds(lambda mm, g: Scoring.dna(match=mm[0], mismatch=mm[1], gap_open=g[0],
                                        gap_extend=g[1]),
              st.tuples(st.integers(1, 4), st.integers(-5, 0)), gaps),
    st.builds(lambda g: Scoring.protein("BLOSUM62", gap_open=g[0], gap_extend=g[1]), gaps),
    st.just(DNA), st.just(BLOSUM62),
    # any matrix, even one where an identical pair scores below a different one
    st.builds(_custom, st.lists(st.lists(st.integers(-6, 6), min_size=3, max_size=3),
                                min_size=3, max_size=3), gaps),
)


@st.composite
def problems(draw: st.DrawFn, max_length: int = 8) -> tuple:
    scoring = draw(scorings)
    size = len(scoring.alphabet.letters)
    letters = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=3, unique=True))
    m, n = draw(st.integers(1, max_length)), draw(st.integers(1, max_length))
    query = np.array(draw(st.lists(st.sampled_from(letters), min_size=m, max_size=m)))
    target = np.array(draw(st.lists(st.sampled_from(letters), min_size=n, max_size=n)))
    residues = draw(st.sampled_from(["all", "present", "letters"]))
    codes = {"all": None, "present": np.union1d(query, target), "letters": letters}[residues]
    fraction = draw(st.integers(1, 16).flatmap(lambda d: st.tuples(st.integers(0, d),
                                                                   st.just(d))))
    thresholds = (*THRESHOLDS, fraction[0] / fraction[1],
                  draw(st.floats(0.0, 1.0, allow_nan=False)))
    return scoring, query, target, codes, thresholds


def identities(counts: dict[str, np.ndarray], m: int, n: int, definition: str | int
               ) -> np.ndarray:
    """The identity of every enumerated path under ``definition``."""
    return identity_from_counts(counts["matches"], counts["mismatches"], counts["columns"],
                                counts["opens"], counts["terminal"], m, n, definition)


def check_filters(mode: str, scoring: Scoring, query: np.ndarray, target: np.ndarray,
                  codes: npt.ArrayLike | None, thresholds: tuple) -> None:
    counts = all_alignments(query, target, scoring, mode)
    m, n = len(query), len(target)
    for definition in DEFINITIONS:
        values = identities(counts, m, n, definition)
        for threshold in thresholds:
            passing = values >= threshold
            bound = int(least_score(m, n, threshold, scoring, mode, definition,
                                    residues=codes))
            can = bool(length_can_pass(m, n, threshold, definition, mode))
            where = f"{definition=} {threshold=} {mode} m={m} n={n} {scoring.name}"
            if not can:
                assert not passing.any(), where
                assert bound == UNREACHABLE, where
            if passing.any():
                least = int(counts["score"][passing].min())
                assert bound <= least, f"{where}: bound {bound} > least passing score {least}"
            band = band_limits(m, n, threshold, definition, mode)
            if band is not None:
                lo, hi = (int(edge) for edge in band)
                inside = (counts["lowest"] >= lo) & (counts["highest"] <= hi)
                assert np.all(inside[passing]), f"{where}: a passing path leaves {lo}..{hi}"
                assert can == (lo <= hi), where


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_filters_never_drop_a_passing_global_alignment(problem: tuple) -> None:
    check_filters("global", *problem)


@settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_length=7))
def test_filters_never_drop_a_passing_semiglobal_alignment(problem: tuple) -> None:
    check_filters("semiglobal", *problem)


@pytest.mark.parametrize("scoring", [
    DNA, BLOSUM62, Scoring.dna(1, -1, 0, 1), Scoring.dna(2, -3, 1, 1), Scoring.dna(4, -1, 3, 0),
    Scoring.dna(1, -4, 1, 1), Scoring.protein("BLOSUM62", 3, 1),
    Scoring("odd", Alphabet("AB", None), np.array([[-2, 1], [1, 3]]), 1, 1)],
    ids=["dna", "blosum62", "dna-linear", "dna-cheap-gaps", "dna-constant-gaps",
         "dna-dear-mismatch", "blosum62-cheap-gaps", "match-below-mismatch"])
@pytest.mark.parametrize("mode", ["global", "semiglobal"])
def test_filters_on_every_length_pair(scoring: Scoring, mode: str) -> None:
    """Every pair of lengths 1 to 6, with the worst residues for the bound: runs of the
    residue whose match scores least, against runs of the residue that mismatches worst
    (and a few of each mixed in), and the length filter exact on two runs of one residue."""
    letters = scoring.alphabet.letters
    standard = 4 if letters == "ACGTN" else min(len(letters), 20)   # no N, X, B, Z or *
    sub = scoring.matrix[:standard, :standard]
    worst_match = int(np.argmin(np.diagonal(sub)))
    off = np.where(np.eye(len(sub), dtype=bool), 99, sub)
    a, b = np.unravel_index(int(np.argmin(off)), off.shape)
    codes = np.arange(len(sub))
    for m in range(1, 7):
        for n in range(1, 7):
            same = np.full(m, worst_match), np.full(n, worst_match)
            counts = all_alignments(*same, scoring, mode)
            for definition in DEFINITIONS:
                values = identities(counts, m, n, definition)
                for threshold in THRESHOLDS:
                    can = bool(length_can_pass(m, n, threshold, definition, mode))
                    assert can == bool((values >= threshold).any()), (definition, threshold)
            mixed = (np.resize([worst_match, a], m), np.resize([worst_match, b], n))
            check_filters(mode, scoring, *same, codes, THRESHOLDS)
            check_filters(mode, scoring, *mixed, codes, THRESHOLDS)


# ---------------------------------------------------------------------------------------
# what the filters give


def test_length_filter_values() -> None:
    m = np.array([100, 100, 100, 100])
    n = np.array([100, 97, 96, 103])
    assert length_can_pass(m, n, 0.97).tolist() == [True, True, False, True]
    assert length_can_pass(m, n, 0.97, "pident", "semiglobal").tolist() == [
        True, True, False, True]                              # n >= m: the query fits whole
    assert length_can_pass(100, 1, 0.97, "pident", "local")
    assert length_can_pass(100, 1, 0.97, 0, "global")         # CD-HIT: over the shorter one
    assert length_can_pass(100, 1, 0.97, 2, "global")         # terminal gaps do not count
    assert length_can_pass(100, 101, 0.99, 3)              # one opening: 1 - 1/101
    assert not length_can_pass(100, 101, 0.995, 3)
    assert length_can_pass(100, 101, 0.995, 3, "semiglobal")  # the query fits in the target
    assert not length_can_pass(101, 100, 0.995, 3, "semiglobal")
    assert not length_can_pass(5, 5, 1.01).any()
    assert length_can_pass(5, 500, 0.0)
    assert length_can_pass(np.ones((3, 1), int), np.ones((1, 4), int), 0.9).shape == (3, 4)


def test_least_score_values() -> None:
    acgt = [0, 1, 2, 3]
    # global pident at 0.97, 380 against 380: 375 aligned pairs, 374 matches, 10 gap columns
    assert least_score(380, 380, 0.97, DNA, residues=acgt) == 374 * 2 - 3 - 10 * 7
    assert least_score(380, 400, 0.97, DNA, residues=acgt) == UNREACHABLE
    # N against N is a match (an '=' column) that scores -3: the default allows it
    assert least_score(380, 380, 0.97, DNA) < 0 < least_score(380, 380, 0.97, DNA,
                                                              residues=acgt)
    assert least_score(380, 380, 1.0, DNA, residues=acgt) == 760
    for definition in DEFINITIONS:
        assert least_score(50, 60, 0.9, DNA, "local", definition) == NO_BOUND
    assert least_score(50, 50, 0.9, DNA, "global", 2) == NO_BOUND
    for mode in ("global", "semiglobal", "local"):
        for definition in DEFINITIONS:                        # no identity exceeds 1
            assert least_score(50, 50, 1.01, DNA, mode, definition) == UNREACHABLE
            assert least_score(50, 50, -0.5, DNA, mode, definition) < 0
    # MBL at most one difference: one mismatch, or one gap of |m - n| columns
    assert least_score(50, 50, 0.979, DNA, "global", 3, residues=acgt) == 49 * 2 - 3
    assert least_score(50, 53, 0.979, DNA, "global", 3, residues=acgt) == 50 * 2 - 5 - 3 * 2
    shape = least_score(np.arange(1, 4)[:, None], np.arange(1, 6)[None, :], 0.5, BLOSUM62)
    assert shape.shape == (3, 5) and shape.dtype == np.int64
    assert least_score(np.zeros((0, 1), int), [3, 4], 0.5, DNA).shape == (0, 2)


def test_least_score_drops_unrelated_pairs() -> None:
    """The bound is a real filter: at 0.97, unrelated DNA of about 380 bp scores far below
    it, and pairs that do reach 0.97 score above it."""
    rng = np.random.default_rng(14)
    acgt = "ACGT"
    seqs = ["".join(rng.choice(list(acgt), int(length)))
            for length in rng.integers(375, 386, 24)]
    lengths = np.array([len(s) for s in seqs])
    scores = swath.scores(seqs[:12], seqs[12:], scoring=DNA, mode="global", device="cpu")
    bound = least_score(lengths[:12, None], lengths[None, 12:], 0.97, DNA, "global",
                        residues=[0, 1, 2, 3])
    finite = bound < UNREACHABLE
    assert finite.sum() >= 60                        # most pairs pass the length filter
    assert np.all(bound[finite] > 600)               # out of a best of about 760
    assert np.all(scores < bound)                    # every unrelated pair is dropped
    assert scores.max() < 100

    # pairs at 97 % or more: a few substitutions and one 3-base deletion
    related = []
    for s in seqs[:12]:
        chars = list(s)
        for k in rng.choice(len(chars), 6, replace=False):
            chars[k] = acgt[(acgt.index(chars[k]) + 1) % 4]
        cut = int(rng.integers(10, len(chars) - 10))
        related.append("".join(chars[:cut] + chars[cut + 3:]))
    for s, r in zip(seqs[:12], related, strict=True):
        aln = swath.align(s, r, scoring=DNA, mode="global", device="cpu")
        assert identity(aln, len(s), len(r)) >= 0.97
        assert aln.score >= least_score(len(s), len(r), 0.97, DNA, residues=[0, 1, 2, 3])


# ---------------------------------------------------------------------------------------
# the surplus filter against every alignment


def test_surplus_fraction_is_the_closest_below_the_threshold() -> None:
    from fractions import Fraction

    for threshold in (*THRESHOLDS, 0.29, 0.3, 0.333, 0.9, 0.95, 0.99, 0.999, 1.5, 1e-9):
        q, d = surplus_fraction(threshold)
        assert 1 <= d <= LARGEST_DENOMINATOR and Fraction(q, d) <= Fraction(threshold)
        best = max(Fraction(int(Fraction(threshold) * k), k)
                   for k in range(1, LARGEST_DENOMINATOR + 1))
        assert Fraction(q, d) == best, threshold
    assert surplus_fraction(0.97) == (32, 33) and surplus_fraction(0.75) == (3, 4)


def _global_scores(counts: dict[str, np.ndarray], scoring: Scoring) -> np.ndarray:
    """Every path's score with the scheme's end costs (``path_counts`` charges gaps alike)."""
    end_open, end_extend = scoring.end_gaps or (scoring.gap_open, scoring.gap_extend)
    inner_opens = counts["opens"] - counts["terminal_opens"]
    gap_columns = counts["columns"] - counts["matches"] - counts["mismatches"]
    substitutions = counts["score"] + counts["opens"] * scoring.gap_open \
        + gap_columns * scoring.gap_extend
    return (substitutions - inner_opens * scoring.gap_open
            - (gap_columns - counts["terminal"]) * scoring.gap_extend
            - counts["terminal_opens"] * end_open - counts["terminal"] * end_extend)


@settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_length=6), st.none() | gaps)
def test_surplus_scheme_scores_each_alignment_its_score_plus_its_surplus(problem: tuple,
                                                                        ends: tuple | None
                                                                        ) -> None:
    """The CPU kernel's optimal score under ``surplus_scheme`` is the best, over every
    global alignment, of its score plus ``D*M - q*den``; so a pair whose optimal
    alignment reaches the threshold is never ruled out (terminal gaps at end costs too)."""
    from swath.kernels.cpu.scores import score_many

    scoring, query, target, _, thresholds = problem
    if ends is not None:
        scoring = scoring.with_end_gaps(*ends)
    counts = all_alignments(query, target, scoring, "global")
    scores = _global_scores(counts, scoring)
    optimal = scores == scores.max()
    m, n = len(query), len(target)
    for definition in DEFINITIONS:
        values = identities(counts, m, n, definition)
        for threshold in thresholds:
            scheme = surplus_scheme(threshold, scoring, "global", definition)
            if scheme is None:
                assert definition in (0, 3) or threshold <= 0
                continue
            q, d = surplus_fraction(threshold)
            den = counts["columns"] - (counts["terminal"] if definition == 2 else 0)
            surplus = d * counts["matches"] - q * den
            assert np.all(surplus[values >= threshold] >= 0)
            got = score_many(query.astype(np.uint8), np.array([0, m]),
                             target.astype(np.uint8), np.array([0, n]), scheme, "global")
            assert int(got[0, 0]) == int((scores + surplus).max()), (definition, threshold)
            if (optimal & (values >= threshold)).any():
                assert got[0, 0] >= scores.max()


def test_surplus_scheme_outside_its_definitions() -> None:
    assert surplus_scheme(0.9, DNA, "local", 2) is None
    assert surplus_scheme(0.9, DNA, "semiglobal", "pident") is None
    assert surplus_scheme(0.9, DNA, "global", 0) is None
    assert surplus_scheme(0.9, DNA, "global", 3) is None
    assert surplus_scheme(0.0, DNA, "global", 2) is None
    scheme = surplus_scheme(0.75, DNA, "global", 1)
    # terminal gaps at 5 + k * (2 + 3): the interior costs, so none of their own
    assert scheme is not None and scheme.end_gaps is None
    assert (scheme.gap_open, scheme.gap_extend) == (5, 5)
    assert scheme.gap_cost(3, terminal=True) == 5 + 3 * (2 + 3)
    with pytest.raises(InvalidParameter):
        surplus_scheme(0.9, DNA, "global", 7)
