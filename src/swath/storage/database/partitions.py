"""How a database's targets are sorted, cut into partitions and packed into rows.

Targets are sorted by length (stable, ascending); a partition is a run of sorted targets
holding about equal numbers of residues (:func:`partition_bounds`), and is written as one
row of the ``residues`` array (:func:`fill_row`), each target at its ``start``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Partitioning", "fill_row", "partition_bounds"]

_SLICE_LENGTH = 1 << 12  # targets at least this long are copied one by one
_GATHER_RESIDUES = 1 << 22  # residues gathered at once from shorter targets


@dataclass(frozen=True)
class Partitioning:
    """Sort order and partitions of a database (all arrays of the store but residues and
    names), from the lengths of its records in file order (:meth:`build`)."""

    lengths: np.ndarray  # int64, file order
    order: np.ndarray  # int64, sorted position -> record
    rank: np.ndarray  # int64, record -> sorted position
    bounds: np.ndarray  # int64 (p + 1,)
    sizes: np.ndarray  # int64 (p,)
    starts: np.ndarray  # int64 (n,), offset of sorted target k in its partition

    @property
    def sequences(self) -> int:
        return len(self.lengths)

    @property
    def residues(self) -> int:
        return int(self.lengths.sum())

    @property
    def partitions(self) -> int:
        return len(self.sizes)

    @property
    def width(self) -> int:
        return int(self.sizes.max()) if len(self.sizes) else 0

    @staticmethod
    def build(lengths: np.ndarray, size: int) -> Partitioning:
        n = len(lengths)
        order = np.argsort(lengths, kind="stable").astype(np.int64)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        ordered = lengths[order]
        bounds = partition_bounds(ordered, size)
        before = np.concatenate([[0], np.cumsum(ordered)]).astype(np.int64)
        sizes = np.diff(before[bounds])
        part_of = np.repeat(np.arange(len(sizes)), np.diff(bounds))
        starts = before[:-1] - before[bounds[:-1]][part_of]
        return Partitioning(lengths, order, rank, bounds, sizes, starts)


def partition_bounds(lengths: np.ndarray, size: int) -> np.ndarray:
    """Cut targets (in their sorted order) into runs of about ``size`` residues each.

    The residues are split into ``ceil(total / size)`` equal shares; each target
    goes to the share in which its middle residue lies. A partition thus holds
    one share give or take one target, every partition holds at least one target
    (shares that hold no middle are dropped), and targets longer than ``size``
    get a partition each.

    Returns
    -------
    numpy.ndarray
        ``int64`` bounds: partition ``j`` holds targets ``bounds[j]:bounds[j + 1]``.

    Examples
    --------
    >>> partition_bounds(np.array([1, 1, 2, 2, 4]), 5).tolist()
    [0, 3, 5]
    >>> partition_bounds(np.array([1, 1, 1, 100]), 10).tolist()
    [0, 3, 4]
    """
    n = len(lengths)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    parts = -(-total // size)
    middles = np.cumsum(lengths) - lengths + lengths / 2  # float64: exact below 2**52
    share = np.minimum(np.floor(middles * (parts / total)), parts - 1)
    cuts = np.flatnonzero(np.diff(share)) + 1
    return np.concatenate([[0], cuts, [n]]).astype(np.int64)


def fill_row(row: np.ndarray, residues: np.ndarray, sources: np.ndarray, lengths: np.ndarray,
             starts: np.ndarray) -> None:
    """Copy targets (ascending lengths) from ``residues[sources[k]:]`` to ``row[starts[k]:]``.

    Short targets are gathered with one index array per ~4M residues; long ones
    (at the end, as lengths ascend) are copied one slice each.
    """
    lengths = lengths.astype(np.int64, copy=False)
    short = int(np.searchsorted(lengths, _SLICE_LENGTH, side="left"))
    if short:
        cum = np.cumsum(lengths[:short])
        cuts = np.searchsorted(cum, np.arange(_GATHER_RESIDUES, int(cum[-1]), _GATHER_RESIDUES),
                               side="right")
        for piece in np.split(np.arange(short), cuts):
            if not len(piece):
                continue
            lens = lengths[piece]
            total = int(lens.sum())
            local = np.cumsum(lens) - lens
            index = np.repeat(sources[piece] - local, lens) + np.arange(total)
            first = int(starts[piece[0]])
            row[first:first + total] = residues[index]
    for k in range(short, len(lengths)):
        s, length = int(sources[k]), int(lengths[k])
        row[int(starts[k]):int(starts[k]) + length] = residues[s:s + length]
