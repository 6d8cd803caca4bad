"""Batched alignment with traceback on the GPU: many pairs, CIGARs built on the device.

# N: pairs (query k against target k), m, n: their lengths, residues: uint8 codes.

Pairs are put in a processing order: by the group size their query needs, then by
target length, so that a warp's groups finish together. Every per-pair array is
uploaded once in that order; pairs are taken in consecutive batches whose direction
codes fit ``memory_budget`` bytes (a single larger pair runs alone). The walk writes
each CIGAR into a scratch slot; one last kernel packs them in the caller's order.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from swath.kernels.gpu._cuda import BLOCK, GROUP_SIZES, MODES, ROWS, fill_name, kernel, walk_name

MEMORY_BUDGET = 4 << 30


def _exclusive_cumsum(sizes: np.ndarray) -> np.ndarray:
    at = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=at[1:])
    return at


def _ranges(keys: np.ndarray) -> list[tuple[int, int]]:
    """Runs of equal consecutive ``keys`` as (begin, end) index ranges."""
    firsts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]).tolist()
    return list(zip(firsts, [*firsts[1:], len(keys)], strict=True))


def align_batch(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str,
                memory_budget: int = MEMORY_BUDGET
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Optimal alignment of query k against target k, for every k.

    Returns ``scores`` (N,) int64, ``coords`` (N, 4) int64 (query start, query end,
    target start, target end; 0-based, end exclusive), and the CIGARs as one uint8
    text buffer with (N + 1,) int64 offsets.
    """
    q_len = np.diff(q_off).astype(np.int64)
    t_len = np.diff(t_off).astype(np.int64)
    count = len(q_len)
    sizes = np.array(GROUP_SIZES)
    group_of = sizes[np.minimum(np.searchsorted(sizes * ROWS, q_len), len(sizes) - 1)]
    order = np.lexsort((t_len, group_of))
    group_o, m_o, n_o = group_of[order], q_len[order], t_len[order]
    passes = -(-m_o // (group_o * ROWS))
    words = passes * (n_o + group_o - 1) * group_o
    word_at = _exclusive_cumsum(words)
    batch_of = word_at[1:] // max(memory_budget // 8, 1)
    spill_sizes = np.where(passes > 1, 2 * n_o, 0)
    scratch_at = _exclusive_cumsum(m_o + n_o)

    d = {name: cp.asarray(a) for name, a in {
        "q_start": q_off[:-1][order], "q_len": m_o.astype(np.int32),
        "t_start": t_off[:-1][order], "t_len": n_o.astype(np.int32),
        "scratch_at": scratch_at[:-1], "matrix": matrix.astype(np.int16)}.items()}
    q_dev, t_dev = cp.asarray(q_res), cp.asarray(t_res)
    out = cp.zeros((count, 3), dtype=np.int32)
    starts = cp.zeros((count, 2), dtype=np.int32)
    lengths = cp.zeros(count, dtype=np.int32)
    scratch = cp.empty(max(int(scratch_at[-1]), 1), dtype=np.uint8)
    cigar = cp.empty(2 * max(int(scratch_at[-1]), 1), dtype=np.int8)
    alphabet = np.int32(matrix.shape[0])
    gaps = (np.int32(gap_open), np.int32(gap_extend))
    for b0, b1 in _ranges(batch_of):
        dirs = cp.empty(int(word_at[b1] - word_at[b0]), dtype=np.uint64)
        dirs_at = cp.asarray(word_at[b0:b1] - word_at[b0])
        spill_at = _exclusive_cumsum(spill_sizes[b0:b1])
        spill = cp.empty(max(int(spill_at[-1]), 1), dtype=np.int32)
        spill_at_d = cp.asarray(spill_at[:-1])
        for g0, g1 in _ranges(group_o[b0:b1]):
            group, n = int(group_o[b0 + g0]), g1 - g0
            lo, hi = b0 + g0, b0 + g1
            pairs = (q_dev, d["q_start"][lo:hi], d["q_len"][lo:hi], t_dev, d["t_start"][lo:hi],
                     d["t_len"][lo:hi], np.int32(n))
            kernel("traceback.cu", fill_name(group, mode))(
                (-(-n * group // BLOCK),), (BLOCK,),
                (*pairs, d["matrix"], alphabet, *gaps, spill, spill_at_d[g0:g1], dirs,
                 dirs_at[g0:g1], out[lo:hi]),
                shared_mem=int(alphabet) ** 2 * 2)
            kernel("traceback.cu", walk_name(group))(
                (-(-n // BLOCK),), (BLOCK,),
                (*pairs, np.int32(MODES[mode]), d["matrix"], alphabet, *gaps, dirs,
                 dirs_at[g0:g1], scratch, d["scratch_at"][lo:hi], out[lo:hi], starts[lo:hi],
                 cigar, lengths[lo:hi]))
    # pack the CIGARs in the caller's order
    order_d = cp.asarray(order)
    by_pair = cp.empty(count, dtype=np.int64)
    by_pair[order_d] = lengths
    text_at = cp.zeros(count + 1, dtype=np.int64)
    cp.cumsum(by_pair, out=text_at[1:])
    total = int(text_at[-1])
    text = cp.empty(max(total, 1), dtype=np.uint8)
    kernel("traceback.cu", "compact_text")(
        (-(-count // BLOCK),), (BLOCK,),
        (cigar, 2 * d["scratch_at"], text_at[order_d], lengths, np.int32(count), text))
    back = np.empty(count, dtype=np.int64)
    back[order] = np.arange(count)
    out_h, starts_h = out.get()[back], starts.get()[back]
    coords = np.stack([starts_h[:, 0], out_h[:, 1], starts_h[:, 1], out_h[:, 2]], axis=1)
    return (out_h[:, 0].astype(np.int64), coords.astype(np.int64), text[:total].get(),
            text_at.get())
