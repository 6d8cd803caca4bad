"""Small jobs without a store, in one warm process: ``swath.align_pairs`` of 50 pairs of
400 bp beside parasail's ``sw_trace_striped_32`` on the same pairs, and ``swath.search``
of 30 queries against 2,000 proteins beside ``swath.scores`` on the same inputs (issue 50,
item 5: at most 3x parasail, at most 1.5x ``scores``).

    python benchmarks/small_jobs.py --device cpu --repeats 7 [--data DIR]

The proteins are ``synth.py protein 2000 3`` and ``synth.py protein 30 5`` (written to
``--data`` with the benchmark workloads' generator when ``--synth`` names it). Each figure
is the median of ``--repeats`` warm calls (a first call of each compiles and is dropped);
the first call's time is printed too.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import swath

DNA = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
PROTEIN = swath.Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)


def timed(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    """The first call's seconds and the median of ``repeats`` more."""
    started = time.perf_counter()
    call()
    first = time.perf_counter() - started
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return first, statistics.median(times)


def related_pairs(count: int, length: int, seed: int = 1) -> tuple[list[str], list[str]]:
    """``count`` random DNA queries of ``length`` and each with 10 % of its bases changed."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACGT"))
    queries = [rng.integers(0, 4, length) for _ in range(count)]
    targets = [np.where(rng.random(length) < 0.1, rng.integers(0, 4, length), q)
               for q in queries]
    return ["".join(letters[q]) for q in queries], ["".join(letters[t]) for t in targets]


def pairs_figures(device: str, repeats: int) -> None:
    import parasail

    queries, targets = related_pairs(50, 400)
    matrix = parasail.matrix_create("ACGT", 2, -3)

    def theirs() -> list[bytes]:      # parasail's open is swath's open + one extend
        return [parasail.sw_trace_striped_32(q, t, DNA.gap_open + DNA.gap_extend,
                                             DNA.gap_extend, matrix).cigar.decode
                for q, t in zip(queries, targets, strict=True)]

    def ours() -> np.ndarray:
        return swath.align_pairs(queries, targets, DNA, "local", device).cigar

    first, swath_s = timed(ours, repeats)
    _, parasail_s = timed(theirs, repeats)
    print(f"align_pairs 50 x 400 bp local, {device}: swath {swath_s * 1e3:.2f} ms (first call "
          f"{first:.2f} s), parasail sw_trace_striped_32 {parasail_s * 1e3:.2f} ms: "
          f"{swath_s / parasail_s:.2f}x parasail's time")


def search_figures(device: str, repeats: int, data: Path, synth: Path | None) -> None:
    queries, database = data / "small_q30.fasta", data / "small_db2000.fasta"
    for path, count, seed in ((database, 2000, 3), (queries, 30, 5)):
        if not path.exists():
            if synth is None:
                sys.exit(f"{path} is missing: pass --synth PATH/TO/synth.py to write it")
            subprocess.run([sys.executable, str(synth), "protein", str(count), str(seed),
                            str(path)], check=True, capture_output=True)

    def search() -> list[object]:
        return swath.search(str(queries), str(database), PROTEIN, device=device).hits(0)

    def scores() -> np.ndarray:
        return swath.scores(str(queries), str(database), PROTEIN, device=device)

    first, search_s = timed(search, repeats)
    _, scores_s = timed(scores, repeats)
    print(f"search 30 x 2,000 proteins, {device}: swath.search {search_s:.3f} s (first call "
          f"{first:.2f} s), swath.scores {scores_s:.3f} s: {search_s / scores_s:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--data", type=Path, default=Path("bench-data"))
    parser.add_argument("--synth", type=Path, default=None)
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    pairs_figures(args.device, args.repeats)
    search_figures(args.device, args.repeats, args.data, args.synth)


if __name__ == "__main__":
    main()
