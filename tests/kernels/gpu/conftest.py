"""The GPU tests' fixture that puts a fake (or missing, or broken) CuPy in place."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import swath.kernels
from swath.kernels import probe

GPU_MODULES = ("swath.kernels.gpu", "swath.kernels.gpu._cuda", "swath.kernels.gpu.errors",
               "swath.kernels.gpu.scores", "swath.kernels.gpu.tiles",
               "swath.kernels.gpu.resident", "swath.kernels.gpu.slabs",
               "swath.kernels.gpu.traceback",
               *(f"swath.kernels.gpu.traceback.{name}"
                 for name in ("elementwise", "launches", "pipeline", "plan", "streams")))
# what cupy-cuda12x prints when it meets a CUDA 13 machine (cupy/__init__.py)
CUPY_IMPORT_ERROR = """
================================================================
Failed to import CuPy.

If you installed CuPy via wheels (cupy-cudaXXX or cupy-rocm-X-X), make sure that the
package matches with the version of CUDA or ROCm installed.

Original error:
  ImportError: libcudart.so.12: cannot open shared object file: No such file or directory
================================================================
"""


class _RefuseCupy(importlib.abc.MetaPathFinder):
    """``import cupy`` fails as a CuPy built for another CUDA major does."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name == "cupy":
            raise ImportError(CUPY_IMPORT_ERROR)


@pytest.fixture
def use_cupy(monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[Callable[[ModuleType | str | None], None]]:
    """``use_cupy(module)``: ``import cupy`` gives ``module`` (``None``: CuPy is not
    installed; ``"broken"``: the import fails), the GPU is probed afresh, and the GPU
    backend is imported anew; all restored afterwards."""
    for name in GPU_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delattr(swath.kernels, "gpu", raising=False)

    def use(module: ModuleType | str | None) -> None:
        if module == "broken":
            monkeypatch.delitem(sys.modules, "cupy", raising=False)
            monkeypatch.setattr(sys, "meta_path", [_RefuseCupy(), *sys.meta_path])
        else:
            monkeypatch.setitem(sys.modules, "cupy", module)

    probe._gpu_state.cache_clear()
    swath.kernels._warn_cpu_fallback.cache_clear()
    yield use
    probe._gpu_state.cache_clear()
    swath.kernels._warn_cpu_fallback.cache_clear()
