"""Inter-sequence score kernels: one query against 16, 32 or 64 targets at once.

# m: query length, n: target length, L: lanes (targets side by side),
# G: lane groups, A: alphabet size (code A is the padding residue),
# C: columns of a block, residues: uint8 codes, scores: int32.

Targets are sorted by length and cut into groups of L; a group is stored column by
column (``cols[col_off[g] + j, k]`` is residue ``j`` of lane ``k`` of group ``g``)
so that the innermost loop runs across lanes and numba vectorizes it. The columns'
substitution scores for every query residue are gathered once per column and reused
by all ``m`` rows (SWIPE's score profile).

The kernel sweeps the rows once per block of ``C`` columns: within a row the ``C``
cells pass H and E to each other in registers, so that only the block's last column
goes to memory (its H and E) and each column keeps two values a row (F and the H
above). A row of one column at a time loads and stores about 13 vectors a cell;
blocks of 8 need about 6 (measured much faster).
Groups are packed ``C`` columns wide (``pack_lanes(..., multiple=C)``); the padding
residue never raises a local score, and global and semiglobal ends are read at each
lane's own length. ``C`` is small enough that LLVM unrolls the column loop and
vectorizes the lane loop (16 does not: the kernel then runs many times slower).

The 8 and 16-bit kernels never return a wrong score: in local mode a lane whose
best score comes within ``max(matrix)`` of the type's ceiling is flagged; in global
and semiglobal mode the caller only sends pairs whose score bounds (over the packed
width) fit the type. Flagged pairs are re-run by a wider kernel.

Global mode with end costs (``swath.kernels.scheme``) is a kernel of its own: row 0
and column 0 start from them, E takes them along the query's last row, and F in lane
k's last column (``lens[k]``: the costs of a block's columns chosen once a block, so the
cell loop stays vectorized); the kernel without them is unchanged.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.kernels.cpu._jit import jit, readonly
from swath.kernels.cpu.cores import share_tasks

LANES = {np.dtype(np.int8): 64, np.dtype(np.int16): 32, np.dtype(np.int32): 16}
BLOCK_COLUMNS = 8   # C: columns swept together
CHUNK_RESIDUES = 2048   # queries that share a profile: at most this many residues


@functools.cache
def _make_kernel(mode: str, dtype: np.dtype, ends: bool) -> Any:
    T = dtype.type
    L = LANES[dtype]
    C = BLOCK_COLUMNS
    local = mode == "local"
    semiglobal = mode == "semiglobal"
    ceiling = np.iinfo(dtype).max

    @jit
    def kernel(q_res, q_off, chunks, cols_all, col_off, lens_all, skip, sub, gap_open,
               gap_extend, end_open, end_extend, out_all, flags_all, first_task, step):
        """Scores of every query against every lane group.

        q_res, q_off: queries (uint8 codes, int64 offsets). chunks: query indices where
        each chunk of queries starts (and the end); a chunk's queries share the score
        profile of every column block. cols_all, col_off, lens_all: lane groups (see
        module doc; each group a multiple of C columns wide); lens_all[g, k] is 0 for an
        empty lane. skip[qi, g]: pair block not to run (flagged instead). sub: (A + 1,
        A + 1) substitution matrix with the padding row and column; end_open, end_extend:
        the terminal gaps' costs (the interior ones without ``ends``). out_all[qi, g, k]
        score; flags_all[qi, g, k] = 1 where the score is not exact at this width.
        Tasks (a chunk of queries against a lane group) ``first_task, first_task + step,
        ...`` of ``tasks(chunks, col_off)`` (``cores.share_tasks``).

        One function, not a group function called from it: numba's cache keys a closure
        on its captured values, and a captured dispatcher pickles with an id of its
        process, so every process compiled this kernel again and added it to the cache.
        """
        ngroups = col_off.shape[0] - 1
        alphabet = sub.shape[0] - 1
        goe = T(-(gap_open + gap_extend))
        ge = T(-gap_extend)
        end_goe = T(-(end_open + end_extend))
        end_ge = T(-end_extend)
        zero = T(0)
        neg_inf = T(np.iinfo(dtype).min + max(gap_extend, end_extend))
        threshold = T(ceiling - max(sub.max(), 0))
        for task in range(first_task, (chunks.shape[0] - 1) * ngroups, step):
            # the chunk's queries q0 .. q1 - 1 against lane group g (width x L residues)
            q0 = chunks[task // ngroups]
            q1 = chunks[task // ngroups + 1]
            g = task % ngroups
            cols = cols_all[col_off[g]:col_off[g + 1]]
            lens = lens_all[g]
            # the profile has a row per residue the chunk holds (rank[a] is a's row)
            held = np.zeros(alphabet, np.bool_)
            for i in range(q_off[q0], q_off[q1]):
                held[q_res[i]] = True
            residues = np.flatnonzero(held)
            rank = np.cumsum(held) - 1
            profile = np.empty((residues.shape[0], C, L), dtype)
            # query qi's rows: state[q_off[qi] + qi - q_off[q0] - q0 + i] for i in 0 .. m;
            # state[., 0]: H of the row in the last column swept, state[., 1]: E
            state = np.empty((q_off[q1] - q_off[q0] + q1 - q0, 2, L), dtype)
            # lane[qi - q0, 0]: H diagonal to the block's first column, lane[., 1]: best
            lane = np.empty((q1 - q0, 2, L), dtype)
            # per column of the block: F, and H of the row above
            f_col = np.empty((C, L), dtype)
            h_col = np.empty((C, L), dtype)
            # with end costs: a vertical gap's costs in each column of the block, per lane
            # (the end costs in the lane's last column), chosen once a block
            f_goe = np.full((C, L), goe, dtype)
            f_ge = np.full((C, L), ge, dtype)
            for qi in range(q0, q1):
                first = q_off[qi] + qi - q_off[q0] - q0
                for i in range(q_off[qi + 1] - q_off[qi] + 1):
                    gap = zero if local or i == 0 else T(-(end_open + end_extend * i))
                    for k in range(L):
                        state[first + i, 0, k] = gap
                        state[first + i, 1, k] = neg_inf
                for k in range(L):
                    lane[qi - q0, 1, k] = zero if local else T(np.iinfo(dtype).min)
            for j0 in range(0, cols.shape[0], C):
                for c in range(C):
                    col = cols[j0 + c]
                    for r in range(residues.shape[0]):
                        scores = sub[residues[r]]
                        for k in range(L):
                            profile[r, c, k] = scores[col[k]]
                    if ends:
                        for k in range(L):
                            last = j0 + c + 1 == lens[k]
                            f_goe[c, k] = end_goe if last else goe
                            f_ge[c, k] = end_ge if last else ge
                for qi in range(q0, q1):
                    if skip[qi, g]:
                        continue
                    q = q_res[q_off[qi]:q_off[qi + 1]]
                    rows = state[q_off[qi] + qi - q_off[q0] - q0:]
                    diagonal_in = lane[qi - q0, 0]
                    best_of = lane[qi - q0, 1]
                    for c in range(C):
                        j = j0 + c
                        top = (zero if local or semiglobal
                               else T(-(end_open + end_extend * (j + 1))))
                        for k in range(L):
                            f_col[c, k] = neg_inf
                            h_col[c, k] = top
                    for k in range(L):
                        diagonal_in[k] = rows[0, 0, k]
                        rows[0, 0, k] = h_col[C - 1, k]
                    for i in range(q.shape[0]):
                        score = profile[rank[q[i]]]
                        row = rows[i + 1]
                        row_goe, row_ge = goe, ge
                        if ends and i + 1 == q.shape[0]:
                            row_goe, row_ge = end_goe, end_ge
                        for k in range(L):
                            left = row[0, k]
                            e = row[1, k]
                            diagonal = diagonal_in[k]
                            diagonal_in[k] = left
                            best = best_of[k]
                            for c in range(C):
                                e = max(T(e + row_ge), T(left + row_goe))
                                up = h_col[c, k]
                                if ends:
                                    f = max(T(f_col[c, k] + f_ge[c, k]), T(up + f_goe[c, k]))
                                else:
                                    f = max(T(f_col[c, k] + ge), T(up + goe))
                                h = max(max(T(diagonal + score[c, k]), e), f)
                                if local:
                                    h = max(h, zero)
                                    best = max(best, h)
                                diagonal = up
                                h_col[c, k] = h
                                f_col[c, k] = f
                                left = h
                            row[0, k] = left
                            row[1, k] = e
                            best_of[k] = best
                    if not local:
                        for c in range(C):
                            j = j0 + c
                            for k in range(L):
                                if semiglobal and j < lens[k]:
                                    best_of[k] = max(best_of[k], h_col[c, k])
                                elif not semiglobal and j + 1 == lens[k]:
                                    best_of[k] = h_col[c, k]
            for qi in range(q0, q1):
                for k in range(L):
                    out_all[qi, g, k] = lane[qi - q0, 1, k]
                    flags_all[qi, g, k] = skip[qi, g] or (
                        local and lane[qi - q0, 1, k] > threshold)

    return kernel


def lane_kernel(mode: str, dtype: np.dtype | type, ends: bool = False) -> Any:
    """The compiled kernel for ``mode`` at the width of ``dtype`` (int8, int16 or int32);
    with ``ends``, global mode's with end costs."""
    return _make_kernel(mode, np.dtype(dtype), ends)


