"""The one numba decorator every CPU kernel goes through (caching and nogil set once)."""

from __future__ import annotations

import functools

import numba

jit = functools.partial(numba.njit, nogil=True, cache=True, boundscheck=False)
