"""One tile of a long pair on the GPU: the twin of ``kernels/cpu/tiles.py``.

# h x w: the tile; R: rows per lane; tiers of 32 R rows, one warp each (see tiles.cu).

Same inputs and outputs as the CPU twin, so the engine swaps one for the other. The
CPU's ``strip`` has no part here: the GPU computes in tiers of rows, the strips
transposed, and its granularity is ``rows`` (R) instead.

A launch's tiers wait on each other, so all of them must be resident at once: the
launch is sized to the GPU's free residency when nothing else runs on it, and tiles
run one at a time per GPU and process. A GPU shared with other processes' long-running
kernels (MPS, another job) could leave some tiers unscheduled while the rest wait.

A scores-only tile of one launch can also stream (``RowStream``): its last tier
publishes its row as it computes it, in pinned host memory that every GPU reads, and
the launch of the tile below, on another GPU, starts on it at once instead of after the
whole tile.

GPU memory of one tile: its sequences, input and output boundaries (O(h + w)), and a
ring of ``WINDOW`` columns per resident tier (at most the GPU's resident warps, about
8,000 on an H100: 64 MiB with scores only, twice that with origins): bounded by
O(h + w) whatever the tile's area.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import cupy as cp
import numpy as np

from swath.constants import (
    BATCH_FIELDS,
    BATCH_FIRST_TIER,
    BLOCK,
    MINUS_INFINITY,
    STATE_F,
    STATE_H,
    WARP,
    WINDOW,
    Mode,
)
from swath.errors import InvalidParameter
from swath.kernels.gpu._cuda import batch_name, kernel, tile_name
from swath.kernels.scheme import interior
from swath.kernels.tile_origins import Best, check_origins, matrix_wide
from swath.scoring import Scoring

ROWS = {False: 16, True: 4}      # rows per lane: scores only (large tiles), with origins
SHARED_LIMIT = 48 * 1024         # shared memory a launch gets without opting in
MAX_ALPHABET = 110               # the largest alphabet whose scores fit it
WARPS_PER_BLOCK = BLOCK // WARP
# one tile at a time per GPU and process: a launch fills the GPU with tiers that wait on
# each other, and two such launches side by side could each hold what the other waits for
_ONE_TILE: dict[int, threading.Lock] = {}

Boundary = tuple[np.ndarray, np.ndarray]
BatchTile = tuple[np.ndarray, np.ndarray, Boundary, Boundary]   # q, t, top, left


def tile_forward(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode,
                 corner: tuple[int, int], n: int, strip: int,
                 top: Boundary, left: Boundary, rows: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, Best]:
    """Phase 1 on one tile, on the GPU: as ``kernels.cpu.tiles.tile_forward``.

    ``rows`` (4 or 8) overrides the rows per lane, for measurements.
    """
    check_origins(len(q), len(t))
    bottom, right, best = (cp.asnumpy(x).astype(np.int64) for x in _launch(
        q, t, scoring, mode, True, top, left, rows))
    return bottom, right, matrix_wide(bottom, right, best, corner, len(t), n)


@dataclass(frozen=True)
class RowStream:
    """A scores-only tile's last row (H and F, ``row``: ``(2, w)`` int32) and how many of
    its columns are written (``ready``), in pinned host memory that every GPU reads and
    writes: the tile's launch publishes the columns as it computes them, and the launch
    of the tile below, on any GPU, reads them as they come.

    Allocate streams before launching anything that waits on them, and launch in stream
    order: the launch that reads a stream waits (``launched``) until the one that writes
    it has been issued. Some CUDA calls wait on every GPU of the process (pinned memory
    allocations do), and one made between a reader's launch and its writer's would wait
    for the reader, which waits for the writer."""

    row: np.ndarray
    ready: np.ndarray
    memory: cp.cuda.PinnedMemoryPointer
    launched: threading.Event

    def give_up(self) -> None:
        """Let whatever waits on this stream go on (its writer failed): mark every column
        written (a reader's results are then meaningless)."""
        self.ready[0] = self.row.shape[1]
        self.launched.set()


def row_stream(w: int) -> RowStream:
    """An empty stream of a ``w``-column row."""
    flags = cp.cuda.runtime.hostAllocPortable | cp.cuda.runtime.hostAllocMapped
    memory = cp.cuda.PinnedMemoryPointer(cp.cuda.PinnedMemory(4 * (2 * w + 32), flags), 0)
    values = np.frombuffer(memory, dtype=np.int32, count=2 * w + 32)
    values[:] = 0
    return RowStream(values[32:].reshape(2, w), values[:1], memory, threading.Event())


def tile_scores(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, strip: int,
                top: Boundary, left: Boundary, rows: int | None = None,
                stream_in: RowStream | None = None, stream_out: RowStream | None = None
                ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]]:
    """One tile's scores only, on the GPU: as ``kernels.cpu.tiles.tile_scores`` (its
    boundaries come as int32, as the kernel computes them).

    ``rows`` (4, 8 or 16) overrides the rows per lane, for measurements. With
    ``stream_in`` the row above comes from that stream as another launch computes it
    (of ``top`` only the corner, ``top[0][0]``, is read); with ``stream_out`` the tile's
    last row goes to that stream as it is computed. A streamed tile takes one launch.
    """
    bottom, right, best = (cp.asnumpy(x) for x in _launch(
        q, t, scoring, mode, False, top, left, rows,
        stream_in=stream_in, stream_out=stream_out))
    score, i, j = (int(x) for x in best[:3])
    return bottom, right, (score, i, j) if i >= 0 else (0, -1, -1)


