"""Which straggling tasks get a copy on an idle worker (``engine.stragglers``)."""

from __future__ import annotations

from swath.engine.stragglers import Stragglers


def _job(tasks: int = 4, threads: dict[str, int] | None = None) -> Stragglers:
    return Stragglers(threads or {"fast": 1, "slow": 1}, {f"t{i}": i for i in range(tasks)})


def _done_on(work: Stragglers, worker: str, key: str, at: float, took: float) -> None:
    work.copies({worker: [key]}, at - took)
    work.finished(key, at)


def test_a_fast_idle_worker_copies_the_longest_running_straggler():
    work = _job()
    _done_on(work, "fast", "t0", 1.0, 1.0)
    _done_on(work, "fast", "t1", 2.0, 1.0)
    work.copies({"slow": ["t2"], "fast": ["t3"]}, 0.5)     # t2 on the slow one since 0.5
    assert work.copies({"slow": ["t2"], "fast": ["t3"]}, 2.5) == []    # the fast one is busy
    _done_on(work, "fast", "t3", 3.0, 0.5)
    assert work.copies({"slow": ["t2"], "fast": []}, 3.0) == [(2, "fast")]
    assert work.copies({"slow": ["t2"], "fast": []}, 9.0) == []         # once a task


def test_no_copy_while_tasks_wait_for_a_worker():
    work = _job()
    _done_on(work, "fast", "t0", 1.0, 1.0)
    work.copies({"slow": ["t1"]}, 1.0)
    # t2 and t3 are neither done nor on a worker: they wait (Dask's queue)
    assert work.copies({"slow": ["t1"], "fast": []}, 50.0) == []


def test_no_copy_where_the_straggler_is_expected_to_finish_first():
    """A task has run 2 s on a worker whose tasks take 2.5 s: 0.5 s left, less than the
    idle worker's 1 s. The same task at 3.2 s, past its worker's usual time, is
    expected to need as long again: copied."""
    work = _job(5)
    _done_on(work, "slow", "t0", 2.5, 2.5)
    _done_on(work, "fast", "t1", 3.0, 1.0)
    _done_on(work, "fast", "t2", 4.0, 1.0)
    assert work.copies({"slow": ["t4"], "fast": ["t3"]}, 4.0) == []    # no free thread
    work.finished("t3", 5.0)
    assert work.copies({"slow": ["t4"], "fast": []}, 6.0) == []
    assert work.copies({"slow": ["t4"], "fast": []}, 7.2) == [(4, "fast")]


def test_copies_go_only_to_workers_of_known_speed_and_free_threads():
    work = _job(5, {"fast": 2, "new": 4, "slow": 3})
    _done_on(work, "fast", "t0", 1.0, 0.1)
    running = {"slow": ["t1", "t2", "t3"], "fast": ["t4"], "new": []}
    work.copies(running, 1.0)
    # "new" has done nothing (its speed unknown); "fast" has one free thread; no task is
    # copied to the worker it runs on
    assert work.copies(running, 5.0) == [(1, "fast")]
    work.finished("t4", 5.5)
    running["fast"] = []
    assert work.copies(running, 6.0) == [(2, "fast"), (3, "fast")]


def test_a_task_moved_to_another_worker_counts_from_its_move():
    work = _job(2)
    _done_on(work, "fast", "t0", 1.0, 0.5)
    work.copies({"slow": ["t1"], "fast": []}, 1.0)
    work.copies({"fast2": ["t1"], "fast": []}, 1.1)       # stolen by another worker
    # copied once expected to need twice the idle worker's time (GAIN): run 1 s, not 0.9 s
    assert work.copies({"fast2": ["t1"], "fast": []}, 2.0) == []
    assert work.copies({"fast2": ["t1"], "fast": []}, 2.2) == [(1, "fast")]
