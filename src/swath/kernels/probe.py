"""The GPU probe: whether CuPy imports, finds a CUDA GPU and runs a kernel, once per process.

:func:`swath.kernels.get_backend` asks it before it imports the GPU backend; a command
starts it early, in a thread of its own (:func:`probe_in_background`).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import NamedTuple

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'swath[gpu]' (CUDA 12) or 'swath[gpu-cuda13]' (CUDA 13)"
_MATCH_CUDA = ("install the CuPy wheel of the driver's CUDA major (cupy-cuda12x or "
               "cupy-cuda13x; nvidia-smi shows it) or update the NVIDIA driver")
# one thread of a process probes; the others wait for its outcome
_PROBE_LOCK = threading.Lock()
# a kernel that CuPy compiles with NVRTC (then caches on disk) and the driver must load
_PROBE_SOURCE = 'extern "C" __global__ void swath_probe(int* x) { *x = 7; }'


class GpuState(NamedTuple):
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


def _probe() -> GpuState:
    """Import CuPy, count CUDA devices, and compile and run one tiny kernel (NVRTC, the
    driver and the device all work), without compiling swath's own kernels."""
    try:
        import cupy
    except ModuleNotFoundError as exc:
        if exc.name == "cupy":
            return GpuState(0, "CuPy is not installed", installed=False)
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
        return GpuState(0, "CuPy finds no CUDA GPU on this machine", installed=True)
    try:
        value = cupy.zeros(1, dtype=cupy.int32)
        cupy.RawKernel(_PROBE_SOURCE, "swath_probe")((1,), (1,), (value,))
        if int(value[0]) != 7:
            raise RuntimeError(f"a probe kernel wrote {int(value[0])} instead of 7")
    except Exception as exc:  # CompileException, NVRTC or driver errors, a failed load
        return _unusable(f"CuPy cannot compile or run a CUDA kernel ({one_line(exc)})")
    return GpuState(count, None, installed=True)


def _unusable(problem: str) -> GpuState:
    """CuPy installed but broken: ``problem`` and what would mend it."""
    return GpuState(0, f"{problem}; {_MATCH_CUDA}", installed=True)


@functools.cache
def _gpu_state() -> GpuState:
    """:func:`_probe`, once per process (``cache_clear`` to probe again)."""
    started = time.perf_counter()
    found = _probe()
    if found.problem is not None:
        logger.debug("GPU path unusable: %s", found.problem)
    else:
        logger.debug("GPU probed (CuPy, CUDA context, a kernel) in %.3f s: %d device%s",
                     time.perf_counter() - started, found.gpus, "s" if found.gpus > 1 else "")
    return found


def state() -> GpuState:
    """The probe's outcome (the first call probes; the others wait for it)."""
    with _PROBE_LOCK:
        return _gpu_state()


def probe_in_background(sources: tuple[str, ...] = ()) -> threading.Thread:
    """Start the GPU probe (CuPy's import, CUDA's context) in a thread of its own, so
    that a command reads its inputs meanwhile; whoever needs the outcome first waits
    for it. Where the GPU works, the same thread then imports the GPU backend
    and loads the kernels of the CUDA ``sources`` (``"search.cu"``, ...) the command
    will run (with ``"traceback.cu"``, the CuPy routines of a batch's plan too). Returns
    the thread."""
    def probe_and_load() -> None:
        # several GPUs: the job runs on a cluster's workers, which load their own
        if state().problem is not None or state().gpus > 1 or not sources:
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

    Probed once per process, as :func:`swath.kernels.get_backend` does (no warning).

    Examples
    --------
    >>> gpu_count() >= 0
    True
    """
    return state().gpus
