"""All against all on a mixed Dask cluster of one GPU host: one GPU worker, CPU workers.

A scheduler in this process, one ``dask worker`` with the GPU (two threads) and
``--cpu-workers`` workers without one (``CUDA_VISIBLE_DEVICES`` empty, one thread each,
``NUMBA_NUM_THREADS`` of ``--cpu-threads``); ``swath.allpairs(..., device="auto")`` so each
tile runs on whatever its worker has. Reported: the mixed job's seconds, the tiles each kind
of worker took (a tile and its copy both counted, ``copies`` apart: tiles copied from a
straggler to an idle worker, ``engine.stragglers``), the same job on the GPU alone in this
process, and whether both stores hold the same kept pairs. Each worker, and this process
before the GPU-alone job, first runs a small job (``warm``; ``--cold``: not), so that
both measured jobs find their kernels loaded, as on a running cluster.

    python benchmarks/allpairs_mixed.py A1_2000.fasta --block 256
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import time

import dnaio
from allpairs_scaling import task_phases

import swath
from swath.scoring import Scoring


def warm(sequences: list[str], device: str) -> None:
    """A small all-pairs job on ``device``: the kernels compiled or loaded, the GPU's
    context made, before a measured job (on a worker, or in this process)."""
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        swath.allpairs(sequences, store=f"{where}/warm.zarr", device=device, block=16,
                       scoring=Scoring.dna(2, -3, 5, 2), min_identity=0.97)


class Summaries(logging.Handler):
    """The engine's line summing up each all-pairs job (tiles' and finalize's seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "finalized" in record.getMessage():
            self.lines.append(record.getMessage())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fasta")
    parser.add_argument("--block", type=int, default=256)
    parser.add_argument("--cpu-workers", type=int, default=4)
    parser.add_argument("--cpu-threads", type=int, default=3)
    parser.add_argument("--out", default=".")
    parser.add_argument("--cold", dest="warm", action="store_false",
                        help="no warm-up job on each worker and in this process first")
    args = parser.parse_args()
    with dnaio.open(args.fasta) as records:
        few = [record.sequence for record, _ in zip(records, range(64), strict=False)]

    from distributed import Client, LocalCluster, get_task_stream

    # the engine's summary line of each job: its tiles' seconds and its finalize's
    summaries = Summaries()
    engine_log = logging.getLogger("swath.engine.allpairs")
    engine_log.addHandler(summaries)
    engine_log.setLevel(logging.INFO)

    dna = Scoring.dna(2, -3, 5, 2)
    job = {"scoring": dna, "min_identity": 0.97, "block": args.block}
    with LocalCluster(n_workers=0, dashboard_address=":0") as cluster, Client(cluster) as client:
        worker = ["dask", "worker", cluster.scheduler_address, "--no-dashboard"]
        workers = [
            subprocess.Popen([*worker, "--nthreads", "2", "--name", "gpu"],
                             env=os.environ | {"CUDA_VISIBLE_DEVICES": "0"}),
            subprocess.Popen([*worker, "--nworkers", str(args.cpu_workers), "--nthreads", "1"],
                             env=os.environ | {"CUDA_VISIBLE_DEVICES": "",
                                               "NUMBA_NUM_THREADS": str(args.cpu_threads)})]
        try:
            client.wait_for_workers(1 + args.cpu_workers, timeout=120)
            names = {address: info["name"]
                     for address, info in client.scheduler_info()["workers"].items()}
            if args.warm:       # each worker's kernels loaded, as on a running cluster
                client.run(warm, few, "auto")
            with get_task_stream(client=client) as stream:    # fetched on exit: not timed
                started = time.perf_counter()
                mixed = swath.allpairs(args.fasta, store=f"{args.out}/mixed.zarr", client=client,
                                       device="auto", **job)
                mixed_seconds = time.perf_counter() - started
        finally:
            for process in workers:
                process.terminate()
    tiles = {"gpu": 0, "cpu": 0}
    copies = {"gpu": 0, "cpu": 0}         # copies of straggling tiles (engine.stragglers)
    for task in stream.data:
        if "allpairs" in str(task["key"]):
            kind = "gpu" if names[task["worker"]] == "gpu" else "cpu"
            (copies if str(task["key"]).endswith("-copy") else tiles)[kind] += 1
    if args.warm:
        warm(few, "gpu")
    started = time.perf_counter()
    alone = swath.allpairs(args.fasta, store=f"{args.out}/alone.zarr", device="gpu", **job)
    print(json.dumps({"mixed_seconds": round(mixed_seconds, 2), "tiles": tiles,
                      "copies": copies, "phases": task_phases(stream.data),
                      "summaries": summaries.lines,
                      "gpu_alone_seconds": round(time.perf_counter() - started, 2),
                      "kept": len(mixed), "same_kept_pairs": mixed.to_table() == alone.to_table()}))


if __name__ == "__main__":
    main()
