"""Workload B1 of the shared benchmarks: 200,000 DNA pairs aligned with traceback, GPU.

Queries of 100 to 300 bp; targets of 200 to 1,000 bp that carry a mutated copy of
their query (about 10 % substitutions and small indels). Each timed run covers the
upload of all pairs, the fill and traceback kernels, the CIGAR text built on the
GPU, and the download of scores, coordinates and CIGARs; CUDA events after a warm-up,
median of ``--repeats``. A sample is checked against the CPU backend.

    python benchmarks/gpu_traceback.py --pairs 200000 --mode semiglobal
"""

from __future__ import annotations

import argparse
import statistics

import cupy as cp
import numpy as np
from b1_pairs import make_pairs, packed

import swath
from swath.kernels.cpu import align_batch as cpu_align_batch
from swath.kernels.gpu.traceback import align_batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--mode", default="semiglobal")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", type=int, default=2000)
    args = parser.parse_args()

    scoring = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    queries, targets = make_pairs(args.pairs, 1)
    q_res, q_off = packed(queries)
    t_res, t_off = packed(targets)
    cells = int((np.diff(q_off) * np.diff(t_off)).sum())
    call = (q_res, q_off, t_res, t_off, scoring, args.mode)
    result = align_batch(*call)  # warm-up
    times = []
    for _ in range(args.repeats):
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record()
        result = align_batch(*call)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(begin, end) / 1e3)
    seconds = statistics.median(times)

    k = min(args.check, args.pairs)
    expected = cpu_align_batch(*packed(queries[:k]), *packed(targets[:k]), scoring, args.mode)
    scores, coords, text, offsets = result
    assert np.array_equal(scores[:k], expected[0]), "scores differ from the CPU"
    assert np.array_equal(coords[:k], expected[1]), "coordinates differ from the CPU"
    assert text[: offsets[k]].tobytes() == expected[2].tobytes(), "CIGARs differ from the CPU"
    print(f"# B1: {args.pairs} DNA pairs, {cells:.4e} cells, mode {args.mode}; runs (s): "
          f"{' '.join(f'{t:.3f}' for t in times)}; first {k} pairs equal the CPU backend")
    print(f"B1 swath GPU {args.mode}: {seconds:.3f} s, {cells / seconds / 1e12:.3f} TCUPS "
          f"(scores, coordinates and CIGAR strings included)")


if __name__ == "__main__":
    main()
