"""Fixtures every test may take, and the GPU tests skipped where no GPU works (what the
tests share besides fixtures is in tests/helpers.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from swath.errors import BackendUnavailable
from swath.kernels import get_backend


def gpu_available() -> bool:
    try:
        get_backend("gpu")
    except BackendUnavailable:
        return False
    return True


@pytest.fixture(autouse=True, scope="session")
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """What swath caches (database stores made from FASTA files) goes to a temporary
    directory, also for the commands the tests start, not to the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWATH_CACHE_DIR", str(tmp_path_factory.mktemp("swath-cache")))
        yield


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    """A Dask cluster in this process, one worker of two threads: one for every test of
    a test process that asks for it (its start costs more than most tests)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=":0") as started:
        yield started


@pytest.fixture(scope="session")
def client(cluster: Any) -> Iterator[Any]:
    """A client of ``cluster``; not the default one, so that the tests that do not ask
    for it compute as they would alone."""
    from distributed import Client

    with Client(cluster, set_as_default=False) as connected:
        yield connected


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The CLI configures the 'swath' logger; leave it as it was for other tests."""
    logger = logging.getLogger("swath")
    level, handlers = logger.level, list(logger.handlers)
    yield
    logger.setLevel(level)
    logger.handlers[:] = handlers


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable GPU backend (CuPy with a CUDA GPU)")
    for item in items:
        if item.get_closest_marker("gpu"):   # a mark, not a keyword: tests/kernels/gpu is one
            item.add_marker(skip)
