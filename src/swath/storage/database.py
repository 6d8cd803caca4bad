"""The database store: a FASTA/FASTQ file encoded, sorted by length and partitioned.

Layout ``"database"``, version 1. A Zarr v3 group (n: sequences, p: partitions,
w: residues of the largest partition)::

    residues            (partition, position)  uint8  (p, w), chunks (1, w), padded with 255
    partition_bounds    (partition_bound,)     int64  (p + 1,): first sorted target of each
                                                      partition, then n
    partition_residues  (partition,)           int64  (p,): residues of each partition
    starts              (target,)              int64  (n,): offset of sorted target k in
                                                      its partition's row
    lengths             (target,)              int32  (n,): length of sorted target k
    order               (target,)              int64  (n,): record index (in the source
                                                      file) of sorted target k
    rank                (record,)              int64  (n,): sorted position of record i
                                                      (the inverse of ``order``)
    names               (record,)              str    (n,): record names, in file order

The ``target`` dimension runs over the targets sorted by length (stable,
ascending); ``record`` runs over the records in the order of the source file; a
record's index in the file is its id everywhere in swath. Each partition is a
contiguous run of sorted targets holding about ``partition_residues`` residues and
is exactly one chunk of ``residues``, so a search task reads one chunk. The root
attributes::

    {"swath": {"layout": "database", "version": 1, "alphabet": "ARND...", "alphabet_wildcard": "X",
               "wildcard": false, "source": "db.fasta", "sha256": "...", "sequences": n,
               "residues": total, "partitions": p, "width": w, "partition_size": requested,
               "created_by": "swath 0.1.0", "complete": true}}

``wildcard`` says whether letters outside the alphabet were mapped to the
alphabet's wildcard letter ``alphabet_wildcard`` when the store was written.

:func:`write_database` holds all encoded residues of the source in memory at
once (one byte per residue, plus about 60 bytes per sequence for names and
lengths); building databases larger than memory in a streaming way is future
work. It appears whole (:func:`swath.storage.creation.creating`): an interrupted run
never leaves a store at the target path that reads as finished. Each partition's
digest (its residues, starts and record ids) is in the attribute
``partition_digests``; reading a partition checks it (``StoreDamaged``).
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

from swath.errors import InvalidParameter, OutputExists, StoreDamaged, StoreIncomplete
from swath.scoring import Alphabet
from swath.sequences import iter_records, unique_names
from swath.storage.common import (
    StorePath,
    check_layout,
    mark_complete,
    missing,
    open_group,
    update_attrs,
)
from swath.storage.creation import creating, found_at
from swath.storage.integrity import check, digest
from swath.storage.locking import store_lock

__all__ = [
    "DEFAULT_PARTITION_RESIDUES",
    "LAYOUT",
    "VERSION",
    "Database",
    "DatabaseInfo",
    "ProgressCallback",
    "cache_dir",
    "cached_database",
    "database_lock_path",
    "partition_bounds",
    "write_database",
]

logger = logging.getLogger(__name__)

LAYOUT = "database"
VERSION = 1
# 67 M residues a partition: on an H100 the S1 search ran 3.86 s with 4 partitions against
# 3.99 s with 14 (benchmarks/RESULTS.md); the CPU kernels parallelize inside a partition
DEFAULT_PARTITION_RESIDUES = 1 << 26
PAD = 255  # residues past the end of a partition's targets; never a residue code

#: ``progress(stage, done, total)``: stage ``"read"`` counts records read (total
#: None, the count is not known before the end), then ``"write"`` counts partitions
#: written out of ``total``.
ProgressCallback = Callable[[str, int, int | None], None]

_TARGET_CHUNK = 1 << 16  # elements per chunk of the per-target arrays
_NAME_CHUNK = 1 << 16
_PROGRESS_EVERY = 1 << 14  # records between "read" progress calls
_SLICE_LENGTH = 1 << 12  # targets at least this long are copied one by one
_GATHER_RESIDUES = 1 << 22  # residues gathered at once from shorter targets

_ARRAYS = ("residues", "partition_bounds", "partition_residues", "starts", "lengths", "order",
           "rank", "names")


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


# ---------------------------------------------------------------------------------
# Writing


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
        source_sha256 = _sha256(source)
        buffer, lengths, names = _read(records, progress)
        names = list(unique_names(names, os.fspath(source), rename=rename_duplicates))
        logger.info("read %d sequences, %d residues from %s", len(names), len(buffer),
                    os.fspath(source))
        layout = _Layout.build(np.frombuffer(lengths, dtype=np.int64) if len(lengths)
                               else np.zeros(0, np.int64), int(partition_residues))
        attrs = {
            "alphabet": alphabet.letters,
            "alphabet_wildcard": alphabet.wildcard,
            "wildcard": bool(wildcard),
            "source": os.fspath(source),
            "sha256": source_sha256,
            "sequences": layout.sequences,
            "residues": layout.residues,
            "partitions": layout.partitions,
            "width": layout.width,
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
        with creating(store, LAYOUT, VERSION, attrs, replace=found is not None) as group:
            digests = _write_arrays(group, layout, np.frombuffer(buffer, dtype=np.uint8),
                                    names, progress)
            update_attrs(group, partition_digests=digests.pop("partitions"), digests=digests)
            mark_complete(group)
    logger.info("wrote %s: %d sequences, %d residues, %d partitions (width %d)", display,
                layout.sequences, layout.residues, layout.partitions, layout.width)
    return DatabaseInfo(display, layout.sequences, layout.residues, layout.partitions,
                        layout.width, source_sha256)


def cache_dir() -> str:
    """Where swath keeps what it makes for reuse: ``$SWATH_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/swath``, else ``~/.cache/swath``."""
    if os.environ.get("SWATH_CACHE_DIR"):
        return os.environ["SWATH_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "swath")


def cached_database(source: str | os.PathLike[str], alphabet: Alphabet, *,
                    wildcard: bool = False) -> str:
    """The database store of FASTA/FASTQ ``source``, made on first use and kept in
    :func:`cache_dir` under the file's SHA-256 and the encoding.

    A search against a FASTA file then encodes it once, however often it runs, and its
    result store stays resumable (it names this store, which outlives the process).
    """
    key = hashlib.sha256(f"{alphabet.letters}|{alphabet.wildcard}|{wildcard}".encode())
    path = os.path.join(cache_dir(), "databases",
                        f"{_sha256(source)[:32]}-{key.hexdigest()[:8]}.swdb")
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


def _version() -> str:
    from swath._version import __version__

    return __version__


def _sha256(path: str | os.PathLike[str]) -> str:
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


@dataclass(frozen=True)
class _Layout:
    """Sort order and partitions of a database (all arrays of the store but residues)."""

    lengths: np.ndarray  # int64, file order
    order: np.ndarray  # int64, sorted position -> record
    rank: np.ndarray  # int64, record -> sorted position
    bounds: np.ndarray  # int64 (p + 1,)
    sizes: np.ndarray  # int64 (p,)
    starts: np.ndarray  # int64 (n,), offset of sorted target k in its partition

    @property
    def sequences(self) -> int:
        return len(self.lengths)

    @property
    def residues(self) -> int:
        return int(self.lengths.sum())

    @property
    def partitions(self) -> int:
        return len(self.sizes)

    @property
    def width(self) -> int:
        return int(self.sizes.max()) if len(self.sizes) else 0

    @staticmethod
    def build(lengths: np.ndarray, size: int) -> _Layout:
        n = len(lengths)
        order = np.argsort(lengths, kind="stable").astype(np.int64)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        ordered = lengths[order]
        bounds = partition_bounds(ordered, size)
        before = np.concatenate([[0], np.cumsum(ordered)]).astype(np.int64)
        sizes = np.diff(before[bounds])
        part_of = np.repeat(np.arange(len(sizes)), np.diff(bounds))
        starts = before[:-1] - before[bounds[:-1]][part_of]
        return _Layout(lengths, order, rank, bounds, sizes, starts)


def partition_bounds(lengths: np.ndarray, size: int) -> np.ndarray:
    """Cut targets (in their sorted order) into runs of about ``size`` residues each.

    The residues are split into ``ceil(total / size)`` equal shares; each target
    goes to the share in which its middle residue lies. A partition thus holds
    one share give or take one target, every partition holds at least one target
    (shares that hold no middle are dropped), and targets longer than ``size``
    get a partition each.

    Returns
    -------
    numpy.ndarray
        ``int64`` bounds: partition ``j`` holds targets ``bounds[j]:bounds[j + 1]``.

    Examples
    --------
    >>> partition_bounds(np.array([1, 1, 2, 2, 4]), 5).tolist()
    [0, 3, 5]
    >>> partition_bounds(np.array([1, 1, 1, 100]), 10).tolist()
    [0, 3, 4]
    """
    n = len(lengths)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    parts = -(-total // size)
    middles = np.cumsum(lengths) - lengths + lengths / 2  # float64: exact below 2**52
    share = np.minimum(np.floor(middles * (parts / total)), parts - 1)
    cuts = np.flatnonzero(np.diff(share)) + 1
    return np.concatenate([[0], cuts, [n]]).astype(np.int64)


def _write_arrays(group: zarr.Group, layout: _Layout, residues: np.ndarray, names: list[str],
                  progress: ProgressCallback | None) -> dict[str, Any]:
    """Write the arrays; the digest of each partition (:func:`_partition_digest`) under
    ``"partitions"``, and of each per-record and per-target array by its name."""
    n, parts, width = layout.sequences, layout.partitions, max(layout.width, 1)
    chunk = max(1, min(n, _TARGET_CHUNK))

    found: dict[str, Any] = {}

    def per_target(name: str, values: np.ndarray, dtype: str, dim: str, fill: int) -> None:
        values = values.astype(dtype, copy=False)
        group.create_array(name, shape=(n,), dtype=dtype, chunks=(chunk,), fill_value=fill,
                           dimension_names=(dim,))[:] = values
        found[name] = digest(values)

    ordered = layout.lengths[layout.order]
    group.create_array("partition_bounds", shape=(parts + 1,), dtype="int64",
                       chunks=(parts + 1,), fill_value=-1,
                       dimension_names=("partition_bound",))[:] = layout.bounds
    group.create_array("partition_residues", shape=(parts,), dtype="int64",
                       chunks=(max(parts, 1),), fill_value=-1,
                       dimension_names=("partition",))[:] = layout.sizes
    per_target("starts", layout.starts, "int64", "target", -1)
    per_target("lengths", ordered, "int32", "target", 0)
    per_target("order", layout.order, "int64", "target", -1)
    per_target("rank", layout.rank, "int64", "record", -1)
    name_array = group.create_array("names", shape=(n,), dtype=str,
                                    chunks=(max(1, min(n, _NAME_CHUNK)),),
                                    dimension_names=("record",))
    for first in range(0, n, _NAME_CHUNK):
        name_array[first:first + _NAME_CHUNK] = np.array(names[first:first + _NAME_CHUNK],
                                                         dtype=object)
    found["names"] = digest(np.array(names, dtype=object))

    rows = group.create_array("residues", shape=(parts, width), dtype="uint8",
                              chunks=(1, width), fill_value=PAD,
                              dimension_names=("partition", "position"))
    offsets = np.concatenate([[0], np.cumsum(layout.lengths)]).astype(np.int64)
    digests = found["partitions"] = []
    for p in range(parts):
        b0, b1 = int(layout.bounds[p]), int(layout.bounds[p + 1])
        row = np.full(width, PAD, dtype=np.uint8)
        _fill_row(row, residues, offsets[layout.order[b0:b1]], ordered[b0:b1],
                  layout.starts[b0:b1])
        rows[p] = row
        digests.append(_partition_digest(row[:int(layout.sizes[p])], layout.starts[b0:b1],
                                         layout.order[b0:b1]))
        logger.debug("partition %d: targets %d:%d, %d residues", p, b0, b1, layout.sizes[p])
        if progress is not None:
            progress("write", p + 1, parts)
    return found


def _partition_digest(residues: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> int:
    """What a partition's digest covers: its residues, where its targets start, their ids."""
    return digest(residues.astype(np.uint8, copy=False), starts.astype(np.int64, copy=False),
                  ids.astype(np.int64, copy=False))


