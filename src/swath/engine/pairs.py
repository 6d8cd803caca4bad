"""Batched pairs as a Dask graph: tasks that take the inputs in, then one task a chunk
of pairs.

# P: pairs, C: pairs per chunk, K: pieces of an input.

The job's store holds its inputs (:mod:`swath.storage.pairs`). The client plans each
input file's pieces (:mod:`swath.sequences.pieces`: a few bytes read around each cut)
and makes the store; then the graph holds, for every piece not marked done,

    swath-piece-{run}-{side}-{k}   read the piece's bytes (a plain file's, from the file;
                                   a gzip file's, cut by the client from the one stream it
                                   reads, handed over as they come), hash them (SHA-256),
                                   parse and encode them, write the piece and its done mark

then one task indexes the pieces and makes the pairs and the per-pair arrays, and for
every chunk not marked done,

    swath-pairs-{run}-{chunk}      read the chunk's residues from the store, align its C
                                   pairs with traceback on the worker's backend (batched
                                   kernel), count each CIGAR's columns, write the chunk's
                                   fields and then its done mark

so the client never holds the inputs, a task's memory is bounded by its piece or chunk,
and a piece or chunk already done is not in the graph: running the same job again, or
``resume``, finishes only what is missing. In this process (``engine.cluster``'s
:class:`~swath.engine.cluster.InProcess`) the pieces are parsed on a thread a core: their
parsing is numpy passes, which let go of the GIL.

An input's identity is its pieces' bounds and digests: a job run again over a store
hashes the same pieces of the file as it is now, and one whose pieces differ from those
taken in is another job (refused, unless ``overwrite``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.constants import Mode
from swath.engine.aligned import alignment_fields
from swath.kernels import get_backend
from swath.progress import Progress
from swath.results.pairs import HeldPairs
from swath.scoring import Scoring
from swath.sequences import SequenceSet
from swath.sequences.pieces import PIECE_BYTES
from swath.storage.common import value_dtype
from swath.storage.pairs import PAIR_FIELDS, SIDES, PairsStore, piece_kind

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


@dataclass(frozen=True)
class Source:
    """One side's input as a job takes it in.

    Attributes
    ----------
    display : str
        What messages call it (its path as given, or ``queries``/``targets``).
    identity : dict
        What the store records of it, to tell the same input from another on a rerun
        (the digests of a file's pieces are compared apart, as they are taken in).
    file : dict or None
        How tasks read a file (:func:`file_source`); None for records in memory.
    bounds : numpy.ndarray or None
        A plain file's pieces (:func:`~swath.sequences.pieces.plan`).
    records : SequenceSet or None
        Records in memory, taken in as one piece when the store is made.
    """

    display: str
    identity: dict[str, Any]
    file: dict[str, Any] | None = None
    bounds: np.ndarray | None = None
    records: SequenceSet | None = None


def file_source(path: str, *, wildcard: bool, piece_bytes: int | None = None) -> Source:
    """A FASTA or FASTQ file as a source, checked and planned now (its format, and a
    plain file's pieces, of about ``piece_bytes`` bytes, ``PIECE_BYTES`` by default):
    known by its absolute path, size, format and how its letters are read
    (``wildcard``), and by the digests of its pieces as they are taken in.

    Raises
    ------
    InputNotFound, InvalidInput
        The file cannot be read, or is empty, blank, or neither FASTA nor FASTQ.
    """
    from swath.sequences.pieces import file_format, plan

    fmt, gzipped = file_format(path, path)
    stat = os.stat(path)
    size = piece_bytes or PIECE_BYTES
    where = os.path.abspath(path)
    file = {"file": where, "display": path, "format": fmt, "gzip": gzipped,
            "piece_bytes": size, "wildcard": wildcard, "bytes": stat.st_size,
            "mtime_ns": stat.st_mtime_ns}
    identity = {"file": where, "wildcard": wildcard, "format": fmt, "gzip": gzipped,
                "bytes": stat.st_size, "piece_bytes": size}
    return Source(path, identity, file, None if gzipped else plan(path, fmt, size))


def memory_source(records: SequenceSet, display: str) -> Source:
    """Records in memory as a source: known by the digest of their codes and names."""
    from swath.storage.common import array_digest

    names = np.frombuffer("\n".join(records.names).encode(), dtype=np.uint8)
    identity = {"sha256": array_digest(records.residues, records.offsets, names)}
    return Source(display, identity, records=records)


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
    from swath.storage.creation import reopen_or_create
    from swath.storage.pairs import LAYOUT, VERSION

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
    created = []

    def create(replace: bool) -> None:
        pieces = {side: source.bounds if source.bounds is not None
                  else int(source.records is not None) for side, source in sources.items()}
        PairsStore.create(store_path, pieces, lambda store: _fill(store, sources, pairs),
                          replace=replace, paired="position" if pairs is None else "index",
                          inputs=inputs, sources={side: source.file or
                                                  {"display": source.display}
                                                  for side, source in sources.items()})
        created.append(True)

    reopen_or_create(store_path, LAYOUT, VERSION, inputs, create, what="pairs",
                     differs="other inputs, pairs or options", overwrite=overwrite)
    if not created:
        _check_pieces(store_path, sources)
    return dataclasses.replace(reopen_pairs(store_path, device), fresh=bool(created))


def _fill(store: PairsStore, sources: dict[str, Source], pairs: Any) -> None:
    """What a new store takes from the client: records in memory (one piece a side), and
    the pairs asked for (checked once the inputs are in)."""
    from swath.sequences.pairing import NamedPairs
    from swath.sequences.pieces import Parsed
    from swath.storage.common import update_attrs, write_strings, write_whole

    for side, source in sources.items():
        if source.records is not None:
            records = source.records
            store.write_piece(side, 0, Parsed.of(records.names, records.residues,
                                                 records.offsets), (0, 0), b"\0" * 32)
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


def _check_pieces(store_path: str, sources: dict[str, Source]) -> None:
    """Refuse a store whose files' pieces taken in differ from the files' now."""
    from swath.errors import OutputExists

    store = PairsStore.open(store_path, complete=False)
    for side, source in sources.items():
        done = np.flatnonzero(store.done(piece_kind(side))).tolist()
        if source.file is not None and _pieces_now(source, done) != store.piece_sources(side,
                                                                                        done):
            raise OutputExists(f"{store_path} holds another pairs job ({source.display} has "
                               "changed since it was taken in); choose another output path, "
                               "or --overwrite to replace it")


def _pieces_now(source: Source, which: list[int]) -> list[Any]:
    """Where pieces ``which`` of a file lie now, and their bytes' SHA-256 (a plain file's
    hashed on threads, hashing lets go of the GIL; a gzip file's read once)."""
    import functools

    from swath.sequences.pieces import read_range

    assert source.file is not None
    if source.bounds is None:
        wanted = set(which)
        found = {k: (start, start + len(data), hashlib.sha256(data).digest())
                 for k, (start, _, data) in enumerate(_stream(source.file)) if k in wanted}
        return [found.get(k) for k in which]
    spans = [(int(source.bounds[k]), int(source.bounds[k + 1])) for k in which]
    read = functools.partial(read_range, source.file["file"])
    with ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
        shas = pool.map(lambda span: hashlib.sha256(read(*span)).digest(), spans)
        return [(*span, sha) for span, sha in zip(spans, shas, strict=True)]


def _stream(file: dict[str, Any]) -> Iterator[tuple[int, int, bytes]]:
    """The pieces of a gzip file, read once: (start, first line, bytes) each."""
    from swath.sequences.parsers import open_file
    from swath.sequences.pieces import cut

    line = 1
    with open_file(file["file"], file["display"]) as stream:
        for start, data in cut(stream, file["format"], file["display"], file["piece_bytes"]):
            yield start, line, data
            line += data.count(b"\n")


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

    run_id = _run_id()
    return [dask.delayed(align_unit, pure=False)(job, unit,
                                                 dask_key_name=f"swath-pairs-{run_id}-{unit}")
            for unit in units]


def take_piece(job: PairsJob, side: str, k: int, start: int, end: int, line: int | None,
               data: bytes | None) -> int:
    """Take piece ``k`` of ``side`` in: its bytes ``start:end`` of the file (``data``,
    or read from the file), hashed, parsed, encoded and written, then marked done
    (``line``: the file's line at ``start``, where known). Its bytes."""
    from swath.sequences.encoding import translator, warn_if_dna
    from swath.sequences.pieces import line_of, parse, read_range

    store = PairsStore.open(job.store, mode="r+", complete=False)
    store.check_id(job.store_id)
    file = store.attrs["sources"][side]
    path = file["file"]
    if data is None:
        data = read_range(path, start, end)
    sha = hashlib.sha256(data).digest()
    alphabet = store.scoring.alphabet
    parsed = parse(data, file["format"], translator(alphabet, file["wildcard"]),
                   file["display"], (lambda: line) if line is not None
                   else (lambda: line_of(path, start)))
    if k == 0:
        warn_if_dna(parsed.residues, alphabet, file["display"])
    store.write_piece(side, k, parsed, (start, end), sha)
    return len(data)


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


def _take_in(job: PairsJob, store: PairsStore, where: Any, progress: Progress | None
             ) -> None:
    """Take in every piece not done (the plain files' all at once, a stream's round by
    round as the client reads them), then index them on a worker;
    ``progress("pieces", pieces done, pieces or None while a stream is read, 0)``."""
    started = time.perf_counter()
    files = {side: store.attrs["sources"][side] for side in SIDES
             if "file" in store.attrs["sources"][side]}
    todo = {side: np.flatnonzero(~store.done(piece_kind(side))).tolist() for side in files}
    streams = [side for side, file in files.items() if file["gzip"]]
    intake = _Intake(job, where, progress, None if streams else sum(map(len, todo.values())))
    tasks = []
    for side, file in files.items():
        if side in streams or not todo[side]:
            continue
        _check_unchanged(file)
        bounds = np.asarray(store.array(f"work/{side}_bounds")[...]).tolist()
        tasks += [intake.task(side, k, bounds[k], bounds[k + 1], None, None)
                  for k in todo[side]]
    intake.each(tasks)
    for side in streams:
        _take_streamed(intake, store, side, files[side])
    logger.debug("%s: inputs taken in in %.3f s", job.store, time.perf_counter() - started)
    where.call(index_inputs, job)


@dataclass
class _Intake:
    """The pieces one run takes in: its job, where their tasks run, progress."""

    job: PairsJob
    where: Any
    progress: Progress | None
    total: int | None                   # pieces to take in (None: not known yet)
    taken: int = 0
    run_id: str = dataclasses.field(default_factory=lambda: _run_id())   # its keys

    def task(self, side: str, k: int, start: int, end: int, line: int | None,
             data: bytes | None) -> Any:
        """The task of piece ``k`` of ``side`` (:func:`take_piece`)."""
        import dask

        return dask.delayed(_piece, pure=False)(
            self.job, side, k, start, end, line, data,
            dask_key_name=f"swath-piece-{self.run_id}-{side}-{k}")

    def each(self, tasks: list[Any]) -> None:
        """Run piece tasks, a thread a core in this process; raise the error of the first
        piece refused (by side, then piece) once all are done (none is left writing)."""
        from swath.kernels.cores import cores

        refused: list[tuple[int, int, Exception]] = []

        def done(result: tuple[str, int, Exception | None]) -> None:
            side, k, error = result
            if error is not None:
                refused.append((SIDES.index(side), k, error))
            self.taken += 1
            if self.progress:
                self.progress("pieces", self.taken, self.total, 0)

        if self.progress and not self.taken:
            self.progress("pieces", 0, self.total, 0)
        self.where.each(tasks, done, threads=cores())
        if refused:
            raise min(refused, key=lambda found: found[:2])[2]


def _take_streamed(intake: _Intake, store: PairsStore, side: str, file: dict[str, Any]
                   ) -> None:
    """The pieces of a gzip file not done, as the client cuts them from its one stream,
    a round of them at a time (the next round is read while one is taken in)."""
    from swath.kernels.cores import cores
    from swath.storage.common import update_attrs

    done = store.done(piece_kind(side))
    if side in store.attrs.get("streamed", []) and done.all():
        return
    _check_unchanged(file)
    pieces = enumerate(_stream(file))
    size = cores()          # a round: a piece a thread; the client holds two rounds
    with ThreadPoolExecutor(1, thread_name_prefix="swath-stream") as reader:
        round_ = reader.submit(list, itertools.islice(pieces, size))
        while batch := round_.result():
            round_ = reader.submit(list, itertools.islice(pieces, size))
            store.grow(side, batch[-1][0] + 1)
            intake.each([intake.task(side, k, start, start + len(data), line,
                                     intake.where.share(data))
                         for k, (start, line, data) in batch
                         if k >= len(done) or not done[k]])
    update_attrs(store.group, streamed=[*store.attrs.get("streamed", []), side])


def _check_unchanged(file: dict[str, Any]) -> None:
    """Refuse to take in more of a file whose size or time of change is not what they
    were when the job started."""
    from swath.errors import InputChanged

    stat = os.stat(file["file"]) if os.path.exists(file["file"]) else None
    if stat is None or (stat.st_size, stat.st_mtime_ns) != (file["bytes"], file["mtime_ns"]):
        raise InputChanged(f"{file['display']} has changed (or is gone) since this job "
                           "started taking it in; run the job again with --overwrite")


def _piece(job: PairsJob, side: str, k: int, start: int, end: int, line: int | None,
           data: bytes | None) -> tuple[str, int, Exception | None]:
    """:func:`take_piece`, its input's refusal returned, not raised (:meth:`_Intake.each`
    raises the first once every piece is done)."""
    from swath.errors import InputNotFound, InvalidInput, InvalidSequence

    try:
        take_piece(job, side, k, start, end, line, data)
    except (InputNotFound, InvalidInput, InvalidSequence) as error:
        return side, k, error
    return side, k, None


def _run_id() -> str:
    """A tag for the keys of one run (keys of an earlier, failed run must not be reused)."""
    import uuid

    return uuid.uuid4().hex[:8]


def run_pairs(job: PairsJob, client: Any, progress: Progress | None = None) -> PairsStore:
    """Take in the pieces of the inputs not yet in, index them, run every chunk not yet
    done on ``client`` (a runner of ``engine.cluster`` or a ``distributed.Client``), then
    finalize the store; ``progress("pieces", pieces done, pieces, 0)`` as pieces are taken
    in, ``progress("pairs", pairs done, pairs, cells)`` at the start of the chunks and as
    each is written. A job whose inputs are refused (a malformed file,
    records that are not as many as the pairs want) leaves no store that it made."""
    from swath.errors import InvalidInput, InvalidSequence
    from swath.storage.creation import discard

    try:
        return _run(job, client, progress)
    except (InvalidInput, InvalidSequence):
        if job.fresh:
            discard(job.store, job.store_id)
        raise


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
            _take_in(job, store, where, progress)
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
