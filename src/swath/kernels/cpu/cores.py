"""Numba kernels side by side on every core (they release the GIL)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def cores() -> int:
    """The cores this process's kernels may use: ``NUMBA_NUM_THREADS`` (a Dask worker's
    share) or every core."""
    return int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1))


def on_every_core(function: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """``[function(item) for item in items]``, in a thread a core (none for one item)."""
    from concurrent.futures import ThreadPoolExecutor

    work = list(items)
    threads = min(len(work), cores())
    if threads <= 1:
        return [function(item) for item in work]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(function, work))
