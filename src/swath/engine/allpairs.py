"""All against all as a Dask graph: every unordered pair scored, the close ones aligned.

# n: sequences (sorted by length), B: sequences per block, T: tiles, r x c: the
# sequences of a tile's block row and block column.

The sequences are taken in piece by piece on the workers (:mod:`swath.engine.intake`;
each piece kept sorted by length), then one task indexes them (``index_sequences``: the
order by length, each block's run of each piece, the names checked to be unique, the
tiles' arrays). Then each tile of the upper triangle of the block matrix not yet done is one task,

    swath-allpairs-{run}-{t}  its two blocks read from the store; the length filter (pairs
                              whose lengths alone rule out ``min_identity``); the first
                              pass: each pair the length filter keeps scored in the band
                              of diagonals every alignment reaching ``min_identity`` stays
                              in (``band_scores``; a lower bound of its optimal score),
                              or, where no band exists (``--iddef 2, 3``, local and
                              semiglobal modes), costs more than the full DP or the score
                              matrix is kept, the full score phase (``score_many``) over
                              boxes that cover the pairs needed; the score filter (pairs
                              whose first-phase score is below the least score of an
                              alignment of their lengths at ``min_identity``; with the
                              first pass, skipped where that least score is no bound:
                              local mode, ``--iddef 2``, unless scores are kept); for
                              ``--iddef 2`` in global mode on the CPU, the surplus
                              filter instead (pairs whose optimal score under
                              ``swath.identity.surplus_scheme``, a full score phase,
                              is below a lower bound of their optimal score: the
                              better of two gapless alignments', or the optimal score
                              where the score matrix is kept); the
                              traceback (``align_batch``, in batches of bounded
                              residues: ``trace``) of the candidates left; identity
                              by the job's definition; the tile's writes and done mark
                              (on a cluster under the scheduler's lock of the tile, and
                              only if no copy of the task wrote it first: a tile
                              straggling on a slow worker is copied to an idle faster
                              one, ``engine.stragglers``)

then, once every tile is done,

    swath-gather-{run}-{g}    some chunks of a kind of the root's variables along ``pair``
                              (``GATHERS``: the pairs' indices and names, their CIGARs,
                              their other fields; ``GATHER_CHUNKS`` chunks a task), read
                              from the tiles whose kept pairs they hold: a tile's start
                              along ``pair`` is the sum of the kept pairs of the tiles
                              before it (``AllPairsStore.tile_starts``)

so a tile task's memory is bounded by its tile (B x B), never by n, and a gather's by its
chunks and the two tiles at their ends, never by the kept pairs. The filters only drop
pairs that cannot pass (``swath.identity`` derives the bounds); each tile counts what
they removed. After the tiles, the clusters (single linkage of the kept pairs, a
union-find over the forests the tiles wrote: at most an edge a sequence a tile, whatever
their kept pairs) if asked, then the gathers (``gather``: the tiles' kept pairs into the
store's root, tile after tile, two chunks of a kind of its variables a task), then
``finalize`` (the score matrix, the digests, the complete mark).

The query of a pair is its earlier input record, as in vsearch. A tile aligns a pair
with its row (the shorter sequence) as the query; where the column's record is the
earlier one, the alignment is transposed (coordinates swapped, I and D swapped in the
CIGAR), the same alignment read the other way round. That holds only where score(a, b)
== score(b, a): in semiglobal mode, or with an asymmetric matrix, a tile runs twice, once
for the pairs whose row is the earlier record and once, the roles swapped, for the
others, each pair in its own orientation; a kept score matrix then holds both directions
(its transposed chunk the second run's scores).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.constants import Mode
from swath.engine.intake import (
    Inputs,
    Source,
    discarded_if_refused,
    prepare_inputs,
    run_id,
    take_in,
    write_held,
)
from swath.engine.stragglers import copies_may_run, first_writer
from swath.identity import (
    NO_BOUND,
    band_limits,
    identity_from_counts,
    least_score,
    length_can_pass,
    surplus_scheme,
)
from swath.kernels import get_backend
from swath.progress import Progress
from swath.scoring import Scoring
from swath.sequences import slice_concatenated, take_concatenated
from swath.storage.allpairs import (
    CIGAR_TEXT,
    COUNTERS,
    NO_SCORE,
    SIDE,
    TILE_FIELDS,
    AllPairsStore,
    empty_kept,
    merge_digests,
)

logger = logging.getLogger(__name__)

DENSE_BOX = 0.9         # a box whose needed pairs fill this fraction is scored whole
SMALL_BOX = 64 * 64     # a box of at most these pairs is scored whole
INT32_RANGE = (np.iinfo(np.int32).min, np.iinfo(np.int32).max)
# a gather's peak memory: its chunks' values and the tiles at their ends (A2 on an H100
# host peaked at 4.9 GiB with 4 gathers side by side, 7.9 GiB with 8, 9.0 GiB with 16)
GATHER_BYTES = 768 << 20


@dataclass(frozen=True)
class AllPairsJob:
    """Everything a tile task needs to know about an all-pairs job (picklable, small)."""

    store: str
    scoring: Scoring
    mode: Mode
    device: str
    min_identity: float
    iddef: str | int
    scores: bool
    store_id: str      # the store's creation id: a store replaced since is not written
    fresh: bool = False    # this process has just made the store: nothing in it is damaged

    @property
    def inputs(self) -> Inputs:
        """Where the job's pieces are written."""
        return Inputs(AllPairsStore, self.store, self.store_id)


