"""A local-mode tile's scores, or its direction codes, in unsigned 16- or 32-bit lanes:
the long pair's fast path for match/mismatch matrices (DNA's), for its tiles and for one
pair's whole matrix.

# h: tile rows, w: tile columns (a multiple of C), L: lanes, hb: rows a tier,
# C: columns of a block, T: the lanes' unsigned type.

The tile's rows are cut into L tiers of ``hb`` rows, one a lane; lane ``k`` sweeps its
tier one block of ``C`` columns behind lane ``k - 1`` and takes that lane's last row of
the block (H and F) as its top input, so that the innermost loop runs across lanes and
numba vectorizes it (``pair_lanes``' layout, with the lanes a wavefront of one tile
rather than unrelated pairs). Within a row the ``C`` cells of a block pass H and E in
registers; only the block's last column goes to memory.

Values are unsigned: a local score never falls below 0, and a gap value below 0 never
raises one, so E and F are kept as ``max(0, E)`` and ``max(0, F)`` and every
subtraction saturates at 0 (Farrar's and parasail's unsigned-lane rule). H is exact;
the E and F of the output boundary are those of the exact kernel where positive, 0
elsewhere (and a negative E or F never enters an optimal path's H, nor an extension
decision on it, so tiles downstream and their direction codes are the same).

A cell's substitution score is ``match`` where the codes are equal and ``mismatch``
elsewhere (``pair_lanes.equal_scores``; a gather per lane does not vectorize), with
``mismatch < 0 < match``. The end cell follows ``traceback._fill``'s rule: the first
best cell in row-major order.

A tile runs in 16 bits where its input H leaves room for a match, and again in 32 bits
if a cell's H came within ``match`` of the 16-bit ceiling: only the addition of a match
to an H at least that high can wrap, and that H is a cell's, so the tile's best
exposes it (the sums before it are exact). 32 bits take tiles whose bound (the input's
largest H plus ``match`` a row or column) fits them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.constants import E_EXTENDED, F_EXTENDED, SOURCE_DIAGONAL, SOURCE_E, SOURCE_F
from swath.kernels.cpu._jit import jit, readonly
from swath.kernels.cpu.pair_lanes import equal_scores

BLOCK_COLUMNS = 4      # C: columns swept together (8 is not unrolled, and stays scalar)
TYPES = (np.dtype(np.uint16), np.dtype(np.uint32))


def lanes(dtype: np.dtype) -> int:
    """Tiers side by side at the width of ``dtype``: a 512-bit vector's worth."""
    return 64 // dtype.itemsize


@jit(inline="always")
def _minus(a, b):     # a - b, saturating at 0 (a select of a difference stays scalar)
    return max(a, b) - b


