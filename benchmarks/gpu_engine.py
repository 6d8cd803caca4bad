"""Workload S1 through the search engine on 1 or more GPUs of one host (issue 4).

The 20 S1 queries, repeated ``--repeat`` times, against the S1 database store, top 10,
BLOSUM62 11/1, local. For each GPU count a fresh dask-cuda cluster (one worker per GPU)
runs the job, measured from graph submission to a complete result store (scores, top-k,
traceback of the kept hits, statistics, writes). A first 20-query job on one GPU fills
CuPy's kernel cache on disk so that no measured run pays for compilation.

    python benchmarks/gpu_engine.py --db s1.swdb --repeat 50 --gpus 1,2,4
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import swath
from swath.engine.cluster import connect
from swath.sequences import SequenceSet, read_sequences, sequence_set
from swath.storage.database import Database


def run(queries: SequenceSet, db: str, gpus: int, scratch: str, tag: str = "run") -> float:
    """Seconds from submission to a complete store (a new one: ``tag``, the GPUs and the
    queries name it), on a fresh cluster of ``gpus`` workers."""
    client = connect(device="gpu", workers=gpus)[0].client
    try:
        start = time.perf_counter()
        swath.search(queries, db, top_k=10, client=client, device="gpu",
                     store=f"{scratch}/{tag}-g{gpus}-{len(queries)}.zarr")
        return time.perf_counter() - start
    finally:
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()


def main() -> None:
    bench = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="S1 database store (swath makedb)")
    parser.add_argument("--queries", type=Path,
                        default=bench.parent / "shared/data/search_queries_20.fasta")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--gpus", default="1", help="comma-separated GPU counts")
    args = parser.parse_args()

    scoring = swath.Scoring.protein("BLOSUM62", 11, 1)
    base = read_sequences(args.queries, scoring.alphabet)
    n = len(base) * args.repeat
    queries = sequence_set([base[i % len(base)] for i in range(n)], scoring.alphabet,
                           names=[f"{base.names[i % len(base)]}_{i // len(base)}"
                                  for i in range(n)])
    cells = int(queries.lengths.sum()) * Database.open(args.db).residues
    scratch = tempfile.mkdtemp()
    try:
        warm = run(base, args.db, 1, scratch, "warm")   # not the store of a measured run
        print(f"# warm-up (compiles the kernels into the disk cache): {warm:.1f} s", flush=True)
        first = None
        for gpus in (int(g) for g in args.gpus.split(",")):
            seconds = run(queries, args.db, gpus, scratch)
            first = first or seconds * gpus
            print(f"{gpus} GPU(s), {n} queries, {cells:.4e} cells: {seconds:.2f} s, "
                  f"{cells / seconds / 1e12:.2f} TCUPS, {first / seconds / gpus:.2f}x linear "
                  f"(against the first count)", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
