"""The workloads: how a job of each kind starts, runs and reopens, and what ``swath
inspect``, ``swath resume``, ``swath.open`` and ``swath.resume`` look a store up in.

A workload is one kind of job: a database search, all pairs, batched pairs, a long pair.
Its module here declares, in one :class:`Workload` record, everything the rest of swath
asks of it: the store class of its layout, how its job is rebuilt from a store
(``reopen``) and run (``run``), its result, its printers (and plot) and the CUDA sources
its job loads; and the functions the public API calls to start a
job of its kind. What every job shares is here once: a new job's store (the user's, or a
scratch one the result owns) and run (:func:`start`), and the session it runs in
(:func:`run_job`). :func:`registered` lists the workloads (adding one is its module and its
line there); a store's ``"swath"`` attributes name its layout, and :func:`lookup` finds
the workload that writes it.

Importing the registry loads no store, engine or Zarr (the command line reads the
formats when it starts): a record names its heavy parts through functions that import
them when called.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from swath.errors import InvalidParameter, StoreIncomplete

if TYPE_CHECKING:
    from swath.constants import Mode
    from swath.engine.cluster import Runner
    from swath.progress import Progress
    from swath.results.alignments import PrintOptions
    from swath.scoring import Scoring
    from swath.storage.common import LayoutStore, StorePath

__all__ = [
    "Workload",
    "check_finished",
    "is_finished",
    "load_kernels",
    "lookup",
    "named",
    "registered",
    "result_lines",
    "run_job",
    "start",
    "verify_store",
]

_R = TypeVar("_R")


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
    reopen : callable
        ``reopen(path, device)``: the job a store was made for, to run on ``device``
        (its ``device`` attribute: where its session runs).
    run : callable
        ``run(job, runner, progress)``: run (or finish) the job on a runner of
        :mod:`swath.engine.cluster`, then finalize its store.
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
    tile_tasks : bool
        Its tasks are a long pair's tiles (a session's threads: :func:`run_job`).
    """

    name: str
    store: Callable[[], type[LayoutStore]]
    result: Callable[[str], Any]
    reopen: Callable[[str, str], Any]
    run: Callable[[Any, Any, Progress | None], Any]
    formats: tuple[str, ...]
    default_format: str
    lines: Callable[[str, str, PrintOptions], Iterator[str]]
    items: str
    plot: Callable[[str, str], None] | None = None
    cuda_sources: tuple[str, ...] = ()
    tile_tasks: bool = False

    def resume(self, path: str, device: str, client: Any, progress: Progress | None) -> None:
        """Rebuild the job from its store and run what is not done (``swath resume``);
        ``client`` and ``progress`` as the public functions take them."""
        run_job(self, self.reopen(path, device), client, progress)


def run_job(workload: Workload, job: Any, client: Any, progress: Progress | None) -> Any:
    """``job`` run (or finished) on ``client`` (a runner is reached or started for it on
    the job's device, and stopped after it, where none is given); what the workload's
    ``run`` returns."""
    from swath.engine.cluster import session

    with session(client, device=job.device, tile_tasks=workload.tile_tasks) as (where, _):
        return workload.run(job, where, progress)


def start(workload: Workload, store: str | None, prepare: Callable[[str, Runner], Any],
          client: Any, progress: Progress | None, *, device: str, overwrite: bool) -> Any:
    """A new job's result: its output path checked before any cluster starts, then, in
    the session of ``client`` (or one started for ``device``), ``prepare(path, where)``
    creates its store (or reopens one holding the same job) at ``store``, or in a scratch
    directory that the result owns, and gives the job, which ``workload.run`` runs on
    ``where`` (the runner: a job may size itself by its workers)."""
    from swath.engine.cluster import session
    from swath.storage.creation import check_output

    path, scratch = _store_path(store, f"{workload.name}.zarr")
    layout = workload.store()
    check_output(path, layout.LAYOUT, layout.VERSION, what=layout.LAYOUT, overwrite=overwrite)

    def job() -> Any:
        with session(client, device=device, tile_tasks=workload.tile_tasks) as (where, _):
            workload.run(prepare(path, where), where, progress)
        return workload.result(path)

    return _owning(scratch, job)


def _store_path(store: str | None, name: str) -> tuple[str, str | None]:
    """``store``, or ``name`` in a new temporary directory, and that directory (None for
    the user's store)."""
    if store:
        return store, None
    folder = tempfile.mkdtemp(prefix="swath-")
    return f"{folder}/{name}", folder


def _owning(scratch: str | None, job: Callable[[], _R]) -> _R:
    """``job()``'s result; a scratch directory its store is in removed when the result is
    collected (or the process ends), or at once if the job fails."""
    try:
        result = job()
    except BaseException:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    if scratch:
        weakref.finalize(result, shutil.rmtree, scratch, True)
    return result


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


def verify_store(path: StorePath) -> dict[str, int]:
    """Check every done unit and every array written whole of a store of any layout (a
    result store or a database) against its digest: how many of each kind were checked.

    Raises
    ------
    StoreDamaged
        Something no longer matches its digest (the message names what).
    """
    from swath.storage.common import store_layout
    from swath.storage.database import LAYOUT, Database

    layout, _ = store_layout(path)
    if layout == LAYOUT:
        return Database.open(path).verify()
    return lookup(path)[1].verify()


def load_kernels(sources: tuple[str, ...], client: Any, device: str,
                 traced: tuple[Scoring, Mode] | None = None) -> None:
    """Start loading a job's CUDA ``sources`` in the background where its tasks will
    run in this process (no scheduler given, at most one GPU or worker), and, where it
    runs on the CPU, compiling the traceback kernels of ``traced`` (a scheme and mode)
    in a process of their own; a cluster's workers load their own."""
    from swath.engine.cluster import Cluster
    from swath.kernels import probe_in_background, trace_ahead

    wanted = Cluster() if client is None else client
    if not isinstance(wanted, Cluster) or wanted.scheduler is not None:
        return
    alone = (wanted.workers or 1) == 1
    if device != "cpu":
        probe_in_background(sources if alone else ())
    if traced is not None and alone:
        trace_ahead(*traced, device)