# ---------------------------------------------------------------------------------
# One tile


def boxes(need: np.ndarray, r0: int = 0, c0: int = 0, split: bool = True
          ) -> list[tuple[int, int, int, int]]:
    """Rectangles ``(row, row end, column, column end)`` that cover every true cell of
    ``need``, each scored whole: the bounding box of the cells, split in halves along its
    longer side while less than ``DENSE_BOX`` of it is needed and it is larger than
    ``SMALL_BOX`` (an upper triangle costs about half its square); without ``split``, the
    bounding box alone (a backend whose score phase costs a launch per query row of a box,
    and its cells little: ``Backend.split_boxes``).

    Examples
    --------
    >>> boxes(np.triu(np.ones((4, 4), bool), 1))
    [(0, 3, 1, 4)]
    """
    rows, cols = np.flatnonzero(need.any(axis=1)), np.flatnonzero(need.any(axis=0))
    if not len(rows):
        return []
    top, bottom, left, right = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    box = need[top:bottom, left:right]
    if not split or box.size <= SMALL_BOX or box.mean() >= DENSE_BOX:
        return [(r0 + top, r0 + bottom, c0 + left, c0 + right)]
    if box.shape[0] >= box.shape[1]:
        half = box.shape[0] // 2
        return boxes(box[:half], r0 + top, c0 + left) + \
            boxes(box[half:], r0 + top + half, c0 + left)
    half = box.shape[1] // 2
    return boxes(box[:, :half], r0 + top, c0 + left) + \
        boxes(box[:, half:], r0 + top, c0 + left + half)


def score_phase(job: AllPairsJob, queries: tuple[np.ndarray, np.ndarray],
               targets: tuple[np.ndarray, np.ndarray], need: np.ndarray,
               scheme: Scoring | None = None) -> np.ndarray:
    """Scores of the ``need`` pairs of queries x targets (``NO_SCORE`` elsewhere, and in
    some cells of the boxes around them: callers read only ``need``), under the job's
    scoring or ``scheme``."""
    backend = get_backend(job.device)
    out = np.full(need.shape, NO_SCORE, dtype=np.int32)
    for top, bottom, left, right in boxes(need, split=backend.split_boxes):
        q = slice_concatenated(*queries, top, bottom)
        t = slice_concatenated(*targets, left, right)
        found = backend.score_many(*q, *t, scheme or job.scoring, job.mode)
        out[top:bottom, left:right] = np.where(need[top:bottom, left:right], found, NO_SCORE)
    return out


