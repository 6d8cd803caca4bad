"""The GPU path's errors: one line each, SwathError subclasses, and device="auto" falling
back to the CPU with one warning where CuPy is installed but the GPU cannot start.

These run without a GPU (and in CI without CuPy) on a fake ``cupy`` put in
``sys.modules``; the last test, marked ``gpu``, asks a real GPU for too much memory.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from swath.cli import main
from swath.errors import (
    BackendUnavailable,
    GpuOutOfMemory,
    GpuUnavailable,
    KernelCompileError,
    SwathError,
)
from swath.kernels import get_backend, gpu_count, probe_in_background
from swath.kernels.backend import Backend
from tests.helpers import (
    DNA,
    CUDADriverError,
    CUDARuntimeError,
    OutOfMemoryError,
    fake_cupy,
)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
NVRTC_LOG = ('/tmp/tmpq1w2e3/3f9e0c.cu(41): error: identifier "lane_max" is undefined\n\n'
             '1 error detected in the compilation of "/tmp/tmpq1w2e3/3f9e0c.cu".\n')


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name.startswith("swath") and r.levelno >= logging.WARNING]


def test_cupy_missing(use_cupy: Callable, caplog: pytest.LogCaptureFixture) -> None:
    use_cupy(None)
    assert get_backend("auto").name == "cpu"
    assert warnings_of(caplog) == []
    assert gpu_count() == 0
    with pytest.raises(BackendUnavailable, match=r"needs CuPy: pip install 'swath\[gpu\]'") \
            as raised:
        get_backend("gpu")
    assert not isinstance(raised.value, GpuUnavailable)


BROKEN = {
    "import error (wrong CUDA major)": ("broken", r"CuPy cannot be imported \(ImportError: "
                                                  r"libcudart\.so\.12: cannot open"),
    "driver too old": (fake_cupy(devices=CUDARuntimeError(
        35, "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA "
            "runtime version")), r"CUDA cannot start \(cudaErrorInsufficientDriver"),
    "no device (CUDA error)": (fake_cupy(devices=CUDARuntimeError(
        100, "cudaErrorNoDevice: no CUDA-capable device is detected")),
        "CuPy finds no CUDA GPU on this machine"),
    "zero devices": (fake_cupy(devices=0), "CuPy finds no CUDA GPU on this machine"),
    "NVRTC missing": (fake_cupy(probe=RuntimeError(
        "CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared "
        "object file: No such file or directory")),
        r"CuPy cannot compile or run a CUDA kernel \(CuPy failed to load libnvrtc\.so\.12"),
    "PTX too new for the driver": (fake_cupy(probe=CUDADriverError(
        222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an "
             "unsupported toolchain.")),
        r"CuPy cannot compile or run a CUDA kernel \(CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_gpu(case: str, use_cupy: Callable, caplog: pytest.LogCaptureFixture) -> None:
    """device="gpu" raises GpuUnavailable, one line; "auto" computes on the CPU with one
    warning, however often it is asked."""
    module, reason = BROKEN[case]
    use_cupy(module)
    with pytest.raises(GpuUnavailable, match=rf"^device='gpu' but {reason}") as raised:
        get_backend("gpu")
    message = str(raised.value)
    assert "\n" not in message
    if "no CUDA GPU" not in message:
        assert "cupy-cuda12x or cupy-cuda13x" in message
    assert isinstance(raised.value, BackendUnavailable) and isinstance(raised.value, SwathError)
    assert gpu_count() == 0
    assert warnings_of(caplog) == []
    for _ in range(3):
        assert get_backend("auto").name == "cpu"
    [warning] = warnings_of(caplog)
    assert warning.startswith("device='auto': computing on the CPU, since ")
    assert "\n" not in warning


def test_probe_is_cached(use_cupy: Callable, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe runs once per process: later calls do not touch CuPy."""
    cupy = fake_cupy(devices=2)
    calls = []
    count = cupy.cuda.runtime.getDeviceCount
    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", lambda: calls.append(1) or count())
    use_cupy(cupy)
    assert gpu_count() == 2
    assert get_backend("auto").name == "gpu"
    assert get_backend("gpu").name == "gpu"
    assert len(calls) == 1


