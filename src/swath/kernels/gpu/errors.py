"""The GPU's out-of-memory errors as :class:`~swath.errors.GpuOutOfMemory`, one line each.

CuPy reports the GPU running out of memory as ``cupy.cuda.memory.OutOfMemoryError`` or
as the CUDA error ``cudaErrorMemoryAllocation``; every function of the GPU backend goes
through :func:`translate_errors`, so that both leave it as one line saying how much was
asked and free.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import cupy as cp

from swath.errors import GpuOutOfMemory
from swath.kernels.probe import one_line

P = ParamSpec("P")
R = TypeVar("R")
OUT_OF_MEMORY_STATUS = 2     # cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY


def _size(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def _is_out_of_memory(exc: Exception) -> bool:
    if isinstance(exc, cp.cuda.memory.OutOfMemoryError):
        return True
    return (isinstance(exc, (cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError))
            and getattr(exc, "status", None) == OUT_OF_MEMORY_STATUS)


def _memory() -> str:
    """`` with X GiB free of Y GiB on GPU k`` (free: the device's and CuPy's pool's),
    or nothing when CUDA cannot say."""
    try:
        free, total = cp.cuda.runtime.memGetInfo()
        free += cp.get_default_memory_pool().free_bytes()
        device = cp.cuda.Device().id
    except Exception:  # the error that brought us here may leave CUDA unable to answer
        return ""
    return f" with {_size(free)} free of {_size(total)} on GPU {device}"


def out_of_memory(where: str, exc: Exception) -> GpuOutOfMemory:
    """The :class:`GpuOutOfMemory` for CuPy's out-of-memory error ``exc`` in ``where``."""
    asked = re.search(r"allocating ([\d,]+) bytes", str(exc))
    request = f"asked for {_size(int(asked[1].replace(',', '')))}" if asked else one_line(exc)
    return GpuOutOfMemory(
        f"GPU out of memory in {where}: {request}{_memory()}; use --device cpu "
        "(device='cpu'), or smaller inputs or blocks (--query-block, --tile-size)")


def translate_errors(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` with the GPU's out-of-memory errors raised as :class:`GpuOutOfMemory`
    (the original chained as its cause); other errors pass unchanged."""

    @functools.wraps(function)
    def translated(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except (cp.cuda.memory.OutOfMemoryError, cp.cuda.runtime.CUDARuntimeError,
                cp.cuda.driver.CUDADriverError) as exc:
            if not _is_out_of_memory(exc):
                raise
            raise out_of_memory(function.__qualname__, exc) from exc

    return translated
