"""Where a job's Dask graph runs: in this process, or on a Dask cluster.

A job on one machine with at most one GPU runs its graph in this process, on Dask's
threaded scheduler (:class:`InProcess`): no worker processes and no scheduler to start,
and what a task loads (compiled kernels, database partitions on the GPU) stays loaded
for the next job of the process. A given scheduler or ``distributed.Client``, several
GPUs (a dask-cuda worker each), or ``--workers N`` start or reach a cluster
(:class:`OnCluster`). The engine talks to both through the same three members:
``workers``, ``each`` and ``call``. A :class:`Cluster` names a scheduler to reach or
workers to start without starting anything: the job's own session does, with the
threads its tasks want.
"""

from __future__ import annotations

import ast
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from swath.engine.stragglers import Stragglers
from swath.errors import ClusterNotStarted, InvalidParameter, UnguardedMain

logger = logging.getLogger(__name__)

#: the level of Dask's own log records a local cluster's processes print: a failed task
#: reaches the caller as its exception (one line from the command line), not also as
#: every worker's "Compute Failed" record with its traceback on stderr
WORKER_LOGS = logging.CRITICAL

POLL = 0.5      # seconds between a long call's progress reports
COPY_POLL = 0.05   # seconds between looks for stragglers to copy (``engine.stragglers``)


class Runner(Protocol):
    """What the engine needs of the place its tasks run."""

    workers: int          # workers that take tasks (GPUs, for GPU jobs)
    description: str      # one line for the user: where the job runs

    def each(self, tasks: list[Any], done: Callable[[Any], None],
             watched: Sequence[tuple[Any, Callable[[], None]]] = (),
             copy: Callable[[int], Any] | None = None, threads: int | None = None) -> None:
        """Compute ``tasks`` (dask.delayed) and call ``done(result)`` in this thread as
        each finishes, and ``call()`` as each ``(task, call)`` of ``watched`` (tasks the
        graph of ``tasks`` holds; their results stay where they are) finishes; raise a
        task's error (on a cluster, once the others are done). ``copy(i)``: a copy of
        ``tasks[i]`` under another key, which a cluster may run beside a straggling one
        on an idle worker (``engine.stragglers``): the first result is the task's.
        ``threads``: tasks run at once in this process, where not its task threads
        (tasks of one core each, as parsing pieces of input; a cluster's workers keep
        their threads)."""

    def call(self, function: Callable[..., Any], *args: Any,
             poll: Callable[[], None] | None = None) -> Any:
        """``function(*args)`` as one task; ``poll()`` every ``POLL`` seconds until done."""

    def share(self, value: Any) -> Any:
        """``value`` as tasks take it: itself in this process; on a cluster, a reference
        to it, sent to a worker once (a graph holding large values whole travels as one
        message, and Dask warns of it)."""


class InProcess:
    """Tasks on ``threads`` threads of this process (Dask's threaded scheduler)."""

    workers = 1

    def __init__(self, threads: int, device: str) -> None:
        self.threads = threads
        self.description = f"in this process ({device}, {threads} task thread" \
                           f"{'s' if threads > 1 else ''})"

    def each(self, tasks: list[Any], done: Callable[[Any], None],
             watched: Sequence[tuple[Any, Callable[[], None]]] = (),
             copy: Callable[[int], Any] | None = None, threads: int | None = None) -> None:
        import dask
        import dask.threaded
        from dask.callbacks import Callback

        wanted = {task.key for task in tasks}
        calls = {task.key: call for task, call in watched}

        def finished(key: Any, result: Any, *_: Any) -> None:
            if key in wanted:
                done(result)
            elif key in calls:
                calls[key]()

        with Callback(posttask=finished):
            # the scheduler's function itself: its name would import distributed
            dask.compute(*tasks, scheduler=dask.threaded.get,
                         num_workers=threads or self.threads)

    def call(self, function: Callable[..., Any], *args: Any,
             poll: Callable[[], None] | None = None) -> Any:
        if poll is None:
            return function(*args)
        from concurrent.futures import ThreadPoolExecutor, wait

        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(function, *args)
            while wait([future], POLL).not_done:
                poll()
            return future.result()

    def share(self, value: Any) -> Any:
        return value


