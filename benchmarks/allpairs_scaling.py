"""All against all on one and on two GPUs of one host: the job on a running dask-cuda
cluster, and the whole command from a cold process (``--no-command``: the jobs only).

For each GPU count G (``--gpus``, default 1 and 2): a ``LocalCUDACluster`` of G workers
(two task threads each, as ``swath allpairs`` starts on several GPUs), a first job that
loads the workers' kernels (reported apart; on ``--first``'s sequences where given),
then ``--repeats`` jobs, each ``swath.allpairs(FASTA, client=...)`` timed from the call
to its return; then the CLI
command with G GPUs visible (``CUDA_VISIBLE_DEVICES``), which runs in its own process on
one GPU and starts a cluster on two. Every store must hold the same kept pairs.
Reported: median seconds, pairs per second, and the scaling of G GPUs over one
(time on one / (G x time on G); 1.0 is linear).

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
    from distributed import Client

    job = {"scoring": Scoring.dna(2, -3, 5, 2), "min_identity": 0.97, "device": "gpu"}
    visible = ",".join(str(g) for g in range(gpus))
    with LocalCUDACluster(n_workers=gpus, threads_per_worker=2, CUDA_VISIBLE_DEVICES=visible,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
        started = time.perf_counter()
        swath.allpairs(first_fasta, client=client, store=f"{out}/g{gpus}-first.zarr", **job)
        first = time.perf_counter() - started
        runs = []
        for k in range(repeats):
            started = time.perf_counter()
            swath.allpairs(fasta, client=client, store=f"{out}/g{gpus}-{k}.zarr", **job)
            runs.append(time.perf_counter() - started)
    return {"first_job": first, "jobs": runs, "job": statistics.median(runs),
            "store": f"{out}/g{gpus}-0.zarr"}


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
