"""Where a store may be created, and how it appears there whole.

swath writes a store only where nothing is (no path, or an empty directory), where a
store of the same job is (to finish it), or, asked to (``overwrite``), where a swath
store is. Anything else at the path (a file, a directory holding other files, the
current directory) is refused with :class:`~swath.errors.OutputExists`: swath never
deletes or overwrites what it did not write.

A new store appears whole (:func:`creating`). On a local filesystem it is built in a
hidden sibling directory, ``.NAME.swath-new-PID-TAG@HOST``, and renamed into place
when its arrays and attributes are written; a process killed while building leaves
only that sibling, which the next creation beside it removes once its process is gone.
Through fsspec (object stores have no rename) it is built in place, its attributes
first with ``"created": false``; a store of swath's layout still marked so is one
whose creation was interrupted, and the next run creates it again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import fsspec
import zarr
from fsspec.implementations.local import LocalFileSystem

from swath.errors import FormatVersionError, OutputExists, naming
from swath.storage.common import ROOT_KEY, StorePath, display, update_attrs
from swath.storage.locking import LOCK_NAME, store_lock

__all__ = ["creating", "discard", "found_at", "reopen_or_create"]

logger = logging.getLogger(__name__)

_NEW, _OLD = "swath-new", "swath-old"


class _Appeared(OutputExists):
    """Something appeared at the path while this process built its store there."""


def found_at(path: StorePath) -> dict[str, Any] | None:
    """What is at ``path``: None for nothing (no path, or an empty directory), the
    ``"swath"`` attributes of a swath store, else :class:`OutputExists`'s message
    material as ``{}`` (a file, a directory with other content, a foreign Zarr group)."""
    fs, inner = fsspec.core.url_to_fs(display(path))
    if not fs.exists(inner):
        return None
    if not fs.isdir(inner):
        return {}
    if not fs.ls(inner, detail=False):
        return None
    try:
        attrs = zarr.open_group(display(path), mode="r", zarr_format=3).attrs.get(ROOT_KEY)
    except Exception:  # anything that is not a readable Zarr v3 group is not swath's
        return {}
    return dict(attrs) if isinstance(attrs, dict) and "layout" in attrs else {}


def an(word: str) -> str:
    """``word`` after its indefinite article.

    Examples
    --------
    >>> an("alignment"), an("pairs")
    ('an alignment', 'a pairs')
    """
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _refuse(path: StorePath, why: str) -> OutputExists:
    return OutputExists(f"{display(path)} {why}; swath will not delete or overwrite it "
                        "(choose another output path)")


def _check_not_cwd(path: StorePath) -> None:
    fs, inner = fsspec.core.url_to_fs(display(path))
    if isinstance(fs, LocalFileSystem):
        target, here = os.path.realpath(inner), os.path.realpath(os.getcwd())
        if here == target or here.startswith(target.rstrip("/") + "/"):
            raise _refuse(path, "is the current directory (or holds it)")


def check_output(path: StorePath, layout: str, version: int, *, what: str,
                 overwrite: bool = False) -> dict[str, Any] | None:
    """What is at ``path`` where a ``layout`` store may be written there: None for
    nothing, else the ``"swath"`` attributes of a swath store to reopen or (with
    ``overwrite``) replace. A job checks its output so before it starts any cluster.

    Raises
    ------
    OutputExists
        The path is the current directory (or holds it), holds something swath did not
        write, or, without ``overwrite``, a swath store of another layout.
    FormatVersionError
        The path holds a store of this layout written by another swath version (and
        ``overwrite`` is false).
    """
    from swath.storage.database.layout import LAYOUT as DATABASE

    _check_not_cwd(path)
    attrs = found_at(path)
    if attrs == {}:
        raise _refuse(path, "exists and is not a swath store")
    if attrs is not None and attrs["layout"] == DATABASE != layout:
        raise _refuse(path, f"is a swath database, which only a database replaces, not "
                      f"{an(what)} store")
    if attrs is not None and not overwrite:
        if attrs["layout"] != layout:
            raise OutputExists(f"{display(path)} is a swath {attrs['layout']!r} store, not "
                               f"{an(what)} store (choose another output path, or "
                               "--overwrite to replace it)")
        if attrs.get("version") != version:
            raise FormatVersionError(
                f"{display(path)} is a {layout!r} store version {attrs.get('version')}, "
                f"this swath writes version {version} (--overwrite replaces it)")
    return attrs


def reopen_or_create(path: StorePath, layout: str, version: int,
                     inputs: dict[str, Any] | Callable[[], dict[str, Any]],
                     create: Callable[[bool], object], *, what: str, differs: str,
                     overwrite: bool = False) -> None:
    """Reopen the ``layout`` store at ``path`` if it holds the job of ``inputs`` (its
    ``"inputs"`` attribute; a function giving them is called only when a store is there
    to compare with), or ``create(replace)`` it: where nothing is
    (``replace`` false), or in place of a swath store whose creation was interrupted
    or, with ``overwrite``, of any swath store (``replace`` true).

    Raises
    ------
    OutputExists
        As :func:`check_output`, or the path holds a store of another job (``differs``
        says what may differ) and ``overwrite`` is false.
    FormatVersionError
        As :func:`check_output`.
    """
    for _ in range(3):
        attrs = check_output(path, layout, version, what=what, overwrite=overwrite)
        replace = attrs is not None
        if attrs is not None and not overwrite:
            if attrs.get("created") is True:
                if attrs.get("inputs") != (inputs() if callable(inputs) else inputs):
                    raise OutputExists(f"{display(path)} holds another {what} ({differs}); "
                                       "choose another output path, or --overwrite to "
                                       "replace it")
                logger.info("%s: same %s found, running what is missing", display(path), what)
                return
            logger.warning("%s: its creation was interrupted; creating it again",
                           display(path))
        try:
            if replace:
                with store_lock(path):
                    create(True)
            else:
                create(False)
            return
        except _Appeared:
            continue        # look again at what is there now
    raise OutputExists(f"{display(path)}: other jobs keep creating stores here; run again")


def _tag() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:8]}@{socket.gethostname()}"


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def sweep(parent: str, name: str) -> None:
    """Remove the hidden siblings of ``parent/name`` that this host's dead swath
    processes left while creating or replacing it."""
    host = socket.gethostname()
    with contextlib.suppress(OSError):
        for entry in os.listdir(parent):
            for kind in (_NEW, _OLD):
                prefix = f".{name}.{kind}-"
                if not entry.startswith(prefix) or "@" not in entry:
                    continue
                owner, _, where = entry[len(prefix):].partition("@")
                pid = owner.split("-", 1)[0]
                if where == host and pid.isdigit() and _pid_gone(int(pid)):
                    logger.info("removing %s, left by a swath process that is gone", entry)
                    shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)


def _clear(fs: fsspec.AbstractFileSystem, inner: str) -> None:
    """Remove what is at an in-place store's path, but its lock file."""
    for entry in fs.ls(inner, detail=False) if fs.exists(inner) else []:
        if entry.rstrip("/").rsplit("/", 1)[-1] != LOCK_NAME:
            fs.rm(entry, recursive=True)


