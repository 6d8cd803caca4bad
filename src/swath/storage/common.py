"""What every swath store shares: opening, the layout check, attributes, a writer lock.

A swath store is a Zarr v3 group whose root attributes hold one object under the
key ``"swath"``::

    {"swath": {"layout": "database", "version": 1, ..., "complete": true}}

``layout`` names the kind of store and ``version`` its format; a reader checks both
with :func:`check_layout` before it reads anything else. Layouts that are finished
in one go end with :func:`mark_complete`, which sets ``"complete": true`` last, so
a store whose writer died is recognised as unfinished.

Paths are local paths or fsspec URLs (``file://``, ``memory://``, ``s3://``, ...);
Zarr opens both. :func:`store_lock` keeps two jobs from writing one store at once:
it creates a lock file atomically (``O_CREAT | O_EXCL``) on local filesystems and
best effort (exists, then write) through fsspec elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, cast

import fsspec
import numpy as np
import zarr
import zarr.errors
from fsspec.implementations.local import LocalFileSystem

from swath.errors import (
    FormatVersionError,
    InvalidParameter,
    StoreIncomplete,
    StoreLocked,
    StoreNotFound,
)

__all__ = [
    "LOCK_NAME",
    "ROOT_KEY",
    "StorePath",
    "acquire_lock",
    "array_digest",
    "check_layout",
    "is_local",
    "local_path",
    "lock_path",
    "mark_complete",
    "missing",
    "open_group",
    "open_store",
    "release_lock",
    "store_lock",
    "update_attrs",
    "write_attrs",
]

logger = logging.getLogger(__name__)

StorePath = str | os.PathLike[str]

ROOT_KEY = "swath"
LOCK_NAME = ".swath-lock"


def array_digest(*arrays: np.ndarray) -> str:
    """SHA-256 of arrays' bytes, one after another: how a store records its job's inputs."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------
# Paths


def _display(path: StorePath) -> str:
    return os.fspath(path)


def _filesystem(path: StorePath) -> tuple[fsspec.AbstractFileSystem, str]:
    """The fsspec filesystem of a local path or URL, and the path within it."""
    fs, inner = fsspec.core.url_to_fs(_display(path))
    return fs, inner


def is_local(path: StorePath) -> bool:
    """Whether ``path`` (a path or URL) lies on the local filesystem (``file://`` included).

    Examples
    --------
    >>> is_local("db.swdb"), is_local("file:///tmp/db.swdb"), is_local("memory://db.swdb")
    (True, True, False)
    """
    fs, _ = _filesystem(path)
    return isinstance(fs, LocalFileSystem)


def local_path(path: StorePath) -> str:
    """The local filesystem path of ``path`` (``file://`` stripped), made absolute.

    Raises
    ------
    ValueError
        ``path`` is not on the local filesystem.
    """
    fs, inner = _filesystem(path)
    if not isinstance(fs, LocalFileSystem):
        raise ValueError(f"{_display(path)} is not a local path")
    return os.path.abspath(inner)


# ---------------------------------------------------------------------------------
# Groups and attributes


def open_group(path: StorePath, mode: str = "r") -> zarr.Group:
    """Open the Zarr v3 group at a local path or fsspec URL.

    Parameters
    ----------
    path : str or os.PathLike
        A directory or an fsspec URL (``file://``, ``memory://``, ``s3://``, ...).
    mode : str
        Zarr's modes: ``"r"`` read, ``"r+"`` read and write an existing group,
        ``"a"`` read and write, creating the group if needed, ``"w"`` create
        (deleting what is there), ``"w-"`` create, failing if it exists.

    Raises
    ------
    StoreNotFound
        In a reading mode, the path does not exist or holds no Zarr v3 group.

    Examples
    --------
    >>> group = open_group("memory://doc-open-group", mode="w")
    >>> open_group("memory://doc-open-group").attrs.asdict()
    {}
    """
    display = _display(path)
    try:
        return zarr.open_group(display, mode=mode, zarr_format=3)  # type: ignore[arg-type]
    except FileNotFoundError:
        reason = "no Zarr v3 group" if _exists(path) else "the path does not exist"
        raise StoreNotFound(f"{display}: no swath store here ({reason})") from None
    except zarr.errors.ContainsArrayError:
        raise StoreNotFound(f"{display}: no swath store here (it holds a Zarr array, "
                            "not a group)") from None
    except (zarr.errors.BaseZarrError, json.JSONDecodeError, NotADirectoryError) as exc:
        raise StoreNotFound(f"{display}: no swath store here ({_reason(exc)})") from None


