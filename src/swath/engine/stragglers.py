"""Copies of straggling tasks for idle workers: a cluster of unlike workers is never
slower than its fastest one.

A Dask cluster hands each task to the next free worker. Where workers differ (one H100
does an all-pairs tile about 50 times faster than three CPU cores), a job's last tasks
may run on its slow workers while the fast ones idle: a GPU worker beside four CPU
workers took 1.5 times as long as the GPU alone (benchmarks/RESULTS.md). Once no task of
the job waits for a worker, :class:`Stragglers` names, for a worker with a free thread,
the tasks running longest elsewhere that it is expected to finish first: it has done
tasks of the job in less time (its median) than such a task still needs, which is what
the task's own worker takes less what it has run, or, where that worker's times give no
estimate, as long again as it has run (``GAIN``: a copy must be expected to finish in
half that time). ``OnCluster.each`` starts each copy on its worker and takes the first
result of a task; the other copy runs on (a running task cannot be stopped), and the
runner keeps the job's next tasks off its worker meanwhile. A copy runs only on a thread
that would idle, so it delays no other task.

A task that may be copied must write once: :func:`first_writer` lets one copy at a time
write, under a lock of the Dask scheduler's, and the task writes only what is not done.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

LOCK_TIMEOUT = 600      # seconds a copy waits for the other to write (a tile's writes: ms)
#: a copy is started where it is expected to finish in 1/GAIN of the time the running
#: task still needs: like workers (four GPUs) copy only tasks far past their usual time
GAIN = 2.0


@dataclass
class Stragglers:
    """What the workers of a cluster have done of a job's ``tasks`` (Dask keys of the
    task's first copy, by task number), and which copies to start."""

    threads: Mapping[str, int]           # task threads of each worker, by address
    task: dict[Any, int]                 # each copy's task, by key
    left: set[int] = field(default_factory=set)               # tasks not yet done
    seen: dict[Any, tuple[str, float]] = field(default_factory=dict)   # running: where, since
    times: dict[str, list[float]] = field(default_factory=dict)        # each worker's tasks
    copied: set[int] = field(default_factory=set)             # tasks with a copy

    def __post_init__(self) -> None:
        self.left = set(self.task.values())

    def add(self, key: Any, task: int) -> None:
        """A copy of ``task`` started under ``key``."""
        self.task[key] = task
        self.copied.add(task)

    def finished(self, key: Any, now: float) -> None:
        """The copy ``key`` of a task done at time ``now``: its time is counted from when
        it was first seen on its worker (not at all if it never was)."""
        self.left.discard(self.task[key])
        where = self.seen.pop(key, None)
        if where is not None:
            self.times.setdefault(where[0], []).append(now - where[1])

    def given_up(self, task: int) -> None:
        """``task`` failed on every copy: none more is started."""
        self.left.discard(task)

    def copies(self, processing: Mapping[str, Sequence[Any]], now: float
               ) -> list[tuple[int, str]]:
        """``(task, worker)``: copies to start now, given the keys each worker is
        processing (Dask's ``Client.processing()``) at time ``now`` (seconds)."""
        running: dict[Any, str] = {key: worker for worker, keys in processing.items()
                                   for key in keys if self.task.get(key) in self.left}
        for key, worker in running.items():
            if self.seen.get(key, ("",))[0] != worker:      # started, or moved to a worker
                self.seen[key] = (worker, now)
        if self.left - {self.task[key] for key in running}:
            return []                                       # tasks still wait for workers
        candidates = sorted(running, key=lambda k: self.seen[k][1])   # longest-running first
        wanted = []
        for worker, own in self._medians().items():
            free = self.threads.get(worker, 1) - len(processing.get(worker, ()))
            for key in candidates:
                if free <= 0:
                    break
                task = self.task[key]
                if (task not in self.copied and running[key] != worker
                        and GAIN * own < self._remaining(key, now)):
                    wanted.append((task, worker))
                    self.copied.add(task)
                    free -= 1
        return wanted

    def _medians(self) -> dict[str, float]:
        """Each worker's median time of a task, fastest first."""
        return dict(sorted(((worker, statistics.median(times))
                            for worker, times in self.times.items()), key=lambda x: x[1]))

    def _remaining(self, key: Any, now: float) -> float:
        worker, since = self.seen[key]
        ran = now - since
        times = self.times.get(worker)
        if times and statistics.median(times) > ran:
            return statistics.median(times) - ran
        return ran


def copies_may_run() -> bool:
    """Whether this runs as a task on a cluster's worker, where a copy of the task may run
    beside it (:class:`Stragglers`); in this process's threads no copy runs."""
    if "distributed" not in sys.modules:      # not imported: not on a worker
        return False
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


@contextmanager
def first_writer(name: str, copies: bool) -> Iterator[None]:
    """Hold the Dask scheduler's lock ``name`` where copies of this task may run
    (``copies``: :func:`copies_may_run`, asked once by the task): the holder checks that
    its work is not done yet, then writes it. Elsewhere nothing is held."""
    if not copies:
        yield
        return
    from distributed import Lock

    lock = Lock(name)
    if not lock.acquire(timeout=LOCK_TIMEOUT):
        raise TimeoutError(f"{name}: another copy of this task held its lock for "
                           f"{LOCK_TIMEOUT} s")
    try:
        yield
    finally:
        lock.release()
