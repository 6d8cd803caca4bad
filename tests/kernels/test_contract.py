"""The backend contract (``swath.kernels.backend``): both backends satisfy it, member by
member and argument by argument, and a backend that lacks a member is refused."""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType
from typing import Any

import pytest

from swath.errors import BackendUnavailable
from swath.kernels import get_backend
from swath.kernels.backend import (
    Backend,
    FurtherAlignments,
    ResidentTargets,
    SlabStreaming,
    SurplusFloors,
    TileCodes,
    missing,
)

CAPABILITIES = {"resident": ResidentTargets, "slabs": SlabStreaming, "codes": TileCodes,
                "surplus": SurplusFloors, "hsps": FurtherAlignments}


def methods(protocol: type) -> dict[str, Any]:
    return {name: member for name, member in vars(protocol).items()
            if not name.startswith("_") and inspect.isfunction(member)}


def check_satisfies(implementation: Any, protocol: type) -> None:
    """Every method of ``protocol`` is a function of ``implementation`` that takes its
    arguments by the same names, in the same order (extra ones optional)."""
    for name, method in methods(protocol).items():
        wanted = list(inspect.signature(method).parameters.values())[1:]     # no self
        given = list(inspect.signature(getattr(implementation, name)).parameters.values())
        assert [p.name for p in given[:len(wanted)]] == [p.name for p in wanted], name
        for mine, theirs in zip(given, wanted, strict=False):
            assert mine.kind == theirs.kind, (name, mine.name)
            if theirs.default is not inspect.Parameter.empty:
                assert mine.default == theirs.default, (name, mine.name)
        assert all(p.default is not inspect.Parameter.empty or p.kind == p.VAR_KEYWORD
                   for p in given[len(wanted):]), name


def check_backend(backend: Backend, name: str, has: set[str]) -> None:
    assert missing(backend) == []
    assert backend.name == name
    check_satisfies(backend, Backend)
    assert isinstance(backend.band_worth, float) and isinstance(backend.split_boxes, bool)
    for capability, protocol in CAPABILITIES.items():
        value = getattr(backend, capability)
        assert (value is not None) == (capability in has), capability
        if value is not None:
            check_satisfies(value, protocol)


def test_the_cpu_backend_satisfies_the_contract():
    check_backend(get_backend("cpu"), "cpu", {"codes", "surplus", "hsps"})


@pytest.mark.gpu
def test_the_gpu_backend_satisfies_the_contract():
    check_backend(get_backend("gpu"), "gpu", {"resident", "slabs"})


def test_a_backend_that_lacks_a_function_is_refused(monkeypatch):
    """``missing`` names what a backend lacks; ``get_backend("gpu")`` refuses a GPU
    backend that lacks anything, saying what."""
    cpu = importlib.import_module("swath.kernels.cpu")
    partial = ModuleType("partial")
    partial.__dict__.update({k: v for k, v in vars(cpu).items()
                             if k not in ("tile_batch", "slabs")})
    assert missing(partial) == ["slabs", "tile_batch"]
    assert missing(cpu) == []

    monkeypatch.setattr("swath.kernels.probe.state", lambda: _Working())
    monkeypatch.setattr("swath.kernels.gpu", partial, raising=False)
    with pytest.raises(BackendUnavailable, match=r"^this swath has no GPU kernels for "
                                                 r"slabs, tile_batch yet; use device='cpu'$"):
        get_backend("gpu")


class _Working:
    """A probe's outcome: CuPy installed, a GPU that works."""

    gpus, problem, installed = 1, None, True


def test_a_function_of_other_arguments_fails_the_check():
    partial = ModuleType("partial")

    def tile_batch(tiles, matrix, gap_open, gap_extend):   # the contract says "scoring"
        return []

    partial.tile_batch = tile_batch  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match="tile_batch"):
        check_satisfies(partial, _OnlyTileBatch)


class _OnlyTileBatch:
    tile_batch = vars(Backend)["tile_batch"]
