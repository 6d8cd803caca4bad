"""Pure compute on arrays, one API on two backends.

Each backend module (``swath.kernels.cpu``, ``swath.kernels.gpu``) exposes the same
functions with the same arguments:

``score_many(q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode)``
    optimal scores of every query against every target, an ``(nq, nt)`` int32 array;
``align_batch(q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, mode, pairs=None)``
    one optimal alignment of query k against target k, for every k (with ``pairs``, a
    tuple of two index arrays, of query ``pairs[0][k]`` against target ``pairs[1][k]``,
    the sets passed whole): scores (N,),
    coordinates (N, 4: query start and end, target start and end, 0-based, end
    exclusive) and the extended CIGARs as one text buffer with (N + 1,) offsets;
``band_scores(q_res, q_off, t_res, t_off, lo, hi, matrix, gap_open, gap_extend)``
    global scores of every query against every target over the paths within each
    pair's band of diagonals ``lo .. hi`` (``(nq, nt)`` arrays; ``i - j`` is the
    diagonal of cell (i, j)), an ``(nq, nt)`` int32 array: the first pass of all
    against all (``swath.identity.band_limits``);
``cigar_counts((text, text_at))``
    the matches, mismatches, columns, gap openings and terminal gap columns of each
    CIGAR of such a text buffer, as :func:`swath.identity.cigar_counts` counts them
    (the CPU backend's is that function): what identities are computed from;
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

import functools
import importlib
import logging
import threading
import time
from types import ModuleType
from typing import NamedTuple

from swath.errors import BackendUnavailable, GpuUnavailable, InvalidParameter

logger = logging.getLogger(__name__)

DEVICES = ("auto", "cpu", "gpu")
_FUNCTIONS = ("score_many", "band_scores", "align_batch", "cigar_counts", "score_ends",
              "tile_forward", "tile_scores", "tile_batch")
INSTALL_HINT = "pip install 'swath[gpu]' (CUDA 12) or 'swath[gpu-cuda13]' (CUDA 13)"
_MATCH_CUDA = ("install the CuPy wheel of the driver's CUDA major (cupy-cuda12x or "
               "cupy-cuda13x; nvidia-smi shows it) or update the NVIDIA driver")
# one thread of a process probes; the others wait for its outcome
_PROBE_LOCK = threading.Lock()
# a kernel that CuPy compiles with NVRTC (then caches on disk) and the driver must load
_PROBE_SOURCE = 'extern "C" __global__ void swath_probe(int* x) { *x = 7; }'


class _GpuState(NamedTuple):
    """The outcome of probing the GPU path once per process."""

    gpus: int                     # usable CUDA devices (0 unless the path works)
    problem: str | None           # why it does not work, one line; None: it works
    installed: bool               # CuPy is installed (a problem without it is silent)


def one_line(exc: BaseException, limit: int = 240) -> str:
    """The line of ``exc``'s message that says what went wrong, at most ``limit``
    characters (CuPy's messages span lines: its import error quotes the original one
    after "Original error:", an NVRTC log leads with the file and line of the error)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for k, line in enumerate(lines[:-1]):
        if line.startswith("Original error"):
            lines = lines[k + 1:]
            break
    errors = [line for line in lines if "error" in line.lower()]
    line = (errors or lines or [type(exc).__name__])[0]
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _probe() -> _GpuState:
    """Import CuPy, count CUDA devices, and compile and run one tiny kernel (NVRTC, the
    driver and the device all work), without compiling swath's own kernels."""
    try:
        import cupy
    except ModuleNotFoundError as exc:
        if exc.name == "cupy":
            return _GpuState(0, "CuPy is not installed", installed=False)
        return _unusable(f"CuPy cannot be imported ({one_line(exc)})")
    except Exception as exc:  # a broken install raises ImportError, OSError, RuntimeError
        return _unusable(f"CuPy cannot be imported ({one_line(exc)})")
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError, or a library CuPy cannot load
        text = one_line(exc)
        if "cudaErrorNoDevice" not in text:
            return _unusable(f"CUDA cannot start ({text})")
        count = 0
    if count == 0:
        return _GpuState(0, "CuPy finds no CUDA GPU on this machine", installed=True)
    try:
        value = cupy.zeros(1, dtype=cupy.int32)
        cupy.RawKernel(_PROBE_SOURCE, "swath_probe")((1,), (1,), (value,))
        if int(value[0]) != 7:
            raise RuntimeError(f"a probe kernel wrote {int(value[0])} instead of 7")
    except Exception as exc:  # CompileException, NVRTC or driver errors, a failed load
        return _unusable(f"CuPy cannot compile or run a CUDA kernel ({one_line(exc)})")
    return _GpuState(count, None, installed=True)


