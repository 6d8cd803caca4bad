"""The CPU kernels compile once per machine: a new process loads them from numba's cache."""

from __future__ import annotations

import os
import subprocess
import sys

SEARCH = """
import numpy as np
import swath
from swath.kernels.cpu import score_many

sc = swath.Scoring.protein()
q, t = np.zeros(30, np.uint8), np.ones(300, np.uint8)
score_many(q, np.array([0, 30]), t, np.arange(0, 301, 30), sc, "local")
"""


def test_a_second_process_compiles_no_search_kernel():
    """A kernel that misses numba's cache in every process costs each command its compile
    time and adds an entry to the cache each time. The machine's own cache serves (the
    first process compiles only what no earlier test did)."""
    env = {**os.environ, "NUMBA_DEBUG_CACHE": "1"}

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", SEARCH], env=env, capture_output=True,
                              text=True, check=True)
        return done.stdout + done.stderr

    run()
    second = run()
    saved = [line for line in second.splitlines() if "data saved" in line]
    assert not saved, saved
    assert "data loaded" in second