def tasks(chunks: np.ndarray, col_off: np.ndarray) -> int:
    """The lane kernel's tasks: every chunk of queries against every lane group."""
    return (len(chunks) - 1) * (len(col_off) - 1)


def query_chunks(q_off: np.ndarray, residues: int = CHUNK_RESIDUES) -> np.ndarray:
    """Where each chunk of consecutive queries starts, and the end: chunks of at most
    ``residues`` residues (a longer query is a chunk of its own)."""
    starts = [0]
    for qi in range(1, len(q_off) - 1):
        if q_off[qi + 1] - q_off[starts[-1]] > residues:
            starts.append(qi)
    return np.array([*starts, len(q_off) - 1], dtype=np.int64)


def padded_matrix(matrix: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """The matrix with a padding residue (last code) scoring ``min(matrix, 0)``."""
    size = matrix.shape[0]
    sub = np.full((size + 1, size + 1), min(int(matrix.min()), 0), dtype=dtype)
    sub[:size, :size] = matrix
    return sub


def pack_lanes(res: np.ndarray, off: np.ndarray, order: np.ndarray, lanes: int, pad: int,
               multiple: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lay targets ``order[0], order[1], ...`` side by side in groups of ``lanes``.

    Returns ``cols`` (total columns x lanes, uint8, ``pad`` past a target's end; each
    group's width its longest target rounded up to ``multiple``), ``col_off`` (int64,
    groups + 1) and ``lens`` (groups x lanes, int64, 0 for unused lanes).
    """
    ngroups = -(-len(order) // lanes)
    flat = np.full(ngroups * lanes, -1, dtype=np.int64)
    flat[:len(order)] = order
    slots = flat.reshape(ngroups, lanes)
    lengths = np.diff(off)
    lens = np.where(slots >= 0, lengths[np.maximum(slots, 0)], 0)
    col_off = np.zeros(ngroups + 1, dtype=np.int64)
    np.cumsum(-(-lens.max(axis=1) // multiple) * multiple, out=col_off[1:])
    cols = np.empty((int(col_off[-1]), lanes), dtype=np.uint8)
    share_tasks(_fill_cols, ngroups, readonly(res), readonly(off), slots, col_off, pad, cols)
    return cols, col_off, lens


@jit
def _fill_cols(res, off, slots, col_off, pad, cols, first_group, step):
    for g in range(first_group, slots.shape[0], step):
        first, width = col_off[g], col_off[g + 1] - col_off[g]
        for k in range(slots.shape[1]):
            t = slots[g, k]
            start = off[max(t, 0)]
            end = start if t < 0 else off[t + 1]
            for j in range(end - start):
                cols[first + j, k] = res[start + j]
            for j in range(end - start, width):
                cols[first + j, k] = pad