def _unusable(problem: str) -> _GpuState:
    """CuPy installed but broken: ``problem`` and what would mend it."""
    return _GpuState(0, f"{problem}; {_MATCH_CUDA}", installed=True)


@functools.cache
def _gpu_state() -> _GpuState:
    """:func:`_probe`, once per process (``cache_clear`` to probe again)."""
    started = time.perf_counter()
    state = _probe()
    if state.problem is not None:
        logger.debug("GPU path unusable: %s", state.problem)
    else:
        logger.debug("GPU probed (CuPy, CUDA context, a kernel) in %.3f s: %d device%s",
                     time.perf_counter() - started, state.gpus, "s" if state.gpus > 1 else "")
    return state


def _state(warn: bool = False) -> _GpuState:
    """The probe's outcome; with ``warn``, CuPy installed and the GPU unusable, one
    warning per process that ``device="auto"`` computes on the CPU."""
    with _PROBE_LOCK:
        state = _gpu_state()
        if warn and state.installed and state.problem is not None:
            _warn_cpu_fallback(state.problem)
        return state


@functools.cache
def _warn_cpu_fallback(problem: str) -> None:
    logger.warning("device='auto': computing on the CPU, since %s", problem)


def probe_in_background(sources: tuple[str, ...] = ()) -> threading.Thread:
    """Start the GPU probe (CuPy's import, CUDA's context: about a second) in a thread of
    its own, so that a command reads its inputs meanwhile; whoever needs the outcome
    first waits for it. Where the GPU works, the same thread then imports the GPU backend
    and loads the kernels of the CUDA ``sources`` (``"search.cu"``, ...) the command
    will run (with ``"traceback.cu"``, the CuPy routines of a batch's plan too). Returns
    the thread."""
    def probe_and_load() -> None:
        # several GPUs: the job runs on a cluster's workers, which load their own
        if _state().problem is not None or _state().gpus > 1 or not sources:
            return
        started = time.perf_counter()
        try:
            from swath.kernels.gpu._cuda import preload

            for source in sources:
                preload(source)
            if "traceback.cu" in sources:
                from swath.kernels.gpu.traceback import warm_up

                warm_up()
        except Exception as exc:   # the command's own first call reports it
            logger.debug("loading %s ahead failed: %s", ", ".join(sources), one_line(exc))
            return
        logger.debug("GPU backend imported and %s loaded in %.3f s", ", ".join(sources),
                     time.perf_counter() - started)

    # not a daemon: the interpreter must not finalize while CUDA starts (a crash at exit)
    thread = threading.Thread(target=probe_and_load, name="swath-gpu-probe")
    thread.start()
    return thread


def gpu_count() -> int:
    """CUDA devices the GPU backend can use: 0 without CuPy, or when it cannot start.

    Probed once per process, as :func:`get_backend` does (no warning here).

    Examples
    --------
    >>> gpu_count() >= 0
    True
    """
    return _state().gpus


def _gpu() -> ModuleType:
    state = _state()
    if not state.installed:
        raise BackendUnavailable(f"device='gpu' needs CuPy: {INSTALL_HINT}")
    if state.problem is not None:
        raise GpuUnavailable(f"device='gpu' but {state.problem}")
    module = importlib.import_module("swath.kernels.gpu")
    missing = [name for name in _FUNCTIONS if not hasattr(module, name)]
    if missing:
        raise BackendUnavailable(
            f"this swath has no GPU kernels for {', '.join(missing)} yet; use device='cpu'")
    return module


def get_backend(device: str = "auto") -> ModuleType:
    """The kernel module for ``device``: ``"cpu"``, ``"gpu"`` or ``"auto"``.

    ``"auto"`` is the GPU when CuPy finds one that works, else the CPU: silently
    without CuPy, with one logged warning per process when CuPy is installed but the GPU
    cannot start. The GPU is probed once per process (CuPy imported, devices counted,
    one tiny kernel compiled and run).

    Raises
    ------
    InvalidParameter
        ``device`` is not one of ``DEVICES``.
    BackendUnavailable
        ``device="gpu"`` without CuPy (the message says what to install).
    GpuUnavailable
        ``device="gpu"`` with CuPy but no usable GPU: none found, a driver too old for
        CuPy's CUDA, CuPy of another CUDA major, or kernels that cannot compile.

    Examples
    --------
    >>> get_backend("cpu").__name__
    'swath.kernels.cpu'
    """
    if device not in DEVICES:
        raise InvalidParameter(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "gpu":
        return _gpu()
    if device == "auto" and _state(warn=True).problem is None:
        return _gpu()
    return importlib.import_module("swath.kernels.cpu")
