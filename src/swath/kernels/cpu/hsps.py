"""Further local alignments of one pair: several HSPs a subject (``--max-hsps``).

# m: query length, n: target length, residues: uint8 codes

After a pair's optimal local alignment, each further one is the best local alignment
(Smith-Waterman, affine gaps) through none of the matrix cells that the alignments found
before it pass through: Waterman and Eggert's declumping (J. Mol. Biol. 197:723-728,
1987), with whole paths blocked, so that no two of a pair's alignments share a residue
pair or a gap position, nor cross (monotone paths cross only at a shared cell). Their
scores fall as they are found; the search stops at ``count`` or at a score of 0.

Ties are broken as :mod:`swath.kernels.cpu.traceback` breaks them: the alignment ends at
the first best cell in row-major order; H prefers the diagonal, then E, then F, and a
cell scoring 0 starts the alignment; E and F prefer opening to extending. The matrix is
filled with full direction codes (a byte a cell) and a blocked mark a cell: O(m n)
bytes, at most a query's length times its subject's.
"""

from __future__ import annotations

import numpy as np

from swath.alignment import cigar_from_path, cigar_runs
from swath.constants import MINUS_INFINITY_64, OP_DELETE, OP_INSERT, OP_MATCH
from swath.kernels.cpu._jit import jit
from swath.scoring import Scoring

__all__ = ["further_alignments"]

_START, _DIAGONAL, _FROM_E, _FROM_F = 0, 1, 2, 3      # where H came from (2 bits)
_E_EXTENDED, _F_EXTENDED = 4, 8
Found = tuple[int, int, int, int, int, str]   # score, query start, end, target start, end, CIGAR


@jit
def _fill(q, t, sub, gap_open, gap_extend, blocked, dirs):
    """Fill the local matrix around ``blocked`` cells; the best score and its cell."""
    m, n = len(q), len(t)
    h_prev = np.zeros(n + 1, np.int64)
    h_row = np.zeros(n + 1, np.int64)
    f_col = np.full(n + 1, MINUS_INFINITY_64, np.int64)
    best, best_i, best_j = 0, 0, 0
    for i in range(1, m + 1):
        h_row[0] = 0
        e = MINUS_INFINITY_64
        for j in range(1, n + 1):
            if blocked[i - 1, j - 1]:
                h_row[j] = MINUS_INFINITY_64
                f_col[j] = MINUS_INFINITY_64
                e = MINUS_INFINITY_64
                dirs[i - 1, j - 1] = _START
                continue
            code = 0
            e_open, e_extend = h_row[j - 1] - gap_open - gap_extend, e - gap_extend
            if e_extend > e_open:
                e, code = e_extend, code | _E_EXTENDED
            else:
                e = e_open
            f_open, f_extend = h_prev[j] - gap_open - gap_extend, f_col[j] - gap_extend
            if f_extend > f_open:
                f_col[j], code = f_extend, code | _F_EXTENDED
            else:
                f_col[j] = f_open
            h, source = h_prev[j - 1] + sub[q[i - 1], t[j - 1]], _DIAGONAL
            if e > h:
                h, source = e, _FROM_E
            if f_col[j] > h:
                h, source = f_col[j], _FROM_F
            if h <= 0:
                h, source = 0, _START
            h_row[j] = h
            dirs[i - 1, j - 1] = code | source
            if h > best:
                best, best_i, best_j = h, i, j
        h_prev, h_row = h_row, h_prev
    return best, best_i, best_j


@jit
def _walk(dirs, end_i, end_j, blocked, ops):
    """Walk back from cell ``(end_i, end_j)`` to where the alignment starts, blocking
    the cells it passes through; its ops (from the end), their count and its start."""
    i, j, state, count = end_i, end_j, 0, 0
    while i > 0 and j > 0:
        code = dirs[i - 1, j - 1]
        if state == 0:
            source = code & 3
            if source == _START:
                break
            if source == _DIAGONAL:
                blocked[i - 1, j - 1] = True
                ops[count] = OP_MATCH
                count += 1
                i -= 1
                j -= 1
                continue
            state = 1 if source == _FROM_E else 2
        blocked[i - 1, j - 1] = True
        if state == 1:          # E: a target residue against a gap
            ops[count] = OP_DELETE
            state = 1 if code & _E_EXTENDED else 0
            j -= 1
        else:                   # F: a query residue against a gap
            ops[count] = OP_INSERT
            state = 2 if code & _F_EXTENDED else 0
            i -= 1
        count += 1
    return count, i, j


@jit
def _block_path(blocked, q_start, t_start, ops):
    """Block the cells an alignment's ops (from its start) pass through."""
    i, j = q_start, t_start
    for op in ops:
        if op != OP_DELETE:
            i += 1
        if op != OP_INSERT:
            j += 1
        blocked[i - 1, j - 1] = True


def _steps(cigar: str) -> np.ndarray:
    """A CIGAR's ops, a step each (``=`` and ``X`` both :data:`OP_MATCH`)."""
    op = {"I": OP_INSERT, "D": OP_DELETE}
    return np.array([op.get(letter, OP_MATCH) for n, letter in cigar_runs(cigar)
                     for _ in range(n)], dtype=np.int8)


def further_alignments(q: np.ndarray, t: np.ndarray, scoring: Scoring,
                       first: tuple[int, int, str], count: int) -> list[Found]:
    """Up to ``count`` further local alignments of ``q`` against ``t``, after the one
    that starts at ``first = (query_start, target_start, cigar)``: each the best through
    no cell of those before it, best first, while they score more than 0.

    Returns
    -------
    list of (score, query_start, query_end, target_start, target_end, cigar)
        0-based, end exclusive; swath's extended CIGARs.
    """
    q = np.ascontiguousarray(q, dtype=np.uint8)
    t = np.ascontiguousarray(t, dtype=np.uint8)
    blocked = np.zeros((len(q), len(t)), dtype=np.bool_)
    dirs = np.empty((len(q), len(t)), dtype=np.uint8)
    _block_path(blocked, first[0], first[1], _steps(first[2]))
    sub = scoring.matrix.astype(np.int64)
    ops = np.empty(len(q) + len(t), dtype=np.int8)
    found: list[Found] = []
    while len(found) < count:
        score, end_i, end_j = _fill(q, t, sub, scoring.gap_open, scoring.gap_extend,
                                    blocked, dirs)
        if score <= 0:
            break
        steps, start_i, start_j = _walk(dirs, end_i, end_j, blocked, ops)
        path = ops[:steps][::-1]
        found.append((int(score), int(start_i), int(end_i), int(start_j), int(end_j),
                      cigar_from_path(path, q, t, start_i, start_j)))
    return found
