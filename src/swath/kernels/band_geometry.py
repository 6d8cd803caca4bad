"""A pair's band of diagonals clipped to its DP matrix, shared by every backend (NumPy
only: the GPU backend imports no numba).

# m: query lengths, n: target lengths, d = i - j: the diagonal of cell (i, j).
"""

from __future__ import annotations

import numpy as np

SKIPPED = int(np.iinfo(np.int32).min)   # the score of a pair whose band is empty


def clip_bands(q_off: np.ndarray, t_off: np.ndarray, lo: np.ndarray, hi: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair's band clipped to its DP matrix (first and last diagonal), and whether it
    holds a path (both diagonal 0 and ``m - n``). NumPy or CuPy arrays (NumPy's functions
    dispatch to CuPy's)."""
    m, n = np.diff(q_off)[:, None], np.diff(t_off)[None, :]
    first, last = np.maximum(lo, -n), np.minimum(hi, m)
    return first, last, (first <= np.minimum(0, m - n)) & (last >= np.maximum(0, m - n))


def clipped_bands(q_off: np.ndarray, t_off: np.ndarray, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Diagonals of each pair's band once clipped to its DP matrix (0 where empty), and
    whether it holds a path."""
    first, last, holds = clip_bands(q_off, t_off, lo, hi)
    return np.maximum(last - first + 1, 0), holds