def _exists(path: StorePath) -> bool:
    try:
        fs, inner = _filesystem(path)
        return bool(fs.exists(inner))
    except Exception:  # only for a message: any failure reads as "does not exist"
        return False


def _reason(exc: BaseException) -> str:
    if isinstance(exc, zarr.errors.NodeNotFoundError):
        return "no Zarr v3 group"
    return f"{type(exc).__name__}: {exc}"


def check_layout(group: zarr.Group, path: StorePath, layout: str, version: int, *,
                 complete: bool = True) -> dict[str, Any]:
    """Check that ``group`` is a swath store of ``layout`` and ``version``; its attributes.

    Parameters
    ----------
    group : zarr.Group
        The store's root group (:func:`open_group`).
    path : str or os.PathLike
        The store's path, for messages.
    layout : str
        The layout the caller reads (``"database"``, ``"search"``, ...).
    version : int
        The format version the caller reads.
    complete : bool
        Also require ``"complete": true`` (for layouts finished with
        :func:`mark_complete`).

    Returns
    -------
    dict
        The ``"swath"`` attributes.

    Raises
    ------
    StoreNotFound
        The group has no swath attributes.
    FormatVersionError
        The store is of another layout or version.
    StoreIncomplete
        ``complete`` is asked for and the store was not finished.

    Examples
    --------
    >>> group = open_group("memory://doc-check-layout", mode="w")
    >>> write_attrs(group, "database", 1, sequences=3)
    >>> mark_complete(group)
    >>> check_layout(group, "db.swdb", "database", 1)["sequences"]
    3
    >>> check_layout(group, "db.swdb", "search", 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    swath.errors.FormatVersionError: db.swdb is a 'database' store version 1, this swath ...
    """
    display = _display(path)
    attrs = group.attrs.get(ROOT_KEY)
    if not isinstance(attrs, dict) or "layout" not in attrs or "version" not in attrs:
        raise StoreNotFound(f"{display}: no swath store here (a Zarr group without "
                            f"{ROOT_KEY!r} attributes)")
    found_layout, found_version = attrs["layout"], attrs["version"]
    if found_layout != layout or found_version != version:
        hint = ""
        if found_layout == layout and isinstance(found_version, int) and found_version > version:
            hint = " (it was written by a newer swath: upgrade swath to read it)"
        elif found_layout == layout:
            hint = " (it was written by an older swath: write it again with this one)"
        raise FormatVersionError(
            f"{display} is a {found_layout!r} store version {found_version}, this swath "
            f"reads {layout!r} version {version}{hint}")
    if complete and attrs.get("complete") is not True:
        raise StoreIncomplete(
            f"{display}: the store was not finished (the job writing it was interrupted or "
            "is still running; write it again)")
    return dict(attrs)


def open_store(path: StorePath, layout: str, version: int, *, mode: str = "r",
               complete: bool = True) -> tuple[zarr.Group, dict[str, Any]]:
    """Open a swath store and check its layout: :func:`open_group` + :func:`check_layout`.

    Returns
    -------
    (zarr.Group, dict)
        The root group and its ``"swath"`` attributes.

    Examples
    --------
    >>> group = open_group("memory://doc-open-store", mode="w")
    >>> write_attrs(group, "database", 1)
    >>> open_store("memory://doc-open-store", "database", 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    swath.errors.StoreIncomplete: memory://doc-open-store: the store was not finished (...
    """
    group = open_group(path, mode=mode)
    return group, check_layout(group, path, layout, version, complete=complete)


def store_layout(path: StorePath) -> tuple[str, int]:
    """The layout name and version of the swath store at ``path`` (``StoreNotFound`` if none)."""
    attrs = open_group(path, mode="r").attrs.get(ROOT_KEY)
    if not isinstance(attrs, dict) or not isinstance(attrs.get("layout"), str):
        raise StoreNotFound(f"{_display(path)}: no swath store here (a Zarr group without "
                            f"{ROOT_KEY!r} attributes)")
    return str(attrs["layout"]), int(attrs.get("version", 0))


