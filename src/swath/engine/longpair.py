"""One long pair, exactly: the matrix in tiles run as a Dask wavefront, then traceback.

# m, n: query and target lengths; th x tw: tile shape; TR x TC: tiles; s: strip width.

Phase 1 (StripedAlignment's forward pass over tiles): tile (ti, tj) reads the last row
of tile (ti - 1, tj) and the last column of tile (ti, tj - 1) from the store, runs the
tile kernel (strips of ``s`` columns), and writes its own last row and column with the
origin of every cell's optimal path (where it entered the tile), then its done mark.
The graph is the wavefront: each tile task depends on the tasks above and left of it;
tiles already done are read from the store, so a killed job resumes where it stopped.

Phase 2 (serial, cheap): from the end cell, follow origins tile to tile back to where
the alignment starts. Each tile the path crosses is a segment: its exit and entry.

Phase 3: every segment's tile is recomputed from its stored input boundary with
direction codes, all segments in parallel; the walk from the exit must reach the
entry. Each segment writes its CIGAR piece; the pieces join into the alignment.

The stored boundaries play the part of ChunkedAlignment's saved rows: phase 3
recomputes only the tiles the path crosses, each in ``th * tw / 2`` bytes of codes.

A scores-only job (StripedScore) runs phase 1 without origins, in tiles of any size,
and ends with the score and the end cell. Tiles run on the CPU or the GPU kernels
(their results are equal); phase 3 runs on the CPU.

A traceback job without origins (the GPU's default: origins multiply the GPU kernel's
work, and bound tiles to ``MAX_TILE``) runs phase 1 as a scores-only
job does, finds the path from the end cell by splits (``engine.pathsplit``: batches of
scores-only tiles, forward and backward, on one worker) and traces its small segments
in phase 3, a group of segments a task.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.alignment import Alignment, cigar_from_path, join_cigars
from swath.constants import MINUS_INFINITY, STATE_E, STATE_F, STATE_H, STATE_START, Mode
from swath.engine import pathsplit
from swath.errors import InvalidParameter
from swath.kernels import Backend, get_backend
from swath.kernels.backend import RowStream, SlabStreaming
from swath.kernels.tile_origins import MAX_TILE
from swath.progress import Progress
from swath.results.longpair import PairScore
from swath.scoring import Scoring
from swath.storage.longpair import AlignmentStore

logger = logging.getLogger(__name__)

DEFAULT_STRIP = 256
DEFAULT_TILE = 8192
SCORES_TILE = 16384        # scores only on the CPU: the tier lanes run 10x faster
GPU_TILE_ROWS = 786_432     # scores only on the GPU: the tallest tile (see default_tile)
GPU_ROW_STEP = 512          # a GPU tier's rows
SPANS_PER_TASK = 64         # phase 3 of a job without origins: segments a task traces


def default_tile(device: str, m: int, n: int, workers: int, origins: bool
                 ) -> tuple[int, int]:
    """The tile shape of a job that asks for none (see benchmarks/RESULTS.md).

    CPU: 8,192 a side with origins (a traceback's phase 3 computes tiles on its path
    again), 16,384 scores only (the tiles' boundaries written cost as much as the tier
    lanes' 8,192-side tile). GPU with origins: the largest tile whose origins fit 32 bits.
    GPU without (scores only, or the path found by splits): slabs, one tile column of
    the whole target, in tile rows of equal height, at most ``GPU_TILE_ROWS``, as many on
    each GPU (they stream into each other: ``run_slabs``). A tile's time grows with its
    width more than its height, and on an H100 a launch's time steps up every 528 tiers
    of 512 rows (a warp more in each resident block; one launch holds 2,112):
    ``GPU_TILE_ROWS`` keeps a slab within three steps (benchmarks/RESULTS.md).
    """
    if device != "gpu":
        side = DEFAULT_TILE if origins else SCORES_TILE
        return side, side
    if origins:
        return MAX_TILE, MAX_TILE
    workers = max(workers, 1)
    rows = -(-max(-(-m // GPU_TILE_ROWS), workers) // workers) * workers
    height = -(-m // rows)
    height = -(-height // GPU_ROW_STEP) * GPU_ROW_STEP
    return max(1, min(height, m)), max(1, n)


@dataclass(frozen=True)
class PairJob:
    """What every task of a long pair needs (picklable, small)."""

    store: str
    scoring: Scoring
    mode: Mode
    strip: int
    store_id: str      # the store's creation id: worker caches are keyed on it
    device: str = "cpu"
    traceback: bool = True
    origins: bool = True    # phase 1 records origins (else a traceback finds the path by splits)
    walk: bool = False      # without origins: the path walked back through tiles' codes

    @property
    def local(self) -> bool:
        return self.mode == "local"


@functools.lru_cache(maxsize=4)
def _worker_store(path: str, store_id: str) -> AlignmentStore:
    """The store, opened once per worker (arrays and their metadata stay open)."""
    store = AlignmentStore.open(path, mode="r+", complete=False)
    store.check_id(store_id)
    return store


def _open_worker(job: PairJob) -> AlignmentStore:
    return _worker_store(job.store, job.store_id)


def _open(path: str) -> AlignmentStore:
    return AlignmentStore.open(path, mode="r+", complete=False)


def _sequences(job: PairJob) -> tuple[np.ndarray, np.ndarray]:
    return _worker_sequences(job.store, job.store_id)


@functools.lru_cache(maxsize=4)
def _worker_sequences(path: str, store_id: str) -> tuple[np.ndarray, np.ndarray]:
    return _worker_store(path, store_id).sequences()


# ---------------------------------------------------------------------------------
# The matrix border and a tile's input boundary


def border_h(job: PairJob, index: np.ndarray, row: bool) -> np.ndarray:
    """H on row 0 (``row``) or column 0 at ``index``: free or charged as end gaps."""
    charged = job.mode == "global" or (job.mode == "semiglobal" and not row)
    values = -(job.scoring.gap_open + job.scoring.gap_extend * index.astype(np.int64))
    return np.where(charged & (index > 0), values, 0)


# The output boundaries (H and F, H and E) of the last tiles this worker computed: the
# tiles below and to the right, often on the same worker, read them here instead of
# from the store.
_RECENT: OrderedDict[tuple[str, str, int, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
_RECENT_TILES = 4
_RECENT_LOCK = threading.Lock()


def _remember(job: PairJob, ti: int, tj: int, bottom: np.ndarray, right: np.ndarray) -> None:
    with _RECENT_LOCK:
        _RECENT[job.store, job.store_id, ti, tj] = (bottom[:2].copy(), right[:2].copy())
        while len(_RECENT) > _RECENT_TILES:
            _RECENT.popitem(last=False)


def _recent(job: PairJob, ti: int, tj: int) -> tuple[np.ndarray, np.ndarray] | None:
    with _RECENT_LOCK:
        return _RECENT.get((job.store, job.store_id, ti, tj))


def tile_input(job: PairJob, store: AlignmentStore, ti: int, tj: int, above: bool = True
               ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(top_h, top_f), (left_h, left_e)`` of tile (ti, tj): from the border, from this
    worker's last tiles, or from the store; without ``above`` (the row above streams in
    on the GPU), of the top row only the corner."""
    m, n = (len(s) for s in _sequences(job))
    th, tw = store.tile
    i0, j0 = ti * th, tj * tw
    h, w = min(th, m - i0), min(tw, n - j0)
    top_f = np.full(w + 1 if above else 1, MINUS_INFINITY, dtype=np.int64)
    if not above:
        top_h = np.array([_corner(job, store, ti, tj)], dtype=np.int64)
    elif ti == 0:
        top_h = border_h(job, np.arange(j0, j0 + w + 1), row=True)
    else:
        recent = _recent(job, ti - 1, tj)
        last = recent[0] if recent else store.bottom(ti - 1, j0, j0 + w)
        top_h = np.empty(w + 1, dtype=np.int64)
        top_h[1:], top_f[1:] = last[0], last[1]
        top_h[0] = _corner(job, store, ti, tj)
    if tj == 0:
        left_h = border_h(job, np.arange(i0 + 1, i0 + h + 1), row=False)
        left_e = np.full(h, MINUS_INFINITY, dtype=np.int64)
    else:
        recent = _recent(job, ti, tj - 1)
        left_h, left_e = recent[1] if recent else store.right(tj - 1, i0, i0 + h)[:2]
    return (top_h, top_f), (np.ascontiguousarray(left_h), np.ascontiguousarray(left_e))


def _corner(job: PairJob, store: AlignmentStore, ti: int, tj: int) -> int:
    """H at the top left corner of tile (ti, tj), ti > 0: the last cell of tile
    (ti - 1, tj - 1), or the border's."""
    i0 = ti * store.tile[0]
    if tj == 0:
        return int(border_h(job, np.array([i0]), row=False)[0])
    recent = _recent(job, ti - 1, tj - 1)
    if recent:
        return int(recent[1][0, -1])
    return int(store.right(tj - 1, i0 - 1, i0)[0, 0])


def _tile_sequences(job: PairJob, store: AlignmentStore, ti: int, tj: int
                    ) -> tuple[np.ndarray, np.ndarray, int, int]:
    query, target = _sequences(job)
    th, tw = store.tile
    i0, j0 = ti * th, tj * tw
    return query[i0:i0 + th], target[j0:j0 + tw], i0, j0


# ---------------------------------------------------------------------------------
# Phase 1


def run_tile(job: PairJob, ti: int, tj: int, *after: Any) -> int:
    """Phase 1 on tile (ti, tj): write its output boundary and best cell; its cells."""
    store = _open_worker(job)
    tile = compute_tile(job, store, ti, tj)
    write_tile(job, store, ti, tj, tile)
    return tile[-1]


Tile = tuple[np.ndarray, np.ndarray, tuple[int, int, int, int], int]
Streams = tuple[RowStream | None, RowStream]     # a slab's row above, its own last row


def _slabs(backend: Backend) -> SlabStreaming:
    """The slab streaming of ``backend``, which jobs stream tile rows on only where it
    has it."""
    if backend.slabs is None:
        raise RuntimeError(f"swath bug: tile rows streamed on the {backend.name} backend")
    return backend.slabs


def compute_tile(job: PairJob, store: AlignmentStore, ti: int, tj: int,
                 streams: Streams | None = None) -> Tile:
    """Tile (ti, tj)'s output boundary, best cell and cells. ``streams`` (a backend with
    ``slabs``, scores only): the ``RowStream`` its row above comes from (or None) and the
    one its last row goes to."""
    started = time.perf_counter()
    q, t, i0, j0 = _tile_sequences(job, store, ti, tj)
    top, left = tile_input(job, store, ti, tj, above=not (streams and streams[0]))
    read = time.perf_counter()
    backend = get_backend(job.device)
    if job.origins:
        bottom, right, best = backend.tile_forward(q, t, job.scoring, job.mode, (i0, j0),
                                                   len(_sequences(job)[1]), job.strip, top,
                                                   left)
    else:
        if streams:
            bottom, right, (score, i, j) = _slabs(backend).tile_scores(
                q, t, job.scoring, job.mode, job.strip, top, left, stream_in=streams[0],
                stream_out=streams[1])
        else:
            bottom, right, (score, i, j) = backend.tile_scores(q, t, job.scoring, job.mode,
                                                               job.strip, top, left)
        best = (score, i0 + i, j0 + j, -1) if i >= 0 else (score, -1, -1, -1)
    computed = time.perf_counter()
    logger.debug("tile (%d, %d) on the %s: inputs %.3f s, kernel %.3f s", ti, tj, job.device,
                 read - started, computed - read)
    return bottom, right, best, len(q) * len(t)


def write_tile(job: PairJob, store: AlignmentStore, ti: int, tj: int, tile: Tile) -> None:
    """Store a computed tile (then its done mark), and keep its boundary in memory."""
    started = time.perf_counter()
    bottom, right, best, *_ = tile
    store.write_tile(ti, tj, bottom, right, best)
    _remember(job, ti, tj, bottom, right)
    logger.debug("tile (%d, %d) written in %.3f s", ti, tj, time.perf_counter() - started)


def run_slabs(job: PairJob, gpus: int) -> int:
    """Phase 1 of a GPU job in one tile column, on ``gpus`` GPUs of this host, in one task:
    tile row ti runs on GPU ``ti % gpus``, and its launch reads the row above from the
    launch of tile row ti - 1 as that one computes it (pinned host memory), so that the GPUs
    work side by side within a tile's pipeline fill of each other instead of a tile
    apart. Tile rows are stored as the wavefront stores them. Their cells."""
    from concurrent.futures import ThreadPoolExecutor

    from swath.kernels import gpu_count

    slabs = _slabs(get_backend(job.device))
    store = _open_worker(job)
    pending = np.flatnonzero(~store.tiles_done()[:, 0]).tolist()
    if gpu_count() < gpus:
        logger.warning("this worker sees %d of the cluster's %d GPUs: tile rows run on those",
                       gpu_count(), gpus)
        gpus = gpu_count()
    n = len(_sequences(job)[1])
    _load_kernels(job, gpus)
    streams = {ti: slabs.row_stream(n) for ti in pending}
    failed = threading.Event()

    def run(g: int) -> int:
        cells = 0
        mine = [ti for ti in pending if ti % gpus == g]
        try:
            with slabs.on_device(g):
                for ti in mine:
                    tile = compute_tile(job, store, ti, 0, (streams.get(ti - 1), streams[ti]))
                    if failed.is_set():       # its input may be a failed launch's
                        return cells
                    write_tile(job, store, ti, 0, tile)
                    cells += tile[-1]
        except BaseException:
            failed.set()               # let the launches that wait on these rows finish
            for ti in mine:
                streams[ti].give_up()
            raise
        return cells

    with ThreadPoolExecutor(gpus) as pool:
        return sum(pool.map(run, range(gpus)))


def _load_kernels(job: PairJob, gpus: int) -> None:
    """Run the job's tile kernel on a one-cell tile on each of the first ``gpus`` GPUs, so
    that no GPU loads a module while another's launch waits on it."""
    q, t = (s[:1] for s in _sequences(job))
    top = (np.zeros(2, dtype=np.int64), np.full(2, MINUS_INFINITY, dtype=np.int64))
    left = (np.zeros(1, dtype=np.int64), np.full(1, MINUS_INFINITY, dtype=np.int64))
    backend = get_backend(job.device)
    slabs = _slabs(backend)
    for g in range(gpus):
        with slabs.on_device(g):
            backend.tile_scores(q, t, job.scoring, job.mode, job.strip, top, left)


def tile_graph(job: PairJob, store: AlignmentStore) -> dict[tuple[int, int], Any]:
    """Delayed tasks of the tiles not yet done, each after the ones above and left of it."""
    import dask

    run_id = uuid.uuid4().hex[:8]
    done = store.tiles_done()
    tasks: dict[tuple[int, int], Any] = {}
    for ti in range(done.shape[0]):
        for tj in range(done.shape[1]):
            if done[ti, tj]:
                continue
            after = [tasks[d] for d in ((ti - 1, tj), (ti, tj - 1)) if d in tasks]
            tasks[ti, tj] = dask.delayed(run_tile, pure=False)(
                job, ti, tj, *after, dask_key_name=f"swath-tile-{run_id}-{ti}-{tj}")
    return tasks


# ---------------------------------------------------------------------------------
# Phase 2


def _cell(code: int, n: int) -> tuple[int, int, int]:
    """(row, column, state) of an origin code."""
    cell, state = divmod(int(code), 4)
    i, j = divmod(cell, n + 1)
    return i, j, state


def _code(i: int, j: int, state: int, n: int) -> int:
    return (i * (n + 1) + j) * 4 + state


def end_cell(job: PairJob, store: AlignmentStore) -> tuple[int, int, int, int]:
    """``(score, row, column, origin)`` where the optimal alignment ends (its tie rules:
    the first best cell in row-major order; the first best column of the last row)."""
    m, n = (len(s) for s in _sequences(job))
    if job.local:
        best = store.tile_best().reshape(-1, 4)
        found = best[best[:, 1] >= 0]
        if not len(found):
            return 0, 0, 0, _code(0, 0, STATE_START, n)
        top = found[np.lexsort((found[:, 2], found[:, 1], -found[:, 0]))[0]]
        return int(top[0]), int(top[1]), int(top[2]), int(top[3])
    last = store.bottom(store.tiles[0] - 1, 0, n)
    j = n if job.mode == "global" else int(np.argmax(last[0])) + 1
    return int(last[0, j - 1]), m, j, int(last[2, j - 1]) if store.origins else -1


def origin_of(store: AlignmentStore, i: int, j: int, state: int) -> int:
    """The stored origin of cell (i, j) in ``state``, a cell of some tile's output boundary."""
    th, tw = store.tile
    if state in (STATE_H, STATE_F) and i % th == 0:  # the last row of tile row i / th - 1
        return int(store.bottom(i // th - 1, j - 1, j)[2 if state == STATE_H else 3, 0])
    if state in (STATE_H, STATE_E) and j % tw == 0:  # the last column of tile column j / tw - 1
        return int(store.right(j // tw - 1, i - 1, i)[2 if state == STATE_H else 3, 0])
    raise RuntimeError(f"cell ({i}, {j}) state {state} is on no stored boundary")


def trace_segments(job: PairJob, store: AlignmentStore) -> tuple[np.ndarray, dict[str, int]]:
    """Phase 2: the tiles the path crosses, from its end, followed through the stored
    origins: rows (ti, tj, exit, entry)."""
    best = end_cell(job, store)

    def entry(ti: int, tj: int, i: int, j: int, state: int) -> int:
        return origin_of(store, i, j, state) if (i, j) != best[1:3] else best[3]

    return _follow(job, store, best, entry)


def walk_segments(job: PairJob, store: AlignmentStore
                  ) -> tuple[np.ndarray, dict[str, int], list[str]]:
    """Phase 2 of a job that walks (no origins, on the CPU): the tiles the path crosses,
    each recomputed with direction codes from its stored boundary and walked to where the
    path enters it; rows as :func:`trace_segments`', and each segment's CIGAR piece (the
    walk's: phase 3 has nothing left to trace)."""
    pieces: list[str] = []

    def entry(ti: int, tj: int, i: int, j: int, state: int) -> int:
        piece, code = _tile_walk(job, store, ti, tj, i, j, state)
        pieces.append(piece)
        return code

    segments, end = _follow(job, store, end_cell(job, store), entry)
    return segments, end, pieces


def _follow(job: PairJob, store: AlignmentStore, best: tuple[int, int, int, int],
            entry: Callable[[int, int, int, int, int], int]
            ) -> tuple[np.ndarray, dict[str, int]]:
    """From the end cell ``best`` back: each tile the path crosses, and where it enters
    the tile (``entry(ti, tj, i, j, state)`` of the cell and state it leaves by, an
    origin code); the segments and the end."""
    n = len(_sequences(job)[1])
    th, tw = store.tile
    score, i, j, _ = best
    segments: list[tuple[int, int, int, int]] = []
    state = STATE_H
    while i > 0 and j > 0 and state != STATE_START:
        ti, tj = (i - 1) // th, (j - 1) // tw
        origin = entry(ti, tj, i, j, state)
        segments.append((ti, tj, _code(i, j, state, n), origin))
        i, j, state = _cell(origin, n)
    return (np.array(segments, dtype=np.int64).reshape(-1, 4),
            {"score": score, "query_end": best[1], "target_end": best[2]})


def split_segments(job: PairJob) -> tuple[np.ndarray, dict[str, int]]:
    """Phase 2 of a job without origins (on a worker of its device): the path's segments
    found by splits, rows ``(-1, -1, exit, entry)`` from the end, and its end."""
    store = _open_worker(job)
    query, target = _sequences(job)
    n = len(target)
    score, i, j, _ = end_cell(job, store)
    spans = pathsplit.find_path(query, target, job.scoring, job.mode, (score, i, j),
                                get_backend(job.device), slab=store.tile[0])
    rows = [(-1, -1, _code(s.b, s.d, s.end, n), _code(s.a, s.c, s.start, n))
            for s in reversed(spans)]
    return (np.array(rows, dtype=np.int64).reshape(-1, 4),
            {"score": score, "query_end": i, "target_end": j})


# ---------------------------------------------------------------------------------
# Phase 3


def run_segments(job: PairJob, first: int, segments: np.ndarray) -> int:
    """Phase 3 on segments ``first ..``: write their CIGAR pieces; how many."""
    store = _open_worker(job)
    if job.origins or job.walk:
        pieces = [segment_piece(job, store, tuple(int(v) for v in row)) for row in segments]
    else:
        query, target = _sequences(job)
        n = len(target)

        def trace(row: np.ndarray) -> str:
            b, d, end = _cell(row[2], n)
            a, c, start = _cell(row[3], n)
            return pathsplit.trace_span(pathsplit.Span(a, c, b, d, start, end, 0), query,
                                        target, job.scoring)

        # a GPU worker's one task thread uses every core
        pieces = pathsplit.cpu_codes().on_every_core(trace, segments)
    store.write_pieces(first, pieces)
    return len(pieces)


def segment_piece(job: PairJob, store: AlignmentStore, segment: tuple[int, ...]) -> str:
    """A segment of a tile (a job with origins, or that walks): recompute its tile with
    codes, walk exit to entry; its CIGAR piece."""
    ti, tj, exit_code, entry_code = segment
    n = len(_sequences(job)[1])
    piece, code = _tile_walk(job, store, ti, tj, *_cell(exit_code, n))
    want, got = _cell(entry_code, n), _cell(code, n)
    if want[:2] != got[:2] or (want[2] != STATE_START and want[2] != got[2]):
        raise RuntimeError(f"{job.store}: tile ({ti}, {tj}): the walk left at {got}, phase 1 "
                           f"recorded {want}")
    return piece


def _tile_walk(job: PairJob, store: AlignmentStore, ti: int, tj: int, i: int, j: int,
               state: int) -> tuple[str, int]:
    """Tile (ti, tj) recomputed with codes from its stored boundary and walked back from
    cell (i, j) in ``state``: the CIGAR piece, and the origin code where the path enters
    the tile (STATE_START where a local alignment starts inside it)."""
    codes = pathsplit.cpu_codes()
    q, t, i0, j0 = _tile_sequences(job, store, ti, tj)
    dirs = codes.tile_codes(q, t, job.scoring, job.mode, job.strip,
                            *tile_input(job, store, ti, tj))
    ops, ri, rj, entered = codes.walk_tile(dirs, i - i0, j - j0, state)
    inside = STATE_START if ri > 0 and rj > 0 else entered
    return cigar_from_path(ops, q, t, ri, rj), _code(i0 + ri, j0 + rj, inside,
                                                     len(_sequences(job)[1]))


def assemble(job: PairJob, store: AlignmentStore) -> Alignment:
    """Join the pieces, add the end gaps the mode charges, and finish the store."""
    segments = store.segments()
    assert segments is not None
    end = store.attrs["end"]
    n = len(_sequences(job)[1])
    pieces = store.pieces()[::-1]
    i, j = (end["query_end"], end["target_end"])
    if len(segments):
        i, j, _ = _cell(segments[-1, 3], n)
    lead = ""
    if job.mode != "local":    # the walk's end gaps: target first, then query (as _walk)
        lead = (f"{j}D" if j and job.mode == "global" else "") + (f"{i}I" if i else "")
        j = 0 if job.mode == "global" else j
        i = 0
    cigar = join_cigars([lead, *pieces])
    aln = Alignment(int(end["score"]), i, int(end["query_end"]), j, int(end["target_end"]),
                    cigar, job.mode)
    store.finish({"score": aln.score, "query_start": aln.query_start,
                  "query_end": aln.query_end, "target_start": aln.target_start,
                  "target_end": aln.target_end, "identity": aln.identity}, cigar)
    return aln


# ---------------------------------------------------------------------------------
# The job


def run_longpair(job: PairJob, client: Any,
                 progress: Progress | None = None
                 ) -> Alignment | PairScore:
    """Run (or finish) every phase on ``client``; the alignment (the score and end cell
    of a scores-only job).

    ``progress(phase, done, total, cells)`` is called as tiles, the path's splits (a job
    without origins) and segments finish.
    """
    from swath.engine.cluster import InProcess, runner
    from swath.storage.locking import store_lock

    with store_lock(job.store):
        store = _open(job.store)
        store.check_id(job.store_id)
        store.recompute_damaged()
        if not job.traceback:
            if "alignment" not in store.attrs:
                _run_tiles(job, store, client, progress)
                score, i, j, _ = end_cell(job, store)
                store.finish({"score": score, "query_end": i, "target_end": j}, None)
            end = store.attrs["alignment"]
            return PairScore(int(end["score"]), int(end["query_end"]), int(end["target_end"]),
                             job.mode)
        if store.segments() is None:
            if not (job.origins or job.walk) and isinstance(runner(client), InProcess):
                # phase 3's CPU kernels load here while phases 1 and 2 run on the GPU
                threading.Thread(target=pathsplit.load_trace_kernels,
                                 args=(*_sequences(job), job.scoring)).start()
            _run_tiles(job, store, client, progress)
            if job.origins:
                store.write_segments(*trace_segments(job, store), per_chunk=1)
            elif job.walk:
                segments, end, pieces = walk_segments(job, store)
                store.write_segments(segments, end, per_chunk=max(1, len(segments)))
                if pieces:
                    store.write_pieces(0, pieces)
            else:
                if progress:
                    progress("splits", 0, 1, 0)
                segments, end = runner(client).call(split_segments, job)
                store.write_segments(segments, end, per_chunk=SPANS_PER_TASK)
                if progress:
                    progress("splits", 1, 1, 0)
        _run_segments(job, store, client, progress)
        return assemble(job, _open(job.store))


def _run_segments(job: PairJob, store: AlignmentStore, client: Any,
                  progress: Progress | None) -> None:
    """Phase 3: the segments not yet traced, a chunk of them a task, on ``client``."""
    import dask

    from swath.engine.cluster import runner

    segments = store.segments()
    assert segments is not None
    per = store.segments_per_chunk
    done_marks = store.segments_done()
    pending = [k for k in range(0, len(segments), per) if not done_marks[k:k + per].all()]
    if not pending:
        return
    run_id = uuid.uuid4().hex[:8]
    done = len(segments) - sum(len(segments[k:k + per]) for k in pending)

    def finished(traced: int) -> None:
        nonlocal done
        done += traced
        if progress:
            progress("segments", done, len(segments), 0)

    runner(client).each([dask.delayed(run_segments, pure=False)(
        job, k, segments[k:k + per], dask_key_name=f"swath-segment-{run_id}-{k}")
        for k in pending], finished)


def _run_tiles(job: PairJob, store: AlignmentStore, client: Any,
               progress: Progress | None) -> None:
    """Phase 1: the tiles not yet done, as a wavefront on ``client`` (one tile column on
    several GPUs: streaming tile rows, ``run_slabs``)."""
    from swath.engine.cluster import runner

    where = runner(client)
    rows, cols = store.tiles
    gpus = where.workers if job.device == "gpu" else 1
    if gpus > 1 and cols == 1 and not job.origins:
        _run_slabs(job, store, where, gpus, progress)
        return
    tasks = tile_graph(job, store)
    done, cells = rows * cols - len(tasks), 0
    if progress:
        progress("tiles", done, rows * cols, cells)

    def finished(tile_cells: int) -> None:
        nonlocal done, cells
        done += 1
        cells += tile_cells
        if progress:
            progress("tiles", done, rows * cols, cells)

    where.each(list(tasks.values()), finished)


def _run_slabs(job: PairJob, store: AlignmentStore, where: Any, gpus: int,
               progress: Progress | None) -> None:
    """Phase 1 as one ``run_slabs`` task, its progress read from the store's done marks
    as it runs."""
    before = store.tiles_done()[:, 0]
    m, n = (len(s) for s in _sequences(job))
    heights = np.minimum(store.tile[0], m - store.tile[0] * np.arange(len(before)))

    def report() -> None:
        if progress:
            done = store.tiles_done()[:, 0]
            progress("tiles", int(done.sum()), len(done),
                     int(heights[done & ~before].sum()) * n)

    report()
    if before.all():
        return
    where.call(run_slabs, job, gpus, poll=report if progress else None)
    report()


def tile_device(device: str) -> str:
    """"cpu" or "gpu": where tiles of a job on ``device`` ("auto" too) run."""
    return get_backend(device).name


def stored_tile(path: str) -> tuple[int, int] | None:
    """The tile shape of an alignment store already at ``path`` (a job to go on with)."""
    from swath.errors import StoreNotFound
    from swath.storage.common import store_layout

    try:
        layout, _ = store_layout(path)
    except StoreNotFound:
        return None
    return AlignmentStore.open(path, complete=False).tile if layout == "alignment" else None


def path_method(device: str, traceback: bool, mode: Mode, scoring: Scoring,
                query: np.ndarray, target: np.ndarray) -> tuple[bool, bool]:
    """``(origins, walk)`` of a new job on ``device`` ("cpu" or "gpu"): a CPU traceback of a
    local pair of a match/mismatch matrix walks its path back through the tiles (its
    tiles run in the tier lanes, without origins, ten times the general kernel's speed),
    other CPU tracebacks record origins, the GPU's find the path by splits."""
    codes = get_backend(device).codes
    walk = traceback and codes is not None and codes.walks(scoring, mode, query, target)
    return traceback and device == "cpu" and not walk, walk


def check_range(m: int, n: int, scoring: Scoring) -> None:
    """Refuse an ``m x n`` pair whose scores may leave the tile kernels' int32 range."""
    from swath.kernels.bounds import fits_every_mode

    if not fits_every_mode(m, n, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                           np.int32, floor=MINUS_INFINITY):
        raise InvalidParameter(f"a {m} x {n} pair's scores may leave the tile kernels' range "
                               f"({MINUS_INFINITY} to 2^31)")


def prepare_longpair(store_path: str, query: np.ndarray, target: np.ndarray,
                     scoring: Scoring, *, mode: Mode, tile: tuple[int, int], strip: int,
                     names: tuple[str, str], device: str = "cpu", traceback: bool = True,
                     origins: bool | None = None, walk: bool = False,
                     overwrite: bool = False) -> PairJob:
    """Create the store of a new long-pair job, or reopen one holding the same job.

    ``origins`` (default: with a traceback) says whether phase 1 records origins, or a
    traceback finds the path by splits, or (``walk``, CPU tiles) walks it back through
    the tiles' direction codes."""
    from swath.storage.common import array_digest
    from swath.storage.creation import reopen_or_create
    from swath.storage.longpair import LAYOUT, VERSION

    origins = traceback if origins is None else origins and traceback
    if origins and max(tile) > MAX_TILE:
        raise InvalidParameter(f"tile_size {max(tile)} is above the limit of tiles with "
                               f"origins ({MAX_TILE}); scores-only and GPU jobs take any size")
    check_range(len(query), len(target), scoring)
    inputs = {"query_sha256": array_digest(query), "target_sha256": array_digest(target),
              "scoring": scoring.to_dict(), "mode": mode, "strip": strip, "tile": list(tile),
              "traceback": traceback, "origins": origins}
    if walk and traceback and not origins:
        inputs["walk"] = True
    reopen_or_create(store_path, LAYOUT, VERSION, inputs, lambda replace: AlignmentStore.create(
        store_path, query, target, tile=tile, origins=origins, replace=replace, inputs=inputs,
        names=list(names), id=uuid.uuid4().hex), what="alignment",
        differs="other sequences, scoring or tiles", overwrite=overwrite)
    return reopen_longpair(str(store_path), device)


def reopen_longpair(store_path: str, device: str = "cpu") -> PairJob:
    """The job a store was written for (``swath resume``), its tiles on ``device``."""
    store = AlignmentStore.open(store_path, complete=False)
    inputs = store.attrs["inputs"]
    return PairJob(str(store_path), store.scoring, store.mode, int(inputs["strip"]),
                   str(store.attrs["id"]), device, bool(inputs.get("traceback", True)),
                   store.origins, bool(inputs.get("walk", False)))
