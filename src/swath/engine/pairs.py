"""Batched pairs as a Dask graph: one task a chunk of pairs.

# P: pairs, C: pairs per chunk.

The job's store holds its inputs (:mod:`swath.storage.pairs`). For every chunk not
marked done the graph holds one task,

    swath-pairs-{run}-{chunk}   read the chunk's residues from the store, align its C
                                pairs with traceback on the worker's backend (batched
                                kernel), count each CIGAR's columns, write the chunk's
                                fields and then its done mark

so a task's memory is bounded by its chunk, never by the input, and a chunk already
done is not in the graph: running the same job again, or ``resume``, finishes only
what is missing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.engine.aligned import alignment_fields
from swath.kernels import get_backend
from swath.progress import Progress
from swath.results.pairs import HeldPairs
from swath.scoring import Scoring
from swath.sequences import SequenceSet
from swath.storage.pairs import PAIR_FIELDS, PairsStore, ingest, write_index

logger = logging.getLogger(__name__)

#: a chunk's pairs, at most, and the cells it aims at (a chunk of long pairs is fewer)
CHUNK_PAIRS = 1 << 16
CHUNK_CELLS = 1 << 33


@dataclass(frozen=True)
class PairsJob:
    """Everything a task needs to know about a batched-pairs job (picklable, small)."""

    store: str
    matrix: np.ndarray
    gap_open: int
    gap_extend: int
    mode: str
    device: str
    store_id: str          # the store's creation id (never write another)
    fresh: bool = False    # this process has just made the store: nothing in it is damaged


@dataclass(frozen=True)
class Source:
    """One side's records as a job takes them in.

    Attributes
    ----------
    display : str
        What messages call it (its path, or ``queries``/``targets``).
    identity : callable
        What the store records of it, to tell the same input from another on a rerun
        (a file's digest may still be being computed: called when needed).
    batches : callable
        Its records, batch by batch (read when called).
    """

    display: str
    identity: Callable[[], dict[str, Any]]
    batches: Callable[[], Iterable[SequenceSet]]


def file_source(path: str, read: Callable[[str], Iterable[SequenceSet]], *, wildcard: bool
                ) -> Source:
    """A FASTA or FASTQ file as a source: known by its absolute path, its bytes' SHA-256
    (computed on a thread of its own from now on, beside the reading) and how its
    letters are read (``wildcard``), read by ``read(path)`` when the store is made."""
    from concurrent.futures import ThreadPoolExecutor

    from swath.sequences.parsers import open_file

    with open_file(path, path):    # a missing or unreadable file: its error, now
        pass
    where = os.path.abspath(path)
    with ThreadPoolExecutor(1, thread_name_prefix="swath-digest") as pool:
        sha = pool.submit(_file_sha256, path)
        pool.shutdown(wait=False)
    return Source(path, lambda: {"file": where, "sha256": sha.result(), "wildcard": wildcard},
                  lambda: read(path))


def _file_sha256(path: str) -> str:
    started = time.perf_counter()
    with open(path, "rb") as raw:
        sha = hashlib.file_digest(raw, "sha256").hexdigest()
    logger.debug("%s: digested in %.3f s", path, time.perf_counter() - started)
    return sha


def memory_source(records: SequenceSet, display: str) -> Source:
    """Records in memory as a source: known by the digest of their codes and names."""
    from swath.storage.common import array_digest

    names = np.frombuffer("\n".join(records.names).encode(), dtype=np.uint8)
    identity = {"sha256": array_digest(records.residues, records.offsets, names)}
    return Source(display, lambda: identity, lambda: [records])


def chunk_size(pairs: int, cells: int) -> int:
    """Pairs per chunk: ``CHUNK_PAIRS``, fewer where pairs are long (about
    ``CHUNK_CELLS`` cells a chunk), at least one."""
    if not pairs:
        return 1
    return int(max(1, min(CHUNK_PAIRS, CHUNK_CELLS * pairs // max(cells, 1))))


def prepare(store_path: str, queries: Source, targets: Source, pairs: Any, scoring: Any, *,
            mode: str, device: str, chunk: int | None, overwrite: bool = False) -> PairsJob:
    """Create the store of a new batched-pairs job, taking its inputs in, or reopen it if
    it holds the same job.

    ``pairs``: None (by position), a tuple of two index arrays, or
    :class:`~swath.sequences.pairing.NamedPairs`. A path holding anything else is refused
    (``OutputExists``) unless ``overwrite`` and it is a swath store.

    Raises
    ------
    InvalidInput
        Unequal record counts for pairs by position, an index or name that is no record,
        a name given twice where pairs are by name.
    """
    from swath.storage.common import array_digest, update_attrs
    from swath.storage.creation import reopen_or_create
    from swath.storage.pairs import LAYOUT, VERSION

    if pairs is None:
        pairing: Any = "position"
    elif isinstance(pairs, tuple):
        pairing = {"sha256": array_digest(*pairs)}
    else:
        pairing = {"sha256": array_digest(*(np.frombuffer("\n".join(side).encode(), np.uint8)
                                            for side in (pairs.queries, pairs.targets)))}
    def inputs() -> dict[str, Any]:
        return {"queries": queries.identity(), "targets": targets.identity(),
                "pairs": pairing, "scoring": scoring.to_dict(), "mode": mode, "chunk": chunk}

    def fill(group: Any) -> tuple[int, int, int]:
        taken = _take_in(group, queries, targets, pairs, chunk)
        update_attrs(group, inputs=inputs())      # the files' digests, done by now
        return taken

    created = []

    def create(replace: bool) -> None:
        PairsStore.create(store_path, fill, replace=replace,
                          paired="position" if pairs is None else "index")
        created.append(True)

    reopen_or_create(store_path, LAYOUT, VERSION, inputs, create, what="pairs",
                     differs="other inputs, pairs or options", overwrite=overwrite)
    return dataclasses.replace(job_from_store(store_path, device), fresh=bool(created))


def _take_in(group: Any, queries: Source, targets: Source, pairs: Any, chunk: int | None
             ) -> tuple[int, int, int]:
    """Write both sides' records and the pairs into a new store: (pairs, pairs per chunk,
    cells)."""
    from swath.sequences.pairing import NamedPairs

    started = time.perf_counter()
    q = ingest(group, "query", queries.batches(), keep_names=isinstance(pairs, NamedPairs))
    t = ingest(group, "target", targets.batches(), keep_names=isinstance(pairs, NamedPairs))
    logger.debug("%d queries and %d targets taken in in %.3f s", q.count, t.count,
                 time.perf_counter() - started)
    paired = pair_records(pairs, (q.count, t.count), (q.names, t.names),
                          (queries.display, targets.display))
    if paired is None:
        count = q.count
        cells = int(np.dot(q.lengths.astype(np.int64), t.lengths.astype(np.int64)))
    else:
        rows, cols = paired
        write_index(group, (rows, cols))
        count = len(rows)
        cells = int(np.dot(q.lengths[rows].astype(np.int64), t.lengths[cols].astype(np.int64)))
    return count, chunk or chunk_size(count, cells), cells


def pair_records(pairs: Any, counts: tuple[int, int],
                 names: tuple[list[str] | None, list[str] | None], displays: tuple[str, str]
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The query and target record of each pair, or None for pairs by position;
    ``names``: each side's record names (needed only for named pairs).

    Raises
    ------
    InvalidInput
        Unequal record counts for pairs by position, an index or name that is no record,
        a name given twice where pairs are by name.
    """
    from swath.errors import InvalidInput
    from swath.sequences.pairing import NamedPairs, resolve

    if pairs is None:
        if counts[0] != counts[1]:
            raise InvalidInput(f"{displays[0]} has {counts[0]} records and {displays[1]} "
                               f"{counts[1]}: pairs by position need as many of each (or pair "
                               "them by name: --pairs)")
        return None
    if isinstance(pairs, NamedPairs):
        assert names[0] is not None and names[1] is not None
        return resolve(pairs, (names[0], names[1]), displays)
    return _checked_index(pairs, counts)


