"""The one numba decorator every CPU kernel goes through (caching and nogil set once), and
the one form of the inputs handed to a kernel."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

OPTIONS = {"nogil": True, "cache": True, "boundscheck": False}


def jit(function: Any = None, **options: Any) -> Any:
    """``numba.njit`` with swath's options; use as ``@jit`` or ``@jit(inline="always")``
    (kernels run on every core through ``cores.share_tasks``, not numba's parallel loops)."""
    decorate = numba.njit(**{**OPTIONS, **options})
    return decorate if function is None else decorate(function)


def readonly(array: np.ndarray) -> np.ndarray:
    """A read-only, C-ordered view of ``array`` (a copy only if it is not C-ordered), as
    every kernel input is passed: numba compiles a kernel once a distinct argument type,
    and read-only arrays (a ``SequenceSet``'s, the scoring matrix) are another type than
    writable ones (a store's), so a kernel fed both would be compiled twice (10 to 20 s
    for the lane score kernel).

    Examples
    --------
    >>> view = readonly(np.arange(3))
    >>> view.flags.writeable, view.flags.c_contiguous
    (False, True)
    """
    view = np.ascontiguousarray(array).view()
    view.setflags(write=False)
    return view
