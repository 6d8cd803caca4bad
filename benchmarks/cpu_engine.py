"""The search engine on the CPU against the CPU kernel alone (issue 4's CPU ratio).

Queries: the first 300 residues of each of the 20 S1 queries (``--queries-repeat R``:
those 20, R times over); database: S2's
(`synth.py protein 20000 3`). Kernel-only: `swath.kernels.cpu.score_many` of all
queries against all targets. Engine: `swath.search` (top 10, aligned, statistics,
result store) on a local Dask cluster of one worker whose kernels use every core,
from graph submission to a complete store. Median of ``--repeats``.

    python benchmarks/cpu_engine.py --db s2.fasta
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import swath
from swath.engine.cluster import connect
from swath.engine.database import write_database
from swath.kernels.cpu import score_many
from swath.sequences import read_sequences, sequence_set


def main() -> None:
    shared = Path(__file__).resolve().parent.parent.parent / "shared"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("/tmp/swath-s2-db.fasta"))
    parser.add_argument("--queries", type=Path, default=shared / "data/search_queries_20.fasta")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries-repeat", type=int, default=1,
                        help="search the queries this many times over (a longer job)")
    args = parser.parse_args()
    if not args.db.exists():
        subprocess.run([sys.executable, str(shared / "bench/synth.py"), "protein", "20000", "3",
                        str(args.db)], check=True)
    scoring = swath.Scoring.protein("BLOSUM62", 11, 1)
    full = read_sequences(args.queries, scoring.alphabet)
    n = len(full) * args.queries_repeat
    queries = sequence_set([full[i % len(full)][:300] for i in range(n)], scoring.alphabet,
                           names=[f"{full.names[i % len(full)]}_{i // len(full)}"
                                  for i in range(n)])
    db = read_sequences(args.db, scoring.alphabet)
    cells = int(queries.lengths.sum()) * len(db.residues)

    def kernel() -> None:
        score_many(queries.residues, queries.offsets, db.residues, db.offsets, scoring,
                   "local")

    kernel()
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        kernel()
        times.append(time.perf_counter() - start)
    kernel_s = statistics.median(times)

    scratch = tempfile.mkdtemp()
    store = f"{scratch}/db.swdb"
    write_database(args.db, store, scoring.alphabet)
    client, _ = connect(device="cpu")
    engine_times = []
    for run in range(args.repeats + 1):
        start = time.perf_counter()
        swath.search(queries, store, scoring=scoring, top_k=10, client=client,
                     store=f"{scratch}/r{run}.zarr", device="cpu")
        engine_times.append(time.perf_counter() - start)
    engine_s = statistics.median(engine_times[1:])   # the first run warms the worker up
    client.close()
    print(f"# {len(queries)} queries x {len(db)} targets = {cells:.3e} cells; "
          f"kernel runs {np.round(times, 3).tolist()}, engine runs "
          f"{np.round(engine_times, 3).tolist()}")
    print(f"kernel only: {kernel_s:.3f} s, {cells / kernel_s / 1e9:.2f} GCUPS")
    print(f"engine:      {engine_s:.3f} s, {cells / engine_s / 1e9:.2f} GCUPS "
          f"({kernel_s / engine_s:.0%} of kernel-only)")


if __name__ == "__main__":
    main()
