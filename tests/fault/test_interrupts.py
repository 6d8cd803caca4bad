"""Faults a job meets, injected: kills at random instants and at every instant of a
store's creation, kills of a resume, a full disk, damaged chunks, a database rebuilt
under a resume, and writers racing for one lock. After each, the store either refuses
in one line or resumes to the very result of an uninterrupted run.

The loops are CI-sized; ``SWATH_FAULT_FULL=1 pytest tests/fault`` runs the fuller ones
(20 kills, a kill at every instant of creation). Killed
Dask workers are tested in ``tests/engine`` (a lost task's unit runs again)."""

from __future__ import annotations

import functools
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import swath
from swath.cli import main
from swath.errors import StoreLocked
from swath.results.pairs import COLUMNS
from swath.storage.locking import acquire_lock, release_lock
from tests.helpers import write_fasta

SWATH = [sys.executable, "-m", "swath"]
FULL = os.environ.get("SWATH_FAULT_FULL") == "1"
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _fasta(path: Path, prefix: str, count: int, length: int, seed: int) -> Path:
    rng = random.Random(seed)
    return write_fasta(path, [(f"{prefix}{i}", "".join(rng.choices(AMINO, k=length)))
                              for i in range(count)])


@dataclass(frozen=True)
class Ran:
    """How a command ended: as ``subprocess.CompletedProcess`` says it."""

    returncode: int
    stdout: str
    stderr: str


def _swath(*argv: str, cwd: Path | None = None) -> Ran:
    """A swath command run in this process (its kernels stay loaded from one to the
    next); only the commands a test kills run as processes of their own."""
    here = os.getcwd()
    os.chdir(cwd or here)
    try:
        result = CliRunner().invoke(main, list(argv))
    finally:
        os.chdir(here)
    return Ran(result.exit_code, result.stdout, result.stderr)


def _inspect(store: Path) -> str:
    result = CliRunner().invoke(main, ["inspect", str(store)])
    assert result.exit_code == 0, result.output
    return result.stdout


class Job:
    """A search (48 queries, a unit each, against 1,500 proteins) and its uninterrupted
    result."""

    units = 48

    def __init__(self, root: Path) -> None:
        self.root = root
        self.queries = _fasta(root / "q.fa", "q", self.units, 120, 1)
        _fasta(root / "db.fa", "t", 1500, 150, 2)
        done = _swath("makedb", str(root / "db.fa"), str(root / "db.swdb"))
        assert done.returncode == 0, done.stderr
        reference = self.run(root / "reference.zarr")
        assert reference.returncode == 0, reference.stderr
        self.expected = _inspect(root / "reference.zarr")

    def argv(self, store: Path) -> list[str]:
        return ["search", str(self.queries), str(self.root / "db.swdb"), "-o", str(store),
                "--query-block", "1", "--no-progress"]

    def run(self, store: Path) -> Ran:
        return _swath(*self.argv(store))

    def finish(self, store: Path) -> None:
        """Resume the store (or run the command again where none was created)."""
        done = (_swath("resume", str(store), "--no-progress") if store.exists()
                else self.run(store))
        assert done.returncode == 0, done.stderr
        assert _inspect(store) == self.expected
        assert _swath("verify", str(store)).returncode == 0
        assert sorted(os.listdir(store.parent)) == [store.name]   # nothing left beside it


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    return Job(tmp_path_factory.mktemp("job"))


