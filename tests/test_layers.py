"""The package's layers hold: import-linter's contracts (``[tool.importlinter]`` in
pyproject.toml) pass on the swath these tests import.

cli -> api -> workloads -> engine -> results -> kernels | storage -> core: each layer
imports only those below it, lazy imports inside functions included; the command line
reaches nothing but the public API; kernels import neither Dask nor Zarr; storage no
kernel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import swath

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ("cli -> api -> workloads -> engine -> results -> kernels | storage -> core",
             "the command line calls only the public API",
             "kernels import neither Dask nor Zarr",
             "storage imports no kernel")


def test_import_contracts_hold():
    script = (shutil.which("lint-imports", path=str(Path(sys.executable).parent))
              or shutil.which("lint-imports"))
    assert script, "lint-imports is missing: pip install 'swath[test]' (import-linter)"
    package = str(Path(swath.__file__).resolve().parents[1])   # the swath under test
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (package, os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([script, "--no-cache"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in CONTRACTS:
        assert f"{name} KEPT" in done.stdout, done.stdout
