"""Direction codes of up to 16 (32-bit) or 32 (16-bit) pairs at once, each lane its own
query and target.

# M: the group's longest query, w: its packed width (a multiple of C), L: lanes,
# C: columns of a block (2: a byte of codes). rows: (M, L) and cols: (w, L) residues of
# the lanes' queries and targets (any code past a sequence's end), dirs: (w / 2, M, L)
# uint8, two columns a byte (low nibble: even column): a block's codes are written
# in one run, where rows of (M, w / 2, L) lay them a row's length apart (measured
# much slower).

The recurrences, codes and tie rules of ``traceback._fill``, with the innermost loop
across lanes so that numba vectorizes it: ``dirs[:, :m, k].T`` is laid out as
``_fill``'s codes for lane ``k``'s pair (m its query's length), and
``traceback._walk_cigar`` reads that view. Cells past a lane's query or target come
after its own in every recurrence, so they never change them; ends are read at each
lane's own last row and column.

A cell's substitution score is ``match`` where the two codes are equal and
``mismatch`` elsewhere: the kernel takes matrices of that form (``equal_scores``; a
residue scoring ``mismatch`` against itself is mapped to codes that never meet), as
DNA's. A gather of ``matrix[query code, target code]`` per lane does not vectorize.

Values have the width of the kernel (int16 or int32); callers send only pairs whose
value bounds fit it (``bounds.fits_every_mode`` with ``floor`` ``minus_infinity``):
the scores are exact, never saturated. Global mode with end costs is a kernel of its
own (``_fill``'s: E along lane k's last row and F down its last column take them).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from swath.constants import (
    E_EXTENDED,
    F_EXTENDED,
    MODE_GLOBAL,
    MODE_LOCAL,
    SOURCE_DIAGONAL,
    SOURCE_E,
    SOURCE_F,
    SOURCE_START,
)
from swath.kernels.cpu._jit import jit, readonly

BLOCK_COLUMNS = 2  # C: columns swept together (a byte of codes holds two)
U8 = np.uint8


def lanes(dtype: np.dtype | type) -> int:
    """Pairs side by side at the width of ``dtype``: a 512-bit vector's worth."""
    return 64 // np.dtype(dtype).itemsize


def minus_infinity(dtype: np.dtype | type) -> int:
    """The kernel's closed gap at the width of ``dtype``."""
    return int(np.iinfo(dtype).min) // 2


def equal_scores(matrix: np.ndarray, present: np.ndarray | None = None
                 ) -> tuple[int, int, np.ndarray, np.ndarray] | None:
    """``(match, mismatch, query codes, target codes)`` where ``matrix[a, b]`` is ``match``
    for ``a == b`` among the residues scoring ``match`` against themselves and
    ``mismatch`` elsewhere: the codes (uint8, one a residue and one more for the
    padding) map a query's and a target's residues so that two mapped codes are equal
    exactly where they score ``match``. None for any other matrix. With ``present`` (a
    bool a residue), only the residues the sequences hold count (vsearch's matrix, whose
    N scores 0, is of this form over sequences without N)."""
    size = matrix.shape[0]
    held = np.ones(size, dtype=bool) if present is None else np.asarray(present, dtype=bool)
    if not held.any():
        return None
    both = np.ix_(held, held)
    match, mismatch = int(matrix[both].max()), int(matrix[both].min())
    same = np.append(held & (np.diagonal(matrix) == match), False)
    expected = np.where(np.eye(size, dtype=bool) & same[:size, None], match, mismatch)
    if not np.array_equal(matrix[both], expected[both]):
        return None
    residues = np.arange(size + 1)
    return (match, mismatch, np.where(same, residues, 254).astype(U8),
            np.where(same, residues, 255).astype(U8))


