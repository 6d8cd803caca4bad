"""Database search as a Dask graph: score, keep the top hits, align them, write.

# Q: queries, B: queries of a work unit, P: database partitions, k: hits kept.

For every unfinished work unit (a block of B queries) the graph holds

    swath-score-{run}-{unit}-{p}  scores of the unit's queries against partition p; the
                                  k best (score, then lowest target id) of each query
    swath-top-{run}-{unit}-...    a tree of pairwise merges down to one top-k per query
    swath-align-{run}-{unit}      the kept hits aligned with traceback (batched kernel)
    swath-write-{run}-{unit}      the unit's chunks of the result store, then its done mark

Tasks carry arrays, never lists of strings. Workers keep the database partitions they
read in a process-local cache, so a long job reads (or uploads to its GPU) each
partition once per worker. A unit already marked done is not in the graph: running
the same job again, or ``resume``, finishes only what is missing.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.alignment import packed_cigars
from swath.constants import Mode
from swath.engine.aligned import ALIGNMENT_FIELDS, alignment_fields
from swath.engine.ranking import by_evalue, pool_width
from swath.kernels import get_backend, top_hits
from swath.kernels.backend import ResidentTargets, TargetSet
from swath.progress import Progress
from swath.results.search import HeldHits
from swath.scoring import Scoring
from swath.sequences import SequenceSet, slice_concatenated
from swath.statistics import KarlinAltschul
from swath.storage.common import open_group
from swath.storage.database import Database
from swath.storage.results import SearchStore, empty_hits

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchJob:
    """Everything a task needs to know about a search (picklable, small)."""

    store: str
    database: str
    scoring: Scoring
    mode: Mode
    device: str
    top_k: int
    max_evalue: float | None
    statistics: dict[str, Any] | None   # KarlinAltschul.from_dict's fields (local mode)
    database_sha256: str                # the database the search started with
    store_id: str                       # the store's creation id (never write another)
    # this process scores every partition (a job in this process): each score task starts
    # reading the next unread partition while it computes
    read_ahead: bool = False
    max_hsps: int = 1                   # alignments kept a subject


@functools.lru_cache(maxsize=4)
def _database(path: str) -> Database:
    return Database.open(path)


def _job_database(job: SearchJob) -> Database:
    """The job's database as this process has it open, checked against the store on disk:
    one rebuilt from another file since the search started is refused; one rebuilt from
    the same file (another creation id) is opened again."""
    from swath.errors import InputChanged
    from swath.storage.common import swath_attrs

    current = swath_attrs(open_group(job.database))
    if current.get("sha256") != job.database_sha256:
        raise InputChanged(f"{job.store}: its database {job.database} has changed since "
                           "the search started (another source file); rebuild it from "
                           "the original, or search again into a new store")
    if _database(job.database).attrs.get("id") != current.get("id"):
        _database.cache_clear()
        _resident_partition.cache_clear()
        _PARTITIONS.forget(job.database)
    return _database(job.database)


class _Partitions:
    """The database partitions this process has read, or is reading, on reader threads
    of its own (the last ``keep`` asked for), so that one task's read overlaps another's
    kernels."""

    def __init__(self, readers: int = 2, keep: int = 256) -> None:
        self._readers = readers
        self._keep = keep
        self._pool: ThreadPoolExecutor | None = None
        self._reads: OrderedDict[tuple[str, int], Future[Any]] = OrderedDict()
        self._asked: dict[str, set[int]] = {}     # every partition ever asked for, by path
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        # per process: tasks reach the module's instance, but a task function pickled by
        # value (a wrapped or replaced score_partition) carries its globals along
        return (_process_partitions, ())

    def _start(self, path: str, p: int) -> Future[Any]:
        with self._lock:
            read = self._reads.get((path, p))
            if read is None:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self._readers,
                                                    thread_name_prefix="swath-read")
                self._asked.setdefault(path, set()).add(p)
                read = self._reads[(path, p)] = self._pool.submit(_database(path).partition, p)
                while len(self._reads) > self._keep:
                    self._reads.popitem(last=False)
            self._reads.move_to_end((path, p))
            return read

    def get(self, path: str, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Partition ``p`` of the database at ``path`` (``Database.partition``); a read
        that failed is forgotten, so that the next task reads again."""
        read = self._start(path, p)
        try:
            return read.result()
        except BaseException:
            with self._lock:
                if self._reads.get((path, p)) is read:
                    del self._reads[(path, p)]
                    self._asked[path].discard(p)
            raise

    def forget(self, path: str) -> None:
        """Drop what was read of the database at ``path`` (it was replaced)."""
        with self._lock:
            for key in [key for key in self._reads if key[0] == path]:
                del self._reads[key]
            self._asked.pop(path, None)

    def read_ahead(self, path: str) -> None:
        """Start reading the first partition of ``path`` never asked for, if any (one the
        cache has let go is not read again ahead of need)."""
        partitions = _database(path).partitions
        with self._lock:
            asked = self._asked.get(path, set())
            unread = next((p for p in range(partitions) if p not in asked), None)
        if unread is not None:
            self._start(path, unread)