_S = TypeVar("_S", bound="LayoutStore")


@dataclass(frozen=True)
class LayoutStore:
    """A store of one layout (a subclass names it in ``LAYOUT`` and ``VERSION``): its
    path, root group and ``"swath"`` attributes, with each array opened once."""

    LAYOUT: ClassVar[str]
    VERSION: ClassVar[int]

    path: str
    group: zarr.Group
    attrs: dict[str, Any]
    _arrays: dict[str, zarr.Array] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def open(cls: type[_S], path: StorePath, *, mode: str = "r", complete: bool = True) -> _S:
        """Open an existing store, checking its layout and version (and completeness)."""
        group, attrs = open_store(path, cls.LAYOUT, cls.VERSION, mode=mode, complete=complete)
        return cls(str(path), group, attrs)

    def array(self, name: str) -> zarr.Array:
        """One of the store's arrays (``StoreIncomplete`` if it is missing)."""
        if name not in self._arrays:
            try:
                self._arrays[name] = cast(zarr.Array, self.group[name])
            except KeyError:
                raise missing(f"array {name!r}", self.path) from None
        return self._arrays[name]


def reopen_or_create(path: StorePath, layout: str, version: int, inputs: dict[str, Any],
                     create: Callable[[], object], *, what: str, differs: str) -> None:
    """Reopen the ``layout`` store at ``path`` if it holds the job of ``inputs`` (its
    ``"inputs"`` attribute), or ``create`` it where nothing is.

    Raises
    ------
    InvalidParameter
        The store holds another job (``differs`` says what may differ), or the path
        holds something that is not a swath store.
    FormatVersionError
        The path holds a swath store of another layout or version.
    """
    try:
        _, attrs = open_store(path, layout, version, complete=False)
    except StoreNotFound:
        try:
            open_group(path, mode="r")
        except StoreNotFound:
            create()
            return
        raise InvalidParameter(f"{path} exists and is not a swath {what} store") from None
    if attrs.get("inputs") != inputs:
        raise InvalidParameter(f"{path} holds another {what} ({differs}); choose another "
                               "output path or remove it")
    logger.info("%s: same %s found, running what is missing", path, what)


def write_attrs(group: zarr.Group, layout: str, version: int, **fields: Any) -> None:
    """Set the store's ``"swath"`` attributes: layout, version, the fields, not complete.

    ``fields`` must be JSON values. ``"complete"`` is set to false; call
    :func:`mark_complete` when everything else is written.
    """
    attrs: dict[str, Any] = {"layout": layout, "version": version}
    attrs.update(fields)
    attrs["complete"] = False
    group.attrs[ROOT_KEY] = attrs


def _swath_attrs(group: zarr.Group) -> dict[str, Any]:
    value: Any = group.attrs.get(ROOT_KEY)
    return dict(value) if isinstance(value, dict) else {}


def update_attrs(group: zarr.Group, **fields: Any) -> None:
    """Add or replace fields of the ``"swath"`` attributes (``complete`` untouched)."""
    attrs = _swath_attrs(group)
    attrs.update(fields)
    group.attrs[ROOT_KEY] = attrs


def mark_complete(group: zarr.Group) -> None:
    """Set ``"complete": true``, as the last write of a store (its key is the last one)."""
    attrs = _swath_attrs(group)
    attrs.pop("complete", None)
    attrs["complete"] = True
    group.attrs[ROOT_KEY] = attrs


# ---------------------------------------------------------------------------------
# Writer lock


def lock_path(path: StorePath) -> str:
    """The lock file of a store written in place: ``<store>/.swath-lock``."""
    display = _display(path).rstrip("/")
    return f"{display}/{LOCK_NAME}"


def _owner() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except OSError:
        return True
    return True