class Lengths:
    """The lengths of a tile's queries (rows) and targets (columns), each sorted, with what
    depends only on a pair's two lengths computed once per distinct pair of them (blocks
    of sequences sorted by length hold few: a tile of 2,048 x 2,048 amplicons, about 100
    x 100)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray) -> None:
        self.m, self.n = np.diff(rows)[:, None], np.diff(cols)[None, :]
        if np.any(np.diff(self.m, axis=0) < 0) or np.any(np.diff(self.n, axis=1) < 0):
            raise ValueError("a tile's sequences must be sorted by length")
        distinct_m, self._rows = np.unique(self.m, return_counts=True)
        distinct_n, self._cols = np.unique(self.n, return_counts=True)
        self.distinct = distinct_m[:, None], distinct_n[None, :]

    def spread(self, values: np.ndarray) -> np.ndarray:
        """The (rows, cols) values of every pair, from those of ``distinct`` lengths."""
        grid = np.broadcast_to(values, (len(self._rows), len(self._cols)))
        return np.repeat(np.repeat(grid, self._rows, axis=0), self._cols, axis=1)

    def pair_counts(self, need: np.ndarray) -> np.ndarray:
        """How many pairs of ``need`` (a mask of the tile's rows x columns) have each
        ``distinct`` pair of lengths."""
        starts = (np.concatenate([[0], np.cumsum(counts)[:-1]])
                  for counts in (self._rows, self._cols))
        rows, cols = starts
        by_column = np.add.reduceat(need, cols, axis=1, dtype=np.int64)
        return np.add.reduceat(by_column, rows, axis=0)


def first_phase(job: AllPairsJob, rows: tuple[np.ndarray, np.ndarray],
               cols: tuple[np.ndarray, np.ndarray], pairs: np.ndarray, by_length: np.ndarray,
               lengths: Lengths, kept: np.ndarray) -> tuple[np.ndarray, bool]:
    """The tile's scores for the score filter, and whether they are the optimal ones:
    the banded scores (lower bounds) of the pairs the length filter keeps where a band
    exists (``swath.identity.band_limits``), costs less than the full score phase on this
    backend (``Backend.band_worth``), no score matrix is kept and the scheme has no end
    costs of its own (the band kernels charge every gap alike); else the optimal scores of
    ``pairs`` (score matrix) or of the pairs the length filter keeps. ``kept``: how many
    pairs of each distinct pair of lengths the length filter keeps (the costs are summed
    over those, not over every pair)."""
    if job.scores:
        return score_phase(job, rows, cols, pairs), True
    band = band_limits(*lengths.distinct, job.min_identity, job.iddef, job.mode)
    if band is not None and job.scoring.end_gaps is None:
        m, n = lengths.distinct
        width = np.maximum(np.minimum(band[1], m) - np.maximum(band[0], -n) + 1, 0)
        backend = get_backend(job.device)
        if (kept * width * m).sum() <= backend.band_worth * (kept * m * n).sum():
            # int32 (the kernels' width): a band edge past the matrix is clipped to it anyway
            lo, hi = (np.where(by_length, lengths.spread(
                np.clip(edge, *INT32_RANGE).astype(np.int32)), np.int32(empty))
                for edge, empty in zip(band, (1, 0), strict=True))
            return backend.band_scores(*rows, *cols, lo, hi, job.scoring), False
    return score_phase(job, rows, cols, by_length), True


def trace(job: AllPairsJob, queries: tuple[np.ndarray, np.ndarray],
          targets: tuple[np.ndarray, np.ndarray], rows: np.ndarray, cols: np.ndarray,
          scores: np.ndarray, optimal: bool, budget: int | None = None
          ) -> dict[str, np.ndarray]:
    """Align query ``rows[k]`` with target ``cols[k]`` for every k; the fields
    (``TILE_FIELDS``; ``query``, ``target`` the tile's own indices) of the alignments whose
    identity reaches the job's threshold. ``scores`` are the first phase's: the optimal scores, or
    lower bounds of them.

    The pairs go to the backend in batches of at most ``budget`` residues
    (``trace_batches``; the backend's ``trace_residues`` by default), so that a tile whose
    filters leave every pair (``--iddef 2``) holds one batch's gathered residues, CIGARs
    and counts at a time, not the whole tile's."""
    backend = get_backend(job.device)
    lengths = np.diff(queries[1])[rows] + np.diff(targets[1])[cols]
    parts = [_trace_batch(job, queries, targets, rows[part], cols[part], scores[part],
                          optimal)
             for part in trace_batches(lengths, backend.trace_residues if budget is None
                                       else budget)]
    if not parts:
        return empty_kept()
    return {name: np.concatenate([part[name] for part in parts]) for name in TILE_FIELDS}


PAIR_RESIDUES = 32      # a pair's fixed-size arrays (scores, coordinates, offsets, counts)
                        # weigh about as much as this many residues


def trace_batches(lengths: np.ndarray, budget: int) -> list[slice]:
    """Consecutive runs of pairs, each of at most ``budget`` residues (its pairs'
    ``lengths``, query plus target, and ``PAIR_RESIDUES`` a pair), a heavier pair alone;
    in order, together every pair once.

    Examples
    --------
    >>> trace_batches(np.array([60, 60, 200, 10]), 200)
    [slice(0, 2, None), slice(2, 3, None), slice(3, 4, None)]
    """
    ends = np.cumsum(lengths.astype(np.int64) + PAIR_RESIDUES)
    batches, start = [], 0
    while start < len(ends):
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + budget, side="right")), start + 1)
        batches.append(slice(start, stop))
        start = stop
    return batches


