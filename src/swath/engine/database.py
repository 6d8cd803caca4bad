"""A database store built on the workers (``swath makedb``): its source taken in as
pieces, then a task a partition.

# K: pieces of the source, p: partitions.

The client plans the source's pieces (:mod:`swath.engine.intake`: a plain file's by a few
bytes read around each cut; a gzip file is read once, streaming, its pieces handed out as
they come) and makes the store, which appears at its path only once finished
(:func:`~swath.storage.creation.creating`). Then, on the runner of ``client``
(:mod:`swath.engine.cluster`),

    swath-piece-{run}-sequences-{k}   hash, parse, encode piece k, sort its records by
                                      length, write it
    (one call)                        index the pieces: refuse or rename the names given
                                      twice, sort the targets by length, cut the
                                      partitions, write the per-target arrays and where
                                      each partition's targets lie in each piece
    swath-partition-{run}-{p}         write partition p's row from its run of each
                                      piece's residues: its digest
    swath-names-{run}-{i}             write chunk i of the names from the pieces
    (one call)                        digest the names

(:mod:`swath.storage.database.writer` says what each writes), so that the client holds no
residue and no name, and a task's memory is bounded by its piece, its partition or its
chunk of names; the index holds a few int64 a sequence. Unlike a job's store, a database's
is not resumed: a build stopped midway leaves nothing at its path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from swath.engine.cluster import Runner, session
from swath.engine.intake import Inputs, Source, check_unchanged, file_source, run_id, take_in
from swath.errors import InvalidParameter, OutputExists
from swath.progress import Progress
from swath.scoring import Alphabet
from swath.sequences.encoding import translator
from swath.storage.creation import creating
from swath.storage.database.cache import cached_path
from swath.storage.database.layout import DEFAULT_PARTITION_RESIDUES, LAYOUT, VERSION
from swath.storage.database.writer import (
    DatabaseBuild,
    DatabaseInfo,
    check_target,
    database_lock_path,
)
from swath.storage.locking import store_lock

__all__ = ["cached_database", "write_database"]

logger = logging.getLogger(__name__)

def write_database(source: str | os.PathLike[str], store: str | os.PathLike[str],
                   alphabet: Alphabet, *, wildcard: bool = False,
                   partition_residues: int = DEFAULT_PARTITION_RESIDUES,
                   overwrite: bool = False, progress: Progress | None = None,
                   rename_duplicates: bool = False, client: Any = None) -> DatabaseInfo:
    """Encode a FASTA/FASTQ file into a database store, sorted by length and partitioned,
    on the workers of ``client``.

    Parameters
    ----------
    source : str or os.PathLike
        The sequences: FASTA or FASTQ, plain or gzip (a local file, or one the workers
        read at the same path).
    store : str or os.PathLike
        Where to write the store: a local path or an fsspec URL.
    alphabet : Alphabet
        The alphabet to encode into (``Scoring.alphabet``); searches must use a
        scoring over the same alphabet.
    wildcard : bool
        Map letters outside the alphabet to its wildcard (X, N) instead of failing.
    partition_residues : int
        About how many residues each partition holds (at least one target each).
        A partition is one chunk and one unit of search work.
    overwrite : bool
        Replace an existing database store (or empty directory) at ``store``.
        Anything else there is never deleted.
    progress : callable or None
        ``progress("pieces", pieces taken in, pieces or None while a gzip file is read,
        0)``, then ``progress("write", partitions written, partitions, 0)``.
    rename_duplicates : bool
        Rename the second, third, ... record of a name ``NAME_2``, ``NAME_3``, ...;
        otherwise a name given twice is refused (hits would be ambiguous).
    client : distributed.Client, Cluster or runner, optional
        Where the tasks run (:func:`swath.engine.cluster.session`); default: this process,
        its pieces and partitions on a thread a core.

    Returns
    -------
    DatabaseInfo

    Raises
    ------
    InputNotFound, InvalidInput, InvalidSequence
        The source cannot be read or is malformed (file and line named), or a name is
        given twice (without ``rename_duplicates``).
    InputChanged
        The source changed while it was read.
    InvalidParameter
        ``partition_residues`` is not a positive integer; ``store`` exists and
        ``overwrite`` is not set, or it holds something other than a database.
    StoreLocked
        Another job is writing the same store.

    Examples
    --------
    >>> import os, tempfile
    >>> from swath.scoring import Scoring
    >>> tmp = tempfile.mkdtemp()
    >>> fasta = os.path.join(tmp, "db.fasta")
    >>> _ = open(fasta, "w").write(">a\\nMKVLA\\n>b\\nWW\\n>c\\nMKV\\n")
    >>> info = write_database(fasta, os.path.join(tmp, "db.swdb"), Scoring.protein().alphabet,
    ...                       partition_residues=5)
    >>> info.sequences, info.residues, info.partitions
    (3, 10, 2)
    """
    if (isinstance(partition_residues, bool)
            or not isinstance(partition_residues, (int, np.integer)) or partition_residues < 1):
        raise InvalidParameter(
            f"partition_residues must be a positive integer, got {partition_residues!r}")
    translator(alphabet, wildcard)                          # checks the alphabet
    planned = file_source(os.fspath(source), wildcard=wildcard)     # and the source
    attrs = {"alphabet": alphabet.letters, "alphabet_wildcard": alphabet.wildcard,
             "wildcard": bool(wildcard), "source": os.fspath(source),
             "partition_size": int(partition_residues), "created_by": f"swath {_version()}"}
    with store_lock(store, lockfile=database_lock_path(store)):
        replace = check_target(store, overwrite)
        with session(client, device="cpu") as (where, _), \
                creating(store, LAYOUT, VERSION, attrs, replace=replace,
                         coordinates=("names",)) as group:
            written = _build(group, _building_at(group, store), planned, where,
                             int(partition_residues), rename_duplicates, progress)
    info = DatabaseInfo(os.fspath(store), written["sequences"], written["residues"],
                        written["partitions"], written["width"], written["sha256"])
    logger.info("wrote %s: %d sequences, %d residues, %d partitions (width %d)", info.path,
                info.sequences, info.residues, info.partitions, info.width)
    return info


def _version() -> str:
    from swath._version import __version__

    return __version__


def _building_at(group: Any, store: str | os.PathLike[str]) -> str:
    """Where the tasks open the store being built in ``group``: a local store's hidden
    sibling (:func:`~swath.storage.creation.creating`), else ``store`` itself."""
    from zarr.storage import LocalStore

    return str(group.store.root) if isinstance(group.store, LocalStore) else os.fspath(store)


def _build(group: Any, path: str, planned: Source, where: Runner, size: int, rename: bool,
           progress: Progress | None) -> dict[str, Any]:
    """Build the database in the new store's ``group`` (its tasks open it at ``path``) on
    ``where``; the attributes of the finished store."""
    assert planned.file is not None
    build = DatabaseBuild.start(group, path, planned.file, planned.bounds)
    job = Inputs(DatabaseBuild, path, str(build.attrs["id"]))
    take_in(job, build, where, progress)
    check_unchanged(planned)
    where.call(index_database, job, size, rename)
    marks = _write_rows(job, DatabaseBuild.open(path), where, progress)
    where.call(digest_names, job)
    return build.finish(marks)


def _write_rows(job: Inputs, indexed: DatabaseBuild, where: Runner,
                progress: Progress | None) -> list[int]:
    """Run the tasks of the partitions and of the chunks of names of an ``indexed`` build;
    the partitions' digests. A task's error is raised once every task has ended (none is
    left writing into a store being removed)."""
    import dask

    from swath.kernels.cores import cores

    partitions, sequences = indexed.attrs["partitions"], indexed.attrs["sequences"]
    step = indexed.array("names").chunks[0]
    tag = run_id()
    tasks = [dask.delayed(_unit, pure=False)(p, write_partition, job, p,
                                             dask_key_name=f"swath-partition-{tag}-{p}")
             for p in range(partitions)]
    tasks += [dask.delayed(_unit, pure=False)(partitions + i, write_names, job, first,
                                              min(first + step, sequences),
                                              dask_key_name=f"swath-names-{tag}-{i}")
              for i, first in enumerate(range(0, sequences, step))]
    marks = [0] * partitions
    failed: list[tuple[int, BaseException]] = []
    written = 0

    def done(result: tuple[int, Any, BaseException | None]) -> None:
        nonlocal written
        i, value, error = result
        if error is not None:
            failed.append((i, error))
        elif i < partitions:
            marks[i], written = value, written + 1
            if progress:
                progress("write", written, partitions, 0)

    if progress:
        progress("write", 0, partitions, 0)
    where.each(tasks, done, threads=cores())
    if failed:
        raise min(failed, key=lambda found: found[0])[1]
    return marks


def _unit(i: int, function: Callable[..., Any], *args: Any
          ) -> tuple[int, Any, BaseException | None]:
    """Task ``i``, ``function(*args)``: its value, or its error (raised once every task
    has ended: :func:`_write_rows`)."""
    try:
        return i, function(*args), None
    except BaseException as error:    # KeyboardInterrupt too, raised in a task: none left
        return i, None, error


def _opened(job: Inputs) -> DatabaseBuild:
    store = job.open()
    assert isinstance(store, DatabaseBuild)
    return store


def index_database(job: Inputs, size: int, rename: bool) -> None:
    """Index the pieces once every one is in (:meth:`DatabaseBuild.index`)."""
    _opened(job).index(size, rename)


def write_partition(job: Inputs, p: int) -> int:
    """Write partition ``p``'s row: its digest."""
    return _opened(job).write_partition(p)


def write_names(job: Inputs, first: int, last: int) -> None:
    """Write the names of records ``first:last``."""
    _opened(job).write_names(first, last)


def digest_names(job: Inputs) -> None:
    """Record the digest of the names, once all are written."""
    _opened(job).digest_names()


def cached_database(source: str | os.PathLike[str], alphabet: Alphabet, *,
                    wildcard: bool = False) -> str:
    """The database store of FASTA/FASTQ ``source``, made on first use (in this process)
    and kept in :func:`~swath.storage.database.cache_dir` under the file's SHA-256 and the
    encoding.

    A search against a FASTA file then encodes it once, however often it runs, and its
    result store stays resumable (it names this store, which outlives the process).
    """
    path = cached_path(source, alphabet, wildcard)
    if os.path.exists(os.path.join(path, "zarr.json")):
        logger.info("%s: the database store made earlier, %s", source, path)
        return path
    try:
        info = write_database(source, path, alphabet, wildcard=wildcard)
    except OutputExists:
        if not os.path.exists(os.path.join(path, "zarr.json")):
            raise
        return path                # another process made it meanwhile
    logger.info("%s: made the database store %s (%d sequences)", source, path,
                info.sequences)
    return path
