"""A long pair's optimal path from scores alone: Myers and Miller's splits on tile kernels.

# a..b, c..d: a span's rows and columns (matrix nodes); H, F: the state a span starts
# or ends in (F: inside a vertical gap, a query residue against a gap); S: its score.

After phase 1 without origins (StripedScore in tiles of any shape), the score and the
end cell are known. The path is found level by level (phase 2 of a job without
origins), each level one batch of tiles on the tile kernels:

- **Start.** Global alignments start at (0, 0). Otherwise a pass runs backward from
  the end cell in slabs of rows, anchored there, until it meets the start: a cell whose
  best path to the end scores S (local: the anchor scores 1, so a path from it scores
  S + 1 where no path avoiding it can, and the local kernel's best cell is the start;
  an optimal path's suffixes score at least 0, so none of its cells drops to 0), or a
  cell of row 0 (semiglobal). The path from start to end is the first span.
- **Splits.** A span (the path from one node and state to another, with its score) is
  cut at its middle row: one tile computes its top half forward from its start, one
  its bottom half backward from its end, and the first column of the middle row where
  the two add up to the span's score, through H or through a vertical gap crossing the
  row (its opening counted once), cuts it in two. Every span of a level is split in
  the same batch, so the GPU stays full as the spans shrink.
- **Segments.** Spans of at most ``BASE_CELLS`` cells (or one row, or no column) are
  not split: phase 3 traces each from direction codes (``trace_span``).

Each level computes the cells of its spans once (its halves), so for a path near the
diagonal the levels together compute about twice the first span's cells; GPU memory
per level is O(rows + columns) of its spans. The path is an optimal one; where several
paths score the same it may differ from the one the tiles with origins trace.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from swath.alignment import cigar_from_path, join_cigars
from swath.constants import MINUS_INFINITY, STATE_F, STATE_H, Mode
from swath.kernels import Backend, get_backend
from swath.kernels.backend import TileCodes
from swath.scoring import Scoring

logger = logging.getLogger(__name__)

BASE_CELLS = 1 << 19        # spans this small are traced from codes, not split
ANCHOR_BONUS = 1            # the anchor's score in a local backward pass
TRACE_STRIP = 256           # strip width of the phase-3 tiles

Boundary = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Span:
    """The path from node (a, c) in state ``start`` to node (b, d) in state ``end``
    (``STATE_H``, or ``STATE_F`` inside a vertical gap), scoring ``score``."""

    a: int
    c: int
    b: int
    d: int
    start: int
    end: int
    score: int

    @property
    def cells(self) -> int:
        return (self.b - self.a) * (self.d - self.c)

    def is_segment(self) -> bool:
        """Whether phase 3 traces this span directly instead of splitting it."""
        return self.b - self.a < 2 or self.d == self.c or self.cells <= BASE_CELLS


def anchored(h: int, w: int, scoring: Scoring, state: int, charge_open: bool = True,
             bonus: int = 0) -> tuple[Boundary, Boundary]:
    """The input boundary ``(top_h, top_f), (left_h, left_e)`` of an ``h x w`` tile whose
    corner is a path's anchor: in state H the path leaves it any way, gaps opened there
    charged; in state F it goes down a vertical gap first, whose opening is charged
    only with ``charge_open``. ``bonus`` is the anchor's score."""
    go, ge = scoring.gap_open, scoring.gap_extend
    top_h = np.full(w + 1, MINUS_INFINITY, dtype=np.int64)
    top_f = np.full(w + 1, MINUS_INFINITY, dtype=np.int64)
    if state == STATE_H:
        top_h[:] = bonus - (go + ge * np.arange(w + 1, dtype=np.int64))
        top_h[0] = bonus
    left_h = bonus - ((go if charge_open else 0) + ge * np.arange(1, h + 1, dtype=np.int64))
    return (top_h, top_f), (left_h, np.full(h, MINUS_INFINITY, dtype=np.int64))


# ---------------------------------------------------------------------------------
# The start