class OnCluster:
    """Tasks on the workers of a ``distributed.Client``."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.workers = max(1, len(client.scheduler_info()["workers"]))
        self.description = f"on the Dask cluster at {client.scheduler.address} " \
                           f"(dashboard {client.dashboard_link})"
        # copies of tasks whose other copy's result was taken: not cancelled (a running
        # task runs on once cancelled, and the scheduler would count its thread free),
        # held until done, and the workers running them left out of the next tasks
        self._losers: list[Any] = []

    def each(self, tasks: list[Any], done: Callable[[Any], None],
             watched: Sequence[tuple[Any, Callable[[], None]]] = (),
             copy: Callable[[int], Any] | None = None, threads: int | None = None) -> None:
        from distributed import as_completed

        calls = {task.key: call for task, call in watched}
        futures = self.client.compute([*tasks, *(t for t, _ in watched)],
                                      **self._spared())
        # the client's loop: it need not be the process's default client; a watched
        # task's result is never fetched, and released once its future is passed
        pending = as_completed(futures, loop=self.client.loop)
        task_of = {future.key: i for i, future in enumerate(futures[:len(tasks)])}
        runs = [[future] for future in futures[:len(tasks)]]    # each task's copies
        stragglers = Stragglers(self._threads(), task_of) \
            if copy is not None and self.workers > 1 else None
        taken: set[int] = set()
        watching = set(calls)
        failed = None      # the first error, raised once the other tasks have finished
        try:
            for future in self._finished(pending, stragglers, copy, runs):
                if future.key in calls:
                    watching.discard(future.key)
                    if future.status != "error":
                        calls[future.key]()
                    continue
                i = task_of[future.key]
                if i in taken:                              # another copy's result was taken
                    continue
                if future.status != "finished":             # an error, or cancelled elsewhere
                    if all(run.done() and run.status != "finished" for run in runs[i]):
                        failed = failed or future           # every copy failed
                        taken.add(i)
                        if stragglers is not None:
                            stragglers.given_up(i)
                    continue
                taken.add(i)
                if stragglers is not None:
                    stragglers.finished(future.key, time.monotonic())
                    self._losers += [run for run in runs[i] if run is not future]
                if failed is None:
                    done(future.result())
                if len(taken) == len(tasks) and not watching:
                    break                              # lost copies may still run
        except BaseException:
            # the job stops here (Ctrl-C, an error in ``done``): its tasks not yet started
            # are cancelled, not left to write into its store once its lock is let go (a
            # traceback kept, as Jupyter and pytest keep it, would hold their futures)
            self.client.cancel([*futures, *(run for copies in runs for run in copies)])
            raise
        if failed is not None:
            failed.result()

    def _spared(self) -> dict[str, Any]:
        """Restrictions for new tasks: the workers not running a copy that lost, if any
        (a task queued behind one would wait for it)."""
        self._losers = [run for run in self._losers if not run.done()]
        if not self._losers:
            return {}
        losing = {run.key for run in self._losers}
        processing = self.client.processing()
        free = [worker for worker, keys in processing.items() if not losing & set(keys)]
        return {"workers": free, "allow_other_workers": False} if free else {}

    def _threads(self) -> dict[str, int]:
        """Each worker's task threads, by address."""
        return {address: worker["nthreads"]
                for address, worker in self.client.scheduler_info()["workers"].items()}

    def _finished(self, pending: Any, stragglers: Stragglers | None,
                  copy: Callable[[int], Any] | None, runs: list[list[Any]]
                  ) -> Iterator[Any]:
        """The futures of ``pending`` as they finish; with ``stragglers``, meanwhile the
        copies it names started (``copy(i)``, on the named worker only), added to
        ``pending`` and to their task's ``runs``."""
        if stragglers is None or copy is None:
            yield from pending
            return
        while not pending.is_empty():
            ready = pending.next_batch(block=False)
            yield from ready
            if ready:
                continue
            for task, worker in stragglers.copies(self.client.processing(),
                                                  time.monotonic()):
                future = self.client.compute(copy(task), workers=[worker],
                                             allow_other_workers=False)
                stragglers.add(future.key, task)
                runs[task].append(future)
                pending.add(future)
            time.sleep(COPY_POLL)

    def call(self, function: Callable[..., Any], *args: Any,
             poll: Callable[[], None] | None = None) -> Any:
        future = self.client.submit(function, *args, pure=False)
        finished = threading.Event()
        future.add_done_callback(lambda _: finished.set())
        while poll is not None and not finished.wait(POLL):
            poll()
        return future.result()

    def share(self, value: Any) -> Any:
        return self.client.scatter(value, hash=False)