def test_background_probe_loads_the_kernels_the_command_runs(use_cupy: Callable) -> None:
    """Where the GPU works, the probe's thread also loads the named sources' kernels (a
    module each)."""
    use_cupy(fake_cupy(devices=1))
    probe_in_background(("search.cu", "traceback.cu")).join()
    from swath.kernels.gpu import _cuda

    assert _cuda._module.cache_info().currsize == 2


def test_background_load_leaves_a_compile_error_to_the_command(
        use_cupy: Callable, caplog: pytest.LogCaptureFixture) -> None:
    use_cupy(fake_cupy(devices=1, compile_log=NVRTC_LOG))
    with caplog.at_level(logging.DEBUG, logger="swath"):
        probe_in_background(("search.cu",)).join()
    assert any("loading search.cu ahead failed" in r.getMessage() for r in caplog.records)
    with pytest.raises(KernelCompileError):
        get_backend("gpu").score_many(*small_inputs())


def test_background_probe_without_a_gpu_loads_nothing(use_cupy: Callable) -> None:
    use_cupy(fake_cupy(devices=0))
    probe_in_background(("search.cu",)).join()
    assert "swath.kernels.gpu" not in sys.modules


def small_inputs() -> tuple:
    q = np.array([0, 1, 2, 3], dtype=np.uint8)
    offsets = np.array([0, 4], dtype=np.int64)
    return q, offsets, q, offsets, DNA, "local"


def test_compile_error_names_the_source(use_cupy: Callable) -> None:
    use_cupy(fake_cupy(compile_log=NVRTC_LOG))
    with pytest.raises(KernelCompileError, match=r"swath's CUDA source search\.cu did not "
                       r"compile .*\(search\.cu\(41\): error: identifier \"lane_max\" is "
                       r"undefined\); this is a bug in swath, please report it") as raised:
        get_backend("gpu").score_many(*small_inputs())
    assert "\n" not in str(raised.value)
    assert isinstance(raised.value, RuntimeError)


def test_compile_error_in_a_header_keeps_its_name(use_cupy: Callable) -> None:
    use_cupy(fake_cupy())
    from swath.kernels.gpu._cuda import HERE, _in_source

    line = f"{HERE / 'cells.cuh'}(12): error: expected a ';'"
    assert _in_source(line, "tiles.cu") == line