def find_start(query: np.ndarray, target: np.ndarray, scoring: Scoring, mode: Mode,
               end: tuple[int, int, int], backend: Backend, slab: int,
               ) -> tuple[int, int]:
    """The node where an optimal path ending at ``end = (score, i, j)`` starts: a
    backward pass from the end, ``slab`` rows a tile, until it is found."""
    score, end_i, end_j = end
    if mode == "global" or end_i == 0 or end_j == 0:
        return 0, 0
    local = mode == "local"
    bonus = ANCHOR_BONUS if local else 0
    rev_q = np.ascontiguousarray(query[:end_i][::-1])
    rev_t = np.ascontiguousarray(target[:end_j][::-1])
    (top_h, top_f), (column, closed) = anchored(end_i, end_j, scoring, STATE_H, bonus=bonus)
    bottom = np.empty((2, end_j), dtype=np.int64)
    for r0 in range(0, end_i, slab):
        r1 = min(end_i, r0 + slab)
        if r0:
            top_h = np.r_[column[r0 - 1], bottom[0]]
            top_f = np.r_[MINUS_INFINITY, bottom[1]]
        bottom, _, (best, i, j) = backend.tile_scores(
            rev_q[r0:r1], rev_t, scoring, mode, TRACE_STRIP, (top_h, top_f),
            (column[r0:r1], closed[r0:r1]))
        if local and i >= 0 and best == bonus + score:
            return end_i - r0 - i, end_j - j
    if not local:       # row 0: the columns end_j - 1 .. 0, then end_j
        at_row0 = np.r_[np.asarray(bottom[0], dtype=np.int64)[::-1], column[-1]]
        hits = np.flatnonzero(at_row0 == score)
        if len(hits):
            return 0, int(hits[-1])
    raise RuntimeError(f"no start of a path scoring {score} to ({end_i}, {end_j})")


# ---------------------------------------------------------------------------------
# Splits


def _halves(span: Span, query: np.ndarray, target: np.ndarray, scoring: Scoring
            ) -> list[tuple[np.ndarray, np.ndarray, Boundary, Boundary]]:
    """The two tiles of a span's split: its top half forward, its bottom half backward."""
    mid = (span.a + span.b) // 2
    w = span.d - span.c
    t = target[span.c:span.d]
    top = (query[span.a:mid], t,
           *anchored(mid - span.a, w, scoring, span.start, charge_open=span.start == STATE_H))
    bottom = (np.ascontiguousarray(query[mid:span.b][::-1]), np.ascontiguousarray(t[::-1]),
              *anchored(span.b - mid, w, scoring, span.end))
    return [top, bottom]


def _cut(span: Span, forward: np.ndarray, forward_left: int, backward: np.ndarray,
         backward_left: int, gap_open: int) -> tuple[Span, Span]:
    """The span's two halves, from the forward H and F of its middle row and the
    backward ones (columns c .. d; column c forward and column d backward are the
    vertical paths of the tiles' left boundaries)."""
    mid = (span.a + span.b) // 2
    hf = np.r_[forward_left, forward[0]].astype(np.int64)
    ff = np.r_[forward_left, forward[1]].astype(np.int64)
    hr = np.r_[np.asarray(backward[0])[::-1], backward_left].astype(np.int64)
    fr = np.r_[np.asarray(backward[1])[::-1], backward_left].astype(np.int64)
    through = np.flatnonzero(hf + hr == span.score)
    if len(through):
        j = int(through[0])
        return (Span(span.a, span.c, mid, span.c + j, span.start, STATE_H, int(hf[j])),
                Span(mid, span.c + j, span.b, span.d, STATE_H, span.end, int(hr[j])))
    crossing = np.flatnonzero(ff + fr + gap_open == span.score)
    if not len(crossing):
        raise RuntimeError(f"no cell of row {mid} lies on a path of score {span.score} "
                           f"from ({span.a}, {span.c}) to ({span.b}, {span.d})")
    j = int(crossing[0])
    return (Span(span.a, span.c, mid, span.c + j, span.start, STATE_F, int(ff[j])),
            Span(mid, span.c + j, span.b, span.d, STATE_F, span.end, int(fr[j]) + gap_open))