def _launch(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, origins: bool,
            top: Boundary, left: Boundary,
            rows: int | None = None, slab: int | None = None,
            stream_in: RowStream | None = None, stream_out: RowStream | None = None
            ) -> tuple[cp.ndarray | np.ndarray, cp.ndarray, np.ndarray]:
    """Run the kernel over the tile, a slab of resident tiers per launch; the tile's last
    row and last column (device) and its best cell (host, tile-local: score, row,
    column, origin; row -1 when none scores above 0). ``slab`` caps the tiers per
    launch (tests)."""
    sub, gap_open, gap_extend = interior(scoring, "a tile")
    h, w = len(q), len(t)
    lane_rows = rows or ROWS[origins]
    goe = gap_open + gap_extend
    shifted, packed, shared = _scores(sub, goe)
    alpha = shifted.shape[0]
    tiers = _tiers(h, lane_rows)
    values = 4 if origins else 2
    fn = kernel("tiles.cu", tile_name(lane_rows, mode == "local", origins, packed))
    grid = _resident_blocks(fn, shared)
    per_launch = min(tiers, slab or tiers, grid * WARPS_PER_BLOCK)
    if (stream_in or stream_out) and per_launch < tiers:
        raise InvalidParameter(f"a streamed tile takes one launch: at most {per_launch} tiers "
                               f"of {WARP * lane_rows} rows on this GPU, this one has {tiers}")
    if stream_in:
        stream_in.launched.wait()
    row_in = _pointer(stream_in.row) if stream_in else _upload(_top_row(top, values), np.int32)
    row_out = _pointer(stream_out.row) if stream_out else cp.empty((values, w), dtype=np.int32)
    ready = (_pointer(stream_in.ready) if stream_in else np.uint64(0),
             _pointer(stream_out.ready) if stream_out else np.uint64(0))
    ring = cp.empty((per_launch, values, WINDOW), dtype=np.int32)
    progress = cp.empty(per_launch, dtype=np.int32)
    right = cp.empty((values, h), dtype=np.int32)
    best = cp.zeros((tiers, 4), dtype=np.int32)
    fixed = (_upload(q, np.uint8), _upload(t, np.uint8), _upload(shifted, np.int32),
             _device32(left[0]), _device32(left[1]))
    with _one_tile():
        for tier0 in range(0, tiers, per_launch):
            count = min(per_launch, tiers - tier0)
            progress.fill(0)
            fn((grid,), (BLOCK,),
               (*fixed, row_in, row_out, ring, progress, right, best,
                np.int32(max(int(top[0][0]), MINUS_INFINITY)), np.int32(h), np.int32(w),
                np.int32(alpha), np.int32(goe), np.int32(gap_extend), np.int32(tier0),
                np.int32(count), *ready), shared_mem=shared)
            if stream_out:
                stream_out.launched.set()
            row_in, row_out = row_out, row_in
        found = _first_best(cp.asnumpy(best), h)
    return stream_out.row.copy() if stream_out else row_in, right, found


