"""What both tile kernels (CPU and GPU) share: origin codes and the tile-size limit.

Inside a tile kernel an origin is tile-local, ``(row * (w + 1) + column) * 4 + state``
over the tile's ``(h + 1) x (w + 1)`` cells (row and column 0: its input boundary),
in 32 bits; outside, it is matrix-wide, ``cell * 4 + state`` over ``(m + 1) x (n + 1)``
(states: ``swath.constants.STATE_*``).
"""

from __future__ import annotations

import numpy as np

from swath.errors import InvalidParameter

MAX_TILE = 16384        # the largest square tile whose tile-local origins fit 32 bits

Best = tuple[int, int, int, int]


def check_origins(h: int, w: int) -> None:
    """Refuse a tile whose tile-local origins would not fit 32 bits."""
    if (h + 1) * (w + 1) * 4 >= 1 << 31:
        raise InvalidParameter(f"a {h} x {w} tile is too large to carry origins (tile-local "
                               f"origins are 32-bit): at most {MAX_TILE} a side")


def matrix_wide(bottom: np.ndarray, right: np.ndarray, best: np.ndarray,
                corner: tuple[int, int], w: int, n: int) -> Best:
    """Turn the tile-local origins of ``bottom[2:]`` and ``right[2:]`` matrix-wide, in
    place, and return the tile's best cell ``(score, i, j, origin)`` matrix-wide
    (``best`` holds it tile-local; ``(0, -1, -1, -1)`` when no cell scores above 0,
    and in global modes, which track none)."""

    def convert(code: np.ndarray) -> np.ndarray:
        cell, state = np.divmod(code, 4)
        row, column = np.divmod(cell, w + 1)
        return ((corner[0] + row) * (n + 1) + corner[1] + column) * 4 + state

    bottom[2:] = convert(bottom[2:])
    right[2:] = convert(right[2:])
    score, i, j = (int(x) for x in best[:3])
    if i < 0:
        return 0, -1, -1, -1
    return score, corner[0] + i, corner[1] + j, int(convert(best[3:])[0])
