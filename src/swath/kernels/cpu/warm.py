"""The CPU traceback kernels compiled in a process of their own, while the command's
process compiles and runs its score kernel.

A search's first run on a machine (numba's cache empty: just installed, or a new swath)
compiles two kernels, one after the other: the lane score kernel, then the traceback
kernels of its hits. Compiled in two processes, on two cores, they overlap: the child
process aligns a few made-up pairs of the job's scheme and mode, as a search's hits
take the lane kernel and the one-pair kernel, which leaves their machine code in
numba's cache; the first :func:`~swath.kernels.cpu.traceback.align_batch` of the
command's process waits for the child (:func:`wait`), then loads that code. Where the
cache holds the kernels already, or one core is all there is, no child starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading

import numpy as np

from swath.constants import Mode
from swath.kernels.cores import cores
from swath.scoring import Scoring

__all__ = ["compile_in_background", "wait"]

WAIT_SECONDS = 300          # a child compiles in seconds; past this it is given up
_LOCK = threading.Lock()
_PENDING: list[subprocess.Popen[bytes]] = []


def compile_in_background(scoring: Scoring, mode: Mode) -> None:
    """Start compiling the traceback kernels of ``scoring`` and ``mode`` in a child
    process, unless numba's cache holds them, one core is all there is, or a child runs."""
    if cores() < 2 or _cached():
        return
    with _LOCK:
        if _PENDING:
            return
        _PENDING.append(subprocess.Popen(
            [sys.executable, "-m", "swath.kernels.cpu.warm", json.dumps(scoring.to_dict()),
             mode], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))


def wait() -> None:
    """Wait for the child that compiles the traceback kernels, if one runs."""
    with _LOCK:
        while _PENDING:
            child = _PENDING.pop()
            try:
                child.wait(WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _cached() -> bool:
    """Whether numba's cache has an index of the lane traceback's walk (a traceback ran
    with this cache before)."""
    from swath.kernels.cpu.traceback import _walk_lanes

    with contextlib.suppress(AttributeError):     # numba's cache internals, as of 0.6x
        cache = _walk_lanes._cache
        return os.path.exists(os.path.join(cache._cache_path,
                                           cache._cache_file._index_name))
    return False


def _compile(scoring: Scoring, mode: Mode) -> None:
    """Align made-up pairs as a search's hits come: three that share a query (the lane
    kernel), one alone (the one-pair kernel)."""
    from swath.kernels.cpu.traceback import align_batch

    rng = np.random.default_rng(0)
    letters = 20 if len(scoring.alphabet.letters) >= 20 else 4      # protein, or DNA
    query = rng.integers(0, letters, 24).astype(np.uint8)
    queries = [query, query, query, rng.integers(0, letters, 24).astype(np.uint8)]
    targets = [rng.integers(0, letters, n).astype(np.uint8) for n in (20, 24, 28, 24)]

    def offsets(sequences: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([[0], np.cumsum([len(s) for s in sequences])]).astype(np.int64)

    align_batch(np.concatenate(queries), offsets(queries), np.concatenate(targets),
                offsets(targets), scoring, mode)


if __name__ == "__main__":
    _compile(Scoring.from_dict(json.loads(sys.argv[1])), sys.argv[2])  # type: ignore[arg-type]
