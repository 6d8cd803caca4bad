"""Whole commands as a user runs them, each from a cold process, beside the peer's.

``gpu`` (one GPU):
  S1  ``swath search`` of the 20 S1 queries against the S1 database store (made first
      with ``swath makedb``), cold processes, against CUDASW++4.0's ``align`` whole
      command on the same database (``--cudasw DIR`` with its ``makedb`` and ``align``);
      the same job on a running dask-cuda cluster (``--scheduler``); and the anatomy of
      one search in one process: imports, store reads, upload, kernels, top hits with
      traceback, writes.
  L1  ``swath align --score-only`` of the two E. coli genomes through the CLI against
      the engine's own time in a process that has its kernels loaded.
  P   ``swath.align`` of a 120 kbp x 122 kbp pair of windows of the same genomes:
      a cold process (interpreter start to result) and calls in a process that has
      already used the GPU.
``cpu``:
  S2  ``swath search`` of 20 queries (the first 300 residues of each S1 query) against
      the S2 database store through the CLI, against ``score_many`` alone.

Every figure is the median of ``--repeats`` runs; the first run of a new machine (CuPy
and numba compile and cache their kernels) is reported apart. Results go to
``OUT/whole_commands.json`` and are printed.

    python benchmarks/whole_commands.py gpu --data bench-data --out $OUT
    python benchmarks/whole_commands.py cpu --data bench-data
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SWATH = [sys.executable, "-m", "swath"]
LOG: dict[str, Any] = {}


def timed(command: list[str], **kwargs: Any) -> tuple[float, str]:
    """Wall seconds of a command from a cold process, and its stdout + stderr."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed, done.stdout + done.stderr


def median_of(repeats: int, run: Callable[[], float]) -> tuple[float, list[float]]:
    runs = [run() for _ in range(repeats)]
    return statistics.median(runs), runs


def record(name: str, **values: Any) -> None:
    LOG[name] = values
    print(name, json.dumps(values), flush=True)


def python_seconds(code: str, *args: str) -> tuple[float, str]:
    """A cold ``python -c code``: wall seconds and its output."""
    return timed([sys.executable, "-c", code, *args])


# ---------------------------------------------------------------------------------
# GPU


def database(data: Path, scratch: Path, name: str, sequences: int, seed: int
             ) -> tuple[Path, Path]:
    """A synthetic protein database (``synth.py``) as FASTA and as a ``swath makedb`` store."""
    fasta = scratch / f"{name}.fasta"
    if not fasta.exists():
        subprocess.run([sys.executable, str(data / "synth.py"), "protein", str(sequences),
                        str(seed), str(fasta)], check=True)
    store = scratch / f"{name}.swdb"
    if not store.exists():
        seconds, _ = timed([*SWATH, "makedb", str(fasta), str(store), "--no-progress"])
        record(f"makedb {name}", seconds=seconds)
    return fasta, store


def s1_search(data: Path, scratch: Path, repeats: int, cudasw: Path | None) -> None:
    fasta, store = database(data, scratch, "s1", 570_000, 7)
    queries = data / "search_queries_20.fasta"
    cells = 41_752 * 211_157_615

    def search(*extra: str) -> float:
        out = scratch / f"r{time.monotonic_ns()}.zarr"
        seconds, _ = timed([*SWATH, "search", str(queries), str(store), "-o", str(out),
                            "--device", "gpu", "--no-progress", *extra])
        return seconds

    first = search()
    seconds, runs = median_of(repeats, search)
    record("S1 swath search, cold process", seconds=seconds, runs=runs, first_run=first,
           tcups=cells / seconds / 1e12)
    imports, _ = python_seconds("import swath.cli, swath.engine.search, zarr, dask, cupy")
    record("S1 imports (cold python -c)", seconds=imports)
    anatomy(queries, store, scratch)
    if cudasw is not None:
        cdb = scratch / "cudasw" / "s1"
        if not cdb.parent.exists():
            cdb.parent.mkdir()
            timed([str(cudasw / "makedb"), str(fasta), str(cdb)])

        def peer() -> float:
            seconds, output = timed([str(cudasw / "align"), "--query", str(queries), "--db",
                                     str(cdb), "--top", "10", "--uploadFull", "--dpx",
                                     "--verbose", "--tsv", "--of", str(scratch / "cw.tsv")])
            LOG.setdefault("cudasw output", output[-1500:])
            return seconds

        seconds, runs = median_of(repeats, peer)
        record("S1 CUDASW++4.0 align --dpx, whole command", seconds=seconds, runs=runs,
               reported=re.findall(r".*(?:GCUPS|[Tt]ime).*", LOG["cudasw output"])[-6:])
    on_scheduler(queries, store, scratch, repeats)


