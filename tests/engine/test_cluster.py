"""Local clusters: how many Dask threads a worker gets for each kind of work."""

from __future__ import annotations

import os

import pytest

from swath.engine.cluster import session

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("tile_tasks", [False, True])
def test_tile_tasks_get_one_thread_per_core(tile_tasks):
    """A long pair's tiles are single-threaded kernels: one Dask thread per core; search
    units run multi-threaded kernels: one thread per worker."""
    with session(device="cpu", processes=False, tile_tasks=tile_tasks) as (client, own):
        assert own
        threads = [w["nthreads"] for w in client.scheduler_info()["workers"].values()]
    assert threads == [(os.cpu_count() or 1) if tile_tasks else 1]
