"""Karlin-Altschul statistics for gapped local alignment, as NCBI BLAST computes them.

A raw score ``S`` under a scoring scheme becomes a bit score ``(lambda * S - ln K) / ln 2``
and an e-value. BLAST+ computes the e-value of a hit in one of two ways:

- for the protein tables (blastp), with Spouge's *finite-size correction*
  (:func:`spouge_evalue`): the expected number of chance alignments scoring at least
  ``S`` of the query against the hit's subject, from the scheme's Gumbel parameters
  (:class:`Gumbel`), scaled by the database's residues over the subject's;
- for the blastn tables, and for parameters a user gives, as
  ``K * m * n * exp(-lambda * S)`` (:func:`evalue`), where ``m`` and ``n`` are the query
  and database lengths after BLAST's *length adjustment* (the expected length of an
  optimal local alignment, which cannot start near the end of a sequence).

:func:`search_evalue` picks the one BLAST+ would: BLAST+ 2.12's blastp and blastn print
the e-values it gives.

For gapped alignment lambda, K and H have no closed form; BLAST ships values estimated
by simulation for a fixed list of substitution matrices and gap costs. This module keeps
those tables verbatim, and reimplements the length adjustment and Spouge's e-value, from
the NCBI C++ Toolkit (``ncbi/ncbi-cxx-toolkit-public``):

- ``src/algo/blast/core/blast_stat.c``: the tables ``blosum45_values``,
  ``blosum50_values``, ``blosum62_values``, ``blosum80_values``, ``blosum90_values``,
  ``pam30_values``, ``pam70_values``, ``pam250_values`` and ``blastn_values_1_5`` ...
  ``blastn_values_5_4``; how they are looked up (``Blast_KarlinBlkGappedLoadFromTables``,
  ``Blast_GumbelBlkLoadFromTables``, ``s_GetNuclValuesArray``,
  ``Blast_KarlinBlkNuclGappedCalc``, ``Blast_GetNuclAlphaBeta``),
  ``BLAST_ComputeLengthAdjustment`` and ``BLAST_SpougeStoE``.
- ``src/algo/blast/core/blast_setup.c`` (``BLAST_CalcEffLengths``): how the adjustment
  shortens the query and the database, and that the Gumbel block's database length is
  the database's residues.
- ``src/algo/blast/core/blast_hits.c`` (``Blast_HSPListGetEvalues``): Spouge's e-value
  wherever a Gumbel block exists, from the query's and the subject's whole lengths; odd
  scores are rounded down to even for the e-value of the blastn pairs whose tables say so.

alpha and beta are the slope and intercept of the mean alignment length as a function
of score (Altschul, Bundschuh, Olsen and Hwa, Nucleic Acids Res. 29:351-361, 2001).
Spouge's correction: Park, Sheetlin, Ma, Madden and Spouge, BMC Bioinformatics 13:45
(2012), "Finite-size correction and bias correction in gapped sequence alignment".

The gap convention is BLAST's and swath's: a gap of length ``k`` costs
``gap_open + k * gap_extend``, so the tables are indexed by swath's gap costs as they are.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from swath.errors import InvalidParameter, UnknownStatistics

if TYPE_CHECKING:
    from swath.scoring import Scoring

logger = logging.getLogger(__name__)

__all__ = [
    "Gumbel",
    "KarlinAltschul",
    "bit_score",
    "effective_lengths",
    "evalue",
    "gapped_parameters",
    "least_spouge_evalue",
    "length_adjustment",
    "search_evalue",
    "spouge_evalue",
]

INT2_MAX = 32767
"""BLAST's sentinel for an infinite gap cost: the ungapped row of each protein table."""

_SUPPLY_HINT = "give --lambda, --k and --h (lambda_=, K=, H= in Python) to use your own"

