"""The database store: a FASTA/FASTQ file encoded, sorted by length and partitioned.

- :mod:`~swath.storage.database.layout`: the layout on disk (arrays, attributes, the
  digest of a partition);
- :mod:`~swath.storage.database.partitions`: how targets are sorted, cut into partitions
  of about equal residues and packed into a partition's row;
- :mod:`~swath.storage.database.writer`: :class:`DatabaseBuild`, the store while ``swath
  makedb`` builds it (``swath.engine.database.write_database`` runs its tasks);
- :mod:`~swath.storage.database.reader`: :class:`Database`, a store opened for reading;
- :mod:`~swath.storage.database.cache`: where the stores made from FASTA files on first
  use are kept (:func:`cached_path`).
"""

from swath.storage.database.cache import cache_dir, cached_path
from swath.storage.database.layout import DEFAULT_PARTITION_RESIDUES, LAYOUT, PAD, VERSION
from swath.storage.database.partitions import partition_bounds
from swath.storage.database.reader import Database
from swath.storage.database.writer import DatabaseBuild, DatabaseInfo, database_lock_path

__all__ = [
    "DEFAULT_PARTITION_RESIDUES",
    "LAYOUT",
    "PAD",
    "VERSION",
    "Database",
    "DatabaseBuild",
    "DatabaseInfo",
    "cache_dir",
    "cached_path",
    "database_lock_path",
    "partition_bounds",
]