def _read_owner(fs: fsspec.AbstractFileSystem, inner: str) -> dict[str, Any] | None:
    """The lock file's owner, or None when it is gone; {} when it cannot be parsed."""
    try:
        raw = fs.cat_file(inner)
    except FileNotFoundError:
        return None
    try:
        owner = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return {}
    return owner if isinstance(owner, dict) else {}


def _create_lock(fs: fsspec.AbstractFileSystem, inner: str, content: bytes) -> bool:
    """Create the lock file unless it exists; whether this call created it."""
    if isinstance(fs, LocalFileSystem):
        os.makedirs(os.path.dirname(inner) or ".", exist_ok=True)
        try:
            fd = os.open(inner, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        return True
    # Object stores have no exclusive create: check, then write (best effort).
    if fs.exists(inner):
        return False
    fs.pipe_file(inner, content)
    return True


def acquire_lock(path: StorePath, *, lockfile: str | None = None) -> str:
    """Take the writer lock of a store; return the lock file's path.

    The lock file (``<store>/.swath-lock`` unless ``lockfile`` names another)
    records the pid, host and start time of this process. A lock held by a
    process that no longer runs on this host is taken over, with a warning.

    Raises
    ------
    StoreLocked
        Another live job (or one on another host) holds the lock.

    Examples
    --------
    >>> lock = acquire_lock("memory://doc-lock/db.swdb")
    >>> acquire_lock("memory://doc-lock/db.swdb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    swath.errors.StoreLocked: memory://doc-lock/db.swdb is being written by pid ...
    >>> release_lock("memory://doc-lock/db.swdb")
    """
    display = _display(path)
    lockfile = lock_path(path) if lockfile is None else lockfile
    fs, inner = _filesystem(lockfile)
    me = _owner()
    content = json.dumps(me).encode()
    for attempt in range(2):
        if _create_lock(fs, inner, content):
            logger.debug("locked %s (%s)", display, lockfile)
            return lockfile
        owner = _read_owner(fs, inner)
        if owner is None:  # released in between: try again
            continue
        pid, host, since = owner.get("pid"), owner.get("host"), owner.get("time", "?")
        stale = (isinstance(pid, int) and host == me["host"] and pid != me["pid"]
                 and not _pid_alive(pid))
        if stale and attempt == 0:
            logger.warning("%s: taking over the lock of pid %s on %s since %s (that process "
                           "is gone)", display, pid, host, since)
            with contextlib.suppress(FileNotFoundError):
                fs.rm_file(inner)
            continue
        if not owner:
            raise StoreLocked(f"{display} is being written by another job (an unreadable lock; "
                              f"remove {lockfile} if no job is writing it)")
        raise StoreLocked(f"{display} is being written by pid {pid} on {host} since {since} "
                          f"(remove {lockfile} if that job is dead)")
    raise StoreLocked(f"{display} is being written by another job (remove {lockfile} if no "
                      "job is writing it)")


def release_lock(path: StorePath, *, lockfile: str | None = None) -> None:
    """Give back the writer lock taken by :func:`acquire_lock` in this process.

    A lock file that another process has taken over in the meantime is left alone
    (with a warning); one that is already gone is fine.
    """
    lockfile = lock_path(path) if lockfile is None else lockfile
    fs, inner = _filesystem(lockfile)
    owner = _read_owner(fs, inner)
    if owner is None:
        return
    me = _owner()
    if owner.get("pid") != me["pid"] or owner.get("host") != me["host"]:
        logger.warning("%s: the lock %s now belongs to pid %s on %s; leaving it",
                       _display(path), lockfile, owner.get("pid"), owner.get("host"))
        return
    with contextlib.suppress(FileNotFoundError):
        fs.rm_file(inner)
    logger.debug("unlocked %s", _display(path))


@contextmanager
def store_lock(path: StorePath, *, lockfile: str | None = None) -> Iterator[str]:
    """Hold the writer lock of a store for the ``with`` block; yields the lock file.

    Raises
    ------
    StoreLocked
        Another live job holds the lock (see :func:`acquire_lock`).

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


def missing(what: str, path: StorePath) -> StoreIncomplete:
    """A :class:`StoreIncomplete` for a store that lacks an array or chunk it should have."""
    return StoreIncomplete(f"{_display(path)}: the store was not finished or is damaged "
                           f"({what} is missing)")
