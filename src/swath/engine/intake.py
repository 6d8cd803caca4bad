"""A job's inputs taken in on the workers: each input file cut into pieces of whole
records, each piece read, hashed, parsed, encoded and written by a task of its own.

# K: pieces of an input.

The client plans a plain file's pieces (:mod:`swath.sequences.pieces`: a few bytes read
around each cut) when it makes the store; a gzip file, which cannot be cut without being
read, it reads once, streaming, handing its pieces to the workers as they come. The graph
holds, for every piece not marked done,

    swath-piece-{run}-{side}-{k}   read the piece's bytes (a plain file's, from the file;
                                   a gzip file's, cut by the client from the one stream it
                                   reads), hash them (SHA-256), parse and encode them,
                                   write the piece and its done mark

(:mod:`swath.storage.pieces` says what it writes), so the client never holds the inputs
and a task's memory is bounded by its piece. In this process (``engine.cluster``'s
:class:`~swath.engine.cluster.InProcess`) the pieces are parsed on a thread a core: their
parsing is numpy passes, which let go of the GIL.

An input's identity is its pieces' bounds and digests: a job run again over a store
hashes the same pieces of the file as it is now, and one whose pieces differ from those
taken in is another job (refused, unless ``overwrite``). A FASTQ file's base qualities are
in its bytes, so its identity covers them; a layout that keeps them
(a side of ``PieceStore.QUALITIES``) has each piece parse and write them beside its
residues.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.progress import Progress
from swath.sequences import SequenceSet
from swath.sequences.pieces import PIECE_BYTES, Parsed
from swath.storage.pieces import PieceStore, piece_kind

__all__ = ["Inputs", "Source", "check_pieces", "check_unchanged", "discarded_if_refused",
           "file_source", "memory_source", "prepare_inputs", "run_id", "source", "take_in",
           "take_piece", "write_held"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Inputs:
    """Where a job's pieces are written: its store's layout, path and creation id
    (picklable, small)."""

    layout: type[PieceStore]
    store: str
    store_id: str          # the store's creation id (never write another)

    def open(self) -> PieceStore:
        """The store, open for writing, checked to be the one the job was made for."""
        store = self.layout.open(self.store, mode="r+", complete=False)
        store.check_id(self.store_id)
        return store


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
    """Records in memory as a source: known by the digest of their codes and names (and
    base qualities, where they have them)."""
    from swath.storage.common import array_digest

    names = np.frombuffer("\n".join(records.names).encode(), dtype=np.uint8)
    qualities = () if records.qualities is None else (records.qualities,)
    identity = {"sha256": array_digest(records.residues, records.offsets, names, *qualities)}
    return Source(display, identity, records=records)


def source(value: str | SequenceSet, display: str, wildcard: bool) -> Source:
    """An input of a job as the engine takes it in: a file's path (taken in piece by piece
    on the workers), or records in memory (``display``: what messages call them)."""
    if isinstance(value, str):
        return file_source(value, wildcard=wildcard)
    return memory_source(value, display)


def prepare_inputs(layout: type[PieceStore], store_path: str, sources: dict[str, Source],
                   inputs: dict[str, Any],
                   create: Callable[[dict[str, np.ndarray | int], dict[str, Any], bool], object],
                   *, what: str, differs: str, overwrite: bool) -> bool:
    """Create a store of ``layout`` that takes ``sources`` in, or reopen the one at
    ``store_path`` if it holds the same job (``inputs``: ``reopen_or_create``), refusing
    one whose files' pieces taken in differ from the files' now (``check_pieces``);
    whether it was created. ``create(pieces, files, replace)`` makes it: per side, its
    pieces (a plain file's bounds, or how many there are so far) and what the store
    records of its file."""
    from swath.storage.creation import reopen_or_create

    created = []

    def make(replace: bool) -> None:
        create({side: source.bounds if source.bounds is not None
                else int(source.records is not None) for side, source in sources.items()},
               {side: source.file or {"display": source.display}
                for side, source in sources.items()}, replace)
        created.append(True)

    reopen_or_create(store_path, layout.LAYOUT, layout.VERSION, inputs, make, what=what,
                     differs=differs, overwrite=overwrite)
    if not created:
        check_pieces(layout, store_path, sources)
    return bool(created)


@contextmanager
def discarded_if_refused(job: Inputs, fresh: bool) -> Iterator[None]:
    """Remove the job's store where this process made it (``fresh``) and the job's
    inputs are refused (a malformed file: running the job again would refuse it again):
    a refused job leaves no store that it made."""
    from swath.errors import InvalidInput, InvalidSequence
    from swath.storage.creation import discard

    try:
        yield
    except (InvalidInput, InvalidSequence):
        if fresh:
            discard(job.store, job.store_id)
        raise


def check_pieces(layout: type[PieceStore], store_path: str, sources: dict[str, Source]
                 ) -> None:
    """Refuse a store whose files' pieces taken in differ from the files' now."""
    from swath.errors import OutputExists

    store = layout.open(store_path, complete=False)
    for side, source in sources.items():
        done = np.flatnonzero(store.done(piece_kind(side))).tolist()
        if source.file is not None and _pieces_now(source, done) != store.piece_sources(side,
                                                                                        done):
            raise OutputExists(f"{store_path} holds another {layout.LAYOUT} job "
                               f"({source.display} has changed since it was taken in); "
                               "choose another output path, or --overwrite to replace it")


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


def take_piece(job: Inputs, side: str, k: int, start: int, end: int, line: int | None,
               data: bytes | None) -> int:
    """Take piece ``k`` of ``side`` in: its bytes ``start:end`` of the file (``data``,
    or read from the file), hashed, parsed, encoded and written, then marked done
    (``line``: the file's line at ``start``, where known). Its bytes."""
    from swath.sequences.encoding import translator, warn_if_dna
    from swath.sequences.pieces import line_of, parse, read_range

    store = job.open()
    file = store.attrs["sources"][side]
    path = file["file"]
    if data is None:
        data = read_range(path, start, end)
    sha = hashlib.sha256(data).digest()
    alphabet = store.alphabet
    parsed = parse(data, file["format"], translator(alphabet, file["wildcard"]),
                   file["display"], (lambda: line) if line is not None
                   else (lambda: line_of(path, start)), side in store.QUALITIES)
    if k == 0:
        warn_if_dna(parsed.residues, alphabet, file["display"])
    store.write_piece(side, k, parsed, (start, end), sha)
    return len(data)


def write_held(store: PieceStore, sources: dict[str, Source]) -> None:
    """Write the records in memory of ``sources`` into a new store, one piece a side."""
    for side, source in sources.items():
        if source.records is not None:
            records = source.records
            store.write_piece(side, 0, Parsed.of(records.names, records.residues,
                                                 records.offsets, records.qualities),
                              (0, 0), b"\0" * 32)


def take_in(job: Inputs, store: PieceStore, where: Any, progress: Progress | None) -> None:
    """Take in every piece not done (the plain files' all at once, a stream's round by
    round as the client reads them) on ``where`` (a runner of ``engine.cluster``);
    ``progress("pieces", pieces done, pieces or None while a stream is read, 0)``. Raise
    the error of the first piece refused, by side then piece, once none is running."""
    started = time.perf_counter()
    files = {side: store.attrs["sources"][side] for side in store.SIDES
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


@dataclass
class _Intake:
    """The pieces one run takes in: its job, where their tasks run, progress."""

    job: Inputs
    where: Any
    progress: Progress | None
    total: int | None                   # pieces to take in (None: not known yet)
    taken: int = 0
    run_id: str = dataclasses.field(default_factory=lambda: run_id())   # its keys

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
                refused.append((self.job.layout.SIDES.index(side), k, error))
            self.taken += 1
            if self.progress:
                self.progress("pieces", self.taken, self.total, 0)

        if self.progress and not self.taken and tasks:
            self.progress("pieces", 0, self.total, 0)
        self.where.each(tasks, done, threads=cores())
        if refused:
            raise min(refused, key=lambda found: found[:2])[2]


def _take_streamed(intake: _Intake, store: PieceStore, side: str, file: dict[str, Any]
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


def check_unchanged(source: Source) -> None:
    """Refuse a file whose size or time of change is not what it was when ``source`` was
    planned (``InputChanged``): once its pieces are all in, none was read from a file
    changed meanwhile."""
    if source.file is not None:
        _check_unchanged(source.file)


def _check_unchanged(file: dict[str, Any]) -> None:
    """Refuse to take in more of a file whose size or time of change is not what they
    were when the job started."""
    from swath.errors import InputChanged

    stat = os.stat(file["file"]) if os.path.exists(file["file"]) else None
    if stat is None or (stat.st_size, stat.st_mtime_ns) != (file["bytes"], file["mtime_ns"]):
        raise InputChanged(f"{file['display']} has changed (or is gone) since this job "
                           "started taking it in; run the job again with --overwrite")


def _piece(job: Inputs, side: str, k: int, start: int, end: int, line: int | None,
           data: bytes | None) -> tuple[str, int, Exception | None]:
    """:func:`take_piece`, its input's refusal returned, not raised (:meth:`_Intake.each`
    raises the first once every piece is done)."""
    from swath.errors import InputNotFound, InvalidInput, InvalidSequence

    try:
        take_piece(job, side, k, start, end, line, data)
    except (InputNotFound, InvalidInput, InvalidSequence) as error:
        return side, k, error
    return side, k, None


def run_id() -> str:
    """A tag for the keys of one run (keys of an earlier, failed run must not be reused)."""
    import uuid

    return uuid.uuid4().hex[:8]