_PARTITIONS = _Partitions()


def _process_partitions() -> _Partitions:
    return _PARTITIONS


def _partition(path: str, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _PARTITIONS.get(path, p)


def _fetch(path: str, records: np.ndarray) -> list[np.ndarray]:
    """Target sequences by record index, read from the worker's cached partitions."""
    parts, index = _database(path).locate(records)
    out = []
    for p, i in zip(parts.tolist(), index.tolist(), strict=True):
        residues, offsets, _ = _partition(path, p)
        out.append(residues[offsets[i]:offsets[i + 1]])
    return out


@functools.lru_cache(maxsize=64)
def _resident_partition(path: str, p: int, resident: ResidentTargets) -> TargetSet:
    """Partition ``p`` resident on this worker's device, with its record ids (uploaded
    once per worker)."""
    t_res, t_off, ids = _partition(path, p)
    return resident.upload(t_res, t_off, ids)


def _spouge(job: SearchJob) -> KarlinAltschul | None:
    """The job's statistics where its e-values are Spouge's (they depend on the subject's
    length, so that the order by score is not the order by e-value), else None."""
    if job.statistics is None:
        return None
    params = KarlinAltschul.from_dict(job.statistics)
    return params if params.gumbel is not None else None


def pool(job: SearchJob) -> int:
    """Hits of each query the score tasks keep, best by score (:mod:`swath.engine.ranking`)."""
    return pool_width(job.top_k, _job_database(job).sequences, _spouge(job) is not None)


def score_partition(job: SearchJob, q_res: np.ndarray, q_off: np.ndarray, p: int,
                    k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (scores, target ids) by score of each query against database partition
    ``p``."""
    started = time.perf_counter()
    _job_database(job)
    t_res, t_off, ids = _partition(job.database, p)
    read = time.perf_counter()
    if job.read_ahead:
        _PARTITIONS.read_ahead(job.database)
    backend = get_backend(job.device)
    resident = backend.resident
    if resident is not None:
        targets = _resident_partition(job.database, p, resident)
        uploaded = time.perf_counter()
        queries = [q_res[q_off[qi]:q_off[qi + 1]] for qi in range(len(q_off) - 1)]
        rows = resident.score_queries(targets, queries, job.scoring, job.mode)
        top = resident.top_hits(rows, targets, k)
    else:
        uploaded = read
        scores = backend.score_many(q_res, q_off, t_res, t_off, job.scoring, job.mode)
        top = top_hits.top(scores, np.broadcast_to(ids, scores.shape), k)
    logger.debug("partition %d: read %.3f s, backend and upload %.3f s, %d queries scored "
                 "in %.3f s", p, read - started, uploaded - read, len(q_off) - 1,
                 time.perf_counter() - uploaded)
    return top


def merge_top(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], k: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """The k best of two top-k lists (same tie rule)."""
    return top_hits.top(np.concatenate([a[0], b[0]], 1), np.concatenate([a[1], b[1]], 1), k)


def align_hits(job: SearchJob, q_res: np.ndarray, q_off: np.ndarray,
               top: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    """The block of queries' hits, from each query's pool ``top`` (the best by score):
    the ``top_k`` best subjects by e-value (:mod:`swath.engine.ranking`), aligned, each
    with up to ``max_hsps`` alignments (:func:`_with_more_hsps`), with their statistics."""
    from swath.statistics import bit_score, search_evalue

    started = time.perf_counter()
    scores, ids = _ranked(job, q_res, q_off, top)
    hits = empty_hits(len(ids), job.top_k * job.max_hsps)
    rows, ranks = np.nonzero(ids >= 0)
    if not len(rows):
        return hits
    db = _job_database(job)
    targets = _fetch(job.database, ids[rows, ranks])
    queries = [q_res[q_off[r]:q_off[r + 1]] for r in rows]
    t_off = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    p_off = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
    fields = alignment_fields(job.device, *get_backend(job.device).align_batch(
        np.concatenate(queries), p_off, np.concatenate(targets), t_off, job.scoring,
        job.mode))
    if not np.array_equal(fields["score"], scores[rows, ranks]):
        from swath.errors import StoreDamaged

        raise StoreDamaged(f"{job.database}: hits align to other scores than they were found "
                           "with (the database's arrays disagree; run `swath verify "
                           f"{job.database}`)")
    hit = np.arange(len(rows))              # each alignment's hit (its subject)
    if job.max_hsps > 1:
        hit, fields = _with_more_hsps(job, queries, targets, fields)
    rows, subjects = rows[hit], ids[rows, ranks][hit]
    slots = np.arange(len(hit)) - np.searchsorted(rows, rows)     # from 0 in each query
    for name in ALIGNMENT_FIELDS:       # the CIGARs packed, as the store keeps them
        hits[name][rows, slots] = packed_cigars(fields[name]) if name == "cigar" else fields[name]
    hits["target"][rows, slots] = subjects
    hits["target_name"][rows, slots] = db.names(subjects)
    if job.statistics is not None:
        params = KarlinAltschul.from_dict(job.statistics)
        lengths = np.diff(q_off)
        subject_lengths = np.diff(t_off)[hit]
        got = fields["score"]
        for r in np.unique(rows).tolist():
            mine = rows == r
            hits["bitscore"][r, slots[mine]] = bit_score(got[mine], params)
            hits["evalue"][r, slots[mine]] = search_evalue(
                got[mine], int(lengths[r]), subject_lengths[mine], db.residues, db.sequences,
                params)
        if job.max_evalue is not None:
            drop = (hits["evalue"] > job.max_evalue) & (hits["target"] >= 0)
            _drop(hits, drop)
    logger.debug("%d hits aligned in %.3f s", len(rows), time.perf_counter() - started)
    return hits


def _with_more_hsps(job: SearchJob, queries: list[np.ndarray], targets: list[np.ndarray],
                    fields: dict[str, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Each hit's alignment, then up to ``max_hsps - 1`` further ones of its pair, none
    through a cell of those before it (the CPU backend's ``hsps``, also for GPU jobs):
    the hit of each alignment, and the alignments' fields, hit by hit."""
    further = get_backend("cpu").hsps
    assert further is not None
    hit: list[int] = []
    found: list[tuple[int, int, int, int, int, str]] = []
    for k, (q, t) in enumerate(zip(queries, targets, strict=True)):
        qs, qe, ts, te = (int(fields[name][k]) for name in ("query_start", "query_end",
                                                              "target_start", "target_end"))
        cigar = str(fields["cigar"][k])
        more = further.further_alignments(q, t, job.scoring, (qs, ts, cigar), job.max_hsps - 1)
        hit += [k] * (1 + len(more))
        found += [(int(fields["score"][k]), qs, qe, ts, te, cigar), *more]
    text = "".join(cigar for *_, cigar in found).encode("ascii")
    text_at = np.concatenate([[0], np.cumsum([len(c) for *_, c in found])]).astype(np.int64)
    coords = np.array([a[1:5] for a in found], dtype=np.int64).reshape(-1, 4)
    return np.array(hit, dtype=np.int64), alignment_fields(
        "cpu", np.array([a[0] for a in found], dtype=np.int64), coords,
        np.frombuffer(text, np.uint8), text_at)


def _ranked(job: SearchJob, q_res: np.ndarray, q_off: np.ndarray,
            top: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ``top_k`` hits of each query, best first by e-value, from its pool."""
    params = _spouge(job)
    if params is None:          # the order by score is the order by e-value
        return top[0][:, :job.top_k], top[1][:, :job.top_k]
    db = _job_database(job)

    def rescore(row: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        one = slice_concatenated(q_res, q_off, row, row + 1)
        tops = (score_partition(job, *one, p, width) for p in range(db.partitions))
        found = functools.reduce(lambda a, b: merge_top(a, b, width), tops)
        return found[0][0], found[1][0]

    return by_evalue(top, np.diff(q_off), db.record_lengths,
                     (db.residues, db.sequences, *db.length_range), params, job.top_k,
                     job.max_evalue, rescore)


def _drop(hits: dict[str, np.ndarray], drop: np.ndarray) -> None:
    """Empty the ranks in ``drop``, keeping each query's remaining hits first."""
    from swath.storage.results import HIT_FIELDS

    keep_first = np.argsort(drop, axis=1, kind="stable")
    for name, (_, fill) in HIT_FIELDS.items():
        hits[name][drop] = fill
        hits[name][:] = np.take_along_axis(hits[name], keep_first, 1)


def write_unit(job: SearchJob, unit: int, hits: dict[str, np.ndarray]) -> int:
    """Write a unit's chunks, then mark it done."""
    started = time.perf_counter()
    store = SearchStore.open(job.store, mode="r+", complete=False)
    store.check_id(job.store_id)
    store.write_unit(unit, hits)
    logger.debug("unit %d written in %.3f s", unit, time.perf_counter() - started)
    return unit


def build_graph(job: SearchJob, store: SearchStore, units: list[int]
                ) -> tuple[list[Any], list[tuple[Any, int]]]:
    """Delayed write tasks of ``units``, with named layers for the dashboard, and the
    score tasks they hold with the cells each computes."""
    import uuid

    import dask

    run_id = uuid.uuid4().hex[:8]   # keys of an earlier (failed) run must not be reused
    queries = store.queries(qualities=False)
    database = _job_database(job)
    width = pool(job)
    writes, scores = [], []
    for unit in units:
        first, last = store.unit_queries(unit)
        q_res, q_off = slice_concatenated(queries.residues, queries.offsets, first, last)
        level = [dask.delayed(score_partition, pure=False)(
            job, q_res, q_off, p, width, dask_key_name=f"swath-score-{run_id}-{unit}-{p}")
            for p in range(database.partitions)]
        scores += [(task, len(q_res) * database.partition_residues(p))
                   for p, task in enumerate(level)]
        depth = 0
        while len(level) > 1:
            depth += 1
            level = [dask.delayed(merge_top)(
                *level[i:i + 2], width, dask_key_name=f"swath-top-{run_id}-{unit}-{depth}-{i}")
                     if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
        hits = dask.delayed(align_hits)(job, q_res, q_off, level[0],
                                        dask_key_name=f"swath-align-{run_id}-{unit}")
        writes.append(dask.delayed(write_unit)(job, unit, hits,
                                               dask_key_name=f"swath-write-{run_id}-{unit}"))
    return writes, scores


def run_search(job: SearchJob, client: Any, progress: Progress | None = None) -> SearchStore:
    """Run every unit not yet done on ``client`` (a runner of ``engine.cluster`` or a
    ``distributed.Client``), then finalize the store; ``progress("search", cells done,
    cells, cells done)`` at the start and as each unit's score task of a database
    partition finishes (cells: query residues times database residues; a unit done
    earlier counts whole)."""
    from swath.engine.cluster import InProcess, runner
    from swath.storage.locking import store_lock

    with store_lock(job.store):
        store = SearchStore.open(job.store, mode="r+", complete=False)
        store.check_id(job.store_id)
        store.recompute_damaged()
        units = np.flatnonzero(~store.done()).tolist()
        logger.info("%s: %d of %d units to run", job.store, len(units), store.units)
        residues = _job_database(job).residues
        lengths = store.queries(qualities=False).lengths
        total = int(lengths.sum()) * residues
        cells = total - sum(int(lengths[slice(*store.unit_queries(unit))].sum())
                            for unit in units) * residues
        if progress:
            progress("search", cells, total, cells)

        def scored(count: int) -> Callable[[], None]:
            def call() -> None:
                nonlocal cells
                cells += count
                if progress:
                    progress("search", cells, total, cells)
            return call

        started = time.perf_counter()
        where = runner(client)
        job = dataclasses.replace(job, read_ahead=isinstance(where, InProcess))
        writes, scores = build_graph(job, store, units)
        where.each(writes, lambda _: None, [(task, scored(n)) for task, n in scores])
        ran = time.perf_counter()
        store = SearchStore.open(job.store, mode="r+", complete=False)
        store.finalize()
        logger.info("%s: %d units in %.3f s, finalized in %.3f s", job.store, len(units),
                    ran - started, time.perf_counter() - ran)
    return store


def prepare_search(store_path: str, queries: SequenceSet, database_path: str,
                   scoring: Scoring, *, top_k: int, mode: Mode, device: str, query_block: int,
                   max_evalue: float | None, statistics: dict[str, Any] | None,
                   overwrite: bool = False, max_hsps: int = 1) -> SearchJob:
    """Create the result store of a new search, or reopen it if it holds the same search.

    A path holding anything else is refused (``OutputExists``) unless ``overwrite``
    and it is a swath store. ``top_k`` beyond the database's size keeps them all.
    """
    from swath.storage.common import array_digest
    from swath.storage.creation import reopen_or_create
    from swath.storage.results import LAYOUT, VERSION

    database_path = _located(database_path)
    db = Database.open(database_path)     # as it is now, not as this process cached it
    top_k = _kept(top_k, db)
    inputs = {"database": str(database_path), "database_sha256": db.sha256,
              "queries_sha256": array_digest(queries.residues, queries.offsets, *(
                  () if queries.qualities is None else (queries.qualities,))),
              "scoring": scoring.to_dict(), "mode": mode, "top_k": top_k,
              "max_hsps": max_hsps, "max_evalue": max_evalue, "statistics": statistics}
    reopen_or_create(store_path, LAYOUT, VERSION, inputs, lambda replace: SearchStore.create(
        store_path, queries, top_k=top_k, max_hsps=max_hsps, query_block=query_block,
        replace=replace,
        inputs=inputs), what="search", differs="other queries, database or options",
        overwrite=overwrite)
    return reopen_search(store_path, device)


def search_held(queries: SequenceSet, database_path: str, scoring: Scoring, *, top_k: int,
                mode: Mode, device: str, query_block: int, max_evalue: float | None,
                statistics: dict[str, Any] | None, max_hsps: int = 1) -> HeldHits:
    """A small search run in this process, without Dask and without a store: each block
    of ``query_block`` queries scored against each partition in turn, its top hits merged
    and aligned as the graph's tasks do, and held in memory (arguments as
    :func:`prepare_search` takes them)."""
    database_path = _located(database_path)
    db = Database.open(database_path)
    job = SearchJob("", database_path, scoring, mode, device, _kept(top_k, db), max_evalue,
                    statistics, db.sha256, "", read_ahead=True, max_hsps=max_hsps)
    blocks = []
    for first in range(0, len(queries), query_block):
        q_res, q_off = slice_concatenated(queries.residues, queries.offsets, first,
                                          min(first + query_block, len(queries)))
        width = pool(job)
        tops = (score_partition(job, q_res, q_off, p, width) for p in range(db.partitions))
        top = functools.reduce(lambda a, b: merge_top(a, b, width), tops)
        blocks.append(align_hits(job, q_res, q_off, top))
    hits = {name: np.concatenate([block[name] for block in blocks]) for name in blocks[0]}
    return HeldHits(queries, hits, job.top_k, scoring, mode, database_path)


def _located(database_path: str) -> str:
    """A database's path as a search records it: absolute where it is local (a resume
    or a result's printing works from any directory)."""
    from swath.storage.common import is_local, local_path

    return local_path(database_path) if is_local(database_path) else database_path


def _kept(top_k: int, db: Database) -> int:
    """Hits kept per query: ``top_k``, at most the database's records."""
    return max(1, min(top_k, db.sequences))


def reopen_search(store_path: str, device: str = "auto") -> SearchJob:
    """The job a result store was created for (what ``resume`` runs).

    Raises
    ------
    InputChanged
        The database is no longer the one the search started with (rebuilt, replaced).
    """
    from swath.errors import InputChanged, StoreNotFound

    store = SearchStore.open(store_path, complete=False)
    inputs = store.attrs["inputs"]
    job = SearchJob(str(store_path), inputs["database"], store.scoring, inputs["mode"], device,
                    int(inputs["top_k"]), inputs["max_evalue"], inputs["statistics"],
                    inputs["database_sha256"], str(store.attrs["id"]),
                    max_hsps=int(inputs["max_hsps"]))
    try:
        _job_database(job)
    except (StoreNotFound, OSError) as exc:
        raise InputChanged(f"{store_path}: its database {inputs['database']} cannot be read "
                           f"({exc})") from None
    return job
