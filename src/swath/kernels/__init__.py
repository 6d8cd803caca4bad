"""Pure compute on arrays, one API on two backends.

Each backend module (``swath.kernels.cpu``, ``swath.kernels.gpu``) exposes the same
functions with the same arguments:

``score_many(q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode)``
    optimal scores of every query against every target, an ``(nq, nt)`` int32 array;
``align_batch(q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode)``
    one optimal alignment of query k against target k, for every k: scores (N,),
    coordinates (N, 4: query start and end, target start and end, 0-based, end
    exclusive) and the extended CIGARs as one text buffer with (N + 1,) offsets;
``score_ends(q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode)``
    the score and end cell (query end, target end; exclusive) of query k against
    target k, without traceback (what the engine needs to rank and re-align hits);
``tile_forward(q, t, matrix, gap_open, gap_extend, local, corner, n, strip, top, left)``
    one tile of a long pair from its input boundary: its last row and column with
    the origin of every cell's optimal path, and its best cell (phase 1);
``tile_scores(q, t, matrix, gap_open, gap_extend, local, strip, top, left)``
    the same tile's last row and column and best cell, scores only;
``tile_batch(tiles, matrix, gap_open, gap_extend)``
    the last rows (H and F) of many independent global-mode tiles ``(q, t, top,
    left)``, scores only (the halves of a level of path splits), run side by side.

Kernels import neither Dask nor Zarr, do no I/O and log nothing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from swath.errors import BackendUnavailable, InvalidParameter

DEVICES = ("auto", "cpu", "gpu")
_FUNCTIONS = ("score_many", "align_batch", "score_ends", "tile_forward", "tile_scores",
              "tile_batch")


def _gpu() -> ModuleType:
    try:
        import cupy
    except ImportError:
        raise BackendUnavailable(
            "device='gpu' needs CuPy: pip install 'swath[gpu]' (CUDA 12) "
            "or 'swath[gpu-cuda13]' (CUDA 13)") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        count = 0
    if count == 0:
        raise BackendUnavailable("device='gpu' but CuPy finds no CUDA GPU on this machine")
    module = importlib.import_module("swath.kernels.gpu")
    missing = [name for name in _FUNCTIONS if not hasattr(module, name)]
    if missing:
        raise BackendUnavailable(
            f"this swath has no GPU kernels for {', '.join(missing)} yet; use device='cpu'")
    return module


def get_backend(device: str = "auto") -> ModuleType:
    """The kernel module for ``device``: ``"cpu"``, ``"gpu"`` or ``"auto"``.

    ``"auto"`` is the GPU when CuPy finds one (and the GPU kernels are present),
    else the CPU.

    Examples
    --------
    >>> get_backend("cpu").__name__
    'swath.kernels.cpu'
    """
    if device not in DEVICES:
        raise InvalidParameter(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "gpu":
        return _gpu()
    if device == "auto":
        try:
            return _gpu()
        except BackendUnavailable:
            pass
    return importlib.import_module("swath.kernels.cpu")
