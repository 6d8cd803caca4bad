"""Batched alignment with traceback on the GPU: many pairs, CIGARs built on the device.

# N: pairs (query k against target k, or the chosen rows[k] and cols[k] of two sets), m, n:
# their lengths, residues: uint8 codes.

Pairs are put in a processing order: by the group size their query needs, then by
target length, so that a warp's groups finish together. Every per-pair array is
uploaded once in that order; pairs are taken in consecutive batches whose direction
codes fit ``memory_budget`` bytes. The walk writes each CIGAR into a scratch slot; one
last kernel packs them in the caller's order. A pair whose direction codes alone
exceed the budget is aligned by the CPU twin (identical results).
"""

from __future__ import annotations

from dataclasses import dataclass

import cupy as cp
import numpy as np

from swath.kernels.gpu._cuda import BLOCK, GROUP_SIZES, MODES, ROWS, fill_name, kernel, walk_name

MEMORY_BUDGET = 4 << 30


def _exclusive_cumsum(sizes: np.ndarray) -> np.ndarray:
    at = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=at[1:])
    return at


def _groups(query_lengths: np.ndarray) -> np.ndarray:
    """Threads per group for each query: the smallest group whose rows hold it."""
    sizes = np.array(GROUP_SIZES)
    return sizes[np.minimum(np.searchsorted(sizes * ROWS, query_lengths), len(sizes) - 1)]


def _ranges(keys: np.ndarray) -> list[tuple[int, int]]:
    """Runs of equal consecutive ``keys`` as (begin, end) index ranges."""
    firsts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]).tolist()
    return list(zip(firsts, [*firsts[1:], len(keys)], strict=True))


@dataclass
class _Extents:
    """Where each pair's query (or target) lies in its residues: start and length."""

    starts: np.ndarray         # int64
    lengths: np.ndarray        # int64

    @classmethod
    def of(cls, offsets: np.ndarray, chosen: np.ndarray | None) -> _Extents:
        """Sequence k of a concatenated set for pair k, or sequence ``chosen[k]``."""
        starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
        if chosen is None:
            return cls(starts, lengths)
        return cls(starts[chosen], lengths[chosen])


