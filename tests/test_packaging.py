"""What ``pip install .`` ships: every file the CUDA kernels read, in the wheel and the sdist.

The kernels compile at run time from the ``.cu`` sources beside ``swath/kernels/gpu``
with ``-I`` that folder, so a header missing from an archive (``cells.cuh`` once was)
only shows on the first GPU call of an installed swath. These tests build both archives
from a clean copy of the source tree and read them, and check the installed package.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import swath

ROOT = Path(__file__).resolve().parents[1]
KERNELS = Path("src", "swath", "kernels", "gpu")      # in the source tree
PACKAGED = Path("swath", "kernels", "gpu")            # in the wheel and site-packages
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.MULTILINE)
# build outputs and caches that a copy of the tree must leave behind (when it is no git
# checkout; in one, git's own list of tracked and not ignored files is copied)
LEFT_BEHIND = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                     "__pycache__", ".*_cache", ".hypothesis", "bench-data")


def cuda_files(directory: Path) -> tuple[set[str], list[str]]:
    """The CUDA sources (``*.cu``, ``*.cuh``) of ``directory`` and every file they
    ``#include "..."``, transitively, as paths relative to ``directory``; and the
    includes that are not there (``"source: name"``)."""
    pending = sorted(p for pattern in ("*.cu", "*.cuh") for p in directory.glob(pattern))
    found: set[str] = set()
    missing: list[str] = []
    while pending:
        source = pending.pop()
        name = source.resolve().relative_to(directory.resolve()).as_posix()
        if name in found:
            continue
        found.add(name)
        for included in INCLUDE.findall(source.read_text()):
            path = source.parent / included
            if path.is_file():
                pending.append(path)
            else:
                missing.append(f"{name}: {included}")
    return found, missing


def clean_copy(dest: Path) -> Path:
    """The source tree without build outputs: setuptools would put a stale ``build/lib``
    or ``*.egg-info/SOURCES.txt`` of an earlier build into the archives."""
    git = shutil.which("git")
    if git and (ROOT / ".git").exists():
        listed = subprocess.run([git, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], cwd=ROOT, check=True,
                                capture_output=True).stdout.decode()
        for name in filter(None, listed.split("\0")):
            source = ROOT / name
            if source.is_file():                     # tracked files may be deleted
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name)
    else:
        shutil.copytree(ROOT, dest, ignore=LEFT_BEHIND, dirs_exist_ok=True)
    return dest


def backend_here() -> bool:
    """Whether this environment has the build backend pyproject.toml asks for, so the
    archives build without an isolated environment (no download: offline too)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("setuptools").split(".")[0]) >= 77
    except (PackageNotFoundError, ValueError):
        return False


def build(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"


def test_source_tree_includes_exist():
    found, missing = cuda_files(ROOT / KERNELS)
    assert {"search.cu", "traceback.cu", "tiles.cu", "cells.cuh"} <= found
    assert missing == []


def test_wheel_and_sdist_hold_every_kernel_file(tmp_path):
    needed, _ = cuda_files(ROOT / KERNELS)
    tree = clean_copy(tmp_path / "tree")
    out = tmp_path / "dist"
    here = backend_here()
    build([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), "."]
          + ["--no-build-isolation"] * here, tree)
    build([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), "."]
          + ["--no-isolation"] * here, tree)
    (wheel,), (sdist,) = out.glob("swath-*.whl"), out.glob("swath-*.tar.gz")

    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    assert {(PACKAGED / name).as_posix() for name in needed} - in_wheel == set()

    with tarfile.open(sdist) as archive:             # swath-0.1.0/src/swath/...
        in_sdist = {name.partition("/")[2] for name in archive.getnames()}
    assert {(KERNELS / name).as_posix() for name in needed} - in_sdist == set()


def test_installed_cuda_sources_find_their_includes():
    kernels = Path(swath.__file__).resolve().parent / "kernels" / "gpu"
    found, missing = cuda_files(kernels)
    assert {"search.cu", "traceback.cu", "tiles.cu", "cells.cuh"} <= found, kernels
    assert missing == [], f"in {kernels}"


@pytest.mark.skipif(not os.environ.get("SWATH_TEST_INSTALLED"),
                    reason="SWATH_TEST_INSTALLED is not set (.ci/run sets it)")
def test_tests_run_against_the_installed_package():
    package = Path(swath.__file__).resolve()
    assert not package.is_relative_to((ROOT / "src").resolve()), (
        f"swath was imported from the source tree ({package}), not from the installed "
        "wheel: install with `pip install .` (not -e) and run pytest from the repository root")
