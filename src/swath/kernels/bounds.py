"""Score bounds shared by every backend: which lane width can score a pair exactly.

# m: query lengths, n: target lengths (broadcast together), values: int64.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def score_bounds(query_lengths: ArrayLike, target_lengths: ArrayLike, matrix: np.ndarray,
                 gap_open: int, gap_extend: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of every DP value for pairs of the given lengths (int64).

    Any H, E or F value of a pair, and every sum formed on the way, lies in
    ``[low, high]``; arithmetic of a width that holds both cannot overflow. In local
    mode the upper bound is left to the kernels' saturation flag (``high`` is 0).
    """
    m = np.asarray(query_lengths, dtype=np.int64)
    n = np.asarray(target_lengths, dtype=np.int64)
    top = max(int(matrix.max()), 0)
    spread = max(int(np.abs(matrix).max()), 1) + gap_open + 2 * gap_extend
    if mode == "local":
        shape = np.broadcast(m, n).shape
        return np.full(shape, -spread - gap_extend, np.int64), np.zeros(shape, np.int64)
    low = -(2 * gap_open + gap_extend * (m + n)) - spread
    return low, top * np.minimum(m, n) + top


def fits(low: np.ndarray, high: np.ndarray, dtype: np.dtype | type, gap_extend: int,
         floor: int | None = None) -> np.ndarray:
    """Where ``[low, high]`` fits ``dtype`` with room for the kernels' minus-infinity
    (``floor``, default the least value of ``dtype``)."""
    info = np.iinfo(dtype)
    least = info.min if floor is None else floor
    return (low > least + 2 * gap_extend + 1) & (high < info.max)


def saturation_ceiling(matrix: np.ndarray, dtype: np.dtype | type) -> int:
    """A local best score above this may have wrapped at the width of ``dtype``."""
    return int(np.iinfo(dtype).max) - max(int(matrix.max()), 0)


def fits_every_mode(query_length: int, target_lengths: ArrayLike, matrix: np.ndarray,
                    gap_open: int, gap_extend: int, dtype: np.dtype | type,
                    floor: int | None = None) -> np.ndarray:
    """Where every DP value of a pair, in any mode, fits ``dtype`` above ``floor`` (the
    global bounds hold local and semiglobal values too)."""
    low, high = score_bounds(query_length, target_lengths, matrix, gap_open, gap_extend,
                             "global")
    return fits(low, high, dtype, gap_extend, floor)
