"""Writing a database store: ``swath makedb``, :func:`write_database`.

:func:`write_database` holds all encoded residues of the source in memory at
once (one byte per residue, plus about 60 bytes per sequence for names and
lengths); building databases larger than memory in a streaming way is future
work. It appears whole (:func:`swath.storage.creation.creating`): an interrupted run
never leaves a store at the target path that reads as finished. The layout it writes is
:mod:`swath.storage.database.layout`'s.
"""

from __future__ import annotations

import hashlib
import logging
import os
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import zarr

from swath.errors import InvalidParameter, OutputExists
from swath.scoring import Alphabet
from swath.sequences import iter_records, unique_names
from swath.storage.common import (
    StorePath,
    mark_complete,
    record_digest,
    update_attrs,
    write_whole,
)
from swath.storage.creation import creating, found_at
from swath.storage.database.layout import (
    DEFAULT_PARTITION_RESIDUES,
    LAYOUT,
    PAD,
    VERSION,
    partition_digest,
)
from swath.storage.database.partitions import Partitioning, fill_row
from swath.storage.integrity import digest
from swath.storage.locking import store_lock

__all__ = [
    "DatabaseInfo",
    "ProgressCallback",
    "database_lock_path",
    "file_sha256",
    "write_database",
]

logger = logging.getLogger(__name__)

#: ``progress(stage, done, total)``: stage ``"read"`` counts records read (total
#: None, the count is not known before the end), then ``"write"`` counts partitions
#: written out of ``total``.
ProgressCallback = Callable[[str, int, int | None], None]

_TARGET_CHUNK = 1 << 16  # elements per chunk of the per-target arrays
_NAME_CHUNK = 1 << 16
_PROGRESS_EVERY = 1 << 14  # records between "read" progress calls


@dataclass(frozen=True)
class DatabaseInfo:
    """What :func:`write_database` wrote.

    Parameters
    ----------
    path : str
        The store.
    sequences : int
        Number of records.
    residues : int
        Total residues.
    partitions : int
        Number of partitions (chunks of ``residues``).
    width : int
        Residues of the largest partition (the row width of ``residues``).
    sha256 : str
        Hex SHA-256 digest of the source file's bytes.
    """

    path: str
    sequences: int
    residues: int
    partitions: int
    width: int
    sha256: str


def database_lock_path(store: StorePath) -> str:
    """The lock file a database writer holds: ``<store>.swath-lock``, beside the store.

    It lies beside the store, not inside, because the store itself appears only
    when it is complete (renamed into place).
    """
    return os.fspath(store).rstrip("/") + ".swath-lock"


def write_database(source: str | os.PathLike[str], store: StorePath, alphabet: Alphabet, *,
                   wildcard: bool = False,
                   partition_residues: int = DEFAULT_PARTITION_RESIDUES,
                   overwrite: bool = False,
                   progress: ProgressCallback | None = None,
                   rename_duplicates: bool = False) -> DatabaseInfo:
    """Encode a FASTA/FASTQ file into a database store, sorted by length and partitioned.

    Parameters
    ----------
    source : str or os.PathLike
        The sequences: FASTA or FASTQ, plain or gzip (a local file).
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
        Called as ``progress(stage, done, total)``, see :data:`ProgressCallback`.
    rename_duplicates : bool
        Rename the second, third, ... record of a name ``NAME_2``, ``NAME_3``, ...;
        otherwise a name given twice is refused (hits would be ambiguous).

    Returns
    -------
    DatabaseInfo

    Raises
    ------
    InputNotFound, InvalidInput, InvalidSequence
        The source cannot be read or is malformed (file and line named).
    InvalidParameter
        ``partition_residues`` is not a positive integer; ``store`` exists and
        ``overwrite`` is not set, or it holds something other than a database.
    StoreLocked
        Another job is writing the same store.

    Notes
    -----
    All encoded residues are held in memory at once (about one byte per residue
    plus some 60 bytes per sequence).

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
    display = os.fspath(store)
    records = iter_records(source, alphabet, wildcard=wildcard)  # checks source and alphabet
    with store_lock(store, lockfile=database_lock_path(store)):
        source_sha256 = file_sha256(source)
        buffer, lengths, names = _read(records, progress)
        names = list(unique_names(names, os.fspath(source), rename=rename_duplicates))
        logger.info("read %d sequences, %d residues from %s", len(names), len(buffer),
                    os.fspath(source))
        parts = Partitioning.build(np.frombuffer(lengths, dtype=np.int64) if len(lengths)
                                   else np.zeros(0, np.int64), int(partition_residues))
        attrs = {
            "alphabet": alphabet.letters,
            "alphabet_wildcard": alphabet.wildcard,
            "wildcard": bool(wildcard),
            "source": os.fspath(source),
            "sha256": source_sha256,
            "sequences": parts.sequences,
            "residues": parts.residues,
            "partitions": parts.partitions,
            "width": parts.width,
            "partition_size": int(partition_residues),
            "created_by": f"swath {_version()}",
        }

        found = found_at(store)
        if found is not None and found.get("layout") != LAYOUT:
            raise OutputExists(f"{display} exists and is not a swath database; swath will not "
                               "delete it (remove it yourself or choose another path)")
        interrupted = found is not None and found.get("created") is False
        if found is not None and not overwrite and not interrupted:
            raise OutputExists(f"{display} already exists (use --overwrite, or "
                               "overwrite=True, to replace it)")
        with creating(store, LAYOUT, VERSION, attrs, replace=found is not None,
                      coordinates=("names",)) as group:
            marks = _write_arrays(group, parts, np.frombuffer(buffer, dtype=np.uint8), names,
                                  progress)
            update_attrs(group, partition_digests=marks)
            mark_complete(group)
    logger.info("wrote %s: %d sequences, %d residues, %d partitions (width %d)", display,
                parts.sequences, parts.residues, parts.partitions, parts.width)
    return DatabaseInfo(display, parts.sequences, parts.residues, parts.partitions,
                        parts.width, source_sha256)


def _version() -> str:
    from swath._version import __version__

    return __version__


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 digest of a file's bytes."""
    hasher = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            hasher.update(block)
    return hasher.hexdigest()


