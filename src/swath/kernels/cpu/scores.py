"""Score-only alignment of many queries against many targets on the CPU.

# nq: queries, nt: targets, residues: uint8 codes, offsets: int64 (len + 1).

Pairs run through a cascade of lane widths: 8 bits (local mode), 16 bits, 32 bits.
A round at one width returns exact scores and flags the pairs it cannot score exactly
(a local score within ``max(matrix)`` of the type's ceiling, or value bounds that do not
fit the type); only the flagged pairs go on to the next, wider round.
"""

from __future__ import annotations

import numpy as np

from swath.constants import Mode
from swath.errors import InvalidParameter
from swath.kernels.bounds import fits, score_bounds
from swath.kernels.cpu._jit import readonly
from swath.kernels.cpu.cores import share_tasks
from swath.kernels.cpu.lanes import (
    BLOCK_COLUMNS,
    LANES,
    lane_kernel,
    pack_lanes,
    padded_matrix,
    query_chunks,
    tasks,
)
from swath.kernels.scheme import unpack
from swath.scoring import Scoring, widest_gaps

WIDTHS = {"local": (np.int8, np.int16, np.int32), "global": (np.int16, np.int32),
          "semiglobal": (np.int16, np.int32)}


def _round(dtype: np.dtype, mode: str, q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
           t_off: np.ndarray, targets: np.ndarray, matrix: np.ndarray, gap_open: int,
           gap_extend: int, ends: tuple[int, int] | None) -> tuple[np.ndarray, np.ndarray]:
    """Scores and flags of every query against ``targets`` at one width, ``(nq, len(targets))``
    (``ends``: the end costs, ``scheme.end_costs``)."""
    lanes = LANES[dtype]
    t_len = np.diff(t_off)
    order = targets[np.argsort(t_len[targets], kind="stable")]
    cols, col_off, lens = pack_lanes(t_res, t_off, order, lanes, pad=matrix.shape[0],
                                     multiple=BLOCK_COLUMNS)
    # the kernel runs every packed column: bounds over the packed widths
    wide_open, wide_extend = widest_gaps(gap_open, gap_extend, ends)
    low, high = score_bounds(np.diff(q_off)[:, None], np.diff(col_off)[None, :], matrix,
                             wide_open, wide_extend, mode)
    skip = ~fits(low, high, dtype, wide_extend)
    nq, ngroups = len(q_off) - 1, len(col_off) - 1
    out = np.zeros((nq, ngroups * lanes), dtype=dtype)
    flags = np.ones((nq, ngroups * lanes), dtype=np.uint8)
    if not skip.all():
        end_open, end_extend = ends or (gap_open, gap_extend)
        chunks = query_chunks(q_off)
        share_tasks(lane_kernel(mode, dtype, ends is not None), tasks(chunks, col_off),
                    readonly(q_res), readonly(q_off), chunks, cols, col_off, lens, skip,
                    padded_matrix(matrix, dtype), gap_open, gap_extend, end_open, end_extend,
                    out.reshape(nq, ngroups, lanes), flags.reshape(nq, ngroups, lanes))
    back = np.empty(len(order), dtype=np.int64)
    back[np.searchsorted(targets, order)] = np.arange(len(order))
    return out[:, back], flags[:, back].astype(bool)


def score_many(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               scoring: Scoring, mode: Mode) -> np.ndarray:
    """Optimal scores of every query against every target, ``(nq, nt)`` int32; terminal
    gaps at the scheme's end costs (global mode) where they cost apart."""
    nq, nt = len(q_off) - 1, len(t_off) - 1
    matrix, gap_open, gap_extend, ends = unpack(scoring, mode)
    scores = np.zeros((nq, nt), dtype=np.int32)
    pending = np.ones((nq, nt), dtype=bool)
    spread = int(np.abs(matrix).max()) + sum(widest_gaps(gap_open, gap_extend, ends))
    widths = [np.dtype(w) for w in WIDTHS[mode] if 4 * spread < np.iinfo(w).max]
    first, *rest = widths
    out, pending = _round(first, mode, q_res, q_off, t_res, t_off, np.arange(nt), matrix,
                          gap_open, gap_extend, ends)
    scores[~pending] = out[~pending]
    for dtype in rest:
        for qi in np.flatnonzero(pending.any(axis=1)):
            targets = np.flatnonzero(pending[qi])
            query = q_res[q_off[qi]:q_off[qi + 1]]
            out, flags = _round(dtype, mode, query, np.array([0, len(query)]), t_res, t_off,
                                targets, matrix, gap_open, gap_extend, ends)
            done = targets[~flags[0]]
            scores[qi, done] = out[0, ~flags[0]]
            pending[qi, done] = False
    if pending.any():
        qi, ti = np.argwhere(pending)[0]
        raise InvalidParameter(
            f"query {qi} against target {ti} is too long for exact 32-bit scoring")
    return scores
