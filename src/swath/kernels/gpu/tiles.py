"""One tile of a long pair on the GPU: the twin of ``kernels/cpu/tiles.py``.

# h x w: the tile; R: rows per lane; bands of 32 R rows, one warp each (see tiles.cu).

Same inputs and outputs as the CPU twin, so the engine swaps one for the other. The
CPU's ``strip`` has no part here: the GPU computes in bands of rows, the strips
transposed, and its granularity is ``rows`` (R) instead.

A launch's bands wait on each other, so all of them must be resident at once: the
launch is sized to the GPU's free residency when nothing else runs on it, and tiles
run one at a time per process. A GPU shared with other processes' long-running
kernels (MPS, another job) could leave some bands unscheduled while the rest wait.

GPU memory of one tile: its sequences, input and output boundaries (O(h + w)), and a
ring of ``WINDOW`` columns per resident band (at most the GPU's resident warps, about
8,000 on an H100: 64 MiB with scores only, twice that with origins): bounded by
O(h + w) whatever the tile's area.
"""

from __future__ import annotations

import functools
import threading

import cupy as cp
import numpy as np

from swath.errors import InvalidParameter
from swath.kernels.gpu._cuda import kernel, tile_name
from swath.kernels.tile_origins import MINUS_INFINITY, Best, F, H, check_origins, matrix_wide

ROWS = {False: 16, True: 4}      # rows per lane: scores only (large tiles), with origins
WINDOW = 1024                    # columns of a band's ring (tiles.cu)
SHARED_LIMIT = 48 * 1024         # shared memory a launch gets without opting in
MAX_ALPHABET = 110               # the largest alphabet whose scores fit it
WARP = 32
WARPS_PER_BLOCK = 4
# one tile at a time per process: a launch fills the GPU with bands that wait on each
# other, and two such launches side by side could each hold what the other waits for
_ONE_TILE = threading.Lock()

Boundary = tuple[np.ndarray, np.ndarray]


def tile_forward(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
                 local: bool, corner: tuple[int, int], n: int, strip: int,
                 top: Boundary, left: Boundary, rows: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, Best]:
    """Phase 1 on one tile, on the GPU: as ``kernels.cpu.tiles.tile_forward``.

    ``rows`` (4 or 8) overrides the rows per lane, for measurements.
    """
    check_origins(len(q), len(t))
    bottom, right, best = (cp.asnumpy(x).astype(np.int64) for x in _launch(
        q, t, sub, gap_open, gap_extend, local, True, top, left, rows))
    return bottom, right, matrix_wide(bottom, right, best, corner, len(t), n)


def tile_scores(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
                local: bool, strip: int, top: Boundary, left: Boundary, rows: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]]:
    """One tile's scores only, on the GPU: as ``kernels.cpu.tiles.tile_scores`` (its
    boundaries come as int32, as the kernel computes them).

    ``rows`` (4, 8 or 16) overrides the rows per lane, for measurements.
    """
    bottom, right, best = (cp.asnumpy(x) for x in _launch(
        q, t, sub, gap_open, gap_extend, local, False, top, left, rows))
    score, i, j = (int(x) for x in best[:3])
    return bottom, right, (score, i, j) if i >= 0 else (0, -1, -1)


