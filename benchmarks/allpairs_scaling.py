"""All against all on one and on two GPUs of one host: the job on a running dask-cuda
cluster, and the whole command from a cold process.

For each GPU count G (``--gpus``, default 1 and 2): a ``LocalCUDACluster`` of G workers
(two task threads each, as ``swath allpairs`` starts on several GPUs), a first job that
loads the workers' kernels (reported apart; on ``--first``'s sequences where given),
then ``--repeats`` jobs, each ``swath.allpairs(FASTA, client=...)`` timed from the call
to its return; then the CLI command with G GPUs visible (``CUDA_VISIBLE_DEVICES``), which
runs in its own process on one GPU and starts a cluster on two (``--no-command``: the
jobs only; ``--commands``: the commands only). Every store must hold the same kept pairs.
Reported: median seconds, pairs per second, the scaling of G GPUs over one (time on one
/ (G x time on G); 1.0 is linear), each job's task phases (each kind of task's count,
compute seconds and span: where the time of the job goes), each worker's peak resident
memory and GPU pool (this process's peak apart), and each command's peak resident memory
(its largest process) and GPU memory in use.

    python benchmarks/allpairs_scaling.py A1_20000.fasta --out $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import swath
from swath.scoring import Scoring


def kept(path: str) -> np.ndarray:
    """The kept pairs of an all-pairs store (input indices, score; sorted by the store),
    the comparison key of two runs."""
    from swath.storage.allpairs import AllPairsStore

    pairs = AllPairsStore.open(path).pairs()
    return np.stack([pairs["query"], pairs["target"], pairs["score"]], axis=1)


def on_cluster(fasta: str, gpus: int, repeats: int, out: str, first_fasta: str
               ) -> dict[str, object]:
    from dask_cuda import LocalCUDACluster
    from distributed import Client, get_task_stream

    job = {"scoring": Scoring.dna(2, -3, 5, 2), "min_identity": 0.97, "device": "gpu"}
    visible = ",".join(str(g) for g in range(gpus))
    with LocalCUDACluster(n_workers=gpus, threads_per_worker=2, CUDA_VISIBLE_DEVICES=visible,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
        started = time.perf_counter()
        swath.allpairs(first_fasta, client=client, store=f"{out}/g{gpus}-first.zarr", **job)
        first = time.perf_counter() - started
        runs, phases = [], []
        for k in range(repeats):
            started = time.perf_counter()
            with get_task_stream(client=client) as stream:
                swath.allpairs(fasta, client=client, store=f"{out}/g{gpus}-{k}.zarr", **job)
            runs.append(time.perf_counter() - started)
            phases.append(task_phases(stream.data))
        memory = client.run(worker_memory)
    return {"first_job": first, "jobs": runs, "job": statistics.median(runs),
            "store": f"{out}/g{gpus}-0.zarr", "phases": phases, "worker_memory": memory,
            "client_peak_rss_gib": round(peak_rss() / 2**30, 2)}


def peak_rss() -> int:
    """This process's peak resident memory in bytes (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def worker_memory() -> dict[str, float]:
    """A worker's peak resident memory over its life (GiB), and the GPU memory CuPy's
    pool holds (GiB: the pool keeps what it has allocated, so this is its peak)."""
    import cupy

    return {"peak_rss_gib": round(peak_rss() / 2**30, 2),
            "gpu_pool_gib": round(cupy.get_default_memory_pool().total_bytes() / 2**30, 2)}


