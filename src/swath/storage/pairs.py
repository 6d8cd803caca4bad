"""The store of a batched-pairs job: layout "pairs", version 3.

# P: pairs, Q: query records, T: target records, K: pieces of a side, C: pairs per chunk,
# U: chunks (ceil(P / C)).

What a user reads is at the root, as xarray opens it: the per-pair fields along
dimension ``pair`` (and the records of each pair, for pairs not by position). The job
keeps for itself, in the group ``work`` (every path below but the per-pair ones is in
it), its inputs and its done marks. The job's inputs are kept in the store, so that
``swath resume`` of a job whose inputs are in needs nothing but the store, and each
chunk's task reads only its own residues.
Each side's input comes in pieces of whole records (:mod:`swath.sequences.pieces`), each
taken in by a task of its own, which writes the piece's arrays and then its done mark
(``{side}_done``, the digest of what it wrote, as a chunk's):

    {side}_pieces/{k}/residues   the piece's codes, concatenated (uncompressed); its
                                 attributes say where the piece lies in its file
                                 (``span``: its bytes, decompressed) and their ``sha256``
    {side}_pieces/{k}/names      its records' names, UTF-8, one after another
    {side}_pieces/{k}/edges      (n + 1, 2) int64 from 0: record i is residues[e[i, 0]:
                                 e[i + 1, 0]], its name names[e[i, 1]:e[i + 1, 1]]
    {side}_done                  (K,) the pieces' done marks
    {side}_bounds                (K + 1,) int64, a plain file's pieces (made with the store)

Three arrays a piece, each made at its size (each array made or written costs a few
milliseconds of Python, held against the GIL, when pieces are taken in on threads side by
side: where the piece lies is in the attributes its first array is made with).

Once every piece is in, one task indexes them (:meth:`PairsStore.index`):

    {side}_records               (K + 1,) int64: the records before each piece (record r
                                 of the side is in the piece k with records[k] <= r <
                                 records[k + 1])
    pair_query, pair_target      (P,) int64, only for pairs given by index or name: the
                                 records of each pair (without them pair i is query i with
                                 target i, ``"paired": "position"``); pairs given by name
                                 are kept as ``pair_{query,target}_name`` (and their
                                 lines of a pairs file, ``pair_line``) until then

records each input's identity (``input_sha256``: the SHA-256 of its pieces' spans and
SHA-256s, in order), and makes the per-pair arrays, chunks (C,), dimension ``pair``: the
fields of :data:`PAIR_FIELDS` (score; 0-based, end-exclusive coordinates; columns, matches,
mismatches, gap opens; identity, matches over columns; ``cigar``, variable-length bytes:
each pair's CIGAR as BAM's packed operations, little-endian uint32 ``length << 4 | op``,
:mod:`swath.alignment`; ``np.frombuffer(ds.cigar.values[i], "<u4")``). A chunk of
pairs is the unit of work: its task writes its chunk of every field, then its mark in
``work/done`` (U,), the digest of what it wrote. Arrays written whole record their digests
in the attributes. Version 2 kept the CIGARs as strings, version 1 each side's records in
three whole arrays; their stores are refused (``FormatVersionError``), not converted: run
the job again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
import zarr
from zarr.core.array_spec import ArrayConfigParams

from swath.alignment import packed_cigars, unpacked_cigars
from swath.sequences.pieces import Parsed, decode_names
from swath.storage.common import LayoutStore, StorePath, display, update_attrs, write_whole

__all__ = ["LAYOUT", "PAIR_FIELDS", "SIDES", "VERSION", "PairsStore", "piece_kind"]

LAYOUT = "pairs"
# 1: each side's records in three whole arrays; 2: the CIGARs as strings
VERSION = 3

INDEX_CHUNK = 1 << 20

# per-pair fields: dtype and the value of a pair not aligned yet
PAIR_FIELDS: dict[str, tuple[Any, Any]] = {
    "score": (np.int32, 0),
    "query_start": (np.int32, 0),
    "query_end": (np.int32, 0),
    "target_start": (np.int32, 0),
    "target_end": (np.int32, 0),
    "length": (np.int32, 0),
    "matches": (np.int32, 0),
    "mismatches": (np.int32, 0),
    "gap_opens": (np.int32, 0),
    "identity": (np.float64, np.nan),
    "cigar": (bytes, b""),      # packed operations (swath.alignment.packed_cigars)
}

SIDES = ("query", "target")
# the arrays of a piece: dtype, chunk (at most), compressed
PIECE_ARRAYS: dict[str, tuple[Any, int, bool]] = {
    "residues": (np.uint8, 1 << 22, False),
    "names": (np.uint8, 1 << 22, True),
    "edges": (np.int64, 1 << 20, True),
}


def piece_kind(side: str) -> str:
    """The kind of unit (``PairsStore.MARKS``) of a piece of ``side``'s input."""
    return f"{side} piece"


