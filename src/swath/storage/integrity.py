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

import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

__all__ = ["Digest", "check", "digest", "digest_bytes", "digest_string_chunks",
           "digest_strings", "utf8_bytes"]

_K = TypeVar("_K")


def _parts(values: np.ndarray) -> list[bytes | memoryview]:
    """What a digest reads of an array: its shape, its dtype and its bytes (of strings,
    their lengths and their UTF-8 bytes, whatever their numpy dtype; of bytes objects,
    their lengths and their bytes)."""
    if values.dtype.kind == "O" and values.size and isinstance(values.flat[0], bytes):
        items = values.ravel().tolist()
        return _ragged_parts(values.shape, b"bytes",
                             np.fromiter(map(len, items), np.int64, len(items)), b"".join(items))
    if values.dtype.kind in "OTU":
        data, lengths = utf8_bytes(values.ravel())
        return _string_parts(values.shape, lengths, data)
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    return [repr(values.shape).encode(), values.dtype.str.encode(), flat.data]


def utf8_bytes(strings: Iterable[Any]) -> tuple[bytes, np.ndarray]:
    """The UTF-8 bytes of ``strings`` one after another, and each one's length in bytes
    (int64).

    Examples
    --------
    >>> utf8_bytes(["ab", "é", ""])
    (b'ab\\xc3\\xa9', array([2, 2, 0]))
    """
    strings = [str(v) for v in strings]
    joined = "".join(strings)
    if joined.isascii():        # a character a byte: the lengths without encoding each
        return (joined.encode("ascii"),
                np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)))
    text = [v.encode() for v in strings]
    return b"".join(text), np.array([len(t) for t in text], dtype=np.int64)


def _string_parts(shape: tuple[int, ...], lengths: np.ndarray, data: bytes | memoryview
                  ) -> list[bytes | memoryview]:
    return _ragged_parts(shape, b"str", lengths, data)


def _ragged_parts(shape: tuple[int, ...], kind: bytes, lengths: np.ndarray,
                  data: bytes | memoryview) -> list[bytes | memoryview]:
    return [repr(shape).encode(), kind, np.ascontiguousarray(lengths, dtype=np.int64)
            .view(np.uint8).data, data]


class Digest:
    """A :func:`digest` fed one array at a time (:meth:`update`), so that an array
    written or read in pieces is digested without being held whole: the digest of
    pieces ``a, b`` is ``digest(a, b)``."""

    def __init__(self) -> None:
        self._crc, self._adler = 0, 1

    def update(self, value: np.ndarray) -> None:
        """Digest one more array after those before."""
        self._feed(_parts(np.asarray(value)))

    def _feed(self, parts: list[bytes | memoryview]) -> None:
        for part in parts:
            self._crc, self._adler = zlib.crc32(part, self._crc), zlib.adler32(part, self._adler)

    @property
    def value(self) -> int:
        """The digest of the arrays so far (nonzero)."""
        return (self._crc << 32 | self._adler) | 1


def digest(*values: np.ndarray) -> int:
    """A nonzero 64-bit digest of arrays (shapes, dtypes and values), one after another:
    CRC-32 and Adler-32 side by side (zlib's: fast enough to check every database
    partition as it is read). It detects damage, not tampering.

    Strings digest the same whatever their numpy dtype (object, ``<U``, StringDType),
    so values read back from Zarr digest as the ones written.

    Examples
    --------
    >>> digest(np.arange(3)) == digest(np.arange(3)), digest(np.arange(3)) == digest(np.zeros(3))
    (True, False)
    >>> digest(np.array(["ab", "c"], dtype=object)) == digest(np.array(["ab", "c"]))
    True
    """
    return _digest_all(values)


def digest_strings(text: np.ndarray, lengths: np.ndarray) -> int:
    """:func:`digest` of a 1-D array of strings given as their UTF-8 bytes one after
    another (uint8) and their lengths in bytes: the same value, without a string object.

    Examples
    --------
    >>> text = np.frombuffer("3=é".encode(), np.uint8)
    >>> digest_strings(text, np.array([2, 2])) == digest(np.array(["3=", "é"]))
    True
    """
    total = Digest()
    total._feed(_string_parts((len(lengths),), lengths, np.ascontiguousarray(text).data))
    return total.value


def digest_string_chunks(count: int,
                         chunks: Callable[[], Iterable[tuple[bytes, np.ndarray]]]) -> int:
    """:func:`digest` of a 1-D array of ``count`` strings given a chunk at a time, each as
    its strings' UTF-8 bytes and their lengths (:func:`utf8_bytes`): the same value, never
    holding them all. ``chunks()`` is gone through twice (the digest reads every length
    before any byte).

    Examples
    --------
    >>> names = np.array(["a", "bc", "é"], dtype=object)
    >>> found = digest_string_chunks(3, lambda: (utf8_bytes(names[i:i + 2]) for i in (0, 2)))
    >>> found == digest(names)
    True
    """
    total = Digest()
    total._feed([repr((count,)).encode(), b"str"])
    for _, lengths in chunks():
        total._feed([np.ascontiguousarray(lengths, dtype=np.int64).view(np.uint8).data])
    for data, _ in chunks():
        total._feed([data])
    return total.value


def digest_bytes(data: np.ndarray, lengths: np.ndarray) -> int:
    """:func:`digest` of a 1-D object array of bytes given as their bytes one after
    another (uint8) and their lengths: the same value, without a bytes object.

    Examples
    --------
    >>> data = np.frombuffer(b"abc", np.uint8)
    >>> digest_bytes(data, np.array([1, 2])) == digest(np.array([b"a", b"bc"], dtype=object))
    True
    """
    total = Digest()
    total._feed(_ragged_parts((len(lengths),), b"bytes", lengths,
                              np.ascontiguousarray(data).data))
    return total.value


def _digest_all(values: Iterable[np.ndarray]) -> int:
    total = Digest()
    for value in values:
        total.update(value)
    return total.value


def check(marks: Iterable[tuple[_K, int]], read: Callable[[_K], Iterable[np.ndarray]],
          threads: int = 8) -> list[_K]:
    """The units whose values, read again by ``read(unit)``, no longer digest to their
    mark (a read that fails, a damaged chunk that cannot be decoded, counts as damage).
    ``read`` may yield a unit's values one at a time (an array read in pieces). Units are
    read on ``threads`` threads; the result keeps the order of ``marks``."""

    def damaged(item: tuple[_K, int]) -> bool:
        unit, mark = item
        try:
            return _digest_all(read(unit)) != mark
        except Exception:  # undecodable bytes, a missing array: the unit is damaged
            return True

    items = list(marks)
    with ThreadPoolExecutor(max(1, min(threads, len(items)))) as pool:
        flags = list(pool.map(damaged, items))
    return [unit for (unit, _), bad in zip(items, flags, strict=True) if bad]
