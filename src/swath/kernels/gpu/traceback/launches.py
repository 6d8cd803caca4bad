"""The kernel launches of a batch's phases: ends.cu over the banded pairs; the fill (its
codes and walk: codes16.cu for banded pairs, traceback.cu for the others) over a wave's
plan; the packing of the CIGARs; and cigar_counts.

# N: pairs, m, n: a pair's query and target lengths, positions: a plan's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import cupy as cp
import numpy as np

from swath.constants import BANDED_GROUP, BLOCK, CODES_STAGE, TRACEBACK_ROWS, WARP
from swath.kernels.gpu._cuda import codes_name, ends_name, fill_name, kernel
from swath.kernels.gpu.traceback.elementwise import arithmetic
from swath.kernels.gpu.traceback.plan import (
    Inputs,
    Pairs,
    Plan,
    batches,
    ends_group_sizes,
    ends_spill_words,
    exclusive_cumsum,
    group_sizes,
    spill_words,
    unbanded,
)
from swath.kernels.gpu.traceback.streams import kept_stream
from swath.kernels.gpu.transfer import Upload, download


@dataclass
class EndsPhase:
    """ends.cu's plan for some pairs, its spill buffer and its results in plan order
    (kept with the plan: the parts' streams write them after ``run`` returns)."""

    plan: Plan
    spill: cp.ndarray
    out: cp.ndarray

    @property
    def spill_at(self) -> cp.ndarray:
        """Each group's first spill word, at the group's first pair (a running sum of the
        plan)."""
        return self.plan.at["spill"]

    @classmethod
    def make(cls, pairs: Pairs, banded: cp.ndarray, starts: list[int]) -> EndsPhase | None:
        """The plan of the pairs ``banded`` (a mask), part by part of the upload (parts
        begin at pairs ``starts``); None when there are none. A group of threads takes two
        pairs; with two passes or more it spills the longer target's columns."""
        part = (cp.searchsorted(cp.asarray(starts[1:-1], dtype=np.int64),
                                cp.arange(len(pairs.q_len)), side="right")
                if len(starts) > 2 else None)       # one part: no key to sort by
        groups = ends_group_sizes(pairs.q_len)
        pass_rows = cp.multiply(groups, TRACEBACK_ROWS)
        passes = arithmetic()["ceil_div"](pairs.q_len, pass_rows)
        plan = Plan.make(pairs, banded, groups, passes, pairs.t_len, part=part,
                         parts=len(starts) - 1, sums={"spill": ends_spill_words},
                         pass_rows=pass_rows)
        if not len(plan.order):
            return None
        return cls(plan, cp.empty(max(plan.total("spill"), 1), dtype=np.uint32),
                   cp.empty((len(plan.order), 6), dtype=np.int32))

    def run(self, inputs: Inputs, upload: Upload, gap_open: int, gap_extend: int, mode: str,
            top: int, ends: cp.ndarray) -> dict[int, cp.cuda.Event]:
        """Launch ends.cu over the plan, each part's runs on a stream of their own once
        the part's residues are there (a part's launches fill the tail of the one
        before; the copies of the parts after the first start once its launches are
        queued); each pair's results go to its row of ``ends`` (N, 6): score, window
        rows, first column, columns, band's lowest and highest diagonal.

        Returns an event a part (of those with pairs here): its pairs' rows of ``ends``
        are written once the event has passed."""
        plan = self.plan
        shared = profile_bytes(inputs)
        here = cp.cuda.get_current_stream()
        planned = here.record()
        streams: list[cp.cuda.Stream] = []
        done: dict[int, cp.cuda.Event] = {}
        try:
            for part in sorted(set(plan.parts)):
                if streams:
                    upload.resume()
                stream = kept_stream(part)
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
class Walk:
    """Where the fill's walk writes: start cells (pairs, 2), and CIGAR text in slots of
    2 (m + n) characters (at 2 ``slot_at``), each ending its slot, and its lengths."""

    starts: cp.ndarray
    cigar: cp.ndarray
    slot_at: cp.ndarray
    lengths: cp.ndarray

    @classmethod
    def none(cls) -> Walk:
        """For a fill without codes (nothing is walked)."""
        nothing = cp.zeros(2, dtype=np.int64)
        return cls(nothing.view(np.int32), nothing.view(np.int8), nothing,
                   nothing.view(np.int32))

    def args(self, lo: int) -> tuple:
        return self.starts[lo:], self.cigar, self.slot_at[lo:], self.lengths[lo:]


def fill(inputs: Inputs, plan: Plan, mode: str, lo: int, hi: int, group: int, gap_open: int,
         gap_extend: int, spill: cp.ndarray, spill_at: cp.ndarray, dirs: cp.ndarray,
         dirs_at: cp.ndarray, out: cp.ndarray, walk: Walk) -> None:
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
            shared_mem=profile_bytes(inputs) + BLOCK // WARP * CODES_STAGE)
        return
    ends = inputs.ends or (gap_open, gap_extend)
    kernel("traceback.cu", fill_name(group, mode, directions=dirs.size > 1,
                                     ends=inputs.ends is not None))(
        (-(-(hi - lo) * group // BLOCK),), (BLOCK,),
        (*plan.pair_args(inputs, lo, hi), *scoring, np.int32(ends[0]), np.int32(ends[1]),
         *buffers),
        shared_mem=int(inputs.alphabet) ** 2 * 2)


def profile_bytes(inputs: Inputs) -> int:
    """Shared memory of ends.cu's and codes16.cu's profiles: a block's threads, each
    the rows of two pairs against every residue and a padding one, 16-bit scores."""
    return (2 * int(inputs.alphabet) + 1) * TRACEBACK_ROWS * 2 * BLOCK


def fill_wave(inputs: Inputs, whole: Pairs, banded: cp.ndarray | None, ends: cp.ndarray,
              mode: str, gap_open: int, gap_extend: int, budget_words: int,
              found: cp.ndarray, large: cp.ndarray) -> tuple[Plan, Walk]:
    """The fill of some pairs (``ends``: their rows of ends.cu's results; ``banded`` None
    when ends.cu took no pair): their plan, made while ends.cu runs, and its kernels.
    Writes each pair's row of ``found`` and of ``large`` (whether its codes pass the
    budget: the CPU aligns it then)."""
    count = len(whole.q_len)
    cut, band, group = whole, unbanded(count), group_sizes(whole.q_len)
    if banded is not None:
        cut = whole.window(banded, ends)
        band = {"band_lo": cp.where(banded, ends[:, 4], band["band_lo"]).astype(np.int32),
                "band_hi": cp.where(banded, ends[:, 5], band["band_hi"]).astype(np.int32),
                "score": ends[:, 0].astype(np.int32)}
        group = cp.where(banded, BANDED_GROUP, group)
    passes, columns, words, too_large = arithmetic()["pass_shape"](
        cut.q_len, cut.t_len, group, band["band_lo"], band["band_hi"], TRACEBACK_ROWS,
        budget_words)
    large[...] = too_large
    # the direction words, spill words and CIGAR slot (m + n) of each pair, summed in
    # plan order: where each pair's go
    plan = Plan.make(cut, ~too_large, group, passes, columns,
                     sums={"words": words, "spill": spill_words(cut, group),
                           "slots": cp.add(cut.q_len, cut.t_len)}, **band)
    on_gpu = len(plan.order)
    word_at, spill_at, slot_at = plan.at["words"], plan.at["spill"], plan.at["slots"]
    runs = batches(plan, budget_words)
    # the buffers of each run: its direction codes and spill
    edges = plan.sums_at([x for lo, hi, _ in runs for x in (lo, hi)])
    sizes = edges["words"].reshape(-1, 2), edges["spill"].reshape(-1, 2)
    out = cp.zeros((on_gpu, 3), dtype=np.int32)
    walk = Walk(cp.zeros((on_gpu, 2), dtype=np.int32),
                cp.empty(2 * max(plan.total("slots"), 1), dtype=np.int8),
                slot_at, cp.zeros(on_gpu, dtype=np.int32))
    for (lo, hi, size), (w0, w1), (s0, s1) in zip(runs, sizes[0], sizes[1], strict=True):
        dirs = cp.empty(max(int(w1 - w0), 2), dtype=np.uint64)
        spill = cp.empty(max(int(s1 - s0), 1), dtype=np.int32)
        fill(inputs, plan, mode, lo, hi, size, gap_open, gap_extend, spill,
             shifted(spill_at[lo:hi], int(s0)), dirs, shifted(word_at[lo:hi], int(w0)),
             out, walk)
    found[plan.order] = cp.stack([out[:, 0], walk.starts[:, 0], out[:, 1], walk.starts[:, 1],
                                  out[:, 2], walk.lengths], 1)
    shift = cp.where(too_large, 0, ends[:, 2])      # the CPU aligns large pairs whole
    found[:, 3:5] += shift[:, None].astype(np.int32)
    return plan, walk


@dataclass
class Wave:
    """A wave's fill: its plan (positions of the wave's pairs, counted from ``first``) and
    its walk."""

    first: int
    plan: Plan
    walk: Walk


def shifted(at: cp.ndarray, first: int) -> cp.ndarray:
    """Offsets ``at`` counted from ``first`` (as they are from 0: no launch)."""
    return cp.subtract(at, first) if first else at


def no_path_lost(lost: cp.ndarray) -> None:
    """Raise where the banded traceback lost a path (``lost``: a GPU bool)."""
    if bool(lost):
        raise RuntimeError("swath's banded traceback lost a path (a bug in swath, please "
                           "report it with the pairs that cause it)")


def pack_results(found: cp.ndarray, waves: list[Wave], big: np.ndarray,
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
    text_at[...] = exclusive_cumsum(cp.maximum(found[:, 5], 0).astype(np.int64))
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
