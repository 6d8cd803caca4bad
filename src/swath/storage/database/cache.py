"""Database stores made from FASTA/FASTQ files on first use and kept for reuse
(:func:`cached_database`, in :func:`cache_dir`)."""

from __future__ import annotations

import hashlib
import logging
import os

from swath.errors import OutputExists
from swath.scoring import Alphabet
from swath.storage.database.writer import file_sha256, write_database

__all__ = ["cache_dir", "cached_database"]

logger = logging.getLogger(__name__)


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
                        f"{file_sha256(source)[:32]}-{key.hexdigest()[:8]}.swdb")
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