def _trace_batch(job: AllPairsJob, queries: tuple[np.ndarray, np.ndarray],
                 targets: tuple[np.ndarray, np.ndarray], rows: np.ndarray, cols: np.ndarray,
                 scores: np.ndarray, optimal: bool) -> dict[str, np.ndarray]:
    """``trace`` of one batch of pairs, in one ``align_batch`` call."""
    q_lens, t_lens = np.diff(queries[1]), np.diff(targets[1])
    backend = get_backend(job.device)
    got, coords, text, text_at = backend.align_batch(
        *queries, *targets, job.scoring, job.mode, pairs=(rows, cols))
    if np.any(got < scores) or (optimal and not np.array_equal(got, scores)):
        raise RuntimeError("traceback scores disagree with the first phase")
    counts = backend.cigar_counts((text, text_at))
    value = identity_from_counts(counts["matches"], counts["mismatches"], counts["columns"],
                                 counts["gap_opens"], counts["terminal"], q_lens[rows],
                                 t_lens[cols], job.iddef)
    keep = np.flatnonzero(value >= job.min_identity)
    fields: dict[str, np.ndarray] = {
        "query": rows, "target": cols, "score": got, "identity": value,
        "length": counts["columns"], "matches": counts["matches"],
        "mismatches": counts["mismatches"], "gap_opens": counts["gap_opens"]}
    for k, name in enumerate(("query_start", "query_end", "target_start", "target_end")):
        fields[name] = coords[:, k]
    out = {name: np.asarray(fields[name])[keep].astype(dtype)
           for name, dtype in TILE_FIELDS.items() if name in fields}
    out[CIGAR_TEXT], at = take_concatenated(text, np.asarray(text_at, np.int64), keep)
    out["cigar_length"] = np.diff(at).astype(np.int32)
    return {name: out[name] for name in TILE_FIELDS}


def _symmetric(job: AllPairsJob) -> bool:
    """Whether score(a, b) == score(b, a) for every pair: not semiglobal, symmetric matrix."""
    matrix = job.scoring.matrix
    return job.mode != "semiglobal" and bool(np.array_equal(matrix, matrix.T))