@functools.cache
def _make_fill(mode: int, dtype: np.dtype, ends: bool) -> Any:
    local = mode == MODE_LOCAL
    global_ = mode == MODE_GLOBAL
    T = dtype.type
    L = lanes(dtype)
    neg_inf = T(minus_infinity(dtype))

    @jit
    def pair_fill(rows, cols, m_len, n_len, match, mismatch, gap_open, gap_extend, end_open,
                  end_extend, dirs, out_ends):
        M = rows.shape[0]
        C = BLOCK_COLUMNS
        goe = T(gap_open + gap_extend)
        ge = T(gap_extend)
        end_goe = T(end_open + end_extend)
        end_ge = T(end_extend)
        zero = T(0)
        hit, miss = T(match), T(mismatch)
        shortest = M
        for k in range(L):
            if m_len[k] > 0:
                shortest = min(shortest, m_len[k])
        # state[i, 0]: H of row i in the last column swept, state[i, 1]: E of row i;
        # local: state[i, 2]: the row's best H so far (0 for none), state[i, 3]: its column
        state = np.zeros((M + 1, 4, L), dtype)
        # per column of the block: F, H of the row above, the target's code
        f_col = np.empty((C, L), dtype)
        h_col = np.empty((C, L), dtype)
        t_col = np.empty((C, L), dtype)
        # lane rows: H diagonal to the block's first column, best, its row (local: found
        # after the fill, from the rows' best), its column, query length, target length
        lane = np.zeros((6, L), dtype)
        for i in range(M + 1):
            h = zero if local or i == 0 else T(-(end_open + end_extend * i))
            for k in range(L):
                state[i, 0, k] = h
                state[i, 1, k] = neg_inf
        for k in range(L):
            lane[1, k] = zero if local else neg_inf
            lane[4, k] = m_len[k]
            lane[5, k] = n_len[k]
        # with end costs: a vertical gap's costs in each column of the block, per lane (the
        # end costs in the lane's last column)
        f_goe = np.full((C, L), goe, dtype)
        f_ge = np.full((C, L), ge, dtype)
        for j0 in range(0, cols.shape[0], C):
            for c in range(C):
                top = zero if not global_ else T(-(end_open + end_extend * (j0 + c + 1)))
                for k in range(L):
                    t_col[c, k] = cols[j0 + c, k]
                    f_col[c, k] = neg_inf
                    h_col[c, k] = top
                if ends:
                    column = T(j0 + c + 1)
                    for k in range(L):
                        last_col = column == lane[5, k]
                        f_goe[c, k] = end_goe if last_col else goe
                        f_ge[c, k] = end_ge if last_col else ge
            for k in range(L):
                lane[0, k] = state[0, 0, k]
                state[0, 0, k] = h_col[C - 1, k]
            byte0 = j0 >> 1
            for i in range(M):
                residues = rows[i]
                row = state[i + 1]
                at = T(i + 1)
                for k in range(L):
                    left = row[0, k]
                    e = row[1, k]
                    diagonal = lane[0, k]
                    lane[0, k] = left
                    row_best, row_col = row[2, k], row[3, k]
                    q = residues[k]
                    pair = zero
                    if ends:    # a horizontal gap's costs in this row (the end costs in the last)
                        last_row = at == lane[4, k]
                        e_goe = end_goe if last_row else goe
                        e_ge = end_ge if last_row else ge
                    for c in range(C):
                        if ends:
                            e_open = T(left - e_goe)
                            e_ext = T(e - e_ge)
                        else:
                            e_open = T(left - goe)
                            e_ext = T(e - ge)
                        e = max(e_open, e_ext)
                        up = h_col[c, k]
                        if ends:
                            f_open = T(up - f_goe[c, k])
                            f_ext = T(f_col[c, k] - f_ge[c, k])
                        else:
                            f_open = T(up - goe)
                            f_ext = T(f_col[c, k] - ge)
                        f = max(f_open, f_ext)
                        h = T(diagonal + (hit if q == t_col[c, k] else miss))
                        src = T(SOURCE_E) if e > h else T(SOURCE_DIAGONAL)
                        h = max(h, e)
                        src = T(SOURCE_F) if f > h else src
                        h = max(h, f)
                        if local:
                            src = T(SOURCE_START) if h <= zero else src
                            h = max(h, zero)
                            column = T(j0 + c + 1)
                            better = (column <= lane[5, k]) & (h > row_best)
                            row_best = h if better else row_best
                            row_col = column if better else row_col
                        code = src | (T(E_EXTENDED) if e_ext > e_open else zero) \
                            | (T(F_EXTENDED) if f_ext > f_open else zero)
                        if c % 2 == 0:
                            pair = code
                        else:
                            dirs[byte0 + c // 2, i, k] = U8(pair | code << 4)
                        diagonal = up
                        h_col[c, k] = h
                        f_col[c, k] = f
                        left = h
                    row[0, k] = left
                    row[1, k] = e
                    if local:
                        row[2, k], row[3, k] = row_best, row_col
                if not local and i + 1 >= shortest:
                    # the row's H in the block's columns: the end of lanes whose query ends here
                    for c in range(C):
                        here = T(j0 + c + 1)
                        for k in range(L):
                            h = h_col[c, k]
                            better = (at == lane[4, k]) & (
                                (here == lane[5, k]) if global_
                                else (here <= lane[5, k]) & (h > lane[1, k]))
                            lane[1, k] = h if better else lane[1, k]
                            lane[3, k] = here if better else lane[3, k]
        for k in range(L):
            if local:
                # the first best cell in row-major order: the first row holding the best
                for i in range(1, m_len[k] + 1):
                    if state[i, 2, k] > lane[1, k]:
                        lane[1, k], lane[2, k], lane[3, k] = state[i, 2, k], i, state[i, 3, k]
            out_ends[0, k] = lane[1, k]
            out_ends[1, k] = lane[2, k] if local else m_len[k]
            out_ends[2, k] = lane[3, k]

    return pair_fill


def pack(res: np.ndarray, off: np.ndarray, members: np.ndarray, codes: np.ndarray,
         dtype: np.dtype | type, multiple: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Sequences ``members`` side by side, a lane each, mapped by ``codes`` (the last
    code past a sequence's end): ``(packed (w, lanes(dtype)) of dtype, lengths (lanes,)
    int64)``, ``w`` the longest rounded up to ``multiple``; lengths 0 for unused lanes."""
    lengths = np.zeros(lanes(dtype), dtype=np.int64)
    lengths[:len(members)] = off[members + 1] - off[members]
    width = -(-int(lengths.max()) // multiple) * multiple
    out = np.empty((width, len(lengths)), dtype=dtype)
    _pack(readonly(res), readonly(off), readonly(members), readonly(codes), out)
    return out, lengths


@jit
def _pack(res, off, members, codes, out):
    for lane in range(out.shape[1]):
        start = off[members[lane]] if lane < members.shape[0] else 0
        end = off[members[lane] + 1] if lane < members.shape[0] else 0
        for j in range(end - start):
            out[j, lane] = codes[res[start + j]]
        for j in range(end - start, out.shape[0]):
            out[j, lane] = codes[-1]


def pair_fill(rows: np.ndarray, cols: np.ndarray, m_len: np.ndarray, n_len: np.ndarray,
              scores: tuple[int, int, np.ndarray, np.ndarray], gap_open: int,
              gap_extend: int, mode: int, dirs: np.ndarray, ends: np.ndarray,
              end_gaps: tuple[int, int] | None = None) -> None:
    """Fill ``dirs`` (any prior content) for each lane's pair; ``ends[:, k]`` gets
    (score, end row, end column) of lane ``k`` under ``_fill``'s tie rules.

    ``rows`` and ``cols`` hold the lanes' queries and targets (``pack``ed by the codes of
    ``scores``, ``equal_scores(matrix)``; ``cols`` ``BLOCK_COLUMNS`` wide), of the
    kernel's width; ``m_len[k]`` and ``n_len[k]`` are 0 for an unused lane; ``mode`` is
    a code of ``swath.constants.MODE_CODES``; ``end_gaps`` the terminal gaps' costs
    (global mode, ``scheme.end_costs``) or None.
    """
    end_open, end_extend = end_gaps or (gap_open, gap_extend)
    _make_fill(mode, rows.dtype, end_gaps is not None)(
        rows, cols, m_len, n_len, scores[0], scores[1], gap_open, gap_extend, end_open,
        end_extend, dirs, ends)
