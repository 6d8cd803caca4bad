"""One tile of a long pair's matrix: its input boundary in, its output boundary out.

# h: tile rows (query residues), w: tile columns (target residues), s: strip width;
# values int32 in the kernel, int64 outside. Matrix cells are numbered
# ``i * (n + 1) + j`` over (m + 1) x (n + 1); an origin is ``cell * 4 + state`` with
# state STATE_H, STATE_E, STATE_F, or STATE_START.

A tile covers matrix rows ``i0 + 1 .. i0 + h`` and columns ``j0 + 1 .. j0 + w``. Its
input boundary is row ``i0`` (``top_h``: H at columns ``j0 .. j0 + w``, index 0 the
corner; ``top_f``: F, index 0 unused) and column ``j0`` (``left_h``, ``left_e``: H and
E at rows ``i0 + 1 .. i0 + h``). Its output boundary is its last row (H and F) and its
last column (H and E).

The tile is computed in vertical strips of ``s`` columns, left to right, passing each
strip's right column to the next (StripedScore's order). Inside a strip the tile's rows
are cut into 16 tiers that run side by side in 16 int32 lanes, which numba vectorizes:
lane k works one column behind lane k - 1 and takes the H and F of that lane's last
row as its top input (a wavefront of tiers, as warps do on a GPU). Recurrences
and tie rules are those of ``traceback._fill``, so a path walked through tiles is the
path walked through the whole matrix.

With ``origins``, every output cell and state also gets the origin of the optimal
path reaching it: the input-boundary cell and state where the traceback from it
would leave the tile, or STATE_START at the cell where a local alignment begins (phase 1
of StripedAlignment). Inside the kernel origins are tile-local 32-bit codes (hence
``MAX_TILE``); ``tile_forward`` returns them matrix-wide. With ``codes``, the tile's
4-bit direction codes are written as ``_fill`` writes them (phase 3).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from swath.constants import (
    E_EXTENDED,
    F_EXTENDED,
    MINUS_INFINITY,
    MODE_LOCAL,
    SOURCE_DIAGONAL,
    SOURCE_E,
    SOURCE_F,
    SOURCE_START,
    STATE_E,
    STATE_F,
    STATE_H,
    STATE_START,
    Mode,
)
from swath.kernels.cpu import tile_tiers
from swath.kernels.cpu._jit import jit, readonly
from swath.kernels.cpu.cores import on_every_core
from swath.kernels.cpu.traceback import _walk, codes_shape
from swath.kernels.scheme import interior
from swath.kernels.tile_origins import Best, check_origins, matrix_wide
from swath.scoring import Scoring

I32, I64, U8 = np.int32, np.int64, np.uint8
LANES = 16
BATCH_STRIP = 256      # strip width of batched tiles
_NEG32 = I32(MINUS_INFINITY)
_NO_CODES = np.empty((0, 0), dtype=np.uint8)


@functools.cache
def _make_tile(local: bool, origins: bool, codes: bool) -> Any:
    L = LANES
    # rows of the lane vectors: all int32 in one array, so that numba vectorizes the
    # lane loop (64-bit origins, or more arrays that may alias, keep it scalar)
    UP, FV, DIAG, SCORE, ON, COL, O_UP, O_F, O_DIAG, BEST, BEST_I, BEST_J, BEST_O = range(13)

    @jit
    def tile(q, t, sub, gap_open, gap_extend, strip, top_h, top_f, left_h, left_e, bottom,
             right, dirs, best_out):
        h = q.shape[0]
        w = t.shape[0]
        hb = max(1, -(-h // L))
        goe = I32(gap_open + gap_extend)
        ge = I32(gap_extend)
        zero = I32(0)
        wide = I32(w + 1)      # tile-local origins: (row * (w + 1) + column) * 4 + state
        # tier row r of lane k is tile row k * hb + r + 1; per row: H and E of the last
        # column done and their origins
        s = np.empty((hb, 4, L), np.int32)
        q_res = np.zeros((hb, L), np.uint8)
        for k in range(L):
            for r in range(hb):
                row = min(k * hb + r, h - 1)
                s[r, 0, k] = I32(left_h[row])
                s[r, 1, k] = I32(max(left_e[row], _NEG32))
                s[r, 2, k] = I32((row + 1) * wide * 4 + STATE_H)
                s[r, 3, k] = I32((row + 1) * wide * 4 + STATE_E)
                q_res[r, k] = q[row]
        v = np.zeros((13, L), np.int32)
        for k in range(L):
            v[BEST, k] = zero if local else _NEG32
            v[BEST_I, k] = I32(h + 1)
        # what each lane handed down at the last two steps (its tier's last row)
        prev = np.empty((4, L), np.int32)
        prev2 = np.empty((2, L), np.int32)
        corner = np.empty((2, L), np.int32)
        t_res = np.empty(L, np.int64)
        last_lane = (h - 1) // hb
        last_r = (h - 1) % hb
        code_buf = np.empty((strip + L, hb, L), np.uint8)
        for s0 in range(0, w, strip):
            ws = min(strip, w - s0)
            # the corner above each tier, one column left of the strip
            corner[0, 0] = I32(top_h[s0])
            corner[1, 0] = I32(s0 * 4 + STATE_H)
            for k in range(1, L):
                corner[0, k] = s[hb - 1, 0, k - 1]
                corner[1, k] = s[hb - 1, 2, k - 1]
            for step in range(ws + L - 1):
                for k in range(L):
                    c = step - k
                    v[ON, k] = 1 if c >= 0 and c < ws else 0
                    v[COL, k] = I32(s0 + c + 1)
                    t_res[k] = t[min(max(s0 + c, 0), w - 1)]
                # inputs from above: the tile's top row for lane 0, the lane above else
                c0 = s0 + step
                if step < ws:
                    v[UP, 0] = I32(top_h[c0 + 1])
                    v[FV, 0] = I32(max(top_f[c0 + 1], _NEG32))
                    v[DIAG, 0] = I32(top_h[c0])
                    v[O_UP, 0] = I32((c0 + 1) * 4 + STATE_H)
                    v[O_F, 0] = I32((c0 + 1) * 4 + STATE_F)
                    v[O_DIAG, 0] = I32(c0 * 4 + STATE_H)
                for k in range(1, L):
                    first = step - k == 0
                    v[UP, k] = prev[0, k - 1]
                    v[FV, k] = prev[1, k - 1]
                    v[O_UP, k] = prev[2, k - 1]
                    v[O_F, k] = prev[3, k - 1]
                    v[DIAG, k] = corner[0, k] if first else prev2[0, k - 1]
                    v[O_DIAG, k] = corner[1, k] if first else prev2[1, k - 1]
                for k in range(L):
                    prev2[0, k] = prev[0, k]
                    prev2[1, k] = prev[2, k]
                for r in range(hb):
                    row = s[r]
                    qr = q_res[r]
                    for k in range(L):
                        v[SCORE, k] = sub[qr[k], t_res[k]]
                    codes_r = code_buf[step, r]
                    first_row = I32(r + 1)
                    for k in range(L):
                        # every load first, then selects of values (a select of two
                        # loads becomes a branch, and the loop stays scalar)
                        left, e_left, o_left, oe_left = row[0, k], row[1, k], row[2, k], row[3, k]
                        up, f_up, o_up, of_up = v[UP, k], v[FV, k], v[O_UP, k], v[O_F, k]
                        diag, o_diag, col = v[DIAG, k], v[O_DIAG, k], v[COL, k]
                        on = v[ON, k] != 0
                        e_open = I32(left - goe)
                        e_ext = I32(e_left - ge)
                        extend_e = e_ext > e_open
                        e = max(e_open, e_ext)
                        oe = oe_left if extend_e else o_left
                        f_open = I32(up - goe)
                        f_ext = I32(f_up - ge)
                        extend_f = f_ext > f_open
                        fk = max(f_open, f_ext)
                        of = of_up if extend_f else o_up
                        hv = I32(diag + v[SCORE, k])
                        from_e = e > hv
                        src = I32(SOURCE_E) if from_e else I32(SOURCE_DIAGONAL)
                        oh = oe if from_e else o_diag
                        hv = max(hv, e)
                        from_f = fk > hv
                        src = I32(SOURCE_F) if from_f else src
                        oh = of if from_f else oh
                        hv = max(hv, fk)
                        if local:
                            i = I32(first_row + k * hb)
                            start = hv <= zero
                            src = I32(SOURCE_START) if start else src
                            here = I32((i * wide + col) * 4 + STATE_START)
                            oh = here if start else oh
                            hv = max(hv, zero)
                            b, b_i, b_j, b_o = v[BEST, k], v[BEST_I, k], v[BEST_J, k], v[BEST_O, k]
                            # a tie replaces only a real cell (b > 0: the sentinel row is h + 1)
                            tie = (hv == b) & (b > zero) & (i < b_i)
                            better = on & (i <= h) & ((hv > b) | tie)
                            v[BEST, k] = hv if better else b
                            v[BEST_I, k] = i if better else b_i
                            v[BEST_J, k] = col if better else b_j
                            v[BEST_O, k] = oh if better else b_o
                        if codes:
                            codes_r[k] = U8(src | (I32(E_EXTENDED) if extend_e else zero)
                                            | (I32(F_EXTENDED) if extend_f else zero))
                        v[DIAG, k] = left
                        v[O_DIAG, k] = o_left
                        row[0, k] = hv if on else left
                        row[1, k] = e if on else e_left
                        if origins:
                            row[2, k] = oh if on else o_left
                            row[3, k] = oe if on else oe_left
                        v[UP, k] = hv
                        v[FV, k] = fk
                        v[O_UP, k] = oh
                        v[O_F, k] = of
                    if not codes and r == last_r and v[ON, last_lane]:
                        c = v[COL, last_lane] - 1
                        bottom[0, c] = v[UP, last_lane]
                        bottom[1, c] = v[FV, last_lane]
                        if origins:
                            bottom[2, c] = v[O_UP, last_lane]
                            bottom[3, c] = v[O_F, last_lane]
                for k in range(L):
                    prev[0, k] = v[UP, k]
                    prev[1, k] = v[FV, k]
                    prev[2, k] = v[O_UP, k]
                    prev[3, k] = v[O_F, k]
            if codes:      # lane k did strip column c at step k + c
                for k in range(L):
                    for r in range(min(hb, h - k * hb)):
                        out = dirs[k * hb + r]
                        for c in range(s0, s0 + ws):
                            code = code_buf[k + c - s0, r, k]
                            if c & 1:
                                out[c >> 1] |= code << 4
                            else:
                                out[c >> 1] = code
        if not codes:
            for g in range(h):
                k, r = g // hb, g % hb
                for x in range(4 if origins else 2):
                    right[x, g] = s[r, x, k]
        top = 0
        for k in range(1, L):
            if v[BEST, k] > v[BEST, top] or (v[BEST, k] == v[BEST, top]
                                             and v[BEST_I, k] < v[BEST_I, top]):
                top = k
        best_out[0] = v[BEST, top]
        best_out[1] = v[BEST_I, top] if v[BEST_I, top] <= h else -1
        best_out[2] = v[BEST_J, top]
        best_out[3] = v[BEST_O, top]

    return tile


def tile_forward(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode,
                 corner: tuple[int, int], n: int, strip: int,
                 top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray, Best]:
    """Phase 1 on one tile: its output boundary with origins, and its best cell.

    ``corner`` is ``(i0, j0)``; ``top`` is ``(top_h, top_f)`` (``len(t) + 1`` each) and
    ``left`` is ``(left_h, left_e)`` (``len(q)`` each). Returns ``bottom`` (4, w) and
    ``right`` (4, h) int64 arrays of rows H, F or E, origin of H, origin of F or E; and,
    in local mode, ``(score, i, j, origin)`` of the tile's first best cell in row-major
    order (``i = -1`` when no cell scores above 0). Origins are matrix-wide codes.
    """
    check_origins(len(q), len(t))
    bottom, right, best = _run(q, t, scoring, mode, True, strip, top, left)
    return bottom, right, matrix_wide(bottom, right, best, corner, len(t), n)


def tile_scores(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, strip: int,
                top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]]:
    """One tile's scores only (StripedScore): ``bottom`` (2, w) and ``right`` (2, h) int64
    (H and F, H and E) and, in local mode, the tile-local ``(score, i, j)`` of its first
    best cell (``(0, -1, -1)`` when none scores above 0, and in global modes). No size
    limit; values must stay above ``MINUS_INFINITY``.

    A local tile of a match/mismatch matrix runs in the unsigned lanes of
    ``tile_tiers`` (its gap values below 0 come out as 0, as ``Backend.tile_scores``
    allows)."""
    if mode == "local":
        fast = _tiers(q, t, scoring, strip, top, left)
        if fast is not None:
            return fast
    bottom, right, best = _run(q, t, scoring, mode, False, strip, top, left)
    score, i, j = (int(x) for x in best[:3])
    return bottom[:2], right[:2], (score, i, j) if i >= 0 else (0, -1, -1)


def _tiers(q: np.ndarray, t: np.ndarray, scoring: Scoring, strip: int,
           top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
           ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]] | None:
    """A local tile through ``tile_tiers`` where its matrix, size and values allow (None
    elsewhere): its columns up to a multiple of the block there, the rest (narrower than
    a block) by the general kernel."""
    scheme = _tier_scheme(q, t, scoring, top, left)
    w = len(t)
    wide = w - w % tile_tiers.BLOCK_COLUMNS
    tiers = scheme and tile_tiers.tile_tiers(q, t[:wide], *scheme,
                                             (top[0][:wide + 1], top[1][:wide + 1]), left)
    if not tiers:
        return None
    bottom, right, best = tiers
    if wide == w:
        return bottom, right, best
    rest, right, (score, i, j) = tile_scores(q, t[wide:], scoring, "local", strip,
                                             (top[0][wide:], top[1][wide:]), (right[0], right[1]))
    # the first best in row-major order: a later column wins a tie only on an earlier row
    if score > best[0] or (score == best[0] and 0 <= i < best[1]):
        best = (score, i, j + wide)
    return np.concatenate([bottom, rest], axis=1), right, best


def tile_batch(tiles: Sequence[tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray],
                                     tuple[np.ndarray, np.ndarray]]],
               scoring: Scoring) -> list[np.ndarray]:
    """Global-mode tiles' last rows, scores only: for each ``(q, t, top, left)``, the
    ``bottom`` (2, w) of ``tile_scores``. Tiles run side by side on every core."""

    def one(tile: tuple[Any, ...]) -> np.ndarray:
        q, t, top, left = tile
        return tile_scores(q, t, scoring, "global", BATCH_STRIP, top, left)[0]

    return on_every_core(one, tiles)


def _run(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, origins: bool, strip: int,
         top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bottom = np.empty((4, len(t)), dtype=np.int64)
    right = np.empty((4, len(q)), dtype=np.int64)
    best = np.empty(4, dtype=np.int64)
    _make_tile(mode == "local", origins, False)(*_scheme_inputs(q, t, scoring), strip,
                                                *_edges(top, left), bottom, right, _NO_CODES,
                                                best)
    return bottom, right, best


def _scheme_inputs(q: np.ndarray, t: np.ndarray, scoring: Scoring) -> tuple[object, ...]:
    """The tile kernel's first arguments: the residues and the matrix read-only, then the
    gap costs (``scheme.interior``: a tile charges every gap alike)."""
    matrix, gap_open, gap_extend = interior(scoring, "a tile")
    return (*_inputs(q, t, matrix), gap_open, gap_extend)


def _inputs(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(readonly(a) for a in arrays)


def _edges(top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
           ) -> tuple[np.ndarray, ...]:
    """A tile's input edges in the kernel's one form: read-only int64 C arrays (numba
    compiles a kernel again for int32 edges, or writable ones)."""
    return _inputs(*(np.asarray(a, dtype=np.int64) for a in (*top, *left)))


def tile_codes(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, strip: int,
               top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
               ) -> np.ndarray:
    """Phase 3 on one tile: its direction codes (no origins: any size), ``(h, ceil(w / 2))``
    uint8 as ``_fill``'s, or where the tile is local and of a match/mismatch matrix, as
    the tier lanes lay them out (``tile_tiers.tile_codes``; its target padded to a whole
    block with a residue that meets none): ``traceback.code_at`` reads either."""
    if mode == "local":
        fast = _tier_codes(q, t, scoring, top, left)
        if fast is not None:
            return fast
    dirs = np.empty(codes_shape(len(q), len(t)), dtype=np.uint8)
    empty = np.empty((4, 0), dtype=np.int64)
    _make_tile(mode == "local", False, True)(*_scheme_inputs(q, t, scoring), strip,
                                             *_edges(top, left), empty, empty, dirs,
                                             np.empty(4, dtype=np.int64))
    return dirs


def _tier_codes(q: np.ndarray, t: np.ndarray, scoring: Scoring,
                top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
                ) -> np.ndarray | None:
    scheme = _tier_scheme(q, t, scoring, top, left)
    done = scheme and tile_tiers.tile_codes(q, t, *scheme, top, left)
    return done[0] if done else None


def _tier_scheme(q: np.ndarray, t: np.ndarray, scoring: Scoring,
                 top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
                 ) -> tuple[tuple[int, int, np.ndarray, np.ndarray], int, int] | None:
    """``(scores, gap_open, gap_extend)`` of a local tile the tier lanes take: large enough,
    of a match/mismatch matrix, its input H at least 0 (a local matrix's always is, only
    a test's boundary is not); None for any other."""
    matrix, gap_open, gap_extend = interior(scoring, "a tile")
    if not tile_tiers.tiers_fit(len(q), len(t)) or min(top[0].min(), left[0].min()) < 0:
        return None
    scores = tile_tiers.scheme(matrix, q, t)
    return None if scores is None else (scores, gap_open, gap_extend)


def walks(scoring: Scoring, mode: Mode, query: np.ndarray, target: np.ndarray) -> bool:
    """``TileCodes.walks``: a local pair of a match/mismatch matrix, whose tiles run in the
    tier lanes (``tile_tiers``) without origins."""
    return (mode == "local" and scoring.end_gaps is None
            and tile_tiers.scheme(scoring.matrix, query, target) is not None)


def walk_tile(dirs: np.ndarray, exit_i: int, exit_j: int, state: int
              ) -> tuple[np.ndarray, int, int, int]:
    """Walk a tile's codes back from tile cell (exit_i, exit_j) in ``state``.

    Returns the ops from where the walk stopped to the exit, and ``(i, j, state)`` where
    it stopped: on row or column 0 (the tile's input boundary, in that state), or
    inside the tile where a local alignment starts.
    """
    ops = np.empty(exit_i + exit_j, dtype=np.uint8)
    count, i, j, state = _walk(dirs, MODE_LOCAL, exit_i, exit_j, state, ops)
    return ops[:count][::-1].copy(), int(i), int(j), int(state)
