"""The database store: a FASTA/FASTQ file encoded, sorted by length and partitioned.

- :mod:`~swath.storage.database.layout`: the layout on disk (arrays, attributes, the
  digest of a partition);
- :mod:`~swath.storage.database.partitions`: how targets are sorted, cut into partitions
  of about equal residues and packed into a partition's row;
- :mod:`~swath.storage.database.writer`: :func:`write_database` (``swath makedb``);
- :mod:`~swath.storage.database.reader`: :class:`Database`, a store opened for reading;
- :mod:`~swath.storage.database.cache`: the stores made from FASTA files on first use
  (:func:`cached_database`).
"""

from swath.storage.database.cache import cache_dir, cached_database
from swath.storage.database.layout import DEFAULT_PARTITION_RESIDUES, LAYOUT, PAD, VERSION
from swath.storage.database.partitions import partition_bounds
from swath.storage.database.reader import Database
from swath.storage.database.writer import (
    DatabaseInfo,
    ProgressCallback,
    database_lock_path,
    write_database,
)

__all__ = [
    "DEFAULT_PARTITION_RESIDUES",
    "LAYOUT",
    "PAD",
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
