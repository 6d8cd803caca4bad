"""Score-only search on the GPU: queries against targets resident in device memory.

# N: targets, m: query length, residues: uint8 codes, scores: int32.

Targets are sorted by length and cut into length partitions; each partition gets the
group size that suits its lengths (short targets: small groups, so the wavefront's
fill and drain stay small). A first round scores in 16-bit halves of a register: two
query streams against one target (``score_queries``; a local stream holds many queries
one after another, a global one a query), or one query against two targets; the
targets it flags, and those whose bounds do not fit 16 bits, are re-run in exact 32-bit
arithmetic, one query at a time.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import cupy as cp
import numpy as np

from swath.constants import BLOCK, ROW_GRAIN, Mode
from swath.errors import InvalidParameter
from swath.kernels.bounds import fits, saturation_ceiling, score_bounds
from swath.kernels.gpu._cuda import SEARCH_CONFIGS, kernel, search_name
from swath.kernels.scheme import end_costs, interior
from swath.scoring import Scoring

PARTITION_EDGES = (64, 128, 256)        # target lengths where the usable groups grow
DEFAULT_SHARED = 48 * 1024             # a block's shared memory without opting in
SHARED_LIMIT = 64 * 1024               # the most a search block asks for
TARGETS = {"Packed16": 2, "QueryPacked16": 1, "Int32": 1}     # targets a group aligns
WORD = {"Packed16": np.uint32, "QueryPacked16": np.uint32, "Int32": np.int32}
PROFILE_BYTES = {"Packed16": 2, "QueryPacked16": 4, "Int32": 2}   # per profile row
# a profile's rows: a multiple of this, which every configuration's pass divides
PROFILE_ROWS = max(g * r for g, r in SEARCH_CONFIGS)
LAUNCH_ROWS = 32 * 1024                # local: the most rows of a stream in one launch
SPILL_BUDGET = 1 << 30                 # bytes of spilled rows of one call of the end-cost path


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

    @functools.cached_property
    def length_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct target lengths (ascending) and how many targets have each: the
        score bounds of a query need only these."""
        lengths, counts = np.unique(self.host_lengths, return_counts=True)
        return lengths, counts

    def head(self, count: int) -> DeviceTargets:
        """The ``count`` shortest targets (views, nothing copied)."""
        return DeviceTargets(self.order[:count], self.residues, self.starts[:count],
                             self.lengths[:count], self.host_lengths[:count])

    def subset(self, positions: np.ndarray) -> DeviceTargets:
        """The sorted targets at ``positions`` (ascending), sharing the residues."""
        index = cp.asarray(positions)
        return DeviceTargets(self.order[positions], self.residues, self.starts[index],
                             self.lengths[index], self.host_lengths[positions])


