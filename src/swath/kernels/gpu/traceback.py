"""Batched alignment with traceback on the GPU: many pairs, CIGARs built on the device.

# N: pairs (query k against target k, or the chosen rows[k] and cols[k] of two sets), m, n:
# their lengths, residues: uint8 codes.

Local and semiglobal pairs whose cells fit 16 bits (with ``gap_extend >= 1`` and an
alphabet of at most ``ENDS_ALPHABET`` letters: DNA) first go through ends.cu, two pairs
a register: their scores, and each a window of its matrix with a band of diagonals that
holds its traced path. Their direction codes are then computed in that band only, again
two pairs a register (codes16.cu). The other pairs are computed whole, in 32-bit cells
(traceback.cu).

For the codes, pairs are put in a processing order: by group size, then passes, then
the columns of a pass, so that a warp's groups finish together. Pairs are taken
in consecutive batches whose direction codes fit ``memory_budget`` bytes (half of it
each, when the codes go in two waves, see below). The walk
writes each CIGAR into a slot of its own; one last kernel packs them in the caller's
order. A pair whose direction codes alone exceed the budget is aligned by the CPU twin
(identical results).

Every per-pair array is made on the GPU (the processing orders are GPU sorts). The
residues travel (``transfer.Upload``: host threads and a ring of page-locked slots) in
parts when they are large: the first while the host uploads the offsets and makes
ends.cu's plan, then the others, ends.cu taking each part's pairs as soon as they land.
The codes then go in two waves, the pairs of the first ``FIRST_WAVE`` parts and those
of the others: the first wave's plan and fill run beside ends.cu's later parts (the two
kernels share the GPU well), each wave on a stream of its own. The host downloads the
results, packed on the GPU, into page-locked memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import cupy as cp
import numpy as np

from swath.kernels.gpu._cuda import (
    BANDED_GROUP,
    BLOCK,
    ENDS_MODES,
    FILL_GROUPS,
    GROUP_SIZES,
    ROWS,
    codes_name,
    ends_name,
    fill_name,
    kernel,
)
from swath.kernels.gpu.transfer import Upload, download

MEMORY_BUDGET = 4 << 30
BAND_FREE = 1 << 29          # walk.cuh's band of a pair computed whole: every column
ENDS_PAD = 4096              # ends.cu's score of padding rows and columns (negated)
ENDS_CELL = 30_000           # the largest magnitude an ends.cu cell may take, with room
ENDS_ALPHABET = 5            # ends.cu's and codes16.cu's profiles of 128 threads (and the
                             # latter's staged codes) fit 48 KiB of shared memory
UPLOAD_PARTS = 8             # parts of a large upload of pairs k: ends.cu starts on the first
LIGHT_FIRST = 4              # the other parts weigh this many times the first
FIRST_WAVE = 5               # parts whose codes are computed beside ends.cu's later parts
                             # (B1, one H100: level with 4 semiglobal, 1 ms quicker local)
PARTED = 32 << 20            # residue bytes from which an upload goes in parts
URGENT = -(1 << 30)          # a stream's priority: the device's highest (CUDA clamps to it)
CODES_STAGE = 1024           # codes16.cu's staged codes a warp: two steps of its 32 pairs


# The spill words of a group whose deepest query is m rows and longest target n columns:
# the H and F of a pass's last row, when a pass of ``tile`` rows does not hold the query.
SPILL_RULE = "{m} > tile ? 2 * (long long){n} : 0"


# The per-pair arithmetic is done by elementwise kernels and CuPy functions: CuPy's
# operators on Python numbers (``a * 2``, ``a > 0``) and ``cupy.bincount`` import
# cupyx.scipy on first use (0.3 s in every process that aligns).
@functools.cache
def _arithmetic() -> dict[str, cp.ElementwiseKernel]:
    return {
        "ceil_div": cp.ElementwiseKernel("int64 a, int64 b", "int64 q", "q = (a + b - 1) / b",
                                         "swath_ceil_div"),
        # a plan's sort key: its run (< 64), then ``major``, then ``minor``, in one word
        # (larger values than their 26 and 32 bits hold tie: the order of those pairs
        # only weighs on speed)
        "plan_key": cp.ElementwiseKernel(
            "int64 run, int64 major, int64 minor", "uint64 key",
            "key = ((unsigned long long)run << 58)"
            " | ((unsigned long long)min(major, (long long)0x3ffffff) << 32)"
            " | (unsigned long long)min(minor, (long long)0xffffffff)", "swath_plan_key"),
        # a fill's passes, widest pass's columns and words of codes (P * S * G, walk.cuh) of
        # a pair, and whether those pass ``budget``
        "pass_shape": cp.ElementwiseKernel(
            "int64 m, int64 n, int64 group, int32 lo, int32 hi, int64 rows, int64 budget",
            "int64 passes, int64 columns, int64 words, bool large",
            """
            const long long tile = group * rows;
            passes = (m + tile - 1) / tile;
            columns = min(n, tile + (long long)hi - lo);
            words = passes * (columns + group - 1) * group;
            large = words > budget;
            """, "swath_pass_shape"),
        # ends.cu's spill words at plan position k, whose run begins at position ``first``
        # (two pairs a group from there; ``key``: the run of each position): the longer
        # target's H and F of a group when a pass does not hold the deeper query, at
        # the group's first pair (0 at its second)
        "ends_spill_words": cp.ElementwiseKernel(
            "int64 k, int64 first, raw int32 m, raw int32 n, int64 tile, raw int64 key,"
            " int64 count",
            "int64 words",
            f"""
            words = 0;
            if ((k - first) % 2 == 0) {{
                int deeper = m[k], longer = n[k];
                if (k + 1 < count && key[k + 1] == key[k]) {{
                    deeper = max(deeper, m[k + 1]);
                    longer = max(longer, n[k + 1]);
                }}
                words = {SPILL_RULE.format(m="deeper", n="longer")};
            }}
            """, "swath_ends_spill_words"),
        # spill words of a pair: its target's H and F when it takes more than one pass
        "spill_words": cp.ElementwiseKernel("T m, T n, int64 tile", "int64 words",
                                            f"words = {SPILL_RULE.format(m='m', n='n')}",
                                            "swath_spill_words"),
        # threads per group: the smallest of GROUP_SIZES whose ``rows`` rows a thread hold
        # the query, the largest for longer ones (the sizes double from one to the next)
        "group_size": cp.ElementwiseKernel(
            "int64 m, int64 rows", "int64 group",
            f"group = {GROUP_SIZES[0]};"
            f" while (group < {GROUP_SIZES[-1]} && group * rows < m) group *= 2;",
            "swath_group_size"),
        # the index of a group size in FILL_GROUPS (which double from one to the next)
        "size_index": cp.ElementwiseKernel(
            "int64 group", "int64 index", f"index = 63 - __clzll(group / {FILL_GROUPS[0]})",
            "swath_size_index"),
        # ends.cu's pairs: every cell fits its 16 bits (see _banded)
        "banded": cp.ElementwiseKernel(
            "int64 m, int64 n, int64 top, int64 open, int64 extend, int64 fixed, int64 cell",
            "bool ok",
            "ok = m > 0 && n > 0 && top * min(m, n) + open <= cell"
            " && extend * (m + n) + fixed <= cell",
            "swath_banded"),
    }


_STREAMS: dict[tuple[int, int], list[cp.cuda.Stream]] = {}   # by device and priority


def _stream(k: int, priority: int = 0) -> cp.cuda.Stream:
    """The current device's k-th kept stream of this priority: batches reuse their
    streams, since CuPy's memory pool keeps freed memory for reuse on the stream that
    freed it (a new stream every batch would take new memory every time)."""
    kept = _STREAMS.setdefault((cp.cuda.Device().id, priority), [])
    while len(kept) <= k:
        kept.append(cp.cuda.Stream(non_blocking=True, priority=priority))
    return kept[k]


def _exclusive_cumsum(sizes: cp.ndarray) -> cp.ndarray:
    at = cp.zeros(len(sizes) + 1, dtype=np.int64)
    cp.cumsum(sizes, out=at[1:])
    return at


def _size_index(groups: cp.ndarray) -> cp.ndarray:
    """The index of each group size in FILL_GROUPS."""
    return _arithmetic()["size_index"](groups)


def _groups(query_lengths: cp.ndarray, share: int = 1) -> cp.ndarray:
    """Threads per group for each query: the smallest group whose rows hold it (or a
    ``share``-th of it); the largest for longer ones."""
    return _arithmetic()["group_size"](query_lengths, ROWS * share)


def _ends_groups(query_lengths: cp.ndarray) -> cp.ndarray:
    """Threads per group of ends.cu: the smallest whose rows hold an eighth of the query
    (passes cost little there, padding rows a pass's worth; groups of 2, passes of 32
    rows, measured twice as slow)."""
    return _groups(query_lengths, share=8)


@dataclass
class _Pairs:
    """Where each pair's query and target lie in their residues, on the GPU (int64)."""

    q_start: cp.ndarray
    q_len: cp.ndarray
    t_start: cp.ndarray
    t_len: cp.ndarray

    @classmethod
    def of(cls, q_off: np.ndarray, t_off: np.ndarray,
           pairs: tuple[np.ndarray, np.ndarray] | None) -> _Pairs:
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

    def rows(self, rows: slice) -> _Pairs:
        """Some of the pairs (views)."""
        return _Pairs(self.q_start[rows], self.q_len[rows], self.t_start[rows],
                      self.t_len[rows])

    def window(self, banded: cp.ndarray, ends: cp.ndarray) -> _Pairs:
        """The banded pairs cut to their windows (ends.cu's rows, c_lo and cols)."""
        return _Pairs(self.q_start, cp.where(banded, ends[:, 1], self.q_len),
                      self.t_start + cp.where(banded, ends[:, 2], 0),
                      cp.where(banded, ends[:, 3], self.t_len))