@contextmanager
def creating(path: StorePath, layout: str, version: int, fields: dict[str, Any], *,
             replace: bool = False, coordinates: Sequence[str] = ()) -> Iterator[zarr.Group]:
    """A new store's root group to fill in the ``with`` block; the store appears at
    ``path`` only when the block ends without error (see the module's docstring).

    Its ``"swath"`` attributes are ``layout``, ``version``, an ``id`` of this store
    (jobs check it is still theirs), ``fields``, ``"created"`` (true once the block
    ends) and ``"complete": false``. ``coordinates`` name the arrays that xarray makes
    coordinates (CF's ``coordinates`` attribute of the root: the names of the records).
    ``replace`` puts it in place
    of the store at ``path``; otherwise a store that appeared there in the meantime
    is left alone and the new one dropped (the caller looks again).
    """
    attrs = {"layout": layout, "version": version, "id": uuid.uuid4().hex, **fields,
             "created": False, "complete": False}
    root: dict[str, Any] = {ROOT_KEY: attrs}
    if coordinates:
        root["coordinates"] = " ".join(coordinates)
    fs, inner = fsspec.core.url_to_fs(display(path))
    if not isinstance(fs, LocalFileSystem):
        # in place: held under the store's lock (the caller's, when it replaces a store),
        # which a replacement keeps while it empties the path
        with contextlib.nullcontext() if replace else store_lock(path):
            _clear(fs, inner)
            group = zarr.open_group(display(path), mode="a", zarr_format=3, attributes=root)
            try:
                yield group
                update_attrs(group, created=True)
            except BaseException:
                with contextlib.suppress(Exception):
                    _clear(fs, inner)
                raise
        return
    target = os.path.abspath(inner)
    parent, name = os.path.split(target)
    os.makedirs(parent, exist_ok=True)
    sweep(parent, name)
    building = os.path.join(parent, f".{name}.{_NEW}-{_tag()}")
    try:
        group = zarr.open_group(building, mode="w-", zarr_format=3, attributes=root)
        yield group
        update_attrs(group, created=True)
        if replace and os.path.lexists(target):
            old = os.path.join(parent, f".{name}.{_OLD}-{_tag()}")
            os.rename(target, old)
            os.rename(building, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            try:
                os.rename(building, target)
            except OSError as exc:
                if found_at(target) is not None:      # not an empty directory any more
                    raise _Appeared(f"{target} appeared while swath created a store there "
                                    "(run the command again)") from exc
                raise
    except OSError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise naming(exc, building, display(path)) from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def discard(path: StorePath, store_id: str) -> None:
    """Remove a store this process made whose job was refused on its inputs (a
    malformed file: running the job again would refuse it again), leaving nothing of its
    own at ``path``; only while the store there is still that one (its creation id
    ``store_id``): whatever else is at ``path`` stays."""
    fs, inner = fsspec.core.url_to_fs(display(path))
    try:
        attrs = zarr.open_group(display(path), mode="r", zarr_format=3).attrs.get(ROOT_KEY)
    except (FileNotFoundError, zarr.errors.GroupNotFoundError):
        return
    if not isinstance(attrs, dict) or attrs.get("id") != store_id:
        return
    if fs.exists(inner):
        logger.info("%s: removing the store made for inputs that were refused", display(path))
        fs.rm(inner, recursive=True)
