"""The store of an all-against-all job: layout "allpairs", version 9.

# n: sequences, B: sequences per block, b: blocks (ceil(n / B)), T: tiles (b (b + 1) / 2),
# K: kept pairs (K_t of tile t), C: counters of a tile (``COUNTERS``).

The root is what a reader sees (``xarray.open_zarr(path)``: named variables, the names
as coordinates, everything in input order):

    query, target    (K,) int64, dimension ``pair``: the input indices of each kept pair,
                     ``query < target`` (the query is the earlier record, as in vsearch),
                     tile after tile (``work/kept``), each tile's sorted by (query,
                     target); chunks of ``PAIR_CHUNK``
    score, identity, query_start, query_end, target_start, target_end, length, matches,
    mismatches, gap_opens, cigar
                     (K,) the fields of each kept pair (``KEPT_FIELDS``; coordinates 0-based,
                     end exclusive; ``cigar`` variable-length bytes, each pair's CIGAR as
                     BAM's packed operations, little-endian uint32 ``length << 4 | op``:
                     :mod:`swath.alignment`); a pair's names are ``name[query]`` and
                     ``name[target]`` (indices into the names, not copies a pair)
    name             (n,) dimension ``sequence``: the input names (a coordinate), with
    sequence_length  (n,) int64, and
    cluster          (n,) int64, only with ``clusters``: the single-linkage cluster of each
                     sequence (numbered by their first sequence)
    score_matrix     (n, n) int32, dimensions (``query_sequence``, ``target_sequence``),
                     chunks (B, B), only with ``scores``: row the query; the diagonal holds
                     ``NO_SCORE``; coordinates ``query_sequence``, ``target_sequence`` (the
                     names) make xarray label it

The work lives in the subgroup ``work`` (``WORK``), which the root's view leaves out. The
sequences are kept there sorted by length (ascending, stable): sorted index ``s`` is input
sequence ``order[s]``. Blocks are runs of B sorted sequences; the tiles are the upper
triangle of the block matrix (block row ``bi`` <= block column ``bj``), numbered row by
row.

    work/order       (n,) int64: the input index of each sorted sequence
    work/sequence_pieces/{k}/...
                     the sequences in the pieces they were taken in as, each piece's
                     records sorted by length (:mod:`swath.storage.pieces`; a FASTQ
                     input's base qualities too), with their done marks
                     (``work/sequence_done``); ``work/block_runs`` (b + 1, K) the run of
                     each piece's records in each block
    work/done        (T,) uint64, chunks (1,): a tile's mark, written last: the digest of
                     what the tile wrote (``damaged`` reads it back and compares)
    work/counters    (T, C) int64, chunks (1, C): pairs, length_filtered, score_filtered,
                     traced, kept
    work/kept/{t}    a subgroup per tile: its kept pairs, already in their final orientation,
                     in the arrays of ``KEPT_ARRAYS``: ``index`` (K_t, 2) int64 (query,
                     target: input indices), ``values`` (K_t, 9) int32 (score, coordinates,
                     length, matches, mismatches, gap opens), ``identity`` (K_t,) float64,
                     ``cigar_length`` (K_t,) int32 and ``cigar`` (the CIGARs one after
                     another, ASCII bytes: no string object a pair; five writes a tile,
                     not thirteen), sorted by (query, target); with ``clusters``,
                     ``forest`` (F_t, 2) int64: pairs of input indices that join the
                     sequences the tile's kept pairs join, no more than one fewer than
                     the sequences they touch
    work/score       (n, n) int32, chunks (B, B), only with ``scores``: the score matrix in
                     sorted order, a tile writing its own chunk and the transposed one

A tile writes its kept pairs, its chunks of ``work/score``, its counters, then its done
mark. After every tile, the clusters (``write_clusters``, from the tiles' forests); then
the root's variables along ``pair`` are gathered from the tiles' (``gather_pairs`` for each
unit of ``create_pairs``, apart: a job runs them as tasks at once), and ``finalize``
checks every tile is done, records the gathered variables' digests (or gathers them
itself), puts the score matrix in input order and marks the store complete. A tile's
kept pairs start along ``pair`` where the kept pairs of the tiles before it end (a prefix
sum of the tiles' counters, ``tile_starts``), so a gather reads the tiles its chunks
overlap and no more. The tiles' copies stay, so that
``swath verify`` checks every tile against its mark and a damaged root variable is
gathered again by ``swath resume``. Every gathered variable's digest is in the root
attributes (``"digests"``): along ``pair``, the digest of its chunks' digests (each taken
by the gather that wrote the chunk; ``_whole`` reads them back the same way), for the
score matrix, of its column blocks one after another.

A gather holds the tiles' values of its unit's chunks (``GATHER_CHUNKS`` x ``PAIR_CHUNK``
pairs, and the tiles at its two ends whole); no process holds every kept pair. The score
matrix is put in input order in two passes of a block of B rows (about 12 B n bytes),
through a transposed copy (``work/transposed``) that it deletes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, cast

import numpy as np
import zarr

from swath.alignment import cigar_strings, pack_cigars, unpacked_cigars
from swath.errors import StoreIncomplete
from swath.sequences import take_concatenated
from swath.storage.common import (
    StorePath,
    display,
    missing,
    record_digest,
    record_digests,
    update_attrs,
    value_dtype,
    write_whole,
)
from swath.storage.integrity import Digest, digest, digest_bytes, digest_strings
from swath.storage.pieces import PieceStore, piece_kind

LAYOUT = "allpairs"
# 1: one array per kept field; 2: done marks were flags, not digests; 3: kept pairs only
# per tile, in sorted order, the query the shorter sequence; 4: a tile's CIGARs as strings,
# a gathered variable's digest over its values in one run, not over its chunks' digests;
# 5: the root's pairs sorted by (query, target) across the tiles, no tile's forest;
# 6: the root's CIGARs as strings, a pair's names copied along ``pair``
# 7: the sequences sorted whole by the client; 8: no base qualities (a FASTQ piece's are
# in its mark: a swath of version 8 would call it damaged)
VERSION = 9
WORK = "work"
SIDE = "sequence"       # the one input's side (``storage.pieces``)
RESIDUE_CHUNK = 1 << 18
NAME_CHUNK = 1 << 16
PAIR_CHUNK = 1 << 20
READERS = 16            # threads reading the tiles' arrays (a gather's, the forests)
GATHER_CHUNKS = 2       # the root's chunks of a kind of variables one gather writes
NO_SCORE = int(np.iinfo(np.int32).min)     # a cell with no score: the diagonal
COUNTERS = ("pairs", "length_filtered", "score_filtered", "traced", "kept")
KEPT_FIELDS: dict[str, Any] = {
    "query": np.int64,
    "target": np.int64,
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
    "cigar": bytes,             # packed operations (swath.alignment.packed_cigars)
}
# what the engine hands a tile's write: the kept fields, but each CIGAR's length and all of
# them in one buffer (``CIGAR_TEXT``, not a field a pair) for the strings
CIGAR_TEXT = "cigar_text"
TILE_FIELDS: dict[str, Any] = {**{name: dtype for name, dtype in KEPT_FIELDS.items()
                                  if name != "cigar"},
                               "cigar_length": np.int32, CIGAR_TEXT: np.uint8}
# the arrays of a tile's kept pairs: fields of one type side by side, so a tile writes 5;
# each 2-D one has its own second dimension (xarray opens a tile's group as a Dataset)
KEPT_ARRAYS: dict[str, tuple[str, ...]] = {
    "index": ("query", "target"),
    "values": ("score", "query_start", "query_end", "target_start", "target_end", "length",
               "matches", "mismatches", "gap_opens"),
    "identity": ("identity",),
    "cigar_length": ("cigar_length",),
    "cigar": (CIGAR_TEXT,),
}
KEPT_DIMENSIONS = {"index": ("pair", "member"), "values": ("pair", "field"),
                   "cigar": ("cigar_character",)}
# the root's variables along ``pair``
PAIR_VARIABLES = tuple(KEPT_FIELDS)
# what each kind of gather writes of them, ``GATHER_CHUNKS`` chunks a gather
GATHERS: dict[str, tuple[str, ...]] = {
    "index": ("query", "target"), "cigar": ("cigar",),
    "values": KEPT_ARRAYS["values"], "identity": ("identity",)}
MATRIX_DIMENSIONS = ("query_sequence", "target_sequence")
# the arrays of names, written and digested a chunk at a time
NAMES = frozenset({"name", *MATRIX_DIMENSIONS})


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
    """A tile's kept pairs (``TILE_FIELDS``) of no pairs."""
    return {name: np.empty(0, dtype=dtype) for name, dtype in TILE_FIELDS.items()}