@functools.cache
def _make_tiers(dtype: np.dtype, codes: bool) -> Any:
    T = dtype.type
    L = lanes(dtype)
    C = BLOCK_COLUMNS
    diagonal, from_e, from_f = T(SOURCE_DIAGONAL), T(SOURCE_E), T(SOURCE_F)
    e_extended, f_extended = T(E_EXTENDED), T(F_EXTENDED)

    @jit
    def tiers(q, t, match, mismatch, gap_open, gap_extend, top_h, top_f, left_h, left_e,
              bottom, right, best_out, dirs):
        h = q.shape[0]
        w = t.shape[0]
        hb = -(-h // L)
        blocks = w // C
        goe = T(gap_open + gap_extend)
        ge = T(gap_extend)
        hit = T(match)
        swing = T(match - mismatch)     # a mismatch: match, less this
        zero = T(0)
        # rows of a tier row's lane vectors: H and E of the last column swept, the row's
        # best H and its column, its query code (all in one array, and the lanes' values
        # in two more, so that numba vectorizes the lane loop: more arrays that may
        # alias keep it scalar)
        H, E, BEST, BEST_COL, QUERY = range(5)
        rows = np.zeros((hb, 5, L), dtype)
        rows[:, QUERY] = T(254)     # past the query: meets no target
        for g in range(h):
            k, r = g // hb, g % hb
            rows[r, H, k] = T(max(left_h[g], 0))
            rows[r, E, k] = T(max(left_e[g], 0))
            rows[r, QUERY, k] = T(q[g])
        # per lane and column of its block: H and F from the tier above, then of its own
        # last row (UP, F), and the target's codes (TARGET)
        UP, F, TARGET = 0, C, 2 * C
        cols = np.zeros((3 * C, L), dtype)
        # per lane: the H diagonal to the block's first column at the tier's top (CORNER)
        # and at the row (DIAG), the column before its block (AT), whether it has a block
        # (LIVE), its last-row H at the last block's last column (LAST), the H diagonal to
        # its first block (FIRST)
        CORNER, DIAG, AT, LIVE, LAST, FIRST = range(6)
        lane = np.zeros((6, L), dtype)
        for k in range(1, L):
            lane[FIRST, k] = T(max(left_h[min(k * hb, h) - 1], 0))
        last_lane, last_r = (h - 1) // hb, (h - 1) % hb
        for step in range(blocks + L - 1):
            # lane k takes the block lane k - 1 swept at the last step, below it, and the
            # H diagonal to it from the step before
            for k in range(L - 1, 0, -1):
                lane[CORNER, k] = lane[LAST, k - 1] if lane[AT, k - 1] > 0 else lane[FIRST, k]
            for k in range(L):
                lane[LAST, k] = cols[UP + C - 1, k]
            for k in range(L - 1, 0, -1):
                for x in range(3 * C):
                    cols[x, k] = cols[x, k - 1]
                lane[LIVE, k] = lane[LIVE, k - 1]
                lane[AT, k] = lane[AT, k - 1]
            lane[LIVE, 0] = step < blocks
            if step < blocks:
                j0 = step * C
                lane[CORNER, 0] = T(max(top_h[j0], 0))
                lane[AT, 0] = T(j0)
                for c in range(C):
                    cols[UP + c, 0] = T(max(top_h[j0 + c + 1], 0))
                    cols[F + c, 0] = T(max(top_f[j0 + c + 1], 0))
                    cols[TARGET + c, 0] = T(t[j0 + c])
            for k in range(L):
                lane[DIAG, k] = lane[CORNER, k]
            for r in range(hb):
                row = rows[r]
                for k in range(L):
                    left0, e0 = row[H, k], row[E, k]
                    best0, best_col0 = row[BEST, k], row[BEST_COL, k]
                    left, e, best, best_col = left0, e0, best0, best_col0
                    d, at, qk = lane[DIAG, k], lane[AT, k], row[QUERY, k]
                    live = lane[LIVE, k] != zero
                    lane[DIAG, k] = left
                    pair = zero
                    for c in range(C):
                        e_open, e_ext = T(_minus(left, goe)), T(_minus(e, ge))
                        e = max(e_open, e_ext)
                        up = cols[UP + c, k]
                        f_open, f_ext = T(_minus(up, goe)), T(_minus(cols[F + c, k], ge))
                        f = max(f_open, f_ext)
                        loss = zero if qk == cols[TARGET + c, k] else swing
                        hv = T(_minus(T(d + hit), loss))
                        if codes:      # _fill's codes and tie rules
                            src = from_e if e > hv else diagonal
                            hv = max(hv, e)
                            src = from_f if f > hv else src
                            hv = max(hv, f)
                            src = src if hv > zero else zero      # SOURCE_START
                            code = src | (e_extended if e_ext > e_open else zero) \
                                | (f_extended if f_ext > f_open else zero)
                            pair = pair | T(code << T(4 * c))
                        else:
                            hv = max(hv, max(e, f))
                        better = hv > best
                        best = hv if better else best
                        best_col = T(at + T(c + 1)) if better else best_col
                        d = up
                        cols[UP + c, k] = hv
                        cols[F + c, k] = f
                        left = hv
                    if codes:
                        dirs[step, r, k] = np.uint16(pair)
                    row[H, k] = left if live else left0
                    row[E, k] = e if live else e0
                    row[BEST, k] = best if live else best0
                    row[BEST_COL, k] = best_col if live else best_col0
                if r == last_r and lane[LIVE, last_lane]:
                    j0 = np.int64(lane[AT, last_lane])
                    for c in range(C):
                        bottom[0, j0 + c] = cols[UP + c, last_lane]
                        bottom[1, j0 + c] = cols[F + c, last_lane]
        best_out[0], best_out[1], best_out[2] = 0, -1, -1
        for g in range(h):
            k, r = g // hb, g % hb
            right[0, g] = rows[r, H, k]
            right[1, g] = rows[r, E, k]
            if rows[r, BEST, k] > best_out[0]:      # the first row with the best
                best_out[0], best_out[1] = rows[r, BEST, k], g + 1
                best_out[2] = rows[r, BEST_COL, k]

    return tiers


def scheme(matrix: np.ndarray, q: np.ndarray, t: np.ndarray
           ) -> tuple[int, int, np.ndarray, np.ndarray] | None:
    """``equal_scores`` of ``matrix`` over the residues ``q`` and ``t`` hold, where it has
    ``mismatch < 0 < match`` (the kernel's form), else None."""
    present = np.zeros(matrix.shape[0], dtype=bool)
    present[q] = True
    present[t] = True
    scores = equal_scores(matrix, present)
    if scores is None or not scores[1] < 0 < scores[0]:
        return None
    return scores


def first_type(match: int, w: int, top_h: np.ndarray, left_h: np.ndarray
               ) -> np.dtype | None:
    """The type a tile is tried in first: 16 bits where its input H is at most
    ``ceiling(16 bits, match)`` (and its columns are counted in 16 bits), else 32 where
    its bound fits; None where it does not."""
    h = len(left_h)
    highest = max(int(top_h.max()), int(left_h.max()), 0)
    if highest <= ceiling(TYPES[0], match) and w <= np.iinfo(TYPES[0]).max:
        return TYPES[0]
    bound = highest + match * min(h, w)
    return TYPES[1] if max(bound, w) <= np.iinfo(TYPES[1]).max else None


def ceiling(dtype: np.dtype, match: int) -> int:
    """The highest H to which ``dtype`` adds a match without wrapping."""
    return int(np.iinfo(dtype).max) - match


def tiers_fit(h: int, w: int) -> bool:
    """Whether a tile is large enough for the tiers: at least a block wide and a lane's
    worth of rows at the narrowest type (smaller tiles take the general kernel)."""
    return w >= BLOCK_COLUMNS and h >= lanes(TYPES[0])


def tile_tiers(q: np.ndarray, t: np.ndarray, scores: tuple[int, int, np.ndarray, np.ndarray],
               gap_open: int, gap_extend: int, top: tuple[np.ndarray, np.ndarray],
               left: tuple[np.ndarray, np.ndarray], dtype: np.dtype | None = None
               ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]] | None:
    """A local tile's ``bottom`` (2, w) and ``right`` (2, h) int64 (H and F, H and E, gap
    values as ``max(0, .)``) and its first best cell ``(score, i, j)``, tile-local from 1
    (``(0, -1, -1)`` where no cell scores above 0), as ``tiles.tile_scores``; None where
    no type holds its values.

    ``w`` must be a multiple of ``BLOCK_COLUMNS``; ``scores`` is ``scheme``'s; ``top``
    and ``left`` as ``tiles.tile_scores`` takes them. ``dtype``: the type to try first
    (default ``first_type``'s); a 16-bit run whose best passes its ``ceiling`` runs
    again in 32 bits.
    """
    done = _run(q, t, scores, gap_open, gap_extend, top, left, dtype, False)
    return done and done[:3]


