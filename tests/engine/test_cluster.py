"""Where jobs run: in this process without a cluster, or on local and given clusters."""

from __future__ import annotations

import os
import subprocess
import sys

import dask
import pytest

from swath.engine import cluster
from swath.engine.cluster import Cluster, InProcess, OnCluster, connect, runner, session
from swath.errors import InvalidParameter


@pytest.mark.parametrize("tile_tasks", [False, True])
def test_one_machine_runs_in_this_process(tile_tasks, monkeypatch):
    """No GPU or one GPU, no --workers: no cluster is started. A long pair's tiles are
    single-threaded kernels on the CPU (a thread a core) and whole-GPU launches (one
    thread); search units run multi-threaded CPU kernels (one thread) or overlap host
    work with GPU kernels (two threads)."""
    with session(device="cpu", tile_tasks=tile_tasks) as (where, own):
        assert not own and isinstance(where, InProcess)
        assert where.threads == ((os.cpu_count() or 1) if tile_tasks else 1)
    monkeypatch.setattr("swath.kernels.gpu_count", lambda: 1)
    where, own = connect(device="auto", tile_tasks=tile_tasks)
    assert not own and isinstance(where, InProcess)
    assert where.threads == (1 if tile_tasks else 2)


def test_several_workers_start_a_local_cluster():
    with session(device="cpu", workers=2, processes=False, tile_tasks=True) as (where, own):
        assert own and isinstance(where, OnCluster) and where.workers == 2
        threads = [w["nthreads"] for w in where.client.scheduler_info()["workers"].values()]
    assert threads == [max(1, (os.cpu_count() or 1) // 2)] * 2


@pytest.mark.parametrize("device", ["auto", "gpu"])
def test_more_gpu_workers_than_gpus_are_refused(device, monkeypatch):
    """A GPU cluster runs a worker per GPU: ``--workers 2`` on one GPU is one line naming
    the way to CPU workers, before any cluster starts (dask-cuda's own error is a
    traceback)."""
    monkeypatch.setattr("swath.kernels.gpu_count", lambda: 1)
    with pytest.raises(InvalidParameter, match=r"--workers 2: 1 GPU is visible.*--device cpu"):
        connect(workers=2, device=device)


def test_a_cluster_is_started_by_the_jobs_session_and_named():
    """A ``Cluster`` starts nothing itself: the session of the job that gets it does, with
    the job's threads, tells ``started`` where it runs, and closes it after the job."""
    told: list[str] = []
    with session(Cluster(workers=2, started=told.append), device="cpu", processes=False,
                 tile_tasks=True) as (where, own):
        assert own and isinstance(where, OnCluster) and where.workers == 2
        assert told == [where.description] and "dashboard" in told[0]
    with session(Cluster(started=told.append), device="cpu") as (where, own):
        assert not own and isinstance(where, InProcess)
    assert len(told) == 1       # nothing started: nothing named


def _double(x: int) -> int:
    return 2 * x


@pytest.mark.parametrize("kind", ["in process", "on a cluster"])
def test_runners_report_each_result_and_raise_task_errors(kind, request):
    """Both runners call back once per task with its result, and re-raise a task's
    error, with copies of stragglers allowed or not; ``call`` polls while a long call
    runs; a value shared is one that tasks take."""

    def check(where):
        for copy in (None, lambda i: dask.delayed(_double)(i)):     # copies or none
            got: list[int] = []
            where.each([dask.delayed(_double)(x) for x in range(5)], got.append, copy=copy)
            assert sorted(got) == [0, 2, 4, 6, 8]
            with pytest.raises(ZeroDivisionError):
                where.each([dask.delayed(lambda: 1 // 0)(), dask.delayed(_double)(3)],
                           got.append, copy=copy)
        polls: list[int] = []
        slow = cluster.POLL * 2.5
        assert where.call(lambda: __import__("time").sleep(slow) or 7,
                          poll=lambda: polls.append(1)) == 7
        assert len(polls) >= 2
        assert where.call(_double, 4) == 8
        shared = where.share(b"piece")            # a value tasks take by reference
        got.clear()
        where.each([dask.delayed(len)(shared)], got.append)
        assert got == [5]

    if kind == "in process":
        check(InProcess(2, "CPU"))
        return
    where = runner(request.getfixturevalue("client"))
    assert isinstance(where, OnCluster) and runner(where) is where
    check(where)


def test_a_local_cluster_that_fails_to_start_is_started_again_then_refused_in_a_line(
        monkeypatch, caplog):
    """A worker killed as the local cluster starts (Dask's "Nanny failed to start"): the
    cluster is started once more; failing twice, one line says to run the command again."""
    import distributed

    from swath.errors import ClusterNotStarted

    tries = []
    real = distributed.LocalCluster

    def flaky(**options):
        tries.append(options["n_workers"])
        if len(tries) == 1:
            raise RuntimeError("Nanny failed to start.\nmore lines of a traceback")
        return real(**options | {"processes": False})

    monkeypatch.setattr(distributed, "LocalCluster", flaky)
    found, own = connect(workers=2, device="cpu", processes=False)
    assert own and isinstance(found, OnCluster) and tries == [2, 2]
    started = found.client.cluster
    found.client.close()
    started.close()
    assert "did not start (Nanny failed to start.): starting it again" in caplog.text

    def broken(**options):
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", broken)
    with pytest.raises(ClusterNotStarted, match=r"^the local Dask cluster did not start, twice "
                                                r"\(Nanny failed to start.\); nothing ran"):
        connect(workers=2, device="cpu", processes=False)


def test_a_script_that_starts_workers_unguarded_is_told_to_guard(tmp_path):
    """Worker processes are spawned and import the main script again: a script whose top
    level starts a local cluster outside ``if __name__ == "__main__":`` gets one line
    saying so, before any process starts (not multiprocessing's bootstrapping essay in
    each worker, then "Nanny failed to start"); the same call under the guard, or in a
    function the guard calls, is left alone."""
    fasta = tmp_path / "seqs.fasta"
    fasta.write_text(">a\nACGTACGTAC\n>b\nACGTACGTTC\n")
    job = (f"swath.allpairs({str(fasta)!r}, scoring=swath.Scoring.dna(), "
           "device='cpu', client=swath.Cluster(workers=2))")
    script = tmp_path / "unguarded.py"
    script.write_text(f"import swath\n\n{job}\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "swath.errors.UnguardedMain: unguarded.py line 3: swath starts a cluster of 2 "
        "worker processes here, and each imports unguarded.py again: put the code that "
        "starts the job under 'if __name__ == \"__main__\":'"), done.stderr
    assert "bootstrapping" not in done.stderr and "Nanny" not in done.stderr

    # the check alone, not a cluster: silent under the guard, in either spelling
    check = "swath.engine.cluster._refuse_unguarded_main('a cluster')"
    script.write_text("import swath.engine.cluster\n\n"
                      f"def main():\n    {check}\n\n"
                      f"if __name__ == '__main__':\n    main()\n"
                      f"if '__main__' == __name__:\n    {check}\n    print('guarded')\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "guarded\n"), done.stderr