ANATOMY = """
import sys, time
t0 = time.perf_counter()
import numpy as np, cupy
import swath
from swath.engine import search as engine
from swath.kernels.gpu.scores import DeviceTargets, score_queries
from swath.storage.database import Database
t_import = time.perf_counter()
cupy.zeros(1); cupy.cuda.Device().synchronize()
t_context = time.perf_counter()
sc = swath.Scoring.protein("BLOSUM62", 11, 1)
qs = swath.sequences.read_sequences(sys.argv[1], sc.alphabet)
db = Database.open(sys.argv[2])
parts = [db.partition(p) for p in range(db.partitions)]
t_read = time.perf_counter()
targets = [DeviceTargets.upload(r, o) for r, o, _ in parts]
cupy.cuda.Device().synchronize()
t_upload = time.perf_counter()
first = score_queries(targets[0], list(qs)[:2], sc, "local"); first.get()
t_load = time.perf_counter()
rows = [score_queries(t, list(qs), sc, "local") for t in targets]
cupy.cuda.Device().synchronize()
t_kernels = time.perf_counter()
print(f"imports {t_import - t0:.3f} context {t_context - t_import:.3f} "
      f"read {t_read - t_context:.3f} upload {t_upload - t_read:.3f} "
      f"kernel-load {t_load - t_upload:.3f} kernels {t_kernels - t_load:.3f}")
"""


def anatomy(queries: Path, store: Path, scratch: Path) -> None:
    """One search's steps, one after another in one process (the CLI overlaps some)."""
    _, output = python_seconds(ANATOMY, str(queries), str(store))
    steps = dict(zip(*[iter(output.split())] * 2, strict=True))
    record("S1 anatomy, one process", **{k: float(v) for k, v in steps.items()})
    # top hits, traceback and writes: the engine's log of a warm in-process search
    code = ("import sys, time, logging, swath\n"
            "swath.search(sys.argv[1], sys.argv[2], store=sys.argv[3] + '/w.zarr', "
            "device='gpu')\n"
            "t = time.perf_counter()\n"
            "swath.search(sys.argv[1], sys.argv[2], store=sys.argv[3] + '/x.zarr', "
            "device='gpu')\n"
            "print(f'warm {time.perf_counter() - t:.3f}')\n")
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        _, output = python_seconds(code, str(queries), str(store), tmp)
    record("S1 second search in the same process (partitions resident)",
           seconds=float(re.findall(r"warm (\S+)", output)[-1]))


CLUSTER = """
import sys, time
from dask_cuda import LocalCUDACluster
from distributed import Client
cluster = LocalCUDACluster(n_workers=1, threads_per_worker=2)
print(cluster.scheduler_address, flush=True)
time.sleep(3600)
"""


JOBS = """
import sys, time, swath
from distributed import Client
client = Client(sys.argv[3])
for k in range(int(sys.argv[5])):
    t = time.perf_counter()
    swath.search(sys.argv[1], sys.argv[2], client=client, store=f"{sys.argv[4]}/{k}.zarr",
                 device="gpu")
    print(f"job {time.perf_counter() - t:.3f}", flush=True)
"""