def tile_codes(q: np.ndarray, t: np.ndarray, scores: tuple[int, int, np.ndarray, np.ndarray],
               gap_open: int, gap_extend: int, top: tuple[np.ndarray, np.ndarray],
               left: tuple[np.ndarray, np.ndarray], dtype: np.dtype | None = None
               ) -> tuple[np.ndarray, tuple[int, int, int]] | None:
    """A local tile's direction codes and its first best cell ``(score, i, j)``
    (``(0, -1, -1)`` where none scores above 0); None where no type holds its values.

    The codes are ``_fill``'s, laid out as the tiers sweep them: ``(steps, hb, L)``
    uint16, the four columns of a lane's block in a value, column ``c`` at bits ``4 c``
    (``traceback.code_at`` reads them): half a byte a cell, as ``_fill``'s, in 16 bits
    and 32. The tile may have any width: its target is padded to a whole block with the
    residue that meets none (a padded cell never scores above a real one to its left,
    nor is walked). Arguments as ``tile_tiers`` takes them.
    """
    pad = -len(t) % BLOCK_COLUMNS
    zeros = np.zeros(pad, dtype=np.int64)
    done = _run(q, np.append(t, np.full(pad, len(scores[3]) - 1, dtype=t.dtype)), scores,
                gap_open, gap_extend, (np.append(top[0], zeros), np.append(top[1], zeros)),
                left, dtype, True)
    return done and (done[3], done[2])


def pair_codes(q: np.ndarray, t: np.ndarray, scores: tuple[int, int, np.ndarray, np.ndarray],
               gap_open: int, gap_extend: int, dtype: np.dtype | None = None
               ) -> tuple[np.ndarray, tuple[int, int, int]] | None:
    """``tile_codes`` of one local pair's whole matrix (its input boundary 0)."""
    top = (np.zeros(len(t) + 1, dtype=np.int64),) * 2
    left = (np.zeros(len(q), dtype=np.int64),) * 2
    return tile_codes(q, t, scores, gap_open, gap_extend, top, left, dtype)


def _run(q: np.ndarray, t: np.ndarray, scores: tuple[int, int, np.ndarray, np.ndarray],
         gap_open: int, gap_extend: int, top: tuple[np.ndarray, np.ndarray],
         left: tuple[np.ndarray, np.ndarray], dtype: np.dtype | None, codes: bool
         ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int], np.ndarray] | None:
    match, mismatch, q_codes, t_codes = scores
    dtype = dtype or first_type(match, len(t), top[0], left[0])
    if dtype is None:
        return None
    bottom = np.empty((2, len(t)), dtype=np.int64)
    right = np.empty((2, len(q)), dtype=np.int64)
    best = np.empty(3, dtype=np.int64)
    width = lanes(dtype)
    shape = (len(t) // BLOCK_COLUMNS + width - 1, -(-len(q) // width), width) if codes \
        else (0, 0, 0)
    dirs = np.empty(shape, dtype=np.uint16)
    edges = [readonly(np.asarray(a, dtype=np.int64)) for a in (*top, *left)]
    _make_tiers(dtype, codes)(readonly(q_codes[q]), readonly(t_codes[t]), match, mismatch,
                              gap_open, gap_extend, *edges, bottom, right, best, dirs)
    if dtype == TYPES[0] and best[0] > ceiling(dtype, match):
        del dirs        # freed before the 32-bit run's codes are allocated
        return _run(q, t, scores, gap_open, gap_extend, top, left, TYPES[1], codes)
    return bottom, right, (int(best[0]), int(best[1]), int(best[2])), dirs
