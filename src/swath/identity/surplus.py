"""The identity surplus filter: which pairs' optimal alignments can reach an identity
threshold, from two global score passes, where no score bound exists (``--iddef 2``).

Take a global alignment with M matches (equal codes), X mismatches and G gap columns, T
of them terminal (its first and last run where those are gaps), and its identity's
denominator ``den``: ``L = M + X + G`` for pident and definitions 1 and 4, ``L - T`` for
definition 2. For a fraction ``q / D <= threshold`` its *surplus* is ``D*M - q*den``: a
match adds ``D - q``, a mismatch and each counted gap column ``-q``, a terminal gap
column 0 under definition 2. An alignment whose identity reaches the threshold (float64,
``M / den >= threshold``) has ``M / den >= q / D``, a surplus of at least 0.

The surplus is a sum over columns, so ``score + surplus`` is the score of the same
alignment under another scheme (:func:`surplus_scheme`): the matrix plus ``D - q`` on
its diagonal and ``-q`` elsewhere, ``q`` more a gap column, terminal gap columns at the
scheme's end costs (definition 2) or ``q`` more too. A global DP charges a terminal gap
where a path runs along row 0 or column 0 or ends along the last row or column: exactly
the first and last runs of the CIGAR, when they are gaps. Its optimal score ``V`` is at
least ``S* + surplus(A)`` for every optimal alignment A (score ``S*``), so

    ``V < S_low`` (any lower bound of ``S*``)  =>  every optimal alignment has a negative
    surplus  =>  none reaches the threshold, whichever one the traceback returns.

Exact for any ``q / D`` at most the threshold; the closer, the fewer pairs pass.
``M / den < q / D`` keeps ``M / den`` at least ``1 / (D * den)`` below ``q / D``, far
more than float64's rounding, so a pair ruled out never has an identity that rounds up
to the threshold. On 1,000 18S amplicons at 0.97 (``--iddef 2``, swath's DNA scheme),
13,883 pairs of 499,500 pass against their optimal scores (13,827 reach it), 18,539
against the better of two gapless alignments' scores (the CPU's lower bound).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from swath.constants import Mode
from swath.errors import InvalidParameter
from swath.identity.definitions import check_definition
from swath.scoring import Scoring

__all__ = ["LARGEST_DENOMINATOR", "surplus_fraction", "surplus_scheme"]

LARGEST_DENOMINATOR = 50    # D: small, so that the scheme's values stay narrow


def surplus_fraction(threshold: float) -> tuple[int, int]:
    """``(q, D)``: the largest fraction ``q / D`` at most ``threshold`` (exactly, as the
    float64 it is) with ``1 <= D <= LARGEST_DENOMINATOR``, the least such ``D``.

    Examples
    --------
    >>> surplus_fraction(0.97), surplus_fraction(0.8), surplus_fraction(1.0)
    ((32, 33), (4, 5), (1, 1))
    """
    exact = Fraction(threshold)
    best = (int(exact.__floor__()), 1)
    for denominator in range(2, LARGEST_DENOMINATOR + 1):
        numerator = (exact * denominator).__floor__()
        if Fraction(numerator, denominator) > Fraction(*best):
            best = (int(numerator), denominator)
    return best


def surplus_scheme(threshold: float, scoring: Scoring, mode: Mode = "global",
                   definition: str | int = "pident") -> Scoring | None:
    """The scheme under which an alignment scores its score plus its identity surplus
    (module docstring): a pair whose optimal score under it is below its optimal score
    (or any lower bound of it) under ``scoring`` has no optimal alignment reaching
    ``threshold``.

    Parameters
    ----------
    threshold : float
        The identity to reach.
    scoring : Scoring
        The job's scheme; its end costs (``Scoring.end_gaps``) stay the terminal gaps'.
    mode : {"global", "semiglobal", "local"}
        The alignment mode.
    definition : {"pident", 0, 1, 2, 3, 4}
        The identity definition (:mod:`swath.identity.definitions`).

    Returns
    -------
    Scoring or None
        The scheme, its terminal gaps costing apart (``Scoring.end_gaps``) where they
        differ from its interior ones; None outside global mode, for definitions 0 and 3
        (not a ratio of columns), for a threshold of at most 0 (every alignment passes),
        and where its values would leave the range a ``Scoring`` takes (a matrix entry
        within ``D`` of 1,000, a gap extension within ``q`` of ``scoring.MAX_GAP``: then no pair
        is ruled out by its surplus).

    Examples
    --------
    >>> scheme = surplus_scheme(0.97, Scoring.dna(), definition=2)
    >>> int(scheme.matrix[0, 0]), int(scheme.matrix[0, 1]), scheme.gap_extend, scheme.end_gaps
    (3, -35, 34, (5, 2))
    """
    kind = check_definition(definition)
    if mode != "global" or kind in (0, 3) or not threshold > 0:
        return None
    q, denominator = surplus_fraction(threshold)
    size = scoring.matrix.shape[0]
    matrix = (scoring.matrix.astype(np.int64) + denominator * np.eye(size, dtype=np.int64)
              - q).astype(np.int32)
    end_open, end_extend = scoring.end_gaps or (scoring.gap_open, scoring.gap_extend)
    terminal = 0 if kind == 2 else q
    try:
        return Scoring(f"{scoring.name} + surplus {q}/{denominator}", scoring.alphabet, matrix,
                       scoring.gap_open, scoring.gap_extend + q, end_open, end_extend + terminal)
    except InvalidParameter:    # past the kernels' exact range: the filter is left out
        return None