def stream_starts(queries: list[np.ndarray]) -> list[int]:
    """The first row of each query of a stream: each starts at the next multiple of
    ``ROW_GRAIN`` rows, so that a thread's rows hold one query of the stream."""
    padded = [-(-len(q) // ROW_GRAIN) * ROW_GRAIN for q in queries]
    return [0, *itertools.accumulate(padded)][:-1]


def query_profile(streams: list[list[np.ndarray]], matrix: np.ndarray, stride: int
                  ) -> cp.ndarray:
    """``(A + 1, stride)``: the score of residue ``a`` against row ``i`` of the query
    streams; int16 for one stream, uint32 holding two streams' int16 scores (low half:
    the first) for two.

    Code ``A`` pads targets, and the rows between and past a stream's queries: it scores
    ``min(matrix, 0)``.
    """
    size = matrix.shape[0]
    scores = np.full((size + 1, size + 1), min(int(matrix.min()), 0), dtype=np.int16)
    scores[:size, :size] = matrix
    residues = np.full((len(streams), stride), size, dtype=np.intp)
    for row, queries in zip(residues, streams, strict=True):
        for start, query in zip(stream_starts(queries), queries, strict=True):
            row[start:start + len(query)] = query
    profile = scores[residues].transpose(0, 2, 1)        # (streams, A + 1, stride)
    if len(streams) == 1:
        return cp.asarray(np.ascontiguousarray(profile[0]))
    return cp.asarray(np.ascontiguousarray(profile.transpose(1, 2, 0)).view(np.uint32)[..., 0])


def row_queries(streams: list[list[np.ndarray]], rows: list[list[int]], stride: int
                ) -> np.ndarray:
    """``(streams, stride // ROW_GRAIN)`` int32: the output row of the query holding each
    ``ROW_GRAIN`` rows of a stream, -1 past its queries."""
    table = np.full((len(streams), stride // ROW_GRAIN), -1, dtype=np.int32)
    for line, queries, out in zip(table, streams, rows, strict=True):
        for start, query, row in zip(stream_starts(queries), queries, out, strict=True):
            line[start // ROW_GRAIN:-(-(start + len(query)) // ROW_GRAIN)] = row
    return table


def stream_plan(lengths: list[int], mode: str) -> list[list[list[int]]]:
    """The first round's launches: for each, one or two streams of query indices.

    Global and semiglobal scores come from a query's last row, so each stream holds one
    query: the two nearest in length (``lengths`` ascending) share a launch and the
    shorter one's rows past its end are padding. Local streams hold queries one after
    another, the longest first into the shorter stream, so that both streams (and their
    passes) are about as long; a stream holds at most ``LAUNCH_ROWS`` rows (a longer
    query alone), then the next launch starts. No lengths: no launches.
    """
    if mode != "local" or not lengths:
        return [[[j] for j in range(k, min(k + 2, len(lengths)))]
                for k in range(0, len(lengths), 2)]
    launches: list[list[list[int]]] = []
    streams: list[list[int]] = [[], []]
    rows = [0, 0]
    for k in sorted(range(len(lengths)), key=lambda k: -lengths[k]):
        lane = int(rows[1] < rows[0])
        padded = -(-lengths[k] // ROW_GRAIN) * ROW_GRAIN
        if rows[lane] and rows[lane] + padded > LAUNCH_ROWS:
            launches.append(streams)
            streams, rows, lane = [[], []], [0, 0], 0
        streams[lane].append(k)
        rows[lane] += padded
    launches.append(streams)
    return [[s for s in launch if s] for launch in launches]


def usable_configs(target_length: int, alphabet: int, row_bytes: int = 2
                   ) -> list[tuple[int, int]]:
    """The configurations whose group is small next to targets of about this length (fill
    and drain of the wavefront cost G - 1 columns) and whose pass's profile (``row_bytes`` a
    row and residue) fits in shared memory; the smallest if none is."""
    usable = [(g, r) for g, r in SEARCH_CONFIGS
              if g * 8 <= max(target_length, 32)
              and (alphabet + 1) * g * r * row_bytes <= SHARED_LIMIT]
    return usable or [SEARCH_CONFIGS[0]]


def kernel_config(query_length: int, target_length: int, alphabet: int,
                  row_bytes: int = 2) -> tuple[int, int]:
    """(threads per group, rows per thread) for a query against targets of about this length.

    The smallest pass that holds the whole query, among the ``usable_configs``; long
    queries take the largest pass. Of two as large, the one with fewer rows a thread
    (fewer registers: more groups at once on an SM).
    """
    usable = usable_configs(target_length, alphabet, row_bytes)
    fitting = [c for c in usable if c[0] * c[1] >= query_length]
    return (min(fitting, key=lambda c: (c[0] * c[1], c[1])) if fitting
            else max(usable, key=lambda c: (c[0] * c[1], -c[1])))


def partitions(lengths: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges of sorted ``lengths`` cut at ``PARTITION_EDGES``."""
    cuts = [0, *np.searchsorted(lengths, PARTITION_EDGES, side="left").tolist(), len(lengths)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def _launch(cell: str, mode: str, targets: DeviceTargets, streams: list[list[np.ndarray]],
            rows: list[list[int]], matrix: np.ndarray, gap_open: int, gap_extend: int,
            scores: cp.ndarray, flags: cp.ndarray) -> None:
    """One launch of ``cell`` width over all ``targets`` for one or two query streams (the
    query ``streams[s][j]`` scores into row ``rows[s][j]``); fills ``scores`` and
    ``flags``: ``(queries, len(targets))`` or wider views (rows contiguous, the same row
    stride in elements: the kernel takes one). Global and semiglobal streams hold one
    query each. Streams longer than a pass (local streams of several queries, most
    often) keep the boundary row between passes in a spill buffer of two 4-byte words
    per column of each group's longest target: up to 8 bytes a target residue."""
    extent = max(start + len(q) for queries in streams
                 for start, q in zip(stream_starts(queries), queries, strict=True))
    stride = -(-extent // PROFILE_ROWS) * PROFILE_ROWS
    profile = query_profile(streams, matrix, stride)
    row_query = cp.asarray(row_queries(streams, rows, stride))
    m, m2 = len(streams[0][0]), len(streams[-1][0])
    alphabet = matrix.shape[0]
    out_stride = scores.strides[0] // scores.itemsize
    if flags.strides[0] // flags.itemsize != out_stride:
        raise RuntimeError("swath bug: scores and flags rows of different strides")
    ceiling = saturation_ceiling(matrix, np.int32 if cell == "Int32" else np.int16)
    lanes = TARGETS[cell]
    for begin, end in partitions(targets.host_lengths):
        group, per_thread = kernel_config(extent, int(targets.host_lengths[begin]), alphabet,
                                          PROFILE_BYTES[cell])
        pass_rows = group * per_thread
        passes = -(-extent // pass_rows)
        if passes * pass_rows > stride:
            raise RuntimeError(f"swath bug: {passes} passes of {pass_rows} rows read past a "
                               f"profile of {stride}")
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
        shared = (alphabet + 1) * pass_rows * PROFILE_BYTES[cell]
        function = kernel("search.cu", search_name(group, per_thread, cell, mode))
        if shared > DEFAULT_SHARED:
            function.max_dynamic_shared_size_bytes = shared
        function(
            (blocks,), (BLOCK,),
            (targets.residues, targets.starts[begin:], targets.lengths[begin:], np.int32(count),
             profile, np.int32(m), np.int32(m2), np.int32(stride), np.int32(passes),
             np.int32(alphabet + 1), np.int32(gap_open), np.int32(gap_extend),
             np.int32(ceiling), spill, spill_at_d, row_query, scores[0, begin:],
             flags[0, begin:], np.int32(out_stride)),
            shared_mem=shared)


def score_queries(targets: DeviceTargets, queries: list[np.ndarray], scoring: Scoring,
                  mode: Mode) -> cp.ndarray:
    """Exact scores of every query against every target, ``(len(queries), N)`` in sorted
    target order (device int32); search.cu charges every gap alike (a scheme whose end
    gaps cost apart is refused).

    The first round takes the queries in one or two streams, the 16-bit halves of a
    register (``stream_plan``), against the targets whose score bounds fit 16 bits; it is
    queued for all queries before the host waits for the GPU once, to re-run each query's
    flagged targets (and the targets beyond 16 bits) in exact 32-bit arithmetic.
    """
    matrix, gap_open, gap_extend = interior(scoring, "search.cu")
    by_length = np.argsort([len(q) for q in queries], kind="stable")
    ordered = [queries[i] for i in by_length]
    n = len(targets)
    scores = cp.zeros((len(queries), n), dtype=np.int32)
    flags = cp.ones((len(queries), n), dtype=np.uint8)
    lengths, counts = targets.length_counts
    for launch in stream_plan([len(q) for q in ordered], mode):
        narrow = min(int(counts[fits(*score_bounds(len(ordered[k]), lengths, matrix, gap_open,
                                                   gap_extend, mode),
                                     np.int16, gap_extend)].sum())
                     for stream in launch for k in stream)
        if narrow:
            _launch("Packed16" if len(launch) == 1 else "QueryPacked16", mode,
                    targets.head(narrow), [[ordered[k] for k in s] for s in launch], launch,
                    matrix, gap_open, gap_extend, scores[:, :narrow], flags[:, :narrow])
    for flagged in np.flatnonzero(flags.any(axis=1).get()).tolist():
        redo = cp.flatnonzero(flags[flagged]).get()
        query = ordered[flagged]
        low, high = score_bounds(len(query), targets.host_lengths[redo], matrix, gap_open,
                                 gap_extend, mode)
        if not fits(low, high, np.int32, gap_extend).all():
            raise InvalidParameter("a pair is too long for exact 32-bit scoring")
        wide_scores = cp.zeros((1, len(redo)), dtype=np.int32)
        wide_flags = cp.zeros((1, len(redo)), dtype=np.uint8)
        _launch("Int32", mode, targets.subset(redo), [[query]], [[0]], matrix, gap_open,
                gap_extend, wide_scores, wide_flags)
        if int(wide_flags.max()):
            raise InvalidParameter("a local score exceeds the 32-bit range")
        scores[flagged, cp.asarray(redo)] = wide_scores[0]
    out = cp.empty_like(scores)
    out[cp.asarray(by_length)] = scores
    return out


def score_many(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               scoring: Scoring, mode: Mode) -> np.ndarray:
    """Optimal scores of every query against every target, ``(nq, nt)`` int32; terminal
    gaps at the scheme's end costs (global mode) where they cost apart: search.cu charges
    every gap alike,
    so such a scheme's pairs go through traceback.cu's fill without codes, one pair a
    group, in 32 bits, in calls whose spilled rows (two words a target column of a pair)
    stay within ``SPILL_BUDGET``."""
    if end_costs(scoring, mode) is not None:
        from swath.kernels.gpu.traceback import score_ends

        nq, nt = len(q_off) - 1, len(t_off) - 1
        out = np.empty(nq * nt, dtype=np.int32)
        step = max(1, SPILL_BUDGET // (8 * (int(np.diff(t_off).max(initial=0)) + 1)))
        for first in range(0, nq * nt, step):
            rows, cols = np.divmod(np.arange(first, min(first + step, nq * nt)), nt)
            out[first:first + len(rows)] = score_ends(
                q_res, q_off, t_res, t_off, scoring, mode, pairs=(rows, cols))[0]
        return out.reshape(nq, nt)
    targets = DeviceTargets.upload(t_res, t_off)
    queries = [q_res[q_off[qi]:q_off[qi + 1]] for qi in range(len(q_off) - 1)]
    out = np.empty((len(queries), len(targets)), dtype=np.int32)
    out[:, targets.order] = score_queries(targets, queries, scoring, mode).get()
    return out
