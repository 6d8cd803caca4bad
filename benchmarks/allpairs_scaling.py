"""All against all on one and on two GPUs of one host: the job on a running dask-cuda
cluster, and the whole command from a cold process (``--no-command``: the jobs only).

For each GPU count G (``--gpus``, default 1 and 2): a ``LocalCUDACluster`` of G workers
(two task threads each, as ``swath allpairs`` starts on several GPUs), a first job that
loads the workers' kernels (reported apart; on ``--first``'s sequences where given),
then ``--repeats`` jobs, each ``swath.allpairs(FASTA, client=...)`` timed from the call
to its return; then the CLI
command with G GPUs visible (``CUDA_VISIBLE_DEVICES``), which runs in its own process on
one GPU and starts a cluster on two. Every store must hold the same kept pairs.
Reported: median seconds, pairs per second, the scaling of G GPUs over one
(time on one / (G x time on G); 1.0 is linear), and each job's task phases (each kind of
task's count, compute seconds and span: where the time of the job goes).

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
    return {"first_job": first, "jobs": runs, "job": statistics.median(runs),
            "store": f"{out}/g{gpus}-0.zarr", "phases": phases}


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


def command(fasta: str, gpus: int, out: str) -> float:
    env = os.environ | {"CUDA_VISIBLE_DEVICES": ",".join(str(g) for g in range(gpus))}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "swath", "allpairs", fasta, "-o",
                    f"{out}/cli-g{gpus}.zarr", "--dna", "--min-identity", "0.97",
                    "--device", "gpu", "--no-progress"], check=True, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fasta")
    parser.add_argument("--gpus", default="1,2")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=".")
    parser.add_argument("--first", default=None,
                        help="the first (kernel-loading) job's FASTA; default: FASTA")
    parser.add_argument("--no-command", action="store_true", help="the jobs only")
    args = parser.parse_args()
    with open(args.fasta) as fasta:
        n = sum(1 for line in fasta if line.startswith(">"))
    pairs = n * (n - 1) // 2
    report: dict[str, object] = {"sequences": n, "pairs": pairs}
    for gpus in (int(g) for g in args.gpus.split(",")):
        result = on_cluster(args.fasta, gpus, args.repeats, args.out, args.first or args.fasta)
        if not args.no_command:
            result["command"] = command(args.fasta, gpus, args.out)
        result["pairs_per_second"] = pairs / result["job"]
        report[f"{gpus} GPU"] = result
        print(gpus, "GPU:", json.dumps(result), flush=True)
    counts = sorted(k for k in report if k.endswith("GPU"))
    one = report[counts[0]]
    for key in counts[1:]:
        many = report[key]
        g = int(key.split()[0])
        many["scaling"] = one["job"] / (g * many["job"])
        many["same_kept_pairs"] = bool(np.array_equal(kept(one["store"]), kept(many["store"])))
        print(key, "scaling", round(many["scaling"], 3), "same kept pairs",
              many["same_kept_pairs"], flush=True)
    with open(f"{args.out}/allpairs_scaling.json", "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
