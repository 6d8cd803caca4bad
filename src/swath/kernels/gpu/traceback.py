"""Batched alignment with traceback on the GPU: many pairs, CIGARs built on the device.

# N: pairs (query k against target k), m, n: their lengths, residues: uint8 codes.

Pairs are grouped by the group size their query needs (rows per pass) and, inside a
group size, sorted by target length so that a warp's groups finish together. Pairs
are taken in batches whose direction codes fit ``memory_budget`` bytes; a single pair
larger than the budget runs on its own.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from swath.kernels.gpu._cuda import BLOCK, GROUP_SIZES, ROWS, fill_name, kernel, walk_name

MEMORY_BUDGET = 4 << 30


def _group_for(query_lengths: np.ndarray) -> np.ndarray:
    sizes = np.array(GROUP_SIZES)
    index = np.searchsorted(sizes * ROWS, query_lengths, side="left")
    return sizes[np.minimum(index, len(sizes) - 1)]


def _batches(words: np.ndarray, budget_words: int) -> list[np.ndarray]:
    """Consecutive index ranges whose word counts sum to at most the budget (one at least)."""
    out, start, total = [], 0, 0
    for k, w in enumerate(words.tolist()):
        if total + w > budget_words and k > start:
            out.append(np.arange(start, k))
            start, total = k, 0
        total += w
    out.append(np.arange(start, len(words)))
    return out


def _offsets(sizes: np.ndarray) -> np.ndarray:
    at = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=at[1:])
    return at


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
    groups = _group_for(q_len)
    passes = -(-q_len // (groups * ROWS))
    words = passes * (t_len + groups - 1) * groups
    order = np.lexsort((t_len, groups))
    mode_code = {"local": 0, "global": 1, "semiglobal": 2}[mode]

    dev = {name: cp.asarray(a) for name, a in (
        ("q_res", q_res), ("q_start", q_off[:-1].astype(np.int64)),
        ("q_len", q_len.astype(np.int32)), ("t_res", t_res),
        ("t_start", t_off[:-1].astype(np.int64)), ("t_len", t_len.astype(np.int32)),
        ("matrix", matrix.astype(np.int16)))}
    alphabet = matrix.shape[0]
    out = cp.zeros((count, 3), dtype=np.int32)
    starts = cp.zeros((count, 2), dtype=np.int32)
    cigar_len = cp.zeros(count, dtype=np.int32)
    texts: list[tuple[np.ndarray, cp.ndarray]] = []
    for batch in _batches(words[order], memory_budget // 8):
        pairs_host = order[batch]
        dirs_at = np.zeros(count, dtype=np.int64)
        dirs_at[pairs_host] = _offsets(words[pairs_host])[:-1]
        multi = passes[pairs_host] > 1
        spill_at = np.zeros(count, dtype=np.int64)
        spill_sizes = np.where(multi, 2 * t_len[pairs_host], 0)
        spill_at[pairs_host] = _offsets(spill_sizes)[:-1]
        scratch_sizes = q_len[pairs_host] + t_len[pairs_host]
        scratch_at = np.zeros(count, dtype=np.int64)
        scratch_at[pairs_host] = _offsets(scratch_sizes)[:-1]
        dirs = cp.empty(int(words[pairs_host].sum()), dtype=np.uint64)
        spill = cp.empty(max(int(spill_sizes.sum()), 1), dtype=np.int32)
        scratch = cp.empty(int(scratch_sizes.sum()), dtype=np.uint8)
        cigar = cp.empty(2 * int(scratch_sizes.sum()), dtype=np.int8)
        dirs_at_d, spill_at_d, scratch_at_d = map(cp.asarray, (dirs_at, spill_at, scratch_at))
        for group in GROUP_SIZES:
            chosen = pairs_host[groups[pairs_host] == group]
            if not len(chosen):
                continue
            chosen_d = cp.asarray(chosen.astype(np.int32))
            n = len(chosen)
            kernel("traceback.cu", fill_name(group, mode))(
                (-(-n * group // BLOCK),), (BLOCK,),
                (dev["q_res"], dev["q_start"], dev["q_len"], dev["t_res"], dev["t_start"],
                 dev["t_len"], chosen_d, np.int32(n), dev["matrix"], np.int32(alphabet),
                 np.int32(gap_open), np.int32(gap_extend), spill, spill_at_d, dirs, dirs_at_d,
                 out),
                shared_mem=alphabet * alphabet * 2)
            kernel("traceback.cu", walk_name(group))(
                (-(-n // BLOCK),), (BLOCK,),
                (dev["q_res"], dev["q_start"], dev["q_len"], dev["t_res"], dev["t_start"],
                 dev["t_len"], chosen_d, np.int32(n), np.int32(mode_code), dev["matrix"],
                 np.int32(alphabet), np.int32(gap_open), np.int32(gap_extend), dirs, dirs_at_d,
                 scratch, scratch_at_d, out, starts, cigar, cigar_len))
        lengths = cigar_len[cp.asarray(pairs_host)].get().astype(np.int64)
        text_at = _offsets(lengths)
        text = cp.empty(max(int(text_at[-1]), 1), dtype=np.uint8)
        kernel("traceback.cu", "compact_text")(
            (-(-len(pairs_host) // BLOCK),), (BLOCK,),
            (cigar, cp.asarray(scratch_at[pairs_host]), cp.asarray(text_at),
             np.int32(len(pairs_host)), text))
        texts.append((pairs_host, text[:int(text_at[-1])]))
    return _assemble(out.get(), starts.get(), cigar_len.get(), texts)


def _assemble(out: np.ndarray, starts: np.ndarray, cigar_len: np.ndarray,
              texts: list[tuple[np.ndarray, cp.ndarray]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Results in pair order; each batch's packed CIGAR text scattered to its pairs."""
    coords = np.stack([starts[:, 0], out[:, 1], starts[:, 1], out[:, 2]], axis=1)
    lengths = cigar_len.astype(np.int64)
    cigar_off = _offsets(lengths)
    cigar = np.empty(int(cigar_off[-1]), dtype=np.uint8)
    for pairs_host, text in texts:
        sizes = lengths[pairs_host]
        shift = cigar_off[pairs_host] - _offsets(sizes)[:-1]
        cigar[np.repeat(shift, sizes) + np.arange(int(sizes.sum()))] = text.get()
    return out[:, 0].astype(np.int64), coords.astype(np.int64), cigar, cigar_off
