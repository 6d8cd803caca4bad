"""One tile of a long pair's matrix: its input boundary in, its output boundary out.

# h: tile rows (query residues), w: tile columns (target residues), s: strip width,
# values: int64. Matrix cells are numbered ``i * (n + 1) + j`` over (m + 1) x (n + 1);
# an origin is ``cell * 4 + state`` with state H, E, F, or START.

A tile covers matrix rows ``i0 + 1 .. i0 + h`` and columns ``j0 + 1 .. j0 + w``. Its
input boundary is row ``i0`` (``top_h``: H at columns ``j0 .. j0 + w``, index 0 the
corner; ``top_f``: F, index 0 unused) and column ``j0`` (``left_h``, ``left_e``: H and
E at rows ``i0 + 1 .. i0 + h``). Its output boundary is its last row (H and F) and its
last column (H and E).

The tile is computed in vertical strips of ``s`` columns, each strip top to bottom,
passing the strip's right column to the next (the StripedScore order; a strip's rows
stay in cache). Recurrences and tie rules are those of ``traceback._fill``, so a path
walked through tiles is the path walked through the whole matrix.

With ``origins``, every output cell and state also gets the origin of the optimal
path reaching it: the input-boundary cell and state where the traceback from it
would leave the tile, or START at the cell where a local alignment begins (phase 1
of StripedAlignment). With ``codes``, the tile's 4-bit direction codes are written
as ``_fill`` writes them (phase 3).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.kernels.cpu._jit import jit
from swath.kernels.cpu.traceback import _walk

H, E, F, START = 0, 1, 2, 3
_NEG_INF = -(1 << 40)


@functools.cache
def _make_tile(local: bool, origins: bool, codes: bool) -> Any:

    @jit
    def tile(q, t, sub, gap_open, gap_extend, i0, j0, n, strip, top_h, top_f, left_h, left_e,
             bottom, right, dirs):
        h_rows = q.shape[0]
        w = t.shape[0]
        goe = gap_open + gap_extend
        stride = n + 1
        # column left of the current strip, rows 0..h: H, E and their origins
        col_h = np.empty(h_rows + 1, np.int64)
        col_e = np.empty(h_rows + 1, np.int64)
        col_oh = np.empty(h_rows + 1, np.int64)
        col_oe = np.empty(h_rows + 1, np.int64)
        col_h[0] = top_h[0]
        col_oh[0] = (i0 * stride + j0) * 4 + H
        for r in range(1, h_rows + 1):
            col_h[r] = left_h[r - 1]
            col_e[r] = left_e[r - 1]
            cell = (i0 + r) * stride + j0
            col_oh[r] = cell * 4 + H
            col_oe[r] = cell * 4 + E
        # row above, for the columns of the tile: H, F and their origins
        row_h = np.empty(w, np.int64)
        row_f = np.empty(w, np.int64)
        row_oh = np.empty(w, np.int64)
        row_of = np.empty(w, np.int64)
        for c in range(w):
            row_h[c] = top_h[c + 1]
            row_f[c] = top_f[c + 1]
            cell = i0 * stride + j0 + c + 1
            row_oh[c] = cell * 4 + H
            row_of[c] = cell * 4 + F
        best = 0 if local else _NEG_INF
        best_i = -1
        best_j = -1
        best_o = -1
        for s0 in range(0, w, strip):
            s1 = min(s0 + strip, w)
            # H left of the strip one row up: the diagonal of the strip's first column
            corner = col_h[0]
            corner_o = col_oh[0]
            for r in range(1, h_rows + 1):
                scores = sub[q[r - 1]]
                diag = corner
                diag_o = corner_o
                h_left = col_h[r]
                left_o = col_oh[r]
                corner = h_left
                corner_o = left_o
                e = col_e[r]
                e_o = col_oe[r]
                i = i0 + r
                for c in range(s0, s1):
                    e_open = h_left - goe
                    e_ext = e - gap_extend
                    if e_ext > e_open:
                        e = e_ext
                    else:
                        e = e_open
                        e_o = left_o
                    up = row_h[c]
                    f_open = up - goe
                    f_ext = row_f[c] - gap_extend
                    if f_ext > f_open:
                        f = f_ext
                        f_o = row_of[c]
                    else:
                        f = f_open
                        f_o = row_oh[c]
                    h = diag + scores[t[c]]
                    h_o = diag_o
                    src = 1
                    if e > h:
                        h = e
                        h_o = e_o
                        src = 2
                    if f > h:
                        h = f
                        h_o = f_o
                        src = 3
                    j = j0 + c + 1
                    if local and h <= 0:
                        h = 0
                        h_o = (i * stride + j) * 4 + START
                        src = 0
                    if local and (h > best or (h == best and i < best_i)):
                        best, best_i, best_j, best_o = h, i, j, h_o
                    if codes:
                        code = src | (4 if e_ext > e_open else 0) | (8 if f_ext > f_open else 0)
                        if c & 1:
                            dirs[r - 1, c >> 1] |= code << 4
                        else:
                            dirs[r - 1, c >> 1] = code
                    diag = up
                    diag_o = row_oh[c]
                    row_h[c] = h
                    row_f[c] = f
                    if origins:
                        row_oh[c] = h_o
                        row_of[c] = f_o
                    h_left = h
                    left_o = h_o
                col_h[r] = h_left
                col_e[r] = e
                if origins:
                    col_oh[r] = left_o
                    col_oe[r] = e_o
            col_h[0] = top_h[s1]
            col_oh[0] = (i0 * stride + j0 + s1) * 4 + H
        if origins:
            for c in range(w):
                bottom[0, c] = row_h[c]
                bottom[1, c] = row_f[c]
                bottom[2, c] = row_oh[c]
                bottom[3, c] = row_of[c]
            for r in range(h_rows):
                right[0, r] = col_h[r + 1]
                right[1, r] = col_e[r + 1]
                right[2, r] = col_oh[r + 1]
                right[3, r] = col_oe[r + 1]
        return best, best_i, best_j, best_o

    return tile


def tile_forward(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
                 local: bool, corner: tuple[int, int], n: int, strip: int,
                 top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """Phase 1 on one tile: its output boundary with origins, and its best cell.

    ``corner`` is ``(i0, j0)``; ``top`` is ``(top_h, top_f)`` (``len(t) + 1`` each) and
    ``left`` is ``(left_h, left_e)`` (``len(q)`` each). Returns ``bottom`` (4, w) and
    ``right`` (4, h) int64 arrays of rows H, F or E, origin of H, origin of F or E; and,
    in local mode, ``(score, i, j, origin)`` of the tile's first best cell in row-major
    order (``i = -1`` when no cell scores above 0).
    """
    bottom = np.empty((4, len(t)), dtype=np.int64)
    right = np.empty((4, len(q)), dtype=np.int64)
    dirs = np.empty((0, 0), dtype=np.uint8)
    best = _make_tile(local, True, False)(q, t, sub, gap_open, gap_extend, corner[0],
                                          corner[1], n, strip, top[0], top[1], left[0],
                                          left[1], bottom, right, dirs)
    score, i, j, origin = (int(v) for v in best)
    return bottom, right, (score, i, j, origin)


def tile_codes(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
               local: bool, strip: int, top: tuple[np.ndarray, np.ndarray],
               left: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Phase 3 on one tile: its direction codes, ``(h, ceil(w / 2))`` uint8 as ``_fill``'s."""
    dirs = np.empty((len(q), (len(t) + 1) // 2), dtype=np.uint8)
    empty = np.empty((4, 0), dtype=np.int64)
    _make_tile(local, False, True)(q, t, sub, gap_open, gap_extend, 0, 0, len(t), strip,
                                   top[0], top[1], left[0], left[1], empty, empty, dirs)
    return dirs


def walk_tile(dirs: np.ndarray, exit_i: int, exit_j: int, state: int
              ) -> tuple[np.ndarray, int, int, int]:
    """Walk a tile's codes back from tile cell (exit_i, exit_j) in ``state``.

    Returns the ops from where the walk stopped to the exit, and ``(i, j, state)`` where
    it stopped: on row or column 0 (the tile's input boundary, in that state), or
    inside the tile where a local alignment starts.
    """
    ops = np.empty(exit_i + exit_j, dtype=np.uint8)
    count, i, j, state = _walk(dirs, 0, exit_i, exit_j, state, ops)
    return ops[:count][::-1].copy(), int(i), int(j), int(state)
