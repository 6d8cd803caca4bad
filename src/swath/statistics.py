"""Karlin-Altschul statistics for gapped local alignment, as NCBI BLAST computes them.

A raw score ``S`` under a scoring scheme becomes a bit score ``(lambda * S - ln K) / ln 2``
and an e-value ``K * m * n * exp(-lambda * S)``, where ``m`` and ``n`` are the query and
database lengths after BLAST's *length adjustment* (the expected length of an optimal
local alignment, which cannot start near the end of a sequence).

For gapped alignment lambda, K and H have no closed form; BLAST ships values estimated
by simulation for a fixed list of substitution matrices and gap costs. This module keeps
those tables verbatim, and reimplements the length adjustment, from the NCBI C++
Toolkit (``ncbi/ncbi-cxx-toolkit-public``):

- ``src/algo/blast/core/blast_stat.c``: the tables ``blosum45_values``,
  ``blosum50_values``, ``blosum62_values``, ``blosum80_values``, ``blosum90_values``,
  ``pam30_values``, ``pam70_values``, ``pam250_values`` and ``blastn_values_1_5`` ...
  ``blastn_values_5_4``; how they are looked up (``Blast_KarlinBlkGappedLoadFromTables``,
  ``s_GetNuclValuesArray``, ``Blast_KarlinBlkNuclGappedCalc``, ``Blast_GetNuclAlphaBeta``)
  and ``BLAST_ComputeLengthAdjustment``.
- ``src/algo/blast/core/blast_setup.c`` (``BLAST_CalcEffLengths``): how the adjustment
  shortens the query and the database.
- ``src/algo/blast/core/blast_hits.c`` (``Blast_HSPListGetEvalues``): odd scores are
  rounded down to even for the e-value of the blastn pairs whose tables say so.

alpha and beta are the slope and intercept of the mean alignment length as a function
of score (Altschul, Bundschuh, Olsen and Hwa, Nucleic Acids Res. 29:351-361, 2001).

The gap convention is BLAST's and swath's: a gap of length ``k`` costs
``gap_open + k * gap_extend``, so the tables are indexed by swath's gap costs as they are.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from swath.errors import InvalidParameter, UnknownStatistics

if TYPE_CHECKING:
    from swath.scoring import Scoring

logger = logging.getLogger(__name__)

__all__ = [
    "KarlinAltschul",
    "bit_score",
    "effective_lengths",
    "evalue",
    "gapped_parameters",
    "length_adjustment",
]

INT2_MAX = 32767
"""BLAST's sentinel for an infinite gap cost: the ungapped row of each protein table."""

_SUPPLY_HINT = "give --lambda, --k and --h (lambda_=, K=, H= in Python) to use your own"

# ---------------------------------------------------------------------------------------
# Tables copied from NCBI BLAST, src/algo/blast/core/blast_stat.c
# (ncbi/ncbi-cxx-toolkit-public, read at commit 0088c685d36c5635ef44fc21a2635b0a62c53b59).
#
# Protein rows are the first eight columns of BLAST's rows:
#   gap open, gap extend, decline-to-align (unused, INT2_MAX), lambda, K, H, alpha, beta.
# The first row of each matrix has INT2_MAX gap costs: the ungapped parameters. BLAST's
# three further columns (C, alpha_v, sigma: Spouge's finite-size correction) are left out.
# Rows appear in BLAST's order.
# ---------------------------------------------------------------------------------------
_ProteinRow = tuple[float, float, float, float, float, float, float, float]
_NucleotideRow = tuple[float, float, float, float, float, float, float, float]