@pytest.mark.parametrize("error", [
    OutOfMemoryError(214_748_364_800, 1024),
    CUDARuntimeError(2, "cudaErrorMemoryAllocation: out of memory"),
    CUDADriverError(2, "CUDA_ERROR_OUT_OF_MEMORY: out of memory"),
], ids=["cupy-pool", "runtime", "driver"])
def test_out_of_memory_through_a_backend_function(error: Exception, use_cupy: Callable,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An out-of-memory error anywhere under a backend function leaves it as
    GpuOutOfMemory, one line with what was asked and what is free."""
    use_cupy(fake_cupy())
    backend = get_backend("gpu")
    from swath.kernels.gpu import scores

    def upload(*args: Any) -> None:
        raise error

    monkeypatch.setattr(scores.DeviceTargets, "upload", upload)
    with pytest.raises(GpuOutOfMemory, match=r"^GPU out of memory in score_many: ") as raised:
        backend.score_many(*small_inputs())
    message = str(raised.value)
    assert "\n" not in message
    assert "with 4.0 GiB free of 80.0 GiB on GPU 0; use --device cpu" in message
    if isinstance(error, OutOfMemoryError):
        assert "asked for 200.0 GiB" in message
    else:
        assert "out of memory" in message
    assert isinstance(raised.value, MemoryError) and raised.value.__cause__ is error


def test_other_cuda_errors_pass_unchanged(use_cupy: Callable) -> None:
    use_cupy(fake_cupy())
    from swath.kernels.gpu.errors import translate_errors

    error = CUDARuntimeError(700, "cudaErrorIllegalAddress: an illegal memory access")

    def kernel_function() -> None:
        raise error

    with pytest.raises(CUDARuntimeError) as raised:
        translate_errors(kernel_function)()
    assert raised.value is error


def test_every_backend_function_is_wrapped(use_cupy: Callable) -> None:
    use_cupy(fake_cupy())
    backend = get_backend("gpu")
    from swath.kernels.gpu.errors import translate_errors

    wrapper = translate_errors(len).__code__
    functions = [getattr(backend, name) for name, member in vars(Backend).items()
                 if not name.startswith("_") and callable(member)]
    assert backend.resident is not None and backend.slabs is not None
    functions += [backend.resident.upload, backend.resident.score_queries,
                  backend.resident.top_hits, backend.slabs.row_stream,
                  backend.slabs.tile_scores]
    assert len(functions) == 13
    for function in functions:
        assert function.__code__ is wrapper, function.__qualname__


# ---------------------------------------------------------------------------------
# The command line


def align(*options: str) -> Any:
    return CliRunner().invoke(main, ["align", str(EXAMPLES / "query.fasta"),
                                     str(EXAMPLES / "target.fasta"), *options])


DRIVER_TOO_OLD = CUDARuntimeError(35, "cudaErrorInsufficientDriver: CUDA driver version is "
                                      "insufficient for CUDA runtime version")


@pytest.mark.parametrize("broken", [fake_cupy(devices=DRIVER_TOO_OLD), "broken"],
                         ids=["driver", "import"])
def test_cli_device_gpu_is_one_error_line(broken: Any, use_cupy: Callable,
                                          restore_logging: None) -> None:
    use_cupy(broken)
    result = align("--device", "gpu")
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("swath: error: device='gpu' but "), line
    assert result.stdout == ""


@pytest.mark.parametrize("broken", [fake_cupy(devices=DRIVER_TOO_OLD), "broken"],
                         ids=["driver", "import"])
def test_cli_device_auto_warns_once_and_computes_on_the_cpu(
        broken: Any, use_cupy: Callable, restore_logging: None) -> None:
    use_cupy(broken)
    result = align("--device", "auto", "--format", "json")
    assert result.exit_code == 0, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("swath: warning: device='auto': computing on the "
                           "CPU, since "), line
    assert '"score": 583' in result.stdout


def test_cli_without_cupy_is_silent(use_cupy: Callable, restore_logging: None) -> None:
    use_cupy(None)
    result = align("--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


# ---------------------------------------------------------------------------------
# A real GPU


@pytest.mark.gpu
def test_real_gpu_refuses_an_impossible_allocation(tmp_path: Path) -> None:
    """Targets larger than the GPU's memory, mapped from a sparse file (no host memory
    used: the device allocation fails before any copy), through score_many."""
    import cupy

    backend = get_backend("gpu")
    size = 2 * cupy.cuda.runtime.memGetInfo()[1] + 2**30
    path = tmp_path / "huge.bin"
    with path.open("wb") as f:
        f.truncate(size)
    targets = np.memmap(path, dtype=np.uint8, mode="r", shape=(size,))
    q = np.zeros(10, dtype=np.uint8)
    with pytest.raises(GpuOutOfMemory, match=r"^GPU out of memory in score_many: asked for "
                       r"[\d.]+ GiB with [\d.]+ GiB free of [\d.]+ GiB on GPU \d+; use "
                       r"--device cpu") as raised:
        backend.score_many(q, np.array([0, 10]), targets, np.array([0, size]), DNA, "local")
    assert isinstance(raised.value.__cause__, cupy.cuda.memory.OutOfMemoryError)
