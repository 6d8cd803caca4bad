"""The workloads: what ``swath inspect``, ``swath resume``, ``swath.open`` and
``swath.resume`` look a store up in.

A workload is one kind of job: a database search, all pairs, a long pair. Its module
here declares, in one :class:`Workload` record, everything the rest of swath asks of
it: the store class of its layout, how its job is rebuilt from a store and run, its
result, its printers (and plot) and the CUDA sources its job loads. :func:`registered`
lists them (adding a workload is its module and its line there); a store's ``"swath"``
attributes name its layout, and :func:`lookup` finds the workload that writes it.

Importing the registry loads no store, engine or Zarr (the command line reads the
formats when it starts): a record names its heavy parts through functions that import
them when called.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swath.errors import InvalidParameter, StoreIncomplete

if TYPE_CHECKING:
    from swath.engine import Progress
    from swath.results.alignments import PrintOptions
    from swath.storage.common import LayoutStore, StorePath

__all__ = ["Workload", "check_finished", "is_finished", "lookup", "named", "registered",
           "result_lines"]


@dataclass(frozen=True)
class Workload:
    """One kind of job, everything swath asks of it in one place.

    Attributes
    ----------
    name : str
        What the user runs: ``"search"``, ``"allpairs"``, ``"longpair"``.
    store : callable
        ``store()``: its store class, a :class:`~swath.storage.common.LayoutStore` whose
        ``LAYOUT`` names the stores its jobs write (loaded when called).
    result : callable
        ``result(path)``: the result object of a finished store (``swath.open``).
    resume : callable
        ``resume(path, device, client, progress)``: rebuild the job from its store and
        run what is not done (``swath resume``); ``client`` and ``progress`` as the
        public functions take them.
    formats : tuple of str
        What its printers print, in the order the command line offers them.
    default_format : str
        The format ``swath inspect`` prints without ``--format``.
    lines : callable
        ``lines(path, format, options)``: a finished store's text in ``format``, written
        as ``options`` (a :class:`~swath.results.alignments.PrintOptions`) say, in pieces
        that end with a newline.
    items : str
        What its text format shows alignments of, in messages: ``"hits"``.
    plot : callable or None
        ``plot(path, image)``: draw a finished store's alignment to an image file; None
        where a store holds nothing to draw.
    cuda_sources : tuple of str
        The CUDA sources its job runs, loaded ahead by ``swath.warm_up``.
    """

    name: str
    store: Callable[[], type[LayoutStore]]
    result: Callable[[str], Any]
    resume: Callable[[str, str, Any, Progress | None], None]
    formats: tuple[str, ...]
    default_format: str
    lines: Callable[[str, str, PrintOptions], Iterator[str]]
    items: str
    plot: Callable[[str, str], None] | None = None
    cuda_sources: tuple[str, ...] = ()


def result_lines(result: Callable[[str], Any]
                 ) -> Callable[[str, str, PrintOptions], Iterator[str]]:
    """``lines`` for a workload whose result prints itself: ``result(path).lines(format,
    options)``."""
    return lambda path, format, options: result(path).lines(format, options)


@functools.cache
def registered() -> tuple[Workload, ...]:
    """Every workload, in the order messages list them."""
    from swath.workloads import allpairs, longpair, pairs, search

    return (search.WORKLOAD, longpair.WORKLOAD, allpairs.WORKLOAD, pairs.WORKLOAD)


def named(name: str) -> Workload:
    """The workload called ``name``.

    Raises
    ------
    InvalidParameter
        No workload has that name.
    """
    for workload in registered():
        if workload.name == name:
            return workload
    raise InvalidParameter(f"job must be one of {', '.join(w.name for w in registered())}, "
                           f"got {name!r}")


def lookup(path: StorePath) -> tuple[Workload, LayoutStore]:
    """The workload whose layout the store at ``path`` has, and the store (finished or
    not) opened as its class.

    Raises
    ------
    StoreNotFound
        No swath store is at ``path``.
    InvalidParameter
        The store is not a result store (a database).
    FormatVersionError
        The store is of a version this swath does not read.
    """
    from swath.storage.common import display, store_layout

    layout, version = store_layout(path)
    layouts = {w.store().LAYOUT: w for w in registered()}
    if layout not in layouts:
        raise InvalidParameter(f"{display(path)} is a {layout!r} store version {version}, not a "
                               f"result store ({', '.join(layouts)})")
    workload = layouts[layout]
    return workload, workload.store().open(path, complete=False)


def is_finished(opened: LayoutStore) -> bool:
    """Whether a store's job finished and all its data still match their digests."""
    return opened.attrs.get("complete") is True and not any(opened.damaged().values())


def check_finished(opened: LayoutStore) -> None:
    """Raise unless a store's job finished and all its data still match their digests.

    Raises
    ------
    StoreIncomplete
        The job writing it was interrupted or is still running.
    StoreDamaged
        Some of its data no longer match their digests (the message names them).
    """
    if opened.attrs.get("complete") is not True:
        raise StoreIncomplete(f"{opened.path}: the store was not finished (the job writing it "
                              "was interrupted or is still running; finish it with `swath "
                              f"resume {opened.path}`)")
    opened.check_sound()
