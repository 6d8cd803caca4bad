"""The store of one long pair's alignment: layout "alignment", version 4.

# m, n: query and target lengths, TR x TC: tiles (rows x columns) of th x tw cells,
# S: tiles the optimal path crosses (segments).

A finished store holds at its root what a reader wants, as xarray opens it: the
alignment's ``score``, 0-based end-exclusive ``query_start`` .. ``target_end``,
``identity`` and ``cigar``, one value each along dimension ``alignment`` (a scores-only
job: ``score``, ``query_end``, ``target_end``), also in the ``alignment`` attribute (all
but the CIGAR). ``cigar`` is variable-length bytes: BAM's packed operations, little-endian
uint32 ``length << 4 | op`` (:mod:`swath.alignment`), as are the segments' pieces. The
job's own arrays are in the group ``work``: the sequences' codes (``query``, ``target``),
and what each phase writes.

Phase 1 (tiles, any order the wavefront allows) writes, per tile (ti, tj), its chunk
of the boundary arrays, its best cell, then its ``tile_done`` mark:

    bottom (TR, V, n)  chunks (1, V, tw): last row of every tile row: H, F, origin of H,
                       origin of F (column c at index c - 1; values in origins' int64)
    right  (TC, V, m)  chunks (1, V, th): last column of every tile column: H, E, origins
    tile_best (TR, TC, 4) chunks (1, 1, 4): score, row, column, origin of the first best
                       cell (local mode)

Phase 2 writes the segments (tile, exit, entry: cell-state codes) in one go and sets
the ``segments`` attribute; phase 3 writes each segment's CIGAR piece, then its
``segment_done`` mark; the assembled alignment comes last (the root's variables and the
``alignment`` attribute), then ``complete``. The sequences are in the store, so phases
2 and 3 and ``swath resume`` need nothing else. Stored bytes: 32 per boundary cell, about
``32 (m * TC + n * TR)``, that is O(m n / tile edge).

A scores-only job (``fields`` attribute 2: V = 2, no origins, int32 values, 8 bytes a
boundary cell) stops after phase 1:
its ``alignment`` attribute holds the score and end cell, and there is no CIGAR.

A traceback job without origins (the GPU's default; ``inputs`` attribute ``origins``
false) has the boundaries of a scores-only job, but goes on: phase 2 finds the path by
splits (segments of tile -1, -1), or, with ``inputs`` attribute ``walk`` (the CPU's for a
local pair of a match/mismatch matrix), walks it back tile by tile through direction
codes recomputed from the boundaries (segments of tiles, as with origins); phase 3
traces them, and the store ends with the whole
alignment and its CIGAR, as one with origins does. What a store holds is therefore
decided by its job's ``traceback`` input (:attr:`AlignmentStore.traceback`), never by
its origins.

Versions read: this one (3 kept the CIGAR and its pieces as strings; 2 kept every array
at the root and the result in attributes only; 1 marked units with flags: all are
refused, naming their version).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import zarr

from swath.alignment import Alignment, packed_cigars, unpacked_cigars
from swath.errors import InvalidParameter, StoreIncomplete
from swath.storage.common import (
    ROOT_KEY,
    LayoutStore,
    StorePath,
    create_field,
    swath_attrs,
    update_attrs,
    write_whole,
)

LAYOUT = "alignment"
# 1: done marks were flags; 2: every array at the root; 3: the CIGAR and pieces as strings
VERSION = 4
SEQUENCE_CHUNK = 1 << 24
#: the root's variables, dimension ``alignment``, once the job is finished (a scores-only
#: job: the score and end cell)
RESULT_FIELDS = ("score", "query_start", "query_end", "target_start", "target_end",
                 "identity", "cigar")


class AlignmentStore(LayoutStore):
    """A long pair's alignment store on disk (or behind an fsspec URL)."""

    LAYOUT = LAYOUT
    VERSION = VERSION
    MARKS: ClassVar[dict[str, str]] = {"tile": "work/tile_done",
                                       "segment": "work/segment_done"}
    RECOMPUTED: ClassVar[frozenset[str]] = frozenset({"work/segment", *RESULT_FIELDS})

    @classmethod
    def create(cls, path: StorePath, query: np.ndarray, target: np.ndarray, *,
               tile: tuple[int, int], origins: bool = True, replace: bool = False,
               **attrs: Any) -> AlignmentStore:
        """An empty store for ``query`` against ``target`` in tiles of ``tile`` cells,
        with boundary origins (for traceback) or without, whole or not at all
        (``creating``); ``attrs`` (JSON values) go to the root attributes, ``replace``
        replaces a store at ``path``."""
        m, n = len(query), len(target)
        rows, cols = -(-m // tile[0]), -(-n // tile[1])
        fields = 4 if origins else 2
        dtype = np.int64 if origins else np.int32      # origins are matrix-wide cell codes

        def build(group: zarr.Group) -> None:
            for name, seq, dim in (("work/query", query, "query_residue"),
                                   ("work/target", target, "target_residue")):
                write_whole(group, name, seq,
                            chunks=(min(max(len(seq), 1), SEQUENCE_CHUNK),),
                            dimension_names=(dim,))
            # boundaries are written and read once each, on the critical path: not
            # compressed
            group.create_array("work/bottom", shape=(rows, fields, n),
                               chunks=(1, fields, tile[1]), dtype=dtype, compressors=None,
                               dimension_names=("tile_row", "boundary_field", "target_residue"))
            group.create_array("work/right", shape=(cols, fields, m),
                               chunks=(1, fields, tile[0]), dtype=dtype, compressors=None,
                               dimension_names=("tile_column", "boundary_field", "query_residue"))
            group.create_array("work/tile_best", shape=(rows, cols, 4), chunks=(1, 1, 4),
                               dtype=np.int64, fill_value=-1,
                               dimension_names=("tile_row", "tile_column", "best_field"))
            cls.create_marks(group, "tile", (rows, cols), ("tile_row", "tile_column"))

        return cls._create(path, dict(tile=list(tile), tiles=[rows, cols], fields=fields,
                                      **attrs), build, replace=replace)

    @property
    def tile(self) -> tuple[int, int]:
        th, tw = self.attrs["tile"]
        return int(th), int(tw)

    @property
    def tiles(self) -> tuple[int, int]:
        rows, cols = self.attrs["tiles"]
        return int(rows), int(cols)

    @property
    def origins(self) -> bool:
        """Whether the boundaries carry origins (a traceback job) or only scores."""
        return int(self.attrs.get("fields", 4)) == 4

    @property
    def traceback(self) -> bool:
        """Whether the job traces the alignment (the finished store holds it, CIGAR and
        all) or keeps the score and end cell only (``swath align --score-only``). A job
        with a traceback may have boundaries without origins (its path found by splits):
        :attr:`origins` says how the path is found, this what the store holds."""
        return bool(self.attrs.get("inputs", {}).get("traceback", True))

    @property
    def walks(self) -> bool:
        """Whether a traceback job without origins walks its path back through its tiles'
        direction codes (the CPU's, for a local DNA pair) rather than finding it by
        splits."""
        return bool(self.attrs.get("inputs", {}).get("walk", False))

    @property
    def names(self) -> tuple[str, str]:
        """The query's and the target's ids."""
        query, target = self.attrs["names"]
        return str(query), str(target)

    @property
    def lengths(self) -> tuple[int, int]:
        """The query's and the target's lengths."""
        return (int(self.array("work/query").shape[0]),
                int(self.array("work/target").shape[0]))

    def sequences(self) -> tuple[np.ndarray, np.ndarray]:
        """The query and target codes (uint8)."""
        return (np.asarray(self.array("work/query")[:], dtype=np.uint8),
                np.asarray(self.array("work/target")[:], dtype=np.uint8))

    # phase 1 -------------------------------------------------------------------

    def tiles_done(self) -> np.ndarray:
        """(TR, TC) bool: which tiles have their boundary written."""
        return self.done("tile")

    def _tile_ranges(self, ti: int, tj: int) -> tuple[slice, slice]:
        """The columns of tile row ``ti``'s bottom and the rows of tile column ``tj``'s
        right boundary that tile (ti, tj) writes."""
        (th, tw), (m, n) = self.tile, self.lengths
        return (slice(tj * tw, min((tj + 1) * tw, n)), slice(ti * th, min((ti + 1) * th, m)))

    def write_tile(self, ti: int, tj: int, bottom: np.ndarray, right: np.ndarray,
                   best: tuple[int, int, int, int]) -> None:
        """A tile's output boundary and best cell, then its done mark."""
        columns, rows = self._tile_ranges(ti, tj)
        lower, side = self.array("work/bottom"), self.array("work/right")
        values = [bottom.astype(lower.dtype, copy=False), right.astype(side.dtype, copy=False),
                  np.asarray(best, dtype=np.int64)]
        lower[ti, :, columns] = values[0]
        side[tj, :, rows] = values[1]
        self.array("work/tile_best")[ti, tj] = values[2]
        self.mark("tile", (ti, tj), *values)

    def unit_values(self, kind: str, unit: Any) -> list[np.ndarray]:
        if kind == "segment":
            per = self.segments_per_chunk
            pieces = self.array("work/segment_cigar")
            return [np.asarray(pieces[unit * per:(unit + 1) * per])]
        ti, tj = unit
        columns, rows = self._tile_ranges(ti, tj)
        return [np.asarray(self.array("work/bottom")[ti, :, columns]),
                np.asarray(self.array("work/right")[tj, :, rows]),
                np.asarray(self.array("work/tile_best")[ti, tj])]

    def bottom(self, ti: int, first: int, last: int) -> np.ndarray:
        """(V, last - first) of tile row ``ti``'s last row, matrix columns ``first+1..last``."""
        return np.asarray(self.array("work/bottom")[ti, :, first:last])

    def right(self, tj: int, first: int, last: int) -> np.ndarray:
        """(V, last - first) of tile column ``tj``'s last column, rows ``first+1..last``."""
        return np.asarray(self.array("work/right")[tj, :, first:last])

    def tile_best(self) -> np.ndarray:
        """(TR, TC, 4) int64: score, row, column, origin of each tile's best cell."""
        return np.asarray(self.array("work/tile_best")[:])

    # phase 2 -------------------------------------------------------------------

    def segments(self) -> np.ndarray | None:
        """(S, 4) int64 rows ``(tile row, tile column, exit, entry)`` in path order from
        the end (tile -1, -1: a span found by splits), or None before phase 2."""
        if "segments" not in self.attrs:
            return None
        return np.asarray(self.array("work/segment")[:], dtype=np.int64)

    def write_segments(self, segments: np.ndarray, end: dict[str, int], per_chunk: int = 1
                       ) -> None:
        """Phase 2's result: the segments, their piece and done arrays (``per_chunk``
        segments a chunk, one done mark a chunk: phase 3 writes a chunk at a time), the
        path's end."""
        count = len(segments)
        write_whole(self.group, "work/segment", segments.astype(np.int64).reshape(count, 4),
                    dimension_names=("segment", "segment_field"), overwrite=True)
        create_field(self.group, "work/segment_cigar", bytes, shape=(count,),
                     chunks=(per_chunk,), dimension_names=("segment",), overwrite=True)
        self.create_marks(self.group, "segment", (-(-count // per_chunk),), ("segment_chunk",),
                          overwrite=True)
        self._arrays.clear()
        update_attrs(self.group, segments=count, end=end)
        self.reload_attrs()

    # phase 3 -------------------------------------------------------------------

    def segments_done(self) -> np.ndarray:
        """(S,) bool: which segments have their CIGAR piece written."""
        done = self.done("segment")
        count = self.array("work/segment_cigar").shape[0]
        return np.repeat(done, self.segments_per_chunk)[:count]

    @property
    def segments_per_chunk(self) -> int:
        """Segments a chunk of the piece array (and a done mark) holds."""
        return int(self.array("work/segment_cigar").chunks[0])

    def write_pieces(self, first: int, cigars: list[str]) -> None:
        """The CIGAR pieces of one chunk of segments (``first`` its first; kept packed),
        then its done mark."""
        values = packed_cigars(np.array(cigars, dtype=object))
        self.array("work/segment_cigar")[first:first + len(cigars)] = values
        self.mark("segment", first // self.segments_per_chunk, values)

    def pieces(self) -> list[str]:
        """Every segment's CIGAR piece, in path order from the end."""
        if not self.segments_done().all():
            raise StoreIncomplete(f"{self.path}: phase 3 is not finished "
                                  f"(run `swath resume {self.path}`)")
        return unpacked_cigars(np.asarray(self.array("work/segment_cigar")[:])).tolist()

    # the alignment -------------------------------------------------------------

    def finish(self, alignment: dict[str, Any], cigar: str | None) -> None:
        """Write the assembled alignment as the root's variables (no CIGAR and no start
        for a scores-only job) and attributes, then mark the store complete."""
        if cigar is not None:
            write_whole(self.group, "cigar", packed_cigars([cigar]), dtype=bytes,
                        dimension_names=("alignment",), overwrite=True)
        for name in RESULT_FIELDS:
            if name in alignment:
                write_whole(self.group, name, np.array([alignment[name]]),
                            dimension_names=("alignment",), overwrite=True)
        for name in RESULT_FIELDS:
            self._arrays.pop(name, None)
        update_attrs(self.group, alignment=alignment)
        self._set_complete()

    def forget(self, damage: dict[str, list[Any]]) -> None:
        """After damage: go back to the first phase whose output is lost (damaged tiles
        or segments: phase 2; damaged pieces or CIGAR: the assembly)."""
        super().forget(damage)
        drop = {"alignment"}
        if damage.get("tile") or "work/segment" in damage.get("array", []):
            drop |= {"segments", "end"}
        self.group.attrs[ROOT_KEY] = {k: v for k, v in swath_attrs(self.group).items()
                                      if k not in drop}
        self.reload_attrs()

    def cigar(self) -> str:
        """The assembled CIGAR."""
        return str(unpacked_cigars(np.asarray(self.array("cigar")[:]))[0])

    def end(self) -> tuple[int, int, int]:
        """``(score, query_end, target_end)`` of a finished store of either kind (exclusive
        ends, as in :class:`~swath.alignment.Alignment`)."""
        fields = self._result()
        return int(fields["score"]), int(fields["query_end"]), int(fields["target_end"])

    def alignment(self) -> Alignment:
        """The finished alignment of a traceback job (with or without origins).

        Raises
        ------
        InvalidParameter
            The store holds a score only (a ``--score-only`` job).
        StoreIncomplete
            The job has not finished (``swath resume`` finishes it).
        """
        if not self.traceback:
            raise InvalidParameter(f"{self.path} holds a score only (swath align "
                                   "--score-only): no alignment path")
        fields = self._result()
        return Alignment(int(fields["score"]), int(fields["query_start"]),
                         int(fields["query_end"]), int(fields["target_start"]),
                         int(fields["target_end"]), self.cigar(), self.mode)

    def _result(self) -> dict[str, Any]:
        if not self.attrs.get("complete") or "alignment" not in self.attrs:
            raise StoreIncomplete(f"{self.path}: the job is not finished (run `swath resume "
                                  f"{self.path}`)")
        return dict(self.attrs["alignment"])

    def stored_bytes(self) -> int:
        """Bytes of the boundary buffers and segments (uncompressed)."""
        names = ["work/bottom", "work/right", "work/tile_best"] + (
            ["work/segment"] if "segments" in self.attrs else [])
        return sum(int(self.array(name).nbytes) for name in names)
