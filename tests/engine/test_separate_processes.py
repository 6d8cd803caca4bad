"""Jobs on a Dask cluster of processes of their own, the closest this machine comes to
several hosts: a ``dask scheduler`` and two ``dask worker`` processes on loopback, which
share no memory with the client and reach the stores on a moto S3 server through
fsspec's environment variables alone (``FSSPEC_S3_ENDPOINT_URL``, ...). Every workload
runs there with a worker killed (SIGKILL, its nanny with it) while the job's work units
run, and finishes; and runs there stopped by its client, then resumes. Each result
equals the same job's run in this process into a local store, column by column."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import swath
from swath.results.pairs import COLUMNS
from tests.helpers import DNA, PROTEIN, descendants, write_fasta

pytestmark = pytest.mark.slow

WORKERS = 2
START_TIMEOUT = 60      # seconds for the scheduler and a worker to come up
# a lock a killed worker held (an all-pairs tile's first writer: engine.stragglers) passes
# on in seconds, not Dask's default 30 (its leases are refreshed every fifth of this)
LOCK_LEASES = {"DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "5s",
               "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL": "1s"}


@dataclass
class Processes:
    """A scheduler and its workers started as ``dask`` commands, each a process group of
    its own (a worker's: its nanny and the worker process it starts), their files and
    output in ``folder``; ``client`` connected to them."""

    folder: Path
    env: dict[str, str]
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)
    client: Any = None

    @property
    def scheduler_file(self) -> Path:
        return self.folder / "scheduler.json"

    def start(self, command: str, *argv: str) -> None:
        with open(self.folder / f"{command}-{len(self.started)}.log", "w") as log:
            self.started.append(subprocess.Popen(
                [sys.executable, "-m", f"distributed.cli.{command}", "--scheduler-file",
                 str(self.scheduler_file), "--host", "127.0.0.1", "--no-dashboard", *argv],
                env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    def start_worker(self) -> None:
        self.start("dask_worker", "--nworkers", "1", "--nthreads", "2",
                   "--local-directory", str(self.folder))

    def connect(self) -> None:
        from distributed import Client

        deadline = time.monotonic() + START_TIMEOUT
        while not self.scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.client = Client(scheduler_file=str(self.scheduler_file), set_as_default=False)

    def kill_busy_worker(self) -> None:
        """SIGKILL a worker that runs tasks or holds results the client has not taken yet
        (their tasks run again elsewhere: the units still to come may all have finished
        before the client hears of the first), within ``START_TIMEOUT``, and its nanny;
        start another in its place (as a cluster's manager would replace a lost host)."""
        deadline = time.monotonic() + START_TIMEOUT
        while not (busy := self.busy()):
            assert time.monotonic() < deadline, "no worker has a task to lose"
            time.sleep(0.01)
        pid = self.client.run(os.getpid, workers=busy[:1])[busy[0]]
        os.killpg(os.getpgid(pid), signal.SIGKILL)
        self.start_worker()

    def busy(self) -> list[str]:
        """The workers running tasks or holding their results."""
        running, holding = self.client.processing(), self.client.has_what()
        return [address for address in running if running[address] or holding.get(address)]

    def stop(self) -> None:
        if self.client is not None:
            self.client.close()
        running = [process for process in self.started if process.poll() is None]
        for process in running:
            os.killpg(process.pid, signal.SIGTERM)
        for process in running:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="module")
def processes(s3_server: dict[str, str], tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[Processes]:
    """The cluster: its processes reach ``s3_server`` by fsspec's environment variables
    alone (they share no configuration with this process)."""
    s3 = {f"FSSPEC_S3_{name.upper()}": value for name, value in s3_server.items()}
    cluster = Processes(tmp_path_factory.mktemp("cluster"), {**os.environ, **s3, **LOCK_LEASES})
    try:
        cluster.start("dask_scheduler", "--port", "0")
        for _ in range(WORKERS):
            cluster.start_worker()
        cluster.connect()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def cluster(processes: Processes) -> Processes:
    """The cluster once ``WORKERS`` workers are up (a killed one's replacement too)."""
    processes.client.wait_for_workers(WORKERS, timeout=START_TIMEOUT)
    return processes


class Stopped(Exception):
    """The client stopped its job (as Ctrl-C would)."""


def stop() -> None:
    raise Stopped


@dataclass
class AtFirstUnit:
    """A progress callback that calls ``act()`` once the job's ``phase`` has done work
    since this run started (what it reports first) and not all of it: among running work
    units, after the job's start."""

    phase: str
    act: Callable[[], None]
    started: int | None = None
    acted: bool = False

    def __call__(self, phase: str, done: int, total: int | None, work: int) -> None:
        if phase != self.phase or self.acted:
            return
        if self.started is None:
            self.started = done
        elif self.started < done < (total or 0):
            self.acted = True
            self.act()


# a job run: ``run(store, client, progress)``
Run = Callable[[str, Any, Any], Any]


@dataclass(frozen=True)
class Workload:
    """A job of one workload: ``run(store, client, progress)`` runs it; ``phase`` the
    progress phase of its work units; ``columns(result)`` what is compared."""

    run: Run
    phase: str
    columns: Callable[[Any], Any]


def _search(root: Path, bucket: str) -> Workload:
    """8 queries, a unit of 2 each, against a database of 40 proteins made on S3 from
    a FASTA file, in partitions of about 1,000 residues."""
    seqs = descendants(8, PROTEIN.alphabet.letters[:20], 40, 100)
    fasta = write_fasta(root / "db.fasta", [(f"t{i}", s) for i, s in enumerate(seqs)])
    database = f"{bucket}/{root.name}/db.swdb"
    swath.makedb(fasta, database, partition_residues=1000)
    queries = seqs[::5]

    def run(store: str, client: Any, progress: Any) -> Any:
        return swath.search(queries, database if client else str(fasta), top_k=3,
                            device="cpu", store=store, client=client, query_block=2,
                            progress=progress)

    return Workload(run, "search", lambda result: result.to_table())


def _allpairs(root: Path, bucket: str) -> Workload:
    """30 DNA sequences in blocks of 8: 10 tiles, then clusters and gathers."""
    seqs = descendants(5, "ACGT", 30, 80)

    def run(store: str, client: Any, progress: Any) -> Any:
        return swath.allpairs(seqs, scoring=DNA, min_identity=0.8, device="cpu", block=8,
                              clusters=True, store=store, client=client, progress=progress)

    return Workload(run, "allpairs",
                    lambda result: (result.to_table(), result.clusters().tolist()))


def _pairs(root: Path, bucket: str) -> Workload:
    """40 pairs by position of two FASTA files, in chunks of 4."""
    rng = np.random.default_rng(3)
    seqs = ["".join(rng.choice(list("ACGT"), int(rng.integers(80, 200)))) for _ in range(40)]
    queries = write_fasta(root / "q.fasta", [(f"q{i}", s) for i, s in enumerate(seqs)])
    targets = write_fasta(root / "t.fasta", [(f"t{i}", s[10:] + s[:10])
                                             for i, s in enumerate(seqs)])

    def run(store: str, client: Any, progress: Any) -> Any:
        return swath.align_pairs(str(queries), str(targets), scoring=DNA, mode="local",
                                 device="cpu", chunk=4, store=store, client=client,
                                 progress=progress)

    return Workload(run, "pairs",
                    lambda result: {name: result.column(name).tolist() for name in COLUMNS})


def _longpair(root: Path, bucket: str) -> Workload:
    """A pair of 500 and 600 residues in tiles of 200: 9 tiles, then the traceback of its
    segments."""
    a, b = descendants(2, PROTEIN.alphabet.letters[:20], 2, 600)
    a = a[50:550]

    def run(store: str, client: Any, progress: Any) -> Any:
        return swath.align(a, b, scoring=PROTEIN, device="cpu", tile_size=200, store=store,
                           client=client, progress=progress)

    return Workload(run, "tiles", lambda result: result)


WORKLOADS = {"search": _search, "allpairs": _allpairs, "pairs": _pairs,
             "longpair": _longpair}


@pytest.mark.parametrize("name", WORKLOADS)
def test_a_job_stopped_then_resumed_with_a_worker_killed_equals_the_local_run(
        name: str, cluster: Processes, bucket: str, tmp_path: Path) -> None:
    """The client stops the job (as Ctrl-C would) after its first unit; the resume loses
    a worker after its own first unit, runs the lost worker's tasks again on the others
    and finishes by itself."""
    workload = WORKLOADS[name](tmp_path, bucket)
    local = workload.columns(workload.run(str(tmp_path / "local.zarr"), None, None))
    store = f"{bucket}/{tmp_path.name}/result.zarr"
    with pytest.raises(Stopped):
        workload.run(store, cluster.client, AtFirstUnit(workload.phase, stop))
    with pytest.raises(swath.StoreIncomplete):
        swath.open(store)
    kill = AtFirstUnit(workload.phase, cluster.kill_busy_worker)
    resumed = swath.resume(store, device="cpu", client=cluster.client, progress=kill)
    assert kill.acted
    assert workload.columns(resumed) == local
    assert swath.verify(store)
