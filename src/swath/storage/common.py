"""What every swath store shares: opening, the layout check, attributes, done marks.

A swath store is a Zarr v3 group whose root attributes hold one object under the
key ``"swath"``::

    {"swath": {"layout": "database", "version": 1, ..., "complete": true}}

``layout`` names the kind of store and ``version`` its format; a reader checks both
with :func:`check_layout` before it reads anything else. Layouts that are finished
in one go end with :func:`mark_complete`, which sets ``"complete": true`` last, so
a store whose writer died is recognised as unfinished.

Paths are local paths or fsspec URLs (``file://``, ``memory://``, ``s3://``, ...);
Zarr opens both. :mod:`swath.storage.creation` says where a store may be created and
makes it appear whole; :mod:`swath.storage.locking` keeps two jobs from writing one
store at once; :mod:`swath.storage.integrity` digests what units write.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import fsspec
import numpy as np
import zarr
import zarr.errors
from fsspec.implementations.local import LocalFileSystem

from swath.constants import MODES, Mode, is_mode
from swath.errors import (
    FormatVersionError,
    InputChanged,
    StoreDamaged,
    StoreIncomplete,
    StoreNotFound,
)
from swath.scoring import Scoring
from swath.storage.integrity import check, digest

__all__ = [
    "ROOT_KEY",
    "LayoutStore",
    "StorePath",
    "array_digest",
    "check_layout",
    "create_field",
    "display",
    "is_local",
    "local_path",
    "mark_complete",
    "missing",
    "open_group",
    "open_store",
    "record_digest",
    "record_digests",
    "store_layout",
    "swath_attrs",
    "update_attrs",
    "value_dtype",
    "write_attrs",
    "write_strings",
    "write_whole",
]

logger = logging.getLogger(__name__)

StorePath = str | os.PathLike[str]

ROOT_KEY = "swath"


def array_digest(*arrays: np.ndarray) -> str:
    """SHA-256 of arrays' bytes, one after another: how a store records its job's inputs."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------
# Paths


def display(path: StorePath) -> str:
    """A store path or URL as a string, for messages."""
    return os.fspath(path)


