"""Score-only search on the GPU: queries against targets resident in device memory.

# N: targets, m: query length, residues: uint8 codes, scores: int32.

Targets are sorted by length and cut into length partitions; each partition gets the
group size that suits its lengths (short targets: small groups, so the wavefront's
fill and drain stay small). A first pass scores two targets per register in 16-bit
halves; the targets it flags, and those whose bounds do not fit 16 bits, are re-run
in exact 32-bit arithmetic.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import cupy as cp
import numpy as np

from swath.errors import InvalidParameter
from swath.kernels.bounds import fits, saturation_ceiling, score_bounds
from swath.kernels.gpu._cuda import BLOCK, SEARCH_CONFIGS, kernel, search_name

PARTITION_EDGES = (64, 128, 256)        # target lengths where the usable groups grow
SHARED_LIMIT = 48 * 1024
LANES = {"Packed16": 2, "Int32": 1}
WORD = {"Packed16": np.uint32, "Int32": np.int32}


@dataclass(frozen=True)
class DeviceTargets:
    """Targets on the GPU, sorted by length (ascending).

    ``order[k]`` is the caller's index of sorted target ``k``; ``starts`` and
    ``lengths`` point into ``residues``, which any subset shares.
    """

    order: np.ndarray
    residues: cp.ndarray
    starts: cp.ndarray
    lengths: cp.ndarray
    host_lengths: np.ndarray

    @classmethod
    def upload(cls, t_res: np.ndarray, t_off: np.ndarray) -> DeviceTargets:
        """Copy targets (codes and offsets) to the GPU, sorted by length."""
        lengths = np.diff(t_off)
        order = np.argsort(lengths, kind="stable")
        return cls(order, cp.asarray(t_res), cp.asarray(t_off[:-1][order].astype(np.int64)),
                   cp.asarray(lengths[order].astype(np.int32)), lengths[order])

    def __len__(self) -> int:
        return len(self.order)

    def subset(self, positions: np.ndarray) -> DeviceTargets:
        """The sorted targets at ``positions`` (ascending), sharing the residues."""
        index = cp.asarray(positions)
        return DeviceTargets(self.order[positions], self.residues, self.starts[index],
                             self.lengths[index], self.host_lengths[positions])


def query_profile(query: np.ndarray, matrix: np.ndarray, stride: int) -> cp.ndarray:
    """``(A + 1, stride)`` int16: the score of residue ``a`` against query row ``i``.

    Code ``A`` pads targets and rows past the query's end: it scores ``min(matrix, 0)``.
    """
    size = matrix.shape[0]
    pad = min(int(matrix.min()), 0)
    profile = np.full((size + 1, stride), pad, dtype=np.int16)
    profile[:size, :len(query)] = matrix[query].T
    return cp.asarray(profile)


def kernel_config(query_length: int, target_length: int, alphabet: int) -> tuple[int, int]:
    """(threads per group, rows per thread) for a query against targets of about this length.

    The smallest pass that holds the whole query, among the configurations whose group
    is small next to the targets (fill and drain of the wavefront cost G - 1 columns)
    and whose profile tile fits in shared memory; long queries take the largest tile.
    """
    usable = [(g, r) for g, r in SEARCH_CONFIGS
              if g * 8 <= max(target_length, 32) and (alphabet + 1) * g * r * 2 <= SHARED_LIMIT]
    usable = usable or [SEARCH_CONFIGS[0]]
    fitting = [c for c in usable if c[0] * c[1] >= query_length]
    return (min(fitting, key=lambda c: c[0] * c[1]) if fitting
            else max(usable, key=lambda c: c[0] * c[1]))


def partitions(lengths: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges of sorted ``lengths`` cut at ``PARTITION_EDGES``."""
    cuts = [0, *np.searchsorted(lengths, PARTITION_EDGES, side="left").tolist(), len(lengths)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def _launch(cell: str, mode: str, targets: DeviceTargets, query: np.ndarray,
            profile: cp.ndarray, matrix: np.ndarray, gap_open: int, gap_extend: int,
            scores: cp.ndarray, flags: cp.ndarray) -> None:
    """One pass of ``cell`` width over all ``targets``; fills ``scores`` and ``flags``."""
    m, alphabet, stride = len(query), matrix.shape[0], profile.shape[1]
    ceiling = saturation_ceiling(matrix, np.int16 if cell == "Packed16" else np.int32)
    lanes = LANES[cell]
    for begin, end in partitions(targets.host_lengths):
        group, rows = kernel_config(m, int(targets.host_lengths[begin]), alphabet)
        tile = group * rows
        passes = -(-m // tile)
        count = end - begin
        groups = -(-count // lanes)
        if passes > 1:
            last = np.minimum(np.arange(groups) * lanes + lanes - 1, count - 1) + begin
            spill_at = np.zeros(groups, dtype=np.int64)
            np.cumsum(2 * targets.host_lengths[last[:-1]], out=spill_at[1:])
            spill = cp.empty(int(spill_at[-1] + 2 * targets.host_lengths[last[-1]]),
                             dtype=WORD[cell])
            spill_at_d = cp.asarray(spill_at)
        else:
            spill, spill_at_d = cp.empty(1, dtype=WORD[cell]), cp.zeros(1, dtype=np.int64)
        blocks = -(-groups * group // BLOCK)
        kernel("search.cu", search_name(group, rows, cell, mode))(
            (blocks,), (BLOCK,),
            (targets.residues, targets.starts[begin:], targets.lengths[begin:], np.int32(count),
             profile, np.int32(m), np.int32(stride), np.int32(passes), np.int32(alphabet + 1),
             np.int32(gap_open), np.int32(gap_extend), np.int32(ceiling), spill, spill_at_d,
             scores[begin:], flags[begin:]),
            shared_mem=(alphabet + 1) * tile * 2)


def score_against(targets: DeviceTargets, query: np.ndarray, matrix: np.ndarray,
                  gap_open: int, gap_extend: int, mode: str) -> cp.ndarray:
    """Exact scores of ``query`` against every target, in sorted order (device int32)."""
    n = len(targets)
    scores = cp.zeros(n, dtype=np.int32)
    flags = cp.ones(n, dtype=np.uint8)
    widest = max(g * r for g, r in SEARCH_CONFIGS)
    stride = -(-len(query) // widest) * widest
    profile = query_profile(query, matrix, stride)
    low, high = score_bounds(len(query), targets.host_lengths, matrix, gap_open, gap_extend,
                             mode)
    narrow = int(np.count_nonzero(fits(low, high, np.int16, gap_extend)))
    if narrow:
        _launch("Packed16", mode, targets.subset(np.arange(narrow)), query, profile, matrix,
                gap_open, gap_extend, scores[:narrow], flags[:narrow])
    redo = cp.flatnonzero(flags).get()
    if len(redo):
        if not fits(low[redo], high[redo], np.int32, gap_extend).all():
            raise InvalidParameter("a pair is too long for exact 32-bit scoring")
        wide_scores = cp.zeros(len(redo), dtype=np.int32)
        wide_flags = cp.zeros(len(redo), dtype=np.uint8)
        _launch("Int32", mode, targets.subset(redo), query, profile, matrix, gap_open,
                gap_extend, wide_scores, wide_flags)
        if int(wide_flags.max()):
            raise InvalidParameter("a local score exceeds the 32-bit range")
        scores[cp.asarray(redo)] = wide_scores
    return scores


def score_many(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str) -> np.ndarray:
    """Optimal scores of every query against every target, ``(nq, nt)`` int32."""
    targets = DeviceTargets.upload(t_res, t_off)
    out = np.empty((len(q_off) - 1, len(targets)), dtype=np.int32)
    for qi in range(len(q_off) - 1):
        sorted_scores = score_against(targets, q_res[q_off[qi]:q_off[qi + 1]], matrix,
                                      gap_open, gap_extend, mode).get()
        out[qi, targets.order] = sorted_scores
    return out
