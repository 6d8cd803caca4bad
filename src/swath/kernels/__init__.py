"""Pure compute on arrays, one API on two backends (:class:`~swath.kernels.backend.Backend`).

``get_backend`` picks the CPU backend (``swath.kernels.cpu``, numba) or the GPU backend
(``swath.kernels.gpu``, CuPy), asking the GPU probe (``swath.kernels.probe``) first.
Importing this package imports neither backend: each loads on first use.
"""

from __future__ import annotations

import functools
import logging
import threading

from swath.constants import Mode
from swath.errors import BackendUnavailable, GpuUnavailable, InvalidParameter
from swath.kernels import probe
from swath.kernels.backend import Backend, missing
from swath.kernels.probe import gpu_count, probe_in_background
from swath.scoring import Scoring

__all__ = ["DEVICES", "Backend", "get_backend", "gpu_count", "probe_in_background",
           "trace_ahead"]

logger = logging.getLogger(__name__)

DEVICES = ("auto", "cpu", "gpu")
_WARN_LOCK = threading.Lock()     # one warning, whichever threads ask at once


def _gpu() -> Backend:
    state = probe.state()
    if not state.installed:
        raise BackendUnavailable(f"device='gpu' needs CuPy: {probe.INSTALL_HINT}")
    if state.problem is not None:
        raise GpuUnavailable(f"device='gpu' but {state.problem}")
    from swath.kernels import gpu

    lacking = missing(gpu)
    if lacking:
        raise BackendUnavailable(
            f"this swath has no GPU kernels for {', '.join(lacking)} yet; use device='cpu'")
    return gpu


def get_backend(device: str = "auto") -> Backend:
    """The kernels of ``device``: ``"cpu"``, ``"gpu"`` or ``"auto"``.

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
    >>> get_backend("cpu").name
    'cpu'
    """
    if device not in DEVICES:
        raise InvalidParameter(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "gpu":
        return _gpu()
    if device == "auto" and _gpu_works():
        return _gpu()
    from swath.kernels import cpu

    return cpu


def trace_ahead(scoring: Scoring, mode: Mode, device: str) -> None:
    """Where ``device`` is the CPU, start compiling the traceback kernels of ``scoring``
    and ``mode`` in a process of their own (``swath.kernels.cpu.warm``), for a search
    whose score kernel this process compiles meanwhile; for ``"auto"``, once the GPU
    probe has found no GPU, on a thread of its own."""
    def start() -> None:
        if device == "auto" and probe.state().problem is None:
            return
        from swath.kernels.cpu import warm

        warm.compile_in_background(scoring, mode)

    if device == "cpu":
        start()
    elif device == "auto":
        threading.Thread(target=start, name="swath-cpu-warm", daemon=True).start()


def _gpu_works() -> bool:
    """Whether the GPU works; where CuPy is installed and it does not, one warning per
    process that ``device="auto"`` computes on the CPU."""
    state = probe.state()
    if state.installed and state.problem is not None:
        with _WARN_LOCK:
            _warn_cpu_fallback(state.problem)
    return state.problem is None


@functools.cache
def _warn_cpu_fallback(problem: str) -> None:
    logger.warning("device='auto': computing on the CPU, since %s", problem)
