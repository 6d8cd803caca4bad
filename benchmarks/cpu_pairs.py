"""Workload B1 on the CPU (issue 33): the first ``--pairs`` pairs aligned with traceback.

swath's CPU ``align_batch`` (scores, coordinates and CIGAR text) with ``--threads``
threads, against parasail's traceback in as many processes, each aligning its share of
the pairs one by one and decoding each pair's CIGAR (``sg_dx_trace_scan_16`` for
semiglobal: the whole query against any part of the target, as swath's mode;
``sw_trace_striped_16`` for local). Both after a warm-up (numba's compile, the
processes' start), median of ``--repeats``, in the same run; also the CPU seconds each
spent (all its threads or processes: on a shared machine the wall times move with the
load). Every pair's score must equal parasail's, and a sample of swath's CIGARs must
rescore to it.

    python benchmarks/cpu_pairs.py --pairs 20000 --threads 2 --mode semiglobal
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import time
from itertools import pairwise
from typing import Any

import numpy as np
from b1_pairs import make_pairs, packed

MATCH, MISMATCH, GAP_OPEN, GAP_EXTEND = 2, -3, 5, 2
PARASAIL = {"semiglobal": "sg_dx_trace_scan_16", "local": "sw_trace_striped_16"}
_PAIRS: list[tuple[str, str]] = []     # the decoded pairs, inherited by forked workers


def parasail_share(job: tuple[str, int, int]) -> tuple[np.ndarray, float]:
    """Scores of pairs ``start:stop`` by parasail's traceback, each with its CIGAR decoded,
    and the CPU seconds they took."""
    import parasail

    mode, start, stop = job
    begin = time.process_time()
    function = getattr(parasail, PARASAIL[mode])
    matrix = parasail.matrix_create("ACGT", MATCH, MISMATCH)
    scores = np.empty(stop - start, dtype=np.int64)
    for k in range(start, stop):
        query, target = _PAIRS[k]
        result = function(query, target, GAP_OPEN + GAP_EXTEND, GAP_EXTEND, matrix)
        cigar = result.get_cigar().decode
        scores[k - start] = result.score if cigar else 0
    return scores, time.process_time() - begin


def parasail_run(pool: Any, mode: str, count: int, processes: int
                 ) -> tuple[float, float, np.ndarray]:
    """Seconds and CPU seconds for all pairs in ``processes`` equal shares, and the scores."""
    cuts = np.linspace(0, count, processes + 1).astype(int)
    begin = time.perf_counter()
    shares = pool.map(parasail_share, [(mode, int(a), int(b)) for a, b in pairwise(cuts)])
    return (time.perf_counter() - begin, sum(cpu for _, cpu in shares),
            np.concatenate([scores for scores, _ in shares]))


def cpu_model() -> str:
    """``lscpu``'s model name."""
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mode", default="semiglobal", choices=sorted(PARASAIL))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", type=int, default=500, help="CIGARs rescored")
    args = parser.parse_args()
    os.environ["NUMBA_NUM_THREADS"] = str(args.threads)   # before numba is imported

    import swath
    from swath.alignment import Alignment
    from swath.kernels.cpu import align_batch
    from swath.testing import rescore

    scoring = swath.Scoring.dna(match=MATCH, mismatch=MISMATCH, gap_open=GAP_OPEN,
                                gap_extend=GAP_EXTEND)
    queries, targets = make_pairs(args.pairs, 1)
    _PAIRS.extend((scoring.alphabet.decode(q), scoring.alphabet.decode(t))
                  for q, t in zip(queries, targets, strict=True))
    q_res, q_off = packed(queries)
    t_res, t_off = packed(targets)
    cells = int((np.diff(q_off) * np.diff(t_off)).sum())
    call = (q_res, q_off, t_res, t_off, scoring, args.mode)

    align_batch(*packed(queries[:64]), *packed(targets[:64]), *call[4:])   # compile
    with multiprocessing.get_context("fork").Pool(args.threads) as pool:
        parasail_run(pool, args.mode, min(args.pairs, 64 * args.threads), args.threads)
        ours, theirs, our_cpu, their_cpu = [], [], [], []
        for _ in range(args.repeats):
            begin, begin_cpu = time.perf_counter(), time.process_time()
            scores, coords, text, offsets = align_batch(*call)
            ours.append(time.perf_counter() - begin)
            our_cpu.append(time.process_time() - begin_cpu)
            seconds, cpu, expected = parasail_run(pool, args.mode, args.pairs, args.threads)
            theirs.append(seconds)
            their_cpu.append(cpu)
    assert np.array_equal(scores, expected), \
        f"{int((scores != expected).sum())} scores differ from parasail's"
    for k in np.random.default_rng(0).choice(args.pairs, min(args.check, args.pairs),
                                             replace=False):
        cigar = text[offsets[k]:offsets[k + 1]].tobytes().decode()
        alignment = Alignment(int(scores[k]), *map(int, coords[k]), cigar, args.mode)
        assert rescore(alignment, queries[k], targets[k], scoring) == scores[k], \
            f"pair {k}'s CIGAR does not rescore to its score"
    swath_s, parasail_s = statistics.median(ours), statistics.median(theirs)
    print(f"# B1 first {args.pairs} pairs, {cells:.4e} cells, mode {args.mode}, CPU "
          f"{cpu_model()}, {args.threads} threads / processes; swath runs (s): "
          f"{' '.join(f'{t:.3f}' for t in ours)}; parasail {PARASAIL[args.mode]}: "
          f"{' '.join(f'{t:.3f}' for t in theirs)}; all scores equal parasail's, "
          f"{min(args.check, args.pairs)} CIGARs rescored")
    print(f"B1 CPU {args.mode}: swath {swath_s:.3f} s, {cells / swath_s / 1e9:.3f} GCUPS; "
          f"parasail {parasail_s:.3f} s, {cells / parasail_s / 1e9:.3f} GCUPS; "
          f"ratio {parasail_s / swath_s:.2f}")
    swath_cpu, parasail_cpu = statistics.median(our_cpu), statistics.median(their_cpu)
    print(f"CPU seconds (all threads / processes): swath {swath_cpu:.3f}, parasail "
          f"{parasail_cpu:.3f}; ratio {parasail_cpu / swath_cpu:.2f}")


if __name__ == "__main__":
    main()
