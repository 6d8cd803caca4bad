"""The plan of a batch: its pairs in processing order, cut in runs of one group size, with
running sums that say where each pair's buffers go; and which pairs take the banded way.

# N: pairs, m, n: a pair's query and target lengths, positions: the processing order.

Pairs are put in a processing order: by group size, then passes, then the columns of a
pass, so that a warp's groups finish together. Every per-pair array is made on the GPU
(the processing orders are GPU sorts); the host downloads only the runs' bounds and the
running sums there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import cupy as cp
import numpy as np

from swath.constants import BAND_FREE, ENDS_PAD_SCORE, TRACEBACK_ROWS
from swath.kernels.gpu._cuda import ENDS_MODES, FILL_GROUPS, GROUP_SIZES
from swath.kernels.gpu.traceback.elementwise import arithmetic
from swath.kernels.gpu.transfer import Upload

ENDS_CELL = 30_000           # the largest magnitude an ends.cu cell may take, with room
ENDS_ALPHABET = 5            # ends.cu's and codes16.cu's profiles of a block's threads (and
                             # the latter's staged codes) fit 48 KiB of shared memory


def exclusive_cumsum(sizes: cp.ndarray) -> cp.ndarray:
    """0 and the running sum of ``sizes`` (int64): where each of them begins."""
    at = cp.zeros(len(sizes) + 1, dtype=np.int64)
    cp.cumsum(sizes, out=at[1:])
    return at


def size_index(groups: cp.ndarray) -> cp.ndarray:
    """The index of each group size in FILL_GROUPS."""
    return arithmetic()["size_index"](groups)


def group_sizes(query_lengths: cp.ndarray, share: int = 1) -> cp.ndarray:
    """Threads per group for each query: the smallest group whose rows hold it (or a
    ``share``-th of it); the largest for longer ones."""
    return arithmetic()["group_size"](query_lengths, TRACEBACK_ROWS * share)


def ends_group_sizes(query_lengths: cp.ndarray) -> cp.ndarray:
    """Threads per group of ends.cu: the smallest whose rows hold an eighth of the query
    (passes cost little there, padding rows a pass's worth; groups of 2, passes of 32
    rows, measured slower)."""
    return group_sizes(query_lengths, share=8)


@dataclass
class Pairs:
    """Where each pair's query and target lie in their residues, on the GPU (int64)."""

    q_start: cp.ndarray
    q_len: cp.ndarray
    t_start: cp.ndarray
    t_len: cp.ndarray

    @classmethod
    def of(cls, q_off: np.ndarray, t_off: np.ndarray,
           pairs: tuple[np.ndarray, np.ndarray] | None) -> Pairs:
        """Query k against target k, or query ``pairs[0][k]`` against ``pairs[1][k]``."""
        def extents(offsets: np.ndarray, chosen: np.ndarray | None
                    ) -> tuple[cp.ndarray, cp.ndarray]:
            at = cp.asarray(offsets, dtype=np.int64)
            if chosen is None:
                return at[:-1], cp.diff(at)
            k = cp.asarray(chosen, dtype=np.int64)
            return at[k], cp.diff(at)[k]

        return cls(*extents(q_off, None if pairs is None else pairs[0]),
                   *extents(t_off, None if pairs is None else pairs[1]))

    def rows(self, rows: slice) -> Pairs:
        """Some of the pairs (views)."""
        return Pairs(self.q_start[rows], self.q_len[rows], self.t_start[rows],
                     self.t_len[rows])

    def window(self, banded: cp.ndarray, ends: cp.ndarray) -> Pairs:
        """The banded pairs cut to their windows (ends.cu's rows, c_lo and cols)."""
        return Pairs(self.q_start, cp.where(banded, ends[:, 1], self.q_len),
                     self.t_start + cp.where(banded, ends[:, 2], 0),
                     cp.where(banded, ends[:, 3], self.t_len))