def _chunks(kept: int) -> int:
    """The root's chunks of ``kept`` pairs along ``pair``."""
    return -(-kept // PAIR_CHUNK)


def merge_digests(into: dict[str, dict[int, int]], more: dict[str, dict[int, int]]) -> None:
    """Add a gather's chunk digests (``gather_pairs``) to those of the others (in place)."""
    for name, values in more.items():
        into.setdefault(name, {}).update(values)


def by_pair(kept: dict[str, np.ndarray], sequences: int) -> dict[str, np.ndarray]:
    """A tile's kept pairs (``TILE_FIELDS``) sorted by (query, target), of ``sequences``.

    Examples
    --------
    >>> kept = {"query": np.array([3, 1]), "target": np.array([4, 2]),
    ...         "cigar_length": np.array([2, 4]),
    ...         "cigar_text": np.frombuffer(b"4=1X3=", np.uint8)}
    >>> mine = by_pair(kept, 5)
    >>> mine["query"].tolist(), mine["cigar_text"].tobytes()
    ([1, 3], b'1X3=4=')
    """
    # a pair is kept once: its key has no tie, and quicksort is 5 times a stable sort's speed
    rank = np.argsort(np.asarray(kept["query"], dtype=np.int64) * sequences + kept["target"])
    offsets = np.zeros(len(rank) + 1, dtype=np.int64)
    np.cumsum(kept["cigar_length"], out=offsets[1:])
    text, _ = take_concatenated(kept[CIGAR_TEXT], offsets, rank)
    return {name: text if name == CIGAR_TEXT else np.asarray(values)[rank]
            for name, values in kept.items()}


def _work(name: str) -> str:
    return f"{WORK}/{name}"


class AllPairsStore(PieceStore):
    """An all-against-all result store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    VERSION = VERSION
    MARKS: ClassVar[dict[str, str]] = {"tile": _work("done"),
                                       piece_kind(SIDE): _work(f"{SIDE}_done")}
    UNIT_NAMES: ClassVar[dict[str, str]] = {piece_kind(SIDE): "pieces of the sequences"}
    INPUT_KINDS: ClassVar[frozenset[str]] = frozenset({piece_kind(SIDE)})
    SIDES = (SIDE,)
    SORTED = True
    QUALITIES = frozenset({SIDE})
    # residues in small chunks: a block reads a run of each piece's
    PIECE_ARRAYS: ClassVar[dict[str, tuple[Any, int, bool]]] = {
        **PieceStore.PIECE_ARRAYS, "residues": (np.uint8, RESIDUE_CHUNK, False)}
    # what finalize gathers from the tiles (and the clusters): written again by a run
    GATHERED: ClassVar[frozenset[str]] = frozenset({*PAIR_VARIABLES, "score_matrix"})
    RECOMPUTED: ClassVar[frozenset[str]] = GATHERED | {"cluster"}

    @classmethod
    def create(cls, path: StorePath, pieces: np.ndarray | int,
               fill: Callable[[AllPairsStore], None], *, block: int, scores: bool,
               clusters: bool, replace: bool = False, **fields: Any) -> AllPairsStore:
        """Create a store, whole or not at all, ready to take its sequences in (in blocks
        of ``block``, with a score matrix if ``scores``, to hold clusters if ``clusters``):
        the done marks of its pieces, ``pieces`` (a plain file's bounds, recorded, or how
        many pieces there are so far); then ``fill(store)`` writes the records the client
        holds. ``fields`` go to the root attributes, ``replace`` replaces a store at
        ``path``."""

        def build(group: zarr.Group) -> None:
            cls.make_pieces(group, SIDE, pieces)
            fill(cls(display(path), group, {}))

        return cls._create(path, dict(block=block, scores=scores, clusters=clusters,
                                      **fields), build, replace=replace)

    @property
    def indexed(self) -> bool:
        """Whether the sequences are all in and indexed (:meth:`index`)."""
        return "tiles" in self.attrs

    def index(self, rename: bool) -> None:
        """Once every piece is in: sort the sequences by length, find each block's runs of
        the pieces' records, write the names (unique: the second, third, ... of a name
        renamed if ``rename``), lengths and order, and make the tiles' arrays; the
        attributes ``sequences``, ``blocks`` and ``tiles`` are written last. Done again
        from the start if interrupted.

        Raises
        ------
        InvalidInput
            A name given twice, and ``rename`` false.
        """
        self.index_pieces()
        source = self.attrs["sources"][SIDE]["display"]
        renames = self.renames(SIDE, rename, source)
        lengths = self.lengths(SIDE)
        n, block = len(lengths), self.block
        order = np.argsort(lengths, kind="stable")
        blocks = -(-n // block)
        tiles = blocks * (blocks + 1) // 2
        group = self.group
        self._write_names("name", "sequence", renames)
        write_whole(group, "sequence_length", lengths, dimension_names=("sequence",),
                    attributes={"coordinates": "name"}, overwrite=True)
        write_whole(group, _work("order"), order.astype(np.int64),
                    dimension_names=("sequence",), overwrite=True)
        write_whole(group, _work("block_runs"), self._block_runs(order, blocks),
                    dimension_names=("block_edge", f"{SIDE}_piece"), overwrite=True)
        self.create_marks(group, "tile", (tiles,), ("tile",), overwrite=True)
        counters = group.create_array(_work("counters"), shape=(tiles, len(COUNTERS)),
                                      chunks=(1, len(COUNTERS)), dtype=np.int64,
                                      fill_value=0, dimension_names=("tile", "counter"),
                                      overwrite=True)
        counters.attrs["counters"] = list(COUNTERS)
        group.create_group(_work("kept"), overwrite=True)
        if self.has_scores:
            group.create_array(_work("score"), shape=(n, n), chunks=(block, block),
                               dtype=np.int32, fill_value=NO_SCORE,
                               dimension_names=("query", "target"), overwrite=True)
            for dimension in MATRIX_DIMENSIONS:
                self._write_names(dimension, dimension, renames)
        update_attrs(group, sequences=n, blocks=blocks, tiles=tiles,
                     input_sha256=self.identity(SIDE))
        self.reload_attrs()
        self._arrays.clear()

    def _block_runs(self, order: np.ndarray, blocks: int) -> np.ndarray:
        """``(blocks + 1, K)`` int64: row b, the records of each piece (sorted by length)
        that lie in the blocks before b; block b is the run ``[runs[b, k], runs[b + 1, k])``
        of each piece k."""
        n = len(order)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        cuts = np.minimum(np.arange(blocks + 1, dtype=np.int64) * self.block, n)
        first = self.piece_records(SIDE)
        runs = np.zeros((blocks + 1, len(first) - 1), dtype=np.int64)
        for k in range(len(first) - 1):
            kept = np.asarray(self.piece(SIDE, k, "order")[...], dtype=np.int64)
            runs[:, k] = np.searchsorted(rank[first[k] + kept], cuts)
        return runs

    def _write_names(self, name: str, dimension: str, renames: dict[int, str]) -> None:
        """The names, renamed as ``renames`` says, in array ``name`` along ``dimension``,
        a chunk (``NAME_CHUNK``) at a time from the pieces; its digest, of them one chunk
        after another (``_whole`` reads them back so)."""
        n = self.count(SIDE)
        array = self.group.create_array(name, shape=(n,), dtype=str,
                                        chunks=(max(1, min(n, NAME_CHUNK)),),
                                        dimension_names=(dimension,), overwrite=True)
        digest_ = Digest()
        for first in range(0, n, NAME_CHUNK):
            names = self.names(SIDE, np.arange(first, min(first + NAME_CHUNK, n)))
            for i, new in renames.items():
                if first <= i < first + NAME_CHUNK:
                    names[i - first] = new
            array[first:first + len(names)] = names
            digest_.update(names)
        record_digest(self.group, name, digest_.value)

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
        """Residues and offsets (from 0) of the sequences of block ``b``, in sorted order,
        read alone: a run of each piece's."""
        runs = np.asarray(self.array(_work("block_runs"))[b:b + 2], dtype=np.int64)
        residues, offsets, numbers = self.sorted_runs(SIDE, runs.T)
        order = np.lexsort((numbers, np.diff(offsets)))     # by length, then input order
        return take_concatenated(residues, offsets, order)

    def block_order(self, b: int) -> np.ndarray:
        """The input index of every sequence of block ``b``."""
        return np.asarray(self.array(_work("order"))[slice(*self.block_range(b))],
                          dtype=np.int64)

    def order(self) -> np.ndarray:
        """The input index of every sorted sequence."""
        return np.asarray(self.array(_work("order"))[:], dtype=np.int64)

    def sequence_names(self) -> np.ndarray:
        """The names of the sequences in input order (object array of str)."""
        return np.asarray(self.array("name")[:], dtype=object)

    def sequence_lengths(self) -> np.ndarray:
        """The lengths of the sequences in input order (int64)."""
        return np.asarray(self.array("sequence_length")[:], dtype=np.int64)

    def input_sequences(self) -> list[np.ndarray]:
        """Every sequence's codes, in input order (block after block)."""
        by_input: list[np.ndarray] = [np.empty(0, np.uint8)] * self.sequences
        for b in range(int(self.attrs["blocks"])):
            residues, offsets = self.block_sequences(b)
            for s, i in enumerate(self.block_order(b).tolist()):
                by_input[i] = residues[offsets[s]:offsets[s + 1]]
        return by_input

    def _score_ranges(self, t: int) -> list[tuple[slice, slice]]:
        """The chunks of ``work/score`` tile ``t`` writes: its own and the transposed one."""
        bi, bj = self.tile_blocks(t)
        rows, cols = (slice(*self.block_range(b)) for b in (bi, bj))
        return [(rows, cols)] if bi == bj else [(rows, cols), (cols, rows)]

    def unit_values(self, kind: str, t: int) -> list[np.ndarray]:
        if kind in self.INPUT_KINDS:
            return self.piece_values(SIDE, t)
        tile = cast(zarr.Group, self.group[_work(f"kept/{t}")])
        values = [np.asarray(cast(zarr.Array, tile[name])[...]) for name in KEPT_ARRAYS]
        if self.has_clusters:
            values.append(np.asarray(cast(zarr.Array, tile["forest"])[...]))
        if self.has_scores:
            score = self.array(_work("score"))
            values += [np.asarray(score[r, c]) for r, c in self._score_ranges(t)]
        return [*values, np.asarray(self.array(_work("counters"))[t])]

    def counters(self, t: int | None = None) -> np.ndarray:
        """Every tile's counters, ``(T, C)`` (zeros for tiles not done), or tile ``t``'s
        alone."""
        counters = self.array(_work("counters"))
        return np.asarray(counters[:] if t is None else counters[t], dtype=np.int64)

    def write_tile(self, t: int, kept: dict[str, np.ndarray], counters: dict[str, int],
                   score_chunks: list[np.ndarray], forest: np.ndarray | None = None) -> None:
        """Write tile ``t``: its kept pairs (``TILE_FIELDS``; ``query``, ``target``: input
        indices; any order, written sorted by (query, target)), its chunks of
        ``work/score`` (in the order of ``_score_ranges``: its own, then the transposed one
        off the diagonal), its forest (``(F, 2)`` input indices: pairs that join what its
        kept pairs join) where the job has clusters, its counters, then its done mark."""
        tile = cast(zarr.Group, self.group[_work("kept")]).require_group(str(t))
        kept = by_pair(kept, self.sequences)

        def write(name: str) -> np.ndarray:
            fields = KEPT_ARRAYS[name]
            dtype = TILE_FIELDS[fields[0]]
            values = np.asarray(kept[fields[0]] if len(fields) == 1 else
                                np.column_stack([kept[f] for f in fields]), dtype=dtype)
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
        if self.has_clusters:
            if forest is None:
                raise ValueError(f"{self.path}: tile {t} of a job with clusters needs its forest")
            edges = np.asarray(forest, dtype=np.int64).reshape(-1, 2)
            array = tile.create_array("forest", shape=edges.shape,
                                      chunks=(max(len(edges), 1), 2), dtype=np.int64,
                                      dimension_names=("edge", "member"), overwrite=True)
            if len(edges):
                array[:] = edges
            written.append(edges)
        if self.has_scores:
            score = self.array(_work("score"))
            for (rows, cols), values in zip(self._score_ranges(t), score_chunks, strict=True):
                chunk = np.asarray(values, dtype=np.int32)
                score[rows, cols] = chunk
                written.append(chunk)
        count = np.array([counters[name] for name in COUNTERS], dtype=np.int64)
        self.array(_work("counters"))[t] = count
        self.mark("tile", t, *written, count)

    def _tile_arrays(self, t: int, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        """Arrays ``names`` (of ``KEPT_ARRAYS``) of tile ``t``'s kept pairs."""
        try:
            tile = cast(zarr.Group, self.group[_work(f"kept/{t}")])
            return {name: np.asarray(cast(zarr.Array, tile[name])[:]) for name in names}
        except KeyError:
            raise missing(f"the kept pairs of tile {t}", self.path) from None

    def kept(self, t: int) -> dict[str, np.ndarray]:
        """The kept pairs of tile ``t`` (``KEPT_FIELDS``; ``StoreIncomplete`` if it is not
        written)."""
        arrays = self._tile_arrays(t, tuple(KEPT_ARRAYS))
        kept: dict[str, np.ndarray] = {}
        for name, fields in KEPT_ARRAYS.items():
            columns = arrays[name].reshape(len(arrays[name]), len(fields))
            kept |= {field: columns[:, c] for c, field in enumerate(fields)}
        kept["cigar"] = cigar_strings(kept[CIGAR_TEXT], kept["cigar_length"])
        return {name: kept[name] for name in KEPT_FIELDS}

    def forests(self) -> Iterator[np.ndarray]:
        """Every tile's forest (``(F_t, 2)`` input indices), tile after tile, read many at
        a time (each read is mostly round trips to Zarr's I/O loop)."""
        def read(t: int) -> np.ndarray:
            return self._tile_arrays(t, ("forest",))["forest"].reshape(-1, 2)

        with ThreadPoolExecutor(READERS) as pool:
            yield from pool.map(read, range(self.tiles))

    def tile_starts(self) -> np.ndarray:
        """Where each tile's kept pairs start along the root's ``pair``, and where the
        last ends: ``(T + 1,)`` int64, the prefix sum of the tiles' kept counters."""
        starts = np.zeros(self.tiles + 1, dtype=np.int64)
        np.cumsum(self.counters()[:, COUNTERS.index("kept")], out=starts[1:])
        return starts

    def pairs(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        """The fields (``KEPT_FIELDS``) of the kept pairs ``first:last`` (all by default),
        gathered by ``finalize``: tile after tile, each tile's by (query, target); the
        CIGARs as strings."""
        pairs = {name: np.asarray(self.array(name)[first:last], dtype=value_dtype(dtype))
                 for name, dtype in KEPT_FIELDS.items()}
        return pairs | {"cigar": unpacked_cigars(pairs["cigar"])}

    def scores(self) -> np.ndarray:
        """The dense score matrix in input order (``StoreIncomplete`` without one)."""
        if not self.has_scores:
            raise StoreIncomplete(f"{self.path}: the job kept no score matrix (run it with "
                                  "scores=True, or --scores)")
        return np.asarray(self.array("score_matrix")[:], dtype=np.int32)

    def write_clusters(self, cluster: np.ndarray) -> None:
        """Write the cluster of every sequence (input order)."""
        write_whole(self.group, "cluster", cluster.astype(np.int64),
                    dimension_names=("sequence",), attributes={"coordinates": "name"},
                    overwrite=True)
        self.reload_attrs()

    def clusters(self) -> np.ndarray:
        """The cluster of every sequence, in input order (``StoreIncomplete`` without
        them)."""
        if not self.has_clusters:
            raise StoreIncomplete(f"{self.path}: the job computed no clusters (run it with "
                                  "clusters=True, or --clusters)")
        return np.asarray(self.array("cluster")[:], dtype=np.int64)

    def finalize(self, digests: dict[str, dict[int, int]] | None = None) -> None:
        """Check that every tile and asked-for array is there, gather the root's variables
        along ``pair`` from the tiles (unless ``digests`` says they were: the digests of
        every chunk of each, from ``gather_pairs``), then mark the store complete."""
        self.check_done()
        if self.has_clusters:
            self.array("cluster")   # StoreIncomplete if they were not written
        if digests is None:
            starts, digests = self.tile_starts(), {}
            for kind, part in self.create_pairs():
                merge_digests(digests, self.gather_pairs(kind, part, starts))
        chunks = list(range(_chunks(self._kept_pairs())))
        for name in PAIR_VARIABLES:
            if sorted(digests.get(name, {})) != chunks:
                raise ValueError(f"{self.path}: {name} was not gathered whole")
        record_digests(self.group, {name: digest(np.array(
            [digests[name][c] for c in chunks], dtype=np.uint64)) for name in PAIR_VARIABLES})
        if self.has_scores:
            self._gather_scores()
        self._set_complete()

    # gathering -----------------------------------------------------------------

    def _kept_pairs(self) -> int:
        return int(self.counters()[:, COUNTERS.index("kept")].sum())

    def create_pairs(self) -> list[tuple[str, range]]:
        """Create the root's variables along ``pair`` (empty, as long as the tiles keep
        pairs, in chunks of ``PAIR_CHUNK``); the gathers that fill them, each a kind of
        ``GATHERS`` and the chunks it writes."""
        # the string writers (numba's loops) are imported by the writers only, not by
        # every reader of a store
        from swath.storage.string_chunks import create_bytes_array

        kept = self._kept_pairs()
        chunk = min(max(kept, 1), PAIR_CHUNK)
        for name in PAIR_VARIABLES:
            dtype = KEPT_FIELDS[name]
            create = functools.partial(create_bytes_array, self.group) if dtype is bytes \
                else functools.partial(self.group.create_array, dtype=dtype)
            create(name, shape=(kept,), chunks=(chunk,), dimension_names=("pair",),
                   overwrite=True)
        every = _chunks(kept)
        return [(kind, range(first, min(first + GATHER_CHUNKS, every)))
                for kind in GATHERS for first in range(0, every, GATHER_CHUNKS)]

    def _overlapped(self, kind: str, first: int, last: int, starts: np.ndarray
                    ) -> tuple[dict[str, np.ndarray], int]:
        """The arrays of ``kind`` (of ``GATHERS``: the CIGARs with their lengths) of the
        tiles whose kept pairs overlap the root's pairs ``first:last``, one tile's after
        another, and where pair ``first`` is in them."""
        begin, end = starts[:-1], starts[1:]
        tiles = np.flatnonzero((end > begin) & (end > first) & (begin < last)).tolist()
        names = ("cigar_length", "cigar") if kind == "cigar" else (kind,)
        # many reads in flight: each is mostly round trips to Zarr's I/O loop
        with ThreadPoolExecutor(READERS) as pool:
            parts = list(pool.map(lambda t: self._tile_arrays(t, names), tiles))
        return ({name: np.concatenate([part[name].reshape(-1, len(KEPT_ARRAYS[name]))
                                       for part in parts]) for name in names},
                first - int(starts[tiles[0]]))

    def gather_pairs(self, kind: str, chunks: range, starts: np.ndarray
                     ) -> dict[str, dict[int, int]]:
        """Write ``chunks`` of the root's variables of one kind of ``GATHERS`` from the
        tiles' (``starts``: ``tile_starts``), into the arrays ``create_pairs`` made; the
        digest of each chunk written. Gathers of other chunks or kinds write other chunks:
        a job runs them at once."""
        if not len(chunks):
            return {}
        first = chunks[0] * PAIR_CHUNK
        last = min((chunks[-1] + 1) * PAIR_CHUNK, int(starts[-1]))
        tiles, at = self._overlapped(kind, first, last, starts)
        pairs = slice(at, at + last - first)
        columns: dict[str, Any]
        if kind == "cigar":
            offsets = np.zeros(len(tiles["cigar_length"]) + 1, dtype=np.int64)
            np.cumsum(tiles["cigar_length"][:, 0], out=offsets[1:])
            ends = offsets[pairs.start:pairs.stop + 1]
            ops, counts = pack_cigars(tiles["cigar"][ends[0]:ends[-1], 0], np.diff(ends))
            sizes = np.zeros(len(counts) + 1, dtype=np.int64)      # 4 bytes an operation
            np.cumsum(4 * counts, out=sizes[1:])
            columns = {"cigar": (ops.astype("<u4").view(np.uint8), sizes)}
        else:
            values = tiles[kind][pairs]
            columns = {field: values[:, c] for c, field in enumerate(KEPT_ARRAYS[kind])}
        return {name: self._write_pairs(name, first, values)
                for name, values in columns.items()}

    def _write_pairs(self, name: str, first: int, values: Any) -> dict[int, int]:
        """Root variable ``name`` from pair ``first`` on (whole chunks, the last one to
        the end), a chunk at a time: strings (names) as their UTF-8 bytes and offsets, bytes
        (the CIGARs' packed operations) as their bytes and offsets, written as encoded
        chunks (``string_chunks``), or numbers; each chunk's digest, by its index."""
        from swath.storage.string_chunks import write_string_chunk

        array = self.array(name)
        digests = {}
        if isinstance(values, tuple):
            text, at = values
            digest_ragged = digest_bytes if KEPT_FIELDS.get(name) is bytes else digest_strings
            for start in range(0, len(at) - 1, PAIR_CHUNK):
                ends = at[start:start + PAIR_CHUNK + 1]
                piece, sizes = text[ends[0]:ends[-1]], np.diff(ends)
                write_string_chunk(array, (first + start) // PAIR_CHUNK, piece, sizes)
                digests[(first + start) // PAIR_CHUNK] = digest_ragged(piece, sizes)
            return digests
        for start in range(0, len(values), PAIR_CHUNK):
            piece = values[start:start + PAIR_CHUNK]
            array[first + start:first + start + len(piece)] = piece
            digests[(first + start) // PAIR_CHUNK] = digest(piece)
        return digests

    def _gather_scores(self) -> None:
        """``score_matrix``: ``work/score`` in input order, in two passes of a block of
        rows each: the columns of a block of sorted rows put in input order, written
        transposed; then the same for the rows of that copy."""
        n, block = self.sequences, self.block
        order = self.order()
        source = self.array(_work("score"))
        between = self.group.create_array(_work("transposed"), shape=(n, n),
                                          chunks=(block, block), dtype=np.int32,
                                          fill_value=NO_SCORE, overwrite=True)
        out = self.group.create_array("score_matrix", shape=(n, n), chunks=(block, block),
                                      dtype=np.int32, fill_value=NO_SCORE,
                                      dimension_names=MATRIX_DIMENSIONS, overwrite=True)
        digest = Digest()
        for read, write in ((source, between), (between, out)):
            for b in range(-(-n // block)):
                rows = slice(*self.block_range(b))
                panel = np.empty((rows.stop - rows.start, n), dtype=np.int32)
                panel[:, order] = read[rows, :]
                write[:, rows] = panel.T
                if write is out:
                    digest.update(panel.T)
        del self.group[_work("transposed")]
        record_digest(self.group, "score_matrix", digest.value)

    def _whole(self, name: str) -> Iterator[np.ndarray]:
        """An array written whole, as its digest was taken: a gathered one and the names
        chunk by chunk along their last dimension, any other in one piece."""
        array = self.array(name)
        if name not in self.GATHERED and name not in NAMES:
            yield np.asarray(array[...])
            return
        step, size = array.chunks[-1], array.shape[-1]
        pieces = (np.asarray(array[..., at:at + step]) for at in range(0, size, step))
        if name in PAIR_VARIABLES:      # the digests of its chunks, as the gathers took them
            yield np.array([digest(piece) for piece in pieces], dtype=np.uint64)
            return
        yield from pieces
