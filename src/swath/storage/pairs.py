"""The store of a batched-pairs job: layout "pairs", version 1.

# P: pairs, Q: query records, T: target records, C: pairs per chunk, U: chunks (ceil(P / C)).

The job's inputs are kept in the store, taken in batch by batch as they are read (a
file larger than memory never is whole in memory), so ``swath resume`` needs nothing
but the store, and each chunk's task reads only its own residues:

    {query,target}_residues   the records' codes, concatenated (uncompressed)
    {query,target}_offsets    (Q + 1,), (T + 1,) int64: record i is residues[o[i]:o[i + 1]]
    {query,target}_name       (Q,), (T,) strings
    pair_query, pair_target   (P,) int64, only for pairs given by index or name: the
                              records of each pair (without them pair i is query i with
                              target i, ``"paired": "position"``)

Every input array is written in pieces of its own chunks, and its digest, recorded in
the attributes, is that of its chunks one after another, so a damaged input is found
reading it chunk by chunk. Per pair, chunks (C,), dimension ``pair``: the fields of
:data:`PAIR_FIELDS` (score; 0-based, end-exclusive coordinates; columns, matches,
mismatches, gap opens; identity, matches over columns; the extended CIGAR). A chunk of
pairs is the unit of work: its task writes its chunk of every field, then its mark in
``done`` (U,), the digest of what it wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import zarr
from zarr.core.array_spec import ArrayConfigParams

from swath.scoring import Scoring
from swath.sequences import SequenceSet
from swath.storage.common import LayoutStore, StorePath, record_digest, value_dtype
from swath.storage.integrity import Digest

__all__ = ["LAYOUT", "PAIR_FIELDS", "VERSION", "Ingested", "PairsStore"]

LAYOUT = "pairs"
VERSION = 1

RESIDUE_CHUNK = 1 << 22
OFFSET_CHUNK = 1 << 20
NAME_CHUNK = 1 << 16
INDEX_CHUNK = 1 << 20
PENDING_WRITES = 4      # writes of an array that may wait for the writer thread

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
    "cigar": (str, ""),
}

SIDES = ("query", "target")
# every chunk written as it is: Zarr's check whether a chunk is all fill value costs a
# pass over it, and these chunks never are
WRITE_ALL: ArrayConfigParams = {"write_empty_chunks": True}


class _Appender:
    """A 1-D array of the store grown piece by piece, written in whole chunks on the
    ``writer`` thread (beside the reading of what comes next), its digest taken chunk by
    chunk (as :meth:`PairsStore._whole` reads it back)."""

    def __init__(self, group: zarr.Group, name: str, dtype: Any, chunk: int, dimension: str,
                 writer: ThreadPoolExecutor, **create: Any) -> None:
        self.group, self.name, self.chunk, self.writer = group, name, chunk, writer
        self.array = group.create_array(name, shape=(0,), chunks=(chunk,), dtype=dtype,
                                        dimension_names=(dimension,), config=WRITE_ALL,
                                        **create)
        self.dtype = value_dtype(dtype)
        self.pending: list[np.ndarray] = []
        self.held = 0
        self.size = 0
        self.digest = Digest()
        self.writes: list[Future[None]] = []

    def add(self, values: np.ndarray) -> None:
        self.pending.append(np.asarray(values, dtype=self.dtype))
        self.held += len(values)
        if self.held >= self.chunk:
            self._write(self.held - self.held % self.chunk)

    def close(self) -> int:
        """Write what is held, wait for the writes, record the digest; the array's
        length."""
        self._write(self.held)
        for write in self.writes:
            write.result()
        self.array.resize((self.size,))
        record_digest(self.group, self.name, self.digest.value)
        return self.size

    def _write(self, count: int) -> None:
        if not count:
            return
        held = self.pending[0] if len(self.pending) == 1 else np.concatenate(self.pending)
        out, rest = held[:count], held[count:]
        self.writes.append(self.writer.submit(self._store, out, self.size))
        while len(self.writes) > PENDING_WRITES:       # the reading waits for the writing
            self.writes.pop(0).result()
        self.size += count
        self.pending, self.held = ([rest] if len(rest) else []), len(rest)

    def _store(self, values: np.ndarray, at: int) -> None:
        end = at + len(values)
        if end > self.array.shape[0]:       # room for as much again: few resizes
            self.array.resize((2 * end,))
        self.array[at:end] = values
        for start in range(0, len(values), self.chunk):
            self.digest.update(values[start:start + self.chunk])


@dataclass(frozen=True)
class Ingested:
    """What taking in one side's records found: how many, and their lengths (int32,
    the cells of each pair come from them); the names when asked for (name pairs)."""

    count: int
    lengths: np.ndarray
    names: list[str] | None


def ingest(group: zarr.Group, side: str, batches: Iterable[SequenceSet], *,
           keep_names: bool = False) -> Ingested:
    """Write one side's records (``side``: ``"query"`` or ``"target"``) into ``group``,
    batch by batch."""
    with ThreadPoolExecutor(1, thread_name_prefix="swath-ingest") as writer:
        return _ingest(group, side, batches, keep_names, writer)


def _ingest(group: zarr.Group, side: str, batches: Iterable[SequenceSet], keep_names: bool,
            writer: ThreadPoolExecutor) -> Ingested:
    residues = _Appender(group, f"{side}_residues", np.uint8, RESIDUE_CHUNK,
                         f"{side}_residue", writer, compressors=None)
    offsets = _Appender(group, f"{side}_offsets", np.int64, OFFSET_CHUNK, f"{side}_edge",
                        writer)
    names = _Appender(group, f"{side}_name", str, NAME_CHUNK, side, writer)
    lengths: list[np.ndarray] = []
    kept: list[str] | None = [] if keep_names else None
    offsets.add(np.zeros(1, dtype=np.int64))
    base = 0
    for batch in batches:
        residues.add(batch.residues)
        offsets.add(batch.offsets[1:] + base)
        names.add(np.asarray(batch.names, dtype=object))
        lengths.append(np.diff(batch.offsets).astype(np.int32))
        if kept is not None:
            kept.extend(batch.names)
        base += int(batch.offsets[-1])
    residues.close()
    offsets.close()
    count = names.close()
    return Ingested(count, np.concatenate(lengths) if lengths else np.zeros(0, np.int32), kept)


def write_index(group: zarr.Group, pairs: tuple[np.ndarray, np.ndarray]) -> None:
    """The records of each pair, for pairs not given by position."""
    with ThreadPoolExecutor(1, thread_name_prefix="swath-ingest") as writer:
        for side, records in zip(SIDES, pairs, strict=True):
            column = _Appender(group, f"pair_{side}", np.int64, INDEX_CHUNK, "pair", writer)
            column.add(records)
            column.close()


def _select(array: zarr.Array, which: np.ndarray | None) -> np.ndarray:
    """``array[which]`` (all of it for None), one slice where ``which`` is a run."""
    if which is None:
        return np.asarray(array[...])
    if len(which) and which[-1] - which[0] + 1 == len(which) and np.all(np.diff(which) == 1):
        return np.asarray(array[int(which[0]):int(which[-1]) + 1])
    return np.asarray(array.get_coordinate_selection(which))


class PairsStore(LayoutStore):
    """A batched-pairs result store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    COORDINATES = ("query_name", "target_name")
    VERSION = VERSION
    MARKS: ClassVar[dict[str, str]] = {"chunk": "done"}
    UNIT_NAMES: ClassVar[dict[str, str]] = {"chunk": "chunks of pairs"}

    @classmethod
    def create(cls, path: StorePath, fill: Callable[[zarr.Group], tuple[int, int, int]], *,
               replace: bool = False, **fields: Any) -> PairsStore:
        """Create a store, whole or not at all: ``fill(group)`` takes in the inputs
        (:func:`ingest`, :func:`write_index`) and says ``(pairs, pairs per chunk,
        cells)``; then the per-pair arrays and done marks are made. ``fields`` go to the
        root attributes (``paired``: ``"position"`` or ``"index"``), ``replace`` replaces a
        store at ``path``."""
        from swath.storage.common import update_attrs

        def build(group: zarr.Group) -> None:
            pairs, chunk, cells = fill(group)
            for name, (dtype, empty) in PAIR_FIELDS.items():
                group.create_array(name, shape=(pairs,), chunks=(max(chunk, 1),), dtype=dtype,
                                   fill_value=empty, dimension_names=("pair",),
                                   config=WRITE_ALL)
            units = -(-pairs // chunk) if chunk else 0
            cls.create_marks(group, "chunk", (units,), ("chunk",))
            update_attrs(group, pairs=pairs, chunk=chunk, units=units, cells=cells)

        return cls._create(path, fields, build, replace=replace)

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

    @property
    def mode(self) -> str:
        return str(self.attrs["inputs"]["mode"])

    @property
    def scoring(self) -> Scoring:
        return Scoring.from_dict(self.attrs["inputs"]["scoring"])

    def column(self, name: str, first: int = 0, last: int | None = None) -> np.ndarray:
        """Per-pair field ``name`` of pairs ``first:last``."""
        return np.asarray(self.array(name)[first:last])

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

    def records(self, side: str, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Residues and offsets (from 0) of records ``which`` (sorted, distinct) of
        ``side``, read alone: the records that end within a residue chunk's length of a
        record's start in one read (records paired at random cost a read a chunk they
        touch, not a read a record)."""
        offsets = self.array(f"{side}_offsets")
        residues = self.array(f"{side}_residues")
        if not len(which):
            return np.zeros(0, np.uint8), np.zeros(1, np.int64)
        if which[-1] - which[0] + 1 == len(which):      # one run (which is distinct, sorted)
            edges = np.asarray(offsets[int(which[0]):int(which[-1]) + 2], dtype=np.int64)
            return np.asarray(residues[edges[0]:edges[-1]], dtype=np.uint8), edges - edges[0]
        starts = np.asarray(_select(offsets, which), dtype=np.int64)
        ends = np.asarray(_select(offsets, which + 1), dtype=np.int64)
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

    def names(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        """Names of the records ``which`` of ``side`` (all by default), as str objects."""
        return np.asarray(_select(self.array(f"{side}_name"), which), dtype=object)

    def lengths(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        """Lengths of the records ``which`` of ``side`` (all by default)."""
        offsets = self.array(f"{side}_offsets")
        if which is None:
            return np.diff(np.asarray(offsets[...], dtype=np.int64))
        return (np.asarray(_select(offsets, which + 1), dtype=np.int64)
                - np.asarray(_select(offsets, which), dtype=np.int64))

    def count(self, side: str) -> int:
        """How many records ``side`` has."""
        return int(self.array(f"{side}_name").shape[0])

    def fields(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        """The per-pair fields of pairs ``first:last``."""
        return self.read_fields(PAIR_FIELDS, slice(first, last))

    def unit_values(self, kind: str, unit: int) -> list[np.ndarray]:
        first, last = self.unit_pairs(unit)
        return list(self.fields(first, last).values())

    def write_unit(self, unit: int, fields: dict[str, np.ndarray]) -> None:
        """Write the chunk of every per-pair field, then its done mark."""
        first, last = self.unit_pairs(unit)
        self.write_marked("chunk", unit, PAIR_FIELDS, fields, slice(first, last))

    def _whole(self, name: str) -> Iterator[np.ndarray]:
        """An input array chunk by chunk (as :class:`_Appender` digested it)."""
        array = self.array(name)
        step = array.chunks[0]
        for at in range(0, array.shape[0], step):
            yield np.asarray(array[at:at + step])