def _read(records: Iterable[Any], progress: ProgressCallback | None
          ) -> tuple[bytearray, array[int], list[str]]:
    """All records: concatenated codes, lengths (int64) and names, in file order."""
    buffer = bytearray()
    lengths: array[int] = array("q")
    names: list[str] = []
    for record in records:
        buffer += record.codes.data
        lengths.append(len(record.codes))
        names.append(record.name)
        if progress is not None and len(names) % _PROGRESS_EVERY == 0:
            progress("read", len(names), None)
    if progress is not None:
        progress("read", len(names), None)
    return buffer, lengths, names


def _write_arrays(group: zarr.Group, parts: Partitioning, residues: np.ndarray, names: list[str],
                  progress: ProgressCallback | None) -> list[int]:
    """Write the arrays, the per-target and per-record ones with their digests
    (:func:`~swath.storage.common.write_whole`); the digest of each partition
    (:func:`~swath.storage.database.layout.partition_digest`), in order."""
    n, count, width = parts.sequences, parts.partitions, max(parts.width, 1)
    chunk = max(1, min(n, _TARGET_CHUNK))

    def per_target(name: str, values: np.ndarray, dtype: str, dim: str, fill: int) -> None:
        write_whole(group, name, values.astype(dtype, copy=False), chunks=(chunk,),
                    fill_value=fill, dimension_names=(dim,))

    ordered = parts.lengths[parts.order]
    group.create_array("partition_bounds", shape=(count + 1,), dtype="int64",
                       chunks=(count + 1,), fill_value=-1,
                       dimension_names=("partition_bound",))[:] = parts.bounds
    group.create_array("partition_residues", shape=(count,), dtype="int64",
                       chunks=(max(count, 1),), fill_value=-1,
                       dimension_names=("partition",))[:] = parts.sizes
    per_target("starts", parts.starts, "int64", "target", -1)
    per_target("lengths", ordered, "int32", "target", 0)
    per_target("order", parts.order, "int64", "target", -1)
    per_target("rank", parts.rank, "int64", "record", -1)
    # the names a chunk at a time: one write of them all would hold them all encoded too
    name_array = group.create_array("names", shape=(n,), dtype=str,
                                    chunks=(max(1, min(n, _NAME_CHUNK)),),
                                    dimension_names=("record",))
    for first in range(0, n, _NAME_CHUNK):
        name_array[first:first + _NAME_CHUNK] = np.array(names[first:first + _NAME_CHUNK],
                                                         dtype=object)
    record_digest(group, "names", digest(np.array(names, dtype=object)))

    rows = group.create_array("residues", shape=(count, width), dtype="uint8",
                              chunks=(1, width), fill_value=PAD,
                              dimension_names=("partition", "position"))
    offsets = np.concatenate([[0], np.cumsum(parts.lengths)]).astype(np.int64)
    marks = []
    for p in range(count):
        b0, b1 = int(parts.bounds[p]), int(parts.bounds[p + 1])
        row = np.full(width, PAD, dtype=np.uint8)
        fill_row(row, residues, offsets[parts.order[b0:b1]], ordered[b0:b1],
                 parts.starts[b0:b1])
        rows[p] = row
        marks.append(partition_digest(row[:int(parts.sizes[p])], parts.starts[b0:b1],
                                      parts.order[b0:b1]))
        logger.debug("partition %d: targets %d:%d, %d residues", p, b0, b1, parts.sizes[p])
        if progress is not None:
            progress("write", p + 1, count)
    return marks
