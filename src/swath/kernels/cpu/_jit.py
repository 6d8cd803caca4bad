"""The one numba decorator every CPU kernel goes through (caching and nogil set once)."""

from __future__ import annotations

from typing import Any

import numba

OPTIONS = {"nogil": True, "cache": True, "boundscheck": False}


def jit(function: Any = None, **options: Any) -> Any:
    """``numba.njit`` with swath's options; use as ``@jit`` or ``@jit(parallel=True)``."""
    decorate = numba.njit(**{**OPTIONS, **options})
    return decorate if function is None else decorate(function)