# ---------------------------------------------------------------------------------------
# Tables copied from NCBI BLAST, src/algo/blast/core/blast_stat.c
# (ncbi/ncbi-cxx-toolkit-public, read at commit 0088c685d36c5635ef44fc21a2635b0a62c53b59).
#
# Protein rows are BLAST's rows:
#   gap open, gap extend, decline-to-align (unused, INT2_MAX), lambda, K, H, alpha, beta,
#   C, alpha_v, sigma.
# The last three are the Gumbel parameters of Spouge's finite-size correction (C, unused
# by the e-value, is kept so that the rows read as BLAST's). The first row of each matrix
# has INT2_MAX gap costs: the ungapped parameters. Rows appear in BLAST's order.
# ---------------------------------------------------------------------------------------
_ProteinRow = tuple[float, float, float, float, float, float, float, float, float, float,
                    float]
_NucleotideRow = tuple[float, float, float, float, float, float, float, float]

_PROTEIN_TABLES: dict[str, tuple[_ProteinRow, ...]] = {
    "BLOSUM45": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.2291, 0.0924, 0.2514, 0.9113, -5.7,
         0.641318, 9.61106, 9.61106),
        (13, 3, INT2_MAX, 0.207, 0.049, 0.14, 1.5, -22, 0.671128, 35.8559, 35.9639),
        (12, 3, INT2_MAX, 0.199, 0.039, 0.11, 1.8, -34, 0.69153, 45.6936, 45.8517),
        (11, 3, INT2_MAX, 0.190, 0.031, 0.095, 2.0, -38, 0.691181, 62.8741, 63.1037),
        (10, 3, INT2_MAX, 0.179, 0.023, 0.075, 2.4, -51, 0.710529, 88.2868, 88.6391),
        (16, 2, INT2_MAX, 0.210, 0.051, 0.14, 1.5, -24, 0.66668, 36.2798, 36.4524),
        (15, 2, INT2_MAX, 0.203, 0.041, 0.12, 1.7, -31, 0.673871, 44.8257, 45.0604),
        (14, 2, INT2_MAX, 0.195, 0.032, 0.10, 1.9, -36, 0.685753, 60.7362, 61.1023),
        (13, 2, INT2_MAX, 0.185, 0.024, 0.084, 2.2, -45, 0.69848, 85.1481, 85.6894),
        (12, 2, INT2_MAX, 0.171, 0.016, 0.061, 2.8, -65, 0.713429, 127.758, 128.582),
        (19, 1, INT2_MAX, 0.205, 0.040, 0.11, 1.9, -43, 0.672302, 53.0714, 53.8282),
        (18, 1, INT2_MAX, 0.198, 0.032, 0.10, 2.0, -43, 0.68258, 72.3424, 73.4039),
        (17, 1, INT2_MAX, 0.189, 0.024, 0.079, 2.4, -57, 0.695035, 103.055, 104.721),
        (16, 1, INT2_MAX, 0.176, 0.016, 0.063, 2.8, -67, 0.712966, 170.1, 173.003),
    ),
    "BLOSUM50": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.2318, 0.112, 0.3362, 0.6895, -4.0,
         0.609639, 5.38831, 5.38831),
        (13, 3, INT2_MAX, 0.212, 0.063, 0.19, 1.1, -16, 0.639287, 18.1138, 18.2028),
        (12, 3, INT2_MAX, 0.206, 0.055, 0.17, 1.2, -18, 0.644715, 22.6546, 22.7777),
        (11, 3, INT2_MAX, 0.197, 0.042, 0.14, 1.4, -25, 0.656327, 29.8611, 30.0457),
        (10, 3, INT2_MAX, 0.186, 0.031, 0.11, 1.7, -34, 0.67115, 42.3938, 42.674),
        (9, 3, INT2_MAX, 0.172, 0.022, 0.082, 2.1, -48, 0.694326, 66.0696, 66.5164),
        (16, 2, INT2_MAX, 0.215, 0.066, 0.20, 1.05, -15, 0.633899, 17.9518, 18.0921),
        (15, 2, INT2_MAX, 0.210, 0.058, 0.17, 1.2, -20, 0.641985, 21.9401, 22.1418),
        (14, 2, INT2_MAX, 0.202, 0.045, 0.14, 1.4, -27, 0.650682, 28.6812, 28.9619),
        (13, 2, INT2_MAX, 0.193, 0.035, 0.12, 1.6, -32, 0.660984, 42.0595, 42.4716),
        (12, 2, INT2_MAX, 0.181, 0.025, 0.095, 1.9, -41, 0.67809, 63.7476, 64.3973),
        (19, 1, INT2_MAX, 0.212, 0.057, 0.18, 1.2, -21, 0.635714, 26.3112, 26.9233),
        (18, 1, INT2_MAX, 0.207, 0.050, 0.15, 1.4, -28, 0.643523, 34.9037, 35.7348),
        (17, 1, INT2_MAX, 0.198, 0.037, 0.12, 1.6, -33, 0.654504, 48.8958, 50.1486),
        (16, 1, INT2_MAX, 0.186, 0.025, 0.10, 1.9, -42, 0.66775, 76.4691, 78.443),
        (15, 1, INT2_MAX, 0.171, 0.015, 0.063, 2.7, -76, 0.694575, 140.053, 144.16),
    ),
    "BLOSUM62": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3176, 0.134, 0.4012, 0.7916, -3.2,
         0.623757, 4.96466, 4.96466),
        (11, 2, INT2_MAX, 0.297, 0.082, 0.27, 1.1, -10, 0.641766, 12.6738, 12.7576),
        (10, 2, INT2_MAX, 0.291, 0.075, 0.23, 1.3, -15, 0.649362, 16.474, 16.6026),
        (9, 2, INT2_MAX, 0.279, 0.058, 0.19, 1.5, -19, 0.659245, 22.7519, 22.95),
        (8, 2, INT2_MAX, 0.264, 0.045, 0.15, 1.8, -26, 0.672692, 35.4838, 35.8213),
        (7, 2, INT2_MAX, 0.239, 0.027, 0.10, 2.5, -46, 0.702056, 61.2383, 61.886),
        (6, 2, INT2_MAX, 0.201, 0.012, 0.061, 3.3, -58, 0.740802, 140.417, 141.882),
        (13, 1, INT2_MAX, 0.292, 0.071, 0.23, 1.2, -11, 0.647715, 19.5063, 19.8931),
        (12, 1, INT2_MAX, 0.283, 0.059, 0.19, 1.5, -19, 0.656391, 27.8562, 28.4699),
        (11, 1, INT2_MAX, 0.267, 0.041, 0.14, 1.9, -30, 0.66972, 42.6028, 43.6362),
        (10, 1, INT2_MAX, 0.243, 0.024, 0.10, 2.5, -44, 0.693267, 83.1787, 85.0656),
        (9, 1, INT2_MAX, 0.206, 0.010, 0.052, 4.0, -87, 0.731887, 210.333, 214.842),
    ),
    "BLOSUM80": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3430, 0.177, 0.6568, 0.5222, -1.6,
         0.564057, 1.91813, 1.91813),
        (25, 2, INT2_MAX, 0.342, 0.17, 0.66, 0.52, -1.6, 0.563956, 1.731, 1.7313),
        (13, 2, INT2_MAX, 0.336, 0.15, 0.57, 0.59, -3, 0.570979, 2.67347, 2.6923),
        (9, 2, INT2_MAX, 0.319, 0.11, 0.42, 0.76, -6, 0.587837, 5.57609, 5.66786),
        (8, 2, INT2_MAX, 0.308, 0.090, 0.35, 0.89, -9, 0.597556, 7.53695, 7.68623),
        (7, 2, INT2_MAX, 0.293, 0.070, 0.27, 1.1, -14, 0.615254, 11.5866, 11.8404),
        (6, 2, INT2_MAX, 0.268, 0.045, 0.19, 1.4, -19, 0.644054, 19.9581, 20.4412),
        (11, 1, INT2_MAX, 0.314, 0.095, 0.35, 0.90, -9, 0.590702, 8.80861, 9.22332),
        (10, 1, INT2_MAX, 0.299, 0.071, 0.27, 1.1, -14, 0.60962, 13.8338, 14.5334),
        (9, 1, INT2_MAX, 0.279, 0.048, 0.20, 1.4, -19, 0.6238, 24.252, 25.4904),
    ),
    "BLOSUM90": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3346, 0.190, 0.7547, 0.4434, -1.4,
         0.544178, 1.37776, 1.37776),
        (9, 2, INT2_MAX, 0.310, 0.12, 0.46, 0.67, -6, 0.570267, 4.23229, 4.33417),
        (8, 2, INT2_MAX, 0.300, 0.099, 0.39, 0.76, -7, 0.58158, 5.79702, 5.96142),
        (7, 2, INT2_MAX, 0.283, 0.072, 0.30, 0.93, -11, 0.600024, 9.04088, 9.3216),
        (6, 2, INT2_MAX, 0.259, 0.048, 0.22, 1.2, -16, 0.629344, 16.0244, 16.5316),
        (11, 1, INT2_MAX, 0.302, 0.093, 0.39, 0.78, -8, 0.576919, 7.14325, 7.61919),
        (10, 1, INT2_MAX, 0.290, 0.075, 0.28, 1.04, -15, 0.591366, 11.4839, 12.2698),
        (9, 1, INT2_MAX, 0.265, 0.044, 0.20, 1.3, -19, 0.613013, 21.4083, 22.8409),
    ),
    "PAM250": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.2252, 0.0868, 0.2223, 0.98, -5.0,
         0.660059, 11.7543, 11.7543),
        (15, 3, INT2_MAX, 0.205, 0.049, 0.13, 1.6, -23, 0.687656, 34.5784, 34.928),
        (14, 3, INT2_MAX, 0.200, 0.043, 0.12, 1.7, -26, 0.689768, 43.353, 43.4438),
        (13, 3, INT2_MAX, 0.194, 0.036, 0.10, 1.9, -31, 0.697431, 50.9485, 51.0817),
        (12, 3, INT2_MAX, 0.186, 0.029, 0.085, 2.2, -41, 0.704565, 69.6065, 69.7936),
        (11, 3, INT2_MAX, 0.174, 0.020, 0.070, 2.5, -48, 0.722438, 98.6535, 98.9271),
        (17, 2, INT2_MAX, 0.204, 0.047, 0.12, 1.7, -28, 0.684799, 41.5838, 41.7358),
        (16, 2, INT2_MAX, 0.198, 0.038, 0.11, 1.8, -29, 0.691098, 51.6352, 51.8439),
        (15, 2, INT2_MAX, 0.191, 0.031, 0.087, 2.2, -44, 0.699051, 67.2567, 67.5585),
        (14, 2, INT2_MAX, 0.182, 0.024, 0.073, 2.5, -53, 0.714103, 96.3151, 96.7568),
        (13, 2, INT2_MAX, 0.171, 0.017, 0.059, 2.9, -64, 0.728738, 135.653, 136.339),
        (21, 1, INT2_MAX, 0.205, 0.045, 0.11, 1.8, -34, 0.683265, 48.7282, 49.2188),
        (20, 1, INT2_MAX, 0.199, 0.037, 0.10, 1.9, -35, 0.68938, 60.832, 61.5141),
        (19, 1, INT2_MAX, 0.192, 0.029, 0.083, 2.3, -52, 0.696344, 84.0197, 84.9856),
        (18, 1, INT2_MAX, 0.183, 0.021, 0.070, 2.6, -60, 0.710525, 113.829, 115.184),
        (17, 1, INT2_MAX, 0.171, 0.014, 0.052, 3.3, -86, 0.727, 175.071, 177.196),
    ),
    "PAM30": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3400, 0.283, 1.754, 0.1938, -0.3,
         0.436164, 0.161818, 0.161818),
        (7, 2, INT2_MAX, 0.305, 0.15, 0.87, 0.35, -3, 0.479087, 1.01401, 1.16273),
        (6, 2, INT2_MAX, 0.287, 0.11, 0.68, 0.42, -4, 0.49998, 1.68806, 1.95143),
        (5, 2, INT2_MAX, 0.264, 0.079, 0.45, 0.59, -7, 0.533009, 3.37701, 3.87195),
        (10, 1, INT2_MAX, 0.309, 0.15, 0.88, 0.35, -3, 0.474741, 1.37205, 1.78877),
        (9, 1, INT2_MAX, 0.294, 0.11, 0.61, 0.48, -6, 0.492716, 2.46392, 3.18615),
        (8, 1, INT2_MAX, 0.270, 0.072, 0.40, 0.68, -10, 0.521286, 5.36813, 6.76348),
    ),
    "PAM70": (
        (INT2_MAX, INT2_MAX, INT2_MAX, 0.3345, 0.229, 1.029, 0.3250, -0.7,
         0.511296, 0.633439, 0.633439),
        (8, 2, INT2_MAX, 0.301, 0.12, 0.54, 0.56, -5, 0.549019, 2.88165, 3.02571),
        (7, 2, INT2_MAX, 0.286, 0.093, 0.43, 0.67, -7, 0.565659, 4.53454, 4.78578),
        (6, 2, INT2_MAX, 0.264, 0.064, 0.29, 0.90, -12, 0.59633, 7.94263, 8.40272),
        (11, 1, INT2_MAX, 0.305, 0.12, 0.52, 0.59, -6, 0.543514, 3.6814, 4.10802),
        (10, 1, INT2_MAX, 0.291, 0.091, 0.41, 0.71, -9, 0.560723, 6.00297, 6.71657),
        (9, 1, INT2_MAX, 0.270, 0.060, 0.28, 0.97, -14, 0.585186, 11.3608, 12.6367),
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


def _number(name: str, value: Any) -> float:
    """``value`` as a finite float, or InvalidParameter naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InvalidParameter(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InvalidParameter(f"{name} must be finite, got {value}")
    return value


@dataclass(frozen=True)
class Gumbel:
    """BLAST's Gumbel block of a protein scheme: what Spouge's finite-size correction of
    the e-value needs (``Blast_GumbelBlk``, filled by ``Blast_GumbelBlkLoadFromTables``
    in NCBI's ``blast_stat.c``).

    The lengths of an optimal local alignment scoring ``y`` are modelled as normal, with
    mean ``a * y + b`` and variance ``alpha * y + beta`` in each sequence and covariance
    ``sigma * y + tau`` between the two; ``b``, ``beta`` and ``tau`` follow from the
    ungapped slopes and the cost of a one-residue gap.

    Parameters
    ----------
    a : float
        Slope of the mean alignment length against the score (the tables' alpha).
    alpha : float
        Slope of its variance (the tables' alpha_v).
    sigma : float
        Slope of the covariance of the two sequences' aligned lengths.
    a_ungapped, alpha_ungapped : float
        ``a`` and ``alpha`` of the matrix's ungapped row.
    gap : float
        Gap open plus gap extend: the cost of a one-residue gap (BLAST's ``G``).

    Examples
    --------
    BLOSUM62 with gap costs 11/1:

    >>> g = Gumbel(a=1.9, alpha=42.6028, sigma=43.6362, a_ungapped=0.7916,
    ...            alpha_ungapped=4.96466, gap=12)
    >>> round(g.b, 4), round(g.beta, 5), round(g.tau, 5)
    (-26.6016, -903.31536, -928.11696)
    """

    a: float
    alpha: float
    sigma: float
    a_ungapped: float
    alpha_ungapped: float
    gap: float

    def __post_init__(self) -> None:
        for field in ("a", "alpha", "sigma", "a_ungapped", "alpha_ungapped", "gap"):
            object.__setattr__(self, field, _number(field, getattr(self, field)))

    @property
    def b(self) -> float:
        """Intercept of the mean alignment length."""
        return 2 * self.gap * (self.a_ungapped - self.a)

    @property
    def beta(self) -> float:
        """Intercept of the variance of the alignment length."""
        return 2 * self.gap * (self.alpha_ungapped - self.alpha)

    @property
    def tau(self) -> float:
        """Intercept of the covariance of the two aligned lengths."""
        return 2 * self.gap * (self.alpha_ungapped - self.sigma)


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
    gumbel : Gumbel, optional
        The scheme's Gumbel block (BLAST's protein tables): :func:`search_evalue` then
        computes Spouge's e-values, as blastp does; without it, length-adjusted ones.

    Examples
    --------
    >>> ka = KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30)
    >>> ka.beta, round(ka.log_K, 4), ka.gumbel
    (-30.0, -3.1942, None)
    """

    lambda_: float
    K: float
    H: float
    alpha: float
    beta: float = 0.0
    round_down: bool = False
    gumbel: Gumbel | None = None

    def __post_init__(self) -> None:
        for name in ("lambda_", "K", "H", "alpha", "beta"):
            value = _number(name, getattr(self, name))
            if name in ("lambda_", "K", "H") and value <= 0:
                raise InvalidParameter(f"{name} must be > 0, got {value}")
            if name == "alpha" and value < 0:
                raise InvalidParameter(f"alpha must be >= 0, got {value}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "round_down", bool(self.round_down))
        if self.gumbel is not None and not isinstance(self.gumbel, Gumbel):
            raise InvalidParameter(f"gumbel must be a Gumbel or None, got {self.gumbel!r} "
                                   "(KarlinAltschul.from_dict reads a recorded one)")

    @property
    def log_K(self) -> float:
        """The natural logarithm of K."""
        return math.log(self.K)

    @classmethod
    def from_dict(cls, fields: Mapping[str, Any]) -> KarlinAltschul:
        """The parameters whose ``dataclasses.asdict`` is ``fields`` (what a search store
        records; a store written before Gumbel blocks were kept has none).

        Examples
        --------
        >>> import dataclasses
        >>> ka = KarlinAltschul(0.267, 0.041, 0.14, 1.9, -30,
        ...                     gumbel=Gumbel(1.9, 42.6028, 43.6362, 0.7916, 4.96466, 12))
        >>> KarlinAltschul.from_dict(dataclasses.asdict(ka)) == ka
        True
        """
        gumbel = fields.get("gumbel")
        return cls(**{**fields, "gumbel": None if gumbel is None else Gumbel(**gumbel)})


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
    divided by ``d``, and lambda and alpha divided by ``d``. A protein scheme's
    parameters carry its Gumbel block (BLAST's blastp computes Spouge's e-values with
    it); a DNA scheme's, and parameters you give, carry none (BLAST's blastn computes
    length-adjusted e-values).

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
        tabulated scheme they replace the tabulated values, and the e-values become
        length-adjusted ones (the Gumbel block is dropped: Spouge's correction has no
        use for them).

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
    >>> ka = gapped_parameters(Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1))
    >>> ka.lambda_, ka.K, ka.H, ka.alpha, ka.beta, ka.round_down
    (0.267, 0.041, 0.14, 1.9, -30.0, False)
    >>> ka.gumbel
    Gumbel(a=1.9, alpha=42.6028, sigma=43.6362, a_ungapped=0.7916, alpha_ungapped=4.96466, gap=12.0)
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
                             beta=params.beta if beta is None else beta, gumbel=None)
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
                ungapped = rows[0]
                gumbel = Gumbel(a=row[6], alpha=row[9], sigma=row[10], a_ungapped=ungapped[6],
                                alpha_ungapped=ungapped[9], gap=gap_open + gap_extend)
                params = KarlinAltschul(row[3], row[4], row[5], row[6], row[7],
                                        gumbel=gumbel)
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
    for entry in affine:
        if (entry[0] * divisor, entry[1] * divisor) == (gap_open, gap_extend):
            params = KarlinAltschul(entry[2] / divisor, entry[3], entry[4], entry[5] / divisor,
                                    entry[6], round_down)
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


# math.erfc elementwise (numpy has none, and scipy is not a dependency)
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])


@overload
def spouge_evalue(raw: float, query_length: float, subject_length: float,
                  db_residues: float, params: KarlinAltschul) -> float: ...


@overload
def spouge_evalue(raw: ArrayLike, query_length: ArrayLike, subject_length: ArrayLike,
                  db_residues: ArrayLike, params: KarlinAltschul) -> NDArray[np.float64]: ...


def spouge_evalue(raw: ArrayLike, query_length: ArrayLike, subject_length: ArrayLike,
                  db_residues: ArrayLike, params: KarlinAltschul
                  ) -> float | NDArray[np.float64]:
    """E-values with Spouge's finite-size correction, as BLAST+'s blastp computes them.

    For a score ``y`` of a query of ``m`` residues against a subject of ``n``, each
    length ``L`` of the two contributes its expected room for an alignment,
    ``p_L = l * P(l / sqrt(v)) + sqrt(v) * phi(l / sqrt(v))`` with ``l = L - (a y + b)``,
    ``v = max(2 alpha / lambda, alpha y + beta)``, ``P`` and ``phi`` the standard normal
    distribution and density; with ``c = max(2 sigma / lambda, sigma y + tau)`` the
    e-value is ``(p_m p_n + c P_m P_n) K exp(-lambda y)``, scaled from the pair to the
    database by ``db_residues / n`` (``BLAST_SpougeStoE`` in NCBI's ``blast_stat.c``;
    its scale factor, ``kbp.Lambda / gbp.Lambda``, is 1 for swath's unscaled scores).
    Nothing is length-adjusted: ``m`` and ``n`` are the whole sequences' lengths.

    Parameters
    ----------
    raw : int or array_like of int
        Raw alignment scores.
    query_length, subject_length : int or array_like of int
        Residues in the query and in each hit's subject (> 0); they broadcast against
        ``raw``.
    db_residues : int or array_like of int
        Residues in the whole database (> 0).
    params : KarlinAltschul
        The scheme's parameters, with their Gumbel block.

    Returns
    -------
    float or numpy.ndarray
        A float when every argument is a scalar, else a float64 array.

    Raises
    ------
    InvalidParameter
        ``params`` has no Gumbel block, or a length is not positive.

    Examples
    --------
    BLASTP 2.12.0+ (BLOSUM62, 11/1, ``-comp_based_stats 0``) against 30 sequences of
    5231 residues reports, for a query of 159 residues, e-values 2.43e-60 (score 443,
    subject of 156 residues), 3.76e-08 (93, 158 residues) and 0.43 (40, 214 residues):

    >>> from swath import Scoring
    >>> ka = gapped_parameters(Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1))
    >>> float(f"{spouge_evalue(443, 159, 156, 5231, ka):.3g}")
    2.43e-60
    >>> e = spouge_evalue([93, 40], 159, [158, 214], 5231, ka)
    >>> float(f"{e[0]:.2e}"), round(float(e[1]), 2)
    (3.76e-08, 0.43)
    """
    gumbel = params.gumbel
    if gumbel is None:
        raise InvalidParameter("Spouge's e-values need the scheme's Gumbel block (BLAST's "
                               "protein tables); these parameters have none")
    y = np.asarray(raw, dtype=np.float64)
    lengths = [np.asarray(v, dtype=np.float64) for v in (query_length, subject_length,
                                                           db_residues)]
    if any((v <= 0).any() for v in lengths):
        raise InvalidParameter("query_length, subject_length and db_residues must be > 0")
    m, n, residues = lengths
    lam = params.lambda_
    variance = np.maximum(2 * gumbel.alpha / lam, gumbel.alpha * y + gumbel.beta)
    spread = np.sqrt(variance)

    def room(length: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(p_L, P_L)`` of one sequence's length."""
        left = length - (gumbel.a * y + gumbel.b)
        z = left / spread
        below = 0.5 * _ERFC(-z / math.sqrt(2))
        return left * below + spread * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi), below

    p_m, below_m = room(m)
    p_n, below_n = room(n)
    covariance = np.maximum(2 * gumbel.sigma / lam, gumbel.sigma * y + gumbel.tau)
    area = p_m * p_n + covariance * below_m * below_n
    values = area * np.exp(params.log_K - lam * y) * residues / n
    return float(values) if values.ndim == 0 else values


def least_spouge_evalue(raw: float, query_length: int, shortest: int, longest: int,
                        db_residues: int, params: KarlinAltschul) -> float:
    """The least e-value (:func:`spouge_evalue`) of a score ``raw`` of a query against a
    subject of any length from ``shortest`` to ``longest``: with the e-value falling as
    the score rises, no hit scoring at most ``raw`` has a smaller one.

    Unlike length-adjusted e-values, Spouge's depend on the subject's length, and not
    monotonically (a short subject has less room for a chance alignment). Past the
    subject length ``L* = a y + b + 10 sqrt(v)`` the normal factors of
    :func:`spouge_evalue` are 1 and 0 to double precision, so that ``E(n) n`` is linear
    in ``n`` and ``E(n)`` monotone: its least value there is at ``L*`` or ``longest``.
    Every length up to ``L*`` is evaluated.

    Examples
    --------
    >>> from swath import Scoring
    >>> ka = gapped_parameters(Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1))
    >>> least = least_spouge_evalue(93, 159, 20, 5000, 5231, ka)
    >>> bool(least <= spouge_evalue(93, 159, np.arange(20, 5001), 5231, ka).min())
    True
    """
    gumbel = params.gumbel
    if gumbel is None:
        raise InvalidParameter("Spouge's e-values need the scheme's Gumbel block (BLAST's "
                               "protein tables); these parameters have none")
    variance = max(2 * gumbel.alpha / params.lambda_, gumbel.alpha * raw + gumbel.beta)
    flat = math.ceil(gumbel.a * raw + gumbel.b + 10 * math.sqrt(variance))
    lengths = np.arange(shortest, max(shortest, min(longest, flat)) + 1)
    lengths = np.append(lengths, longest)
    return float(spouge_evalue(raw, query_length, lengths, db_residues, params).min())


def search_evalue(raw: ArrayLike, query_length: int, subject_length: ArrayLike,
                  db_residues: int, db_sequences: int, params: KarlinAltschul
                  ) -> NDArray[np.float64]:
    """E-values of one query's hits in a database, as BLAST+ computes them.

    With a Gumbel block (BLAST's protein tables) they are Spouge's
    (:func:`spouge_evalue`, from the query's and each subject's lengths), as blastp's;
    without one (BLAST's DNA tables, parameters a user gives) they are length-adjusted
    (:func:`evalue` over :func:`effective_lengths`), as blastn's.

    Parameters
    ----------
    raw : array_like of int
        The hits' raw scores.
    query_length : int
        Residues in the query.
    subject_length : array_like of int
        Residues in each hit's subject.
    db_residues, db_sequences : int
        Residues and sequences in the whole database.
    params : KarlinAltschul
        The scheme's parameters.

    Returns
    -------
    numpy.ndarray
        float64, one e-value per hit.

    Examples
    --------
    >>> from swath import Scoring
    >>> protein = gapped_parameters(Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1))
    >>> float(f"{search_evalue([443], 159, [156], 5231, 30, protein)[0]:.3g}")
    2.43e-60

    BLASTN 2.2.27+ (2/-3, gaps 5/2) reports e-value 4.0824 for a score of 32 of a query
    of 21 bases against 1331289 sequences of 1634236772 bases, whatever the subject:

    >>> dna = gapped_parameters(Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2))
    >>> search_evalue([32, 32], 21, [900, 60], 1_634_236_772, 1_331_289, dna).round(4)
    array([4.0824, 4.0824])
    """
    scores = np.atleast_1d(np.asarray(raw, dtype=np.float64))
    if params.gumbel is not None:
        return np.asarray(spouge_evalue(scores, query_length, subject_length, db_residues,
                                        params), dtype=np.float64)
    m, n = effective_lengths(query_length, db_residues, db_sequences, params)
    return np.asarray(evalue(scores, m, n, params), dtype=np.float64)
