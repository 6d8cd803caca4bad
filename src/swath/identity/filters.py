"""Filters for ``swath allpairs``: which pairs can reach an identity threshold.

:func:`length_can_pass` (from the lengths, before any DP), :func:`least_score` (the least
score of any alignment that reaches the threshold, to compare with the optimal score after
the score phase) and :func:`band_limits` (the diagonals every global alignment that reaches
the threshold stays in, so that a banded score phase can stand in for the full one). None
ever removes a pair that has an alignment reaching the threshold. All depend on the
lengths only.

The counts (M, X, L, O, T) and the definitions are those of
:mod:`swath.identity.definitions`; a pair passes when ``identity >= threshold`` in float64,
and every filter solves that comparison exactly for the counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from swath.constants import MODES
from swath.errors import InvalidParameter
from swath.identity.definitions import check_definition, identity_from_counts
from swath.scoring import Scoring, widest_gaps

__all__ = ["NO_BOUND", "UNREACHABLE", "band_limits", "least_score", "length_can_pass"]

NO_BOUND = int(np.iinfo(np.int64).min)
""":func:`least_score` where it gives no bound: every score passes."""
UNREACHABLE = int(np.iinfo(np.int64).max)
""":func:`least_score` where no alignment of those lengths reaches the threshold."""

_BIG = 1 << 40          # "no limit" for counts (far above any length, far below overflow)
_IntArray: TypeAlias = npt.NDArray[np.int64]
_Values: TypeAlias = Callable[[_IntArray, _IntArray], _IntArray]


def _mode(mode: object) -> str:
    if mode not in MODES:
        raise InvalidParameter(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return str(mode)


def _threshold(threshold: object) -> float:
    try:
        value = float(threshold)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidParameter(f"threshold must be a number, got {threshold!r}") from None
    if np.isnan(value):
        raise InvalidParameter("threshold must be a number, got nan")
    return value


def _lengths(m: npt.ArrayLike, n: npt.ArrayLike) -> tuple[_IntArray, _IntArray]:
    mm, nn = np.broadcast_arrays(np.asarray(m), np.asarray(n))
    for name, values in (("m", mm), ("n", nn)):
        if values.size and not np.issubdtype(values.dtype, np.integer):
            raise InvalidParameter(f"{name} (sequence lengths) must be integers, "
                                   f"got dtype {values.dtype}")
        if values.size and values.min() < 1:
            raise InvalidParameter(f"{name} (sequence lengths) must be >= 1, got {values.min()}")
    return mm.astype(np.int64), nn.astype(np.int64)



def _least_matches(columns: _IntArray, threshold: float) -> _IntArray:
    """Least M >= 0 with ``M / columns >= threshold`` in float64 (columns >= 1, threshold <= 1)."""
    if threshold <= 0:
        return np.zeros_like(columns)
    guess = np.floor(threshold * columns.astype(np.float64)).astype(np.int64) - 1
    least = np.maximum(guess, 0)
    for _ in range(8):                      # the guess is at most 3 short
        short = least / columns < threshold
        if not short.any():
            return least
        least = least + short
    raise AssertionError("unreachable: float64 threshold search did not converge")


def _most_differences(longest: _IntArray, threshold: float) -> _IntArray:
    """Largest k >= 0 with ``max(0, 1 - k / longest) >= threshold`` in float64.

    For 0 < threshold <= 1 (k = 0 passes); at most 0, every k passes.
    """
    if threshold <= 0:
        return np.full_like(longest, _BIG)
    most = np.floor((1.0 - threshold) * longest.astype(np.float64)).astype(np.int64) + 2
    for _ in range(8):                      # the guess is at most 3 over; k = 0 always passes
        over = (most > 0) & (1.0 - most / longest < threshold)
        if not over.any():
            return most
        most = most - over
    raise AssertionError("unreachable: float64 threshold search did not converge")


def length_can_pass(m: npt.ArrayLike, n: npt.ArrayLike, threshold: float,
                    definition: str | int = "pident", mode: str = "global"
                    ) -> npt.NDArray[np.bool_]:
    """Whether the lengths alone allow an alignment with ``identity >= threshold``.

    False exactly where no alignment of a sequence of ``m`` residues against one of
    ``n`` residues, in ``mode``, reaches the threshold, whatever the residues; True
    where one does (two runs of one residue): the best identity the lengths allow is

    - pident, 1, 4: ``min(m, n) / max(m, n)`` (global: every column beyond the shorter
      sequence is a gap), ``min(m, n) / m`` (semiglobal: the whole query is in the
      alignment), 1 (local);
    - 0, 2: 1 (all of the shorter sequence matched; the rest terminal gaps);
    - 3: ``1 - 1 / max(m, n)`` for a global pair of unequal lengths (one gap opening)
      and a semiglobal query longer than its target, else 1.

    Parameters
    ----------
    m, n : array_like of int
        Query and target lengths (>= 1), broadcast against each other.
    threshold : float
        The identity to reach (0 to 1; above 1 nothing passes, at most 0 everything).
    definition : {"pident", 0, 1, 2, 3, 4}
        The identity definition (:mod:`swath.identity.definitions`).
    mode : {"global", "semiglobal", "local"}
        The alignment mode.

    Returns
    -------
    numpy.ndarray
        bool, of the broadcast shape of ``m`` and ``n``.

    Examples
    --------
    >>> length_can_pass([380, 380, 390], 400, 0.97)
    array([False, False,  True])
    >>> length_can_pass(380, 400, 0.97, definition=2)
    array(True)
    """
    kind, mode, threshold = check_definition(definition), _mode(mode), _threshold(threshold)
    mm, nn = _lengths(m, n)
    shortest, longest = np.minimum(mm, nn), np.maximum(mm, nn)
    zeros, ones = np.zeros_like(mm), np.ones_like(mm)
    # the counts (M, X, L, O, T) of the best alignment the lengths allow
    if kind == 3:
        if mode == "global":
            opens = (mm != nn).astype(np.int64)
        elif mode == "semiglobal":
            opens = (nn < mm).astype(np.int64)
        else:
            opens = zeros
        best = identity_from_counts(zeros, zeros, longest, opens, zeros, mm, nn, kind)
    elif kind in ("pident", 1, 4):
        if mode == "local":                 # one matching column
            matches, columns = ones, ones
        else:                               # the shorter one matched, the rest gaps
            matches, columns = shortest, (longest if mode == "global" else mm)
        best = identity_from_counts(matches, zeros, columns, zeros, zeros, mm, nn, kind)
    else:                                   # 0 and 2: all of the shorter one matched
        best = identity_from_counts(shortest, zeros, shortest, zeros, zeros, mm, nn, kind)
    return np.asarray(best >= threshold)


def _substitution_extremes(scoring: Scoring, residues: npt.ArrayLike | None) -> tuple[int, int]:
    """(worst match score, worst mismatch score) over the codes that may occur."""
    size = len(scoring.alphabet.letters)
    if residues is None:
        codes = np.arange(size)
    else:
        codes = np.unique(np.asarray(residues).ravel())
        if codes.size == 0:
            raise InvalidParameter("residues (the codes the sequences may hold) is empty")
        if not np.issubdtype(codes.dtype, np.integer) or codes[0] < 0 or codes[-1] >= size:
            raise InvalidParameter(f"residues must be codes 0 to {size - 1} of the scoring's "
                                   f"alphabet, got {codes.tolist()[:8]}")
    sub = scoring.matrix[np.ix_(codes, codes)].astype(np.int64)
    worst_match = int(np.diagonal(sub).min())
    off = sub[~np.eye(len(codes), dtype=bool)]
    # one code only: no mismatch can occur; scoring one as a match changes nothing
    worst_mismatch = int(off.min()) if off.size else worst_match
    return worst_match, worst_mismatch


def _scan_min(lo: _IntArray, hi: _IntArray, values: _Values) -> _IntArray:
    """Elementwise min of ``values(x, idx)`` over integers x in [lo, hi] (UNREACHABLE if empty)."""
    best = np.full(lo.shape, UNREACHABLE, dtype=np.int64)
    span = hi - lo
    if span.size == 0 or span.max() < 0:
        return best
    for k in range(int(span.max()) + 1):
        idx = np.flatnonzero(span >= k)
        best[idx] = np.minimum(best[idx], values(lo[idx] + k, idx))
    return best


def _first_true(lo: _IntArray, hi: _IntArray, test: Callable[[_IntArray, _IntArray], np.ndarray]
                ) -> _IntArray:
    """Least x in [lo, hi] with ``test(x, idx)`` (False then True along x); hi + 1 if none."""
    lo, end = lo.copy(), hi + 1
    while True:
        idx = np.flatnonzero(lo < end)
        if idx.size == 0:
            return lo
        mid = (lo[idx] + end[idx]) // 2
        ok = np.asarray(test(mid, idx), dtype=bool)
        end[idx[ok]] = mid[ok]
        lo[idx[~ok]] = mid[~ok] + 1


def _convex_min(lo: _IntArray, hi: _IntArray, values: _Values) -> _IntArray:
    """Elementwise min over integers x in [lo, hi] of a convex ``values(x, idx)``."""
    lo, hi = lo.copy(), hi.copy()
    empty = lo > hi
    while True:
        idx = np.flatnonzero(~empty & (lo < hi))
        if idx.size == 0:
            break
        mid = (lo[idx] + hi[idx]) // 2
        rising = values(mid + 1, idx) >= values(mid, idx)
        hi[idx[rising]] = mid[rising]
        lo[idx[~rising]] = mid[~rising] + 1
    best = np.full(lo.shape, UNREACHABLE, dtype=np.int64)
    idx = np.flatnonzero(~empty)
    if idx.size:
        best[idx] = values(lo[idx], idx)
    return best


def _pident_global(m: _IntArray, n: _IntArray, threshold: float, match: int, mismatch: int,
                   column: int) -> _IntArray:
    """Least score of a global alignment with M / L >= threshold (see :func:`least_score`)."""
    total, shortest = m + n, np.minimum(m, n)

    def feasible(a: _IntArray, idx: _IntArray) -> np.ndarray:
        return np.asarray(_least_matches(total[idx] - a, threshold) <= a)

    def values(a: _IntArray, idx: _IntArray) -> _IntArray:
        gaps, least = total[idx] - 2 * a, _least_matches(total[idx] - a, threshold)
        fewest = least * match + (a - least) * mismatch - gaps * column     # M = mu(L)
        most = a * match - gaps * column                                    # M = a
        return np.where(least <= a, np.minimum(fewest, most), UNREACHABLE)

    first = _first_true(np.zeros_like(m), shortest, feasible)
    # S(a) with M = mu(L) steps by (Y + 2c) - (D - Y) * {0 or 1} as a grows; with M = a by D + 2c
    step = mismatch + 2 * column
    if (match >= mismatch and step >= match - mismatch) or (match < mismatch
                                                            and match + 2 * column >= 0):
        return _scan_min(first, np.minimum(first, shortest), values)     # least at first
    if (match >= mismatch and step <= 0) or match < mismatch:
        return _scan_min(np.maximum(shortest, first), shortest, values)  # least at a = min
    return _scan_min(first, shortest, values)


def _pident_semiglobal(m: _IntArray, n: _IntArray, threshold: float, match: int, mismatch: int,
                       column: int) -> _IntArray:
    """Least score of a semiglobal alignment with M / L >= threshold (see :func:`least_score`)."""

    def infeasible(d: _IntArray, idx: _IntArray) -> np.ndarray:    # False, then True
        most = np.minimum(m[idx], n[idx] - d)
        return np.asarray(_least_matches(m[idx] + d, threshold) > most)

    def values(d: _IntArray, idx: _IntArray) -> _IntArray:
        columns, most = m[idx] + d, np.minimum(m[idx], n[idx] - d)
        least = _least_matches(columns, threshold)
        best = np.full(d.shape, UNREACHABLE, dtype=np.int64)
        for M, a in ((least, least), (least, most), (most, most)):
            score = M * match + (a - M) * mismatch - (columns - a) * column
            best = np.minimum(best, score)
        return np.where(least <= most, best, UNREACHABLE)

    last = _first_true(np.zeros_like(m), n, infeasible) - 1
    return _scan_min(np.zeros_like(m), last, values)


def _cdhit(m: _IntArray, n: _IntArray, threshold: float, match: int, mismatch: int,
           column: int) -> _IntArray:
    """Least score with M / min(m, n) >= threshold, global or semiglobal."""
    shortest, total = np.minimum(m, n), m + n
    least = _least_matches(shortest, threshold)
    best = np.full(m.shape, UNREACHABLE, dtype=np.int64)
    for M, a in ((least, least), (least, shortest), (shortest, shortest)):
        best = np.minimum(best, M * match + (a - M) * mismatch - (total - 2 * a) * column)
    return np.where(least <= shortest, best, UNREACHABLE)


def _mbl(m: _IntArray, n: _IntArray, threshold: float, match: int, mismatch: int,
         gap_open: int, gap_extend: int, semiglobal: bool) -> _IntArray:
    """Least score with X + O <= K (definition 3), global or semiglobal."""
    most = _most_differences(np.maximum(m, n), threshold)
    shortest = np.minimum(m, n)
    gain = match - mismatch                 # what a mismatch instead of a match can cost

    def piece(query_gaps: Callable[[_IntArray, _IntArray], _IntArray],
              target_gaps: Callable[[_IntArray, _IntArray], _IntArray]) -> _Values:
        def values(a: _IntArray, idx: _IntArray) -> _IntArray:
            i, d, K = query_gaps(a, idx), target_gaps(a, idx), most[idx]
            gaps = i + d
            fewest = (i > 0).astype(np.int64) + (d > 0)
            # the largest X * (D - Y) + O * open over 0 <= X <= a, fewest <= O <= gaps,
            # X + O <= K: a linear programme whose vertices are among these points
            zero = np.zeros_like(a)
            top = np.full(a.shape, -_BIG, dtype=np.int64)
            for subs, opens in ((zero, fewest), (zero, gaps), (zero, K), (a, fewest), (a, gaps),
                                (a, K - a), (K - fewest, fewest), (K - gaps, gaps)):
                ok = ((subs >= 0) & (subs <= a) & (opens >= fewest) & (opens <= gaps)
                      & (subs + opens <= K))
                top = np.where(ok, np.maximum(top, subs * gain + opens * gap_open), top)
            score = a * match - gaps * gap_extend - top
            return np.where(fewest <= K, score, UNREACHABLE)
        return values

    def query_rest(a: _IntArray, idx: _IntArray) -> _IntArray:
        return m[idx] - a

    def target_rest(a: _IntArray, idx: _IntArray) -> _IntArray:
        return n[idx] - a

    def nothing(a: _IntArray, idx: _IntArray) -> _IntArray:
        return np.zeros_like(a)

    # the whole target aligned (global; semiglobal's widest window): convex on a < min(m, n)
    whole = piece(query_rest, target_rest)
    zero = np.zeros_like(m)
    best = np.minimum(_convex_min(zero, shortest - 1, whole),
                      _convex_min(shortest, shortest, whole))
    if semiglobal:
        # the window ends with the last aligned pair: no target residue against a gap
        narrow = piece(query_rest, nothing)
        best = np.minimum(best, _convex_min(zero, np.minimum(shortest, m - 1), narrow))
        best = np.minimum(best, np.where(n >= m, _convex_min(m, m, narrow), UNREACHABLE))
    return best


def least_score(m: npt.ArrayLike, n: npt.ArrayLike, threshold: float, scoring: Scoring,
                mode: str = "global", definition: str | int = "pident", *,
                residues: npt.ArrayLike | None = None) -> _IntArray:
    """The least score an alignment of these lengths can have if its identity reaches ``threshold``.

    Every alignment, in ``mode``, of a sequence of ``m`` residues against one of ``n``
    with ``identity >= threshold`` scores at least this; a pair whose *optimal* score is
    below it has no such alignment (the optimal one included) and needs no traceback.

    Proof. Take an alignment with ``a`` aligned pairs, of which M are matches (equal
    codes) and ``X = a - M`` mismatches, ``g`` gap columns in ``O <= g`` gaps, and
    ``L = a + g`` columns. A match scores at least D, the smallest diagonal entry of the
    matrix over ``residues``; a mismatch at least Y, the smallest off-diagonal one; the
    gaps cost ``O * open + g * extend <= g * c`` with ``c = open + extend``. So its score
    ``S >= M*D + X*Y - O*open - g*extend`` (open and extend the larger of the interior and
    the terminal costs, ``Scoring.end_gaps``). In global mode ``a <= min(m, n)``,
    ``g = m + n - 2a``; in semiglobal mode the query is whole and ``d`` of the ``w <= n``
    residues of the target window face gaps: ``g = m - a + d``, ``0 <= d <= n - a``.
    The threshold gives the worst case of the counts:

    - pident, 1, 4: ``M >= mu(L)``, the least M with ``M / L >= threshold`` (float64), and
      ``M <= a``. The bound is the least of ``M*D + (a-M)*Y - (L-a)*c`` over every
      integer ``a`` (global, ``L = m + n - a``) or every ``d`` with ``L = m + d`` and
      ``a`` up to ``a_max = min(m, n - d)`` (semiglobal); the expression is linear in M
      and ``a``, so only the corners count: M = mu or a (global), (M, a) = (mu, mu),
      (mu, a_max) or (a_max, a_max) (semiglobal). In global mode it is monotone in
      ``a`` unless ``0 < Y + 2c < D - Y``, and only the first feasible ``a`` or
      ``a = min(m, n)`` is evaluated; otherwise, and in semiglobal mode, every feasible
      ``a`` (or ``d``) is.
    - 0 (CD-HIT): ``M >= mu0``, the least M with ``M / min(m, n) >= threshold``; the
      worst case has the most gap columns, ``g = m + n - 2a`` in both modes, and the
      least of ``M*D + (a-M)*Y - g*c`` lies at a corner of ``mu0 <= M <= a <= min(m, n)``.
    - 3 (Marine Biological Lab): ``X + O <= K``, the most differences the threshold
      allows over ``max(m, n)``; ``O`` is at least the number of gap kinds present (an
      I run and a D run are two gaps) and at most ``g``; ``S >= a*D - X*(D-Y) - O*open -
      g*extend``. For each ``a`` the worst (X, O) is a vertex of that polygon; the
      result, linear minus concave in ``a``, is convex between the points where a kind
      of gap disappears, and is minimised there by bisection. Where ``K >= 2`` an
      alignment of gaps only (``mI nD``) passes, so the bound is that low; it filters
      where the threshold allows at most one difference.

    Every inequality above holds for every alignment that reaches the threshold, so the
    result never exceeds the true least score; it can be below it (each gap column
    taken as its own opening, each match at D and mismatch at Y at once). All arithmetic
    is on integers (int64), and the float64 comparison ``identity >= threshold`` is
    solved exactly for the counts.

    No bound (``NO_BOUND``, the least int64, so that nothing is dropped) in local mode
    and for definition 2: there one matching column is an alignment of identity 1
    (flanked by terminal gaps, for definition 2), so the least score is no higher than
    what any pair with one matching residue reaches anyway. ``UNREACHABLE`` (the largest
    int64) where :func:`length_can_pass` is False: every score is below it.

    Parameters
    ----------
    m, n : array_like of int
        Query and target lengths (>= 1), broadcast against each other. The bound depends
        on the lengths only; each distinct pair is computed once.
    threshold : float
        The identity to reach.
    scoring : Scoring
        Matrix and gap costs (a gap of length k costs ``gap_open + k * gap_extend``).
    mode : {"global", "semiglobal", "local"}
        The alignment mode.
    definition : {"pident", 0, 1, 2, 3, 4}
        The identity definition (:mod:`swath.identity.definitions`).
    residues : array_like of int, optional
        The codes the sequences may hold (``numpy.unique`` of their residues). Default:
        the whole alphabet. A wildcard against itself is a match (an ``=`` column) that
        the matrix may score low (``N``/``N`` scores ``mismatch`` in
        :meth:`Scoring.dna`), so leaving codes that do not occur here lowers the bound:
        for DNA without N, pass ``residues=[0, 1, 2, 3]``.

    Returns
    -------
    numpy.ndarray
        int64, of the broadcast shape of ``m`` and ``n``.

    Examples
    --------
    >>> from swath.scoring import Scoring
    >>> dna = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> least_score(380, [380, 385], 0.97, dna, residues=[0, 1, 2, 3])
    array([675, 677])
    >>> int(least_score(380, 380, 0.97, dna, mode="local")) == NO_BOUND
    True
    """
    kind, mode, threshold = check_definition(definition), _mode(mode), _threshold(threshold)
    mm, nn = _lengths(m, n)
    if mm.size == 0:
        return np.zeros(mm.shape, dtype=np.int64)
    # each distinct pair of lengths once
    key, inverse = np.unique(mm.ravel() * (int(nn.max()) + 1) + nn.ravel(), return_inverse=True)
    qm, tn = key // (int(nn.max()) + 1), key % (int(nn.max()) + 1)
    possible = length_can_pass(qm, tn, threshold, kind, mode)
    if mode == "local" or kind == 2 or threshold > 1:
        bound = np.full(key.shape, NO_BOUND, dtype=np.int64)
    else:
        match, mismatch = _substitution_extremes(scoring, residues)
        # terminal gaps may cost otherwise: the larger costs bound every gap's
        gap_open, gap_extend = widest_gaps(scoring.gap_open, scoring.gap_extend,
                                           scoring.end_gaps)
        column = gap_open + gap_extend
        if kind == 0:
            bound = _cdhit(qm, tn, threshold, match, mismatch, column)
        elif kind == 3:
            bound = _mbl(qm, tn, threshold, match, mismatch, gap_open, gap_extend,
                         mode == "semiglobal")
        elif mode == "global":
            bound = _pident_global(qm, tn, threshold, match, mismatch, column)
        else:
            bound = _pident_semiglobal(qm, tn, threshold, match, mismatch, column)
    bound = np.where(possible, bound, UNREACHABLE).astype(np.int64)
    return bound[np.asarray(inverse).ravel()].reshape(mm.shape)


def band_limits(m: npt.ArrayLike, n: npt.ArrayLike, threshold: float,
                definition: str | int = "pident", mode: str = "global"
                ) -> tuple[_IntArray, _IntArray] | None:
    """The diagonals that every alignment reaching ``threshold`` stays within.

    A global alignment of ``m`` query residues against ``n`` target residues is a path
    from cell (0, 0) to cell (m, n); cell (i, j) lies on diagonal ``i - j``. A path with
    ``g`` gap columns, ``u`` of them query residues against gaps and ``g - u`` target
    residues against gaps, has ``u - (g - u) = m - n`` and visits only diagonals from
    ``-(g - u)`` to ``u``, that is from ``-(g - m + n) / 2`` to ``(g + m - n) / 2``. So a
    bound ``G`` on the gap columns of the alignments that reach the threshold gives the
    band ``lo = -floor((G - m + n) / 2)``, ``hi = floor((G + m - n) / 2)``:

    - pident, 1, 4: ``a = (m + n - g) / 2`` aligned pairs and ``L = m + n - a`` columns
      need ``mu(L) <= a`` matches (``mu`` as in :func:`least_score`), which holds from
      some least ``a*`` upwards (``mu(m + n - a)`` falls as ``a`` grows): ``G = m + n -
      2 a*``;
    - 0: at least ``mu0`` matches (``M / min(m, n) >= threshold``), so ``a >= mu0`` and
      ``G = m + n - 2 mu0``.

    The best score over the paths inside the band is a lower bound of the optimal
    score, and equals it whenever an optimal alignment reaches the threshold: a pair
    whose banded score is below :func:`least_score` has no optimal alignment that
    passes. No band (None) for definitions 2 and 3 (terminal gaps, or each gap's
    opening only, are counted: any number of gap columns can pass) and outside global
    mode (a local or semiglobal alignment may start on any diagonal).

    Parameters
    ----------
    m, n : array_like of int
        Query and target lengths (>= 1), broadcast against each other.
    threshold : float
        The identity to reach.
    definition : {"pident", 0, 1, 2, 3, 4}
        The identity definition (:mod:`swath.identity.definitions`).
    mode : {"global", "semiglobal", "local"}
        The alignment mode.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(lo, hi)``, int64 of the broadcast shape of ``m`` and ``n``: the band is
        diagonals ``lo`` to ``hi`` (``lo <= min(0, m - n)`` and ``hi >= max(0, m - n)``
        where :func:`length_can_pass` is True; ``lo > hi`` where it is False).

    Examples
    --------
    >>> lo, hi = band_limits([380, 390], 385, 0.97)
    >>> lo.tolist(), hi.tolist()
    ([-8, -3], [3, 8])
    >>> band_limits(380, 385, 0.97, definition=2) is None
    True
    """
    kind, mode, threshold = check_definition(definition), _mode(mode), _threshold(threshold)
    if mode != "global" or kind in (2, 3):
        return None
    mm, nn = _lengths(m, n)
    total, shortest = mm + nn, np.minimum(mm, nn)
    if kind == 0:
        fewest = _least_matches(np.maximum(shortest, 1), threshold) if threshold <= 1 else \
            shortest + 1
    else:
        # the least feasible number of pairs depends on m + n only: each total once
        totals, inverse = np.unique(total.ravel(), return_inverse=True)
        most = totals // 2

        def feasible(a: _IntArray, idx: _IntArray) -> np.ndarray:
            return np.asarray(_least_matches(totals[idx] - a, threshold) <= a)

        fewest = _first_true(np.zeros_like(totals), most, feasible)[
            np.asarray(inverse).ravel()].reshape(total.shape)
    gaps = total - 2 * fewest
    can = (fewest <= shortest) & length_can_pass(mm, nn, threshold, kind, mode)
    lo = np.where(can, -((gaps - mm + nn) // 2), 1)
    hi = np.where(can, (gaps + mm - nn) // 2, 0)
    return lo.astype(np.int64), hi.astype(np.int64)