def align_tile(job: AllPairsJob, queries: tuple[np.ndarray, np.ndarray],
               targets: tuple[np.ndarray, np.ndarray], pairs: np.ndarray, mine: np.ndarray
               ) -> tuple[dict[str, np.ndarray], dict[str, int], np.ndarray]:
    """The pairs ``mine`` of queries x targets (a tile's rows x columns, or the other way
    round) through the length filter, the first phase, the score filter and the
    traceback: the kept pairs (``query``, ``target`` the tile's own indices), the
    counters, and the first phase's scores (of every pair of ``pairs`` where the job keeps
    the score matrix)."""
    lengths = Lengths(queries[1], targets[1])
    can_pass = length_can_pass(*lengths.distinct, job.min_identity, job.iddef, job.mode)
    by_length = mine & lengths.spread(can_pass)
    counts = lengths.pair_counts(mine)
    length_kept = counts * can_pass
    # the bound over the codes the tile holds (DNA's N scores a mismatch against itself)
    present = np.flatnonzero(np.bincount(queries[0], minlength=256)
                             + np.bincount(targets[0], minlength=256))
    least = least_score(*lengths.distinct, job.min_identity, job.scoring, job.mode,
                        job.iddef, residues=present if len(present) else None)
    bound = bool(np.any(least[can_pass] > NO_BOUND))
    floors = get_backend(job.device).surplus
    surplus = None if bound or floors is None else \
        surplus_scheme(job.min_identity, job.scoring, job.mode, job.iddef)
    if job.scores or bound:
        scores, optimal = first_phase(job, queries, targets, pairs, by_length, lengths,
                                      length_kept)
        candidate = by_length & (scores >= lengths.spread(least))
    elif surplus is not None and floors is not None:
        # --iddef 2 on the CPU: lower bounds of the optimal scores for the surplus filter
        scores = floors.gapless_scores(*queries, *targets, job.scoring)
        optimal, candidate = False, by_length
    else:   # no score rules a pair out (local mode, --iddef 2 on the GPU): no first phase
        scores, optimal = np.full(pairs.shape, NO_SCORE, dtype=np.int32), False
        candidate = by_length
    if surplus is not None:
        candidate &= score_phase(job, queries, targets, candidate, surplus) >= scores
    i, j = np.nonzero(candidate)
    out = trace(job, queries, targets, i, j, scores[i, j], optimal) if len(i) else empty_kept()
    tile_pairs, by_length_pairs = int(counts.sum()), int(length_kept.sum())
    counters = {"pairs": tile_pairs, "length_filtered": tile_pairs - by_length_pairs,
                "score_filtered": by_length_pairs - len(i), "traced": len(i),
                "kept": len(out["query"])}
    return out, counters, scores


_SWAP_GAPS = np.array([{ord("I"): ord("D"), ord("D"): ord("I")}.get(c, c) for c in range(256)],
                      dtype=np.uint8)     # a CIGAR's letters, I and D swapped


def earlier_first(kept: dict[str, np.ndarray], queries: np.ndarray, targets: np.ndarray
                  ) -> dict[str, np.ndarray]:
    """Kept pairs of a tile (``query``, ``target``: the tile's own indices into
    ``queries`` and ``targets``, their input indices) with input indices, each turned so
    that its query is the earlier record: the alignment of a pair turned round transposed
    (its query and target coordinates swapped, I and D swapped in its CIGAR).

    Examples
    --------
    >>> kept = {"query": np.array([0, 0]), "target": np.array([0, 1]),
    ...         "query_start": np.array([1, 0]), "query_end": np.array([5, 2]),
    ...         "target_start": np.array([0, 0]), "target_end": np.array([3, 3]),
    ...         "cigar_length": np.array([4, 4]),
    ...         "cigar_text": np.frombuffer(b"3=1I2=1D", np.uint8)}
    >>> turned = earlier_first(kept, np.array([7]), np.array([2, 9]))
    >>> [turned[k].tolist() for k in ("query", "target", "query_start", "target_end")]
    [[2, 7], [7, 9], [0, 0], [5, 3]]
    >>> turned["cigar_text"].tobytes()
    b'3=1D2=1D'
    """
    query, target = queries[kept["query"]], targets[kept["target"]]
    turn = query > target
    out = dict(kept)
    out["query"], out["target"] = np.where(turn, target, query), np.where(turn, query, target)
    for a, b in (("query_start", "target_start"), ("query_end", "target_end")):
        out[a], out[b] = np.where(turn, kept[b], kept[a]), np.where(turn, kept[a], kept[b])
    text = kept[CIGAR_TEXT].copy()
    letters = np.repeat(turn, kept["cigar_length"])
    text[letters] = _SWAP_GAPS[text[letters]]
    out[CIGAR_TEXT] = text
    return out


def job_store(job: AllPairsJob) -> AllPairsStore:
    """The job's store, open for writing, checked to be the one the job was made for
    (a store replaced since is not written)."""
    store = AllPairsStore.open(job.store, mode="r+", complete=False)
    store.check_id(job.store_id)
    return store