def _filesystem(path: StorePath) -> tuple[fsspec.AbstractFileSystem, str]:
    """The fsspec filesystem of a local path or URL, and the path within it."""
    fs, inner = fsspec.core.url_to_fs(display(path))
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
        raise ValueError(f"{display(path)} is not a local path")
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
    shown = display(path)
    try:
        # swath reads the metadata itself, never a consolidated copy (see consolidated)
        return zarr.open_group(shown, mode=mode, zarr_format=3,  # type: ignore[arg-type]
                               use_consolidated=False)
    except FileNotFoundError:
        reason = "no Zarr v3 group" if _exists(path) else "the path does not exist"
        raise StoreNotFound(f"{shown}: no swath store here ({reason})") from None
    except zarr.errors.ContainsArrayError:
        raise StoreNotFound(f"{shown}: no swath store here (it holds a Zarr array, "
                            "not a group)") from None
    except (zarr.errors.BaseZarrError, json.JSONDecodeError, NotADirectoryError) as exc:
        raise StoreNotFound(f"{shown}: no swath store here ({_reason(exc)})") from None


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
    shown = display(path)
    attrs = group.attrs.get(ROOT_KEY)
    if not isinstance(attrs, dict) or "layout" not in attrs or "version" not in attrs:
        raise StoreNotFound(f"{shown}: no swath store here (a Zarr group without "
                            f"{ROOT_KEY!r} attributes)")
    found_layout, found_version = attrs["layout"], attrs["version"]
    if found_layout != layout or found_version != version:
        hint = ""
        if found_layout == layout and isinstance(found_version, int) and found_version > version:
            hint = " (it was written by a newer swath: upgrade swath to read it)"
        elif found_layout == layout:
            hint = " (it was written by an older swath: write it again with this one)"
        raise FormatVersionError(
            f"{shown} is a {found_layout!r} store version {found_version}, this swath "
            f"reads {layout!r} version {version}{hint}")
    if attrs.get("created") is False:
        raise StoreIncomplete(f"{shown}: the store's creation was interrupted (run the command "
                              "that writes it again: it creates the store anew)")
    if complete and attrs.get("complete") is not True:
        raise StoreIncomplete(
            f"{shown}: the store was not finished (the job writing it was interrupted or "
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
        raise StoreNotFound(f"{display(path)}: no swath store here (a Zarr group without "
                            f"{ROOT_KEY!r} attributes)")
    return str(attrs["layout"]), int(attrs.get("version", 0))


_S = TypeVar("_S", bound="LayoutStore")


#: a unit of a kind of work (search units, all-pairs tiles, long-pair tiles, segments)
Unit = Any


@dataclass(frozen=True)
class LayoutStore:
    """A store of one layout (a subclass names it in ``LAYOUT`` and ``VERSION``): its
    path, root group and ``"swath"`` attributes, with each array opened once.

    Work is done in units of the kinds in ``MARKS`` (kind -> its done array). A unit
    writes its chunks, then its done mark: the digest of the values it wrote
    (:mod:`swath.storage.integrity`), which :meth:`damaged` compares with the values
    read back (``unit_values``, per layout). Arrays written whole are recorded by
    :func:`write_whole` and checked the same way. :meth:`finalize` marks the store
    complete once every unit is done.
    """

    LAYOUT: ClassVar[str]
    VERSION: ClassVar[int]
    MARKS: ClassVar[dict[str, str]] = {}
    #: what messages call the units of a kind, when not the kind's name with an "s"
    UNIT_NAMES: ClassVar[dict[str, str]] = {}
    #: arrays written whole that a run writes again (the others hold the job's inputs)
    RECOMPUTED: ClassVar[frozenset[str]] = frozenset()
    #: kinds of unit that take the job's inputs in: damaged once done, nothing redoes them
    INPUT_KINDS: ClassVar[frozenset[str]] = frozenset()
    #: what a message about damage tells the user to do (``{path}``: the store's)
    REMEDY: ClassVar[str] = "`swath resume {path}` recomputes what it can"
    #: the arrays xarray opens as coordinates (the records' names)
    COORDINATES: ClassVar[tuple[str, ...]] = ()

    path: str
    group: zarr.Group
    attrs: dict[str, Any]
    _arrays: dict[str, zarr.Array] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def open(cls: type[_S], path: StorePath, *, mode: str = "r", complete: bool = True) -> _S:
        """Open an existing store, checking its layout and version (and completeness)."""
        group, attrs = open_store(path, cls.LAYOUT, cls.VERSION, mode=mode, complete=complete)
        return cls(str(path), group, attrs)

    @classmethod
    def _create(cls: type[_S], path: StorePath, fields: dict[str, Any],
                fill: Callable[[zarr.Group], None], *, replace: bool = False) -> _S:
        """Create a store of this layout at ``path``, whole or not at all
        (:func:`~swath.storage.creation.creating`): ``fields`` (JSON values) go to its
        root attributes, ``fill(group)`` makes its arrays; ``replace`` replaces a store
        at ``path``. The new store, opened for writing."""
        from swath.storage.creation import creating  # creation builds on this module

        with creating(path, cls.LAYOUT, cls.VERSION, fields, replace=replace,
                      coordinates=cls.COORDINATES) as group:
            fill(group)
        return cls.open(path, mode="r+", complete=False)

    @classmethod
    def create_marks(cls, group: zarr.Group, kind: str, shape: tuple[int, ...],
                     dimension_names: Sequence[str], **create: Any) -> None:
        """Make the done marks of ``kind`` (``MARKS``), one a unit and one chunk each:
        uint64, 0 until the unit is done (``create``: ``create_array``'s other arguments)."""
        group.create_array(cls.MARKS[kind], shape=shape, chunks=(1,) * len(shape),
                           dtype=np.uint64, fill_value=0, dimension_names=dimension_names,
                           **create)

    @property
    def mode(self) -> Mode:
        """The job's alignment mode: ``"local"``, ``"global"`` or ``"semiglobal"``."""
        mode = self.attrs["inputs"]["mode"]
        if not is_mode(mode):
            raise StoreDamaged(f"{self.path}: its attributes name no mode swath knows, "
                               f"{mode!r} (one of {', '.join(MODES)})")
        return mode

    @property
    def scoring(self) -> Scoring:
        """The job's scoring scheme."""
        return Scoring.from_dict(self.attrs["inputs"]["scoring"])

    def array(self, name: str) -> zarr.Array:
        """One of the store's arrays (``StoreIncomplete`` if it is missing)."""
        if name not in self._arrays:
            try:
                node = self.group[name]
            except KeyError:
                raise missing(f"array {name!r}", self.path) from None
            except (ValueError, TypeError) as error:    # zarr.json that is not metadata
                raise StoreDamaged(f"{self.path}: damaged: the metadata (zarr.json) of "
                                   f"{name} cannot be read ({error}); `swath verify "
                                   f"{self.path}` says more") from None
            if not isinstance(node, zarr.Array):
                raise missing(f"array {name!r}", self.path)
            self._arrays[name] = node
        return self._arrays[name]

    def check_id(self, store_id: str) -> None:
        """Raise :class:`~swath.errors.InputChanged` unless this is the store a job was
        made for (the ``id`` :func:`~swath.storage.creation.creating` gave it): one
        replaced since (``--overwrite`` by another job) is not written into."""
        if self.attrs.get("id") != store_id:
            raise InputChanged(f"{self.path} was replaced by another job since this one "
                               "started; run it again")

    # done marks ----------------------------------------------------------------

    def unit_values(self, kind: str, unit: Unit) -> list[np.ndarray]:
        """The values a unit of ``kind`` wrote, read back (in the order it digested them)."""
        raise NotImplementedError(f"{type(self).__name__} has no units of kind {kind!r}")

    def has_marks(self, kind: str) -> bool:
        """Whether the done marks of ``kind`` exist (a later phase makes its own)."""
        return self.MARKS[kind] in self.group

    def marks(self, kind: str) -> np.ndarray:
        """The done marks of ``kind`` (uint64 digests; 0: not done, or a mark whose chunk
        cannot be read)."""
        done = self.array(self.MARKS[kind])
        try:
            return np.asarray(done[...], dtype=np.uint64)
        except Exception:  # a chunk no codec decodes: mark by mark, unreadable ones as 0
            marks = np.zeros(done.shape, dtype=np.uint64)
            for at in np.ndindex(*done.shape):
                with contextlib.suppress(Exception):
                    marks[at] = done[at]
            return marks

    def done(self, kind: str | None = None) -> np.ndarray:
        """Which units of ``kind`` (by default the layout's first kind) are done (bool,
        one per unit)."""
        return self.marks(kind or next(iter(self.MARKS))) != 0

    def is_done(self, kind: str, unit: Unit) -> bool:
        """Whether ``unit`` of ``kind`` is done (its mark alone read)."""
        return bool(self.array(self.MARKS[kind])[unit] != 0)

    def mark(self, kind: str, unit: Unit, *values: np.ndarray) -> None:
        """Mark a unit done: its mark is the digest of the values it wrote."""
        self.array(self.MARKS[kind])[unit] = np.uint64(digest(*values))

    def write_marked(self, kind: str, unit: Unit, spec: dict[str, tuple[Any, Any]],
                     values: dict[str, np.ndarray], where: Any) -> None:
        """Write each field of ``spec`` (name -> dtype, fill) from ``values`` into its
        array at ``where`` (a unit's selection), then mark ``unit`` of ``kind`` done with
        their digest (read back in ``spec``'s order by :meth:`read_fields`)."""
        written = [np.asarray(values[name], dtype=value_dtype(dtype))
                   for name, (dtype, _) in spec.items()]
        for name, value in zip(spec, written, strict=True):
            self.array(name)[where] = value
        self.mark(kind, unit, *written)

    def create_fields(self, spec: dict[str, tuple[Any, Any]], **create: Any) -> None:
        """Create the array of each field of ``spec`` (name -> dtype, fill) with
        :func:`create_field` (``create``: ``create_array``'s other arguments)."""
        for name, (dtype, fill) in spec.items():
            create_field(self.group, name, dtype, fill_value=fill, **create)

    def read_fields(self, spec: dict[str, tuple[Any, Any]], where: Any = ...
                    ) -> dict[str, np.ndarray]:
        """Each field of ``spec`` read at ``where`` (all of it by default)."""
        return {name: np.asarray(self.array(name)[where]) for name in spec}

    def unmark(self, kind: str, units: list[Unit]) -> None:
        """Clear the done marks of ``units`` (their work runs again)."""
        done = self.array(self.MARKS[kind])
        for unit in units:
            done[unit] = 0

    def check_done(self) -> None:
        """Raise :class:`StoreIncomplete` unless every unit of every kind is done."""
        for kind in self.MARKS:
            if not self.has_marks(kind):
                continue
            done = self.done(kind)
            pending = done.size - int(np.count_nonzero(done))
            if pending:
                units = self.UNIT_NAMES.get(kind, f"{kind}s")
                raise StoreIncomplete(f"{self.path}: {pending} of {done.size} {units} are not "
                                      f"done (run `swath resume {self.path}`)")

    def finalize(self) -> None:
        """Check that every unit is done (:meth:`check_done`), then mark the store
        complete."""
        self.check_done()
        self._set_complete()

    def _set_complete(self) -> None:
        """Mark the store complete, its last write."""
        mark_complete(self.group)
        self.reload_attrs()

    def damaged(self) -> dict[str, list[Unit]]:
        """Per kind of unit (and ``"array"`` for arrays written whole), the done units and
        arrays whose values no longer digest to their marks: deleted, truncated or altered
        chunks; in a finished store, also the units whose mark is lost. Empty lists
        everywhere for a sound store.

        Raises
        ------
        StoreDamaged
            The metadata (``zarr.json``) of a group or array of the store cannot be read:
            what its chunks hold cannot be known, nothing recomputes it.
        """
        broken = unreadable_metadata(self.path)
        if broken:
            raise StoreDamaged(f"{self.path}: damaged beyond repair: the metadata (zarr.json) "
                               f"of {describe_damage({'node': broken})} cannot be read; run "
                               "the job again with --overwrite")
        found: dict[str, list[Unit]] = {}
        finished = self.attrs.get("complete") is True
        for kind in self.MARKS:
            if not self.has_marks(kind):     # a later phase's marks, not made yet
                found[kind] = []
                continue
            marks = self.marks(kind)

            def unit(at: np.ndarray, ndim: int = marks.ndim) -> Unit:
                return tuple(int(i) for i in at) if ndim > 1 else int(at[0])

            done = [(unit(at), int(marks[tuple(at)])) for at in np.argwhere(marks != 0)]
            lost = [unit(at) for at in np.argwhere(marks == 0)] if finished else []
            found[kind] = sorted(check(done, functools.partial(self.unit_values, kind)) + lost)
        wholes = dict(self.attrs.get("digests", {}))
        found["array"] = check(wholes.items(), self._whole)
        return found

    def _whole(self, name: str) -> Iterable[np.ndarray]:
        return [np.asarray(self.array(name)[...])]

    def reload_attrs(self) -> None:
        """Read the ``"swath"`` attributes again (after a write through ``group``)."""
        self.attrs.clear()
        self.attrs.update(swath_attrs(self.group))

    def check_sound(self) -> None:
        """Raise :class:`StoreDamaged`, naming what, if any unit or whole array is damaged."""
        damage = {kind: units for kind, units in self.damaged().items() if units}
        if damage:
            raise StoreDamaged(f"{self.path}: damaged: {describe_damage(damage)}; "
                               f"{self.REMEDY.format(path=self.path)}")

    def verify(self) -> dict[str, int]:
        """Check every done unit and every array written whole against its digest
        (:meth:`check_sound`); how many of each kind (``"array"``: arrays written whole)
        were checked."""
        self.check_sound()
        counts = {kind: int(np.count_nonzero(self.marks(kind))) for kind in self.MARKS
                  if self.has_marks(kind)}
        return counts | {"array": len(self.attrs.get("digests", {}))}

    def recompute_damaged(self) -> dict[str, list[Unit]]:
        """Find damaged units and arrays (:meth:`damaged`) and :meth:`repair` them, so that
        the run about to start recomputes them (with a warning); what was damaged."""
        damage = {kind: units for kind, units in self.damaged().items() if units}
        if damage:
            logger.warning("%s: recomputing what was damaged: %s", self.path,
                           describe_damage(damage))
            self.repair(damage)
        return damage

    def repair(self, damage: dict[str, list[Unit]]) -> None:
        """Clear the done marks of damaged units (and forget damaged arrays a run writes
        again), and mark the store unfinished: a run then recomputes what was damaged.

        Raises
        ------
        StoreDamaged
            An array or a unit holding the job's inputs is damaged: nothing can
            recompute it.
        """
        lost = [f"{kind} {unit}" for kind in sorted(self.INPUT_KINDS)
                for unit in damage.get(kind, [])]
        lost += [name for name in damage.get("array", []) if name not in self.RECOMPUTED]
        if lost:
            raise StoreDamaged(f"{self.path}: damaged beyond repair: {', '.join(lost)} (the "
                               "job's inputs, kept in the store) no longer match their "
                               "digests; run the job again with --overwrite")
        for kind in self.MARKS:
            if damage.get(kind):
                self.unmark(kind, damage[kind])
        self.forget(damage)
        update_attrs(self.group, complete=False)
        self.attrs["complete"] = False

    def forget(self, damage: dict[str, list[Unit]]) -> None:
        """Drop the digests of damaged arrays that a run writes again (a layout whose
        later phases depend on damaged units drops those phases too)."""
        attrs = swath_attrs(self.group)
        damaged = set(damage.get("array", []))
        attrs["digests"] = {k: v for k, v in attrs.get("digests", {}).items()
                            if k not in damaged}
        self.group.attrs[ROOT_KEY] = attrs
        self.attrs["digests"] = attrs["digests"]


def unreadable_metadata(path: StorePath) -> list[str]:
    """The groups and arrays of the store at ``path`` whose metadata (``zarr.json``) is
    not a JSON object: their paths in the store ("." for its root)."""
    fs, inner = _filesystem(path)
    root = inner.rstrip("/")
    broken = []
    found = sorted(name for name in fs.find(root) if name.endswith("/zarr.json"))
    texts = fs.cat(found) if found else {}
    for name in found:
        text = texts[name]
        try:
            valid = isinstance(json.loads(text), dict)
        except ValueError:
            valid = False
        if not valid:
            broken.append(os.path.relpath(name[:-len("/zarr.json")], root))
    return broken


def describe_damage(damage: dict[str, list[Unit]], shown: int = 8) -> str:
    """``2 units (3, 7); array query_name`` for a message (at most ``shown`` of a kind)."""
    parts = []
    for kind, units in damage.items():
        names = [str(u) if not isinstance(u, tuple) else ",".join(map(str, u))
                 for u in units[:shown]]
        if len(units) == 1:
            parts.append(f"{kind} {names[0]}")
            continue
        more = f" and {len(units) - shown} more" if len(units) > shown else ""
        parts.append(f"{len(units)} {kind}s ({', '.join(names)}{more})")
    return "; ".join(parts)


def create_field(group: zarr.Group, name: str, dtype: Any, **create: Any) -> zarr.Array:
    """Create array ``name`` of a field whose spec says ``dtype``: ``bytes`` makes a Zarr
    variable-length bytes array (the CIGARs' packed operations), anything else that numpy
    dtype (``create``: ``create_array``'s other arguments)."""
    if dtype is not bytes:
        return group.create_array(name, dtype=dtype, **create)
    from zarr.core.dtype import VariableLengthBytes

    # Zarr warns that this data type has no finished Zarr v3 specification; its chunks are
    # the vlen-bytes codec's, which Zarr and xarray read without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=zarr.errors.UnstableSpecificationWarning)
        return group.create_array(name, dtype=VariableLengthBytes(), **create)


def write_whole(group: zarr.Group, name: str, data: np.ndarray, **create: Any) -> zarr.Array:
    """Create array ``name`` holding ``data`` (``create``: ``create_array``'s other
    arguments, ``dtype`` as :func:`create_field` takes it; by default one chunk holds it
    all) and record its digest in the store's attributes (``"digests"``)."""
    chunks = create.pop("chunks", tuple(max(size, 1) for size in data.shape))
    array = create_field(group, name, create.pop("dtype", data.dtype), shape=data.shape,
                         chunks=chunks, **create)
    if data.size:
        array[...] = data
    record_digest(group, name, digest(data))
    return array


def record_digest(group: zarr.Group, name: str, value: int) -> None:
    """Record ``value``, the digest of array ``name`` (written whole), in the store's
    attributes (``"digests"``), where :meth:`LayoutStore.damaged` checks it."""
    record_digests(group, {name: value})


def record_digests(group: zarr.Group, values: dict[str, int]) -> None:
    """:func:`record_digest` of several arrays at once (one write of the attributes)."""
    attrs = swath_attrs(group)
    attrs["digests"] = {**attrs.get("digests", {}), **values}
    group.attrs[ROOT_KEY] = attrs


def write_strings(group: zarr.Group, name: str, values: Sequence[str] | np.ndarray,
                  dimension: str, **create: Any) -> zarr.Array:
    """:func:`write_whole` of variable-length strings along ``dimension``, in one chunk
    (``create``: ``create_array``'s other arguments)."""
    return write_whole(group, name, np.asarray(values, dtype=object), dtype=str,
                       dimension_names=(dimension,), **create)


def value_dtype(dtype: Any) -> Any:
    """The numpy dtype that holds a field's values in memory: ``object`` for a string or
    bytes field (its spec says ``str`` or ``bytes``), else the field's own."""
    return object if dtype in (str, bytes) else dtype


def write_attrs(group: zarr.Group, layout: str, version: int, **fields: Any) -> None:
    """Set the store's ``"swath"`` attributes: layout, version, the fields, not complete.

    ``fields`` must be JSON values. ``"complete"`` is set to false; call
    :func:`mark_complete` when everything else is written.
    """
    attrs: dict[str, Any] = {"layout": layout, "version": version}
    attrs.update(fields)
    attrs["complete"] = False
    group.attrs[ROOT_KEY] = attrs


def swath_attrs(group: zarr.Group) -> dict[str, Any]:
    """A copy of the store's ``"swath"`` attributes as they are now ({} without them)."""
    value: Any = group.attrs.get(ROOT_KEY)
    return dict(value) if isinstance(value, dict) else {}


def update_attrs(group: zarr.Group, **fields: Any) -> None:
    """Add or replace fields of the ``"swath"`` attributes (``complete`` untouched)."""
    attrs = swath_attrs(group)
    attrs.update(fields)
    _write_root(group, attrs)


def mark_complete(group: zarr.Group) -> None:
    """Set ``"complete": true``, as the last write of a store (its key is the last one)."""
    attrs = swath_attrs(group)
    attrs.pop("complete", None)
    attrs["complete"] = True
    _write_root(group, attrs)


def _write_root(group: zarr.Group, attrs: dict[str, Any]) -> None:
    """Write the ``"swath"`` attributes; a store they say is created and complete gets
    consolidated metadata (:func:`consolidated`)."""
    group.attrs[ROOT_KEY] = attrs
    if attrs.get("complete") is True and attrs.get("created", True) is True:
        consolidated(group)


def consolidated(group: zarr.Group) -> None:
    """Copy the metadata of every array of a finished store into its root (Zarr's
    consolidated metadata), so that ``xarray.open_zarr`` reads a store in one go and
    without a warning.

    swath itself never reads that copy (:func:`open_group`), and the copy cannot go
    stale: a store's arrays are all made before it is complete, and every later write
    of its attributes (a repair marking it unfinished, before anything is recomputed)
    rewrites its root without the copy.
    """
    # "not part of the Zarr format 3 specification"; and the variable-length bytes data
    # type's warning, given again as its arrays' metadata is copied (see create_field)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=zarr.errors.ZarrUserWarning)
        warnings.simplefilter("ignore", category=zarr.errors.UnstableSpecificationWarning)
        zarr.consolidate_metadata(group.store, path=group.path, zarr_format=3)


def missing(what: str, path: StorePath) -> StoreIncomplete:
    """A :class:`StoreIncomplete` for a store that lacks an array or chunk it should have."""
    return StoreIncomplete(f"{display(path)}: the store was not finished or is damaged "
                           f"({what} is missing)")
