"""Direction codes of one query against up to 16 targets at once (32-bit lanes).

# m: query length, w: longest target of the group, L: lanes (16), A: alphabet size.
# cols: (w, L) uint8 target residues (code A past a target's end), dirs: (ceil(w / 2), m, L)
# uint8, two columns a byte (low nibble: even column).

The kernel runs the recurrences and tie rules of ``traceback._fill`` column by column,
with the innermost loop across lanes so that numba vectorizes it: each lane is one
target against the same query. ``dirs[:, :, k].T`` is then laid out exactly as
``_fill``'s codes for lane ``k``, and ``traceback._walk`` reads it as it is. A search's
kept hits are this shape: each query with its top-k targets.

Values are int32; callers send only pairs whose value bounds fit
(``bounds.fits_every_mode``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.kernels.cpu._jit import jit

LANES = 16
I32, U8 = np.int32, np.uint8
_NEG_INF = I32(-(1 << 30))


@functools.cache
def _make_fill(mode: int) -> Any:
    local = mode == 0
    global_ = mode == 1
    semiglobal = mode == 2

    @jit
    def lane_fill(q, cols, lens, sub, gap_open, gap_extend, dirs, ends):
        m = q.shape[0]
        L = LANES
        alphabet = sub.shape[0]
        goe = I32(gap_open + gap_extend)
        ge = I32(gap_extend)
        zero = I32(0)
        # state[i, 0]: H of row i in the last column, state[i, 1]: E of row i
        state = np.empty((m + 1, 2, L), np.int32)
        # lane rows: F, H above, H diagonal, best, its row, its column, target length
        lane = np.zeros((7, L), np.int32)
        profile = np.empty((alphabet, L), np.int32)
        for i in range(m + 1):
            h = zero if local or i == 0 else I32(-(gap_open + gap_extend * i))
            for k in range(L):
                state[i, 0, k] = h
                state[i, 1, k] = _NEG_INF
        for k in range(L):
            lane[3, k] = zero if local else _NEG_INF
            lane[6, k] = lens[k]
        for j in range(cols.shape[0]):
            col = cols[j]
            for a in range(alphabet):
                for k in range(L):
                    profile[a, k] = sub[a, col[k]]
            top = zero if not global_ else I32(-(gap_open + gap_extend * (j + 1)))
            for k in range(L):
                lane[0, k] = _NEG_INF
                lane[1, k] = top
                lane[2, k] = state[0, 0, k]
                state[0, 0, k] = top
            codes = dirs[j >> 1]
            shift = (j & 1) * 4
            kept = U8(0 if shift == 0 else 15)     # an even column overwrites stale bytes
            here = I32(j)
            for i in range(m):
                score = profile[q[i]]
                row = state[i + 1]
                out = codes[i]
                at = I32(i + 1)
                for k in range(L):
                    left = row[0, k]
                    e_open = I32(left - goe)
                    e_ext = I32(row[1, k] - ge)
                    e = max(e_open, e_ext)
                    f_open = I32(lane[1, k] - goe)
                    f_ext = I32(lane[0, k] - ge)
                    f = max(f_open, f_ext)
                    h = I32(lane[2, k] + score[k])
                    src = I32(2) if e > h else I32(1)
                    h = max(h, e)
                    src = I32(3) if f > h else src
                    h = max(h, f)
                    if local:
                        src = zero if h <= zero else src
                        h = max(h, zero)
                        # first best cell in row-major order, visited column by column
                        b = lane[3, k]
                        better = (here < lane[6, k]) & ((h > b) | ((h == b) & (at < lane[4, k])))
                        lane[3, k] = h if better else b
                        lane[4, k] = at if better else lane[4, k]
                        lane[5, k] = here + I32(1) if better else lane[5, k]
                    code = src | (I32(4) if e_ext > e_open else zero) \
                        | (I32(8) if f_ext > f_open else zero)
                    out[k] = (out[k] & kept) | U8(code << shift)
                    lane[2, k] = left
                    row[0, k] = h
                    row[1, k] = e
                    lane[0, k] = f
                    lane[1, k] = h
            if not local:
                for k in range(L):
                    last = state[m, 0, k]
                    if (semiglobal and j < lens[k] and last > lane[3, k]) \
                            or (global_ and j + 1 == lens[k]):
                        lane[3, k] = last
                        lane[5, k] = I32(j + 1)
        for k in range(L):
            ends[0, k] = lane[3, k]
            ends[1, k] = lane[4, k] if local else m
            ends[2, k] = lane[5, k]

    return lane_fill


def lane_fill(q: np.ndarray, cols: np.ndarray, lens: np.ndarray, sub: np.ndarray,
              gap_open: int, gap_extend: int, mode: int, dirs: np.ndarray,
              ends: np.ndarray) -> None:
    """Fill ``dirs`` (any prior content) for ``q`` against each lane's target; ``ends[:, k]`` gets
    (score, end row, end column) of lane ``k`` under ``_fill``'s tie rules.

    ``sub`` is the (A + 1, A + 1) int32 matrix with the padding code; ``mode`` is
    0 local, 1 global, 2 semiglobal; ``lens[k]`` is 0 for an unused lane.
    """
    _make_fill(mode)(q, cols, lens, sub, gap_open, gap_extend, dirs, ends)