def run_tile(job: AllPairsJob, t: int) -> tuple[int, int]:
    """Compute and write tile ``t``, then mark it done; (pairs, kept pairs). A tile done
    meanwhile by a copy of this task (``engine.stragglers``) is left as it is."""
    started = time.perf_counter()
    store = job_store(job)
    copies = copies_may_run()   # in this process no copy runs: no done mark to read
    if copies and store.is_done("tile", t):     # a copy that started late
        return _written(store, t)
    bi, bj = store.tile_blocks(t)
    rows, cols = store.block_sequences(bi), store.block_sequences(bj)
    inputs = store.block_order(bi), store.block_order(bj)
    pairs = np.ones((len(inputs[0]), len(inputs[1])), dtype=bool)
    if bi == bj:
        pairs = np.triu(pairs, 1)
    if _symmetric(job):
        out, counters, forward = align_tile(job, rows, cols, pairs, pairs)
        out = earlier_first(out, *inputs)
        reverse = forward.T
    else:       # each pair aligned with its earlier record the query
        earlier = inputs[0][:, None] < inputs[1][None, :]
        out, counters, forward = align_tile(job, rows, cols, pairs, pairs & earlier)
        turned, counted, reverse = align_tile(job, cols, rows, pairs.T, (pairs & ~earlier).T)
        parts = earlier_first(out, *inputs), earlier_first(turned, *inputs[::-1])
        out = {name: np.concatenate([part[name] for part in parts]) for name in TILE_FIELDS}
        counters = {name: counters[name] + counted[name] for name in COUNTERS}
    # a copy of this task may run beside it (engine.stragglers): the first writes
    with first_writer(f"swath-tile-{job.store_id}-{t}", copies):
        if copies and store.is_done("tile", t):
            return _written(store, t)
        store.write_tile(t, out, counters, _score_chunks(bi == bj, pairs, forward, reverse)
                         if job.scores else [],
                         forest(out["query"], out["target"]) if store.has_clusters else None)
    logger.debug("tile %d (%d, %d): %s in %.3f s", t, bi, bj, counters,
                 time.perf_counter() - started)
    return counters["pairs"], counters["kept"]


def _written(store: AllPairsStore, t: int) -> tuple[int, int]:
    """(pairs, kept pairs) of tile ``t`` as written."""
    counters = store.counters(t)
    return int(counters[COUNTERS.index("pairs")]), int(counters[COUNTERS.index("kept")])


def _score_chunks(diagonal: bool, pairs: np.ndarray, forward: np.ndarray,
                  reverse: np.ndarray) -> list[np.ndarray]:
    """The tile's chunks of the score matrix: its own (row block the query) and the
    transposed one (column block the query, ``reverse``): one chunk, both halves, on the
    diagonal."""
    if diagonal:
        return [np.where(pairs, forward, reverse)]
    return [forward, reverse]


# ---------------------------------------------------------------------------------
# Clusters


def _roots(parent: np.ndarray) -> np.ndarray:
    """Point every node of a union-find forest straight at its root (in place)."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return parent
        parent[:] = grand


def union(parent: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
    """Join the sets of ``i[k]`` and ``j[k]`` for every k (in place; roots are the least
    member of their set).

    Examples
    --------
    >>> parent = np.arange(5)
    >>> union(parent, np.array([3, 1]), np.array([4, 3]))
    >>> _roots(parent).tolist()
    [0, 1, 2, 1, 1]
    """
    while True:
        roots = _roots(parent)
        ri, rj = roots[i], roots[j]
        apart = ri != rj
        if not apart.any():
            return
        np.minimum.at(parent, np.maximum(ri, rj)[apart], np.minimum(ri, rj)[apart])


def forest(query: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Pairs of sequences that join the same sets as the pairs ``(query[k], target[k])``:
    each sequence the pairs touch with the least member of its set, but that least one;
    ``(F, 2)`` int64, F at most one fewer than the sequences touched.

    Examples
    --------
    >>> forest(np.array([5, 7, 2]), np.array([7, 9, 4])).tolist()
    [[2, 4], [5, 7], [5, 9]]
    """
    members, local = np.unique(np.concatenate([query, target]), return_inverse=True)
    parent = np.arange(len(members), dtype=np.int64)
    union(parent, local[:len(query)], local[len(query):])
    joined = parent != np.arange(len(members))
    return np.stack([members[parent[joined]], members[joined]], axis=1).astype(np.int64)


