"""Direction codes of one query against up to 16 targets at once (32-bit lanes).

# m: query length, w: the group's packed width (a multiple of C), L: lanes (16),
# A: alphabet size, C: columns of a block (even).
# cols: (w, L) uint8 target residues (code A past a target's end), dirs: (m, w / 2, L)
# uint8, two columns a byte (low nibble: even column).

The kernel runs the recurrences and tie rules of ``traceback._fill`` with the innermost
loop across lanes so that numba vectorizes it: each lane is one target against the same
query. ``dirs[:, :, k]`` is then laid out exactly as ``_fill``'s codes for lane ``k``,
and ``traceback._walk`` reads it as it is. A search's kept hits are this shape: each
query with its top-k targets.

As the score kernel (``lanes``), it sweeps the rows once per block of C columns: H and E
pass between a row's cells in registers, and a row writes each byte of codes (two
columns) once, where it read and rewrote it before (measured faster). C is 2: with 4 or 8
LLVM no longer vectorizes the lane loop of this larger cell. The first best cell of a
local alignment (least row, then least column) is the same in any order that visits a
row's columns left to right.

Values are int32; callers send only pairs whose value bounds fit
(``bounds.fits_every_mode``). Global mode with end costs is a kernel of its own
(``_fill``'s: E along the last row and F down lane k's last column take them).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.constants import (
    E_EXTENDED,
    F_EXTENDED,
    MINUS_INFINITY,
    MODE_GLOBAL,
    MODE_LOCAL,
    MODE_SEMIGLOBAL,
    SOURCE_DIAGONAL,
    SOURCE_E,
    SOURCE_F,
    SOURCE_START,
)
from swath.kernels.cpu._jit import jit

LANES = 16
BLOCK_COLUMNS = 2   # C: columns swept together (a byte of codes holds two)
I32, U8 = np.int32, np.uint8
_NEG_INF = I32(MINUS_INFINITY)


@functools.cache
def _make_fill(mode: int, ends: bool) -> Any:
    local = mode == MODE_LOCAL
    global_ = mode == MODE_GLOBAL
    semiglobal = mode == MODE_SEMIGLOBAL

    @jit
    def lane_fill(q, cols, lens, sub, gap_open, gap_extend, end_open, end_extend, dirs,
                  out_ends):
        m = q.shape[0]
        L = LANES
        C = BLOCK_COLUMNS
        alphabet = sub.shape[0]
        goe = I32(gap_open + gap_extend)
        ge = I32(gap_extend)
        end_goe = I32(end_open + end_extend)
        end_ge = I32(end_extend)
        zero = I32(0)
        # state[i, 0]: H of row i in the last column swept, state[i, 1]: E of row i
        state = np.empty((m + 1, 2, L), np.int32)
        # per column of the block: F, and H of the row above
        f_col = np.empty((C, L), np.int32)
        h_col = np.empty((C, L), np.int32)
        # lane rows: H diagonal to the block's first column, best, its row, its column,
        # target length
        lane = np.zeros((5, L), np.int32)
        profile = np.empty((alphabet, C, L), np.int32)
        for i in range(m + 1):
            h = zero if local or i == 0 else I32(-(end_open + end_extend * i))
            for k in range(L):
                state[i, 0, k] = h
                state[i, 1, k] = _NEG_INF
        for k in range(L):
            lane[1, k] = zero if local else _NEG_INF
            lane[4, k] = lens[k]
        for j0 in range(0, cols.shape[0], C):
            for c in range(C):
                col = cols[j0 + c]
                for a in range(alphabet):
                    for k in range(L):
                        profile[a, c, k] = sub[a, col[k]]
                top = zero if not global_ else I32(-(end_open + end_extend * (j0 + c + 1)))
                for k in range(L):
                    f_col[c, k] = _NEG_INF
                    h_col[c, k] = top
            for k in range(L):
                lane[0, k] = state[0, 0, k]
                state[0, 0, k] = h_col[C - 1, k]
            byte0 = j0 >> 1
            for i in range(m):
                score = profile[q[i]]
                row = state[i + 1]
                out = dirs[i]
                at = I32(i + 1)
                row_goe, row_ge = goe, ge
                if ends and i + 1 == m:
                    row_goe, row_ge = end_goe, end_ge
                for k in range(L):
                    left = row[0, k]
                    e = row[1, k]
                    diagonal = lane[0, k]
                    lane[0, k] = left
                    best, best_row, best_col = lane[1, k], lane[2, k], lane[3, k]
                    pair = zero
                    for c in range(C):
                        e_open = I32(left - row_goe)
                        e_ext = I32(e - row_ge)
                        e = max(e_open, e_ext)
                        up = h_col[c, k]
                        if ends:
                            last = j0 + c + 1 == lane[4, k]
                            f_open = I32(up - (end_goe if last else goe))
                            f_ext = I32(f_col[c, k] - (end_ge if last else ge))
                        else:
                            f_open = I32(up - goe)
                            f_ext = I32(f_col[c, k] - ge)
                        f = max(f_open, f_ext)
                        h = I32(diagonal + score[c, k])
                        src = I32(SOURCE_E) if e > h else I32(SOURCE_DIAGONAL)
                        h = max(h, e)
                        src = I32(SOURCE_F) if f > h else src
                        h = max(h, f)
                        if local:
                            src = I32(SOURCE_START) if h <= zero else src
                            h = max(h, zero)
                            here = I32(j0 + c)
                            better = (here < lane[4, k]) & (
                                (h > best) | ((h == best) & (at < best_row)))
                            best = h if better else best
                            best_row = at if better else best_row
                            best_col = here + I32(1) if better else best_col
                        code = src | (I32(E_EXTENDED) if e_ext > e_open else zero) \
                            | (I32(F_EXTENDED) if f_ext > f_open else zero)
                        if c % 2 == 0:
                            pair = code
                        else:
                            out[byte0 + c // 2, k] = U8(pair | code << 4)
                        diagonal = up
                        h_col[c, k] = h
                        f_col[c, k] = f
                        left = h
                    row[0, k] = left
                    row[1, k] = e
                    lane[1, k], lane[2, k], lane[3, k] = best, best_row, best_col
            if not local:
                for c in range(C):
                    j = j0 + c
                    for k in range(L):
                        last = h_col[c, k]
                        if (semiglobal and j < lens[k] and last > lane[1, k]) \
                                or (global_ and j + 1 == lens[k]):
                            lane[1, k] = last
                            lane[3, k] = I32(j + 1)
        for k in range(L):
            out_ends[0, k] = lane[1, k]
            out_ends[1, k] = lane[2, k] if local else m
            out_ends[2, k] = lane[3, k]

    return lane_fill


def lane_fill(q: np.ndarray, cols: np.ndarray, lens: np.ndarray, sub: np.ndarray,
              gap_open: int, gap_extend: int, mode: int, dirs: np.ndarray,
              ends: np.ndarray, end_gaps: tuple[int, int] | None = None) -> None:
    """Fill ``dirs`` (any prior content) for ``q`` against each lane's target (``cols``
    packed ``BLOCK_COLUMNS`` columns wide); ``ends[:, k]`` gets
    (score, end row, end column) of lane ``k`` under ``_fill``'s tie rules.

    ``sub`` is the (A + 1, A + 1) int32 matrix with the padding code; ``mode`` is a
    code of ``swath.constants.MODE_CODES``; ``lens[k]`` is 0 for an unused lane;
    ``end_gaps`` the terminal gaps' costs (global mode, ``scheme.end_costs``) or None.
    """
    end_open, end_extend = end_gaps or (gap_open, gap_extend)
    _make_fill(mode, end_gaps is not None)(q, cols, lens, sub, gap_open, gap_extend, end_open,
                                           end_extend, dirs, ends)
