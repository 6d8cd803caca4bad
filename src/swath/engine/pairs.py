"""Batched pairs as a Dask graph: tasks that take the inputs in, then one task a chunk
of pairs.

# P: pairs, C: pairs per chunk.

The job's store holds its inputs (:mod:`swath.storage.pairs`). The client plans each
input file's pieces and makes the store; then the graph takes in every piece not marked
done (:mod:`swath.engine.intake`), then one task indexes the pieces and makes the pairs
and the per-pair arrays, and for every chunk not marked done,

    swath-pairs-{run}-{chunk}      read the chunk's residues from the store, align its C
                                   pairs with traceback on the worker's backend (batched
                                   kernel), count each CIGAR's columns, write the chunk's
                                   fields and then its done mark

so the client never holds the inputs, a task's memory is bounded by its piece or chunk,
and a piece or chunk already done is not in the graph: running the same job again, or
``resume``, finishes only what is missing.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.constants import Mode
from swath.engine.aligned import alignment_fields
from swath.engine.intake import (
    Inputs,
    Source,
    discarded_if_refused,
    prepare_inputs,
    run_id,
    take_in,
    write_held,
)
from swath.kernels import get_backend
from swath.progress import Progress
from swath.results.pairs import HeldPairs
from swath.scoring import Scoring
from swath.sequences import SequenceSet
from swath.storage.common import value_dtype
from swath.storage.pairs import PAIR_FIELDS, SIDES, PairsStore

logger = logging.getLogger(__name__)

#: a chunk's pairs, at most, and the cells it aims at (a chunk of long pairs is fewer)
CHUNK_PAIRS = 1 << 16
CHUNK_CELLS = 1 << 33


@dataclass(frozen=True)
class PairsJob:
    """Everything a task needs to know about a batched-pairs job (picklable, small)."""

    store: str
    scoring: Scoring
    mode: Mode
    device: str
    store_id: str          # the store's creation id (never write another)
    fresh: bool = False    # this process has just made the store: nothing in it is damaged

    @property
    def inputs(self) -> Inputs:
        """Where the job's pieces are written."""
        return Inputs(PairsStore, self.store, self.store_id)