def clusters(store: AllPairsStore) -> np.ndarray:
    """Single-linkage clusters of the kept pairs: a cluster id per sequence (input order),
    the clusters numbered in the input order of their first sequence (the roots). Reads
    the tiles' forests (``forest``), not their kept pairs."""
    parent = np.arange(store.sequences, dtype=np.int64)
    for edges in store.forests():
        union(parent, edges[:, 0], edges[:, 1])
    _, number = np.unique(_roots(parent), return_inverse=True)
    return number.astype(np.int64)


# ---------------------------------------------------------------------------------
# Jobs


def run_allpairs(job: AllPairsJob, client: Any, progress: Progress | None = None) -> AllPairsStore:
    """Take in the pieces of the sequences not yet in and index them, run every tile not
    yet done on ``client`` (a runner of ``engine.cluster`` or a ``distributed.Client``),
    then the clusters, then the gathers of the tiles' kept pairs (``gather``), then
    finalize the store; a finished store whose data match their digests is left as it
    is. A job whose input is refused (a malformed file, a name given twice) leaves no
    store that it made.

    ``progress("pieces", pieces done, pieces, 0)`` as pieces are taken in, then
    ``progress("allpairs", tiles done, tiles, pairs done)`` at the start of the tiles and
    as each tile finishes.
    """
    with discarded_if_refused(job.inputs, job.fresh):
        return _run(job, client, progress)


def take_sequences(job: AllPairsJob, where: Any, progress: Progress | None = None) -> None:
    """Take in the pieces of the sequences not yet in on ``where`` (a runner of
    ``engine.cluster``), then index them on a worker (``index_sequences``)."""
    take_in(job.inputs, job_store(job), where, progress)
    where.call(index_sequences, job)


def index_sequences(job: AllPairsJob) -> None:
    """Once every piece is in: index them (:meth:`AllPairsStore.index`).

    Raises
    ------
    InvalidInput
        A name given twice, and the job does not rename them.
    """
    store = job_store(job)
    store.index(bool(store.attrs["inputs"]["rename_duplicates"]))


def _run(job: AllPairsJob, client: Any, progress: Progress | None) -> AllPairsStore:
    import dask

    from swath.engine.cluster import runner
    from swath.storage.locking import store_lock

    where = runner(client)      # one runner: it keeps the gathers off lost copies
    with store_lock(job.store):
        store = job_store(job)
        if not job.fresh:
            store.recompute_damaged()
        if not store.indexed:
            take_sequences(job, where, progress)
            store = job_store(job)
        todo = np.flatnonzero(~store.done()).tolist()
        done = store.tiles - len(todo)
        pairs = int(store.counters()[:, COUNTERS.index("pairs")].sum())
        logger.info("%s: %d of %d tiles to run", job.store, len(todo), store.tiles)
        if progress:
            progress("allpairs", done, store.tiles, pairs)
        if store.attrs.get("complete") is True:     # finished and sound: nothing to gather
            return store

        def finished(result: tuple[int, int]) -> None:
            nonlocal done, pairs
            done, pairs = done + 1, pairs + result[0]
            if progress:
                progress("allpairs", done, store.tiles, pairs)

        tag = run_id()
        def tile(t: int, copy: str = "") -> Any:
            return dask.delayed(run_tile, pure=False)(
                job, t, dask_key_name=f"swath-allpairs-{tag}-{t}{copy}")

        started = time.perf_counter()
        # a tile straggling on a slow worker may be copied to an idle faster one
        where.each([tile(t) for t in todo], finished, copy=lambda i: tile(todo[i], "-copy"))
        ran = time.perf_counter()
        store = AllPairsStore.open(job.store, mode="r+", complete=False)
        store.check_done()
        if store.has_clusters:
            store.write_clusters(clusters(store))
        store.finalize(gather(job, where, tag, store.tile_starts()))
        totals = dict(zip(COUNTERS, store.counters().sum(axis=0).tolist(), strict=True))
        logger.info("%s: %d tiles in %.3f s, %d pairs: %d ruled out by length, %d by score, "
                    "%d traced, %d kept; finalized in %.3f s", job.store, len(todo),
                    ran - started, totals["pairs"], totals["length_filtered"],
                    totals["score_filtered"], totals["traced"], totals["kept"],
                    time.perf_counter() - ran)
    return store