def _fill_row(row: np.ndarray, residues: np.ndarray, sources: np.ndarray, lengths: np.ndarray,
              starts: np.ndarray) -> None:
    """Copy targets (ascending lengths) from ``residues[sources[k]:]`` to ``row[starts[k]:]``.

    Short targets are gathered with one index array per ~4M residues; long ones
    (at the end, as lengths ascend) are copied one slice each.
    """
    lengths = lengths.astype(np.int64, copy=False)
    short = int(np.searchsorted(lengths, _SLICE_LENGTH, side="left"))
    if short:
        cum = np.cumsum(lengths[:short])
        cuts = np.searchsorted(cum, np.arange(_GATHER_RESIDUES, int(cum[-1]), _GATHER_RESIDUES),
                               side="right")
        for piece in np.split(np.arange(short), cuts):
            if not len(piece):
                continue
            lens = lengths[piece]
            total = int(lens.sum())
            local = np.cumsum(lens) - lens
            index = np.repeat(sources[piece] - local, lens) + np.arange(total)
            first = int(starts[piece[0]])
            row[first:first + total] = residues[index]
    for k in range(short, len(lengths)):
        s, length = int(sources[k]), int(lengths[k])
        row[int(starts[k]):int(starts[k]) + length] = residues[s:s + length]


