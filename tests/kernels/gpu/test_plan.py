"""How the GPU search plans its launches, checked without a GPU (CuPy faked): every
configuration's pass fits the profile, is compiled, and is chosen within its limits; the
query streams hold every query once, about as long as each other, in a profile and row
table laid out as the kernel reads them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest

from swath.constants import MODES, ROW_GRAIN
from tests.helpers import fake_cupy


@pytest.fixture
def gpu(use_cupy: Callable) -> tuple[ModuleType, ModuleType]:
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
                for mode in MODES:
                    assert cuda.search_name(group, rows, cell, mode) in cuda._NAMES["search.cu"]
            passes = -(-query // (group * rows))
            assert passes * group * rows <= -(-query // scores.PROFILE_ROWS) * scores.PROFILE_ROWS


@pytest.mark.parametrize("seed", range(5))
def test_local_streams_hold_every_query_once_and_about_as_many_rows(
        gpu: tuple[ModuleType, ModuleType], seed: int) -> None:
    _, scores = gpu
    rng = np.random.default_rng(seed)
    lengths = sorted(rng.integers(1, 6000, int(rng.integers(2, 60))).tolist())
    plan = scores.stream_plan(lengths, "local")
    assert sorted(k for launch in plan for stream in launch for k in stream) == \
        list(range(len(lengths)))
    padded = [-(-n // ROW_GRAIN) * ROW_GRAIN for n in lengths]
    for launch in plan:
        rows = [sum(padded[k] for k in stream) for stream in launch]
        assert all(r <= scores.LAUNCH_ROWS or len(s) == 1
                   for r, s in zip(rows, launch, strict=True))
        if len(launch) == 2:
            assert abs(rows[0] - rows[1]) <= max(padded)


def test_global_streams_are_neighbours_one_query_each(gpu: tuple[ModuleType, ModuleType]
                                                      ) -> None:
    _, scores = gpu
    for mode in ("global", "semiglobal"):
        assert scores.stream_plan([5, 9, 30, 31, 700], mode) == [[[0], [1]], [[2], [3]], [[4]]]
    assert scores.stream_plan([40], "local") == [[[0]]]
    for mode in ("local", "global", "semiglobal"):
        assert scores.stream_plan([], mode) == []


def test_a_long_local_set_takes_several_launches(gpu: tuple[ModuleType, ModuleType],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _, scores = gpu
    monkeypatch.setattr(scores, "LAUNCH_ROWS", 256)
    plan = scores.stream_plan([300, 100, 100, 64, 64, 32, 1], "local")
    assert plan[0] == [[0], [1, 2]]
    assert all(sum(-(-[300, 100, 100, 64, 64, 32, 1][k] // 32) * 32 for k in s) <= 256
               for launch in plan[1:] for s in launch)


def test_stream_rows_name_their_query_and_profile_halves(gpu: tuple[ModuleType, ModuleType]
                                                         ) -> None:
    """Each query starts at a multiple of ROW_GRAIN rows; the table names its output row
    over its ROW_GRAIN-row blocks, -1 after; the profile's low half is the first stream."""
    _, scores = gpu
    matrix = np.arange(16, dtype=np.int16).reshape(4, 4) - 5
    first = [np.array([1, 2, 3]), np.arange(40) % 4]
    second = [np.array([3] * 33)]
    assert scores.stream_starts(first) == [0, 32]
    table = scores.row_queries([first, second], [[4, 0], [2]], 256)
    assert table.shape == (2, 256 // ROW_GRAIN)
    assert table[0].tolist() == [4, 0, 0, -1, -1, -1, -1, -1]
    assert table[1].tolist() == [2, 2, -1, -1, -1, -1, -1, -1]
    profile = np.asarray(scores.query_profile([first, second], matrix, 256))
    low = (profile & 0xffff).astype(np.uint16).view(np.int16)
    high = (profile >> 16).astype(np.uint16).view(np.int16)
    assert low[:4, 0].tolist() == matrix[1].tolist()        # stream 0, row 0: residue 1
    assert low[:4, 32 + 5].tolist() == matrix[5 % 4].tolist()
    assert high[:4, 32].tolist() == matrix[3].tolist()
    pad = min(int(matrix.min()), 0)
    assert (low[:, 3:32] == pad).all() and (low[4] == pad).all() and (high[:, 33:] == pad).all()
