"""Zarr store layouts: databases, results, boundary buffers, traceback bytes.

Every store is a Zarr v3 group whose ``"swath"`` attributes name its layout and
version (:mod:`swath.storage.common`); :mod:`swath.storage.database` holds the
database layout written by ``swath makedb``.
"""

from swath.storage.database import Database, DatabaseInfo

__all__ = ["Database", "DatabaseInfo"]
