"""Numba kernels side by side on every core (they release the GIL)."""

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