def tile_batch(tiles: Sequence[BatchTile], scoring: Scoring, rows: int | None = None
               ) -> list[np.ndarray]:
    """Global-mode tiles' last rows, scores only, on the GPU: as
    ``kernels.cpu.tiles.tile_batch``. Tiles whose tiers fit the GPU together share a
    launch; a taller one takes launches of its own. ``rows`` (4, 8 or 16) overrides
    the rows per lane, for measurements."""
    if not tiles:
        return []
    sub, gap_open, gap_extend = interior(scoring, "a tile")
    goe = gap_open + gap_extend
    shifted, packed, shared = _scores(sub, goe)
    lane_rows = rows or _batch_rows([len(tile[0]) for tile in tiles])
    fn = kernel("tiles.cu", batch_name(lane_rows, packed))
    capacity = _resident_blocks(fn, shared) * WARPS_PER_BLOCK
    out: list[np.ndarray] = [np.empty(0)] * len(tiles)
    group: list[int] = []
    used = 0
    for k, (q, t, top, left) in enumerate(tiles):
        tiers = _tiers(len(q), lane_rows)
        if tiers > capacity:
            row, _, _ = _launch(q, t, scoring, "global", False, top, left, lane_rows)
            out[k] = cp.asnumpy(row)
            continue
        if used + tiers > capacity:
            _launch_batch(fn, [tiles[x] for x in group], group, out, shifted, shared,
                          lane_rows, goe, gap_extend)
            group, used = [], 0
        group.append(k)
        used += tiers
    if group:
        _launch_batch(fn, [tiles[x] for x in group], group, out, shifted, shared, lane_rows,
                      goe, gap_extend)
    return out


def _launch_batch(fn: cp.RawKernel, tiles: list[BatchTile], where: list[int],
                  out: list[np.ndarray], shifted: np.ndarray, shared: int, lane_rows: int,
                  goe: int, gap_extend: int) -> None:
    """One launch of whole tiles; tile k's last row to ``out[where[k]]``."""
    heights = np.array([len(tile[0]) for tile in tiles], dtype=np.int64)
    widths = np.array([len(tile[1]) for tile in tiles], dtype=np.int64)
    tiers = np.array([_tiers(int(h), lane_rows) for h in heights], dtype=np.int64)
    table = np.zeros((len(tiles), BATCH_FIELDS), dtype=np.int64)
    table[1:, 0] = np.cumsum(heights)[:-1]           # residues and rows
    table[1:, 1] = np.cumsum(widths)[:-1]            # residues and columns
    table[:, 2] = [max(int(tile[2][0][0]), MINUS_INFINITY) for tile in tiles]
    table[:, 3], table[:, 4] = heights, widths
    table[1:, BATCH_FIRST_TIER] = np.cumsum(tiers)[:-1]
    total = int(tiers.sum())
    rows_in = np.concatenate([_top_row(tile[2], 2).ravel() for tile in tiles])
    row_out = cp.empty(rows_in.shape, dtype=np.int32)
    with _one_tile():
        fn((_resident_blocks(fn, shared),), (BLOCK,),
           (_upload(np.concatenate([tile[0] for tile in tiles]), np.uint8),
            _upload(np.concatenate([tile[1] for tile in tiles]), np.uint8),
            _upload(shifted, np.int32),
            _device32(np.concatenate([tile[3][0] for tile in tiles])),
            _device32(np.concatenate([tile[3][1] for tile in tiles])),
            _upload(rows_in, np.int32), row_out, cp.empty((total, 2, WINDOW), dtype=np.int32),
            cp.zeros(total, dtype=np.int32), cp.empty(2 * int(heights.sum()), dtype=np.int32),
            _upload(table, np.int64), np.int32(len(tiles)), np.int32(total),
            np.int32(shifted.shape[0]), np.int32(goe), np.int32(gap_extend)),
           shared_mem=shared)
        rows_out = cp.asnumpy(row_out)
    for k, (first, w) in enumerate(zip(table[:, 1].tolist(), widths.tolist(), strict=True)):
        out[where[k]] = rows_out[2 * first:2 * first + 2 * w].reshape(2, w)


