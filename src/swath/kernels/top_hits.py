"""The top-k order of hits, as one int64 key a hit: what both backends rank by.

# Q: queries (rows), N: hits of a row, k: hits kept.

A hit's key is ``-(score << 32) + id``: ascending keys are the top-k order (score
descending, then id ascending), and an id of -1 (padding) keys ``2**32 - 1``, last.
Exact for scores above int32's minimum (kernels never return it; ``PADDING`` pads)
and ids below ``2**32 - 1`` (records of a database). The GPU makes and sorts the keys
where its scores are (``swath.kernels.gpu.resident``); both decode them here.
"""

from __future__ import annotations

import numpy as np

PADDING = np.iinfo(np.int32).min + 1   # the score of a padding hit: below every score
_LAST = (1 << 32) - 1   # the low 32 bits of the key of an id of -1 (padding): sorts last


def keys(scores: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The key of every hit, int64, ``scores``' shape."""
    return -(scores.astype(np.int64) << 32) + np.where(ids < 0, _LAST, ids)


def top_of_keys(key: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids) of the k smallest keys of each row, in order; short rows padded
    with score ``PADDING`` and id -1 (whose key is the int64 maximum)."""
    rows, n = key.shape
    if n > k:
        key = np.partition(key, k - 1, axis=1)[:, :k]
    key = np.sort(key, axis=1)
    if n < k:
        key = np.concatenate([key, np.full((rows, k - n), np.iinfo(np.int64).max)], axis=1)
    ids = key & _LAST
    return -(key >> 32), np.where(ids == _LAST, -1, ids)


def top(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best of each row: highest score, then lowest id; short rows padded with
    score ``PADDING`` and id -1.

    Examples
    --------
    >>> top(np.array([[5, 9, 9]]), np.array([[10, 3, 1]]), 2)[1].tolist()
    [[1, 3]]
    """
    return top_of_keys(keys(scores, ids), k)
