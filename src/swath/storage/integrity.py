"""Digests that let a store vouch for its data.

A work unit's done mark is not a flag but a 64-bit digest of the values the unit
wrote (:func:`digest`, never 0, so 0 still means "not done"); an array written whole
(the queries of a search, the clusters of all pairs) has its digest in the store's
attributes. Reading the values back and digesting them again (:func:`check`) tells a
unit whose chunks were deleted, truncated or altered from one that is whole: a
deleted chunk reads as its fill value, which differs from what was written unless
the unit wrote exactly that, in which case the store still reads right.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

__all__ = ["check", "digest"]

_K = TypeVar("_K")


def _update(hasher: Any, values: np.ndarray) -> None:
    hasher.update(repr(values.shape).encode())
    if values.dtype.kind in "OTU":        # strings: their lengths, then their UTF-8 bytes
        text = [str(v).encode() for v in values.ravel()]
        hasher.update(np.array([len(t) for t in text], dtype=np.int64).tobytes())
        hasher.update(b"".join(text))
    else:
        hasher.update(values.dtype.str.encode())
        hasher.update(np.ascontiguousarray(values).tobytes())


def digest(*values: np.ndarray) -> int:
    """A nonzero 64-bit digest of arrays (shapes, dtypes and values), one after another.

    Strings digest the same whatever their numpy dtype (object, ``<U``, StringDType),
    so values read back from Zarr digest as the ones written.

    Examples
    --------
    >>> digest(np.arange(3)) == digest(np.arange(3)), digest(np.arange(3)) == digest(np.zeros(3))
    (True, False)
    >>> digest(np.array(["ab", "c"], dtype=object)) == digest(np.array(["ab", "c"]))
    True
    """
    hasher = hashlib.blake2b(digest_size=8)
    for value in values:
        _update(hasher, np.asarray(value))
    return int.from_bytes(hasher.digest(), "little") | 1


def check(marks: Iterable[tuple[_K, int]], read: Callable[[_K], Sequence[np.ndarray]],
          threads: int = 8) -> list[_K]:
    """The units whose values, read again by ``read(unit)``, no longer digest to their
    mark (a read that fails, a damaged chunk that cannot be decoded, counts as damage).
    Units are read on ``threads`` threads; the result keeps the order of ``marks``."""

    def damaged(item: tuple[_K, int]) -> bool:
        unit, mark = item
        try:
            return digest(*read(unit)) != mark
        except Exception:  # undecodable bytes, a missing array: the unit is damaged
            return True

    items = list(marks)
    with ThreadPoolExecutor(max(1, min(threads, len(items)))) as pool:
        flags = list(pool.map(damaged, items))
    return [unit for (unit, _), bad in zip(items, flags, strict=True) if bad]
