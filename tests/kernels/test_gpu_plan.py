"""How the GPU search plans its launches, checked without a GPU (CuPy faked): every
configuration's pass fits the profile, is compiled, and is chosen within its limits."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

import pytest

from tests.kernels.test_gpu_errors import fake_cupy, use_cupy  # noqa: F401  (fixture)


@pytest.fixture
def gpu(use_cupy: Callable) -> tuple[ModuleType, ModuleType]:  # noqa: F811
    use_cupy(fake_cupy())
    return (importlib.import_module("swath.kernels.gpu._cuda"),
            importlib.import_module("swath.kernels.gpu.scores"))


def test_every_pass_divides_the_profile_rows(gpu: tuple[ModuleType, ModuleType]) -> None:
    cuda, scores = gpu
    assert all(scores.PROFILE_ROWS % (g * r) == 0 for g, r in cuda.SEARCH_CONFIGS)


@pytest.mark.parametrize("row_bytes", [2, 4])
@pytest.mark.parametrize("alphabet", [4, 24])
def test_the_chosen_configuration_is_compiled_and_fits(gpu: tuple[ModuleType, ModuleType],
                                                      alphabet: int, row_bytes: int) -> None:
    cuda, scores = gpu
    for target in (1, 31, 63, 64, 127, 128, 255, 256, 1000, 35000):
        for query in (1, 64, 65, 128, 129, 256, 257, 511, 512, 513, 5478, 40000):
            group, rows = scores.kernel_config(query, target, alphabet, row_bytes)
            assert (alphabet + 1) * group * rows * row_bytes <= scores.SHARED_LIMIT
            assert group * 8 <= max(target, 32)
            for cell in cuda.CELLS:
                for mode in cuda.MODES:
                    assert cuda.search_name(group, rows, cell, mode) in cuda._NAMES["search.cu"]
            passes = -(-query // (group * rows))
            assert passes * group * rows <= -(-query // scores.PROFILE_ROWS) * scores.PROFILE_ROWS