# ---------------------------------------------------------------------------------
# Reading


class Database:
    """A database store opened for reading (:meth:`open`).

    Record ids are indices into the source file (0 is its first record). Partition
    ``j`` holds the sorted targets ``partition_bounds[j]:partition_bounds[j + 1]``
    and is one chunk of the ``residues`` array. Databases pickle (Dask ships them):
    the copy opens the store again.

    Examples
    --------
    >>> import os, tempfile
    >>> from swath.scoring import Scoring
    >>> tmp = tempfile.mkdtemp()
    >>> fasta = os.path.join(tmp, "db.fasta")
    >>> _ = open(fasta, "w").write(">a\\nMKVLA\\n>b\\nWW\\n>c\\nMKV\\n")
    >>> protein = Scoring.protein().alphabet
    >>> _ = write_database(fasta, os.path.join(tmp, "db.swdb"), protein)
    >>> db = Database.open(os.path.join(tmp, "db.swdb"))
    >>> db.sequences, db.residues, db.partitions
    (3, 10, 1)
    >>> residues, offsets, ids = db.partition(0)
    >>> offsets.tolist(), ids.tolist(), db.names(ids)
    ([0, 2, 5, 10], [1, 2, 0], ['b', 'c', 'a'])
    >>> protein.decode(db.sequence(0))
    'MKVLA'
    """

    def __init__(self, path: str, group: zarr.Group, attrs: dict[str, Any],
                 arrays: dict[str, Any], bounds: np.ndarray, sizes: np.ndarray) -> None:
        self._path = path
        self._group = group
        self._attrs = attrs
        self._arrays = arrays
        self._bounds = bounds
        self._sizes = sizes
        self._bounds.setflags(write=False)
        self._sizes.setflags(write=False)

    @classmethod
    def open(cls, store: StorePath) -> Database:
        """Open a database store (a local path or an fsspec URL) and check it.

        Raises
        ------
        StoreNotFound
            Nothing is at ``store``, or no swath store.
        FormatVersionError
            The store is of another layout or version.
        StoreIncomplete
            The store was not finished, or an array or a chunk is missing.
        """
        path = os.fspath(store)
        group = open_group(path, mode="r")
        attrs = check_layout(group, path, LAYOUT, VERSION)
        for key in ("alphabet", "sequences", "residues", "partitions", "sha256", "source"):
            if key not in attrs:
                raise missing(f"attribute {key!r}", path)
        n, parts = int(attrs["sequences"]), int(attrs["partitions"])
        arrays: dict[str, Any] = {}
        for name in _ARRAYS:
            try:
                node = group[name]
            except KeyError:
                raise missing(f"array {name!r}", path) from None
            if not isinstance(node, zarr.Array):
                raise missing(f"array {name!r}", path)
            arrays[name] = node
        expected = {"partition_bounds": (parts + 1,), "partition_residues": (parts,),
                    "starts": (n,), "lengths": (n,), "order": (n,), "rank": (n,),
                    "names": (n,)}
        for name, shape in expected.items():
            if arrays[name].shape != shape:
                raise StoreIncomplete(f"{path}: the store is damaged (array {name!r} has shape "
                                      f"{arrays[name].shape}, expected {shape})")
        rows = arrays["residues"]
        if rows.ndim != 2 or rows.shape[0] != parts or rows.chunks != (1, rows.shape[1]):
            raise StoreIncomplete(f"{path}: the store is damaged (array 'residues' has shape "
                                  f"{rows.shape} and chunks {rows.chunks}, expected "
                                  f"({parts}, width) in chunks of one row)")
        bounds = np.asarray(arrays["partition_bounds"][:], dtype=np.int64)
        sizes = np.asarray(arrays["partition_residues"][:], dtype=np.int64)
        if (len(bounds) == 0 or bounds[0] != 0 or bounds[-1] != n
                or np.any(np.diff(bounds) <= 0)):
            raise missing("a chunk of array 'partition_bounds'", path)
        if np.any(sizes <= 0) or int(sizes.sum()) != int(attrs["residues"]):
            raise missing("a chunk of array 'partition_residues'", path)
        logger.debug("opened %s: %d sequences, %d partitions", path, n, parts)
        return cls(path, group, attrs, arrays, bounds, sizes)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Database.open, (self._path,))

    def __repr__(self) -> str:
        return (f"Database({self._path!r}, {self.sequences} sequences, {self.residues} "
                f"residues, {self.partitions} partitions)")

    def __len__(self) -> int:
        return self.sequences

    # -- attributes ------------------------------------------------------------------

    @property
    def path(self) -> str:
        """The store's path or URL."""
        return self._path

    @property
    def attrs(self) -> dict[str, Any]:
        """The store's ``"swath"`` attributes (a copy)."""
        return dict(self._attrs)

    @property
    def sequences(self) -> int:
        """Number of records (targets)."""
        return int(self._attrs["sequences"])

    @property
    def residues(self) -> int:
        """Total residues of all records."""
        return int(self._attrs["residues"])

    @property
    def partitions(self) -> int:
        """Number of partitions."""
        return int(self._attrs["partitions"])

    @property
    def alphabet(self) -> Alphabet:
        """The alphabet the residues are encoded in."""
        return Alphabet(self._attrs["alphabet"], self._attrs.get("alphabet_wildcard"))

    @property
    def wildcard(self) -> bool:
        """Whether letters outside the alphabet were mapped to its wildcard."""
        return bool(self._attrs.get("wildcard", False))

    @property
    def source(self) -> str:
        """The FASTA/FASTQ file the store was written from (as given then)."""
        return str(self._attrs["source"])

    @property
    def sha256(self) -> str:
        """Hex SHA-256 digest of the source file's bytes."""
        return str(self._attrs["sha256"])

    @property
    def partition_bounds(self) -> np.ndarray:
        """``int64`` (partitions + 1,): partition ``j`` holds sorted targets ``[b[j], b[j+1])``."""
        return self._bounds

    @property
    def partition_sizes(self) -> np.ndarray:
        """``int64`` (partitions,): residues of each partition."""
        return self._sizes

    # -- data ------------------------------------------------------------------------

    def _partition_index(self, p: int) -> int:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"partition must be an integer, got {type(p).__name__}")
        if not 0 <= p < self.partitions:
            raise IndexError(f"partition {p} is out of range for a database of "
                             f"{self.partitions} partitions")
        return int(p)

    def _record_index(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"record index must be an integer, got {type(i).__name__}")
        n = self.sequences
        index = int(i) + n if i < 0 else int(i)
        if not 0 <= index < n:
            raise IndexError(f"record {i} is out of range for a database of {n} sequences")
        return index

    def partition_residues(self, p: int) -> int:
        """Number of residues in partition ``p``."""
        return int(self._sizes[self._partition_index(p)])

    def partition(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The targets of partition ``p``, read from one chunk of ``residues``.

        Returns
        -------
        residues : numpy.ndarray
            ``uint8`` codes of the partition's targets, concatenated (no padding).
        offsets : numpy.ndarray
            ``int64``, one more than there are targets: target ``k`` is
            ``residues[offsets[k]:offsets[k + 1]]``. Lengths ascend.
        ids : numpy.ndarray
            ``int64`` record index (in the source file) of each target.

        Raises
        ------
        IndexError
            ``p`` is not a partition.
        StoreIncomplete
            A chunk the partition needs is missing.
        """
        p = self._partition_index(p)
        b0, b1 = int(self._bounds[p]), int(self._bounds[p + 1])
        count = int(self._sizes[p])
        try:
            residues = np.asarray(self._arrays["residues"][p, :count], dtype=np.uint8)
            starts = np.asarray(self._arrays["starts"][b0:b1], dtype=np.int64)
            lengths = np.asarray(self._arrays["lengths"][b0:b1], dtype=np.int64)
            ids = np.asarray(self._arrays["order"][b0:b1], dtype=np.int64)
        except (RuntimeError, ValueError, TypeError) as exc:   # bytes no codec can decode
            raise StoreDamaged(f"{self._path}: damaged: partition {p} cannot be read ({exc}; "
                               "rebuild the database with swath makedb --overwrite)") from None
        if len(residues) != count or np.any(residues == PAD):
            raise missing(f"chunk {p} of array 'residues'", self._path)
        offsets = np.append(starts, count)
        if starts[0] != 0 or np.any(lengths <= 0) or not np.array_equal(np.diff(offsets),
                                                                          lengths):
            raise missing(f"a chunk of array 'starts' or 'lengths' (partition {p})", self._path)
        if np.any(ids < 0):
            raise missing(f"a chunk of array 'order' (partition {p})", self._path)
        marks = self._attrs.get("partition_digests")
        if marks is not None and _partition_digest(residues, starts, ids) != marks[p]:
            raise StoreDamaged(f"{self._path}: damaged: partition {p} no longer matches its "
                               "digest (rebuild the database with swath makedb --overwrite)")
        return residues, offsets, ids

    def damaged(self) -> dict[str, list[Any]]:
        """The partitions and the per-record and per-target arrays whose data no longer
        match the digests written with them (a store without digests has none)."""
        partitions = []
        for p in range(self.partitions):
            try:
                self.partition(p)
            except (StoreDamaged, StoreIncomplete):
                partitions.append(p)
        wholes = self._attrs.get("digests", {})
        arrays = check(wholes.items(), lambda name: [np.asarray(self._arrays[name][...])])
        return {"partition": partitions, "array": arrays}

    def names(self, ids: Iterable[int] | np.ndarray) -> list[str]:
        """The names of records ``ids`` (indices in the source file), in the order given."""
        index = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids))
        if index.size == 0:
            return []
        if index.ndim != 1 or index.dtype.kind not in "iu":
            raise TypeError(f"ids must be a 1-D sequence of integers, got {index.dtype} of "
                            f"shape {index.shape}")
        index = index.astype(np.int64)
        n = self.sequences
        if np.any((index < 0) | (index >= n)):
            bad = int(index[np.argmax((index < 0) | (index >= n))])
            raise IndexError(f"record {bad} is out of range for a database of {n} sequences")
        names = [str(name) for name in self._arrays["names"].oindex[index]]
        if any(not name for name in names):
            raise missing("a chunk of array 'names'", self._path)
        return names

    def sequence(self, record: int) -> np.ndarray:
        """The ``uint8`` codes of one record (its index in the source file)."""
        record = self._record_index(record)
        position = int(self._arrays["rank"][record])
        if not 0 <= position < self.sequences:
            raise missing("a chunk of array 'rank'", self._path)
        p = int(np.searchsorted(self._bounds, position, side="right")) - 1
        start = int(self._arrays["starts"][position])
        length = int(self._arrays["lengths"][position])
        if start < 0 or length <= 0:
            raise missing("a chunk of array 'starts' or 'lengths'", self._path)
        codes = np.asarray(self._arrays["residues"][p, start:start + length], dtype=np.uint8)
        if len(codes) != length or np.any(codes == PAD):
            raise missing(f"chunk {p} of array 'residues'", self._path)
        return codes

    def locate(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Partition of each record and its index in that partition (as ``partition(p)``
        returns them): how to fetch many records from whole cached partitions."""
        records = np.asarray(records, dtype=np.int64)
        positions = np.asarray(self._arrays["rank"].vindex[records], dtype=np.int64)
        if np.any((positions < 0) | (positions >= self.sequences)):
            raise missing("a chunk of array 'rank'", self._path)
        parts = np.searchsorted(self._bounds, positions, side="right") - 1
        return parts, positions - self._bounds[parts]

    def lengths_by_id(self) -> np.ndarray:
        """``int64`` length of every record, in source-file order."""
        lengths = np.asarray(self._arrays["lengths"][:], dtype=np.int64)
        rank = np.asarray(self._arrays["rank"][:], dtype=np.int64)
        if np.any(lengths <= 0):
            raise missing("a chunk of array 'lengths'", self._path)
        if np.any(rank < 0) or np.any(rank >= self.sequences):
            raise missing("a chunk of array 'rank'", self._path)
        return lengths[rank]
