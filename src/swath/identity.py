"""Identity of an alignment, and two filters that tell which pairs can reach one.

Counts of one alignment of a query ``q`` (``m`` residues) against a target ``t`` (``n``
residues), read from its extended CIGAR:

- ``matches`` M: ``=`` columns, pairs of *equal codes* (as :func:`swath.alignment.cigar_from_path`
  writes them: a wildcard against itself, ``N``/``N`` or ``X``/``X``, is a match, whatever
  the matrix scores it);
- ``mismatches`` X: ``X`` columns;
- ``columns`` L: all columns (``=``, ``X``, ``I``, ``D``), :attr:`Alignment.length`;
- ``gap_opens`` O: runs of ``I`` or ``D`` (an ``I`` run beside a ``D`` run is two gaps);
- ``terminal_gap_columns`` T: vsearch's terminal gaps, the columns of the *first* CIGAR
  run if it is a gap plus those of the *last* run if it is a gap (once if the whole
  alignment is one run). A second gap run at an end (``2D3I...``) is internal, as in
  vsearch's ``align_trim``.

Definitions (``definition=``), each a fraction from 0 to 1:

==========  ================================================  ==========================
definition  identity                                          source
==========  ================================================  ==========================
"pident"    M / L (the default; :attr:`Alignment.identity`)   BLAST's pident / 100
0           M / min(m, n)                                     vsearch ``--iddef 0``, CD-HIT
1           M / L                                             vsearch ``--iddef 1``, edit distance
2           M / (L - T)                                       vsearch ``--iddef 2`` (its
                                                              default): edit distance
                                                              excluding terminal gaps
3           max(0, 1 - (X + O) / max(m, n))                   vsearch ``--iddef 3``, Marine
                                                              Biological Lab: each gap
                                                              opening, internal or terminal,
                                                              counts once
4           M / L                                             vsearch ``--iddef 4``, BLAST
==========  ================================================  ==========================

A zero denominator, and an alignment without columns, give 0.0 (vsearch does the same
for its zero denominators). Identities are float64 values computed by exactly these
expressions; a pair passes a threshold when ``identity >= threshold`` in floating point,
and both filters below respect that comparison exactly.

Alignments in local and semiglobal mode: L, T and O count the columns of the reported
alignment only (its CIGAR). The sequence ends outside it (both sequences' ends in local
mode, the target's ends in semiglobal mode, where they are free) are not columns: they
are neither in L, nor terminal gaps, nor gap openings. Definitions 0 and 3 still divide by
the whole lengths ``m`` and ``n``. (vsearch aligns globally only: there the two agree.)

Filters, for ``swath allpairs``: :func:`length_can_pass` (from the lengths, before any
DP), :func:`least_score` (the least score of any alignment that reaches the threshold,
to compare with the optimal score after the score pass) and :func:`band_limits` (the
diagonals every global alignment that reaches the threshold stays in, so that a banded
score pass can stand in for the full one). None ever removes a pair that has an
alignment reaching the threshold. All depend on the lengths only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from swath.alignment import Alignment
from swath.constants import MODES
from swath.errors import InvalidParameter
from swath.scoring import Scoring

DEFINITIONS: tuple[str | int, ...] = ("pident", 0, 1, 2, 3, 4)

NO_BOUND = int(np.iinfo(np.int64).min)
""":func:`least_score` where it gives no bound: every score passes."""
UNREACHABLE = int(np.iinfo(np.int64).max)
""":func:`least_score` where no alignment of those lengths reaches the threshold."""

COUNT_NAMES = ("matches", "mismatches", "columns", "gap_opens", "terminal")
_BIG = 1 << 40          # "no limit" for counts (far above any length, far below overflow)
_IntArray: TypeAlias = npt.NDArray[np.int64]
_Values: TypeAlias = Callable[[_IntArray, _IntArray], _IntArray]


def _definition(definition: object) -> str | int:
    if isinstance(definition, str):
        if definition == "pident":
            return definition
        if definition in {"0", "1", "2", "3", "4"}:
            return int(definition)
    elif isinstance(definition, (int, np.integer)) and not isinstance(definition, bool) \
            and 0 <= int(definition) <= 4:
        return int(definition)
    raise InvalidParameter(f"identity definition must be 'pident' or vsearch's --iddef 0 to 4, "
                           f"got {definition!r}")


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


def terminal_gap_columns(cigar: str) -> int:
    """Columns of vsearch's terminal gaps: the first run if a gap, the last run if a gap.

    Examples
    --------
    >>> terminal_gap_columns("2D3I5=1X4I"), terminal_gap_columns("6D")
    (6, 6)
    """
    return int(cigar_counts([cigar])["terminal"][0])


def cigar_counts(cigars: Sequence[str] | tuple[np.ndarray, np.ndarray]
                 ) -> dict[str, npt.NDArray[np.int64]]:
    """M, X, L, O and T of each CIGAR (``matches``, ``mismatches``, ``columns``,
    ``gap_opens``, ``terminal``): what :func:`identity_from_counts` takes for a batch of
    alignments. The CIGARs are strings, or one ASCII buffer (uint8) and its ``N + 1``
    offsets, as the kernels' ``align_batch`` returns them; counted in numpy, without a
    loop over CIGARs.

    Examples
    --------
    >>> {k: v.tolist() for k, v in cigar_counts(["2I3=1X1D2=3D", "4="]).items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'matches': [5, 4], 'mismatches': [1, 0], 'columns': [12, 4], 'gap_opens': [3, 0],
     'terminal': [5, 0]}
    """
    if isinstance(cigars, tuple):
        text, offsets = np.asarray(cigars[0], dtype=np.uint8), np.asarray(cigars[1], np.int64)
    else:
        text = np.frombuffer("".join(cigars).encode("ascii"), dtype=np.uint8)
        offsets = np.concatenate([[0], np.cumsum([len(c) for c in cigars])]).astype(np.int64)
    count = len(offsets) - 1
    counts = np.zeros((5, count), dtype=np.int64)
    letter = text > ord("9")
    at = np.flatnonzero(letter)                          # each run's operation
    if count == 0 or not len(at):
        return dict(zip(COUNT_NAMES, counts, strict=True))
    # a run's length: its digits, from the end of the run before it
    digit = np.where(letter, 0, text.astype(np.int64) - ord("0"))
    runs_to = np.cumsum(letter)
    run_of: npt.NDArray[np.int64] = runs_to - letter     # the run of each character
    place = np.zeros(len(text), dtype=np.int64)
    place[::-1] = np.arange(len(text))
    place = place - place[at][run_of] - 1                # digits before the run's letter
    power = 10 ** np.arange(19, dtype=np.int64)
    lengths = np.bincount(run_of, weights=digit * power[np.clip(place, 0, 18)],
                          minlength=len(at)).round().astype(np.int64)
    ops = text[at]
    first = np.concatenate([[0], runs_to])[offsets]       # each CIGAR's first run, and the end
    runs = np.diff(first)
    owner = np.repeat(np.arange(count), runs)            # the CIGAR of each run
    gap = (ops == ord("I")) | (ops == ord("D"))
    for row, values in ((0, np.where(ops == ord("="), lengths, 0)),
                        (1, np.where(ops == ord("X"), lengths, 0)), (2, lengths),
                        (3, gap.astype(np.int64))):
        counts[row] = np.bincount(owner, weights=values, minlength=count).round()
    has = runs > 0
    head = np.where(has, first[:-1], 0)
    tail = np.where(has, first[1:] - 1, 0)
    terminal = np.where(has & gap[head], lengths[head], 0)
    counts[4] = terminal + np.where((runs > 1) & gap[tail], lengths[tail], 0)
    return dict(zip(COUNT_NAMES, counts, strict=True))


def identity_from_counts(matches: npt.ArrayLike, mismatches: npt.ArrayLike,
                         columns: npt.ArrayLike, gap_opens: npt.ArrayLike,
                         terminal_gap_columns: npt.ArrayLike, query_length: npt.ArrayLike,
                         target_length: npt.ArrayLike, definition: str | int = "pident"
                         ) -> npt.NDArray[np.float64]:
    """Identities from alignment counts, elementwise (the vectorized :func:`identity`).

    Parameters
    ----------
    matches, mismatches, columns, gap_opens, terminal_gap_columns : array_like of int
        M, X, L, O and T of each alignment, as the module docstring defines them.
    query_length, target_length : array_like of int
        ``m`` and ``n``, the whole lengths of the two sequences.
    definition : {"pident", 0, 1, 2, 3, 4}
        BLAST's pident, or vsearch's ``--iddef`` (module docstring).

    Returns
    -------
    numpy.ndarray
        float64 identities from 0 to 1, broadcast over the arguments.

    Examples
    --------
    >>> identity_from_counts([5, 9], [1, 0], [12, 10], [3, 1], [5, 1], 8, 10, 2)
    array([0.71428571, 1.        ])
    """
    kind = _definition(definition)
    M, X, L, opens, T, m, n = np.broadcast_arrays(*(np.asarray(v, dtype=np.int64) for v in (
        matches, mismatches, columns, gap_opens, terminal_gap_columns, query_length,
        target_length)))
    if kind == 0:
        denominator = np.minimum(m, n)
    elif kind == 2:
        denominator = L - T
    elif kind == 3:
        longest = np.maximum(m, n)
        ok = (L > 0) & (longest > 0)
        fraction = (X + opens) / np.where(ok, longest, 1)
        return np.where(ok, np.maximum(0.0, 1.0 - fraction), 0.0)
    else:                                   # "pident", 1 and 4: M / L
        denominator = L
    ok = (denominator > 0) & (L > 0)
    return np.where(ok, M / np.where(ok, denominator, 1), 0.0)


def identity(alignment: Alignment, query_length: int, target_length: int,
             definition: str | int = "pident") -> float:
    """The identity of one alignment under one definition (module docstring).

    Parameters
    ----------
    alignment : Alignment
        The alignment; only its CIGAR is read.
    query_length, target_length : int
        The whole lengths ``m`` and ``n`` of the query and the target (definitions 0
        and 3 divide by them).
    definition : {"pident", 0, 1, 2, 3, 4}
        ``"pident"`` (BLAST: matches over columns, the default) or vsearch's
        ``--iddef`` 0 to 4.

    Returns
    -------
    float
        From 0 to 1.

    Examples
    --------
    >>> from swath.alignment import Alignment
    >>> aln = Alignment(0, 0, 8, 0, 10, "2I3=1X1D2=3D", "global")
    >>> [round(identity(aln, 8, 10, d), 4) for d in ("pident", 0, 1, 2, 3, 4)]
    [0.4167, 0.625, 0.4167, 0.7143, 0.6, 0.4167]
    """
    counts = cigar_counts([alignment.cigar])
    value = identity_from_counts(counts["matches"], counts["mismatches"], counts["columns"],
                                 counts["gap_opens"], counts["terminal"], query_length,
                                 target_length, definition)
    return float(value[0])


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
        The identity definition (module docstring).
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
    kind, mode, threshold = _definition(definition), _mode(mode), _threshold(threshold)
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
    ``S >= M*D + X*Y - O*open - g*extend``. In global mode ``a <= min(m, n)``,
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
        The identity definition (module docstring).
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
    kind, mode, threshold = _definition(definition), _mode(mode), _threshold(threshold)
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
        column = scoring.gap_open + scoring.gap_extend
        if kind == 0:
            bound = _cdhit(qm, tn, threshold, match, mismatch, column)
        elif kind == 3:
            bound = _mbl(qm, tn, threshold, match, mismatch, scoring.gap_open,
                         scoring.gap_extend, mode == "semiglobal")
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
        The identity definition (module docstring).
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
    kind, mode, threshold = _definition(definition), _mode(mode), _threshold(threshold)
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
