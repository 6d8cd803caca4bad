"""Dask clients: a given scheduler, or a local cluster sized for this machine."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from swath.errors import InvalidParameter

logger = logging.getLogger(__name__)


def _gpus() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def connect(scheduler: str | None = None, workers: int | None = None, device: str = "auto",
            processes: bool = True, threads_per_gpu: int = 2, tile_tasks: bool = False
            ) -> tuple[Any, bool]:
    """A Dask client and whether the caller owns (must close) its cluster.

    ``scheduler``: the address of a running scheduler. Without one, a local cluster:
    one worker per GPU (dask-cuda) when GPUs are used, else ``workers`` CPU worker
    processes (default 1) of one Dask thread each, whose numba kernels share the cores.
    GPU workers get two threads, not dask-cuda's one: one task's host work (top-k,
    downloads) then overlaps another's kernels (S1 on an H100: 3.48 s against 3.86 s).
    With ``tile_tasks`` (a long pair's tiles: single-threaded kernels on the CPU, a
    whole GPU each on GPUs), CPU workers get one Dask thread per core instead, and
    GPU workers one thread, so that the scheduler hands the next ready tile to an idle
    GPU rather than queue it behind a busy one (2 x H200, L1: 18.1 s with two
    threads per GPU, against 14.0 s on one GPU).
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="10s"), False
        except (OSError, TimeoutError) as exc:
            raise InvalidParameter(f"--scheduler {scheduler}: cannot reach a Dask scheduler "
                                   f"there ({exc})") from None
    gpus = _gpus() if device in ("auto", "gpu") else 0
    if gpus:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            logger.warning("GPUs present but dask-cuda is not installed: using CPU workers")
        else:
            cluster = LocalCUDACluster(n_workers=workers or gpus,
                                       threads_per_worker=1 if tile_tasks else threads_per_gpu)
            return Client(cluster), True
    import os

    n = workers or 1
    threads = max(1, (os.cpu_count() or 1) // n)
    # worker processes get numba's thread count (threads share the caller's)
    extra = {"env": {"NUMBA_NUM_THREADS": str(threads)}} if processes else {}
    cluster = LocalCluster(n_workers=n, threads_per_worker=threads if tile_tasks else 1,
                           processes=processes, dashboard_address=":0", **extra)
    return Client(cluster), True


@contextmanager
def session(client: Any = None, **options: Any) -> Iterator[tuple[Any, bool]]:
    """``client`` as given, or one from :func:`connect` (``options``); and whether its
    cluster was started here, in which case it is closed on exit."""
    if client is not None:
        yield client, False
        return
    client, own = connect(**options)
    try:
        yield client, own
    finally:
        if own:
            cluster = client.cluster
            client.close()
            cluster.close()