def _kill_after(argv: list[str], seconds: float,
                once: Callable[[], bool] | None = None) -> int:
    """Run ``swath argv`` and kill it ``seconds`` after its start, or after ``once()``
    holds (the work got so far: the kill lands in the work, not in the start-up, on any
    machine); its exit status (negative: killed)."""
    process = subprocess.Popen([*SWATH, *argv], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    while once is not None and not once() and process.poll() is None:
        time.sleep(0.002)
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
    return process.wait()


def _marks(store: Path) -> int:
    """How many units of a search store are marked done (its mark chunks written)."""
    marks = store / "work" / "done" / "c"
    return len(os.listdir(marks)) if marks.exists() else 0


def _reached(store: Path, units: int) -> bool:
    return _marks(store) >= units


def _kill_loop(job: Job, tmp_path: Path, trials: int, seed: int) -> int:
    """Kill the job (and, every other trial, its resume too) once a random number of its
    units are done; each finishes to the uninterrupted result. How many runs were
    killed."""
    rng = random.Random(seed)
    killed = 0
    for trial in range(trials):
        store = tmp_path / f"trial{trial}" / "r.zarr"
        store.parent.mkdir()
        at = rng.randint(1, job.units // 2)
        killed += _kill_after(job.argv(store), rng.uniform(0, 0.01),
                              once=functools.partial(_reached, store, at)) < 0
        if trial % 2 and store.exists():
            more = _marks(store) + rng.randint(1, job.units // 4)
            killed += _kill_after(["resume", str(store)], rng.uniform(0, 0.01),
                                  once=functools.partial(_reached, store, more)) < 0
        job.finish(store)
    return killed


@pytest.mark.slow
def test_killed_jobs_and_resumes_finish_identically(job: Job, tmp_path: Path) -> None:
    trials = 20 if FULL else 2
    assert _kill_loop(job, tmp_path, trials=trials, seed=7) >= trials // 2


KILL_AT = """
import os, signal, sys
import zarr
from swath.cli import main

target, count = int(os.environ["SWATH_KILL_AT"]), [0]


def hit():
    count[0] += 1
    if count[0] == target:
        os.kill(os.getpid(), signal.SIGKILL)


create_array, rename = zarr.Group.create_array, os.rename
zarr.Group.create_array = lambda self, *a, **k: hit() or create_array(self, *a, **k)
os.rename = lambda *a, **k: hit() or rename(*a, **k)
main(sys.argv[1:], prog_name="swath")
"""


def _kill_in_creation(job: Job | InputsJob, tmp_path: Path, points: list[int]) -> None:
    """Kill the job at the given instants of its store's creation (the n-th array
    created, the last one the rename into place); each re-run finishes identically."""
    script = tmp_path / "kill_at.py"
    script.write_text(KILL_AT)
    for point in points:
        store = tmp_path / f"at{point}" / "r.zarr"
        store.parent.mkdir()
        env = {**os.environ, "SWATH_KILL_AT": str(point)}
        killed = subprocess.run([sys.executable, str(script), *job.argv(store)], env=env,
                                capture_output=True, timeout=600)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert not store.exists()           # nothing half made at the path
        job.finish(store)


# a search store: 15 hit arrays, 3 of its queries, the done marks, then the rename
CREATION_POINTS = 20


@pytest.mark.slow
def test_kills_during_creation_leave_no_stuck_store(job: Job, tmp_path: Path) -> None:
    every = list(range(1, CREATION_POINTS + 1))
    _kill_in_creation(job, tmp_path, every if FULL else [9, CREATION_POINTS])


class InputsJob:
    """A job whose inputs are files taken in piece by piece, and its uninterrupted
    result (``columns`` of its store)."""

    root: Path
    expected: object

    def argv(self, store: Path) -> list[str]:
        raise NotImplementedError

    @staticmethod
    def columns(store: Path) -> object:
        raise NotImplementedError

    def run(self, store: Path) -> Ran:
        return _swath(*self.argv(store))

    def finish(self, store: Path) -> None:
        """Resume the store (or run the command again where none was created)."""
        done = (_swath("resume", str(store), "--device", "cpu", "--no-progress")
                if store.exists() else self.run(store))
        assert done.returncode == 0, done.stderr
        assert self.columns(store) == self.expected
        assert _swath("verify", str(store)).returncode == 0
        assert sorted(os.listdir(store.parent)) == [store.name]   # nothing left beside it


class PairsJob(InputsJob):
    """A batched-pairs job (120 pairs by name of 100 DNA records, in 10 chunks)."""

    def __init__(self, root: Path) -> None:
        rng = random.Random(3)
        self.root = root
        seqs = ["".join(rng.choices("ACGT", k=rng.randint(100, 300))) for _ in range(100)]
        write_fasta(root / "q.fa", [(f"q{i}", s) for i, s in enumerate(seqs)])
        write_fasta(root / "t.fa", [(f"t{i}", s[::-1]) for i, s in enumerate(seqs)])
        (root / "pairs.tsv").write_text("".join(
            f"q{rng.randrange(100)}\tt{rng.randrange(100)}\n" for _ in range(120)))
        reference = self.run(root / "reference.zarr")
        assert reference.returncode == 0, reference.stderr
        self.expected = self.columns(root / "reference.zarr")

    def argv(self, store: Path) -> list[str]:
        return ["pairs", str(self.root / "q.fa"), str(self.root / "t.fa"), "--pairs",
                str(self.root / "pairs.tsv"), "-o", str(store), "--dna", "--chunk", "12",
                "--device", "cpu", "--no-progress"]

    @staticmethod
    def columns(store: Path) -> dict[str, list[object]]:
        result = swath.open(str(store))
        assert isinstance(result, swath.PairsResult)
        return {name: result.column(name).tolist() for name in COLUMNS}


class AllPairsJob(InputsJob):
    """An all-pairs job of 100 DNA records (10 families of mutated copies), with clusters,
    in blocks of 20."""

    def __init__(self, root: Path) -> None:
        rng = random.Random(4)
        self.root = root
        ancestors = ["".join(rng.choices("ACGT", k=rng.randint(100, 300))) for _ in range(10)]
        seqs = ["".join(c if rng.random() > 0.02 else rng.choice("ACGT") for c in a)
                for a in (rng.choice(ancestors) for _ in range(100))]
        write_fasta(root / "s.fa", [(f"s{i}", s) for i, s in enumerate(seqs)])
        reference = self.run(root / "reference.zarr")
        assert reference.returncode == 0, reference.stderr
        self.expected = self.columns(root / "reference.zarr")

    def argv(self, store: Path) -> list[str]:
        return ["allpairs", str(self.root / "s.fa"), "-o", str(store), "--dna",
                "--min-identity", "0.95", "--block", "20", "--clusters", "--device", "cpu",
                "--no-progress"]

    @staticmethod
    def columns(store: Path) -> tuple[object, ...]:
        result = swath.open(str(store))
        assert isinstance(result, swath.AllPairsResult)
        return result.to_table(), result.clusters().tolist()


@pytest.fixture(scope="module")
def pairs_job(tmp_path_factory: pytest.TempPathFactory) -> PairsJob:
    return PairsJob(tmp_path_factory.mktemp("pairs"))


@pytest.mark.slow
def test_a_killed_pairs_job_resumes_identically(pairs_job: PairsJob, tmp_path: Path) -> None:
    """A kill once a random number of the 10 chunks are marked done: the store is
    unfinished, and resumes to the uninterrupted columns."""
    rng = random.Random(11)
    store = tmp_path / "r.zarr"
    marks, done = store / "work" / "done" / "c", rng.randint(1, 8)
    killed = _kill_after(pairs_job.argv(store), rng.uniform(0, 0.05),
                         once=lambda: marks.exists() and len(os.listdir(marks)) >= done)
    assert killed == -signal.SIGKILL
    with pytest.raises(swath.StoreIncomplete):
        swath.open(str(store))
    pairs_job.finish(store)


@pytest.mark.slow
def test_kills_during_pairs_creation_leave_no_stuck_store(pairs_job: PairsJob,
                                                          tmp_path: Path) -> None:
    """While the store is made, and at the rename into place (a pairs store by name: the
    bounds and piece marks of each input, the names and lines of the pairs asked for,
    then the rename)."""
    _kill_in_creation(pairs_job, tmp_path, [2, 8])


# in pieces of 2,000 bytes: the inputs of the pairs job are 11 pieces a side
KILL_IN_PIECES = KILL_AT.replace('main(sys.argv[1:], prog_name="swath")', """
import swath.engine.intake as engine
engine.PIECE_BYTES = 2000
main(sys.argv[1:], prog_name="swath")""")


@pytest.fixture(scope="module")
def allpairs_job(tmp_path_factory: pytest.TempPathFactory) -> AllPairsJob:
    return AllPairsJob(tmp_path_factory.mktemp("allpairs"))


def _kill_in_pieces(job: InputsJob, tmp_path: Path, points: tuple[int, ...]) -> None:
    """Kill the job at the given arrays of its store (pieces of 2,000 bytes): the store
    is there, unfinished, and its resume finishes it as the uninterrupted job."""
    script = tmp_path / "kill_in_pieces.py"
    script.write_text(KILL_IN_PIECES)
    for point in points:
        store = tmp_path / f"at{point}" / "r.zarr"
        store.parent.mkdir()
        killed = subprocess.run([sys.executable, str(script), *job.argv(store)],
                                env={**os.environ, "SWATH_KILL_AT": str(point)},
                                capture_output=True, timeout=600)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        with pytest.raises(swath.StoreIncomplete):
            swath.open(str(store))
        job.finish(store)


@pytest.mark.slow
def test_kills_while_pairs_inputs_are_taken_in_resume_identically(pairs_job: PairsJob,
                                                                   tmp_path: Path) -> None:
    """Kills while pieces are taken in on threads side by side (each piece makes 3 arrays
    after the store's 7 and its rename) and while they are indexed (the 76th array)."""
    _kill_in_pieces(pairs_job, tmp_path, (9 + 7, 9 + 50, 76))


@pytest.mark.slow
def test_kills_while_allpairs_inputs_are_taken_in_resume_identically(
        allpairs_job: AllPairsJob, tmp_path: Path) -> None:
    """Kills while the 11 pieces are taken in (each makes 4 arrays after the store's 2
    and its rename), while they are indexed (the 48th array on: the records, the names,
    the lengths, the order, the blocks' runs, the tiles' marks and counters) and once
    the tiles write."""
    _kill_in_pieces(allpairs_job, tmp_path, (3 + 30, 47 + 2, 47 + 9))


@pytest.mark.slow
def test_damaged_chunks_are_refused_then_recomputed(job: Job, tmp_path: Path) -> None:
    store = tmp_path / "r.zarr"
    assert job.run(store).returncode == 0
    (store / "score" / "c" / "5" / "0").unlink()               # unit 5: deleted
    (store / "cigar" / "c" / "9" / "0").write_bytes(b"\x28\xb5\x2f\xfd broken")  # unit 9
    for command in ("inspect", "verify"):
        refused = _swath(command, str(store))
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"swath: error: {store}: damaged: 2 units (5, 9); `swath resume {store}` "
            "recomputes what it can"]
    job.finish(store)


def test_a_rebuilt_database_is_refused_on_resume(job: Job, tmp_path: Path) -> None:
    from swath.storage.results import SearchStore

    db = tmp_path / "db.swdb"
    assert _swath("makedb", str(job.root / "db.fa"), str(db)).returncode == 0
    store = tmp_path / "r.zarr"
    argv = [a if a != str(job.root / "db.swdb") else str(db) for a in job.argv(store)]
    assert _swath(*argv).returncode == 0
    SearchStore.open(store, mode="r+").repair({"unit": [3, 4]})   # as if interrupted
    other = _fasta(tmp_path / "other.fa", "o", 1500, 150, 3)
    assert _swath("makedb", str(other), str(db), "--overwrite").returncode == 0
    for refused in (_swath("resume", str(store)), _swath(*argv)):
        assert refused.returncode == 2
        assert len(refused.stderr.strip().splitlines()) == 1
    assert "has changed since the search started" in _swath("resume", str(store)).stderr
    assert "holds another search" in _swath(*argv).stderr


@pytest.mark.slow
def test_resume_from_another_directory(job: Job, tmp_path: Path) -> None:
    from swath.storage.results import SearchStore

    (tmp_path / "work").mkdir()
    shutil_copy = subprocess.run(["cp", "-r", str(job.root / "db.swdb"), str(tmp_path / "work")])
    assert shutil_copy.returncode == 0
    argv = ["search", str(job.queries), "db.swdb", "-o", "r.zarr", "--query-block", "1"]
    assert _swath(*argv, cwd=tmp_path / "work").returncode == 0
    store = tmp_path / "work" / "r.zarr"
    SearchStore.open(store, mode="r+").repair({"unit": [0, 47]})
    assert _swath("resume", "work/r.zarr", cwd=tmp_path).returncode == 0
    assert _inspect(store) == job.expected


def _mount_tmpfs(path: Path, size: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("a full disk is simulated on a small tmpfs, which needs root")
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                              str(path)], capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")


def _fill(disk: Path, left: int) -> Path:
    """A file filling ``disk`` but ``left`` bytes."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (free - left))
    return filler


@pytest.mark.slow
def test_a_full_disk_refuses_in_one_line_and_resumes(job: Job, tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    _mount_tmpfs(disk, "16m")
    try:
        outcomes = set()
        for left in (64 << 10, 1 << 20):      # creation fails, or a unit does
            filler = _fill(disk, left)
            store = disk / "r.zarr"
            full = job.run(store)
            assert full.returncode == 2, full.stderr
            lines = full.stderr.strip().splitlines()
            assert len(lines) == 1 and "No space left on device" in lines[0]
            outcomes.add(store.exists())
            filler.unlink()
            job.finish(store)
            subprocess.run(["rm", "-rf", str(store)], check=True)
        assert outcomes == {False, True}       # both: during creation and mid-job
    finally:
        subprocess.run(["umount", str(disk)], check=False)


@pytest.mark.slow
def test_a_full_disk_on_a_local_cluster_is_one_line(job: Job, tmp_path: Path) -> None:
    """Units failing on a local cluster's workers (``--workers 2`` on the CPU, on any host;
    on a host of several GPUs, the default) are the command's one line: neither the
    cluster's notice (quiet without progress) nor each worker's log of its failed tasks
    joins it."""
    disk = tmp_path / "disk"
    _mount_tmpfs(disk, "16m")
    try:
        _fill(disk, 1 << 20)
        full = _swath(*job.argv(disk / "r.zarr"), "--workers", "2", "--device", "cpu")
        assert full.returncode == 2, full.stderr
        lines = full.stderr.strip().splitlines()
        assert len(lines) == 1 and "No space left on device" in lines[0], lines
        assert (disk / "r.zarr").exists()                 # it failed mid-job
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_read_only_disk_refuses_in_one_line(job: Job, tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    _mount_tmpfs(disk, "1m")
    try:
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        refused = job.run(disk / "r.zarr")
        assert refused.returncode == 2
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "Read-only file system" in lines[0], lines
        assert os.listdir(disk) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def _contend(path: str, trials: int, start: object, done: object, wins: object) -> None:
    store, held = f"{path}/r.zarr", False
    for trial in range(trials):
        start.wait()                                     # type: ignore[attr-defined]
        if held:             # the last holder lets go while the others already take
            release_lock(store)
        try:
            acquire_lock(store)
            held = True
        except StoreLocked:
            held = False
        wins.put((trial, held))                          # type: ignore[attr-defined]
        done.wait()                                      # type: ignore[attr-defined]
    if held:
        release_lock(store)


@pytest.mark.parametrize("contenders", [2, 3, 4])
def test_exactly_one_writer_holds_the_lock(tmp_path: Path, contenders: int) -> None:
    """200 trials: all contenders take the lock of one store at once; the holder keeps
    it until every one has tried, and releases it (removing its file) only as the next
    trial's takers already try: exactly one holds it each time."""
    trials = 200
    context = multiprocessing.get_context("fork")
    start, done = context.Barrier(contenders), context.Barrier(contenders)
    wins = context.Queue()
    workers = [context.Process(target=_contend, args=(str(tmp_path), trials, start, done,
                                                      wins)) for _ in range(contenders)]
    for worker in workers:
        worker.start()
    results = [wins.get(timeout=60) for _ in range(trials * contenders)]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    holders = np.zeros(trials, dtype=int)
    for trial, held in results:
        holders[trial] += held
    assert holders.tolist() == [1] * trials
