"""Where database stores made from FASTA/FASTQ files on first use are kept for reuse
(:func:`cached_path`, in :func:`cache_dir`; ``swath.engine.database.cached_database``
makes them)."""

from __future__ import annotations

import hashlib
import os

from swath.scoring import Alphabet

__all__ = ["cache_dir", "cached_path", "file_sha256"]


def cache_dir() -> str:
    """Where swath keeps what it makes for reuse: ``$SWATH_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/swath``, else ``~/.cache/swath``."""
    if os.environ.get("SWATH_CACHE_DIR"):
        return os.environ["SWATH_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "swath")


def cached_path(source: str | os.PathLike[str], alphabet: Alphabet, wildcard: bool) -> str:
    """Where the database store of FASTA/FASTQ ``source`` is kept in :func:`cache_dir`:
    under the file's SHA-256 and the encoding."""
    key = hashlib.sha256(f"{alphabet.letters}|{alphabet.wildcard}|{wildcard}".encode())
    return os.path.join(cache_dir(), "databases",
                        f"{file_sha256(source)[:32]}-{key.hexdigest()[:8]}.swdb")


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 digest of a file's bytes."""
    hasher = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            hasher.update(block)
    return hasher.hexdigest()
