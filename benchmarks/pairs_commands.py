"""B1 and B2 through ``swath pairs``: whole commands from cold processes, and the job's
phases on one and on two GPUs.

The pairs are B1's (``b1_pairs.make_pairs``, seed 1: B1 is its first 200,000, B2 its
first 2,000,000), written to two FASTA files (queries, targets; paired by record order)
in ``--data`` unless there already. For each GPU count G (``--gpus``):

- the whole command, ``swath pairs Q.fa T.fa -o R.zarr --dna --mode semiglobal --device
  gpu`` with G GPUs visible, from a cold process (``--repeats`` times): on one GPU it runs
  in its own process, on several it starts a dask-cuda cluster;
- the job's phases on a ``LocalCUDACluster`` of G workers: a first run that takes the
  inputs' pieces into the store (tasks on the workers) and aligns every chunk, then the
  chunks alone (``run``, ``--repeats`` times on the same store, its done marks cleared
  between runs); the inputs' time is the first run's less the chunks' median.

Scaling of G GPUs is time on one / (G x time on G) (1.0 is linear). The first
``--check`` pairs of every store must equal the CPU backend's alignments.

    python benchmarks/pairs_commands.py --pairs 200000 --gpus 1 --data /tmp/b1 --out $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from b1_pairs import make_pairs

import swath
from swath.kernels.cpu import align_batch as cpu_align_batch

SCORING = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
MODE = "semiglobal"


def fasta_files(count: int, folder: Path) -> tuple[Path, Path]:
    """B1's first ``count`` pairs as two FASTA files (written once)."""
    queries, targets = folder / f"q{count}.fa", folder / f"t{count}.fa"
    if not targets.exists():
        folder.mkdir(parents=True, exist_ok=True)
        letters = np.frombuffer(b"ACGT", np.uint8)
        pairs = make_pairs(count, 1)
        for path, seqs, tag in ((queries, pairs[0], b"q"), (targets, pairs[1], b"t")):
            with open(path, "wb") as out:
                out.writelines(b">%s%d\n%s\n" % (tag, i, letters[s].tobytes())
                               for i, s in enumerate(seqs))
    return queries, targets


def cells(store: str) -> int:
    return swath.open(store).cells


def command(queries: Path, targets: Path, gpus: int, store: str) -> float:
    env = os.environ | {"CUDA_VISIBLE_DEVICES": ",".join(str(g) for g in range(gpus))}
    shutil.rmtree(store, ignore_errors=True)      # a new store each time, not a replacement
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "swath", "pairs", str(queries), str(targets), "-o",
                    store, "--dna", "--mode", MODE, "--device", "gpu", "--no-progress"],
                   check=True, env=env)
    return time.perf_counter() - started


def phases(queries: Path, targets: Path, gpus: int, repeats: int, store: str
           ) -> dict[str, object]:
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    from swath.engine.pairs import prepare_pairs, run_pairs
    from swath.storage.common import update_attrs
    from swath.storage.pairs import PairsStore
    from swath.workloads.pairs import source

    visible = ",".join(str(g) for g in range(gpus))
    with LocalCUDACluster(n_workers=gpus, threads_per_worker=2, CUDA_VISIBLE_DEVICES=visible,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
        swath.warm_up("gpu", client=client, job="pairs")
        started = time.perf_counter()
        job = prepare_pairs(store, source(str(queries), "queries", False),
                            source(str(targets), "targets", False), None, SCORING,
                            mode=MODE, device="gpu", chunk=None, overwrite=True)
        run_pairs(job, client)              # the inputs' pieces taken in, then the chunks
        first = time.perf_counter() - started
        runs = []
        for _ in range(repeats):            # the chunks alone, their done marks cleared
            opened = PairsStore.open(store, mode="r+", complete=False)
            opened.unmark("chunk", list(range(opened.units)))
            update_attrs(opened.group, complete=False)
            started = time.perf_counter()
            run_pairs(job, client)
            runs.append(time.perf_counter() - started)
    align = statistics.median(runs)
    return {"first_run": first, "take_in": first - align, "align_runs": runs, "align": align}


def check(store: str, queries: Path, targets: Path, count: int) -> None:
    """The first ``count`` pairs of ``store`` equal the CPU backend's."""
    res = swath.open(store)
    q = swath.read_sequences(queries, SCORING.alphabet, limit=count)
    t = swath.read_sequences(targets, SCORING.alphabet, limit=count)
    scores, coords, text, at = cpu_align_batch(q.residues, q.offsets, t.residues, t.offsets,
                                               SCORING, MODE)
    cigars = text.tobytes().decode()
    got = np.stack([res.query_start[:count], res.query_end[:count], res.target_start[:count],
                    res.target_end[:count]], 1)
    assert np.array_equal(res.score[:count], scores), "scores differ from the CPU"
    assert np.array_equal(got, coords), "coordinates differ from the CPU"
    assert list(res.cigar[:count]) == [cigars[at[k]:at[k + 1]] for k in range(count)], \
        "CIGARs differ from the CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--gpus", default="1")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", type=int, default=2000)
    parser.add_argument("--data", type=Path, default=Path("bench-data"))
    parser.add_argument("--out", default=".")
    parser.add_argument("--no-phases", action="store_true", help="whole commands only")
    args = parser.parse_args()
    started = time.perf_counter()
    queries, targets = fasta_files(args.pairs, args.data)
    print(f"# {args.pairs} pairs in {queries} and {targets} "
          f"({time.perf_counter() - started:.1f} s to have them)", flush=True)
    report: dict[str, object] = {"pairs": args.pairs}
    for gpus in (int(g) for g in args.gpus.split(",")):
        store = f"{args.out}/pairs-g{gpus}.zarr"
        runs = [command(queries, targets, gpus, store) for _ in range(args.repeats)]
        check(store, queries, targets, args.check)
        result: dict[str, object] = {"command_runs": runs, "command": statistics.median(runs)}
        if not args.no_phases:
            result |= phases(queries, targets, gpus, args.repeats, f"{args.out}/phases.zarr")
        n = cells(store)
        result["cells"] = n
        result["command_gcups"] = n / float(result["command"]) / 1e9   # type: ignore[arg-type]
        report[f"{gpus} GPU"] = result
        print(f"{gpus} GPU:", json.dumps(result), flush=True)
    one = report.get("1 GPU")
    for key in [k for k in report if k.endswith("GPU") and k != "1 GPU"]:
        g = int(key.split()[0])
        many = report[key]
        assert isinstance(one, dict) and isinstance(many, dict)
        for what in ("command", "align"):
            if what in many:
                many[f"{what}_scaling"] = one[what] / (g * many[what])
        print(key, {k: v for k, v in many.items() if k.endswith("scaling")}, flush=True)
    with open(f"{args.out}/pairs_commands.json", "w") as out:
        json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