_PROTEIN_TABLES: dict[str, tuple[_ProteinRow, ...]] = {
    "BLOSUM45": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.2291, 0.0924, 0.2514, 0.9113, -5.7),
        (13, 3, INT2_MAX, 0.207, 0.049, 0.14, 1.5, -22),
        (12, 3, INT2_MAX, 0.199, 0.039, 0.11, 1.8, -34),
        (11, 3, INT2_MAX, 0.190, 0.031, 0.095, 2.0, -38),
        (10, 3, INT2_MAX, 0.179, 0.023, 0.075, 2.4, -51),
        (16, 2, INT2_MAX, 0.210, 0.051, 0.14, 1.5, -24),
        (15, 2, INT2_MAX, 0.203, 0.041, 0.12, 1.7, -31),
        (14, 2, INT2_MAX, 0.195, 0.032, 0.10, 1.9, -36),
        (13, 2, INT2_MAX, 0.185, 0.024, 0.084, 2.2, -45),
        (12, 2, INT2_MAX, 0.171, 0.016, 0.061, 2.8, -65),
        (19, 1, INT2_MAX, 0.205, 0.040, 0.11, 1.9, -43),
        (18, 1, INT2_MAX, 0.198, 0.032, 0.10, 2.0, -43),
        (17, 1, INT2_MAX, 0.189, 0.024, 0.079, 2.4, -57),
        (16, 1, INT2_MAX, 0.176, 0.016, 0.063, 2.8, -67),
    ),
    "BLOSUM50": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.2318, 0.112, 0.3362, 0.6895, -4.0),
        (13, 3, INT2_MAX, 0.212, 0.063, 0.19, 1.1, -16),
        (12, 3, INT2_MAX, 0.206, 0.055, 0.17, 1.2, -18),
        (11, 3, INT2_MAX, 0.197, 0.042, 0.14, 1.4, -25),
        (10, 3, INT2_MAX, 0.186, 0.031, 0.11, 1.7, -34),
        (9, 3, INT2_MAX, 0.172, 0.022, 0.082, 2.1, -48),
        (16, 2, INT2_MAX, 0.215, 0.066, 0.20, 1.05, -15),
        (15, 2, INT2_MAX, 0.210, 0.058, 0.17, 1.2, -20),
        (14, 2, INT2_MAX, 0.202, 0.045, 0.14, 1.4, -27),
        (13, 2, INT2_MAX, 0.193, 0.035, 0.12, 1.6, -32),
        (12, 2, INT2_MAX, 0.181, 0.025, 0.095, 1.9, -41),
        (19, 1, INT2_MAX, 0.212, 0.057, 0.18, 1.2, -21),
        (18, 1, INT2_MAX, 0.207, 0.050, 0.15, 1.4, -28),
        (17, 1, INT2_MAX, 0.198, 0.037, 0.12, 1.6, -33),
        (16, 1, INT2_MAX, 0.186, 0.025, 0.10, 1.9, -42),
        (15, 1, INT2_MAX, 0.171, 0.015, 0.063, 2.7, -76),
    ),
    "BLOSUM62": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3176, 0.134, 0.4012, 0.7916, -3.2),
        (11, 2, INT2_MAX, 0.297, 0.082, 0.27, 1.1, -10),
        (10, 2, INT2_MAX, 0.291, 0.075, 0.23, 1.3, -15),
        (9, 2, INT2_MAX, 0.279, 0.058, 0.19, 1.5, -19),
        (8, 2, INT2_MAX, 0.264, 0.045, 0.15, 1.8, -26),
        (7, 2, INT2_MAX, 0.239, 0.027, 0.10, 2.5, -46),
        (6, 2, INT2_MAX, 0.201, 0.012, 0.061, 3.3, -58),
        (13, 1, INT2_MAX, 0.292, 0.071, 0.23, 1.2, -11),
        (12, 1, INT2_MAX, 0.283, 0.059, 0.19, 1.5, -19),
        (11, 1, INT2_MAX, 0.267, 0.041, 0.14, 1.9, -30),
        (10, 1, INT2_MAX, 0.243, 0.024, 0.10, 2.5, -44),
        (9, 1, INT2_MAX, 0.206, 0.010, 0.052, 4.0, -87),
    ),
    "BLOSUM80": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3430, 0.177, 0.6568, 0.5222, -1.6),
        (25, 2, INT2_MAX, 0.342, 0.17, 0.66, 0.52, -1.6),
        (13, 2, INT2_MAX, 0.336, 0.15, 0.57, 0.59, -3),
        (9, 2, INT2_MAX, 0.319, 0.11, 0.42, 0.76, -6),
        (8, 2, INT2_MAX, 0.308, 0.090, 0.35, 0.89, -9),
        (7, 2, INT2_MAX, 0.293, 0.070, 0.27, 1.1, -14),
        (6, 2, INT2_MAX, 0.268, 0.045, 0.19, 1.4, -19),
        (11, 1, INT2_MAX, 0.314, 0.095, 0.35, 0.90, -9),
        (10, 1, INT2_MAX, 0.299, 0.071, 0.27, 1.1, -14),
        (9, 1, INT2_MAX, 0.279, 0.048, 0.20, 1.4, -19),
    ),
    "BLOSUM90": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3346, 0.190, 0.7547, 0.4434, -1.4),
        (9, 2, INT2_MAX, 0.310, 0.12, 0.46, 0.67, -6),
        (8, 2, INT2_MAX, 0.300, 0.099, 0.39, 0.76, -7),
        (7, 2, INT2_MAX, 0.283, 0.072, 0.30, 0.93, -11),
        (6, 2, INT2_MAX, 0.259, 0.048, 0.22, 1.2, -16),
        (11, 1, INT2_MAX, 0.302, 0.093, 0.39, 0.78, -8),
        (10, 1, INT2_MAX, 0.290, 0.075, 0.28, 1.04, -15),
        (9, 1, INT2_MAX, 0.265, 0.044, 0.20, 1.3, -19),
    ),
    "PAM250": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.2252, 0.0868, 0.2223, 0.98, -5.0),
        (15, 3, INT2_MAX, 0.205, 0.049, 0.13, 1.6, -23),
        (14, 3, INT2_MAX, 0.200, 0.043, 0.12, 1.7, -26),
        (13, 3, INT2_MAX, 0.194, 0.036, 0.10, 1.9, -31),
        (12, 3, INT2_MAX, 0.186, 0.029, 0.085, 2.2, -41),
        (11, 3, INT2_MAX, 0.174, 0.020, 0.070, 2.5, -48),
        (17, 2, INT2_MAX, 0.204, 0.047, 0.12, 1.7, -28),
        (16, 2, INT2_MAX, 0.198, 0.038, 0.11, 1.8, -29),
        (15, 2, INT2_MAX, 0.191, 0.031, 0.087, 2.2, -44),
        (14, 2, INT2_MAX, 0.182, 0.024, 0.073, 2.5, -53),
        (13, 2, INT2_MAX, 0.171, 0.017, 0.059, 2.9, -64),
        (21, 1, INT2_MAX, 0.205, 0.045, 0.11, 1.8, -34),
        (20, 1, INT2_MAX, 0.199, 0.037, 0.10, 1.9, -35),
        (19, 1, INT2_MAX, 0.192, 0.029, 0.083, 2.3, -52),
        (18, 1, INT2_MAX, 0.183, 0.021, 0.070, 2.6, -60),
        (17, 1, INT2_MAX, 0.171, 0.014, 0.052, 3.3, -86),
    ),
    "PAM30": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3400, 0.283, 1.754, 0.1938, -0.3),
        (7, 2, INT2_MAX, 0.305, 0.15, 0.87, 0.35, -3),
        (6, 2, INT2_MAX, 0.287, 0.11, 0.68, 0.42, -4),
        (5, 2, INT2_MAX, 0.264, 0.079, 0.45, 0.59, -7),
        (10, 1, INT2_MAX, 0.309, 0.15, 0.88, 0.35, -3),
        (9, 1, INT2_MAX, 0.294, 0.11, 0.61, 0.48, -6),
        (8, 1, INT2_MAX, 0.270, 0.072, 0.40, 0.68, -10),
    ),
    "PAM70": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3345, 0.229, 1.029, 0.3250, -0.7),
        (8, 2, INT2_MAX, 0.301, 0.12, 0.54, 0.56, -5),
        (7, 2, INT2_MAX, 0.286, 0.093, 0.43, 0.67, -7),
        (6, 2, INT2_MAX, 0.264, 0.064, 0.29, 0.90, -12),
        (11, 1, INT2_MAX, 0.305, 0.12, 0.52, 0.59, -6),
        (10, 1, INT2_MAX, 0.291, 0.091, 0.41, 0.71, -9),
        (9, 1, INT2_MAX, 0.270, 0.060, 0.28, 0.97, -14),
    ),
}