def chunk_size(pairs: int, cells: int) -> int:
    """Pairs per chunk: ``CHUNK_PAIRS``, fewer where pairs are long (about
    ``CHUNK_CELLS`` cells a chunk), at least one."""
    if not pairs:
        return 1
    return int(max(1, min(CHUNK_PAIRS, CHUNK_CELLS * pairs // max(cells, 1))))


def prepare_pairs(store_path: str, queries: Source, targets: Source, pairs: Any,
                  scoring: Scoring, *, mode: Mode, device: str, chunk: int | None,
                  overwrite: bool = False) -> PairsJob:
    """Create the store of a new batched-pairs job, ready to take its inputs in (records
    in memory and the pairs asked for are in it already), or reopen it if it holds the
    same job.

    ``pairs``: None (by position), a tuple of two index arrays, or
    :class:`~swath.sequences.pairing.NamedPairs`. A path holding anything else is refused
    (``OutputExists``) unless ``overwrite`` and it is a swath store; so is a store whose
    inputs were files whose pieces taken in differ from the files' now.

    Raises
    ------
    InvalidParameter
        Pairs by index that are not two 1-D integer arrays of one length.
    """
    from swath.storage.common import array_digest

    if pairs is None:
        pairing: Any = "position"
    elif isinstance(pairs, tuple):
        pairs = _index_arrays(pairs)
        pairing = {"sha256": array_digest(*pairs)}
    else:
        pairing = {"sha256": array_digest(*(np.frombuffer("\n".join(side).encode(), np.uint8)
                                            for side in (pairs.queries, pairs.targets)))}
    sources = dict(zip(SIDES, (queries, targets), strict=True))
    inputs = {"queries": queries.identity, "targets": targets.identity, "pairs": pairing,
              "scoring": scoring.to_dict(), "mode": mode, "chunk": chunk}
    fresh = prepare_inputs(
        PairsStore, store_path, sources, inputs,
        lambda pieces, files, replace: PairsStore.create(
            store_path, pieces, lambda store: _fill(store, sources, pairs), replace=replace,
            paired="position" if pairs is None else "index", inputs=inputs, sources=files),
        what="pairs", differs="other inputs, pairs or options", overwrite=overwrite)
    return dataclasses.replace(reopen_pairs(store_path, device), fresh=fresh)


def _fill(store: PairsStore, sources: dict[str, Source], pairs: Any) -> None:
    """What a new store takes from the client: records in memory (one piece a side), and
    the pairs asked for (checked once the inputs are in)."""
    from swath.sequences.pairing import NamedPairs
    from swath.storage.common import update_attrs, write_strings, write_whole

    write_held(store, sources)
    if isinstance(pairs, NamedPairs):
        for side, names in zip(SIDES, (pairs.queries, pairs.targets), strict=True):
            write_strings(store.group, f"work/pair_{side}_name", names, "pair")
        if pairs.lines is not None:
            write_whole(store.group, "work/pair_line", np.asarray(pairs.lines, dtype=np.int64),
                        dimension_names=("pair",))
        update_attrs(store.group, pairs_file=pairs.source)
    elif pairs is not None:
        for side, records in zip(SIDES, pairs, strict=True):
            write_whole(store.group, f"pair_{side}", records, dimension_names=("pair",))


def _index_arrays(pairs: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Pairs by index as two int64 arrays (their records are checked once the inputs are
    in: :func:`_checked_index`)."""
    from swath.errors import InvalidParameter

    out = []
    for given in pairs:
        records = np.asarray(given)
        if records.ndim != 1 or (records.dtype.kind not in "iu" and records.size):
            raise InvalidParameter("pairs must be two 1-D integer arrays (or two lists of names)")
        out.append(records.astype(np.int64))
    if len(out[0]) != len(out[1]):
        raise InvalidParameter(f"pairs must be two index arrays of one length, got "
                               f"{len(out[0])} and {len(out[1])}")
    return out[0], out[1]


def reopen_pairs(store_path: str, device: str = "auto") -> PairsJob:
    """The job a store was created for (what ``resume`` runs)."""
    store = PairsStore.open(store_path, complete=False)
    return PairsJob(str(store_path), store.scoring, store.mode, device, str(store.attrs["id"]))


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
    fields = _aligned(queries, targets, pairs, job.scoring, job.mode, job.device)
    aligned = time.perf_counter()
    store.write_unit(unit, fields)
    logger.debug("chunk %d: %d pairs read in %.3f s, aligned in %.3f s, written in %.3f s",
                 unit, last - first, read - started, aligned - read,
                 time.perf_counter() - aligned)
    return last - first, int(np.dot(q_lens.astype(np.int64), t_lens.astype(np.int64)))


def pairs_held(queries: SequenceSet, targets: SequenceSet, pairs: Any, scoring: Scoring,
               mode: Mode, device: str, max_cells: int, max_pairs: int) -> HeldPairs | None:
    """A small job run in this process, without Dask and without a store: every pair
    aligned in one batch, held in memory (``pairs`` as :func:`prepare_pairs` takes them);
    None, with nothing aligned, where there are more than ``max_pairs`` pairs or they hold
    more than ``max_cells`` cells (a job for the engine).

    Raises
    ------
    InvalidInput, InvalidParameter
        As :func:`pair_records` says.
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
    if len(rows) > max_pairs or int(np.dot(q_lens[rows], t_lens[cols])) > max_cells:
        return None
    fields = _aligned((queries.residues, queries.offsets), (targets.residues, targets.offsets),
                      within, scoring, mode, device)
    return HeldPairs({"query": queries, "target": targets}, rows, cols, fields, scoring, mode)


def _aligned(queries: tuple[np.ndarray, np.ndarray], targets: tuple[np.ndarray, np.ndarray],
             pairs: tuple[np.ndarray, np.ndarray] | None, scoring: Scoring, mode: Mode,
             device: str) -> dict[str, np.ndarray]:
    """The per-pair fields of records aligned in one batch on ``device``: query i with
    target i, or ``pairs`` (indices into both sides)."""
    aligned = get_backend(device).align_batch(*queries, *targets, scoring, mode, pairs=pairs)
    fields = alignment_fields(device, *aligned)
    return {name: np.asarray(fields[name], dtype=value_dtype(dtype))
            for name, (dtype, _) in PAIR_FIELDS.items()}


def build_graph(job: PairsJob, units: list[int]) -> list[Any]:
    """Delayed tasks of ``units``, with named keys for the dashboard."""
    import dask

    tag = run_id()
    return [dask.delayed(align_unit, pure=False)(job, unit,
                                                 dask_key_name=f"swath-pairs-{tag}-{unit}")
            for unit in units]


def index_inputs(job: PairsJob) -> None:
    """Once every piece is in: index them, check and make the pairs, and the per-pair
    arrays (:meth:`~swath.storage.pairs.PairsStore.index`).

    Raises
    ------
    InvalidInput
        Unequal record counts for pairs by position, an index or name that is no record,
        a name given twice where pairs are by name.
    """
    store = PairsStore.open(job.store, mode="r+", complete=False)
    store.check_id(job.store_id)
    chunk = store.attrs["inputs"]["chunk"]
    store.index(_pair_records, lambda pairs, cells: chunk or chunk_size(pairs, cells))


def _pair_records(store: PairsStore) -> tuple[np.ndarray, np.ndarray] | None:
    """The records of each pair a store's job asked for, checked (None: by position)."""
    from swath.sequences.pairing import NamedPairs

    asked: Any = None
    names: tuple[list[str] | None, list[str] | None] = (None, None)
    if "work/pair_query_name" in store.group:
        lines = (np.asarray(store.array("work/pair_line")[...]).tolist()
                 if "work/pair_line" in store.group else None)
        given = [np.asarray(store.array(f"work/pair_{side}_name")[...]).tolist()
                 for side in SIDES]
        asked = NamedPairs(given[0], given[1], store.attrs.get("pairs_file"), lines)
        names = (store.names("query").tolist(), store.names("target").tolist())
    elif not store.by_position:
        asked = tuple(np.asarray(store.array(f"pair_{side}")[...]) for side in SIDES)
    return pair_records(asked, (store.count("query"), store.count("target")), names,
                        (store.attrs["sources"]["query"]["display"],
                         store.attrs["sources"]["target"]["display"]))


def pair_records(pairs: Any, counts: tuple[int, int],
                 names: tuple[list[str] | None, list[str] | None], displays: tuple[str, str]
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The query and target record of each pair (``pairs`` as :func:`prepare_pairs` takes
    them), or None for pairs by position; ``names``: each side's record names (needed
    only for pairs by name), ``displays``: what messages call each side.

    Raises
    ------
    InvalidInput
        Unequal record counts for pairs by position, an index or name that is no record,
        a name given twice where pairs are by name.
    InvalidParameter
        Index arrays that are not two 1-D integer arrays of one length.
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
    return _checked_index(*_index_arrays(pairs), counts=counts)


def _checked_index(*pairs: np.ndarray, counts: tuple[int, int]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Pairs by index whose records are all there (``counts``: the records of each side)."""
    from swath.errors import InvalidInput

    for side, (records, count) in enumerate(zip(pairs, counts, strict=True)):
        bad = np.flatnonzero((records < 0) | (records >= count))
        if len(bad):
            raise InvalidInput(f"pair {bad[0] + 1}: {SIDES[side]} index {records[bad[0]]} is "
                               f"not a record (there are {count})")
    return pairs[0], pairs[1]


def run_pairs(job: PairsJob, client: Any, progress: Progress | None = None) -> PairsStore:
    """Take in the pieces of the inputs not yet in, index them, run every chunk not yet
    done on ``client`` (a runner of ``engine.cluster`` or a ``distributed.Client``), then
    finalize the store; ``progress("pieces", pieces done, pieces, 0)`` as pieces are taken
    in, ``progress("pairs", pairs done, pairs, cells)`` at the start of the chunks and as
    each is written. A job whose inputs are refused (a malformed file,
    records that are not as many as the pairs want) leaves no store that it made."""
    with discarded_if_refused(job.inputs, job.fresh):
        return _run(job, client, progress)


def _run(job: PairsJob, client: Any, progress: Progress | None) -> PairsStore:
    from swath.engine.cluster import runner
    from swath.storage.locking import store_lock

    where = runner(client)
    with store_lock(job.store):
        store = PairsStore.open(job.store, mode="r+", complete=False)
        store.check_id(job.store_id)
        if not job.fresh:
            store.recompute_damaged()
        if not store.indexed:
            take_in(job.inputs, store, where, progress)
            where.call(index_inputs, job)
            store = PairsStore.open(job.store, mode="r+", complete=False)
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

        where.each(build_graph(job, units), finished)
        store = PairsStore.open(job.store, mode="r+", complete=False)
        store.finalize()
    return store
