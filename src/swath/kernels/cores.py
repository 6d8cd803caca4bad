"""How many cores this process's CPU kernels may use."""

from __future__ import annotations

import os

__all__ = ["THREADS_VARIABLE", "cores"]

#: the threads of the CPU kernels (``kernels.cpu.cores``, read at each call): a Dask
#: worker's share of the cores, or the command line's ``--threads``
THREADS_VARIABLE = "NUMBA_NUM_THREADS"


def cores() -> int:
    """The cores this process's kernels may use: ``NUMBA_NUM_THREADS`` (a Dask worker's
    share, or ``--threads``) or every core."""
    return int(os.environ.get(THREADS_VARIABLE, os.cpu_count() or 1))