@dataclass
class Inputs:
    """The residues and the substitution matrix, on the GPU, and the terminal gaps' costs
    (global mode, ``swath.kernels.scheme.end_costs``; None: the interior ones)."""

    q_res: cp.ndarray
    t_res: cp.ndarray
    matrix: cp.ndarray
    alphabet: np.int32
    ends: tuple[int, int] | None = None

    @classmethod
    def of(cls, upload: Upload, matrix: np.ndarray, ends: tuple[int, int] | None = None
           ) -> Inputs:
        """The residues of ``upload`` (``[q_res]`` when the two sets are one, or
        ``[q_res, t_res]``); a kernel that reads them waits with ``upload.ready``."""
        residues = upload.arrays
        return cls(residues[0], residues[-1], cp.asarray(matrix.astype(np.int16)),
                   np.int32(matrix.shape[0]), ends)


# a plan's running sum given at each position by the plan's per-position arrays (dev) and
# the run key of each position
PositionSum = Callable[[dict[str, cp.ndarray], cp.ndarray], cp.ndarray]


@dataclass
class Plan:
    """Pairs in processing order with their per-pair arrays, on the GPU, the runs of
    positions that share a group size: (first, end, group size), and running sums."""

    order: cp.ndarray          # processing position -> pair index
    runs: list[tuple[int, int, int]]
    parts: list[int]           # the upload's part of each run
    dev: dict[str, cp.ndarray]
    at: dict[str, cp.ndarray]  # exclusive running sums of make's ``sums``, by position
    known: dict[int, np.ndarray]   # their values at some positions, on the host

    @classmethod
    def make(cls, pairs: Pairs, taken: cp.ndarray | None, group: cp.ndarray,
             major: cp.ndarray, minor: cp.ndarray, part: cp.ndarray | None = None,
             parts: int = 1, sums: dict[str, cp.ndarray | PositionSum] | None = None,
             **extra: cp.ndarray) -> Plan:
        """The plan of the pairs ``taken`` (a mask; None: every pair), by ``part`` (every
        pair's part of the upload, of ``parts`` <= 12), then ``group``, then ``major`` and
        ``minor`` (int64, passes and columns: values past 2**26 and 2**32 tie): one GPU
        sort of one key, the pairs not taken after the others. ``sums`` (per-pair int64
        arrays, or functions that give one value a position from the plan's ``dev``
        arrays and each position's run key) are summed in plan order; their values at the
        runs' bounds come back with the bounds (and how many pairs are taken), in one
        download."""
        runs_key = size_index(group)
        if part is not None:
            runs_key = cp.add(cp.multiply(part, len(FILL_GROUPS)), runs_key)
        left = parts * len(FILL_GROUPS)        # the run key of the pairs not taken
        assert left < 64, "a plan's run keys fit 6 bits"
        if taken is not None:
            runs_key = cp.where(taken, runs_key, left)
        sort = cp.argsort(arithmetic()["plan_key"](runs_key, major, minor))
        keys = runs_key[sort]
        bounds = cp.searchsorted(keys, cp.arange(left + 1))
        # queued before the download, so that the host has nothing to launch after it
        dev = {"q_start": pairs.q_start[sort], "q_len": pairs.q_len[sort].astype(np.int32),
               "t_start": pairs.t_start[sort], "t_len": pairs.t_len[sort].astype(np.int32),
               **{name: a[sort] for name, a in extra.items()}}
        at = {name: exclusive_cumsum(values(dev, keys) if callable(values) else values[sort])
              for name, values in (sums or {}).items()}
        fetched = cp.stack([bounds, *(a[bounds] for a in at.values())]).get()
        bounds = fetched[0].tolist()
        kept = bounds[-1]
        runs, run_parts = [], []
        for key, (a, b) in enumerate(pairwise(bounds)):
            if b > a:
                runs.append((a, b, FILL_GROUPS[key % len(FILL_GROUPS)]))
                run_parts.append(key // len(FILL_GROUPS))
        return cls(sort[:kept], runs, run_parts, {name: a[:kept] for name, a in dev.items()},
                   {name: a[:kept + 1] for name, a in at.items()},
                   dict(zip(bounds, fetched[1:].T, strict=True)))

    def sums_at(self, positions: list[int]) -> dict[str, np.ndarray]:
        """Each running sum at ``positions``: those at the runs' bounds came with the
        plan, the others in one download."""
        missing = sorted(set(positions) - self.known.keys())
        if missing:
            where = cp.asarray(missing, dtype=np.int64)
            values = cp.stack([a[where] for a in self.at.values()]).get().T
            self.known |= zip(missing, values, strict=True)
        table = np.array([self.known[p] for p in positions], dtype=np.int64)
        return dict(zip(self.at, table.reshape(len(positions), len(self.at)).T, strict=True))

    def total(self, name: str) -> int:
        """The sum ``name`` over the whole plan."""
        return int(self.sums_at([len(self.order)])[name][0])

    def pair_args(self, inputs: Inputs, lo: int, hi: int) -> tuple:
        d = self.dev
        return (inputs.q_res, d["q_start"][lo:hi], d["q_len"][lo:hi], inputs.t_res,
                d["t_start"][lo:hi], d["t_len"][lo:hi], np.int32(hi - lo))


def ends_spill_words(dev: dict[str, cp.ndarray], keys: cp.ndarray) -> cp.ndarray:
    """ends.cu's spill words at each plan position (a PositionSum): its run begins at
    the first position of its key."""
    count = len(keys)
    return arithmetic()["ends_spill_words"](
        cp.arange(count), cp.searchsorted(keys, keys), dev["q_len"], dev["t_len"],
        dev["pass_rows"], keys, count)


def bandable(matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str) -> bool:
    """Whether ends.cu may take pairs of this scoring: the band's bound needs gaps to cost
    at least gap_extend a step and gap_open >= 0, its profiles a small alphabet."""
    return (mode in ENDS_MODES and gap_open >= 0 and gap_extend >= 1
            and matrix.shape[0] <= ENDS_ALPHABET)


def top_score(matrix: np.ndarray) -> int:
    """The best a diagonal step can score (at least 0): ends.cu's band bound's and the
    16-bit bound's."""
    return max(int(matrix.max()), 0)


def banded_pairs(pairs: Pairs, matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str
                 ) -> cp.ndarray:
    """The pairs that go through ends.cu: every cell of theirs fits its 16 bits."""
    if not bandable(matrix, gap_open, gap_extend, mode):
        return cp.zeros(len(pairs.q_len), dtype=bool)
    top, low = top_score(matrix), max(-int(matrix.min()), 0)
    open_ = gap_open + gap_extend
    # the highest cell: top * min(m, n), plus a gap opening in HG. The deepest value
    # ends.cu computes: a semiglobal boundary cell of row m plus a padding score, less two
    # gap openings (it takes F - open, F at most an opening below the H above), with one
    # opening more and a pass of padding rows' gap extensions to spare (conservative since
    # ends.cu puts a semiglobal pair's padding rows above its rows, as rows of 0; a local
    # cell is never below 0; cells of padding columns never reach a pair's columns)
    return arithmetic()["banded"](
        pairs.q_len, pairs.t_len, top, open_, gap_extend,
        3 * open_ + gap_extend * TRACEBACK_ROWS * max(GROUP_SIZES) + low - ENDS_PAD_SCORE,
        ENDS_CELL)


def spill_words(pairs: Pairs, group: cp.ndarray) -> cp.ndarray:
    """The fill's spill words of each pair: 2 n for a pair of several passes."""
    return arithmetic()["spill_words"](pairs.q_len, pairs.t_len,
                                       cp.multiply(group, TRACEBACK_ROWS))


def unbanded(count: int) -> dict[str, cp.ndarray]:
    """The band arrays of pairs computed whole: every column (BAND_FREE)."""
    return {"band_lo": cp.full(count, -BAND_FREE, dtype=np.int32),
            "band_hi": cp.full(count, BAND_FREE, dtype=np.int32)}


def batches(plan: Plan, budget_words: int) -> list[tuple[int, int, int]]:
    """The plan's runs cut where the direction words so far (running sum ``words``) pass
    a multiple of ``budget_words`` (a run's codes can take up to twice that: one that
    starts late in one multiple ends in the next)."""
    words = plan.total("words")
    if words < budget_words:
        return plan.runs
    batch = cp.floor_divide(plan.at["words"][1:], budget_words)
    cuts = [c + 1 for c in cp.flatnonzero(batch[1:] != batch[:-1]).get().tolist()]
    runs = []
    for lo, hi, size in plan.runs:
        edges = [lo, *(c for c in cuts if lo < c < hi), hi]
        runs += [(a, b, size) for a, b in pairwise(edges)]
    return runs
