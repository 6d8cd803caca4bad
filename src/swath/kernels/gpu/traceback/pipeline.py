"""align_batch and score_ends: the upload of a batch's residues in parts, and its phases
on streams of their own, overlapping the upload and each other.

# N: pairs (query k against target k, or the chosen rows[k] and cols[k] of two sets).

The residues travel (``transfer.Upload``: host threads and a ring of page-locked slots)
in parts when they are large: the first while the host uploads the offsets and makes
ends.cu's plan, then the others, ends.cu taking each part's pairs as soon as they land.
The codes then go in two waves, the pairs of the first ``FIRST_WAVE`` parts and those of
the others: the first wave's plan and fill run beside ends.cu's later parts (the two
kernels share the GPU well), each wave on a stream of its own. The host downloads the
results, packed on the GPU, into page-locked memory.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from swath.constants import Mode
from swath.kernels.gpu.traceback.launches import (
    EndsPhase,
    Walk,
    Wave,
    fill,
    fill_wave,
    no_path_lost,
    pack_results,
)
from swath.kernels.gpu.traceback.plan import (
    Inputs,
    Pairs,
    Plan,
    bandable,
    banded_pairs,
    group_sizes,
    spill_words,
    top_score,
    unbanded,
)
from swath.kernels.gpu.traceback.streams import URGENT, kept_stream
from swath.kernels.gpu.transfer import Upload
from swath.kernels.scheme import Scheme, unpack
from swath.scoring import Alphabet, Scoring

MEMORY_BUDGET = 4 << 30      # bytes of direction codes a batch's fills may hold at once
UPLOAD_PARTS = 8             # parts of a large upload of pairs k: ends.cu starts on the first
LIGHT_FIRST = 4              # the other parts weigh this many times the first
FIRST_WAVE = 5               # parts whose codes are computed beside ends.cu's later parts
                             # (measured on B1 against other counts)
PARTED = 32 << 20            # residue bytes from which an upload goes in parts


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


def score_ends(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               scoring: Scoring, mode: Mode, pairs: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score and end cell of query k against target k: ``(scores, query_end, target_end)``;
    with ``pairs`` (rows, cols), of query ``rows[k]`` against target ``cols[k]`` (nothing
    gathered); terminal gaps at the scheme's end costs (global mode) where they cost apart.

    Ends are 0-based exclusive, tie rules as in the traceback; no directions are kept.
    """
    matrix, gap_open, gap_extend, ends = unpack(scoring, mode)
    whole = Pairs.of(q_off, t_off, pairs)
    count = len(whole.q_len)
    group = group_sizes(whole.q_len)
    plan = Plan.make(whole, None, group, cp.zeros_like(whole.t_len), whole.t_len,
                     sums={"spill": spill_words(whole, group)}, **unbanded(count))
    out = cp.zeros((count, 3), dtype=np.int32)
    none = cp.zeros(1, dtype=np.uint64)
    spill_at = plan.at["spill"]
    spill = cp.empty(max(plan.total("spill"), 1), dtype=np.int32)
    with _upload(q_res, q_off, t_res, t_off, [0, count]) as upload:
        inputs = Inputs.of(upload, matrix, ends)
        upload.ready()
        for lo, hi, size in plan.runs:
            fill(inputs, plan, mode, lo, hi, size, gap_open, gap_extend, spill,
                 spill_at[lo:hi], none, cp.zeros(hi - lo, dtype=np.int64), out, Walk.none())
        result = cp.empty((count, 3), dtype=np.int64)
        result[plan.order] = out
        scores, query_end, target_end = result.get().T
    return scores, query_end, target_end


