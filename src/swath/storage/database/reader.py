"""Reading a database store: :class:`Database`, a store of layout ``"database"`` on
:class:`~swath.storage.common.LayoutStore`.

Its units are partitions; a partition's done mark is its digest, kept in the attribute
``partition_digests`` (:mod:`swath.storage.database.layout`), and every read of a
partition checks it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from functools import cached_property
from typing import Any, ClassVar, TypeVar

import numpy as np

from swath.errors import StoreDamaged, StoreIncomplete
from swath.scoring import Alphabet
from swath.storage.common import LayoutStore, StorePath, missing
from swath.storage.database.layout import ARRAYS, LAYOUT, PAD, VERSION, stored_alphabet
from swath.storage.integrity import digest

__all__ = ["Database"]

logger = logging.getLogger(__name__)

_D = TypeVar("_D", bound="Database")


class Database(LayoutStore):
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
    >>> from swath.engine.database import write_database
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

    LAYOUT = LAYOUT
    VERSION = VERSION
    #: a partition's done mark is in an attribute, one a partition (:meth:`marks`)
    MARKS: ClassVar[dict[str, str]] = {"partition": "partition_digests"}
    REMEDY: ClassVar[str] = "rebuild it with swath makedb --overwrite"

    @classmethod
    def open(cls: type[_D], path: StorePath, *, mode: str = "r", complete: bool = True) -> _D:
        """Open a database store (a local path or an fsspec URL) and check it.

        Raises
        ------
        StoreNotFound
            Nothing is at ``path``, or no swath store.
        FormatVersionError
            The store is of another layout or version.
        StoreIncomplete
            The store was not finished, or an array or a chunk is missing.
        """
        database = super().open(path, mode=mode, complete=complete)
        database._check_arrays()
        logger.debug("opened %s: %d sequences, %d partitions", database.path,
                     database.sequences, database.partitions)
        return database

    def _check_arrays(self) -> None:
        """Check the attributes and arrays a reader needs are there, of their shapes."""
        for key in ("alphabet", "sequences", "residues", "partitions", "sha256", "source"):
            if key not in self.attrs:
                raise missing(f"attribute {key!r}", self.path)
        n, parts = self.sequences, self.partitions
        arrays = {name: self.array(name) for name in ARRAYS}
        expected = {"partition_bounds": (parts + 1,), "partition_residues": (parts,),
                    "starts": (n,), "lengths": (n,), "order": (n,), "rank": (n,),
                    "names": (n,)}
        for name, shape in expected.items():
            if arrays[name].shape != shape:
                raise StoreIncomplete(f"{self.path}: the store is damaged (array {name!r} has "
                                      f"shape {arrays[name].shape}, expected {shape})")
        rows = arrays["residues"]
        if rows.ndim != 2 or rows.shape[0] != parts or rows.chunks != (1, rows.shape[1]):
            raise StoreIncomplete(f"{self.path}: the store is damaged (array 'residues' has "
                                  f"shape {rows.shape} and chunks {rows.chunks}, expected "
                                  f"({parts}, width) in chunks of one row)")
        bounds, sizes = self.partition_bounds, self.partition_sizes
        if (len(bounds) == 0 or bounds[0] != 0 or bounds[-1] != n
                or np.any(np.diff(bounds) <= 0)):
            raise missing("a chunk of array 'partition_bounds'", self.path)
        if np.any(sizes <= 0) or int(sizes.sum()) != self.residues:
            raise missing("a chunk of array 'partition_residues'", self.path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Database.open, (self.path,))

    def __repr__(self) -> str:
        return (f"Database({self.path!r}, {self.sequences} sequences, {self.residues} "
                f"residues, {self.partitions} partitions)")

    def __len__(self) -> int:
        return self.sequences

    # -- attributes ------------------------------------------------------------------

    @property
    def sequences(self) -> int:
        """Number of records (targets)."""
        return int(self.attrs["sequences"])

    @property
    def residues(self) -> int:
        """Total residues of all records."""
        return int(self.attrs["residues"])

    @property
    def partitions(self) -> int:
        """Number of partitions."""
        return int(self.attrs["partitions"])

    @property
    def alphabet(self) -> Alphabet:
        """The alphabet the residues are encoded in."""
        return stored_alphabet(self.attrs)

    @property
    def wildcard(self) -> bool:
        """Whether letters outside the alphabet were mapped to its wildcard."""
        return bool(self.attrs.get("wildcard", False))

    @property
    def source(self) -> str:
        """The FASTA/FASTQ file the store was written from (as given then)."""
        return str(self.attrs["source"])

    @property
    def sha256(self) -> str:
        """The source's identity: a hex SHA-256 (of its pieces' spans and SHA-256s,
        :mod:`~swath.storage.database.layout`)."""
        return str(self.attrs["sha256"])

    @cached_property
    def partition_bounds(self) -> np.ndarray:
        """``int64`` (partitions + 1,): partition ``j`` holds sorted targets ``[b[j], b[j+1])``."""
        bounds = np.asarray(self.array("partition_bounds")[:], dtype=np.int64)
        bounds.setflags(write=False)
        return bounds

    @cached_property
    def partition_sizes(self) -> np.ndarray:
        """``int64`` (partitions,): residues of each partition."""
        sizes = np.asarray(self.array("partition_residues")[:], dtype=np.int64)
        sizes.setflags(write=False)
        return sizes

    # -- done marks ------------------------------------------------------------------

    def has_marks(self, kind: str) -> bool:
        """Whether the partitions carry digests (stores written before they did do not)."""
        return self.MARKS[kind] in self.attrs

    def marks(self, kind: str) -> np.ndarray:
        """The partitions' digests (uint64, one a partition)."""
        return np.asarray(self.attrs[self.MARKS[kind]], dtype=np.uint64)

    def unit_values(self, kind: str, p: int) -> list[np.ndarray]:
        """Partition ``p``'s residues (uint8), target starts and record ids (int64), as
        its digest (:func:`~swath.storage.database.layout.partition_digest`) covers
        them; ``StoreIncomplete`` or ``StoreDamaged`` where they cannot be read whole."""
        b0, b1 = int(self.partition_bounds[p]), int(self.partition_bounds[p + 1])
        count = int(self.partition_sizes[p])
        try:
            residues = np.asarray(self.array("residues")[p, :count], dtype=np.uint8)
            starts = np.asarray(self.array("starts")[b0:b1], dtype=np.int64)
            lengths = np.asarray(self.array("lengths")[b0:b1], dtype=np.int64)
            ids = np.asarray(self.array("order")[b0:b1], dtype=np.int64)
        except (RuntimeError, ValueError, TypeError) as exc:   # bytes no codec can decode
            raise StoreDamaged(f"{self.path}: damaged: partition {p} cannot be read ({exc}; "
                               "rebuild the database with swath makedb --overwrite)") from None
        if len(residues) != count or np.any(residues == PAD):
            raise missing(f"chunk {p} of array 'residues'", self.path)
        if starts[0] != 0 or np.any(lengths <= 0) or not np.array_equal(
                np.diff(np.append(starts, count)), lengths):
            raise missing(f"a chunk of array 'starts' or 'lengths' (partition {p})", self.path)
        if np.any(ids < 0):
            raise missing(f"a chunk of array 'order' (partition {p})", self.path)
        return [residues, starts, ids]

    def damaged(self) -> dict[str, list[Any]]:
        """The partitions and the per-record and per-target arrays whose data no longer
        match the digests written with them (:meth:`LayoutStore.damaged`); of a store
        without partition digests, the partitions that cannot be read whole."""
        found = super().damaged()
        if not self.has_marks("partition"):
            found["partition"] = [p for p in range(self.partitions) if not self._readable(p)]
        return found

    def _readable(self, p: int) -> bool:
        try:
            self.unit_values("partition", p)
        except (StoreDamaged, StoreIncomplete):
            return False
        return True

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
        return int(self.partition_sizes[self._partition_index(p)])

    def partition(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The targets of partition ``p``, read from one chunk of ``residues`` and checked
        against its digest.

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
        StoreDamaged
            The partition no longer matches its digest.
        """
        p = self._partition_index(p)
        values = self.unit_values("partition", p)
        if self.has_marks("partition") and digest(*values) != int(self.marks("partition")[p]):
            raise StoreDamaged(f"{self.path}: damaged: partition {p} no longer matches its "
                               "digest (rebuild the database with swath makedb --overwrite)")
        residues, starts, ids = values
        return residues, np.append(starts, len(residues)), ids

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
        names = [str(name) for name in np.asarray(self.array("names").oindex[index])]
        if any(not name for name in names):
            raise missing("a chunk of array 'names'", self.path)
        return names

    def sequence(self, record: int) -> np.ndarray:
        """The ``uint8`` codes of one record (its index in the source file)."""
        record = self._record_index(record)
        position = int(np.asarray(self.array("rank")[record]))
        if not 0 <= position < self.sequences:
            raise missing("a chunk of array 'rank'", self.path)
        p = int(np.searchsorted(self.partition_bounds, position, side="right")) - 1
        start = int(np.asarray(self.array("starts")[position]))
        length = int(np.asarray(self.array("lengths")[position]))
        if start < 0 or length <= 0:
            raise missing("a chunk of array 'starts' or 'lengths'", self.path)
        codes = np.asarray(self.array("residues")[p, start:start + length], dtype=np.uint8)
        if len(codes) != length or np.any(codes == PAD):
            raise missing(f"chunk {p} of array 'residues'", self.path)
        return codes

    def locate(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Partition of each record and its index in that partition (as ``partition(p)``
        returns them): how to fetch many records from whole cached partitions."""
        records = np.asarray(records, dtype=np.int64)
        positions = np.asarray(self.array("rank").vindex[records], dtype=np.int64)
        if np.any((positions < 0) | (positions >= self.sequences)):
            raise missing("a chunk of array 'rank'", self.path)
        parts = np.searchsorted(self.partition_bounds, positions, side="right") - 1
        return parts, positions - self.partition_bounds[parts]

    def record_lengths(self, records: np.ndarray) -> np.ndarray:
        """``int64`` lengths of ``records`` (indices in the source file), in the order
        given, read for those records alone."""
        records = np.asarray(records, dtype=np.int64)
        if not records.size:
            return np.zeros(0, dtype=np.int64)
        positions = np.asarray(self.array("rank").vindex[records], dtype=np.int64)
        if np.any((positions < 0) | (positions >= self.sequences)):
            raise missing("a chunk of array 'rank'", self.path)
        lengths = np.asarray(self.array("lengths").vindex[positions], dtype=np.int64)
        if np.any(lengths <= 0):
            raise missing("a chunk of array 'lengths'", self.path)
        return lengths

    @functools.cached_property
    def length_range(self) -> tuple[int, int]:
        """The shortest and the longest record's length (the records are kept sorted by
        length: the first and the last)."""
        stored = self.array("lengths")
        ends = np.asarray(stored[np.array([0, self.sequences - 1])], dtype=np.int64)
        if np.any(ends <= 0):
            raise missing("a chunk of array 'lengths'", self.path)
        return int(ends.min()), int(ends.max())

    def lengths_by_id(self) -> np.ndarray:
        """``int64`` length of every record, in source-file order."""
        lengths = np.asarray(self.array("lengths")[:], dtype=np.int64)
        rank = np.asarray(self.array("rank")[:], dtype=np.int64)
        if np.any(lengths <= 0):
            raise missing("a chunk of array 'lengths'", self.path)
        if np.any(rank < 0) or np.any(rank >= self.sequences):
            raise missing("a chunk of array 'rank'", self.path)
        return lengths[rank]
