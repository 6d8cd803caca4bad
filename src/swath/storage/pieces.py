"""A store's inputs, kept as the pieces they were taken in as: the part of a layout that
a job's input tasks write and its work units read.

# K: pieces of a side, n: records of a piece.

Each side of a job's input (``SIDES``: a pairs job's queries and targets, an all-pairs
job's sequences) comes in pieces of whole records (:mod:`swath.sequences.pieces`), each
taken in by a task of its own, which writes the piece's arrays and then its done mark
(``{side}_done``, the digest of what it wrote, as a work unit's):

    work/{side}_pieces/{k}/residues  the piece's codes, concatenated (uncompressed); its
                                     attributes say where the piece lies in its file
                                     (``span``: its bytes, decompressed) and their
                                     ``sha256``
    work/{side}_pieces/{k}/names     its records' names, UTF-8, one after another
    work/{side}_pieces/{k}/edges     (n + 1, 2) int64 from 0: record i is residues[e[i, 0]:
                                     e[i + 1, 0]], its name names[e[i, 1]:e[i + 1, 1]]
    work/{side}_pieces/{k}/order     (n,) int64, only where a layout keeps its pieces
                                     sorted (``SORTED``): the piece's records ordered by
                                     length (stable), record i of the arrays above being
                                     the piece's record ``order[i]`` in its file
    work/{side}_pieces/{k}/qualities uint8, only where a layout keeps the side's
                                     (``QUALITIES``) and its file is FASTQ: its records' quality
                                     characters as the file gives them, laid out as
                                     ``residues`` (compressed; the residues' attribute
                                     ``qualities`` says the piece has them)
    work/{side}_done                 (K,) the pieces' done marks
    work/{side}_bounds               (K + 1,) int64, a plain file's pieces (made with the
                                     store)

A few arrays a piece, each made at its size (each array made or written costs a few
milliseconds of Python, held against the GIL, when pieces are taken in on threads side by
side: where the piece lies is in the attributes its first array is made with). Once
every piece is in, :meth:`PieceStore.index_pieces` writes ``work/{side}_records``
(K + 1,) int64, the records before each piece.

A layout whose work reads its records by length (all-pairs blocks) keeps each piece
sorted by length: the records of any run of the side's records sorted by length (stable)
are then a run of each piece's, read in a slice (:meth:`PieceStore.sorted_runs`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
import zarr
from zarr.core.array_spec import ArrayConfigParams

from swath.scoring import Alphabet
from swath.sequences.pieces import Parsed, decode_names
from swath.storage.common import LayoutStore, write_whole

__all__ = ["WRITE_ALL", "PieceStore", "piece_kind"]

# a piece's qualities (``QUALITIES``): dtype, chunk (at most), compressed (read only to
# print SAM, they compress well)
_QUALITIES: tuple[Any, int, bool] = (np.uint8, 1 << 22, True)

# every chunk written as it is: Zarr's check whether a chunk is all fill value costs a
# pass over it, and these chunks never are
WRITE_ALL: ArrayConfigParams = {"write_empty_chunks": True}


def piece_kind(side: str) -> str:
    """The kind of unit (``MARKS``) of a piece of ``side``'s input."""
    return f"{side} piece"


