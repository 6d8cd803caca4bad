"""Fixtures every test may take, and the GPU tests skipped where no GPU works (what the
tests share besides fixtures is in tests/helpers.py)."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from swath.errors import BackendUnavailable
from swath.kernels import get_backend
from tests.helpers import s3


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


@pytest.fixture(scope="module")
def s3_server() -> Iterator[dict[str, str]]:
    """A moto S3 server (a process of its own) on 127.0.0.1 that fsspec's ``s3://`` URLs
    reach: its endpoint and keys in fsspec's configuration, as a user would set
    ``FSSPEC_S3_ENDPOINT_URL``; those options (``endpoint_url``, ``key``, ``secret``).
    (s3fs and moto are imported here, not at collection: every test worker collects
    this module.)"""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    import fsspec

    with socket.socket() as probe:          # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before = fsspec.config.conf.get("s3")
    options = {"endpoint_url": f"http://127.0.0.1:{port}", "key": "testing",
               "secret": "testing"}
    fsspec.config.conf["s3"] = dict(options)
    try:
        yield options
    finally:
        if before is None:
            fsspec.config.conf.pop("s3")
        else:
            fsspec.config.conf["s3"] = before
        server.terminate()
        server.wait()


@pytest.fixture(scope="module")
def bucket(s3_server: dict[str, str]) -> str:
    """A new bucket of ``s3_server`` (made once the server answers): ``s3://`` and its
    name."""
    name = f"swath-{uuid.uuid4().hex[:8]}"
    for _ in range(200):
        try:
            s3().mkdir(name)
            break
        except OSError:
            time.sleep(0.1)
    return f"s3://{name}"


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