def on_scheduler(queries: Path, store: Path, scratch: Path, repeats: int) -> None:
    """The same search on a running dask-cuda cluster: the first job (the worker loads its
    kernels and partitions) and the next ones."""
    server = subprocess.Popen([sys.executable, "-c", CLUSTER], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        address = server.stdout.readline().strip()

        def search() -> float:
            out = scratch / f"c{time.monotonic_ns()}.zarr"
            seconds, _ = timed([*SWATH, "search", str(queries), str(store), "-o", str(out),
                                "--device", "gpu", "--no-progress", "--scheduler", address])
            return seconds

        first = search()
        seconds, runs = median_of(repeats, search)
        record("S1 swath search --scheduler (running dask-cuda worker)", seconds=seconds,
               runs=runs, first_job=first)
        with tempfile.TemporaryDirectory(dir=scratch) as tmp:
            _, output = python_seconds(JOBS, str(queries), str(store), address, tmp,
                                       str(repeats))
        jobs = [float(x) for x in re.findall(r"job (\S+)", output)]
        record("S1 swath.search jobs on the running cluster, submission to complete store",
               seconds=statistics.median(jobs), runs=jobs)
    finally:
        server.kill()


def genomes(data: Path) -> tuple[Path, Path]:
    return data / "e.coli-K12.fasta.gz", data / "e.coli-EC590.fasta.gz"


ENGINE_L1 = """
import sys, time, swath
from swath.engine.longpair import align_pair
from swath.sequences import read_sequences
sc = swath.Scoring.dna(2, -3, 5, 2)
a, b = (read_sequences(p, sc.alphabet, limit=1)[0] for p in sys.argv[1:3])
align_pair(None, a[:50000], b[:50000], sc, mode="local", device="gpu", tile_size=None,
           strip=None, client=None, names=("a", "b"), traceback=False)
for _ in range(2):
    t = time.perf_counter()
    r = align_pair(None, a, b, sc, mode="local", device="gpu", tile_size=None, strip=None,
                   client=None, names=("a", "b"), traceback=False)
    print(f"engine {time.perf_counter() - t:.3f} score {r.score}", flush=True)
"""


def l1_scores(data: Path, repeats: int) -> None:
    a, b = genomes(data)
    _, output = python_seconds(ENGINE_L1, str(a), str(b))
    engine = min(float(x) for x in re.findall(r"engine (\S+)", output))

    def cli() -> float:
        seconds, out = timed([*SWATH, "align", str(a), str(b), "--dna", "--score-only",
                              "--device", "gpu", "--format", "json", "--no-progress"])
        LOG["L1 cli output"] = out[-400:]
        return seconds

    seconds, runs = median_of(max(1, repeats - 1), cli)
    record("L1 swath align --score-only", seconds=seconds, runs=runs, engine=engine,
           ratio=seconds / engine, cli_output=LOG["L1 cli output"])


PAIR = """
import sys, time
t0 = time.perf_counter()
import swath
from swath.sequences import read_sequences
sc = swath.Scoring.dna(2, -3, 5, 2)
a = read_sequences(sys.argv[1], sc.alphabet, limit=1)[0][1_000_000:1_120_000]
b = read_sequences(sys.argv[2], sc.alphabet, limit=1)[0][1_000_000:1_122_000]
t1 = time.perf_counter()
aln = swath.align(a, b, scoring=sc, device="gpu")
t2 = time.perf_counter()
print(f"cold-call {t2 - t1:.3f} from-start {t2 - t0:.3f} score {aln.score}", flush=True)
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    again = swath.align(a, b, scoring=sc, device="gpu")
    assert again == aln
    print(f"warm {time.perf_counter() - t:.3f}", flush=True)
"""


def pair(data: Path, repeats: int) -> None:
    a, b = genomes(data)
    python_seconds(PAIR, str(a), str(b), "0")        # CuPy's kernel cache filled
    colds = [python_seconds(PAIR, str(a), str(b), "0")[0] for _ in range(repeats)]
    _, output = python_seconds(PAIR, str(a), str(b), "5")
    warm = [float(x) for x in re.findall(r"warm (\S+)", output)]
    record("P 120 kbp x 122 kbp swath.align on the GPU", cold_process_wall=statistics.median(
        colds), cold_runs=colds, warm_median=statistics.median(warm), warm_runs=warm,
        last_output=output[-300:])


# ---------------------------------------------------------------------------------
# CPU


KERNEL_S2 = """
import sys, time, statistics
import numpy as np, swath
from swath.kernels.cpu import score_many
from swath.sequences import read_sequences
sc = swath.Scoring.protein("BLOSUM62", 11, 1)
q = read_sequences(sys.argv[1], sc.alphabet)
db = read_sequences(sys.argv[2], sc.alphabet)
score_many(q.residues, q.offsets, db.residues, db.offsets, sc, "local")
runs = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    score_many(q.residues, q.offsets, db.residues, db.offsets, sc, "local")
    runs.append(time.perf_counter() - t)
print("kernel", statistics.median(runs), runs)
"""


def s2_search(data: Path, scratch: Path, repeats: int) -> None:
    import swath
    from swath.sequences import read_sequences

    fasta, store = database(data, scratch, "s2", 20_000, 3)
    queries = scratch / "q20x300.fasta"
    alphabet = swath.Scoring.protein().alphabet
    full = read_sequences(data / "search_queries_20.fasta", alphabet)
    with open(queries, "w") as out:
        for name, codes in zip(full.names, full, strict=True):
            out.write(f">{name}\n{alphabet.decode(codes[:300])}\n")
    _, output = python_seconds(KERNEL_S2, str(queries), str(fasta), str(repeats))
    kernel = float(output.split()[1])

    def search() -> float:
        out = scratch / f"r{time.monotonic_ns()}.zarr"
        seconds, _ = timed([*SWATH, "search", str(queries), str(store), "-o", str(out),
                            "--device", "cpu", "--no-progress"])
        return seconds

    first = search()
    seconds, runs = median_of(repeats, search)
    record("S2 swath search --device cpu, cold process", seconds=seconds, runs=runs,
           first_run=first, kernel=kernel, ratio=seconds / kernel,
           cores=os.cpu_count())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("gpu", "cpu"))
    parser.add_argument("--data", type=Path, required=True,
                        help="synth.py, search_queries_20.fasta, the two genomes")
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--scratch", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cudasw", type=Path, default=None, help="CUDASW++4.0 binaries")
    parser.add_argument("--only", default="", help="comma-separated: S1, L1, P (gpu)")
    args = parser.parse_args()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="swath-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    try:
        if args.kind == "cpu":
            s2_search(args.data, scratch, args.repeats)
        else:
            for name, run in (("P", lambda: pair(args.data, args.repeats)),
                              ("L1", lambda: l1_scores(args.data, args.repeats)),
                              ("S1", lambda: s1_search(args.data, scratch, args.repeats,
                                                       args.cudasw))):
                if not only or name in only:
                    run()
    finally:
        (args.out / "whole_commands.json").write_text(json.dumps(LOG, indent=1))


if __name__ == "__main__":
    main()
