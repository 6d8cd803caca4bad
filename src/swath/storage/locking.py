"""The writer lock of a store: one job writes a store at a time.

On a local filesystem the lock is a kernel lock (``fcntl.flock``) on a lock file: the
operating system releases it when its holder dies, however it dies, so there is no
stale lock to take over and no race between two takers. The file records the holder
(pid, host, start time) for the message another job gets. It is removed on release
while the lock is still held; a taker that locked a file removed in between (its
inode no longer the path's) lets it go and tries again, so two holders never hold
two different files.

Through fsspec (object stores: ``s3://``, ``gs://``, ``memory://``) there is no
kernel lock: the lock is a file created if absent (check, then write), which keeps
apart jobs started a moment apart but not two started at the same instant, and a
holder that dies leaves it behind (its message says which file to remove).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from swath.errors import OutputExists, StoreLocked
from swath.storage.common import StorePath, display

__all__ = ["LOCK_NAME", "acquire_lock", "lock_path", "release_lock", "store_lock"]

logger = logging.getLogger(__name__)

LOCK_NAME = ".swath-lock"

_HELD: dict[str, int] = {}       # lock file -> descriptor holding its flock, this process
_HELD_GUARD = threading.Lock()


def lock_path(path: StorePath) -> str:
    """The lock file of a store written in place: ``<store>/.swath-lock``."""
    return f"{display(path).rstrip('/')}/{LOCK_NAME}"


def _owner() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def _owner_in(raw: bytes) -> dict[str, Any] | None:
    """The holder a lock file names, or None when it names none."""
    try:
        owner = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return owner if isinstance(owner, dict) and {"pid", "host"} <= owner.keys() else None


def _holder(raw: bytes) -> str:
    """Who holds a lock, from its file's content, for a message."""
    owner = _owner_in(raw)
    if owner is None:
        return "another job"
    return f"pid {owner['pid']} on {owner['host']} since {owner.get('time', '?')}"


def _is_lock(raw: bytes) -> bool:
    """Whether a file's content is a swath lock's: a holder, or nothing yet (a taker
    killed between creating it and writing to it)."""
    return not raw.strip() or _owner_in(raw) is not None


def _same_file(path: str, fd: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _lock_local(store: str, lockfile: str) -> None:
    os.makedirs(os.path.dirname(lockfile) or ".", exist_ok=True)
    while True:
        fd = os.open(lockfile, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                os.close(fd)
                raise
            holder = _holder(os.pread(fd, 4096, 0))
            os.close(fd)
            raise StoreLocked(f"{store} is being written by {holder}") from None
        if _same_file(lockfile, fd):
            break
        os.close(fd)        # the file was released and removed after we opened it
    if not _is_lock(os.pread(fd, 4096, 0)):
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        raise OutputExists(f"{lockfile} exists and is not a swath lock file; swath will not "
                           "overwrite it (move it away)")
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(_owner()).encode(), 0)
    with _HELD_GUARD:
        _HELD[lockfile] = fd


def _lock_remote(store: str, fs: fsspec.AbstractFileSystem, inner: str, lockfile: str
                 ) -> None:
    try:
        raw = fs.cat_file(inner)
    except FileNotFoundError:
        fs.pipe_file(inner, json.dumps(_owner()).encode())
        return
    raise StoreLocked(f"{store} is being written by {_holder(raw)} (remove {lockfile} if "
                      "that job is dead: object stores keep no kernel lock)")


def acquire_lock(path: StorePath, *, lockfile: str | None = None) -> str:
    """Take the writer lock of a store; return the lock file's path.

    Raises
    ------
    StoreLocked
        Another job holds the lock (the message names it).

    Examples
    --------
    >>> lock = acquire_lock("memory://doc-lock/db.swdb")
    >>> acquire_lock("memory://doc-lock/db.swdb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    swath.errors.StoreLocked: memory://doc-lock/db.swdb is being written by pid ...
    >>> release_lock("memory://doc-lock/db.swdb")
    """
    lockfile = lock_path(path) if lockfile is None else lockfile
    fs, inner = fsspec.core.url_to_fs(lockfile)
    if isinstance(fs, LocalFileSystem):
        with _HELD_GUARD:
            held = inner in _HELD
        if held:
            raise StoreLocked(f"{display(path)} is being written by this process already")
        _lock_local(display(path), inner)
        return inner
    _lock_remote(display(path), fs, inner, lockfile)
    return lockfile


def release_lock(path: StorePath, *, lockfile: str | None = None) -> None:
    """Give back the writer lock taken by :func:`acquire_lock` in this process."""
    lockfile = lock_path(path) if lockfile is None else lockfile
    fs, inner = fsspec.core.url_to_fs(lockfile)
    if isinstance(fs, LocalFileSystem):
        with _HELD_GUARD:
            fd = _HELD.pop(inner, None)
        if fd is None:
            return
        if _same_file(inner, fd):   # not one another job made since (its store replaced)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(inner)    # while still locked: see the module's docstring
        os.close(fd)
    else:
        with contextlib.suppress(FileNotFoundError):
            fs.rm_file(inner)
    logger.debug("unlocked %s", display(path))


@contextmanager
def store_lock(path: StorePath, *, lockfile: str | None = None) -> Iterator[str]:
    """Hold the writer lock of a store for the ``with`` block; yields the lock file.

    Raises
    ------
    StoreLocked
        Another job holds the lock (see :func:`acquire_lock`).

    Examples
    --------
    >>> with store_lock("memory://doc-store-lock/result.zarr") as lock:
    ...     lock
    'memory://doc-store-lock/result.zarr/.swath-lock'
    """
    taken = acquire_lock(path, lockfile=lockfile)
    try:
        yield taken
    finally:
        release_lock(path, lockfile=taken)