def task_phases(tasks: list[dict]) -> dict[str, dict[str, float]]:
    """Each kind of task of a job (its key's prefix: ``swath-read``, ``swath-gather``...):
    how many ran, their summed compute seconds, and when the first started and the last
    ended, in seconds from the job's first task."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for task in tasks:
        key = task["key"][0] if isinstance(task["key"], tuple) else task["key"]
        prefix = "-".join(str(key).split("-")[:2])
        for part in task["startstops"]:
            if part["action"] == "compute":
                spans.setdefault(prefix, []).append((part["start"], part["stop"]))
    origin = min(start for span in spans.values() for start, _ in span)
    return {prefix: {"tasks": len(span), "compute_s": round(sum(b - a for a, b in span), 2),
                     "from_s": round(min(a for a, _ in span) - origin, 2),
                     "to_s": round(max(b for _, b in span) - origin, 2)}
            for prefix, span in sorted(spans.items())}


def command(fasta: str, gpus: int, out: str) -> dict[str, object]:
    """The CLI command with ``gpus`` GPUs visible, from a cold process: its seconds, the
    peak resident memory of its largest process (the command, or a worker it started) and
    each GPU's peak memory in use (``nvidia-smi`` every 0.2 s)."""
    env = os.environ | {"CUDA_VISIBLE_DEVICES": ",".join(str(g) for g in range(gpus))}
    store = f"{out}/cli-g{gpus}.zarr"
    sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=index,memory.used",
                                "--format=csv,noheader,nounits", "-lms", "200"],
                               stdout=subprocess.PIPE, text=True)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "swath", "allpairs", fasta, "-o", store,
                                "--dna", "--min-identity", "0.97", "--device", "gpu",
                                "--no-progress"], env=env)
    _, status, usage = os.wait4(process.pid, 0)   # ru_maxrss: the child's or a descendant's
    seconds = time.perf_counter() - started
    sampler.terminate()
    if status:
        raise SystemExit(f"swath allpairs failed ({status})")
    used: dict[str, int] = {}
    for line in sampler.communicate()[0].splitlines():
        index, mib = (field.strip() for field in line.split(","))
        if int(index) < gpus:
            used[index] = max(used.get(index, 0), int(mib))
    return {"seconds": seconds, "store": store, "peak_rss_gib": round(usage.ru_maxrss / 2**20, 2),
            "gpu_peak_gib": {k: round(v / 2**10, 2) for k, v in used.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fasta")
    parser.add_argument("--gpus", default="1,2")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=".")
    parser.add_argument("--first", default=None,
                        help="the first (kernel-loading) job's FASTA; default: FASTA")
    parser.add_argument("--no-command", action="store_true", help="the jobs only")
    parser.add_argument("--commands", action="store_true", help="the whole commands only")
    args = parser.parse_args()
    with open(args.fasta) as fasta:
        n = sum(1 for line in fasta if line.startswith(">"))
    pairs = n * (n - 1) // 2
    report: dict[str, object] = {"sequences": n, "pairs": pairs}
    for gpus in (int(g) for g in args.gpus.split(",")):
        result: dict[str, object] = {}
        if not args.commands:
            result = on_cluster(args.fasta, gpus, args.repeats, args.out,
                                args.first or args.fasta)
            result["pairs_per_second"] = pairs / result["job"]
        if not args.no_command:
            result["command"] = command(args.fasta, gpus, args.out)
        report[f"{gpus} GPU"] = result
        print(gpus, "GPU:", json.dumps(result), flush=True)
    counts = sorted(k for k in report if k.endswith("GPU"))
    one = report[counts[0]]
    for key in counts[1:]:
        many, g = report[key], int(key.split()[0])
        runs = [("job", one, many)] if "job" in one else []
        if "command" in one:
            runs.append(("command", one["command"], many["command"]))
        for part, a, b in runs:
            seconds = "job" if part == "job" else "seconds"
            many[f"{part}_scaling"] = a[seconds] / (g * b[seconds])
            many[f"{part}_same_kept_pairs"] = bool(np.array_equal(kept(a["store"]),
                                                                  kept(b["store"])))
            print(key, part, "scaling", round(many[f"{part}_scaling"], 3), "same kept pairs",
                  many[f"{part}_same_kept_pairs"], flush=True)
    with open(f"{args.out}/allpairs_scaling.json", "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
