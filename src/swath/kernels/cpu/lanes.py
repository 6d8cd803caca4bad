"""Inter-sequence score kernels: one query against 16 or 32 targets at once.

# m: query length, n: target length, L: lanes (targets side by side),
# G: lane groups, A: alphabet size (code A is the padding residue),
# residues: uint8 codes, scores: int32.

Targets are sorted by length and cut into groups of L; a group is stored column by
column (``cols[col_off[g] + j, k]`` is residue ``j`` of lane ``k`` of group ``g``)
so that the innermost loop runs across lanes and numba vectorizes it. The column's
substitution scores for every query residue are gathered once per column and reused
by all ``m`` rows (SWIPE's score profile).

The 16-bit kernel never returns a wrong score: in local mode a lane whose best score
comes within ``max(matrix)`` of 32767 is flagged; in global and semiglobal mode the
caller only sends pairs whose score bounds fit in 16 bits. Flagged pairs are re-run
by the 32-bit kernel.
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np

from swath.kernels.cpu._jit import jit

LANES = {np.dtype(np.int8): 64, np.dtype(np.int16): 32, np.dtype(np.int32): 16}


@functools.cache
def _make_kernel(mode: str, dtype: np.dtype) -> Any:
    T = dtype.type
    L = LANES[dtype]
    local = mode == "local"
    semiglobal = mode == "semiglobal"
    ceiling = np.iinfo(dtype).max

    @jit(parallel=True)
    def kernel(q_res, q_off, cols_all, col_off, lens_all, skip, sub, gap_open, gap_extend,
               out_all, flags_all):
        """Scores of every query against every lane group.

        q_res, q_off: queries (uint8 codes, int64 offsets). cols_all, col_off, lens_all:
        lane groups (see module doc); lens_all[g, k] is 0 for an empty lane. skip[qi, g]:
        pair block not to run (flagged instead). sub: (A + 1, A + 1) substitution matrix
        with the padding row and column. out_all[qi, g, k] score; flags_all[qi, g, k] = 1
        where the score is not exact at this width.

        One function, not a group function called from it: numba's cache keys a closure
        on its captured values, and a captured dispatcher pickles with an id of its
        process, so every process compiled this kernel again (1.5 s) and added it to the
        cache.
        """
        ngroups = col_off.shape[0] - 1
        for task in numba.prange((q_off.shape[0] - 1) * ngroups):
            qi = task // ngroups
            g = task % ngroups
            if skip[qi, g]:
                for k in range(L):
                    flags_all[qi, g, k] = 1
                continue
            # query qi against lane group g (width x L residues)
            q = q_res[q_off[qi]:q_off[qi + 1]]
            cols = cols_all[col_off[g]:col_off[g + 1]]
            lens = lens_all[g]
            out = out_all[qi, g]
            flags = flags_all[qi, g]
            m = q.shape[0]
            alphabet = sub.shape[0] - 1
            goe = T(-(gap_open + gap_extend))
            ge = T(-gap_extend)
            zero = T(0)
            neg_inf = T(np.iinfo(dtype).min + gap_extend)
            # state[i, 0]: H of row i in the last column, state[i, 1]: E of row i
            state = np.empty((m + 1, 2, L), dtype)
            # lane[0]: F, lane[1]: H diagonal, lane[2]: H above, lane[3]: best
            lane = np.zeros((4, L), dtype)
            profile = np.empty((alphabet, L), dtype)
            for i in range(m + 1):
                gap = zero if local or i == 0 else T(-(gap_open + gap_extend * i))
                for k in range(L):
                    state[i, 0, k] = gap
                    state[i, 1, k] = neg_inf
                    if not local:
                        lane[3, k] = T(np.iinfo(dtype).min)
            for j in range(cols.shape[0]):
                col = cols[j]
                for a in range(alphabet):
                    for k in range(L):
                        profile[a, k] = sub[a, col[k]]
                top = zero if local or semiglobal else T(-(gap_open + gap_extend * (j + 1)))
                for k in range(L):
                    lane[0, k] = neg_inf
                    lane[1, k] = state[0, 0, k]
                    lane[2, k] = top
                    state[0, 0, k] = top
                for i in range(m):
                    score = profile[q[i]]
                    row = state[i + 1]
                    for k in range(L):
                        left = row[0, k]
                        e = max(T(row[1, k] + ge), T(left + goe))
                        f = max(T(lane[0, k] + ge), T(lane[2, k] + goe))
                        h = max(max(T(lane[1, k] + score[k]), e), f)
                        if local:
                            h = max(h, zero)
                            lane[3, k] = max(lane[3, k], h)
                        lane[1, k] = left
                        row[0, k] = h
                        row[1, k] = e
                        lane[0, k] = f
                        lane[2, k] = h
                if not local:
                    for k in range(L):
                        if semiglobal and j < lens[k]:
                            lane[3, k] = max(lane[3, k], state[m, 0, k])
                        elif not semiglobal and j + 1 == lens[k]:
                            lane[3, k] = state[m, 0, k]
            threshold = T(ceiling - max(sub.max(), 0))
            for k in range(L):
                out[k] = lane[3, k]
                flags[k] = local and lane[3, k] > threshold

    return kernel


def lane_kernel(mode: str, dtype: np.dtype | type) -> Any:
    """The compiled kernel for ``mode`` at the width of ``dtype`` (int8, int16 or int32)."""
    return _make_kernel(mode, np.dtype(dtype))


def padded_matrix(matrix: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """The matrix with a padding residue (last code) scoring ``min(matrix, 0)``."""
    size = matrix.shape[0]
    sub = np.full((size + 1, size + 1), min(int(matrix.min()), 0), dtype=dtype)
    sub[:size, :size] = matrix
    return sub


def pack_lanes(res: np.ndarray, off: np.ndarray, order: np.ndarray, lanes: int, pad: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lay targets ``order[0], order[1], ...`` side by side in groups of ``lanes``.

    Returns ``cols`` (total columns x lanes, uint8, ``pad`` past a target's end),
    ``col_off`` (int64, groups + 1) and ``lens`` (groups x lanes, int64, 0 for unused lanes).
    """
    ngroups = -(-len(order) // lanes)
    flat = np.full(ngroups * lanes, -1, dtype=np.int64)
    flat[:len(order)] = order
    slots = flat.reshape(ngroups, lanes)
    lengths = np.diff(off)
    lens = np.where(slots >= 0, lengths[np.maximum(slots, 0)], 0)
    col_off = np.zeros(ngroups + 1, dtype=np.int64)
    np.cumsum(lens.max(axis=1), out=col_off[1:])
    cols = np.full((int(col_off[-1]), lanes), pad, dtype=np.uint8)
    _fill_cols(res, off, slots, col_off, cols)
    return cols, col_off, lens


@jit
def _fill_cols(res, off, slots, col_off, cols):
    for g in range(slots.shape[0]):
        for k in range(slots.shape[1]):
            t = slots[g, k]
            if t >= 0:
                start = off[t]
                for j in range(off[t + 1] - start):
                    cols[col_off[g] + j, k] = res[start + j]