# ---------------------------------------------------------------------------------------
# blastn rows, keyed by (match, mismatch), from the blastn_values_<match>_<-mismatch>
# tables of the same file. Their columns differ from the protein ones (no
# decline-to-align):
#   gap open, gap extend, lambda, K, H, alpha, beta, theta.
# A leading (0, 0) row holds megablast's values for its non-affine greedy gap costs;
# swath's affine gaps never select it (gap costs 0/0 are not a valid swath scheme).
# ---------------------------------------------------------------------------------------
_BLASTN_TABLES: dict[tuple[int, int], tuple[_NucleotideRow, ...]] = {
    (1, -5): (
        (0, 0, 1.39, 0.747, 1.38, 1.00, 0, 100),
        (3, 3, 1.39, 0.747, 1.38, 1.00, 0, 100),
    ),
    (1, -4): (
        (0, 0, 1.383, 0.738, 1.36, 1.02, 0, 100),
        (1, 2, 1.36, 0.67, 1.2, 1.1, 0, 98),
        (0, 2, 1.26, 0.43, 0.90, 1.4, -1, 91),
        (2, 1, 1.35, 0.61, 1.1, 1.2, -1, 98),
        (1, 1, 1.22, 0.35, 0.72, 1.7, -3, 88),
    ),
    (2, -7): (
        (0, 0, 0.69, 0.73, 1.34, 0.515, 0, 100),
        (2, 4, 0.68, 0.67, 1.2, 0.55, 0, 99),
        (0, 4, 0.63, 0.43, 0.90, 0.7, -1, 91),
        (4, 2, 0.675, 0.62, 1.1, 0.6, -1, 98),
        (2, 2, 0.61, 0.35, 0.72, 1.7, -3, 88),
    ),
    (1, -3): (
        (0, 0, 1.374, 0.711, 1.31, 1.05, 0, 100),
        (2, 2, 1.37, 0.70, 1.2, 1.1, 0, 99),
        (1, 2, 1.35, 0.64, 1.1, 1.2, -1, 98),
        (0, 2, 1.25, 0.42, 0.83, 1.5, -2, 91),
        (2, 1, 1.34, 0.60, 1.1, 1.2, -1, 97),
        (1, 1, 1.21, 0.34, 0.71, 1.7, -2, 88),
    ),
    (2, -5): (
        (0, 0, 0.675, 0.65, 1.1, 0.6, -1, 99),
        (2, 4, 0.67, 0.59, 1.1, 0.6, -1, 98),
        (0, 4, 0.62, 0.39, 0.78, 0.8, -2, 91),
        (4, 2, 0.67, 0.61, 1.0, 0.65, -2, 98),
        (2, 2, 0.56, 0.32, 0.59, 0.95, -4, 82),
    ),
    (1, -2): (
        (0, 0, 1.28, 0.46, 0.85, 1.5, -2, 96),
        (2, 2, 1.33, 0.62, 1.1, 1.2, 0, 99),
        (1, 2, 1.30, 0.52, 0.93, 1.4, -2, 97),
        (0, 2, 1.19, 0.34, 0.66, 1.8, -3, 89),
        (3, 1, 1.32, 0.57, 1.0, 1.3, -1, 99),
        (2, 1, 1.29, 0.49, 0.92, 1.4, -1, 96),
        (1, 1, 1.14, 0.26, 0.52, 2.2, -5, 85),
    ),
    (2, -3): (
        (0, 0, 0.55, 0.21, 0.46, 1.2, -5, 87),
        (4, 4, 0.63, 0.42, 0.84, 0.75, -2, 99),
        (2, 4, 0.615, 0.37, 0.72, 0.85, -3, 97),
        (0, 4, 0.55, 0.21, 0.46, 1.2, -5, 87),
        (3, 3, 0.615, 0.37, 0.68, 0.9, -3, 97),
        (6, 2, 0.63, 0.42, 0.84, 0.75, -2, 99),
        (5, 2, 0.625, 0.41, 0.78, 0.8, -2, 99),
        (4, 2, 0.61, 0.35, 0.68, 0.9, -3, 96),
        (2, 2, 0.515, 0.14, 0.33, 1.55, -9, 81),
    ),
    (3, -4): (
        (6, 3, 0.389, 0.25, 0.56, 0.7, -5, 95),
        (5, 3, 0.375, 0.21, 0.47, 0.8, -6, 92),
        (4, 3, 0.351, 0.14, 0.35, 1.0, -9, 86),
        (6, 2, 0.362, 0.16, 0.45, 0.8, -4, 88),
        (5, 2, 0.330, 0.092, 0.28, 1.2, -13, 81),
        (4, 2, 0.281, 0.046, 0.16, 1.8, -23, 69),
    ),
    (4, -5): (
        (0, 0, 0.22, 0.061, 0.22, 1.0, -15, 74),
        (6, 5, 0.28, 0.21, 0.47, 0.6, -7, 93),
        (5, 5, 0.27, 0.17, 0.39, 0.7, -9, 90),
        (4, 5, 0.25, 0.10, 0.31, 0.8, -10, 83),
        (3, 5, 0.23, 0.065, 0.25, 0.9, -11, 76),
    ),
    (1, -1): (
        (3, 2, 1.09, 0.31, 0.55, 2.0, -2, 99),
        (2, 2, 1.07, 0.27, 0.49, 2.2, -3, 97),
        (1, 2, 1.02, 0.21, 0.36, 2.8, -6, 92),
        (0, 2, 0.80, 0.064, 0.17, 4.8, -16, 72),
        (4, 1, 1.08, 0.28, 0.54, 2.0, -2, 98),
        (3, 1, 1.06, 0.25, 0.46, 2.3, -4, 96),
        (2, 1, 0.99, 0.17, 0.30, 3.3, -10, 90),
    ),
    (3, -2): (
        (5, 5, 0.208, 0.030, 0.072, 2.9, -47, 77),
    ),
    (5, -4): (
        (10, 6, 0.163, 0.068, 0.16, 1.0, -19, 85),
        (8, 6, 0.146, 0.039, 0.11, 1.3, -29, 76),
    ),
}

