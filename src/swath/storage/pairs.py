"""The store of a batched-pairs job: layout "pairs", version 4.

# P: pairs, Q: query records, T: target records, K: pieces of a side, C: pairs per chunk,
# U: chunks (ceil(P / C)).

What a user reads is at the root, as xarray opens it: the per-pair fields along
dimension ``pair`` (and the records of each pair, for pairs not by position). The job
keeps for itself, in the group ``work`` (every path below but the per-pair ones is in
it), its inputs and its done marks. The job's inputs are kept in the store, so that
``swath resume`` of a job whose inputs are in needs nothing but the store, and each
chunk's task reads only its own residues.
Each side's input comes in pieces of whole records, each taken in by a task of its own
(:mod:`swath.storage.pieces`: ``{side}_pieces/{k}/...``, ``{side}_done``,
``{side}_bounds``); FASTQ queries' pieces keep their base qualities too (``qualities``,
SAM's QUAL of a query's primary record).

Once every piece is in, one task indexes them (:meth:`PairsStore.index`):

    {side}_records               (K + 1,) int64: the records before each piece
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
in the attributes. Version 3 kept no base qualities, version 2 the CIGARs as strings,
version 1 each side's records in three whole arrays; their stores are refused
(``FormatVersionError``), not converted: run the job again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import zarr

from swath.alignment import packed_cigars, unpacked_cigars
from swath.storage.common import StorePath, display, update_attrs, write_whole
from swath.storage.pieces import WRITE_ALL, PieceStore, piece_kind

__all__ = ["LAYOUT", "PAIR_FIELDS", "SIDES", "VERSION", "PairsStore", "piece_kind"]

LAYOUT = "pairs"
# 1: each side's records in three whole arrays; 2: the CIGARs as strings; 3: no base
# qualities (a FASTQ piece's are in its mark: a swath of version 3 would call it damaged)
VERSION = 4

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


class PairsStore(PieceStore):
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
    SIDES = SIDES
    QUALITIES = frozenset({"query"})     # the reads of SAM

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
                cls.make_pieces(group, side, planned)
            fill(cls(display(path), group, {}))

        return cls._create(path, fields, build, replace=replace)

    def index(self, pairs: Callable[[PairsStore], tuple[np.ndarray, np.ndarray] | None],
              chunk: Callable[[int, int], int]) -> None:
        """Index every piece (``{side}_records``), then make the pairs: ``pairs(self)``
        gives the records of each (None: by position), ``chunk(pairs, cells)`` the pairs
        per chunk; the per-pair arrays and their done marks are made, and the attributes
        ``pairs``, ``chunk``, ``units`` and ``cells`` written last. Done again from the
        start if interrupted."""
        self.index_pieces()
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

    # per-pair fields -----------------------------------------------------------------

    def fields(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        """The per-pair fields of pairs ``first:last``, the CIGARs as strings."""
        fields = self.read_fields(PAIR_FIELDS, slice(first, last))
        return fields | {"cigar": unpacked_cigars(fields["cigar"])}

    def unit_values(self, kind: str, unit: int) -> list[np.ndarray]:
        if kind in self.INPUT_KINDS:
            return self.piece_values(kind.split()[0], unit)
        first, last = self.unit_pairs(unit)
        return list(self.read_fields(PAIR_FIELDS, slice(first, last)).values())

    def write_unit(self, unit: int, fields: dict[str, np.ndarray]) -> None:
        """Write the chunk of every per-pair field (the CIGARs as strings, kept packed),
        then its done mark."""
        first, last = self.unit_pairs(unit)
        self.write_marked("chunk", unit, PAIR_FIELDS,
                          fields | {"cigar": packed_cigars(fields["cigar"])}, slice(first, last))