def _checked_index(pairs: tuple[Any, Any], counts: tuple[int, int]
                   ) -> tuple[np.ndarray, np.ndarray]:
    from swath.errors import InvalidInput, InvalidParameter

    out = []
    for side, (given, count) in enumerate(zip(pairs, counts, strict=True)):
        records = np.asarray(given)
        if records.ndim != 1 or (records.dtype.kind not in "iu" and records.size):
            raise InvalidParameter("pairs must be two 1-D integer arrays (or two lists of names)")
        bad = np.flatnonzero((records < 0) | (records >= count))
        if len(bad):
            raise InvalidInput(f"pair {bad[0] + 1}: {('query', 'target')[side]} index "
                               f"{records[bad[0]]} is not a record (there are {count})")
        out.append(records.astype(np.int64))
    if len(out[0]) != len(out[1]):
        raise InvalidParameter(f"pairs must be two index arrays of one length, got "
                               f"{len(out[0])} and {len(out[1])}")
    return out[0], out[1]


def job_from_store(store_path: str, device: str = "auto") -> PairsJob:
    """The job a store was created for (what ``resume`` runs)."""
    from swath.scoring import Scoring

    store = PairsStore.open(store_path, complete=False)
    inputs = store.attrs["inputs"]
    scoring = Scoring.from_dict(inputs["scoring"])
    return PairsJob(str(store_path), scoring.matrix, scoring.gap_open, scoring.gap_extend,
                    inputs["mode"], device, str(store.attrs["id"]))