def _launch(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
            local: bool, origins: bool, top: Boundary, left: Boundary,
            rows: int | None = None, slab: int | None = None
            ) -> tuple[cp.ndarray, cp.ndarray, np.ndarray]:
    """Run the kernel over the tile, a slab of resident bands per launch; the tile's last
    row and last column (device) and its best cell (host, tile-local: score, row,
    column, origin; row -1 when none scores above 0). ``slab`` caps the bands per
    launch (tests)."""
    h, w = len(q), len(t)
    lane_rows = rows or ROWS[origins]
    goe = gap_open + gap_extend
    shifted = np.asarray(sub, dtype=np.int64) + goe
    alpha = shifted.shape[0]
    packed = alpha <= 8 and shifted.min() >= -128 and shifted.max() <= 127
    shared = alpha * (alpha + 1) * 4       # the scores, and a row for padding residues
    if shared > SHARED_LIMIT:
        raise InvalidParameter(f"the GPU tile kernel takes alphabets of at most "
                               f"{MAX_ALPHABET} letters (this one has {alpha}): use the CPU")
    full = h // (WARP * lane_rows)         # bands of 32 R rows, then of 16 R (tiles.cu)
    bands = full + -(-(h - full * WARP * lane_rows) // (WARP * lane_rows // 2))
    values = 4 if origins else 2
    fn = kernel("tiles.cu", tile_name(lane_rows, local, origins, packed))
    per_launch = min(bands, slab or bands, _resident_blocks(fn, shared) * WARPS_PER_BLOCK)
    row_in = _top_row(top, values)
    row_out = cp.empty_like(row_in)
    ring = cp.empty((per_launch, values, WINDOW), dtype=np.int32)
    progress = cp.empty(per_launch, dtype=np.int32)
    right = cp.empty((values, h), dtype=np.int32)
    best = cp.zeros((bands, 4), dtype=np.int32)
    fixed = (cp.asarray(q, dtype=np.uint8), cp.asarray(t, dtype=np.uint8),
             cp.asarray(shifted, dtype=np.int32), _device32(left[0]), _device32(left[1]))
    with _ONE_TILE:
        for band0 in range(0, bands, per_launch):
            count = min(per_launch, bands - band0)
            progress.fill(0)
            fn((-(-count // WARPS_PER_BLOCK),), (WARPS_PER_BLOCK * WARP,),
               (*fixed, row_in, row_out, ring, progress, right, best,
                np.int32(max(int(top[0][0]), MINUS_INFINITY)), np.int32(h), np.int32(w),
                np.int32(alpha), np.int32(goe), np.int32(gap_extend), np.int32(band0),
                np.int32(count)), shared_mem=shared)
            row_in, row_out = row_out, row_in
        found = _first_best(cp.asnumpy(best), h)
    return row_in, right, found


def _top_row(top: Boundary, values: int) -> cp.ndarray:
    """The tile's input row as the kernel reads a band's last row: H, F[, oH, oF]."""
    w = len(top[0]) - 1
    row = np.empty((values, w), dtype=np.int32)
    row[0] = np.maximum(top[0][1:], MINUS_INFINITY)
    row[1] = np.maximum(top[1][1:], MINUS_INFINITY)
    if values == 4:
        column = np.arange(1, w + 1, dtype=np.int32) * 4
        row[2], row[3] = column + H, column + F
    return cp.asarray(row)


def _first_best(best: np.ndarray, h: int) -> np.ndarray:
    """The first best cell (row-major) of the bands' best cells; row -1 if none."""
    found = best[(best[:, 1] <= h) & (best[:, 0] > 0)]
    if not len(found):
        return np.array([0, -1, -1, -1], dtype=np.int64)
    return found[np.lexsort((found[:, 1], -found[:, 0]))[0]].astype(np.int64)


def _device32(values: np.ndarray) -> cp.ndarray:
    return cp.asarray(np.maximum(values, MINUS_INFINITY).astype(np.int32))


@functools.cache
def _resident_blocks_on(device: int, regs: int, shared: int) -> int:
    """Blocks of the tile kernel that fit the GPU at once: the persistent grid (every
    warp must be resident, since bands wait on the bands above them)."""
    attrs = cp.cuda.Device(device).attributes
    per_warp = -(-regs * WARP // 256) * 256
    by_regs = attrs["MaxRegistersPerMultiprocessor"] // (per_warp * WARPS_PER_BLOCK)
    by_threads = attrs["MaxThreadsPerMultiProcessor"] // (WARP * WARPS_PER_BLOCK)
    by_shared = attrs["MaxSharedMemoryPerMultiprocessor"] // max(shared, 1)
    per_sm = max(1, min(by_regs, by_threads, by_shared, attrs["MaxBlocksPerMultiprocessor"]))
    return per_sm * attrs["MultiProcessorCount"]


def _resident_blocks(fn: cp.RawKernel, shared: int) -> int:
    return _resident_blocks_on(cp.cuda.Device().id, fn.num_regs, shared + 1024)