@dataclass
class _Inputs:
    """The residues and the substitution matrix, on the GPU."""

    q_res: cp.ndarray
    t_res: cp.ndarray
    matrix: cp.ndarray
    alphabet: np.int32

    @classmethod
    def of(cls, upload: Upload, matrix: np.ndarray) -> _Inputs:
        """The residues of ``upload`` (``[q_res]`` when the two sets are one, or
        ``[q_res, t_res]``); a kernel that reads them waits with ``upload.ready``."""
        residues = upload.arrays
        return cls(residues[0], residues[-1], cp.asarray(matrix.astype(np.int16)),
                   np.int32(matrix.shape[0]))


def _part_starts(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                 pairs: tuple[np.ndarray, np.ndarray] | None) -> list[int]:
    """The first pair of each part of the upload, and the count: pairs k go in
    UPLOAD_PARTS parts when their residues are large, so that ends.cu starts on the first
    part's pairs while the others travel (the first is lighter: it arrives sooner);
    chosen pairs (whose residues lie anywhere) in one."""
    count = len(q_off) - 1 if pairs is None else len(pairs[0])
    if pairs is not None or t_res is q_res or q_res.nbytes + t_res.nbytes < PARTED:
        return [0, count]
    weights = (UPLOAD_PARTS - 1) * LIGHT_FIRST + 1
    return [0, *(count * (1 + LIGHT_FIRST * part) // weights for part in range(UPLOAD_PARTS))]


def _upload(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
            starts: list[int], early: int | None = None) -> Upload:
    """The upload of both residue sets (one when they are one: then in one part), in the
    parts that begin at pairs ``starts``, the first ``early`` of them at once (all by
    default; the others at ``resume``)."""
    def cuts(residues: np.ndarray, offsets: np.ndarray) -> list[int]:
        return [0, *(int(offsets[k]) for k in starts[1:-1]), len(residues)]

    if t_res is q_res:
        assert len(starts) == 2, "one residue set goes in one part"
        return Upload([q_res], early=early)
    return Upload([q_res, t_res], [cuts(q_res, q_off), cuts(t_res, t_off)], early=early)


# a plan's running sum given at each position by the plan's per-position arrays (dev) and
# the run key of each position
PositionSum = Callable[[dict[str, cp.ndarray], cp.ndarray], cp.ndarray]


@dataclass
class _Plan:
    """Pairs in processing order with their per-pair arrays, on the GPU, the runs of
    positions that share a group size: (first, end, group size), and running sums."""

    order: cp.ndarray          # processing position -> pair index
    runs: list[tuple[int, int, int]]
    parts: list[int]           # the upload's part of each run
    dev: dict[str, cp.ndarray]
    at: dict[str, cp.ndarray]  # exclusive running sums of make's ``sums``, by position
    known: dict[int, np.ndarray]   # their values at some positions, on the host

    @classmethod
    def make(cls, pairs: _Pairs, taken: cp.ndarray | None, group: cp.ndarray,
             major: cp.ndarray, minor: cp.ndarray, part: cp.ndarray | None = None,
             parts: int = 1, sums: dict[str, cp.ndarray | PositionSum] | None = None,
             **extra: cp.ndarray) -> _Plan:
        """The plan of the pairs ``taken`` (a mask; None: every pair), by ``part`` (every
        pair's part of the upload, of ``parts`` <= 12), then ``group``, then ``major`` and
        ``minor`` (int64, passes and columns: values past 2**26 and 2**32 tie): one GPU
        sort of one key, the pairs not taken after the others. ``sums`` (per-pair int64
        arrays, or functions that give one value a position from the plan's ``dev``
        arrays and each position's run key) are summed in plan order; their values at the
        runs' bounds come back with the bounds (and how many pairs are taken), in one
        download."""
        runs_key = _size_index(group)
        if part is not None:
            runs_key = cp.add(cp.multiply(part, len(FILL_GROUPS)), runs_key)
        left = parts * len(FILL_GROUPS)        # the run key of the pairs not taken
        assert left < 64, "a plan's run keys fit 6 bits"
        if taken is not None:
            runs_key = cp.where(taken, runs_key, left)
        sort = cp.argsort(_arithmetic()["plan_key"](runs_key, major, minor))
        keys = runs_key[sort]
        bounds = cp.searchsorted(keys, cp.arange(left + 1))
        # queued before the download, so that the host has nothing to launch after it
        dev = {"q_start": pairs.q_start[sort], "q_len": pairs.q_len[sort].astype(np.int32),
               "t_start": pairs.t_start[sort], "t_len": pairs.t_len[sort].astype(np.int32),
               **{name: a[sort] for name, a in extra.items()}}
        at = {name: _exclusive_cumsum(values(dev, keys) if callable(values) else values[sort])
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

    def pair_args(self, inputs: _Inputs, lo: int, hi: int) -> tuple:
        d = self.dev
        return (inputs.q_res, d["q_start"][lo:hi], d["q_len"][lo:hi], inputs.t_res,
                d["t_start"][lo:hi], d["t_len"][lo:hi], np.int32(hi - lo))


def _ends_spill_words(dev: dict[str, cp.ndarray], keys: cp.ndarray) -> cp.ndarray:
    """ends.cu's spill words at each plan position (a PositionSum): its run begins at
    the first position of its key."""
    count = len(keys)
    return _arithmetic()["ends_spill_words"](
        cp.arange(count), cp.searchsorted(keys, keys), dev["q_len"], dev["t_len"],
        dev["tile"], keys, count)


def _bandable(matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str) -> bool:
    """Whether ends.cu may take pairs of this scoring: the band's bound needs gaps to cost
    at least gap_extend a step and gap_open >= 0, its profiles a small alphabet."""
    return (mode in ENDS_MODES and gap_open >= 0 and gap_extend >= 1
            and matrix.shape[0] <= ENDS_ALPHABET)


def _top(matrix: np.ndarray) -> int:
    """The best a diagonal step can score (at least 0): ends.cu's band bound's and the
    16-bit bound's."""
    return max(int(matrix.max()), 0)


def _banded(pairs: _Pairs, matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str
            ) -> cp.ndarray:
    """The pairs that go through ends.cu: every cell of theirs fits its 16 bits."""
    if not _bandable(matrix, gap_open, gap_extend, mode):
        return cp.zeros(len(pairs.q_len), dtype=bool)
    top, low = _top(matrix), max(-int(matrix.min()), 0)
    open_ = gap_open + gap_extend
    # the highest cell: top * min(m, n), plus a gap opening in HG. The deepest value
    # ends.cu computes: a semiglobal boundary cell of row m plus a padding score, less two
    # gap openings (it takes F - open, F at most an opening below the H above), with one
    # opening more and a pass of padding rows' gap extensions to spare (conservative since
    # ends.cu puts a semiglobal pair's padding rows above its rows, as rows of 0; a local
    # cell is never below 0; cells of padding columns never reach a pair's columns)
    return _arithmetic()["banded"](
        pairs.q_len, pairs.t_len, top, open_, gap_extend,
        3 * open_ + gap_extend * ROWS * max(GROUP_SIZES) + low + ENDS_PAD, ENDS_CELL)


@dataclass
class _EndsPass:
    """ends.cu's plan for some pairs, its spill buffer and its results in plan order
    (kept with the plan: the parts' streams write them after ``run`` returns)."""

    plan: _Plan
    spill: cp.ndarray
    out: cp.ndarray

    @property
    def spill_at(self) -> cp.ndarray:
        """Each group's first spill word, at the group's first pair (a running sum of the
        plan)."""
        return self.plan.at["spill"]

    @classmethod
    def make(cls, pairs: _Pairs, banded: cp.ndarray, starts: list[int]) -> _EndsPass | None:
        """The plan of the pairs ``banded`` (a mask), part by part of the upload (parts
        begin at pairs ``starts``); None when there are none. A group of threads takes two
        pairs; with two passes or more it spills the longer target's columns."""
        part = (cp.searchsorted(cp.asarray(starts[1:-1], dtype=np.int64),
                                cp.arange(len(pairs.q_len)), side="right")
                if len(starts) > 2 else None)       # one part: no key to sort by
        groups = _ends_groups(pairs.q_len)
        tile = cp.multiply(groups, ROWS)
        passes = _arithmetic()["ceil_div"](pairs.q_len, tile)
        plan = _Plan.make(pairs, banded, groups, passes, pairs.t_len, part=part,
                          parts=len(starts) - 1, sums={"spill": _ends_spill_words}, tile=tile)
        if not len(plan.order):
            return None
        return cls(plan, cp.empty(max(plan.total("spill"), 1), dtype=np.uint32),
                   cp.empty((len(plan.order), 6), dtype=np.int32))

    def run(self, inputs: _Inputs, upload: Upload, gap_open: int, gap_extend: int, mode: str,
            top: int, ends: cp.ndarray) -> dict[int, cp.cuda.Event]:
        """Launch ends.cu over the plan, each part's runs on a stream of their own once
        the part's residues are there (a part's launches fill the tail of the one
        before; the copies of the parts after the first start once its launches are
        queued); each pair's results go to its row of ``ends`` (N, 6): score, window
        rows, first column, columns, band's lowest and highest diagonal.

        Returns an event a part (of those with pairs here): its pairs' rows of ``ends``
        are written once the event has passed."""
        plan = self.plan
        shared = _profile_bytes(inputs)
        here = cp.cuda.get_current_stream()
        planned = here.record()
        streams: list[cp.cuda.Stream] = []
        done: dict[int, cp.cuda.Event] = {}
        try:
            for part in sorted(set(plan.parts)):
                if streams:
                    upload.resume()
                stream = _stream(part)
                streams.append(stream)
                stream.wait_event(planned)
                runs = [run for run, p in zip(plan.runs, plan.parts, strict=True) if p == part]
                with stream:
                    upload.ready(part)          # the part's residues
                    for lo, hi, group in runs:
                        thread_groups = -(-(hi - lo) // 2)     # one a pair of pairs
                        kernel("ends.cu", ends_name(group, mode))(
                            (-(-thread_groups * group // BLOCK),), (BLOCK,),
                            (*plan.pair_args(inputs, lo, hi), inputs.matrix, inputs.alphabet,
                             np.int32(gap_open), np.int32(gap_extend), np.int32(top),
                             self.spill, self.spill_at[lo:hi], self.out[lo:hi]),
                            shared_mem=shared)
                    first, last = runs[0][0], runs[-1][1]
                    ends[plan.order[first:last]] = self.out[first:last]
                    done[part] = stream.record()
        except BaseException:     # nothing is freed under a part's kernels
            for stream in streams:
                here.wait_event(stream.record())
            raise
        return done


@dataclass
class _Walk:
    """Where the fill's walk writes: start cells (pairs, 2), and CIGAR text in slots of
    2 (m + n) characters (at 2 ``slot_at``), each ending its slot, and its lengths."""

    starts: cp.ndarray
    cigar: cp.ndarray
    slot_at: cp.ndarray
    lengths: cp.ndarray

    @classmethod
    def none(cls) -> _Walk:
        """For a fill without codes (nothing is walked)."""
        nothing = cp.zeros(2, dtype=np.int64)
        return cls(nothing.view(np.int32), nothing.view(np.int8), nothing,
                   nothing.view(np.int32))

    def args(self, lo: int) -> tuple:
        return self.starts[lo:], self.cigar, self.slot_at[lo:], self.lengths[lo:]


def _fill(inputs: _Inputs, plan: _Plan, mode: str, lo: int, hi: int, group: int, gap_open: int,
          gap_extend: int, spill: cp.ndarray, spill_at: cp.ndarray, dirs: cp.ndarray,
          dirs_at: cp.ndarray, out: cp.ndarray, walk: _Walk) -> None:
    """Run the fill kernel over positions lo..hi (one group size): with codes (``dirs``
    not empty), walked; without, scores and end cells only. Banded pairs (their group
    BANDED_GROUP; their bands and ends.cu's scores in the plan) go to codes16.cu, two a
    group, the others to traceback.cu, whole."""
    d = plan.dev
    scoring = (inputs.matrix, inputs.alphabet, np.int32(gap_open), np.int32(gap_extend))
    buffers = (spill, spill_at, dirs, dirs_at, out[lo:hi], *walk.args(lo))
    if group == BANDED_GROUP:
        threads = -(-(hi - lo) // 2) * group
        kernel("codes16.cu", codes_name(mode))(
            (-(-threads // BLOCK),), (BLOCK,),
            (*plan.pair_args(inputs, lo, hi), d["band_lo"][lo:hi], d["band_hi"][lo:hi],
             d["score"][lo:hi], *scoring, *buffers),
            shared_mem=_profile_bytes(inputs) + BLOCK // 32 * CODES_STAGE)
        return
    kernel("traceback.cu", fill_name(group, mode, directions=dirs.size > 1))(
        (-(-(hi - lo) * group // BLOCK),), (BLOCK,),
        (*plan.pair_args(inputs, lo, hi), *scoring, *buffers),
        shared_mem=int(inputs.alphabet) ** 2 * 2)


def _profile_bytes(inputs: _Inputs) -> int:
    """Shared memory of ends.cu's and codes16.cu's profiles: a block's threads, each
    the 16 rows of two pairs against every residue and a padding one, 16-bit scores."""
    return (2 * int(inputs.alphabet) + 1) * 2 * BLOCK * 16


def _spill_words(pairs: _Pairs, group: cp.ndarray) -> cp.ndarray:
    """The fill's spill words of each pair: 2 n for a pair of several passes."""
    return _arithmetic()["spill_words"](pairs.q_len, pairs.t_len, cp.multiply(group, ROWS))


def _unbanded(count: int) -> dict[str, cp.ndarray]:
    return {"band_lo": cp.full(count, -BAND_FREE, dtype=np.int32),
            "band_hi": cp.full(count, BAND_FREE, dtype=np.int32)}


def score_ends(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score and end cell of query k against target k: ``(scores, query_end, target_end)``.

    Ends are 0-based exclusive, tie rules as in the traceback; no directions are kept.
    """
    count = len(q_off) - 1
    pairs = _Pairs.of(q_off, t_off, None)
    group = _groups(pairs.q_len)
    plan = _Plan.make(pairs, None, group, cp.zeros_like(pairs.t_len), pairs.t_len,
                      sums={"spill": _spill_words(pairs, group)}, **_unbanded(count))
    out = cp.zeros((count, 3), dtype=np.int32)
    none = cp.zeros(1, dtype=np.uint64)
    spill_at = plan.at["spill"]
    spill = cp.empty(max(plan.total("spill"), 1), dtype=np.int32)
    with _upload(q_res, q_off, t_res, t_off, [0, count]) as upload:
        inputs = _Inputs.of(upload, matrix)
        upload.ready()
        for lo, hi, size in plan.runs:
            _fill(inputs, plan, mode, lo, hi, size, gap_open, gap_extend, spill,
                  spill_at[lo:hi], none, cp.zeros(hi - lo, dtype=np.int64), out, _Walk.none())
        result = cp.empty((count, 3), dtype=np.int64)
        result[plan.order] = out
        scores, query_end, target_end = result.get().T
    return scores, query_end, target_end


def _batches(plan: _Plan, budget_words: int) -> list[tuple[int, int, int]]:
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
    text buffer with (N + 1,) int64 offsets. The arrays live in page-locked host memory
    from CuPy's pinned memory pool, which takes it back when they go.
    """
    starts = _part_starts(q_res, q_off, t_res, pairs)
    # ends.cu's plan is made while the first of several parts travels, before the others
    # (they start once ends.cu's first launches are queued): beside the whole upload's
    # host threads, the plan's host work runs three times slower (measured); the first
    # part is light, and there when the plan is done
    with _upload(q_res, q_off, t_res, t_off, starts, early=1 if len(starts) > 2 else 0
                 ) as upload:
        whole = _Pairs.of(q_off, t_off, pairs)
        banded = _banded(whole, matrix, gap_open, gap_extend, mode)
        ends_pass = (_EndsPass.make(whole, banded, starts)
                     if _bandable(matrix, gap_open, gap_extend, mode) else None)
        return _align(upload, whole, banded, ends_pass, starts, q_res, q_off, t_res, t_off,
                      matrix, gap_open, gap_extend, mode, pairs, memory_budget)


def _fill_wave(inputs: _Inputs, whole: _Pairs, banded: cp.ndarray | None, ends: cp.ndarray,
               mode: str, gap_open: int, gap_extend: int, budget_words: int,
               found: cp.ndarray, large: cp.ndarray) -> tuple[_Plan, _Walk]:
    """The fill of some pairs (``ends``: their rows of ends.cu's results; ``banded`` None
    when ends.cu took no pair): their plan, made while ends.cu runs, and its kernels.
    Writes each pair's row of ``found`` and of ``large`` (whether its codes pass the
    budget: the CPU aligns it then)."""
    count = len(whole.q_len)
    cut, band, group = whole, _unbanded(count), _groups(whole.q_len)
    if banded is not None:
        cut = whole.window(banded, ends)
        band = {"band_lo": cp.where(banded, ends[:, 4], band["band_lo"]).astype(np.int32),
                "band_hi": cp.where(banded, ends[:, 5], band["band_hi"]).astype(np.int32),
                "score": ends[:, 0].astype(np.int32)}
        group = cp.where(banded, BANDED_GROUP, group)
    passes, columns, words, too_large = _arithmetic()["pass_shape"](
        cut.q_len, cut.t_len, group, band["band_lo"], band["band_hi"], ROWS, budget_words)
    large[...] = too_large
    # the direction words, spill words and CIGAR slot (m + n) of each pair, summed in
    # plan order: where each pair's go
    plan = _Plan.make(cut, ~too_large, group, passes, columns,
                      sums={"words": words, "spill": _spill_words(cut, group),
                            "slots": cp.add(cut.q_len, cut.t_len)}, **band)
    on_gpu = len(plan.order)
    word_at, spill_at, slot_at = plan.at["words"], plan.at["spill"], plan.at["slots"]
    runs = _batches(plan, budget_words)
    # the buffers of each run: its direction codes and spill
    edges = plan.sums_at([x for lo, hi, _ in runs for x in (lo, hi)])
    sizes = edges["words"].reshape(-1, 2), edges["spill"].reshape(-1, 2)
    out = cp.zeros((on_gpu, 3), dtype=np.int32)
    walk = _Walk(cp.zeros((on_gpu, 2), dtype=np.int32),
                 cp.empty(2 * max(plan.total("slots"), 1), dtype=np.int8),
                 slot_at, cp.zeros(on_gpu, dtype=np.int32))
    for (lo, hi, size), (w0, w1), (s0, s1) in zip(runs, sizes[0], sizes[1], strict=True):
        dirs = cp.empty(max(int(w1 - w0), 2), dtype=np.uint64)
        spill = cp.empty(max(int(s1 - s0), 1), dtype=np.int32)
        _fill(inputs, plan, mode, lo, hi, size, gap_open, gap_extend, spill,
              _shifted(spill_at[lo:hi], int(s0)), dirs, _shifted(word_at[lo:hi], int(w0)),
              out, walk)
    found[plan.order] = cp.stack([out[:, 0], walk.starts[:, 0], out[:, 1], walk.starts[:, 1],
                                  out[:, 2], walk.lengths], 1)
    shift = cp.where(too_large, 0, ends[:, 2])      # the CPU aligns large pairs whole
    found[:, 3:5] += shift[:, None].astype(np.int32)
    return plan, walk


def _waves(starts: list[int]) -> list[tuple[int, int, range]]:
    """The pairs whose codes are computed together: (first, end, upload parts), the first
    FIRST_WAVE parts, then the others; one wave for an upload in one part."""
    parts = len(starts) - 1
    cut = min(FIRST_WAVE, parts - 1)
    waves = [range(0, cut), range(cut, parts)] if parts > 1 else [range(1)]
    return [(starts[w.start], starts[w.stop], w) for w in waves]


@dataclass
class _Wave:
    """A wave's fill: its plan (positions of the wave's pairs, counted from ``first``) and
    its walk."""

    first: int
    plan: _Plan
    walk: _Walk


def _align(upload: Upload, whole: _Pairs, banded: cp.ndarray, ends_pass: _EndsPass | None,
           starts: list[int], q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
           t_off: np.ndarray, matrix: np.ndarray, gap_open: int, gap_extend: int, mode: str,
           pairs: tuple[np.ndarray, np.ndarray] | None, memory_budget: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """align_batch while its residues travel: ends.cu takes each part's pairs as soon as
    they are there; the codes of the first parts' pairs are computed while ends.cu runs
    over the others (the two kernels share the GPU well: measured 1.8 ms of B1's 16
    quicker side by side than one after the other), each wave on a stream of its own,
    urgent: its plan's small kernels and the fill's blocks go before the blocks of
    ends.cu's later parts that wait for room."""
    count = len(whole.q_len)
    inputs = _Inputs.of(upload, matrix)
    # ends.cu's results, zero for the pairs it does not take; its column 2 is a banded
    # pair's first target column (the shift of its coordinates)
    ends = cp.zeros((count, 6), dtype=np.int64)
    # score, coordinates (target columns shifted by the window) and CIGAR length of each
    # pair, in the caller's order; the pairs past the memory budget
    found = cp.zeros((count, 6), dtype=np.int32)
    large = cp.zeros(count, dtype=bool)
    done: dict[int, cp.cuda.Event] = {}
    if ends_pass is not None:       # launched first: the host's work below overlaps it
        done = ends_pass.run(inputs, upload, gap_open, gap_extend, mode, _top(matrix), ends)
    upload.resume()
    here = cp.cuda.get_current_stream()
    made = here.record()
    waves = _waves(starts)
    filled: list[_Wave] = []
    streams = []
    budget_words = max(memory_budget // 8 // len(waves), 1)
    try:
        for wave, (first, end, parts) in enumerate(waves):
            stream = _stream(wave, URGENT)
            streams.append(stream)
            stream.wait_event(made)
            for part in parts:
                if part in done:
                    stream.wait_event(done[part])
            with stream:
                for part in parts:
                    upload.ready(part)
                taken = slice(first, end)
                plan, walk = _fill_wave(
                    inputs, whole.rows(taken), banded[taken] if ends_pass is not None else None,
                    ends[taken], mode, gap_open, gap_extend, budget_words, found[taken],
                    large[taken])
                filled.append(_Wave(first, plan, walk))
    finally:    # raised or not, nothing is freed under a wave's kernels
        for stream in streams:
            here.wait_event(stream.record())
    on_gpu = sum(len(wave.plan.order) for wave in filled)
    # checked once the results are back (the host queues their kernels meanwhile), or
    # before the CPU aligns any pair
    lost = cp.less(found[:, 5], 0).any() | (banded & ~large & (found[:, 0] != ends[:, 0])).any()
    big = cp.flatnonzero(large).get() if on_gpu < count else np.empty(0, dtype=np.int64)
    big_cigars = None
    if len(big):    # numba only for pairs past the GPU's memory budget: one CPU call
        _no_path_lost(lost)
        from swath.kernels.cpu.traceback import align_batch as cpu_align_batch

        rows, cols = (np.arange(count), np.arange(count)) if pairs is None else pairs
        big_scores, big_coords, *big_cigars = cpu_align_batch(
            q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode,
            pairs=(np.asarray(rows)[big], np.asarray(cols)[big]))
        found[cp.asarray(big)] = cp.asarray(np.column_stack(
            [big_scores, big_coords, np.diff(big_cigars[1])]).astype(np.int32))
    results = _results(found, filled, big, big_cigars)
    _no_path_lost(lost)
    return results


def _shifted(at: cp.ndarray, first: int) -> cp.ndarray:
    """Offsets ``at`` counted from ``first`` (as they are from 0: no launch)."""
    return cp.subtract(at, first) if first else at


def _no_path_lost(lost: cp.ndarray) -> None:
    if bool(lost):
        raise RuntimeError("swath's banded traceback lost a path (a bug in swath, please "
                           "report it with the pairs that cause it)")


def _results(found: cp.ndarray, waves: list[_Wave], big: np.ndarray,
             big_cigars: list[np.ndarray] | None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """align_batch's results from ``found`` (score, coordinates and CIGAR length of each
    pair, in the caller's order), the walks' CIGARs of the waves' pairs and the CPU's of
    pairs ``big`` (text and offsets): the CIGARs packed on the GPU, then two downloads
    into page-locked memory (the text's once the first gives its length: the packing is
    queued without waiting for it, into room for every slot's text)."""
    count = len(found)
    # scores, coordinates and the CIGARs' offsets in one buffer: one download
    head = cp.empty(6 * count + 1, dtype=np.int64)
    head[:count] = found[:, 0]
    head[count:5 * count].reshape(count, 4)[...] = found[:, 1:5]
    text_at = head[5 * count:]
    # a lost path's length is negative (align_batch raises): it takes no text
    text_at[...] = _exclusive_cumsum(cp.maximum(found[:, 5], 0).astype(np.int64))
    room = sum(wave.walk.cigar.size for wave in waves)
    text = cp.empty(room + (0 if big_cigars is None else len(big_cigars[0])), dtype=np.uint8)
    for wave in waves:
        walk, on_gpu = wave.walk, len(wave.plan.order)
        if on_gpu:
            kernel("traceback.cu", "compact_text")(
                (-(-on_gpu // BLOCK),), (BLOCK,),
                (walk.cigar, walk.slot_at[1:] + walk.slot_at[1:] - walk.lengths,
                 text_at[cp.add(wave.plan.order, wave.first)], walk.lengths,
                 np.int32(on_gpu), text))
    head = download(head)
    text_at = head[5 * count:]
    text = download(text[:text_at[-1]])
    if big_cigars is not None:
        big_text, big_at = big_cigars
        for j, k in enumerate(big.tolist()):
            text[text_at[k]:text_at[k + 1]] = big_text[big_at[j]:big_at[j + 1]]
    return head[:count], head[count:5 * count].reshape(count, 4), text, text_at


def warm_up() -> None:
    """Load the kernels a batch's plan and walk use (CuPy's routines and swath's, from
    the disk caches: about 0.1 s in a new process) by aligning two tiny batches, one of
    chosen pairs and one of pairs k: what a command's GPU probe thread does while the
    command reads its inputs."""
    residues, offsets = np.zeros(4, dtype=np.uint8), np.array([0, 2, 4])
    matrix = np.where(np.eye(4, dtype=bool), 1, -1)
    for pairs in ((np.array([0, 1]), np.array([1, 0])), None):
        align_batch(residues, offsets, residues, offsets, matrix, 1, 1, "global", pairs=pairs)


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
