"""A search's first run compiles its traceback kernels in a child process while its own
process compiles the score kernel (``swath.kernels.cpu.warm``); the machine code a
search compiles is counted, so that a change adding kernel variants is seen."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import swath
from swath.kernels.cpu import warm
from tests.helpers import write_fasta

#: what a protein search (BLOSUM62, local) compiles: a function's cache index, and how
#: many specializations of it (one machine-code file each)
SEARCH_COMPILES = {
    "lanes._make_kernel.locals.kernel": 1,          # the score kernel
    "lanes._fill_cols": 1,
    "lane_traceback._make_fill.locals.lane_fill": 1,     # hits that share a query
    "traceback._make_fill.locals.fill": 1,          # a hit alone
    "traceback._walk": 1,
    "traceback._walk_cigar": 1,
    "traceback._walk_lanes": 1,
    "traceback._place": 1,
}


def compiled(cache: Path) -> Counter[str]:
    """Machine-code files in a numba cache, by function (``module.qualname``)."""
    return Counter(path.name.split("-")[0] for path in cache.rglob("*.nbc"))


@pytest.mark.slow
def test_a_first_search_compiles_each_kernel_once_the_traceback_in_a_child(tmp_path):
    rng = np.random.default_rng(3)
    letters = list("ACDEFGHIKLMNPQRSTVWY")
    write_fasta(tmp_path / "db.fasta", [(f"p{i}", "".join(rng.choice(letters, n)))
                                        for i, n in enumerate(rng.integers(50, 200, 300))])
    write_fasta(tmp_path / "q.fasta", [(f"q{i}", "".join(rng.choice(letters, 120)))
                                       for i in range(4)])
    cache = tmp_path / "numba"
    env = os.environ | {"NUMBA_CACHE_DIR": str(cache), "NUMBA_NUM_THREADS": "2"}
    script = ("import sys, swath.kernels.cpu.warm as warm\n"
              "started = []\n"
              "real = warm.subprocess.Popen\n"
              "def spy(args, *a, **k):\n"
              "    started.extend([1] if 'swath.kernels.cpu.warm' in args else [])\n"
              "    return real(args, *a, **k)\n"
              "warm.subprocess.Popen = spy\n"
              "from swath.cli import main\n"
              "sys.argv = ['swath'] + sys.argv[1:]\n"
              "try:\n    main()\nfinally:\n    print('children', len(started), file=sys.stderr)\n")
    command = [sys.executable, "-c", script, "search", "q.fasta", "db.fasta", "-o", "r.zarr",
               "--device", "cpu", "--no-progress", "--outfmt", "tsv"]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    assert "children 1" in first.stderr                # the traceback compiled aside
    assert compiled(cache) == Counter(SEARCH_COMPILES)
    command[command.index("r.zarr")] = "r2.zarr"
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr
    assert "children 0" in again.stderr                # cached: no child
    assert again.stdout == first.stdout and compiled(cache) == Counter(SEARCH_COMPILES)


def test_no_child_on_one_core_and_wait_returns_at_once(monkeypatch):
    started = []
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *a, **k: started.append(a))
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    warm.compile_in_background(swath.Scoring.protein(), "local")
    assert started == []
    warm.wait()


def test_the_child_waited_for_is_the_one_started(monkeypatch):
    """align_batch waits for a pending child before its first fill; one short pair, which
    takes none of the child's kernels, does not wait."""
    class Child:
        waited = 0

        def wait(self, timeout=None):
            Child.waited += 1

    monkeypatch.setattr(warm, "_cached", lambda: False)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *a, **k: Child())
    warm.compile_in_background(swath.Scoring.protein(), "local")
    warm.compile_in_background(swath.Scoring.protein(), "local")    # one child at a time
    swath.align("MKTAYIAKQR", "MKTAYIAKQR", device="cpu")
    assert Child.waited == 0 and len(warm._PENDING) == 1
    swath.align_pairs(["MKTAYIAKQR", "MKTAY"], ["MKTAYIAKQR", "MKTAW"], device="cpu")
    assert Child.waited == 1 and warm._PENDING == []
