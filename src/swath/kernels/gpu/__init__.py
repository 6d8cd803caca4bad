"""GPU kernels (CuPy; CUDA C sources beside this file, compiled on first use).

Importing this package needs CuPy but no GPU work; ``swath.kernels.get_backend``
imports it only when CuPy finds a GPU.

Every function here goes through :func:`translate_errors`: the GPU running out of
memory, which CuPy reports as ``cupy.cuda.memory.OutOfMemoryError`` or as the CUDA
error ``cudaErrorMemoryAllocation``, leaves as :class:`~swath.errors.GpuOutOfMemory`,
one line saying how much was asked and free. Besides the kernel functions of every
backend, the engine's GPU search uses ``upload_targets`` (targets resident on the GPU,
``scores.DeviceTargets``), ``score_queries`` and ``top_key``; a long pair's streamed slabs use
``row_stream``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import cupy as cp

from swath.errors import GpuOutOfMemory
from swath.kernels import one_line
from swath.kernels.gpu import band, scores, tiles, traceback

__all__ = ["align_batch", "band_scores", "cigar_counts", "row_stream", "score_ends",
           "score_many", "score_queries", "tile_batch", "tile_forward", "tile_scores",
           "top_key", "translate_errors", "upload_targets"]

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


score_many = translate_errors(scores.score_many)
score_queries = translate_errors(scores.score_queries)
top_key = translate_errors(scores.top_key)
upload_targets = translate_errors(scores.DeviceTargets.upload)
align_batch = translate_errors(traceback.align_batch)
cigar_counts = translate_errors(traceback.cigar_counts)
band_scores = translate_errors(band.band_scores)
score_ends = translate_errors(traceback.score_ends)
tile_forward = translate_errors(tiles.tile_forward)
tile_scores = translate_errors(tiles.tile_scores)
tile_batch = translate_errors(tiles.tile_batch)
row_stream = translate_errors(tiles.row_stream)