@dataclass(frozen=True)
class Cluster:
    """Where a job runs when no ``distributed.Client`` is given: a running scheduler, or
    a local cluster started for the job (and closed after it).

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``).
    workers : int, optional
        Without ``scheduler``: workers of a local cluster; default (and 1): none on the
        CPU or one GPU, where the job runs in this process; one per GPU on several.
    started : callable, optional
        Called with one line naming a local cluster started for the job and its
        dashboard, before the job runs on it.

    Examples
    --------
    >>> import swath
    >>> swath.Cluster(workers=2)
    Cluster(scheduler=None, workers=2, started=None)
    """

    scheduler: str | None = None
    workers: int | None = None
    started: Callable[[str], None] | None = None

    @property
    def one_process(self) -> bool:
        """Whether a CPU job runs in this process: no scheduler and at most one worker.

        Examples
        --------
        >>> Cluster().one_process, Cluster(workers=2).one_process
        (True, False)
        """
        return self.scheduler is None and (self.workers or 1) == 1


def runner(client: Any) -> Runner:
    """``client`` as a :class:`Runner`: a runner itself, or a ``distributed.Client``."""
    if isinstance(client, (InProcess, OnCluster)):
        return client
    return OnCluster(client)


def connect(scheduler: str | None = None, workers: int | None = None, device: str = "auto",
            processes: bool = True, threads_per_gpu: int = 2, tile_tasks: bool = False
            ) -> tuple[Runner, bool]:
    """Where a job runs, and whether the caller owns (must close) its client.

    ``scheduler``: the address of a running scheduler. Without one: this process
    (:class:`InProcess`) when at most one GPU is used and ``workers`` is at most 1;
    else a local cluster: one worker per GPU (dask-cuda) when GPUs are used (``workers``
    at most the GPUs: :class:`InvalidParameter` past them), or ``workers`` CPU worker
    processes of one Dask thread each, whose numba kernels share the cores.

    Threads: GPU search tasks get two, not one: one task's host work (top-k, downloads)
    then overlaps another's kernels (S1 runs faster so). With ``tile_tasks`` (a long
    pair's tiles: single-threaded kernels on the CPU, a whole GPU each on GPUs), the CPU
    gets one thread per core, and a GPU one thread, so that the next ready tile goes to an
    idle GPU rather than behind a busy one (with two threads per GPU, L1 on two GPUs ran
    slower than on one; benchmarks/RESULTS.md).
    """
    if scheduler:
        from distributed import Client

        try:       # not the process's default client: dask's own calls stay local
            _refused(scheduler)
            return OnCluster(Client(scheduler, timeout="10s", set_as_default=False)), True
        except (OSError, TimeoutError) as exc:
            raise InvalidParameter(f"--scheduler {scheduler}: cannot reach a Dask scheduler "
                                   f"there ({exc})") from None
    from swath.kernels import gpu_count
    from swath.kernels.cores import THREADS_VARIABLE, cores

    gpus = gpu_count() if device in ("auto", "gpu") else 0
    threads = cores()
    if (workers or 1) == 1 and gpus <= 1:
        if gpus:
            return InProcess(1 if tile_tasks else threads_per_gpu, "GPU"), False
        return InProcess(threads if tile_tasks else 1, "CPU"), False
    from distributed import Client, LocalCluster

    if gpus:
        if workers is not None and workers > gpus:
            raise InvalidParameter(
                f"--workers {workers}: {gpus} GPU{'s are' if gpus > 1 else ' is'} visible, "
                "and a GPU cluster runs one worker per GPU (--device cpu for CPU workers)")
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            logger.warning("%d GPUs present but dask-cuda is not installed: using one, in "
                           "this process (pip install 'swath[gpu]' for all)", gpus)
            return InProcess(1 if tile_tasks else threads_per_gpu, "GPU"), False
        _refuse_unguarded_main(f"a cluster of {workers or gpus} GPU workers")
        cluster = started(lambda: LocalCUDACluster(
            n_workers=workers or gpus, threads_per_worker=1 if tile_tasks else threads_per_gpu,
            silence_logs=WORKER_LOGS))
        return OnCluster(Client(cluster, set_as_default=False)), True
    n = workers or 1
    share = max(1, threads // n)
    # worker processes get their share of the cores for their kernels (workers that are
    # threads of this process keep its count: each task's kernels take as many)
    extra = {"env": {THREADS_VARIABLE: str(share)}} if processes else {}
    if processes:
        _refuse_unguarded_main(f"a cluster of {n} worker processes")
    cluster = started(lambda: LocalCluster(
        n_workers=n, threads_per_worker=share if tile_tasks else 1, processes=processes,
        dashboard_address=":0", silence_logs=WORKER_LOGS, **extra))
    return OnCluster(Client(cluster, set_as_default=False)), True


def started(cluster: Callable[[], Any]) -> Any:
    """The local cluster ``cluster()`` starts; started once more where it failed (a worker
    killed as it started: Dask's "Nanny failed to start").

    Raises
    ------
    ClusterNotStarted
        It failed twice: one line, the last failure's first.
    """
    for attempt in range(2):
        try:
            return cluster()
        except Exception as exc:    # Dask's RuntimeError, TimeoutError, CommClosedError
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            if attempt:
                raise ClusterNotStarted(
                    f"the local Dask cluster did not start, twice ({reason}); nothing ran: "
                    "run the command again (a store it began is resumed)") from None
            logger.warning("the local Dask cluster did not start (%s): starting it again",
                           reason)
    raise AssertionError("unreachable")


def _refuse_unguarded_main(what: str) -> None:
    """Raise :class:`UnguardedMain` where this process's main script starts worker
    processes from its top level outside ``if __name__ == "__main__":``. Dask starts
    them by spawning (``distributed.worker.multiprocessing-method``), and each imports the
    script again: the call would start processes again in each, which multiprocessing
    stops with a RuntimeError about the bootstrapping phase, and the cluster with "Nanny
    failed to start". Said here in one line, before any process starts."""
    import dask

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    # a session without a script (a shell, Jupyter) or ``python -m package`` (a package's
    # __main__ is not run again) is not imported by the new processes
    if main is None or path is None or name.endswith("__main__") \
            or dask.config.get("distributed.worker.multiprocessing-method", "spawn") == "fork":
        return
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and not (frame.f_globals is vars(main)
                                     and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read(), path)
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) \
                and node.lineno <= line <= (node.end_lineno or line):
            return
    script = os.path.basename(path)
    raise UnguardedMain(
        f"{script} line {line}: swath starts {what} here, and each imports {script} "
        "again: put the code that starts the job under "
        "'if __name__ == \"__main__\":'")


