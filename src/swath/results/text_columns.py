"""Lines of text built from columns in numpy, for writers of millions of rows.

# n: rows, b: bytes of a column (all rows end to end)

A column is :class:`Ragged`: one byte string per row, end to end in one ``uint8`` array
with ``n + 1`` offsets. Integers become decimal digits (:func:`decimal`), strings bytes
(:func:`encoded`); :func:`joined` lays columns side by side, row by row, with constant
separators between them, in one scatter per column (no Python object per cell).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Ragged", "decimal", "encoded", "joined"]

_POWERS = 10 ** np.arange(19, dtype=np.int64)


@dataclass(frozen=True)
class Ragged:
    """One byte string per row: row ``i`` is ``data[offsets[i]:offsets[i + 1]]``, the rows
    end to end (``offsets`` from 0 to ``len(data)``).

    Examples
    --------
    >>> column = Ragged(np.frombuffer(b"abcd", np.uint8), np.array([0, 1, 1, 4]))
    >>> len(column), column.lengths.tolist(), column.text()
    (3, [1, 0, 3], 'abcd')
    """

    data: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> npt.NDArray[np.int64]:
        return np.diff(self.offsets)

    def text(self) -> str:
        """All rows end to end, decoded (UTF-8)."""
        return self.data.tobytes().decode()

    def grouped(self, first: npt.NDArray[np.int64]) -> Ragged:
        """Consecutive rows joined: new row ``g`` is rows ``first[g]:first[g + 1]``."""
        return Ragged(self.data, self.offsets[first])

    def where(self, keep: npt.NDArray[np.bool_]) -> Ragged:
        """The rows where ``keep`` holds; the others empty."""
        if keep.all():
            return self
        lengths = np.where(keep, self.lengths, 0)
        offsets = _offsets(lengths)
        kept = _positions(self.offsets[:-1], offsets[:-1], lengths)
        return Ragged(self.data[kept], offsets)


def _offsets(lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _positions(starts: npt.NDArray[np.int64], ends_before: npt.NDArray[np.int64],
               lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``starts[i] + 0, 1, ..., lengths[i] - 1`` for every ``i``, end to end;
    ``ends_before``: the sum of the lengths before each ``i``."""
    shift = np.repeat(starts - ends_before, lengths)
    return shift + np.arange(len(shift), dtype=np.int64)


def decimal(values: npt.ArrayLike, suffix: npt.ArrayLike | None = None) -> Ragged:
    """Integers in decimal, as ``str(int)`` writes them, each followed by its byte of
    ``suffix`` (ASCII codes) if given.

    Examples
    --------
    >>> decimal([0, 7, -12, 1000]).text()
    '07-121000'
    >>> decimal([3, 12], suffix=np.frombuffer(b"=X", np.uint8)).text()
    '3=12X'
    """
    v = np.asarray(values, dtype=np.int64)
    size = np.maximum(np.searchsorted(_POWERS, np.abs(v), side="right"), 1)
    negative = v < 0
    offsets = _offsets(size + negative + (suffix is not None))
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    data[offsets[:-1][negative]] = ord("-")
    ends = offsets[1:] - 1
    if suffix is not None:
        data[ends] = suffix
        ends -= 1
    rest = np.abs(v)
    for place in range(int(size.max(initial=0))):
        has = size > place
        data[ends[has] - place] = ord("0") + rest[has] % 10
        rest //= 10
    return Ragged(data, offsets)


def encoded(strings: Sequence[str] | npt.NDArray[Any]) -> Ragged:
    """Strings as UTF-8.

    Examples
    --------
    >>> encoded(["ab", "", "é"]).lengths.tolist()
    [2, 0, 2]
    """
    data = np.frombuffer("".join(strings).encode(), dtype=np.uint8)
    lengths = np.fromiter(map(len, strings), np.int64, len(strings))
    if len(data) != lengths.sum():       # beyond ASCII: lengths in bytes
        lengths = np.fromiter((len(s.encode()) for s in strings), np.int64, len(strings))
    return Ragged(data, _offsets(lengths))


def joined(columns: Sequence[Ragged | str]) -> Ragged:
    """Row ``i`` of every column, side by side (a ``str`` is the same on every row).

    Examples
    --------
    >>> joined([decimal([1, 22]), "\\t", encoded(["a", "bc"]), "\\n"]).text()
    '1\\ta\\n22\\tbc\\n'
    """
    rows = next(len(c) for c in columns if isinstance(c, Ragged))
    pieces = [np.frombuffer(c.encode(), np.uint8) if isinstance(c, str) else c for c in columns]
    lengths = np.zeros(rows, dtype=np.int64)
    for piece in pieces:
        lengths += len(piece) if isinstance(piece, np.ndarray) else piece.lengths
    offsets = _offsets(lengths)
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    at = offsets[:-1].copy()                 # where each row's next column goes
    for piece in pieces:
        if isinstance(piece, np.ndarray):
            for k, byte in enumerate(piece.tolist()):
                data[at + k] = byte
            at += len(piece)
        else:
            size = piece.lengths
            data[_positions(at, piece.offsets[:-1], size)] = piece.data
            at += size
    return Ragged(data, offsets)
