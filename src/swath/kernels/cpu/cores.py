"""Numba kernels side by side on every core (they release the GIL).

Python threads, not numba's ``parallel=True``: a kernel compiled with numba's parallel
passes took two to three times as long to compile (``benchmarks/cpu_compile.py``;
benchmarks/RESULTS.md), which every user pays on a kernel's first call and the tests pay
for every mode and width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from swath.kernels.cores import cores

Item = TypeVar("Item")
Result = TypeVar("Result")


def on_every_core(function: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """``[function(item) for item in items]``, in a thread a core (none for one item)."""
    from concurrent.futures import ThreadPoolExecutor

    work = list(items)
    threads = min(len(work), cores())
    if threads <= 1:
        return [function(item) for item in work]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(function, work))


def share_tasks(kernel: Callable[..., None], tasks: int, *args: object) -> None:
    """Tasks ``0 .. tasks - 1`` of ``kernel`` on every core: ``kernel(*args, first, step)``
    runs tasks ``first, first + step, ...``, once a thread. Interleaved, so that tasks
    sorted by size (lane groups by target length) are shared evenly."""
    threads = max(1, min(tasks, cores()))
    on_every_core(lambda first: kernel(*args, first, threads), range(threads))
