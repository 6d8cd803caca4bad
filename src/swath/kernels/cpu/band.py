"""Banded global scores of many pairs on the CPU: the first pass of all against all.

# nq: queries, nt: targets, m, n: a pair's lengths, d = i - j: the diagonal of cell
# (i, j), W: a band's diagonals, residues: uint8 codes, scores: int32.

Pair (qi, tj) is scored over the global alignments whose every cell lies on a diagonal
from ``lo[qi, tj]`` to ``hi[qi, tj]`` (clipped to ``-n .. m``); a band without both
ends of the path (diagonals 0 and ``m - n``), ``lo > hi`` among them, skips the pair.
A band that holds every diagonal gives the optimal global score. The band is kept as
one row of W cells indexed by diagonal, updated in place from the last diagonal to the
first (left to right along the row): cell k reads its diagonal neighbour at k and the
cell above at k - 1 before either is overwritten, and the cell to its left is the one
just computed. 32-bit arithmetic, exact for any pair whose scores fit it.
"""

from __future__ import annotations

import numba
import numpy as np

from swath.kernels.cpu._jit import jit

SKIPPED = int(np.iinfo(np.int32).min)   # the score of a pair whose band is empty
NEG = -(1 << 30)                        # no path (far below any score, far above overflow)


@jit
def _band_score(q: np.ndarray, t: np.ndarray, lo: int, hi: int, sub: np.ndarray,
                gap_open: int, gap_extend: int, h: np.ndarray, e: np.ndarray) -> int:
    """The best global score of ``q`` against ``t`` over the paths within diagonals
    ``lo .. hi`` (already clipped and holding 0 and ``m - n``); ``h``, ``e`` scratch."""
    m, n = q.shape[0], t.shape[0]
    width = hi - lo + 1
    first = gap_open + gap_extend
    for k in range(width):                  # row 0: j = -(lo + k)
        j = -(lo + k)
        h[k] = (0 if j == 0 else -(gap_open + j * gap_extend)) if 0 <= j <= n else NEG
        e[k] = NEG
    for i in range(1, m + 1):
        row = sub[q[i - 1]]
        zero = i - lo                       # k of column 0; k of column n is zero - n
        top = min(width - 1, zero)
        bottom = max(0, zero - n)
        for k in range(width - 1, top, -1):     # columns before the first
            h[k] = NEG
            e[k] = NEG
        left, f = NEG, NEG
        k = top
        if top == zero:                     # column 0: a gap of i query residues
            left = -(gap_open + i * gap_extend)
            h[k] = left
            e[k] = NEG
            k -= 1
        while k >= bottom:
            up = NEG
            if k > 0:
                up = max(e[k - 1] - gap_extend, h[k - 1] - first, NEG)
            f = max(f - gap_extend, left - first, NEG)
            left = max(h[k] + row[t[zero - k - 1]], up, f)
            h[k] = left
            e[k] = up
            k -= 1
        for k in range(bottom - 1, -1, -1):     # columns past the last
            h[k] = NEG
            e[k] = NEG
    return h[m - n - lo]


@jit(parallel=True)
def _band_kernel(q_res, q_off, t_res, t_off, lo, hi, sub, gap_open, gap_extend, widest, out):
    nq, nt = q_off.shape[0] - 1, t_off.shape[0] - 1
    for qi in numba.prange(nq):
        h = np.empty(widest, dtype=np.int32)
        e = np.empty(widest, dtype=np.int32)
        q = q_res[q_off[qi]:q_off[qi + 1]]
        m = q.shape[0]
        for tj in range(nt):
            t = t_res[t_off[tj]:t_off[tj + 1]]
            n = t.shape[0]
            a, b = max(lo[qi, tj], -n), min(hi[qi, tj], m)
            if a > min(0, m - n) or b < max(0, m - n):     # no path in the band
                out[qi, tj] = SKIPPED
            else:
                out[qi, tj] = _band_score(q, t, a, b, sub, gap_open, gap_extend, h, e)


def clipped_bands(q_off: np.ndarray, t_off: np.ndarray, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Diagonals of each pair's band once clipped to its DP matrix (0 where empty), and
    whether it holds a path (both diagonal 0 and ``m - n``)."""
    m, n = np.diff(q_off)[:, None], np.diff(t_off)[None, :]
    first, last = np.maximum(lo, -n), np.minimum(hi, m)
    return (np.maximum(last - first + 1, 0),
            (first <= np.minimum(0, m - n)) & (last >= np.maximum(0, m - n)))


def band_scores(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                lo: np.ndarray, hi: np.ndarray, matrix: np.ndarray, gap_open: int,
                gap_extend: int) -> np.ndarray:
    """Global scores of every query against every target within each pair's band,
    ``(nq, nt)`` int32; ``SKIPPED`` where the band holds no path (``lo > hi`` among them)."""
    nq, nt = len(q_off) - 1, len(t_off) - 1
    out = np.empty((nq, nt), dtype=np.int32)
    if nq and nt:
        widest = max(int(clipped_bands(q_off, t_off, lo, hi)[0].max()), 1)
        _band_kernel(q_res, q_off.astype(np.int64), t_res, t_off.astype(np.int64),
                     np.broadcast_to(lo, (nq, nt)).astype(np.int64),
                     np.broadcast_to(hi, (nq, nt)).astype(np.int64),
                     np.ascontiguousarray(matrix, dtype=np.int32), int(gap_open),
                     int(gap_extend), widest, out)
    return out
