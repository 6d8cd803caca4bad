"""One launch of the S1 search kernel, for Nsight Compute.

Two S1 queries (4,061 and 4,548 residues) against the S1 targets of 256 residues and
more (one length partition, so one launch of the first pass); profile it with

    ncu --kernel-name regex:search_scores --launch-count 1 --set full \\
        python benchmarks/gpu_search_kernel.py --db s1.fasta
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cupy as cp
import numpy as np

import swath
from swath.kernels.gpu.scores import DeviceTargets, score_queries
from swath.sequences import read_sequences


def main() -> None:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("bench-data/s1.fasta"))
    parser.add_argument("--queries", type=Path,
                        default=here.parent / "bench-data/search_queries_20.fasta")
    args = parser.parse_args()
    scoring = swath.Scoring.protein("BLOSUM62", 11, 1)
    db = read_sequences(args.db, scoring.alphabet)
    long = np.flatnonzero(db.lengths >= 256)
    seqs = [db[int(k)] for k in long]
    t_off = np.concatenate([[0], np.cumsum([len(s) for s in seqs])])
    targets = DeviceTargets.upload(np.concatenate(seqs), t_off)
    queries = [q for q in read_sequences(args.queries, scoring.alphabet)
               if len(q) in (4061, 4548)]
    score_queries(targets, queries, scoring, "local")
    cp.cuda.Device().synchronize()
    print(f"{len(queries)} queries x {len(seqs)} targets ({t_off[-1]} residues)")


if __name__ == "__main__":
    main()
