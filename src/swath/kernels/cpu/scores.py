"""Score-only alignment of many queries against many targets on the CPU.

# nq: queries, nt: targets, residues: uint8 codes, offsets: int64 (len + 1).

A first pass runs every pair in 16-bit lanes; the pairs it flags (local scores near
32767) or that cannot fit 16 bits by their bounds (global and semiglobal) are re-run
exactly in 32-bit lanes.
"""

from __future__ import annotations

import numba
import numpy as np

from swath.errors import InvalidParameter
from swath.kernels.cpu.lanes import LANES, lane_kernel, pack_lanes

NARROW, WIDE = np.dtype(np.int16), np.dtype(np.int32)


def score_bounds(query_lengths: np.ndarray, target_lengths: np.ndarray, matrix: np.ndarray,
                 gap_open: int, gap_extend: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of every DP value for pairs of the given lengths (int64).

    Any H, E or F value of a pair, and every sum formed on the way, lies in
    ``[low, high]``; arithmetic of a width that holds both cannot overflow.
    """
    m = np.asarray(query_lengths, dtype=np.int64)
    n = np.asarray(target_lengths, dtype=np.int64)
    top = max(int(matrix.max()), 0)
    spread = max(int(np.abs(matrix).max()), 1) + gap_open + 2 * gap_extend
    high = top * np.minimum(m, n) + top
    if mode == "local":
        low = np.full(np.broadcast(m, n).shape, -spread - gap_extend, dtype=np.int64)
    else:
        low = -(2 * gap_open + gap_extend * (m + n)) - spread
    return low, high


def _fits(low: np.ndarray, high: np.ndarray, dtype: np.dtype, gap_extend: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return (low > info.min + 2 * gap_extend + 1) & (high < info.max)


def _padded(matrix: np.ndarray, dtype: np.dtype) -> np.ndarray:
    size = matrix.shape[0]
    sub = np.full((size + 1, size + 1), min(int(matrix.min()), 0), dtype=dtype)
    sub[:size, :size] = matrix
    return sub


def _run(dtype, mode, q_res, q_off, t_res, t_off, order, matrix, gap_open, gap_extend, skip_fn):
    """One pass over queries x targets[order]; returns (scores, flags, slots)."""
    lanes = LANES[dtype]
    cols, col_off, lens = pack_lanes(t_res, t_off, order, lanes, pad=matrix.shape[0])
    group_len = lens.max(axis=1)
    skip = skip_fn(np.diff(q_off)[:, None], group_len[None, :])
    nq, ngroups = len(q_off) - 1, len(col_off) - 1
    out = np.zeros((nq, ngroups, lanes), dtype=dtype)
    flags = np.zeros((nq, ngroups, lanes), dtype=np.uint8)
    numba.set_parallel_chunksize(1)
    lane_kernel(mode, dtype)(q_res, q_off, cols, col_off, lens, skip, _padded(matrix, dtype),
                             gap_open, gap_extend, out, flags)
    slots = np.full(ngroups * lanes, -1, dtype=np.int64)
    slots[:len(order)] = order
    return out.reshape(nq, -1), flags.reshape(nq, -1), slots


def score_many(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str) -> np.ndarray:
    """Optimal scores of every query against every target, ``(nq, nt)`` int32."""
    t_len = np.diff(t_off)
    q_len = np.diff(q_off)
    order = np.argsort(t_len, kind="stable")
    scores = np.zeros((len(q_len), len(t_len)), dtype=np.int32)

    def skip16(m: np.ndarray, n: np.ndarray) -> np.ndarray:
        low, high = score_bounds(m, n, matrix, gap_open, gap_extend, mode)
        if mode == "local":
            high = np.zeros_like(high)  # saturation is detected at run time
        return ~_fits(low, high, NARROW, gap_extend)

    out, flags, slots = _run(NARROW, mode, q_res, q_off, t_res, t_off, order, matrix,
                             gap_open, gap_extend, skip16)
    used = slots >= 0
    scores[:, slots[used]] = out[:, used]
    redo = flags[:, used].astype(bool)
    for qi in np.flatnonzero(redo.any(axis=1)):
        targets = slots[used][redo[qi]]
        low, high = score_bounds(q_len[qi], t_len[targets], matrix, gap_open, gap_extend, mode)
        if not _fits(low, high, WIDE, gap_extend).all():
            raise InvalidParameter(
                f"query {qi} is too long for exact 32-bit scoring against {len(targets)} targets")
        sub_q = slice(q_off[qi], q_off[qi + 1])
        wide, _, wide_slots = _run(
            WIDE, mode, q_res[sub_q], np.array([0, q_len[qi]]), t_res, t_off,
            targets[np.argsort(t_len[targets], kind="stable")], matrix, gap_open, gap_extend,
            lambda m, n: np.zeros(np.broadcast(m, n).shape, dtype=bool))
        keep = wide_slots >= 0
        scores[qi, wide_slots[keep]] = wide[0, keep]
    return scores
