"""The identity of an alignment: its counts (read from its CIGAR) and six definitions.

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
and the all-pairs filters (:mod:`swath.identity.filters`) respect that comparison exactly.

Alignments in local and semiglobal mode: L, T and O count the columns of the reported
alignment only (its CIGAR). The sequence ends outside it (both sequences' ends in local
mode, the target's ends in semiglobal mode, where they are free) are not columns: they
are neither in L, nor terminal gaps, nor gap openings. Definitions 0 and 3 still divide by
the whole lengths ``m`` and ``n``. (vsearch aligns globally only: there the two agree.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from swath.alignment import Alignment, CigarRunArrays, cigar_run_arrays
from swath.errors import InvalidParameter

__all__ = [
    "COUNT_NAMES",
    "DEFINITIONS",
    "check_definition",
    "cigar_counts",
    "identity",
    "identity_from_counts",
    "identity_percent",
    "terminal_gap_columns",
]

DEFINITIONS: tuple[str | int, ...] = ("pident", 0, 1, 2, 3, 4)
COUNT_NAMES = ("matches", "mismatches", "columns", "gap_opens", "terminal")


def check_definition(definition: object) -> str | int:
    """``definition`` as :data:`DEFINITIONS` holds it (``"2"`` is 2), or ``InvalidParameter``."""
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


def terminal_gap_columns(cigar: str) -> int:
    """Columns of vsearch's terminal gaps: the first run if a gap, the last run if a gap.

    Examples
    --------
    >>> terminal_gap_columns("2D3I5=1X4I"), terminal_gap_columns("6D")
    (6, 6)
    """
    return int(cigar_counts([cigar])["terminal"][0])


def cigar_counts(cigars: Sequence[str] | npt.NDArray[Any] | tuple[np.ndarray, np.ndarray]
                 | CigarRunArrays) -> dict[str, npt.NDArray[np.int64]]:
    """M, X, L, O and T of each CIGAR (``matches``, ``mismatches``, ``columns``,
    ``gap_opens``, ``terminal``): what :func:`identity_from_counts` takes for a batch of
    alignments. The CIGARs are strings, one ASCII buffer (uint8) and its ``N + 1``
    offsets, as the kernels' ``align_batch`` returns them, or their runs already read
    (:func:`~swath.alignment.cigar_run_arrays`); counted in numpy, without a loop over
    CIGARs.

    Examples
    --------
    >>> {k: v.tolist() for k, v in cigar_counts(["2I3=1X1D2=3D", "4="]).items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'matches': [5, 4], 'mismatches': [1, 0], 'columns': [12, 4], 'gap_opens': [3, 0],
     'terminal': [5, 0]}
    """
    runs = cigars if isinstance(cigars, CigarRunArrays) else cigar_run_arrays(cigars)
    lengths, ops, first = runs.lengths, runs.ops, runs.first
    counts = np.zeros((5, len(first) - 1), dtype=np.int64)
    if not len(ops):
        return dict(zip(COUNT_NAMES, counts, strict=True))
    gap = (ops == ord("I")) | (ops == ord("D"))
    total = np.zeros(len(ops) + 1, dtype=np.int64)
    for row, values in ((0, np.where(ops == ord("="), lengths, 0)),
                        (1, np.where(ops == ord("X"), lengths, 0)), (2, lengths), (3, gap)):
        np.cumsum(values, out=total[1:])               # a CIGAR's sum: its runs', exactly
        counts[row] = total[first[1:]] - total[first[:-1]]
    per_cigar = np.diff(first)
    has = per_cigar > 0
    head = np.where(has, first[:-1], 0)
    tail = np.where(has, first[1:] - 1, 0)
    terminal = np.where(has & gap[head], lengths[head], 0)
    counts[4] = terminal + np.where((per_cigar > 1) & gap[tail], lengths[tail], 0)
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
    kind = check_definition(definition)
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


def identity_percent(counts: dict[str, npt.NDArray[np.int64]], query_length: npt.ArrayLike,
                     target_length: npt.ArrayLike, definition: str | int = "pident"
                     ) -> npt.NDArray[np.float64]:
    """Identities in percent computed as vsearch computes them, so that they print with
    one decimal (``%.1f``) as vsearch prints them and sort as vsearch sorts them:
    ``100.0 * matches / denominator`` as a C double (definition 3: ``100.0 * (1 - (X +
    O) / max(m, n))``), not 100 times the fraction, which differs from it in the last bit
    (49 matches over 80: 61.25 exactly, which ``%.1f`` rounds to 61.2, where 100 times
    the fraction is 61.25000000000001, printed 61.3).

    Parameters
    ----------
    counts : dict of numpy.ndarray
        M, X, L, O and T of each alignment, as :func:`cigar_counts` gives them.
    query_length, target_length : array_like of int
        ``m`` and ``n`` of each alignment.
    definition : {"pident", 0, 1, 2, 3, 4}
        BLAST's pident or vsearch's ``--iddef`` (module docstring).

    Returns
    -------
    numpy.ndarray
        float64 identities from 0 to 100.

    Examples
    --------
    >>> counts = cigar_counts(["49=31X", "2I3=1X1D2=3D"])
    >>> percent = identity_percent(counts, [80, 8], [80, 10], 2)
    >>> [f"{value:.1f}" for value in percent], f"{100 * (49 / 80):.1f}"
    (['61.2', '71.4'], '61.3')
    """
    rest = (counts["mismatches"], counts["columns"], counts["gap_opens"], counts["terminal"],
            query_length, target_length)
    if check_definition(definition) == 3:
        return 100.0 * identity_from_counts(counts["matches"], *rest, 3)
    return identity_from_counts(100 * np.asarray(counts["matches"], dtype=np.int64), *rest,
                                definition)


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
    >>> from swath.alignment import Alignment, CigarRunArrays, cigar_run_arrays
    >>> aln = Alignment(0, 0, 8, 0, 10, "2I3=1X1D2=3D", "global")
    >>> [round(identity(aln, 8, 10, d), 4) for d in ("pident", 0, 1, 2, 3, 4)]
    [0.4167, 0.625, 0.4167, 0.7143, 0.6, 0.4167]
    """
    counts = cigar_counts([alignment.cigar])
    value = identity_from_counts(counts["matches"], counts["mismatches"], counts["columns"],
                                 counts["gap_opens"], counts["terminal"], query_length,
                                 target_length, definition)
    return float(value[0])
