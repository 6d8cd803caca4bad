"""The result store of a database search: layout "search", version 4.

# Q: queries, k: hits kept per query (ranks), U: work units (blocks of B queries).

What a user reads is at the root, as xarray opens it: every per-hit array of shape
(Q, k), dimensions ``query`` and ``rank``, chunks (B, k), so that a work unit owns
exactly one chunk of each; ``query`` (Q,), the queries' names, is the coordinate of its
dimension (``ds.sel(query=name)``), and ``target_name`` (Q, k) the hits'. ``cigar`` is
variable-length bytes: each hit's CIGAR as BAM's packed operations (little-endian uint32
``length << 4 | op``, :mod:`swath.alignment`; ``b""`` for an empty rank). What the job
keeps for itself is in the group ``work``: ``done`` (U,), chunks (1,), a unit's mark,
written after its chunks (the digest of what it wrote, which ``damaged`` checks), and the
queries' codes (``query_residues``, ``query_offsets``), so that ``swath resume`` needs
nothing but the store; FASTQ queries' base qualities too (``query_qualities``, laid out
as ``query_residues``, only where the queries have them: the attribute ``qualities``
says so; SAM's QUAL of a query's primary record). ``finalize`` checks that every unit is
done, then marks the store complete.

Versions read: this one (3 kept the CIGARs as strings; 2 kept the names in
``query_name`` and the job's arrays at the root; 1 marked units with flags, not digests:
all are refused, naming their version).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import zarr

from swath.alignment import unpacked_cigars
from swath.sequences import SequenceSet
from swath.storage.common import (
    LayoutStore,
    StorePath,
    create_field,
    value_dtype,
    write_strings,
    write_whole,
)

LAYOUT = "search"
# 1: done marks were flags; 2: names in query_name, the job's arrays at the root;
# 3: the CIGARs as strings; 5: each query's hits in the order of their e-values (then
# scores), where they were in the order of their scores
VERSION = 5

# per-hit fields: dtype and the value of an empty rank
HIT_FIELDS: dict[str, tuple[Any, Any]] = {
    "target": (np.int64, -1),
    "score": (np.int32, 0),
    "bitscore": (np.float64, np.nan),
    "evalue": (np.float64, np.nan),
    "query_start": (np.int32, 0),
    "query_end": (np.int32, 0),
    "target_start": (np.int32, 0),
    "target_end": (np.int32, 0),
    "length": (np.int32, 0),
    "matches": (np.int32, 0),
    "mismatches": (np.int32, 0),
    "gap_opens": (np.int32, 0),
    "identity": (np.float32, np.nan),
    "cigar": (bytes, b""),      # packed operations (swath.alignment.packed_cigars)
    "target_name": (str, ""),
}


def empty_hits(queries: int, top_k: int) -> dict[str, np.ndarray]:
    """Per-hit arrays of ``queries`` x ``top_k`` empty ranks (as ``write_unit`` takes
    them: the CIGARs packed)."""
    return {name: np.full((queries, top_k), fill, dtype=value_dtype(dtype))
            for name, (dtype, fill) in HIT_FIELDS.items()}


class SearchStore(LayoutStore):
    """A search result store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    COORDINATES = ("target_name",)      # and ``query``, its dimension's
    VERSION = VERSION
    MARKS: ClassVar[dict[str, str]] = {"unit": "work/done"}
    UNIT_NAMES: ClassVar[dict[str, str]] = {"unit": "work units"}

    @classmethod
    def create(cls, path: StorePath, queries: SequenceSet, *, top_k: int, query_block: int,
               replace: bool = False, max_hsps: int = 1, **fields: Any) -> SearchStore:
        """Create an empty store for ``queries``, whole or not at all (``creating``), with
        ``top_k * max_hsps`` ranks a query (``top_k`` subjects, up to ``max_hsps``
        alignments each); ``fields`` go to the root attributes, ``replace`` replaces a
        store at ``path``."""
        nq = len(queries)
        ranks = top_k * max_hsps
        units = -(-nq // query_block)

        def build(group: zarr.Group) -> None:
            for name, (dtype, fill) in HIT_FIELDS.items():
                create_field(group, name, dtype, shape=(nq, ranks),
                             chunks=(query_block, ranks), fill_value=fill,
                             dimension_names=("query", "rank"))
            write_strings(group, "query", queries.names, "query")
            write_whole(group, "work/query_residues", queries.residues,
                        dimension_names=("residue",))
            write_whole(group, "work/query_offsets", queries.offsets,
                        dimension_names=("query_edge",))
            if queries.qualities is not None:
                write_whole(group, "work/query_qualities", queries.qualities,
                            dimension_names=("residue",))
            cls.create_marks(group, "unit", (units,), ("unit",))

        return cls._create(path, dict(top_k=top_k, max_hsps=max_hsps, query_block=query_block,
                                      units=units,
                                      queries=nq, qualities=queries.qualities is not None,
                                      **fields), build, replace=replace)

    @property
    def units(self) -> int:
        return int(self.attrs["units"])

    @property
    def top_k(self) -> int:
        return int(self.attrs["top_k"])

    @property
    def ranks(self) -> int:
        """Hits a query has room for: ``top_k`` subjects times ``max_hsps``."""
        return int(self.array("target").shape[1])

    @property
    def database(self) -> str:
        """The path of the database store searched."""
        return str(self.attrs["inputs"]["database"])

    def unit_queries(self, unit: int) -> tuple[int, int]:
        """The query range ``[first, last)`` of a work unit."""
        block = int(self.attrs["query_block"])
        return unit * block, min((unit + 1) * block, int(self.attrs["queries"]))

    def queries(self, qualities: bool = True) -> SequenceSet:
        """The queries as they were searched, with their base qualities where they have
        them (and ``qualities``: a search reads none)."""
        names = tuple(str(n) for n in np.asarray(self.array("query")[:]))
        residues = np.asarray(self.array("work/query_residues")[:], dtype=np.uint8)
        offsets = np.asarray(self.array("work/query_offsets")[:], dtype=np.int64)
        quality = (np.asarray(self.array("work/query_qualities")[:], dtype=np.uint8)
                   if qualities and self.attrs.get("qualities") else None)
        return SequenceSet(names, names, residues, offsets, self.path, quality)

    def unit_values(self, kind: str, unit: int) -> list[np.ndarray]:
        first, last = self.unit_queries(unit)
        return list(self.read_fields(HIT_FIELDS, np.s_[first:last, :]).values())

    def write_unit(self, unit: int, hits: dict[str, np.ndarray]) -> None:
        """Write the unit's chunk of every per-hit array (the CIGARs packed:
        :func:`~swath.alignment.packed_cigars`), then its done mark."""
        first, last = self.unit_queries(unit)
        self.write_marked("unit", unit, HIT_FIELDS, hits, np.s_[first:last, :])

    def hits(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        """Per-hit arrays of queries ``first:last``, the CIGARs as strings."""
        hits = self.read_fields(HIT_FIELDS, np.s_[first:last, :])
        return hits | {"cigar": unpacked_cigars(hits["cigar"])}
