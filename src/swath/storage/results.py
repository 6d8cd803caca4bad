"""The result store of a database search: layout "search", version 1.

# Q: queries, k: hits kept per query (ranks), U: work units (blocks of B queries).

Every per-hit array has shape (Q, k) and chunks (B, k), so that a work unit owns
exactly one chunk of each; a unit writes its chunks, then its chunk of ``done``
(shape (U,), chunks (1,)). ``finalize`` checks that every unit is done and every
chunk exists, then marks the store complete. The queries themselves (codes, names)
are kept in the store, so ``swath resume`` needs nothing but the store.

Arrays carry dimension names (``query``, ``rank``, ``unit``, ``residue``), so xarray
opens them.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from swath.errors import StoreIncomplete
from swath.sequences import SequenceSet
from swath.storage.common import (
    LayoutStore,
    StorePath,
    mark_complete,
    missing,
    open_group,
    write_attrs,
)

LAYOUT = "search"
VERSION = 1

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
    "cigar": (str, ""),
    "target_name": (str, ""),
}


def empty_hits(queries: int, top_k: int) -> dict[str, np.ndarray]:
    """Per-hit arrays of ``queries`` x ``top_k`` empty ranks."""
    return {name: np.full((queries, top_k), fill, dtype=object if dtype is str else dtype)
            for name, (dtype, fill) in HIT_FIELDS.items()}


class SearchStore(LayoutStore):
    """A search result store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    VERSION = VERSION

    @classmethod
    def create(cls, path: StorePath, queries: SequenceSet, *, top_k: int, query_block: int,
               **fields: Any) -> SearchStore:
        """Create an empty store for ``queries``; ``fields`` go to the root attributes."""
        group = open_group(path, mode="w")
        nq = len(queries)
        units = -(-nq // query_block)
        write_attrs(group, LAYOUT, VERSION, top_k=top_k, query_block=query_block, units=units,
                    queries=nq, **fields)
        for name, (dtype, fill) in HIT_FIELDS.items():
            group.create_array(name, shape=(nq, top_k), chunks=(query_block, top_k),
                               dtype=dtype, fill_value=fill, dimension_names=("query", "rank"))
        names = group.create_array("query_name", shape=(nq,), chunks=(max(nq, 1),), dtype=str,
                                   dimension_names=("query",))
        names[:] = np.array(queries.names, dtype=object)
        group.create_array("query_residues", data=queries.residues,
                           chunks=(max(len(queries.residues), 1),),
                           dimension_names=("residue",))
        group.create_array("query_offsets", data=queries.offsets,
                           chunks=(len(queries.offsets),), dimension_names=("query_edge",))
        group.create_array("done", shape=(units,), chunks=(1,), dtype=np.uint8, fill_value=0,
                           dimension_names=("unit",))
        return cls(str(path), group, dict(cast(dict[str, Any], group.attrs["swath"])))

    @property
    def units(self) -> int:
        return int(self.attrs["units"])

    @property
    def top_k(self) -> int:
        return int(self.attrs["top_k"])

    def unit_queries(self, unit: int) -> tuple[int, int]:
        """The query range ``[first, last)`` of a work unit."""
        block = int(self.attrs["query_block"])
        return unit * block, min((unit + 1) * block, int(self.attrs["queries"]))

    def queries(self) -> SequenceSet:
        """The queries as they were searched."""
        names = tuple(str(n) for n in np.asarray(self.array("query_name")[:]))
        residues = np.asarray(self.array("query_residues")[:], dtype=np.uint8)
        offsets = np.asarray(self.array("query_offsets")[:], dtype=np.int64)
        return SequenceSet(names, names, residues, offsets, self.path)

    def done(self) -> np.ndarray:
        """Which work units are finished (bool, one per unit)."""
        return np.asarray(self.array("done")[:], dtype=bool)

    def write_unit(self, unit: int, hits: dict[str, np.ndarray]) -> None:
        """Write the unit's chunk of every per-hit array, then mark the unit done."""
        first, last = self.unit_queries(unit)
        # every chunk is written, even an empty one: finalize counts them (per array, not
        # zarr.config.set, which is global: a concurrent unit's exit would undo it)
        for name in HIT_FIELDS:
            self.array(name).with_config({"write_empty_chunks": True})[first:last, :] = hits[name]
        self.array("done")[unit] = 1

    def finalize(self) -> None:
        """Check that every unit and every chunk is there, then mark the store complete."""
        pending = np.flatnonzero(~self.done())
        if len(pending):
            raise StoreIncomplete(f"{self.path}: {len(pending)} of {self.units} work units are "
                                  f"not done (run `swath resume {self.path}`)")
        for name in HIT_FIELDS:
            array = self.array(name)
            if array.nchunks_initialized < array.nchunks:
                raise missing(f"{array.nchunks - array.nchunks_initialized} chunk(s) of {name}",
                              self.path)
        mark_complete(self.group)
        self.attrs["complete"] = True

    def hits(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        """Per-hit arrays of queries ``first:last``."""
        return {name: np.asarray(self.array(name)[first:last, :]) for name in HIT_FIELDS}
