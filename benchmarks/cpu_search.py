"""Workload S2 of the shared benchmarks: one protein query against 20,000 proteins, CPU.

Runs swath, pyopal and parasail in the same process, checks that they agree on every
score, and prints GCUPS (query residues x database residues / seconds / 1e9) as the
median of several runs, setup (database encoding) excluded for every tool.

    python benchmarks/cpu_search.py --db s2.fasta --queries search_queries_20.fasta

Without --db the database is generated with the shared synth.py (protein 20000 3).
Needs ``pip install 'swath[bench]'`` (pyopal, parasail).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import swath
from swath.kernels.cpu import score_many
from swath.sequences import read_sequences

GAP_OPEN, GAP_EXTEND = 11, 1  # swath convention: a gap of k costs 11 + k


def median_seconds(run: Callable[[], object], repeats: int) -> tuple[float, object]:
    result = run()  # warm-up (numba compilation, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    here = Path(__file__).resolve().parent
    shared = here.parent.parent / "shared"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path,
                        help="database FASTA (default: synth.py protein 20000 3)")
    parser.add_argument("--queries", type=Path, default=shared / "data/search_queries_20.fasta")
    parser.add_argument("--query-index", type=int, default=9, help="0-based record (S2: 9)")
    parser.add_argument("--query-length", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-parasail", action="store_true")
    args = parser.parse_args()

    if args.db is None:
        args.db = Path("/tmp/swath-s2-db.fasta")
        if not args.db.exists():
            subprocess.run([sys.executable, str(shared / "bench/synth.py"), "protein", "20000", "3",
                            str(args.db)], check=True)
    scoring = swath.Scoring.protein("BLOSUM62", GAP_OPEN, GAP_EXTEND)
    db = read_sequences(args.db, scoring.alphabet)
    queries = read_sequences(args.queries, scoring.alphabet)
    query = np.ascontiguousarray(queries[args.query_index][: args.query_length])
    text = scoring.alphabet.decode(query)
    cells = len(query) * len(db.residues)
    print(f"# S2: query {queries.names[args.query_index]}[:{len(query)}] against "
          f"{len(db)} sequences, {len(db.residues)} residues ({cells:.3e} cells)")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"threads={args.threads}")

    import numba
    import pyopal

    numba.set_num_threads(args.threads)
    rows = []
    seconds, swath_scores = median_seconds(lambda: score_many(
        query, np.array([0, len(query)]), db.residues, db.offsets, scoring, "local")[0],
        args.repeats)
    rows.append(("swath (numba, 8/16/32-bit lanes)", args.threads, seconds))

    texts = [scoring.alphabet.decode(s) for s in db]
    opal_db = pyopal.Database(texts)
    def opal_run() -> list[tuple[int, int]]:
        return [(r.target_index, r.score) for r in pyopal.align(
            text, opal_db, "BLOSUM62", threads=args.threads, gap_open=GAP_OPEN + GAP_EXTEND,
            gap_extend=GAP_EXTEND, mode="score", algorithm="sw")]

    seconds, opal_hits = median_seconds(opal_run, args.repeats)
    opal_scores = [score for _, score in sorted(opal_hits)]
    rows.append((f"pyopal {pyopal.__version__}", args.threads, seconds))
    assert np.array_equal(swath_scores, opal_scores), "swath and pyopal disagree"

    if not args.skip_parasail:
        import parasail

        profile = parasail.profile_create_16(text, parasail.blosum62)
        def parasail_run() -> list[int]:
            return [parasail.sw_striped_profile_16(profile, t, GAP_OPEN + GAP_EXTEND,
                                                   GAP_EXTEND).score for t in texts]

        seconds, parasail_scores = median_seconds(parasail_run, max(1, args.repeats // 2))
        rows.append(("parasail sw_striped_profile_16", 1, seconds))
        assert np.array_equal(swath_scores, parasail_scores), "swath and parasail disagree"

    print(f"{'tool':40s} {'threads':>7s} {'seconds':>8s} {'GCUPS':>7s}")
    for name, threads, seconds in rows:
        print(f"{name:40s} {threads:7d} {seconds:8.3f} {cells / seconds / 1e9:7.2f}")
    print("# all tools agree on every score")


if __name__ == "__main__":
    main()