def align_batch(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                scoring: Scoring, mode: Mode, pairs: tuple[np.ndarray, np.ndarray] | None = None,
                memory_budget: int = MEMORY_BUDGET
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Optimal alignment of query k against target k, for every k; with ``pairs`` (rows,
    cols), of query ``rows[k]`` against target ``cols[k]`` (nothing gathered: the sets
    are uploaded as they are); terminal gaps at the scheme's end costs (global mode)
    where they cost apart (traceback.cu's fill with end costs: global pairs are computed
    whole).

    Returns ``scores`` (N,) int64, ``coords`` (N, 4) int64 (query start, query end,
    target start, target end; 0-based, end exclusive), and the CIGARs as one uint8
    text buffer with (N + 1,) int64 offsets. The arrays live in page-locked host memory
    from CuPy's pinned memory pool, which takes it back when they go.
    """
    scheme = unpack(scoring, mode)
    matrix, gap_open, gap_extend, _ = scheme
    starts = _part_starts(q_res, q_off, t_res, pairs)
    # ends.cu's plan is made while the first of several parts travels, before the others
    # (they start once ends.cu's first launches are queued): beside the whole upload's
    # host threads, the plan's host work runs slower (measured); the first part is light,
    # and there when the plan is done
    with _upload(q_res, q_off, t_res, t_off, starts, early=1 if len(starts) > 2 else 0
                 ) as upload:
        whole = Pairs.of(q_off, t_off, pairs)
        banded = banded_pairs(whole, matrix, gap_open, gap_extend, mode)
        ends_phase = (EndsPhase.make(whole, banded, starts)
                      if bandable(matrix, gap_open, gap_extend, mode) else None)
        return _align(upload, whole, banded, ends_phase, starts, q_res, q_off, t_res, t_off,
                      scoring, scheme, mode, pairs, memory_budget)


def _waves(starts: list[int]) -> list[tuple[int, int, range]]:
    """The pairs whose codes are computed together: (first, end, upload parts), the first
    FIRST_WAVE parts, then the others; one wave for an upload in one part."""
    parts = len(starts) - 1
    cut = min(FIRST_WAVE, parts - 1)
    waves = [range(0, cut), range(cut, parts)] if parts > 1 else [range(1)]
    return [(starts[w.start], starts[w.stop], w) for w in waves]


def _align(upload: Upload, whole: Pairs, banded: cp.ndarray, ends_phase: EndsPhase | None,
           starts: list[int], q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
           t_off: np.ndarray, scoring: Scoring, scheme: Scheme, mode: Mode,
           pairs: tuple[np.ndarray, np.ndarray] | None, memory_budget: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """align_batch while its residues travel: ends.cu takes each part's pairs as soon as
    they are there; the codes of the first parts' pairs are computed while ends.cu runs
    over the others (the two kernels share the GPU well: measured quicker side by side
    than one after the other), each wave on a stream of its own,
    urgent: its plan's small kernels and the fill's blocks go before the blocks of
    ends.cu's later parts that wait for room. ``scheme``: ``scoring`` unpacked; the pairs
    past the memory budget go to the CPU twin with ``scoring``."""
    matrix, gap_open, gap_extend, end_gaps = scheme
    count = len(whole.q_len)
    inputs = Inputs.of(upload, matrix, end_gaps)
    # ends.cu's results, zero for the pairs it does not take; its column 2 is a banded
    # pair's first target column (the shift of its coordinates)
    ends = cp.zeros((count, 6), dtype=np.int64)
    # score, coordinates (target columns shifted by the window) and CIGAR length of each
    # pair, in the caller's order; the pairs past the memory budget
    found = cp.zeros((count, 6), dtype=np.int32)
    large = cp.zeros(count, dtype=bool)
    done: dict[int, cp.cuda.Event] = {}
    if ends_phase is not None:       # launched first: the host's work below overlaps it
        done = ends_phase.run(inputs, upload, gap_open, gap_extend, mode, top_score(matrix),
                              ends)
    upload.resume()
    here = cp.cuda.get_current_stream()
    made = here.record()
    waves = _waves(starts)
    filled: list[Wave] = []
    streams = []
    budget_words = max(memory_budget // 8 // len(waves), 1)
    try:
        for wave, (first, end, parts) in enumerate(waves):
            stream = kept_stream(wave, URGENT)
            streams.append(stream)
            stream.wait_event(made)
            for part in parts:
                if part in done:
                    stream.wait_event(done[part])
            with stream:
                for part in parts:
                    upload.ready(part)
                taken = slice(first, end)
                plan, walk = fill_wave(
                    inputs, whole.rows(taken), banded[taken] if ends_phase is not None else None,
                    ends[taken], mode, gap_open, gap_extend, budget_words, found[taken],
                    large[taken])
                filled.append(Wave(first, plan, walk))
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
        no_path_lost(lost)
        from swath.kernels import get_backend

        rows, cols = (np.arange(count), np.arange(count)) if pairs is None else pairs
        big_scores, big_coords, *big_cigars = get_backend("cpu").align_batch(
            q_res, q_off, t_res, t_off, scoring, mode,
            pairs=(np.asarray(rows)[big], np.asarray(cols)[big]))
        found[cp.asarray(big)] = cp.asarray(np.column_stack(
            [big_scores, big_coords, np.diff(big_cigars[1])]).astype(np.int32))
    results = pack_results(found, filled, big, big_cigars)
    no_path_lost(lost)
    return results


def warm_up() -> None:
    """Load the kernels a batch's plan and walk use (CuPy's routines and swath's, from
    the disk caches, as a new process must) by aligning two tiny batches, one of
    chosen pairs and one of pairs k: what a command's GPU probe thread does while the
    command reads its inputs."""
    residues, offsets = np.zeros(4, dtype=np.uint8), np.array([0, 2, 4])
    scoring = Scoring("warm-up", Alphabet("ACGT", None), np.where(np.eye(4, dtype=bool), 1, -1),
                      1, 1)
    for pairs in ((np.array([0, 1]), np.array([1, 0])), None):
        align_batch(residues, offsets, residues, offsets, scoring, "global", pairs=pairs)