def _is_main_test(test: ast.expr) -> bool:
    """Whether ``test`` is ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(test.left), ast.dump(test.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())),
                     ast.dump(ast.Constant("__main__"))}


def _refused(scheduler: str) -> None:
    """Raise ``OSError`` at once where a TCP scheduler's host is unknown or its port
    refuses connections (Dask's client would retry until its timeout); anything else is
    left to the client."""
    import socket

    from distributed.comm import parse_address, parse_host_port

    protocol, location = parse_address(scheduler)
    if protocol != "tcp":
        return
    host, port = parse_host_port(location)
    try:
        socket.create_connection((host, port), timeout=2).close()
    except (ConnectionRefusedError, socket.gaierror):
        raise
    except OSError:
        return


@contextmanager
def session(client: Any = None, **options: Any) -> Iterator[tuple[Runner, bool]]:
    """``client`` as a runner, or one from :func:`connect` (``options``, and those of a
    :class:`Cluster` ``client``); and whether its client was made here, in which case it
    is closed on exit (with the local cluster it started, if any)."""
    if client is not None and not isinstance(client, Cluster):
        yield runner(client), False
        return
    wanted = client or Cluster()
    if isinstance(client, Cluster):
        options = {**options, "scheduler": client.scheduler, "workers": client.workers}
    found, own = connect(**options)
    try:
        if own and wanted.scheduler is None and wanted.started is not None:
            wanted.started(found.description)
        yield found, own
    finally:
        if own:
            assert isinstance(found, OnCluster)
            cluster = found.client.cluster      # None for a scheduler only connected to
            found.client.close()
            if cluster is not None:
                cluster.close()
