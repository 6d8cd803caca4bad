"""Workload S1 of the shared benchmarks: 20 protein queries against 570,000 proteins, GPU.

The database is resident on the GPU (uploaded once, sorted by length); each timed
run covers, for all 20 queries, the profile upload, every kernel and the download of
all scores, timed with CUDA events after a warm-up. TCUPS = query residues x database
residues / seconds / 1e12, median of ``--repeats`` runs. A sample of the scores is
checked against the CPU backend.

    python benchmarks/gpu_search.py --db s1.fasta --queries search_queries_20.fasta

``--ways`` times several ways in one process (see WAYS): the default, two query streams
a register (in local mode each stream holds queries one after another), two queries a
register (a query a stream, as before), or one query a call (its first pass: two targets
a register); a way ``GxR`` (say ``32x16``) is the pairs way with G threads a group and R
rows a thread for every query longer than 256 residues against targets of 256 and more
(an experiment: configurations outside the package's are compiled for it).
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

import swath
from swath.constants import MODES
from swath.kernels.cpu import score_many as cpu_score_many
from swath.kernels.gpu import _cuda
from swath.kernels.gpu import scores as gpu_scores
from swath.kernels.gpu.scores import DeviceTargets, score_queries
from swath.sequences import read_sequences

GAP_OPEN, GAP_EXTEND = 11, 1


WAYS = {
    "streams": "two query streams a register (local: queries one after another)",
    "pairs": "two queries a register, a query a stream, profile tiles up to 64 KiB",
    "pairs-48k": "two queries a register, profile tiles up to 48 KiB",
    "one-query": "one query a call, two targets a register",
    "least-padding": "two queries a register, the passes that pad long queries least",
}


def main() -> None:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("bench-data/s1.fasta"))
    parser.add_argument("--synth", type=Path, default=here.parent / "bench-data/synth.py")
    parser.add_argument("--queries", type=Path,
                        default=here.parent / "bench-data/search_queries_20.fasta")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", type=int, default=3000, help="targets checked on the CPU")
    parser.add_argument("--mode", default="local")
    parser.add_argument("--ways", default="streams", help=f"comma-separated, of {list(WAYS)}")
    args = parser.parse_args()

    if not args.db.exists():
        subprocess.run([sys.executable, str(args.synth), "protein", "570000", "7", str(args.db)],
                       check=True)
    scoring = swath.Scoring.protein("BLOSUM62", GAP_OPEN, GAP_EXTEND)
    start = time.perf_counter()
    db = read_sequences(args.db, scoring.alphabet)
    queries = read_sequences(args.queries, scoring.alphabet)
    print(f"# read {len(db)} targets, {len(db.residues)} residues in "
          f"{time.perf_counter() - start:.1f} s")
    targets = DeviceTargets.upload(db.residues, db.offsets)
    cells = int(queries.lengths.sum()) * len(db.residues)
    print(f"# S1: {len(queries)} queries ({int(queries.lengths.sum())} residues) x {len(db)} "
          f"targets ({len(db.residues)} residues) = {cells:.4e} cells, mode {args.mode}")
    rng = np.random.default_rng(0)
    sample = np.sort(rng.choice(len(db), size=min(args.check, len(db)), replace=False))
    sample_seqs = [db[int(k)] for k in sample]
    t_res = np.concatenate(sample_seqs)
    t_off = np.concatenate([[0], np.cumsum([len(s) for s in sample_seqs])])
    position = np.empty(len(db), dtype=np.int64)
    position[targets.order] = np.arange(len(db))
    checked = (0, 9, len(queries) - 1)
    expected = [cpu_score_many(queries[qi], np.array([0, len(queries[qi])]), t_res, t_off,
                               scoring, args.mode)[0]
                for qi in checked]
    ways = args.ways.split(",")
    extra = {tuple(map(int, w.split("x"))) for w in ways if w not in WAYS}
    _cuda.SEARCH_CONFIGS += tuple(sorted(extra - set(_cuda.SEARCH_CONFIGS)))
    # profiles long enough for every pass of the added configurations too
    gpu_scores.PROFILE_ROWS = math.lcm(gpu_scores.PROFILE_ROWS, *(g * r for g, r in extra))
    _cuda._NAMES["search.cu"] = tuple(_cuda.search_name(g, r, c, m)
                                      for g, r in _cuda.SEARCH_CONFIGS
                                      for c in _cuda.CELLS for m in MODES)
    for way in ways:
        seconds, results = time_way(way, targets, list(queries), scoring, args)
        print(f"S1 swath GPU ({WAYS[way]}): {seconds:.3f} s, {cells / seconds / 1e12:.2f} "
              "TCUPS")
        for qi, want in zip(checked, expected, strict=True):
            got = results[qi][position[sample]]
            assert np.array_equal(got, want), f"{way}, query {qi}: GPU and CPU disagree"
    print(f"# CPU check of {len(sample)} targets x {len(checked)} queries passed for each way")


KERNEL_CONFIG = gpu_scores.kernel_config
STREAM_PLAN = gpu_scores.stream_plan


def least_padding(query: int, target: int, alphabet: int, row_bytes: int = 2
                  ) -> tuple[int, int]:
    """The passes (of 128 rows at least) that pad the query least, then the fewest."""
    usable = gpu_scores.usable_configs(target, alphabet, row_bytes)
    wide = [c for c in usable if c[0] * c[1] >= min(query, 128)] or usable

    def cost(config: tuple[int, int]) -> tuple[int, int, int]:
        tile = config[0] * config[1]
        passes = -(-query // tile)
        return passes * tile, passes, config[1]

    return min(wide, key=cost)


def force_config(group: int, rows: int) -> None:
    """Make the search take (group, rows) for queries over 256 against targets of 256+
    (compiled with the others: main adds it to the search instances first)."""

    def config(query: int, target: int, alphabet: int, row_bytes: int = 2) -> tuple[int, int]:
        if query > 256 and target >= 256:
            return group, rows
        return KERNEL_CONFIG(query, target, alphabet, row_bytes)

    gpu_scores.kernel_config = config


def time_way(way: str, targets: DeviceTargets, queries: list[np.ndarray],
             scoring: swath.Scoring, args: argparse.Namespace
             ) -> tuple[float, list[np.ndarray]]:
    """Median seconds of all queries against ``targets`` the ``way`` named, and the last
    run's scores (sorted target order)."""
    gpu_scores.SHARED_LIMIT = (48 if way == "pairs-48k" else 64) * 1024
    gpu_scores.kernel_config = least_padding if way == "least-padding" else KERNEL_CONFIG
    # a way other than "streams" takes the global plan: a query a stream, neighbours paired
    gpu_scores.stream_plan = (STREAM_PLAN if way == "streams"
                              else lambda lengths, mode: STREAM_PLAN(lengths, "global"))
    if way not in WAYS:
        force_config(*map(int, way.split("x")))
        WAYS[way] = f"two queries a register, {way} threads x rows for long pairs"

    def run() -> list[np.ndarray]:
        if way == "one-query":
            return [score_queries(targets, [q], scoring, args.mode)[0].get()
                    for q in queries]
        return list(score_queries(targets, queries, scoring, args.mode).get())

    results = run()  # warm-up: compilation, memory pool
    times = []
    for _ in range(args.repeats):
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record()
        results = run()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(begin, end) / 1e3)
    print(f"# {way} runs (s): {' '.join(f'{t:.3f}' for t in times)}")
    return statistics.median(times), results


if __name__ == "__main__":
    main()
