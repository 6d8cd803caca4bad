"""Banded global scores of many pairs on the CPU: the first phase of all against all.

# nq: queries, nt: targets, m, n: a pair's lengths, d = i - j: the diagonal of cell
# (i, j), W: a band's diagonals, L: lanes, G: lane groups, residues: uint8 codes,
# scores: int32.

Pair (qi, tj) is scored over the global alignments whose every cell lies on a diagonal
from ``lo[qi, tj]`` to ``hi[qi, tj]`` (clipped to ``-n .. m``); a band without both
ends of the path (diagonals 0 and ``m - n``), ``lo > hi`` among them, skips the pair.
A band that holds every diagonal gives the optimal global score.

One query runs against L targets at once (targets sorted by length and packed in lane
groups, as the score kernel packs them): 32 in 16-bit lanes where every value fits
them, else 16 in 32-bit lanes. The group's band is the union of its lanes'
bands, kept as rows of W cells a lane indexed by diagonal: cell w of a row reads its
diagonal neighbour at w and the cell above at w - 1 of the row before, and the cell to
its left, just computed (the row goes from the last diagonal to the first, left to
right); the row before and the new one are two arrays. A cell off its own lane's band, or left
of column 0, is minus infinity, so each lane gets exactly its band's score; cells past
a lane's last column are computed and never read (no path leaves them).
Exact for any pair whose scores fit 32 bits.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.constants import MINUS_INFINITY, MINUS_INFINITY_64
from swath.kernels.band_geometry import SKIPPED, clip_bands
from swath.kernels.bounds import fits_every_mode
from swath.kernels.cpu._jit import jit
from swath.kernels.cpu.cores import share_tasks
from swath.kernels.cpu.lanes import pack_lanes, padded_matrix
from swath.kernels.scheme import interior
from swath.scoring import Scoring

LANES = {np.dtype(np.int16): 32, np.dtype(np.int32): 16}   # L: targets side by side
QUERY_CHUNK = 32                        # queries of a task (they share its profile)


def _floor(dtype: np.dtype) -> int:
    """Minus infinity at the width of ``dtype``: half its least value (room to subtract)."""
    return MINUS_INFINITY if dtype == np.int32 else int(np.iinfo(dtype).min) // 2


@jit(inline="always")
def _band_row(T, i, q, profile, lane, above_row, row, lo, width, ncols, gap_open, gap_extend,
              floor, sign):
    """Row ``i`` of a band kernel's lane group (``_make_kernel``) from the row before
    (``above_row``) into ``row``, in lanes of the number type ``T``: two distinct arrays,
    as LLVM vectorizes the cells across lanes only while it can tell apart the arrays a
    cell reads and writes (a swap of the two would hide it). Module-level, not a closure
    of the kernel: a kernel that closes over another compiled function is compiled again
    in every process (numba's cache cannot key it)."""
    L = lane.shape[1]
    ge, gf, neg = T(gap_extend), T(gap_open + gap_extend), T(floor)
    score = profile[q[i - 1]]
    edge = T(max(-(gap_open + i * gap_extend), floor))
    for k in range(L):
        lane[0, k] = neg
        lane[1, k] = neg
    for v in range(width):
        w = width - 1 - v
        j = i - lo - w              # the cell's column
        scores = score[min(max(j - 1, 0), ncols - 1)]
        above, diagonal, cells = above_row[w], above_row[w + 1], row[w + 1]
        at = T(w)
        # all ones where true: left of column 0, on column 0
        before, column0 = T(-1 if j < 0 else 0), T(-1 if j == 0 else 0)
        for k in range(L):
            left = lane[0, k]
            f = lane[1, k]
            up = max(T(above[1, k] - ge), T(above[0, k] - gf))
            f = max(T(f - ge), T(left - gf))
            cell = max(max(T(diagonal[0, k] + scores[k]), up), f)
            # off the lane's band or left of column 0: all ones (the sign bit of a
            # difference, spread); selects by masks, which AVX2 vectorizes where it
            # leaves compares and branches scalar
            off = T(T(T(at - lane[2, k]) | T(lane[3, k] - at)) >> sign) | before
            cell = T(T(edge & column0) | T(max(cell, neg) & ~column0))
            cell = T(T(cell & ~off) | T(neg & off))
            gap = off | column0
            up = T(T(max(up, neg) & ~gap) | T(neg & gap))
            cells[0, k] = cell
            cells[1, k] = up
            lane[0, k] = cell
            lane[1, k] = max(f, neg)


@functools.cache
def _make_kernel(dtype: np.dtype) -> Any:
    T = dtype.type
    L = LANES[dtype]
    floor = _floor(dtype)
    sign = T(8 * dtype.itemsize - 1)     # a right shift by this spreads the sign bit

    @jit
    def kernel(q_res, q_off, cols_all, col_off, lens_all, first, last, sub, gap_open,
               gap_extend, out, first_task, step):
        """first[qi, g, k], last[qi, g, k]: lane k's clipped band (last < first: no path,
        the lane is skipped); out[qi, g, k] its score (``SKIPPED`` where skipped).

        One function without a branch around the cells: LLVM vectorizes the cell loop
        across lanes only so (a query whose lanes are all skipped runs a band of one
        diagonal instead of being skipped).
        """
        nq, ngroups = q_off.shape[0] - 1, col_off.shape[0] - 1
        chunks = -(-nq // QUERY_CHUNK)
        neg = T(floor)
        for task in range(first_task, ngroups * chunks, step):
            g = task // chunks
            cols = cols_all[col_off[g]:col_off[g + 1]]
            ncols = cols.shape[0]
            lens = lens_all[g]
            # profile[a, j, k]: query residue a against column j of lane k
            profile = np.empty((sub.shape[0], max(ncols, 1), L), dtype)
            for a in range(sub.shape[0]):
                for j in range(ncols):
                    for k in range(L):
                        profile[a, j, k] = sub[a, cols[j, k]]
            # lane[0]: H left of the cell, lane[1]: F, lane[2 .. 3]: the lane's band (w)
            lane = np.empty((4, L), dtype)
            chunk = task % chunks
            for qi in range(chunk * QUERY_CHUNK, min(nq, (chunk + 1) * QUERY_CHUNK)):
                q = q_res[q_off[qi]:q_off[qi + 1]]
                m = q.shape[0]
                lo, hi = np.int64(-MINUS_INFINITY_64), np.int64(MINUS_INFINITY_64)
                for k in range(L):
                    if first[qi, g, k] <= last[qi, g, k]:
                        lo = min(lo, first[qi, g, k])
                        hi = max(hi, last[qi, g, k])
                lo, hi = (lo, hi) if lo <= hi else (np.int64(0), np.int64(0))
                for k in range(L):
                    lane[2, k] = T(first[qi, g, k] - lo)
                    lane[3, k] = T(last[qi, g, k] - lo)
                width = hi - lo + 1
                # row[w + 1, 0 | 1, k]: H, E of the last row on diagonal lo + w (row[0]:
                # below the band); the row being computed goes to new, the next back to row
                row = np.empty((width + 1, 2, L), dtype)
                new = np.empty((width + 1, 2, L), dtype)
                for k in range(L):
                    row[0, 0, k] = row[0, 1, k] = new[0, 0, k] = new[0, 1, k] = neg
                for w in range(width):
                    j = -(lo + w)                   # row 0
                    top = T(0 if j == 0 else max(-(gap_open + j * gap_extend), floor))
                    for k in range(L):
                        inside = j >= 0 and lane[2, k] <= w <= lane[3, k]
                        row[w + 1, 0, k] = top if inside else neg
                        row[w + 1, 1, k] = neg
                # rows in pairs, from one array into the other and back: no copy a row
                for i in range(1, m + 1, 2):
                    _band_row(T, i, q, profile, lane, row, new, lo, width, ncols, gap_open,
                              gap_extend, floor, sign)
                    if i < m:
                        _band_row(T, i + 1, q, profile, lane, new, row, lo, width, ncols,
                                  gap_open, gap_extend, floor, sign)
                final = new if m % 2 else row          # row m
                for k in range(L):
                    valid = lane[2, k] <= lane[3, k]
                    out[qi, g, k] = final[m - lens[k] - lo + 1, 0, k] if valid else SKIPPED

    return kernel


def band_scores(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                lo: np.ndarray, hi: np.ndarray, scoring: Scoring) -> np.ndarray:
    """Global scores of every query against every target within each pair's band,
    ``(nq, nt)`` int32; ``SKIPPED`` where the band holds no path (``lo > hi`` among them).

    16-bit lanes (32 targets at once) where every value of every pair fits them
    (``bounds.fits_every_mode`` with the kernel's minus infinity), else 32-bit (16)."""
    matrix, gap_open, gap_extend = interior(scoring, "the band")
    nq, nt = len(q_off) - 1, len(t_off) - 1
    if not nq or not nt:
        return np.empty((nq, nt), dtype=np.int32)
    q_off, t_off = q_off.astype(np.int64), t_off.astype(np.int64)
    m, n = np.diff(q_off)[:, None], np.diff(t_off)[None, :]
    first, last, holds = clip_bands(q_off, t_off, np.broadcast_to(lo, (nq, nt)),
                                    np.broadcast_to(hi, (nq, nt)))
    first, last = first.astype(np.int64), last.astype(np.int64)
    first[~holds], last[~holds] = 0, -1    # small: the kernel keeps bands relative to the union
    # 16 bits where the values and the diagonals (a band spans at most m + n + 1) fit them
    narrow = np.dtype(np.int16)
    longest = int(m.max()) + int(n.max())
    # the kernel's band masks subtract diagonal offsets of up to 2 (m + n) + 1
    dtype = narrow if 2 * longest + 1 < np.iinfo(narrow).max and fits_every_mode(
        int(m.max()), int(n.max()), matrix, gap_open, gap_extend, narrow,
        floor=_floor(narrow)) else np.dtype(np.int32)
    lanes = LANES[dtype]
    order = np.argsort(n[0], kind="stable")
    cols, col_off, lens = pack_lanes(t_res, t_off, order, lanes, pad=matrix.shape[0])
    groups = len(col_off) - 1
    slots = np.full(groups * lanes, -1, dtype=np.int64)
    slots[:nt] = order
    # C order whatever the shapes (F or neither by the count of lane groups): numba would
    # compile the kernel again, 10 to 20 s, for each layout it is given
    lane_first = np.ascontiguousarray(np.where(slots >= 0, first[:, np.maximum(slots, 0)], 0))
    lane_last = np.ascontiguousarray(np.where(slots >= 0, last[:, np.maximum(slots, 0)], -1))
    out = np.empty((nq, groups, lanes), dtype=np.int32)
    share_tasks(_make_kernel(dtype), groups * -(-nq // QUERY_CHUNK), q_res, q_off, cols,
                col_off, lens, lane_first.reshape(nq, groups, lanes),
                lane_last.reshape(nq, groups, lanes), padded_matrix(matrix, dtype),
                int(gap_open), int(gap_extend), out)
    back = np.empty(nt, dtype=np.int64)
    back[order] = np.arange(nt)
    return out.reshape(nq, -1)[:, back]
