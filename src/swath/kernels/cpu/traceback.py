"""Full alignment of one pair with traceback, in O(m * n / 2) bytes.

# m: query length, n: target length, residues: uint8 codes,
# dirs: (m, ceil(n / 2)) uint8, two cells a byte (low nibble: even column).

Each cell's direction code takes 4 bits: bits 0-1 say where H came from
(0 start, 1 diagonal, 2 E, 3 F), bit 2 that E extended E (else it opened from H),
bit 3 that F extended F. E runs along a row (a target residue against a gap: ``D``),
F down a column (a query residue against a gap: ``I``). Two 50 kbp sequences take
1.25 GB of direction codes.

Ties are broken the same way by every backend and by ``swath.testing``: the
alignment ends at the first best cell in row-major order (local) or the first best
column of the last row (semiglobal); H prefers the diagonal, then E, then F, and in
local mode a cell scoring 0 starts the alignment; E and F prefer opening to extending.
"""

from __future__ import annotations

import numpy as np

from swath.kernels.cpu._jit import jit

OP_MATCH, OP_INSERT, OP_DELETE = 0, 1, 2
MODE_CODES = {"local": 0, "global": 1, "semiglobal": 2}
_NEG_INF = -(1 << 40)


@jit
def _fill(q, t, sub, gap_open, gap_extend, mode, dirs):
    """Fill the direction codes; return (score, end row, end column)."""
    m = q.shape[0]
    n = t.shape[0]
    goe = gap_open + gap_extend
    h_row = np.empty(n + 1, np.int64)
    f_row = np.full(n + 1, _NEG_INF, np.int64)
    for j in range(n + 1):
        h_row[j] = 0 if mode != 1 or j == 0 else -(gap_open + gap_extend * j)
    best, best_i, best_j = np.int64(0), 0, 0
    for i in range(1, m + 1):
        h_diag = h_row[0]
        h_left = 0 if mode == 0 else -(gap_open + gap_extend * i)
        h_row[0] = h_left
        e = np.int64(_NEG_INF)
        scores = sub[q[i - 1]]
        code_pair = 0
        for j in range(1, n + 1):
            e_open = h_left - goe
            e_ext = e - gap_extend
            e = max(e_open, e_ext)
            f_open = h_row[j] - goe
            f_ext = f_row[j] - gap_extend
            f = max(f_open, f_ext)
            f_row[j] = f
            h = h_diag + scores[t[j - 1]]
            src = 1
            if e > h:
                h = e
                src = 2
            if f > h:
                h = f
                src = 3
            if mode == 0 and h <= 0:
                h = 0
                src = 0
            code = src | (4 if e_ext > e_open else 0) | (8 if f_ext > f_open else 0)
            if j & 1:
                code_pair = code
            else:
                dirs[i - 1, (j - 1) >> 1] = code_pair | code << 4
            h_diag = h_row[j]
            h_row[j] = h
            h_left = h
            if mode == 0 and h > best:
                best, best_i, best_j = h, i, j
        if n & 1:
            dirs[i - 1, n >> 1] = code_pair
    if mode == 1:
        return h_row[n], m, n
    if mode == 2:
        best, best_j = h_row[1], 1
        for j in range(2, n + 1):
            if h_row[j] > best:
                best, best_j = h_row[j], j
        return best, m, best_j
    return best, best_i, best_j


@jit
def _walk(dirs, mode, end_i, end_j, ops):
    """Trace back from (end_i, end_j); write ops end-first; return (count, start i, start j)."""
    i, j, state, count = end_i, end_j, 0, 0
    while i > 0 and j > 0:
        code = (dirs[i - 1, (j - 1) >> 1] >> (((j - 1) & 1) * 4)) & 15
        if state == 0:
            src = code & 3
            if src == 0:
                break
            if src == 1:
                ops[count] = OP_MATCH
                count += 1
                i -= 1
                j -= 1
            else:
                state = src - 1
        elif state == 1:
            ops[count] = OP_DELETE
            count += 1
            j -= 1
            state = 1 if code & 4 else 0
        else:
            ops[count] = OP_INSERT
            count += 1
            i -= 1
            state = 2 if code & 8 else 0
    if mode != 0:
        while i > 0:
            ops[count] = OP_INSERT
            count += 1
            i -= 1
    if mode == 1:
        while j > 0:
            ops[count] = OP_DELETE
            count += 1
            j -= 1
    return count, i, j


def align_pair(query: np.ndarray, target: np.ndarray, matrix: np.ndarray, gap_open: int,
               gap_extend: int, mode: str) -> tuple[int, int, int, int, int, np.ndarray]:
    """Optimal alignment of one pair.

    Returns ``(score, query_start, query_end, target_start, target_end, ops)`` with
    0-based end-exclusive coordinates and ``ops`` the path from start to end as
    ``OP_MATCH`` (diagonal), ``OP_INSERT`` and ``OP_DELETE`` codes (uint8).
    """
    code = MODE_CODES[mode]
    dirs = np.empty((len(query), (len(target) + 1) // 2), dtype=np.uint8)
    score, end_i, end_j = _fill(query, target, matrix, gap_open, gap_extend, code, dirs)
    ops = np.empty(len(query) + len(target), dtype=np.uint8)
    count, start_i, start_j = _walk(dirs, code, end_i, end_j, ops)
    return int(score), int(start_i), int(end_i), int(start_j), int(end_j), ops[:count][::-1].copy()


def align_batch(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Optimal alignment of query k against target k, for every k.

    Returns ``scores`` (N,) int64, ``coords`` (N, 4) int64 (query start, query end,
    target start, target end; 0-based, end exclusive), and the CIGARs as one uint8
    text buffer with (N + 1,) int64 offsets.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    from swath.alignment import cigar_from_path

    count = len(q_off) - 1
    scores = np.zeros(count, dtype=np.int64)
    coords = np.zeros((count, 4), dtype=np.int64)

    def one(k: int) -> bytes:
        query, target = q_res[q_off[k]:q_off[k + 1]], t_res[t_off[k]:t_off[k + 1]]
        score, q_start, q_end, t_start, t_end, ops = align_pair(
            query, target, matrix, gap_open, gap_extend, mode)
        scores[k] = score
        coords[k] = (q_start, q_end, t_start, t_end)
        return cigar_from_path(ops, query, target, q_start, t_start).encode("ascii")

    # the numba kernels release the GIL: pairs align side by side on every core
    threads = min(count, int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1)))
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            texts = list(pool.map(one, range(count)))
    else:
        texts = [one(k) for k in range(count)]
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return scores, coords, np.frombuffer(b"".join(texts), dtype=np.uint8), offsets


def score_ends(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score and end cell of query k against target k: ``(scores, query_end, target_end)``.

    Ends are 0-based exclusive, with the tie rules of the traceback.
    """
    count = len(q_off) - 1
    out = np.zeros((3, count), dtype=np.int64)
    for k in range(count):
        query, target = q_res[q_off[k]:q_off[k + 1]], t_res[t_off[k]:t_off[k + 1]]
        dirs = np.empty((len(query), (len(target) + 1) // 2), dtype=np.uint8)
        out[:, k] = _fill(query, target, matrix, gap_open, gap_extend, MODE_CODES[mode], dirs)
    return out[0], out[1], out[2]