def align_unit(job: PairsJob, unit: int) -> tuple[int, int]:
    """Align chunk ``unit``'s pairs, write them, then mark it done: (pairs, cells)."""
    started = time.perf_counter()
    store = PairsStore.open(job.store, mode="r+", complete=False)
    store.check_id(job.store_id)
    first, last = store.unit_pairs(unit)
    rows, cols = store.pair_records(first, last)
    if store.by_position:
        queries, targets = store.records("query", rows), store.records("target", cols)
        pairs = None
        q_lens, t_lens = np.diff(queries[1]), np.diff(targets[1])
    else:
        q_ids, q_at = np.unique(rows, return_inverse=True)
        t_ids, t_at = np.unique(cols, return_inverse=True)
        queries, targets = store.records("query", q_ids), store.records("target", t_ids)
        pairs = (q_at, t_at)
        q_lens, t_lens = np.diff(queries[1])[q_at], np.diff(targets[1])[t_at]
    read = time.perf_counter()
    fields = _aligned(queries, targets, pairs, job.matrix, job.gap_open, job.gap_extend,
                      job.mode, job.device)
    aligned = time.perf_counter()
    store.write_unit(unit, fields)
    logger.debug("chunk %d: %d pairs read in %.3f s, aligned in %.3f s, written in %.3f s",
                 unit, last - first, read - started, aligned - read,
                 time.perf_counter() - aligned)
    return last - first, int(np.dot(q_lens.astype(np.int64), t_lens.astype(np.int64)))


def align_held(queries: SequenceSet, targets: SequenceSet, pairs: Any, scoring: Scoring,
               mode: str, device: str, max_cells: int) -> HeldPairs | None:
    """A small job run in this process, without Dask and without a store: every pair
    aligned in one batch, held in memory (``pairs`` as :func:`prepare` takes them); None,
    with nothing aligned, where the pairs hold more than ``max_cells`` cells (a job for
    the engine).

    Raises
    ------
    InvalidInput
        As :func:`prepare`.
    """
    paired = pair_records(pairs, (len(queries), len(targets)),
                          (list(queries.names), list(targets.names)),
                          (queries.source or "queries", targets.source or "targets"))
    if paired is None:
        rows = cols = np.arange(len(queries), dtype=np.int64)
        within = None
    else:
        rows, cols = within = paired
    q_lens, t_lens = queries.lengths.astype(np.int64), targets.lengths.astype(np.int64)
    if int(np.dot(q_lens[rows], t_lens[cols])) > max_cells:
        return None
    fields = _aligned((queries.residues, queries.offsets), (targets.residues, targets.offsets),
                      within, scoring.matrix, scoring.gap_open, scoring.gap_extend, mode,
                      device)
    return HeldPairs({"query": queries, "target": targets}, rows, cols, fields, scoring, mode)


def _aligned(queries: tuple[np.ndarray, np.ndarray], targets: tuple[np.ndarray, np.ndarray],
             pairs: tuple[np.ndarray, np.ndarray] | None, matrix: np.ndarray, gap_open: int,
             gap_extend: int, mode: str, device: str) -> dict[str, np.ndarray]:
    """The per-pair fields of records aligned in one batch on ``device``: query i with
    target i, or ``pairs`` (indices into both sides)."""
    aligned = get_backend(device).align_batch(*queries, *targets, matrix, gap_open, gap_extend,
                                              mode, pairs=pairs)
    fields = alignment_fields(device, *aligned)
    return {name: fields[name] for name in PAIR_FIELDS}


def build_graph(job: PairsJob, units: list[int]) -> list[Any]:
    """Delayed tasks of ``units``, with named keys for the dashboard."""
    import uuid

    import dask

    run_id = uuid.uuid4().hex[:8]   # keys of an earlier (failed) run must not be reused
    return [dask.delayed(align_unit, pure=False)(job, unit,
                                                 dask_key_name=f"swath-pairs-{run_id}-{unit}")
            for unit in units]


def run(job: PairsJob, client: Any, progress: Progress | None = None) -> PairsStore:
    """Run every chunk not yet done on ``client`` (a runner of ``engine.cluster`` or a
    ``distributed.Client``), then finalize the store; ``progress("pairs", pairs done,
    pairs, cells)`` at the start and as each chunk is written."""
    from swath.engine.cluster import runner
    from swath.storage.locking import store_lock

    with store_lock(job.store):
        store = PairsStore.open(job.store, mode="r+", complete=False)
        store.check_id(job.store_id)
        if not job.fresh:
            store.recompute_damaged()
        done = store.done()
        units = np.flatnonzero(~done).tolist()
        pairs = store.pairs - sum(b - a for a, b in map(store.unit_pairs, units))
        cells = 0
        logger.info("%s: %d of %d chunks to run", job.store, len(units), store.units)
        if progress:
            progress("pairs", pairs, store.pairs, cells)

        def finished(result: tuple[int, int]) -> None:
            nonlocal pairs, cells
            pairs += result[0]
            cells += result[1]
            if progress:
                progress("pairs", pairs, store.pairs, cells)

        runner(client).each(build_graph(job, units), finished)
        store = PairsStore.open(job.store, mode="r+", complete=False)
        store.finalize()
    return store
