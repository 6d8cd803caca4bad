"""Banded global scores of many pairs on the GPU: the first phase of all against all.

# nq: queries, nt: targets, W: the widest band a kernel instance holds.

One thread scores one pair (``band.cu``). Pairs are put in classes by their clipped
band's width, one launch per class with the smallest instance that holds it: bands up
to 64 diagonals live in registers, wider ones in local memory. The same results as the
CPU twin, ``swath.kernels.cpu.band``, which scores the pairs whose bands are wider than
the widest instance.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from swath.constants import BLOCK
from swath.kernels.band_geometry import SKIPPED, clipped_bands
from swath.kernels.gpu._cuda import BAND_WIDTHS, band_name, kernel
from swath.kernels.scheme import interior
from swath.scoring import Scoring


def band_scores(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                lo: np.ndarray, hi: np.ndarray, scoring: Scoring) -> np.ndarray:
    """Global scores of every query against every target within each pair's band,
    ``(nq, nt)`` int32; ``SKIPPED`` where the band holds no path (``lo > hi`` among them).
    """
    matrix, gap_open, gap_extend = interior(scoring, "the band")
    nq, nt = len(q_off) - 1, len(t_off) - 1
    out = np.full((nq, nt), SKIPPED, dtype=np.int32)
    if not nq or not nt:
        return out
    m, n = np.diff(q_off)[:, None], np.diff(t_off)[None, :]
    lo, hi = np.broadcast_to(lo, (nq, nt)), np.broadcast_to(hi, (nq, nt))
    size = matrix.shape[0]
    args = (cp.asarray(q_res), cp.asarray(q_off.astype(np.int64)), cp.asarray(t_res),
            cp.asarray(t_off.astype(np.int64)))
    bounds = (cp.asarray(np.ascontiguousarray(lo, dtype=np.int32)),
              cp.asarray(np.ascontiguousarray(hi, dtype=np.int32)))
    # each pair's width class, on the GPU (NumPy's functions dispatch to CuPy's)
    width, holds = clipped_bands(args[1], args[3], *bounds)
    classes = cp.searchsorted(cp.asarray(BAND_WIDTHS), width)
    sub = cp.asarray(np.ascontiguousarray(matrix, dtype=np.int32))
    scores = cp.full((nq, nt), SKIPPED, dtype=np.int32)
    for c, widest in enumerate(BAND_WIDTHS):
        pairs = cp.flatnonzero((holds & (classes == c)).ravel()).astype(np.int32)
        if not len(pairs):
            continue
        kernel("band.cu", band_name(widest))(
            (-(-len(pairs) // BLOCK),), (BLOCK,),
            (*args, pairs, np.int32(len(pairs)), np.int32(nt), *bounds, sub,
             np.int32(size), np.int32(gap_open), np.int32(gap_extend), scores),
            shared_mem=size * size * 4)
    out = scores.get()
    wide = (holds & (classes == len(BAND_WIDTHS))).get()
    if wide.any():     # numba only where a band is wider than every instance
        from swath.kernels import get_backend

        cpu_band_scores = get_backend("cpu").band_scores
        for qi in np.flatnonzero(wide.any(axis=1)):
            tj = np.flatnonzero(wide[qi])
            targets = [t_res[t_off[k]:t_off[k + 1]] for k in tj.tolist()]
            out[qi, tj] = cpu_band_scores(
                q_res[q_off[qi]:q_off[qi + 1]], np.array([0, m[qi, 0]]),
                np.concatenate(targets), np.concatenate([[0], np.cumsum(n[0, tj])]),
                lo[qi:qi + 1, tj], hi[qi:qi + 1, tj], scoring)[0]
    return out