def split_level(spans: list[Span], query: np.ndarray, target: np.ndarray, scoring: Scoring,
                backend: Backend) -> list[Span]:
    """One level: every span that is not a segment cut in two, in one batch of tiles."""
    todo = [s for s in spans if not s.is_segment()]
    tiles = [tile for s in todo for tile in _halves(s, query, target, scoring)]
    rows = backend.tile_batch(tiles, scoring)
    halves: dict[Span, tuple[Span, Span]] = {}
    for k, s in enumerate(todo):
        forward, backward = tiles[2 * k], tiles[2 * k + 1]
        halves[s] = _cut(s, rows[2 * k], int(forward[3][0][-1]), rows[2 * k + 1],
                         int(backward[3][0][-1]), scoring.gap_open)
    return [half for s in spans for half in halves.get(s, (s,))]


def find_path(query: np.ndarray, target: np.ndarray, scoring: Scoring, mode: Mode,
              end: tuple[int, int, int], backend: Backend, slab: int,
              progress: Callable[[int, int], None] | None = None) -> list[Span]:
    """The segments of an optimal path ending at ``end = (score, i, j)``, in path order
    from its start: spans to trace with ``trace_span``. ``progress(level, spans)`` is
    called after each level."""
    score, end_i, end_j = end
    if mode == "local" and score <= 0:
        return []
    a, c = find_start(query, target, scoring, mode, end, backend, slab)
    spans = [Span(a, c, end_i, end_j, STATE_H, STATE_H, score)]
    level = 0
    while not all(s.is_segment() for s in spans):
        started = time.perf_counter()
        cells = sum(s.cells for s in spans if not s.is_segment())
        spans = split_level(spans, query, target, scoring, backend)
        level += 1
        logger.debug("split level %d: %d spans, %d cells, %.3f s", level, len(spans), cells,
                     time.perf_counter() - started)
        if progress:
            progress(level, len(spans))
    return spans


# ---------------------------------------------------------------------------------
# Segments (phase 3)


def cpu_codes() -> TileCodes:
    """The CPU backend's tiles with direction codes, which trace every segment."""
    codes = get_backend("cpu").codes
    if codes is None:
        raise RuntimeError("swath bug: the CPU backend has no tile codes")
    return codes


def load_trace_kernels(query: np.ndarray, target: np.ndarray, scoring: Scoring) -> None:
    """Trace a one-cell span, so that the CPU kernels of :func:`trace_span` are loaded
    (from numba's cache) before the first segment needs them."""
    trace_span(Span(0, 0, 1, 1, STATE_H, STATE_H, 0), query, target, scoring)


def trace_span(span: Span, query: np.ndarray, target: np.ndarray, scoring: Scoring) -> str:
    """A segment's piece of the alignment (extended CIGAR), traced from direction codes
    recomputed from its anchored start."""
    q, t = query[span.a:span.b], target[span.c:span.d]
    h, w = len(q), len(t)
    if w == 0 or h == 0:                 # one gap, or nothing
        return _gap(h, w)
    codes = cpu_codes()                  # numba: loaded when used
    top, left = anchored(h, w, scoring, span.start, charge_open=span.start == STATE_H)
    dirs = codes.tile_codes(q, t, scoring, "global", TRACE_STRIP, top, left)
    ops, i, j, _ = codes.walk_tile(dirs, h, w, span.end)
    # the walk left the tile on its top row or left column: the anchor's gap
    return join_cigars([_gap(i, j), cigar_from_path(ops, q, t, i, j)])


def _gap(h: int, w: int) -> str:
    """The CIGAR of a path along row or column 0 to node (h, w), one of them 0."""
    return f"{h + w}{'I' if w == 0 else 'D'}" if h + w else ""