class PieceStore(LayoutStore):
    """A layout whose inputs are kept as pieces (a subclass names its ``SIDES``, and the
    ``MARKS`` of ``piece_kind(side)`` for each)."""

    SIDES: ClassVar[tuple[str, ...]] = ()
    #: whether each piece's records are kept sorted by length (with their ``order``)
    SORTED: ClassVar[bool] = False
    #: the sides whose FASTQ pieces keep their base qualities (SAM's QUAL of the reads)
    QUALITIES: ClassVar[frozenset[str]] = frozenset()
    #: the arrays of a piece: dtype, chunk (at most), compressed
    PIECE_ARRAYS: ClassVar[dict[str, tuple[Any, int, bool]]] = {
        "residues": (np.uint8, 1 << 22, False),
        "names": (np.uint8, 1 << 22, True),
        "edges": (np.int64, 1 << 20, True),
    }

    @classmethod
    def make_pieces(cls, group: zarr.Group, side: str, planned: np.ndarray | int) -> None:
        """The arrays of ``side``'s pieces: a plain file's bounds (``planned``, or how
        many pieces there are so far), the pieces' done marks (one chunk each: each
        piece's task writes its own), and their group."""
        if isinstance(planned, np.ndarray):
            write_whole(group, f"work/{side}_bounds", planned,
                        dimension_names=(f"{side}_piece_edge",))
        count = len(planned) - 1 if isinstance(planned, np.ndarray) else planned
        cls.create_marks(group, piece_kind(side), (count,), (f"{side}_piece",))
        group.create_group(f"work/{side}_pieces")

    def grow(self, side: str, count: int) -> None:
        """Room for the done marks of ``count`` pieces of ``side`` (a stream's, whose
        pieces are known as they come); no piece of it may be being taken in."""
        marks = self.array(f"work/{side}_done")
        if marks.shape[0] < count:
            marks.resize((count,))

    def write_piece(self, side: str, k: int, records: Parsed, span: tuple[int, int],
                    sha256: bytes) -> None:
        """Write piece ``k`` of ``side`` (sorted by length where the layout keeps them
        so): its records, where it lies in its file and the SHA-256 of its bytes; then
        its done mark."""
        kept = records if side in self.QUALITIES else dataclasses.replace(records,
                                                                          qualities=None)
        arrays = _piece_arrays(kept, self.SORTED)
        source: dict[str, Any] = {"span": list(span), "sha256": sha256.hex()}
        if "qualities" in arrays:
            source["qualities"] = True
        for name, value in arrays.items():
            dtype, chunk, compressed = self._piece_spec(name)
            array = self.group.create_array(
                f"work/{side}_pieces/{k}/{name}", shape=value.shape,
                chunks=(max(1, min(chunk, len(value))), *value.shape[1:]),   # none padded
                dtype=dtype, config=WRITE_ALL, compressors="auto" if compressed else None,
                dimension_names=(f"{side}_{name}", "edge")[:value.ndim], overwrite=True,
                attributes=source if name == "residues" else None)
            if value.size:
                array[...] = value
        self.mark(piece_kind(side), k, *arrays.values(), *_source_values(source))

    @property
    def alphabet(self) -> Alphabet:
        """The alphabet a piece's records are encoded in: the job's scoring's."""
        return self.scoring.alphabet

    def _piece_spec(self, name: str) -> tuple[Any, int, bool]:
        return self.PIECE_ARRAYS.get(name, _QUALITIES if name == "qualities"
                                     else (np.int64, 1 << 20, True))

    def piece_values(self, side: str, k: int) -> list[np.ndarray]:
        """What piece ``k`` of ``side`` wrote, read back as its mark digests it."""
        source = dict(self.piece(side, k, "residues").attrs)
        names = [*self.PIECE_ARRAYS, *(("order",) if self.SORTED else ()),
                 *(("qualities",) if source.get("qualities") else ())]
        return [*(np.asarray(self.piece(side, k, name)[...]) for name in names),
                *_source_values(source)]

    def piece(self, side: str, k: int, name: str) -> zarr.Array:
        """Array ``name`` of piece ``k`` of ``side``."""
        return self.array(f"work/{side}_pieces/{k}/{name}")

    def pieces(self, side: str) -> int:
        """How many pieces ``side`` has (so far, for a stream)."""
        return int(self.array(f"work/{side}_done").shape[0])

    def piece_sources(self, side: str, which: list[int]) -> list[tuple[int, int, bytes]]:
        """Where pieces ``which`` of ``side`` lie in their file, and their bytes' SHA-256."""
        found = []
        for k in which:
            span, sha = _source_values(dict(self.piece(side, k, "residues").attrs))
            found.append((int(span[0]), int(span[1]), sha.tobytes()))
        return found

    def index_pieces(self) -> None:
        """Write each side's records before each of its pieces (``{side}_records``)."""
        for side in self.SIDES:
            counts = [self.piece(side, k, "edges").shape[0] - 1
                      for k in range(self.pieces(side))]
            write_whole(self.group, f"work/{side}_records",
                        np.cumsum([0, *counts], dtype=np.int64),
                        dimension_names=(f"{side}_piece_edge",), overwrite=True)
        self._arrays.clear()

    def identity(self, side: str) -> str:
        """The SHA-256 of ``side``'s pieces' spans and SHA-256s, in order: the digest of a
        file's bytes as taken in, pieces and all (recorded as ``input_sha256``)."""
        digest = hashlib.sha256()
        for start, end, sha in self.piece_sources(side, list(range(self.pieces(side)))):
            digest.update(np.array([start, end], dtype="<i8").tobytes() + sha)
        return digest.hexdigest()

    # records, by their number in their side ------------------------------------------

    def piece_records(self, side: str) -> np.ndarray:
        """The records of ``side`` before each of its pieces, and all of them (K + 1,)."""
        return np.asarray(self.array(f"work/{side}_records")[...], dtype=np.int64)

    def _by_piece(self, side: str, which: np.ndarray | None
                  ) -> Iterator[tuple[int, np.ndarray | None]]:
        """The pieces of ``side`` that hold records ``which`` (sorted; None: all), each
        with the records' numbers in it (None: all of it)."""
        edges = self.piece_records(side)
        if which is None:
            yield from ((k, None) for k in range(len(edges) - 1))
            return
        which = np.asarray(which, dtype=np.int64)
        cuts = np.searchsorted(which, edges)
        for k in np.flatnonzero(np.diff(cuts)):
            yield int(k), which[cuts[k]:cuts[k + 1]] - edges[k]

    def edges(self, side: str, k: int) -> np.ndarray:
        """Where each record of piece ``k`` of ``side`` starts in its residues and names
        (``(n + 1, 2)`` int64, from 0), in the order the piece keeps them."""
        return np.asarray(self.piece(side, k, "edges")[...], dtype=np.int64)

    def _kept_at(self, side: str, k: int, local: np.ndarray | None) -> np.ndarray | None:
        """Where the piece keeps its records ``local`` (its numbers in the file; None: all,
        in file order), or None where that is where they are."""
        if not self.SORTED:
            return local
        where = np.argsort(np.asarray(self.piece(side, k, "order")[...], dtype=np.int64),
                           kind="stable")
        return where if local is None else where[local]

    def records(self, side: str, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Residues and offsets (from 0) of records ``which`` (sorted, distinct) of
        ``side``, read alone: within a piece, the records that end within a residue
        chunk's length of a record's start in one read (records paired at random cost a
        read a chunk they touch, not a read a record). Pieces kept in file order only."""
        assert not self.SORTED
        return _joined_records([_records(self.edges(side, k)[:, 0],
                                         self.piece(side, k, "residues"), local)
                                for k, local in self._by_piece(side, which)])

    def has_qualities(self, side: str) -> bool:
        """Whether ``side``'s pieces keep their records' base qualities (a FASTQ input of
        a layout that keeps them: every piece of it, or none)."""
        return self.pieces(side) > 0 and bool(
            self.piece(side, 0, "residues").attrs.get("qualities", False))

    def qualities(self, side: str, which: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """Base qualities and offsets (from 0) of records ``which`` (sorted, distinct) of
        ``side``, in that order, read alone (as :meth:`records` reads residues); None
        where the side keeps none."""
        from swath.sequences import take_concatenated

        if not self.has_qualities(side):
            return None
        parts = []
        for k, local in self._by_piece(side, which):
            edges, values = self.edges(side, k)[:, 0], self.piece(side, k, "qualities")
            at = self._kept_at(side, k, local)
            if at is None:                  # kept in file order: ``local`` as asked
                parts.append(_records(edges, values, local))
                continue
            rank = np.argsort(at, kind="stable")        # read in the piece's order
            back = np.empty_like(rank)
            back[rank] = np.arange(len(rank))
            parts.append(take_concatenated(*_records(edges, values, at[rank]), back))
        return _joined_records(parts)

    def sorted_runs(self, side: str, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
        """Residues, offsets (from 0) and numbers in the side of the records of the runs
        ``runs[k, 0]:runs[k, 1]`` of each piece ``k``'s sorted records, piece after piece
        (``SORTED`` layouts)."""
        assert self.SORTED
        parts, numbers = [], []
        first = self.piece_records(side)
        for k in np.flatnonzero(runs[:, 1] > runs[:, 0]).tolist():
            lo, hi = int(runs[k, 0]), int(runs[k, 1])
            parts.append(_records(self.edges(side, k)[:, 0], self.piece(side, k, "residues"),
                                  np.arange(lo, hi)))
            numbers.append(np.asarray(self.piece(side, k, "order")[lo:hi], dtype=np.int64)
                           + first[k])
        residues, offsets = _joined_records(parts)
        return residues, offsets, _joined(numbers, np.int64)

    def names(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        """Names of the records ``which`` of ``side`` (all by default), as str objects."""
        return self._gather(side, which, lambda k, local: np.array(
            self._piece_names(side, k, local), dtype=object), object)

    def _piece_names(self, side: str, k: int, local: np.ndarray | None) -> list[str]:
        """The names of piece ``k``'s records ``local`` (None: all, in file order)."""
        edges = self.edges(side, k)[:, 1]
        text = np.asarray(self.piece(side, k, "names")[...], dtype=np.uint8)
        kept = self._kept_at(side, k, local)
        kept = np.arange(len(edges) - 1) if kept is None else kept
        return decode_names(text, edges[kept], edges[kept + 1])

    def renames(self, side: str, rename: bool, source: str) -> dict[int, str]:
        """The new names of the records of ``side`` whose names are given more than once
        (:func:`~swath.sequences.unique_names`'s), by record number; {} where every name
        is unique. Found from the names' hashes (:func:`~swath.sequences.name_hashes`, 8
        bytes a record): only names whose hashes are alike are read.

        Raises
        ------
        InvalidInput
            A name is given twice and ``rename`` is false (as
            :func:`~swath.sequences.unique_names` says, ``source`` named).
        """
        from swath.sequences import duplicate_error, name_hashes, suffixed

        hashes = self._name_hashes(side)
        by_hash = np.argsort(hashes, kind="stable")
        ordered = hashes[by_hash]
        alike = np.flatnonzero(ordered[1:] == ordered[:-1])
        records = np.unique(np.concatenate([by_hash[alike], by_hash[alike + 1]]))
        given: dict[str, list[int]] = {}
        for record, name in zip(records.tolist(), self.names(side, records).tolist(),
                                strict=True):
            given.setdefault(name, []).append(record)
        twice = {name: found for name, found in given.items() if len(found) > 1}
        if twice and not rename:
            name, found = min(twice.items(), key=lambda item: item[1][1])
            raise duplicate_error(name, found[0], found[1], source)

        def taken(name: str) -> bool:
            text = np.frombuffer(name.encode(), dtype=np.uint8)
            key = name_hashes(text, np.array([0, len(text)]))[0]
            lo, hi = (int(np.searchsorted(ordered, key, side)) for side in ("left", "right"))
            return hi > lo and name in self.names(side, np.sort(by_hash[lo:hi])).tolist()

        return {record: new for name, found in twice.items()
                for record, new in zip(found[1:], suffixed(name, len(found), taken),
                                       strict=True)}

    def _name_hashes(self, side: str) -> np.ndarray:
        """The hash of every record's name of ``side`` (uint64), in the input's order."""
        from swath.sequences import name_hashes

        first = self.piece_records(side)
        hashes = np.empty(int(first[-1]), dtype=np.uint64)
        for k in range(len(first) - 1):
            text = np.asarray(self.piece(side, k, "names")[...], dtype=np.uint8)
            found = name_hashes(text, self.edges(side, k)[:, 1])
            where = self._kept_at(side, k, None)
            hashes[first[k]:first[k + 1]] = found if where is None else found[where]
        return hashes

    def lengths(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        """Lengths (int64) of the records ``which`` of ``side`` (all by default)."""

        def read(k: int, local: np.ndarray | None) -> np.ndarray:
            lengths = np.diff(self.edges(side, k)[:, 0])
            kept = self._kept_at(side, k, local)
            return lengths if kept is None else lengths[kept]

        return self._gather(side, which, read, np.int64)

    def _gather(self, side: str, which: np.ndarray | None,
                read: Callable[[int, np.ndarray | None], np.ndarray], dtype: Any
                ) -> np.ndarray:
        """``read(piece, records)`` of each piece holding records ``which`` (in any order,
        repeats allowed; None: all), in the order asked."""
        if which is None:
            return _joined([read(k, None) for k, _ in self._by_piece(side, None)], dtype)
        which = np.asarray(which, dtype=np.int64)
        order = np.argsort(which, kind="stable")
        found = np.empty(len(which), dtype=dtype)
        found[order] = _joined([read(k, local) for k, local
                                in self._by_piece(side, which[order])], dtype)
        return found

    def count(self, side: str) -> int:
        """How many records ``side`` has."""
        return int(np.asarray(self.array(f"work/{side}_records")[-1:])[0])


def _piece_arrays(records: Parsed, by_length: bool) -> dict[str, np.ndarray]:
    """The arrays of a piece: its records as parsed, or sorted by length with their
    ``order``; their qualities last, where they have them."""
    offsets, name_offsets = records.offsets, records.name_offsets
    qualities = records.qualities
    if not by_length:
        edges = np.stack([offsets, name_offsets], axis=1).astype(np.int64)
        arrays = {"residues": records.residues, "names": records.names, "edges": edges}
    else:
        order = np.argsort(np.diff(offsets), kind="stable")
        residues, new_offsets = _take_runs(records.residues, offsets, order)
        names, new_names = _take_runs(records.names, name_offsets, order)
        edges = np.stack([new_offsets, new_names], axis=1).astype(np.int64)
        arrays = {"residues": residues, "names": names, "edges": edges,
                  "order": order.astype(np.int64)}
        qualities = None if qualities is None else _take_runs(qualities, offsets, order)[0]
    return arrays if qualities is None else arrays | {"qualities": qualities}


def _take_runs(values: np.ndarray, offsets: np.ndarray, order: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Runs ``values[offsets[i]:offsets[i + 1]]`` for i in ``order``, one after another,
    and their offsets (from 0)."""
    starts = offsets[:-1][order].astype(np.int64)
    lengths = (offsets[1:] - offsets[:-1])[order].astype(np.int64)
    out = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    at = np.arange(int(out[-1]), dtype=np.int64) + np.repeat(starts - out[:-1], lengths)
    return values[at], out


def _source_values(source: dict[str, Any]) -> list[np.ndarray]:
    """Where a piece lies and its SHA-256 (its residues' attributes) as its mark digests
    them."""
    return [np.asarray(source["span"], dtype=np.int64),
            np.frombuffer(bytes.fromhex(source["sha256"]), dtype=np.uint8)]


def _joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _joined_records(parts: list[tuple[np.ndarray, np.ndarray]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Runs of records (residues, offsets from 0) one after another."""
    if not parts:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    ends = np.cumsum([0] + [len(residues) for residues, _ in parts])
    return (np.concatenate([residues for residues, _ in parts]),
            np.concatenate([[0]] + [offsets[1:] + end for (_, offsets), end
                                    in zip(parts, ends, strict=False)]))


def _records(offsets: np.ndarray, residues: zarr.Array, which: np.ndarray | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """Residues and offsets (from 0) of records ``which`` (sorted, distinct; None: all)
    of one piece (``offsets``: its records')."""
    if which is None:
        return np.asarray(residues[...], dtype=np.uint8), offsets
    if not len(which):
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    if which[-1] - which[0] + 1 == len(which):      # one run (which is distinct, sorted)
        edges = offsets[int(which[0]):int(which[-1]) + 2]
        return np.asarray(residues[edges[0]:edges[-1]], dtype=np.uint8), edges - edges[0]
    starts, ends = offsets[which], offsets[which + 1]
    lengths = ends - starts
    out = np.zeros(len(which) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    taken = np.empty(int(out[-1]), dtype=np.uint8)
    first = 0
    while first < len(which):
        last = max(first + 1, int(np.searchsorted(ends, starts[first] + residues.chunks[0],
                                                  side="right")))
        base = int(starts[first])
        block = np.asarray(residues[base:int(ends[last - 1])], dtype=np.uint8)
        if len(block) == out[last] - out[first]:    # no gap (a record longer than a chunk)
            taken[out[first]:out[last]] = block
        else:                                       # a chunk's span at most: gather
            at = np.arange(out[first], out[last]) + np.repeat(
                starts[first:last] - base - out[first:last], lengths[first:last])
            taken[out[first]:out[last]] = block[at]
        first = last
    return taken, out
