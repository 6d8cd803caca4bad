"""The alignment writers (issue 33): rows per second of SAM, PAF and BLAST's tabular rows.

``--rows`` synthetic alignments (150-residue reads against 1,000 targets, local, with
clips, a few mismatches and gaps each; 5 rows per read, so 1 in 5 is primary and carries
its sequence in SAM), written by :mod:`swath.results.alignments` in one call, as a big
store's printer hands it a chunk; the best of ``--repeat`` runs (wall clock, and the
process's CPU seconds: on a shared machine the steadier figure). The text is consumed
(counted), not written to a disk.

    python benchmarks/alignment_formats.py --rows 1000000
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np

from swath.results.alignments import (
    AlignedRows,
    PrintOptions,
    paf_lines,
    sam_header,
    sam_lines,
    tabular_lines,
)

READ = 150
PER_READ = 5


def synthetic(rows: int, seed: int = 1) -> AlignedRows:
    """``rows`` local alignments of 150-residue reads, 5 rows a read."""
    rng = np.random.default_rng(seed)
    reads = -(-rows // PER_READ)
    read = np.repeat(np.arange(reads), PER_READ)[:rows]
    head = rng.integers(0, 10, rows)
    tail = rng.integers(0, 10, rows)
    cigars = np.empty(rows, dtype=object)
    shapes = [f"{a}=1X{b}=2I{c}=1D{d}=" for a, b, c, d in rng.integers(10, 40, (64, 4)).tolist()]
    for k in range(rows):       # test data only: the writers take any object array
        cigars[k] = shapes[k % 64]
    aligned = np.array([sum(int(n) for n, op in re.findall(r"(\d+)([=XID])", c) if op in "=XI")
                        for c in shapes])
    query_end = head + aligned[np.arange(rows) % 64]
    targets = rng.integers(0, 1000, rows)
    sequence = "".join(rng.choice(list("ACGT"), READ * 2))
    return AlignedRows(
        np.array([f"read{r}" for r in read.tolist()], dtype=object),
        query_end + tail, np.array([f"contig{t}" for t in targets.tolist()], dtype=object),
        np.full(rows, 100_000), rng.integers(50, 300, rows), head, query_end,
        rng.integers(0, 90_000, rows), rng.integers(0, 90_000, rows) + 150, cigars, "local",
        lambda i: sequence[: int(query_end[i] + tail[i])])


def timed(write, repeat: int) -> tuple[float, float, int]:
    """The best wall and CPU seconds of ``repeat`` runs, and the text's size."""
    wall, cpu, size = float("inf"), float("inf"), 0
    for _ in range(repeat):
        started, used = time.perf_counter(), time.process_time()
        size = sum(len(piece) for piece in write())
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - used)
    return wall, cpu, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = synthetic(args.rows)
    m = PrintOptions(cigar_m=True)
    for name, write in (
            ("sam", lambda: sam_lines(rows, PrintOptions())),
            ("sam --cigar-m", lambda: sam_lines(rows, m)),
            ("sam header", lambda: sam_header((rows.target_name, rows.target_length), None)),
            ("paf", lambda: paf_lines(rows, PrintOptions())),
            ("paf --cigar-m", lambda: paf_lines(rows, m)),
            ("tabular", lambda: tabular_lines(rows))):
        wall, cpu, size = timed(write, args.repeat)
        print(f"{name:14s} {args.rows:,} rows in {wall:.2f} s: {args.rows / wall:,.0f} rows/s "
              f"({size / wall / 1e6:,.0f} MB/s of text; {cpu:.2f} s of CPU)", flush=True)


if __name__ == "__main__":
    main()