# every chunk written as it is: Zarr's check whether a chunk is all fill value costs a
# pass over it, and these chunks never are
WRITE_ALL: ArrayConfigParams = {"write_empty_chunks": True}


class PairsStore(LayoutStore):
    """A batched-pairs result store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    VERSION = VERSION
    MARKS: ClassVar[dict[str, str]] = {"chunk": "work/done",
                                       "query piece": "work/query_done",
                                       "target piece": "work/target_done"}
    UNIT_NAMES: ClassVar[dict[str, str]] = {"chunk": "chunks of pairs",
                                            "query piece": "pieces of the queries",
                                            "target piece": "pieces of the targets"}
    INPUT_KINDS: ClassVar[frozenset[str]] = frozenset({"query piece", "target piece"})

    @classmethod
    def create(cls, path: StorePath, pieces: dict[str, np.ndarray | int],
               fill: Callable[[PairsStore], None], *, replace: bool = False,
               **fields: Any) -> PairsStore:
        """Create a store, whole or not at all, ready to take its inputs in: per side, the
        done marks of its pieces, ``pieces[side]`` (a plain file's bounds, recorded, or
        how many pieces there are so far); then ``fill(store)`` writes what the client
        holds (pieces in memory, the pairs asked for). ``fields`` go to the root
        attributes (``paired``: ``"position"`` or ``"index"``), ``replace`` replaces a
        store at ``path``."""

        def build(group: zarr.Group) -> None:
            for side, planned in pieces.items():
                cls._make_side(group, side, planned)
            fill(cls(display(path), group, {}))

        return cls._create(path, fields, build, replace=replace)

    @classmethod
    def _make_side(cls, group: zarr.Group, side: str, planned: np.ndarray | int) -> None:
        """The arrays of ``side``'s pieces: a plain file's bounds, the pieces' done marks
        (one chunk each: each piece's task writes its own), and their group."""
        if isinstance(planned, np.ndarray):
            write_whole(group, f"work/{side}_bounds", planned,
                        dimension_names=(f"{side}_piece_edge",))
        count = len(planned) - 1 if isinstance(planned, np.ndarray) else planned
        cls.create_marks(group, piece_kind(side), (count,), (f"{side}_piece",))
        group.create_group(f"work/{side}_pieces")

    # inputs ------------------------------------------------------------------------

    def grow(self, side: str, count: int) -> None:
        """Room for the done marks of ``count`` pieces of ``side`` (a stream's, whose
        pieces are known as they come); no piece of it may be being taken in."""
        marks = self.array(f"work/{side}_done")
        if marks.shape[0] < count:
            marks.resize((count,))

    def write_piece(self, side: str, k: int, records: Parsed, span: tuple[int, int],
                    sha256: bytes) -> None:
        """Write piece ``k`` of ``side``: its records, where it lies in its file and the
        SHA-256 of its bytes; then its done mark."""
        edges = np.stack([records.offsets, records.name_offsets], axis=1).astype(np.int64)
        values = [records.residues, records.names, edges]
        source: dict[str, Any] = {"span": list(span), "sha256": sha256.hex()}
        for (name, (dtype, chunk, compressed)), value in zip(PIECE_ARRAYS.items(), values,
                                                             strict=True):
            array = self.group.create_array(
                f"work/{side}_pieces/{k}/{name}", shape=value.shape,
                chunks=(max(1, min(chunk, len(value))), *value.shape[1:]),   # none padded
                dtype=dtype, config=WRITE_ALL, compressors="auto" if compressed else None,
                dimension_names=(f"{side}_{name}", "edge")[:value.ndim], overwrite=True,
                attributes=source if name == "residues" else None)
            if value.size:
                array[...] = value
        self.mark(piece_kind(side), k, *values, *_source_values(source))

    def piece(self, side: str, k: int, name: str) -> zarr.Array:
        """Array ``name`` (of ``PIECE_ARRAYS``) of piece ``k`` of ``side``."""
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

    def index(self, pairs: Callable[[PairsStore], tuple[np.ndarray, np.ndarray] | None],
              chunk: Callable[[int, int], int]) -> None:
        """Index every piece (``{side}_records``), then make the pairs: ``pairs(self)``
        gives the records of each (None: by position), ``chunk(pairs, cells)`` the pairs
        per chunk; the per-pair arrays and their done marks are made, and the attributes
        ``pairs``, ``chunk``, ``units`` and ``cells`` written last. Done again from the
        start if interrupted."""
        for side in SIDES:
            counts = [self.piece(side, k, "edges").shape[0] - 1
                      for k in range(self.pieces(side))]
            write_whole(self.group, f"work/{side}_records",
                        np.cumsum([0, *counts], dtype=np.int64),
                        dimension_names=(f"{side}_piece_edge",), overwrite=True)
        self._arrays.clear()
        given = pairs(self)
        if given is None:
            count = self.count("query")
            cells = int(np.dot(self.lengths("query"), self.lengths("target")))
        else:
            for side, records in zip(SIDES, given, strict=True):
                write_whole(self.group, f"pair_{side}", records.astype(np.int64),
                            chunks=(INDEX_CHUNK,), dimension_names=("pair",), overwrite=True)
            count = len(given[0])
            cells = int(np.dot(self.lengths("query")[given[0]],
                               self.lengths("target")[given[1]]))
        per_chunk = chunk(count, cells)
        self.create_fields(PAIR_FIELDS, shape=(count,), chunks=(max(per_chunk, 1),),
                           dimension_names=("pair",), config=WRITE_ALL, overwrite=True)
        units = -(-count // per_chunk) if per_chunk else 0
        self.create_marks(self.group, "chunk", (units,), ("chunk",), overwrite=True)
        update_attrs(self.group, input_sha256={side: self.identity(side) for side in SIDES},
                     pairs=count, chunk=per_chunk, units=units, cells=cells)
        self.reload_attrs()

    def identity(self, side: str) -> str:
        """The SHA-256 of ``side``'s pieces' spans and SHA-256s, in order: the digest of a
        file's bytes as taken in, pieces and all (recorded as ``input_sha256``)."""
        digest = hashlib.sha256()
        for start, end, sha in self.piece_sources(side, list(range(self.pieces(side)))):
            digest.update(np.array([start, end], dtype="<i8").tobytes() + sha)
        return digest.hexdigest()

    @property
    def indexed(self) -> bool:
        """Whether the inputs are all in and indexed (:meth:`index`)."""
        return "pairs" in self.attrs

    # pairs ---------------------------------------------------------------------------

    @property
    def pairs(self) -> int:
        return int(self.attrs["pairs"])

    @property
    def units(self) -> int:
        return int(self.attrs["units"])

    @property
    def by_position(self) -> bool:
        return bool(self.attrs["paired"] == "position")

    @property
    def cells(self) -> int:
        """The matrix cells of all pairs."""
        return int(self.attrs["cells"])

    def column(self, name: str, first: int = 0, last: int | None = None) -> np.ndarray:
        """Per-pair field ``name`` of pairs ``first:last`` (the CIGARs as strings)."""
        values = np.asarray(self.array(name)[first:last])
        return unpacked_cigars(values) if name == "cigar" else values

    def unit_pairs(self, unit: int) -> tuple[int, int]:
        """The pair range ``[first, last)`` of chunk ``unit``."""
        chunk = int(self.attrs["chunk"])
        return unit * chunk, min((unit + 1) * chunk, self.pairs)

    def pair_records(self, first: int = 0, last: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The query and target record of pairs ``first:last``."""
        last = self.pairs if last is None else last
        if self.by_position:
            records = np.arange(first, last, dtype=np.int64)
            return records, records
        return (np.asarray(self.array("pair_query")[first:last], dtype=np.int64),
                np.asarray(self.array("pair_target")[first:last], dtype=np.int64))

    # records, by their number in their side ------------------------------------------

    def _by_piece(self, side: str, which: np.ndarray | None
                  ) -> Iterator[tuple[int, np.ndarray | None]]:
        """The pieces of ``side`` that hold records ``which`` (sorted; None: all), each
        with the records' numbers in it (None: all of it)."""
        edges = np.asarray(self.array(f"work/{side}_records")[...], dtype=np.int64)
        if which is None:
            yield from ((k, None) for k in range(len(edges) - 1))
            return
        which = np.asarray(which, dtype=np.int64)
        cuts = np.searchsorted(which, edges)
        for k in np.flatnonzero(np.diff(cuts)):
            yield int(k), which[cuts[k]:cuts[k + 1]] - edges[k]

    def edges(self, side: str, k: int) -> np.ndarray:
        """Where each record of piece ``k`` of ``side`` starts in its residues and names
        (``(n + 1, 2)`` int64, from 0)."""
        return np.asarray(self.piece(side, k, "edges")[...], dtype=np.int64)

    def records(self, side: str, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Residues and offsets (from 0) of records ``which`` (sorted, distinct) of
        ``side``, read alone: within a piece, the records that end within a residue
        chunk's length of a record's start in one read (records paired at random cost a
        read a chunk they touch, not a read a record)."""
        parts = [_records(self.edges(side, k)[:, 0], self.piece(side, k, "residues"), local)
                 for k, local in self._by_piece(side, which)]
        if not parts:
            return np.zeros(0, np.uint8), np.zeros(1, np.int64)
        ends = np.cumsum([0] + [len(residues) for residues, _ in parts])
        return (np.concatenate([residues for residues, _ in parts]),
                np.concatenate([[0]] + [offsets[1:] + end for (_, offsets), end
                                        in zip(parts, ends, strict=False)]))

    def names(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        """Names of the records ``which`` of ``side`` (all by default), as str objects."""

        def read(k: int, local: np.ndarray | None) -> np.ndarray:
            edges = self.edges(side, k)[:, 1]
            text = np.asarray(self.piece(side, k, "names")[...], dtype=np.uint8)
            local = np.arange(len(edges) - 1) if local is None else local
            return np.array(decode_names(text, edges[local], edges[local + 1]), dtype=object)

        return self._gather(side, which, read, object)

    def lengths(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        """Lengths (int64) of the records ``which`` of ``side`` (all by default)."""

        def read(k: int, local: np.ndarray | None) -> np.ndarray:
            lengths = np.diff(self.edges(side, k)[:, 0])
            return lengths if local is None else lengths[local]

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

    # per-pair fields -----------------------------------------------------------------

    def fields(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        """The per-pair fields of pairs ``first:last``, the CIGARs as strings."""
        fields = self.read_fields(PAIR_FIELDS, slice(first, last))
        return fields | {"cigar": unpacked_cigars(fields["cigar"])}

    def unit_values(self, kind: str, unit: int) -> list[np.ndarray]:
        if kind in self.INPUT_KINDS:
            side = kind.split()[0]
            return [*(np.asarray(self.piece(side, unit, name)[...]) for name in PIECE_ARRAYS),
                    *_source_values(dict(self.piece(side, unit, "residues").attrs))]
        first, last = self.unit_pairs(unit)
        return list(self.read_fields(PAIR_FIELDS, slice(first, last)).values())

    def write_unit(self, unit: int, fields: dict[str, np.ndarray]) -> None:
        """Write the chunk of every per-pair field (the CIGARs as strings, kept packed),
        then its done mark."""
        first, last = self.unit_pairs(unit)
        self.write_marked("chunk", unit, PAIR_FIELDS,
                          fields | {"cigar": packed_cigars(fields["cigar"])}, slice(first, last))


def _source_values(source: dict[str, Any]) -> list[np.ndarray]:
    """Where a piece lies and its SHA-256 (its residues' attributes) as its mark digests
    them."""
    return [np.asarray(source["span"], dtype=np.int64),
            np.frombuffer(bytes.fromhex(source["sha256"]), dtype=np.uint8)]


def _joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _records(offsets: np.ndarray, residues: zarr.Array, which: np.ndarray | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """Residues and offsets (from 0) of records ``which`` (sorted, distinct; None: all)
    of one piece (``offsets``: its records')."""
    if which is None:
        return np.asarray(residues[...], dtype=np.uint8), offsets
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
