"""The copy loop of :func:`~swath.sequences.encoding.take_concatenated`, apart so that
numba is imported where sets are cut, not by ``import swath``."""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def copy_segments(source, starts, taken, out):  # pragma: no cover - compiled
    """``out[taken[k]:taken[k + 1]]`` = ``source`` from ``starts[k]``, for every k."""
    for k in range(starts.shape[0]):
        out[taken[k]:taken[k + 1]] = source[starts[k]:starts[k] + taken[k + 1] - taken[k]]