def _sizes(q: _Extents, t: _Extents) -> tuple[np.ndarray, np.ndarray]:
    """Threads per group and 64-bit words of direction codes of each pair."""
    group = _groups(q.lengths)
    return group, -(-q.lengths // (group * ROWS)) * (t.lengths + group - 1) * group


@dataclass
class _Plan:
    """Pairs in processing order, on the GPU, with their offsets into the work buffers."""

    order: np.ndarray          # processing position -> pair index
    group: np.ndarray          # threads per group, by position
    words: np.ndarray          # exclusive cumsum of direction words, by position
    spill: np.ndarray          # spill words, by position
    scratch_at: np.ndarray     # exclusive cumsum of m + n, by position
    dev: dict[str, cp.ndarray]

    @classmethod
    def make(cls, q_res: np.ndarray, q: _Extents, t_res: np.ndarray, t: _Extents,
             matrix: np.ndarray, pairs: np.ndarray, groups: np.ndarray, words: np.ndarray
             ) -> _Plan:
        """The plan of ``pairs`` (indices into ``q`` and ``t``); ``groups`` and ``words``:
        every pair's, as ``_sizes`` gives them."""
        # by group size, then target length: one stable sort of one key
        key = (groups[pairs].astype(np.int64) << 32) | t.lengths[pairs]
        order = pairs[np.argsort(key, kind="stable")]
        group, m, n = groups[order], q.lengths[order], t.lengths[order]
        passes = -(-m // (group * ROWS))
        dev = {name: cp.asarray(a) for name, a in {
            "q_res": q_res, "q_start": q.starts[order], "q_len": m.astype(np.int32),
            "t_res": t_res, "t_start": t.starts[order], "t_len": n.astype(np.int32),
            "matrix": matrix.astype(np.int16)}.items()}
        scratch_at = _exclusive_cumsum(m + n)
        dev["scratch_at"] = cp.asarray(scratch_at[:-1])
        return cls(order, group, _exclusive_cumsum(words[order]),
                   np.where(passes > 1, 2 * n, 0), scratch_at, dev)

    def pair_args(self, lo: int, hi: int) -> tuple:
        d = self.dev
        return (d["q_res"], d["q_start"][lo:hi], d["q_len"][lo:hi], d["t_res"],
                d["t_start"][lo:hi], d["t_len"][lo:hi], np.int32(hi - lo))


def _fill(plan: _Plan, mode: str, lo: int, hi: int, gap_open: int, gap_extend: int,
          spill: cp.ndarray, spill_at: cp.ndarray, dirs: cp.ndarray, dirs_at: cp.ndarray,
          out: cp.ndarray) -> None:
    """Run the fill kernel over positions lo..hi (one group size); dirs empty: no codes."""
    group = int(plan.group[lo])
    alphabet = np.int32(plan.dev["matrix"].shape[0])
    kernel("traceback.cu", fill_name(group, mode, directions=dirs.size > 1))(
        (-(-(hi - lo) * group // BLOCK),), (BLOCK,),
        (*plan.pair_args(lo, hi), plan.dev["matrix"], alphabet, np.int32(gap_open),
         np.int32(gap_extend), spill, spill_at, dirs, dirs_at, out[lo:hi]),
        shared_mem=int(alphabet) ** 2 * 2)


def _spill(plan: _Plan, b0: int, b1: int) -> tuple[cp.ndarray, cp.ndarray]:
    at = _exclusive_cumsum(plan.spill[b0:b1])
    return cp.empty(max(int(at[-1]), 1), dtype=np.int32), cp.asarray(at[:-1])


def score_ends(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score and end cell of query k against target k: ``(scores, query_end, target_end)``.

    Ends are 0-based exclusive, tie rules as in the traceback; no directions are kept.
    """
    count = len(q_off) - 1
    q, t = _Extents.of(q_off, None), _Extents.of(t_off, None)
    plan = _Plan.make(q_res, q, t_res, t, matrix, np.arange(count), *_sizes(q, t))
    out = cp.zeros((count, 3), dtype=np.int32)
    none = cp.zeros(1, dtype=np.uint64)
    spill, spill_at = _spill(plan, 0, count)
    for lo, hi in _ranges(plan.group):
        _fill(plan, mode, lo, hi, gap_open, gap_extend, spill, spill_at[lo:hi], none,
              cp.zeros(hi - lo, dtype=np.int64), out)
    result = np.empty((count, 3), dtype=np.int64)
    result[plan.order] = out.get()
    return result[:, 0], result[:, 1], result[:, 2]


def align_batch(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str,
                pairs: tuple[np.ndarray, np.ndarray] | None = None,
                memory_budget: int = MEMORY_BUDGET
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Optimal alignment of query k against target k, for every k; with ``pairs`` (rows,
    cols), of query ``rows[k]`` against target ``cols[k]`` (nothing gathered: the sets
    are uploaded as they are).

    Returns ``scores`` (N,) int64, ``coords`` (N, 4) int64 (query start, query end,
    target start, target end; 0-based, end exclusive), and the CIGARs as one uint8
    text buffer with (N + 1,) int64 offsets.
    """
    q = _Extents.of(q_off, None if pairs is None else pairs[0])
    t = _Extents.of(t_off, None if pairs is None else pairs[1])
    count = len(q.starts)
    budget_words = max(memory_budget // 8, 1)
    group, words = _sizes(q, t)
    large = words > budget_words
    plan = _Plan.make(q_res, q, t_res, t, matrix, np.flatnonzero(~large), group, words)
    on_gpu = len(plan.order)
    out = cp.zeros((on_gpu, 3), dtype=np.int32)
    starts = cp.zeros((on_gpu, 2), dtype=np.int32)
    lengths = cp.zeros(on_gpu, dtype=np.int32)
    scratch = cp.empty(max(int(plan.scratch_at[-1]), 1), dtype=np.uint8)
    cigar = cp.empty(2 * max(int(plan.scratch_at[-1]), 1), dtype=np.int8)
    for b0, b1 in _ranges(plan.words[1:] // budget_words):
        dirs = cp.empty(max(int(plan.words[b1] - plan.words[b0]), 2), dtype=np.uint64)
        dirs_at = cp.asarray(plan.words[b0:b1] - plan.words[b0])
        spill, spill_at = _spill(plan, b0, b1)
        for g0, g1 in _ranges(plan.group[b0:b1]):
            lo, hi = b0 + g0, b0 + g1
            _fill(plan, mode, lo, hi, gap_open, gap_extend, spill, spill_at[g0:g1], dirs,
                  dirs_at[g0:g1], out)
            kernel("traceback.cu", walk_name(int(plan.group[lo])))(
                (-(-(hi - lo) // BLOCK),), (BLOCK,),
                (*plan.pair_args(lo, hi), np.int32(MODES[mode]), dirs, dirs_at[g0:g1],
                 scratch, plan.dev["scratch_at"][lo:hi], out[lo:hi], starts[lo:hi], cigar,
                 lengths[lo:hi]))

    scores = np.zeros(count, dtype=np.int64)
    coords = np.zeros((count, 4), dtype=np.int64)
    cigar_len = np.zeros(count, dtype=np.int64)
    out_h, starts_h = out.get(), starts.get()
    scores[plan.order] = out_h[:, 0]
    coords[plan.order] = np.stack([starts_h[:, 0], out_h[:, 1], starts_h[:, 1], out_h[:, 2]], 1)
    cigar_len[plan.order] = lengths.get()
    big = np.flatnonzero(large)
    if len(big):    # numba only for pairs past the GPU's memory budget: one CPU call
        from swath.kernels.cpu.traceback import align_batch as cpu_align_batch

        rows, cols = (np.arange(count), np.arange(count)) if pairs is None else pairs
        scores[big], coords[big], big_text, big_at = cpu_align_batch(
            q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode,
            pairs=(np.asarray(rows)[big], np.asarray(cols)[big]))
        cigar_len[big] = np.diff(big_at)
    # pack the CIGARs in the caller's order
    text_at = _exclusive_cumsum(cigar_len)
    text = cp.empty(max(int(text_at[-1]), 1), dtype=np.uint8)
    if on_gpu:
        kernel("traceback.cu", "compact_text")(
            (-(-on_gpu // BLOCK),), (BLOCK,),
            (cigar, 2 * plan.dev["scratch_at"], cp.asarray(text_at[plan.order]), lengths,
             np.int32(on_gpu), text))
    packed = text[:int(text_at[-1])].get()
    for j, k in enumerate(big.tolist()):
        packed[text_at[k]:text_at[k + 1]] = big_text[big_at[j]:big_at[j + 1]]
    return scores, coords, packed, text_at


def cigar_counts(cigars: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    """M, X, L, O and T of each CIGAR of a text buffer (uint8) and its ``N + 1`` offsets,
    as :func:`swath.identity.cigar_counts` (the CPU twin) counts them: one GPU thread a
    CIGAR."""
    from swath.identity import COUNT_NAMES

    text, text_at = np.asarray(cigars[0], dtype=np.uint8), np.asarray(cigars[1], np.int64)
    count = len(text_at) - 1
    out = cp.zeros((len(COUNT_NAMES), count), dtype=np.int64)
    if count and len(text):
        kernel("traceback.cu", "cigar_counts")(
            (-(-count // BLOCK),), (BLOCK,),
            (cp.asarray(text), cp.asarray(text_at), np.int32(count), out))
    return dict(zip(COUNT_NAMES, out.get(), strict=True))
