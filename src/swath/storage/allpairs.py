"""The store of an all-against-all job: layout "allpairs", version 1.

# n: sequences, B: sequences per block, b: blocks (ceil(n / B)), T: tiles (b (b + 1) / 2),
# K: kept pairs of one tile, C: counters of a tile (``COUNTERS``).

The sequences are kept sorted by length (ascending, stable): sorted index ``s`` is
input sequence ``order[s]``. Blocks are runs of B sorted sequences; the tiles are the
upper triangle of the block matrix (block row ``bi`` <= block column ``bj``), numbered
row by row. In a tile, the query of a pair is the sequence of the lower sorted index,
the shorter one.

    name, order      (n,)  sorted order, dimension ``sequence``
    residues         the sorted sequences' codes, concatenated; ``offsets`` (n + 1,)
    done             (T,)  uint64, chunks (1,): a tile's mark, written last: the digest of
                     what the tile wrote (``damaged`` reads it back and compares)
    counters         (T, C) int64, chunks (1, C): pairs, length_filtered, score_filtered,
                     traced, kept
    kept/{t}         a subgroup per tile: its kept pairs in the arrays of ``KEPT_ARRAYS``:
                     ``index`` (K, 2) int64 (``i``, ``j``), ``values`` (K, 9) int32 (score,
                     coordinates, length, matches, mismatches, gap opens), ``identity``
                     (K,) float64, ``cigar`` (K,) strings; a 2-D array names its fields in
                     its ``fields`` attribute (``i`` < ``j`` sorted indices; coordinates
                     0-based, end exclusive, ``i`` the query)
    score            (n, n) int32, chunks (B, B), dimensions (``query``, ``target``), only
                     with ``scores``: row the query, sorted order; the diagonal and
                     unwritten cells hold ``NO_SCORE``; coordinate arrays ``query`` and
                     ``target`` (the names) make xarray label it
    cluster          (n,) int64, only with ``clusters``: single-linkage cluster of each
                     sorted sequence, written after every tile

A tile writes its kept pairs, its chunks of ``score`` (its own and the transposed
one), its counters, then its done mark; ``finalize`` checks every tile is done, then
marks the store complete.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, cast

import numpy as np
import zarr

from swath.errors import StoreIncomplete
from swath.sequences import SequenceSet
from swath.storage.common import (
    LayoutStore,
    StorePath,
    missing,
    value_dtype,
    write_strings,
    write_whole,
)

LAYOUT = "allpairs"
VERSION = 3          # 1: one array per kept field; 2: done marks were flags, not digests
RESIDUE_CHUNK = 1 << 22
NO_SCORE = int(np.iinfo(np.int32).min)     # a cell with no score: the diagonal
COUNTERS = ("pairs", "length_filtered", "score_filtered", "traced", "kept")
KEPT_FIELDS: dict[str, Any] = {
    "i": np.int64,
    "j": np.int64,
    "score": np.int32,
    "identity": np.float64,
    "query_start": np.int32,
    "query_end": np.int32,
    "target_start": np.int32,
    "target_end": np.int32,
    "length": np.int32,
    "matches": np.int32,
    "mismatches": np.int32,
    "gap_opens": np.int32,
    "cigar": str,
}
# the arrays of a tile's kept pairs: fields of one type side by side, so a tile writes 4;
# each 2-D one has its own second dimension (xarray opens a tile's group as a Dataset)
KEPT_ARRAYS: dict[str, tuple[str, ...]] = {
    "index": ("i", "j"),
    "values": ("score", "query_start", "query_end", "target_start", "target_end", "length",
               "matches", "mismatches", "gap_opens"),
    "identity": ("identity",),
    "cigar": ("cigar",),
}
KEPT_DIMENSIONS = {"index": ("pair", "member"), "values": ("pair", "field")}


def tile_blocks(blocks: int) -> np.ndarray:
    """The (block row, block column) of every tile, row by row: ``(T, 2)`` int64.

    Examples
    --------
    >>> tile_blocks(3).tolist()
    [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]]
    """
    rows, cols = np.triu_indices(blocks)
    return np.stack([rows, cols], axis=1).astype(np.int64)


def empty_kept() -> dict[str, np.ndarray]:
    """Kept-pair arrays of no pairs."""
    return {name: np.empty(0, dtype=value_dtype(dtype))
            for name, dtype in KEPT_FIELDS.items()}


class AllPairsStore(LayoutStore):
    """An all-against-all result store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    VERSION = VERSION
    MARKS: ClassVar[dict[str, str]] = {"tile": "done"}
    RECOMPUTED: ClassVar[frozenset[str]] = frozenset({"cluster"})

    @classmethod
    def create(cls, path: StorePath, sequences: SequenceSet, *, block: int, scores: bool,
               clusters: bool, replace: bool = False, **fields: Any) -> AllPairsStore:
        """Create an empty store for ``sequences`` (input order; kept sorted by length)
        in blocks of ``block``, with a score matrix if ``scores``, to hold clusters if
        ``clusters``, whole or not at all (``creating``); ``fields`` go to the root
        attributes, ``replace`` replaces a store at ``path``."""
        n = len(sequences)
        order = np.argsort(sequences.lengths, kind="stable")
        blocks = -(-n // block)
        tiles = blocks * (blocks + 1) // 2

        def build(group: zarr.Group) -> None:
            names = np.array(sequences.names, dtype=object)[order]
            write_strings(group, "name", names, "sequence")
            write_whole(group, "order", order.astype(np.int64), dimension_names=("sequence",))
            lengths = sequences.lengths[order]
            residues = (np.concatenate([sequences[int(s)] for s in order]).astype(np.uint8)
                        if n else np.zeros(0, np.uint8))
            write_whole(group, "residues", residues,
                        chunks=(min(max(len(residues), 1), RESIDUE_CHUNK),),
                        dimension_names=("residue",))
            offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            write_whole(group, "offsets", offsets, dimension_names=("sequence_edge",))
            cls.create_marks(group, "tile", (tiles,), ("tile",))
            counters = group.create_array("counters", shape=(tiles, len(COUNTERS)),
                                          chunks=(1, len(COUNTERS)), dtype=np.int64,
                                          fill_value=0, dimension_names=("tile", "counter"))
            counters.attrs["counters"] = list(COUNTERS)
            group.create_group("kept")
            if scores:
                group.create_array("score", shape=(n, n), chunks=(block, block),
                                   dtype=np.int32, fill_value=NO_SCORE,
                                   dimension_names=("query", "target"))
                write_strings(group, "query", names, "query")
                write_strings(group, "target", names, "target")

        return cls._create(path, dict(sequences=n, block=block, blocks=blocks, tiles=tiles,
                                      scores=scores, clusters=clusters, **fields),
                           build, replace=replace)

    @property
    def sequences(self) -> int:
        return int(self.attrs["sequences"])

    @property
    def block(self) -> int:
        return int(self.attrs["block"])

    @property
    def tiles(self) -> int:
        return int(self.attrs["tiles"])

    @property
    def has_scores(self) -> bool:
        """Whether the job keeps the dense score matrix."""
        return bool(self.attrs["scores"])

    @property
    def has_clusters(self) -> bool:
        """Whether the job computes clusters."""
        return bool(self.attrs["clusters"])

    def tile_blocks(self, t: int) -> tuple[int, int]:
        """The (block row, block column) of tile ``t``."""
        bi, bj = tile_blocks(int(self.attrs["blocks"]))[t]
        return int(bi), int(bj)

    def block_range(self, b: int) -> tuple[int, int]:
        """The sorted indices ``[first, last)`` of block ``b``."""
        return b * self.block, min((b + 1) * self.block, self.sequences)

    def block_sequences(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Residues and offsets (from 0) of the sequences of block ``b``, read alone."""
        first, last = self.block_range(b)
        offsets = np.asarray(self.array("offsets")[first:last + 1], dtype=np.int64)
        residues = np.asarray(self.array("residues")[offsets[0]:offsets[-1]], dtype=np.uint8)
        return residues, offsets - offsets[0]

    def order(self) -> np.ndarray:
        """The input index of every sorted sequence."""
        return np.asarray(self.array("order")[:], dtype=np.int64)

    def names(self) -> np.ndarray:
        """The names of the sorted sequences (object array of str)."""
        return np.asarray(self.array("name")[:], dtype=object)

    def _score_ranges(self, t: int) -> list[tuple[slice, slice]]:
        """The chunks of ``score`` tile ``t`` writes: its own and the transposed one."""
        bi, bj = self.tile_blocks(t)
        rows, cols = (slice(*self.block_range(b)) for b in (bi, bj))
        return [(rows, cols)] if bi == bj else [(rows, cols), (cols, rows)]

    def unit_values(self, kind: str, t: int) -> list[np.ndarray]:
        tile = cast(zarr.Group, self.group[f"kept/{t}"])
        values = [np.asarray(cast(zarr.Array, tile[name])[...]) for name in KEPT_ARRAYS]
        if self.has_scores:
            values += [np.asarray(self.array("score")[r, c]) for r, c in self._score_ranges(t)]
        return [*values, np.asarray(self.array("counters")[t])]

    def counters(self) -> np.ndarray:
        """Every tile's counters, ``(T, C)`` (zeros for tiles not done)."""
        return np.asarray(self.array("counters")[:], dtype=np.int64)

    def write_tile(self, t: int, kept: dict[str, np.ndarray], counters: dict[str, int],
                   score_chunks: list[np.ndarray]) -> None:
        """Write tile ``t``: its kept pairs, its chunks of ``score`` (in the order of
        ``_score_ranges``: its own, then the transposed one off the diagonal), its
        counters, then its done mark."""
        tile = cast(zarr.Group, self.group["kept"]).require_group(str(t))

        def write(name: str) -> np.ndarray:
            fields = KEPT_ARRAYS[name]
            dtype = KEPT_FIELDS[fields[0]]
            values = np.asarray(kept[fields[0]] if len(fields) == 1 else
                                np.column_stack([kept[f] for f in fields]),
                                dtype=value_dtype(dtype))
            array = tile.create_array(name, shape=values.shape,
                                      chunks=(max(len(values), 1), *values.shape[1:]),
                                      dtype=dtype,
                                      dimension_names=KEPT_DIMENSIONS.get(name, ("pair",)),
                                      attributes={"fields": list(fields)} if values.ndim > 1
                                      else None, overwrite=True)
            if len(values):
                array[:] = values
            return values

        # the arrays at once: each is a few round trips to Zarr's I/O loop, which overlaps
        # them
        with ThreadPoolExecutor(len(KEPT_ARRAYS)) as pool:
            written = list(pool.map(write, KEPT_ARRAYS))
        if self.has_scores:
            for (rows, cols), values in zip(self._score_ranges(t), score_chunks, strict=True):
                chunk = np.asarray(values, dtype=np.int32)
                self.array("score")[rows, cols] = chunk
                written.append(chunk)
        count = np.array([counters[name] for name in COUNTERS], dtype=np.int64)
        self.array("counters")[t] = count
        self.mark("tile", t, *written, count)

    def kept(self, t: int) -> dict[str, np.ndarray]:
        """The kept pairs of tile ``t`` (``StoreIncomplete`` if it is not written)."""
        try:
            tile = cast(zarr.Group, self.group[f"kept/{t}"])
            arrays = {name: np.asarray(cast(zarr.Array, tile[name])[:]) for name in KEPT_ARRAYS}
        except KeyError:
            raise missing(f"the kept pairs of tile {t}", self.path) from None
        kept: dict[str, np.ndarray] = {}
        for name, fields in KEPT_ARRAYS.items():
            columns = arrays[name].reshape(len(arrays[name]), len(fields))
            kept |= {field: columns[:, c] for c, field in enumerate(fields)}
        return {name: kept[name] for name in KEPT_FIELDS}

    def kept_pairs(self) -> dict[str, np.ndarray]:
        """The kept pairs of every tile, tile by tile."""
        tiles = [self.kept(t) for t in range(self.tiles)] or [empty_kept()]
        return {name: np.concatenate([tile[name] for tile in tiles]) for name in KEPT_FIELDS}

    def scores(self) -> np.ndarray:
        """The dense score matrix in sorted order (``StoreIncomplete`` without one)."""
        if not self.has_scores:
            raise StoreIncomplete(f"{self.path}: the job kept no score matrix (run it with "
                                  "scores=True, or --scores)")
        return np.asarray(self.array("score")[:], dtype=np.int32)

    def write_clusters(self, cluster: np.ndarray) -> None:
        """Write the cluster of every sorted sequence."""
        write_whole(self.group, "cluster", cluster.astype(np.int64),
                    dimension_names=("sequence",), overwrite=True)
        self.reload_attrs()

    def clusters(self) -> np.ndarray:
        """The cluster of every sorted sequence (``StoreIncomplete`` without them)."""
        if not self.has_clusters:
            raise StoreIncomplete(f"{self.path}: the job computed no clusters (run it with "
                                  "clusters=True, or --clusters)")
        return np.asarray(self.array("cluster")[:], dtype=np.int64)

    def finalize(self) -> None:
        """Check that every tile and asked-for array is there, then mark the store
        complete."""
        self.check_done()
        if self.has_clusters:
            self.array("cluster")   # StoreIncomplete if they were not written
        self._set_complete()