# Per (match, mismatch) pair, from s_GetNuclValuesArray in blast_stat.c: the gap costs
# (open, extend) from which on BLAST treats gaps as infinitely costly and uses the
# ungapped parameters, and whether odd scores are rounded down to even for e-values.
_BLASTN_LIMITS: dict[tuple[int, int], tuple[int, int, bool]] = {
    (1, -5): (3, 3, False),
    (1, -4): (2, 2, False),
    (2, -7): (4, 4, True),
    (1, -3): (2, 2, False),
    (2, -5): (4, 4, True),
    (1, -2): (2, 2, False),
    (2, -3): (6, 4, True),
    (3, -4): (6, 3, True),
    (1, -1): (4, 2, False),
    (3, -2): (5, 5, False),
    (4, -5): (12, 8, False),
    (5, -4): (25, 10, False),
}

# Letters a nucleotide alphabet may hold (IUPAC codes, gaps, stops); a protein alphabet
# always has letters outside this set (E, F, I, L, P, Q).
_NUCLEOTIDE_LETTERS = frozenset("ACGTUNRYKMSWBDHVX*-")


@dataclass(frozen=True)
class KarlinAltschul:
    """Karlin-Altschul parameters of one scoring scheme.

    Parameters
    ----------
    lambda_ : float
        Scale of the score distribution, in nats per score unit (> 0).
    K : float
        Search-space scale of the extreme-value distribution (> 0).
    H : float
        Relative entropy of aligned pairs, in nats per aligned pair (> 0).
    alpha : float
        Slope of the mean length of an optimal alignment against its score, as BLAST's
        length adjustment uses it (for ungapped alignment, ``lambda_ / H``).
    beta : float, default 0.0
        Intercept of that line, in residues (0 for ungapped alignment).
    round_down : bool, default False
        BLAST's flag for blastn pairs tabulated on even scores only (2/-3, 2/-5, 2/-7,
        3/-4): :func:`evalue` rounds odd raw scores down to even. Bit scores are not
        rounded, as in BLAST.

    Examples
    --------
    >>> ka = KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30)
    >>> ka.beta, round(ka.log_K, 4)
    (-30.0, -3.1942)
    """

    lambda_: float
    K: float
    H: float
    alpha: float
    beta: float = 0.0
    round_down: bool = False

    def __post_init__(self) -> None:
        for name in ("lambda_", "K", "H", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise InvalidParameter(f"{name} must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise InvalidParameter(f"{name} must be finite, got {value}")
            if name in ("lambda_", "K", "H") and value <= 0:
                raise InvalidParameter(f"{name} must be > 0, got {value}")
            if name == "alpha" and value < 0:
                raise InvalidParameter(f"alpha must be >= 0, got {value}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "round_down", bool(self.round_down))

    @property
    def log_K(self) -> float:
        """The natural logarithm of K."""
        return math.log(self.K)


def gapped_parameters(scoring: Scoring, *, lambda_: float | None = None,
                      K: float | None = None, H: float | None = None,
                      alpha: float | None = None, beta: float | None = None
                      ) -> KarlinAltschul:
    """The Karlin-Altschul parameters of a scoring scheme for gapped local alignment.

    Without ``lambda_``, ``K`` and ``H`` the parameters are BLAST's published ones
    (``blast_stat.c`` of the NCBI C++ Toolkit): protein schemes are found by
    ``scoring.name`` (BLOSUM45, BLOSUM50, BLOSUM62, BLOSUM80, BLOSUM90, PAM30, PAM70,
    PAM250, in any case) and their gap costs; DNA schemes by the match and mismatch
    scores of their ``ACGT`` block and their gap costs. As in BLAST, a match/mismatch
    pair with a common divisor ``d`` uses the table of the reduced pair with gap costs
    divided by ``d``, and lambda and alpha divided by ``d``.

    Parameters
    ----------
    scoring : Scoring
        The scheme: substitution matrix and gap costs (a gap of length ``k`` costs
        ``gap_open + k * gap_extend``, as in BLAST).
    lambda_, K, H : float, optional
        Give all three to use your own parameters with any scheme, tabulated or not.
    alpha, beta : float, optional
        The length-adjustment line. With your own ``lambda_``, ``K`` and ``H`` they
        default to ``lambda_ / H`` and 0 (BLAST's choice for ungapped alignment); for a
        tabulated scheme they replace the tabulated values.

    Returns
    -------
    KarlinAltschul

    Raises
    ------
    UnknownStatistics
        BLAST publishes no parameters for this matrix or these gap costs, and
        ``lambda_``, ``K``, ``H`` were not given. The message lists the gap costs
        known for the matrix.
    InvalidParameter
        Only some of ``lambda_``, ``K`` and ``H`` were given, or a value is out of range.

    Examples
    --------
    >>> from swath import Scoring
    >>> gapped_parameters(Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1))
    KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30.0, round_down=False)
    >>> dna = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> ka = gapped_parameters(dna)
    >>> ka.lambda_, ka.K, ka.round_down
    (0.625, 0.41, True)
    >>> gapped_parameters(dna, lambda_=0.6, K=0.3, H=0.5).alpha
    1.2
    """
    if lambda_ is None or K is None or H is None:
        missing = [name for name, value in (("lambda_", lambda_), ("K", K), ("H", H))
                   if value is None]
        if len(missing) < 3:
            raise InvalidParameter(
                f"give all of lambda_, K and H (--lambda, --k, --h) or none of them; "
                f"missing {', '.join(missing)}"
            )
        params = _tabulated(scoring)
        if alpha is not None or beta is not None:
            params = replace(params,
                             alpha=params.alpha if alpha is None else alpha,
                             beta=params.beta if beta is None else beta)
        return params
    params = KarlinAltschul(lambda_, K, H, 0.0 if alpha is None else alpha,
                            0.0 if beta is None else beta)
    if alpha is None:
        params = replace(params, alpha=params.lambda_ / params.H)
    return params


def _tabulated(scoring: Scoring) -> KarlinAltschul:
    """BLAST's tabulated parameters for ``scoring``, or UnknownStatistics."""
    gap_open, gap_extend = scoring.gap_open, scoring.gap_extend
    name = scoring.name.upper()
    rows = _PROTEIN_TABLES.get(name)
    if rows is not None:
        for row in rows:
            if (row[0], row[1]) == (gap_open, gap_extend):
                params = KarlinAltschul(row[3], row[4], row[5], row[6], row[7])
                logger.debug("BLAST parameters for %s %d/%d: %s", name, gap_open,
                             gap_extend, params)
                return params
        known = ", ".join(f"{int(r[0])}/{int(r[1])}" for r in rows if r[0] != INT2_MAX)
        raise UnknownStatistics(
            f"no published Karlin-Altschul parameters for {name} with gap costs "
            f"{gap_open}/{gap_extend} (open/extend); BLAST tabulates {name} with {known}; "
            f"{_SUPPLY_HINT}"
        )

    pair = _match_mismatch(scoring)
    if pair is None:
        raise UnknownStatistics(
            f"no published Karlin-Altschul parameters for matrix {scoring.name!r} "
            f"(gap costs {gap_open}/{gap_extend}); BLAST tabulates "
            f"{', '.join(_PROTEIN_TABLES)} and DNA match/mismatch "
            f"{', '.join(f'{r}/{p}' for r, p in _BLASTN_TABLES)}; {_SUPPLY_HINT}"
        )
    match, mismatch = pair
    divisor = math.gcd(match, mismatch)
    key = (match // divisor, mismatch // divisor)
    dna_name = f"DNA {match}/{mismatch}"
    if key not in _BLASTN_TABLES:
        raise UnknownStatistics(
            f"no published Karlin-Altschul parameters for {dna_name} (match/mismatch) "
            f"with gap costs {gap_open}/{gap_extend}; BLAST tabulates match/mismatch "
            f"{', '.join(f'{r}/{p}' for r, p in _BLASTN_TABLES)} and their multiples; "
            f"{_SUPPLY_HINT}"
        )
    open_max, extend_max, round_down = _BLASTN_LIMITS[key]
    affine = [row for row in _BLASTN_TABLES[key] if (row[0], row[1]) != (0, 0)]
    for row in affine:
        if (row[0] * divisor, row[1] * divisor) == (gap_open, gap_extend):
            params = KarlinAltschul(row[2] / divisor, row[3], row[4], row[5] / divisor,
                                    row[6], round_down)
            logger.debug("BLAST parameters for %s %d/%d: %s", dna_name, gap_open,
                         gap_extend, params)
            return params
    known = ", ".join(f"{int(r[0]) * divisor}/{int(r[1]) * divisor}" for r in affine)
    open_max, extend_max = open_max * divisor, extend_max * divisor
    if gap_open >= open_max and gap_extend >= extend_max:
        beyond = (f"gap costs of at least {open_max}/{extend_max} make BLAST use ungapped "
                  f"parameters of the query's composition, which swath does not compute")
    else:
        beyond = f"BLAST uses ungapped parameters from {open_max}/{extend_max} on"
    raise UnknownStatistics(
        f"no published Karlin-Altschul parameters for {dna_name} (match/mismatch) with "
        f"gap costs {gap_open}/{gap_extend} (open/extend); BLAST tabulates {known}, and "
        f"{beyond}; {_SUPPLY_HINT}"
    )


def _match_mismatch(scoring: Scoring) -> tuple[int, int] | None:
    """(match, mismatch) of a nucleotide scheme whose ACGT block is uniform, else None."""
    letters = scoring.alphabet.letters.upper()
    if not set(letters) <= _NUCLEOTIDE_LETTERS or not set("ACGT") <= set(letters):
        return None
    index = [letters.index(base) for base in "ACGT"]
    block = np.asarray(scoring.matrix)[np.ix_(index, index)]
    diagonal = np.diag(block)
    off_diagonal = block[~np.eye(4, dtype=bool)]
    match, mismatch = int(diagonal[0]), int(off_diagonal[0])
    uniform = (diagonal == match).all() and (off_diagonal == mismatch).all()
    return (match, mismatch) if uniform and mismatch < match and match > 0 else None


def _count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidParameter(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise InvalidParameter(f"{name} must be >= 1, got {value}")
    return int(value)


def length_adjustment(query_length: int, db_residues: int, db_sequences: int,
                      params: KarlinAltschul) -> int:
    """BLAST's length adjustment: how many residues edge effects take from each sequence.

    The adjustment is the integer part of the fixed point of

        ell = beta + (alpha / lambda) * ln(K * (m - ell) * (n - N * ell))

    (``m`` query length, ``n`` database residues, ``N`` database sequences), kept small
    enough that ``K * (m - ell) * (n - N * ell) > max(m, n)``. It is found as
    ``BLAST_ComputeLengthAdjustment`` in NCBI's ``blast_stat.c`` finds it: at most 20
    steps of fixed-point iteration, falling back to bisection when a step leaves the
    bracket, stopping when a step moves less than one residue.

    Parameters
    ----------
    query_length : int
        Residues in the query (>= 1).
    db_residues : int
        Residues in the whole database (>= 1).
    db_sequences : int
        Sequences in the database (>= 1).
    params : KarlinAltschul
        The scheme's parameters (its ``alpha``, ``beta``, ``lambda_`` and ``K``).

    Returns
    -------
    int
        The adjustment, >= 0.

    Examples
    --------
    BLASTP 2.2.26+ (BLOSUM62, 11/1) reports a length adjustment of 38 for a query of
    102 residues against 20 sequences of 6406 residues in all:

    >>> ka = KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30)
    >>> length_adjustment(102, 6406, 20, ka)
    38
    """
    m = float(_count("query_length", query_length))
    n = float(_count("db_residues", db_residues))
    num = float(_count("db_sequences", db_sequences))
    slope = params.alpha / params.lambda_
    log_k = params.log_K

    def expected_length(ell: float) -> float:
        return slope * (log_k + math.log((m - ell) * (n - num * ell))) + params.beta

    # Largest ell keeping K (m - ell)(n - N ell) >= max(m, n): the smaller root of
    # N ell^2 - (m N + n) ell + (m n - max(m, n) / K) = 0, written to avoid cancellation.
    constant = m * n - max(m, n) / params.K
    if constant < 0:
        return 0
    linear = m * num + n
    high = 2 * constant / (linear + math.sqrt(linear * linear - 4 * num * constant))
    low = 0.0
    ell = 0.0
    converged = False
    for step in range(1, 21):
        proposal = expected_length(ell)
        if proposal >= ell:  # ell is at or below the fixed point
            low = ell
            if proposal - low <= 1.0:
                converged = True
                break
            if low == high:
                break
        else:  # ell is above the fixed point
            high = ell
        if low <= proposal <= high:
            ell = proposal
        elif step == 1:
            ell = high
        else:
            ell = (low + high) / 2
    if not converged:
        return int(low)
    # floor(low) is the answer unless the next integer is still below the fixed point.
    above = math.ceil(low)
    if above <= high and expected_length(above) >= above:
        return int(above)
    return int(low)


def effective_lengths(query_length: int, db_residues: int, db_sequences: int,
                      params: KarlinAltschul) -> tuple[int, int]:
    """The query and database lengths BLAST's e-values use, after the length adjustment.

    With ``a = length_adjustment(...)`` the effective query length is
    ``query_length - a`` and the effective database length ``db_residues -
    db_sequences * a``, each at least 1 (as ``BLAST_CalcEffLengths`` in NCBI's
    ``blast_setup.c``). Their product is BLAST's "effective search space".

    Parameters
    ----------
    query_length : int
        Residues in the query (>= 1).
    db_residues : int
        Residues in the whole database (>= 1).
    db_sequences : int
        Sequences in the database (>= 1).
    params : KarlinAltschul
        The scheme's parameters.

    Returns
    -------
    tuple of int
        ``(effective query length, effective database length)``.

    Examples
    --------
    BLASTN 2.2.27+ (2/-3, gaps 5/2) reports an effective search space of 55893623800
    for a 63-base query against 1331289 sequences of 1634236772 bases:

    >>> ka = KarlinAltschul(lambda_=0.625, K=0.41, H=0.78, alpha=0.8, beta=-2)
    >>> m, n = effective_lengths(63, 1_634_236_772, 1_331_289, ka)
    >>> m, n, m * n
    (35, 1596960680, 55893623800)
    """
    adjustment = length_adjustment(query_length, db_residues, db_sequences, params)
    return (max(int(query_length) - adjustment, 1),
            max(int(db_residues) - int(db_sequences) * adjustment, 1))


@overload
def bit_score(raw: float, params: KarlinAltschul) -> float: ...


@overload
def bit_score(raw: ArrayLike, params: KarlinAltschul) -> NDArray[np.float64]: ...


def bit_score(raw: ArrayLike, params: KarlinAltschul) -> float | NDArray[np.float64]:
    """Bit scores ``(lambda * S - ln K) / ln 2`` of raw scores ``S``.

    Parameters
    ----------
    raw : int or array_like of int
        Raw alignment scores.
    params : KarlinAltschul
        The scheme's parameters.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar score, else a float64 array of the same shape.

    Examples
    --------
    >>> ka = KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30)
    >>> round(bit_score(350, ka), 3)
    139.428
    >>> bit_score([29, 350], ka).round(3)
    array([ 15.779, 139.428])
    """
    scores = np.asarray(raw, dtype=np.float64)
    bits = (params.lambda_ * scores - params.log_K) / math.log(2)
    return float(bits) if bits.ndim == 0 else bits


@overload
def evalue(raw: float, effective_query: float, effective_db: float,
           params: KarlinAltschul) -> float: ...


@overload
def evalue(raw: ArrayLike, effective_query: ArrayLike, effective_db: ArrayLike,
           params: KarlinAltschul) -> NDArray[np.float64]: ...


def evalue(raw: ArrayLike, effective_query: ArrayLike, effective_db: ArrayLike,
           params: KarlinAltschul) -> float | NDArray[np.float64]:
    """Expected numbers of chance alignments ``K * m * n * exp(-lambda * S)``.

    ``m`` and ``n`` are the effective lengths of :func:`effective_lengths`. When
    ``params.round_down`` is set (BLAST's blastn pairs 2/-3, 2/-5, 2/-7, 3/-4), odd
    scores are first rounded down to even, as BLAST does.

    Parameters
    ----------
    raw : int or array_like of int
        Raw alignment scores.
    effective_query, effective_db : int or array_like of int
        Effective query and database lengths (> 0); they broadcast against ``raw``.
    params : KarlinAltschul
        The scheme's parameters.

    Returns
    -------
    float or numpy.ndarray
        A float when every argument is a scalar, else a float64 array.

    Examples
    --------
    BLASTN 2.2.27+ (2/-3, gaps 5/2, effective search space 3 x 1610273570) reports
    e-value 4.0824 for a score of 32:

    >>> ka = KarlinAltschul(lambda_=0.625, K=0.41, H=0.78, alpha=0.8, beta=-2)
    >>> round(evalue(32, 3, 1_610_273_570, ka), 4)
    4.0824
    >>> even = KarlinAltschul(0.625, 0.41, 0.78, 0.8, -2, round_down=True)
    >>> evalue([32, 33, 40], 3, 1_610_273_570, even).round(4)
    array([4.0824, 4.0824, 0.0275])
    """
    scores = np.asarray(raw, dtype=np.float64)
    if params.round_down:
        scores = 2.0 * np.floor(scores / 2.0)
    space = np.asarray(effective_query, dtype=np.float64) * np.asarray(effective_db,
                                                                          dtype=np.float64)
    if (space <= 0).any():
        raise InvalidParameter("effective_query and effective_db must be > 0")
    values = space * np.exp(params.log_K - params.lambda_ * scores)
    return float(values) if values.ndim == 0 else values
