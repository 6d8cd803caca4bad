"""Identity of an alignment, and the filters that tell which pairs can reach one.

- :mod:`~swath.identity.definitions`: the counts of an alignment (from its CIGAR,
  :func:`cigar_counts`) and the identity definitions (BLAST's pident, vsearch's
  ``--iddef`` 0 to 4: :func:`identity`, :func:`identity_from_counts`; in percent as
  vsearch computes and prints them: :func:`identity_percent`);
- :mod:`~swath.identity.filters`: what ``swath allpairs`` skips before tracing a pair
  (:func:`length_can_pass`, :func:`least_score`, :func:`band_limits`);
- :mod:`~swath.identity.surplus`: the filter where no score bound exists (``--iddef 2``),
  from the optimal scores under :func:`surplus_scheme`.
"""

from swath.identity.definitions import (
    COUNT_NAMES,
    DEFINITIONS,
    cigar_counts,
    identity,
    identity_from_counts,
    identity_percent,
    terminal_gap_columns,
)
from swath.identity.filters import (
    NO_BOUND,
    UNREACHABLE,
    band_limits,
    least_score,
    length_can_pass,
)
from swath.identity.surplus import surplus_fraction, surplus_scheme

__all__ = [
    "COUNT_NAMES",
    "DEFINITIONS",
    "NO_BOUND",
    "UNREACHABLE",
    "band_limits",
    "cigar_counts",
    "identity",
    "identity_from_counts",
    "identity_percent",
    "least_score",
    "length_can_pass",
    "surplus_fraction",
    "surplus_scheme",
    "terminal_gap_columns",
]