def _gather(job: AllPairsJob, kind: str, chunks: range, starts: np.ndarray
            ) -> dict[str, dict[int, int]]:
    return job_store(job).gather_pairs(kind, chunks, starts)


def gather(job: AllPairsJob, client: Any, run_id: str, starts: np.ndarray
           ) -> dict[str, dict[int, int]]:
    """Gather the root's variables along ``pair`` from the tiles (``starts``:
    ``AllPairsStore.tile_starts``) as tasks on ``client``, the gathers of ``create_pairs``
    (a few chunks each), which run at once where there are workers for them (in this
    process, :func:`gather_threads` side by side: host work, not the GPU's); the digest
    of every chunk of every variable, for ``finalize``."""
    import dask

    from swath.engine.cluster import runner

    tasks = [dask.delayed(_gather, pure=False)(
        job, kind, chunks, starts, dask_key_name=f"swath-gather-{run_id}-{k}")
        for k, (kind, chunks) in enumerate(job_store(job).create_pairs())]
    digests: dict[str, dict[int, int]] = {}
    runner(client).each(tasks, functools.partial(merge_digests, digests),
                        threads=gather_threads())
    return digests


def gather_threads() -> int:
    """Gathers this process runs side by side: a thread a core, as many as a quarter of
    the memory available now holds at :data:`GATHER_BYTES` each (at least one)."""
    import psutil

    from swath.kernels.cores import cores

    return max(1, min(cores(), psutil.virtual_memory().available // 4 // GATHER_BYTES))


def prepare_allpairs(store_path: str, source: Source, scoring: Scoring, *, mode: Mode,
                     min_identity: float, iddef: str | int, block: int, scores: bool,
                     clusters: bool, device: str, rename_duplicates: bool = False,
                     overwrite: bool = False) -> AllPairsJob:
    """Create the store of a new all-pairs job, ready to take its sequences in (records
    in memory are in it already), or reopen it if it holds the same job.

    ``block`` (the API's ``ALLPAIRS_BLOCK``: 2,048) bounds a task's memory by its tile: about 40
    bytes a pair (scores, bounds, masks), 160 MiB for 2,048 x 2,048, whatever n; n = 10^5
    makes 1,225 tiles, few enough for Dask's scheduler, many enough to spread over a
    mixed cluster, and one tile of 16S genes (1,500 residues) is a few seconds of a GPU
    or minutes of two CPU cores, the work a killed job may lose.

    Raises
    ------
    OutputExists
        The path holds another job (other sequences, scoring or options) or anything
        but a swath store, and ``overwrite`` is false (see ``reopen_or_create``); or a
        store whose input file's pieces taken in differ from the file's now.
    """
    inputs = {"sequences": source.identity, "rename_duplicates": rename_duplicates,
              "scoring": scoring.to_dict(), "mode": mode, "min_identity": min_identity,
              "iddef": iddef, "block": block, "scores": scores, "clusters": clusters}
    sources = {SIDE: source}
    fresh = prepare_inputs(
        AllPairsStore, store_path, sources, inputs,
        lambda pieces, files, replace: AllPairsStore.create(
            store_path, pieces[SIDE], lambda store: write_held(store, sources), block=block,
            scores=scores, clusters=clusters, replace=replace, inputs=inputs, sources=files),
        what="allpairs", differs="other sequences, scoring or options", overwrite=overwrite)
    return dataclasses.replace(reopen_allpairs(store_path, device), fresh=fresh)


def reopen_allpairs(store_path: str, device: str = "auto") -> AllPairsJob:
    """The job an all-pairs store was created for (what ``resume`` runs)."""
    store = AllPairsStore.open(store_path, complete=False)
    inputs = store.attrs["inputs"]
    return AllPairsJob(str(store_path), store.scoring, store.mode, device,
                       float(inputs["min_identity"]), inputs["iddef"], bool(inputs["scores"]),
                       str(store.attrs["id"]))