def _batch_rows(heights: list[int]) -> int:
    """Rows per lane for a batch: the most that still give its middle tile eight tiers."""
    middle = sorted(heights)[len(heights) // 2]
    return next((r for r in (16, 8) if middle >= 8 * WARP * r), 4)


def _tiers(h: int, lane_rows: int) -> int:
    """A tile's tiers: of 32 R rows, then of 16 R (tiles.cu)."""
    full = h // (WARP * lane_rows)
    return full + -(-(h - full * WARP * lane_rows) // (WARP * lane_rows // 2))


def _scores(sub: np.ndarray, goe: int) -> tuple[np.ndarray, bool, int]:
    """The kernel's substitution scores (shifted by ``goe``), whether they pack in
    bytes, and the shared memory they take."""
    shifted = np.asarray(sub, dtype=np.int64) + goe
    alpha = shifted.shape[0]
    packed = bool(alpha <= 8 and shifted.min() >= -128 and shifted.max() <= 127)
    shared = alpha * (alpha + 1) * 4       # the scores, and a row for padding residues
    if shared > SHARED_LIMIT:
        raise InvalidParameter(f"the GPU tile kernel takes alphabets of at most "
                               f"{MAX_ALPHABET} letters (this one has {alpha}): use the CPU")
    return shifted, packed, shared


def _top_row(top: Boundary, values: int) -> np.ndarray:
    """The tile's input row as the kernel reads a tier's last row: H, F[, oH, oF]."""
    w = len(top[0]) - 1
    row = np.empty((values, w), dtype=np.int32)
    row[0] = np.maximum(top[0][1:], MINUS_INFINITY)
    row[1] = np.maximum(top[1][1:], MINUS_INFINITY)
    if values == 4:
        column = np.arange(1, w + 1, dtype=np.int32) * 4
        row[2], row[3] = column + STATE_H, column + STATE_F
    return row


def _first_best(best: np.ndarray, h: int) -> np.ndarray:
    """The first best cell (row-major) of the tiers' best cells; row -1 if none."""
    found = best[(best[:, 1] <= h) & (best[:, 0] > 0)]
    if not len(found):
        return np.array([0, -1, -1, -1], dtype=np.int64)
    return found[np.lexsort((found[:, 1], -found[:, 0]))[0]].astype(np.int64)


def _one_tile() -> threading.Lock:
    """The current GPU's lock: one tile launch at a time on it (``_ONE_TILE``)."""
    return _ONE_TILE.setdefault(cp.cuda.Device().id, threading.Lock())


def _pointer(host: np.ndarray) -> np.uint64:
    """The address every GPU reads pinned host memory at (unified addressing)."""
    return np.uint64(host.ctypes.data)


def _device32(values: np.ndarray) -> cp.ndarray:
    return _upload(np.maximum(values, MINUS_INFINITY), np.int32)


def _upload(values: np.ndarray, dtype: type) -> cp.ndarray:
    """``values`` as ``dtype`` on the current GPU, copied from pageable memory: CuPy's
    ``asarray`` stages through its pinned memory pool, whose allocations wait on every
    GPU (see ``RowStream``)."""
    host: np.ndarray = np.ascontiguousarray(values, dtype=dtype)
    device = cp.empty(host.shape, dtype=dtype)
    if host.nbytes:
        device.data.copy_from_host(host.ctypes.data, host.nbytes)
    return device


@functools.cache
def _resident_blocks_on(device: int, regs: int, shared: int) -> int:
    """Blocks of the tile kernel that fit the GPU at once: the persistent grid of every
    launch (every warp must be resident, since tiers wait on the tiers above them; the
    kernel spreads a launch's tiers over the grid's blocks)."""
    attrs = cp.cuda.Device(device).attributes
    per_warp = -(-regs * WARP // 256) * 256
    by_regs = attrs["MaxRegistersPerMultiprocessor"] // (per_warp * WARPS_PER_BLOCK)
    by_threads = attrs["MaxThreadsPerMultiProcessor"] // (WARP * WARPS_PER_BLOCK)
    by_shared = attrs["MaxSharedMemoryPerMultiprocessor"] // max(shared, 1)
    per_sm = max(1, min(by_regs, by_threads, by_shared, attrs["MaxBlocksPerMultiprocessor"]))
    return per_sm * attrs["MultiProcessorCount"]


def _resident_blocks(fn: cp.RawKernel, shared: int) -> int:
    return _resident_blocks_on(cp.cuda.Device().id, fn.num_regs, shared + 1024)
