"""A1 on one GPU by tile task threads and block size, beside the CLI command's default.

Cold processes call ``swath.allpairs(FASTA, device="gpu", client=InProcess(threads,
"GPU"), block=B)`` (match 2, mismatch -3, gap 5 + 2, identity 0.97) and report the job's
seconds and the whole process's; ``swath allpairs`` runs first (its first run compiles
the kernels on a fresh host), then twice, and once at the end. Results go to
``$OUT/threads.json``.

    python benchmarks/allpairs_threads.py A1_5000.fasta
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIGS = ((1, 2048), (2, 2048), (3, 2048), (4, 2048), (6, 2048), (4, 1024), (8, 1024),
           (6, 1536))
CODE = """
import sys, time
import swath
from swath.engine.cluster import InProcess
threads, block, out, fasta = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
started = time.perf_counter()
result = swath.allpairs(fasta, scoring=swath.Scoring.dna(2, -3, 5, 2), min_identity=0.97,
                        store=out, device="gpu", client=InProcess(threads, "GPU"), block=block)
print("RESULT", time.perf_counter() - started, result.filtered["kept"])
"""


def run(command: list[str]) -> tuple[float, str]:
    """Wall seconds of a cold process, and its output."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, done.stdout + done.stderr


def main() -> None:
    fasta = sys.argv[1]
    scratch = Path(tempfile.mkdtemp())
    log: dict[str, list[object]] = {}

    def cli(tag: str) -> None:
        wall, text = run(["swath", "allpairs", fasta, "-o", str(scratch / f"{tag}.zarr"),
                          "--dna", "--min-identity", "0.97", "--device", "gpu", "--no-progress"])
        print("cli", tag, f"{wall:.2f}", text.strip().splitlines()[-1][:200], flush=True)
        log.setdefault("cli", []).append(wall)

    cli("warm")
    cli("first")
    cli("second")
    for threads, block in CONFIGS:
        for rep in range(2):
            store = scratch / f"t{threads}_{block}_{rep}.zarr"
            wall, text = run([sys.executable, "-c", CODE, str(threads), str(block), str(store),
                              fasta])
            result = next(line for line in text.splitlines() if line.startswith("RESULT"))
            _, job, kept = result.split()
            print(f"threads {threads} block {block}: wall {wall:.2f} job {float(job):.2f} "
                  f"kept {kept}", flush=True)
            log.setdefault(f"{threads}/{block}", []).append([wall, float(job)])
    cli("last")
    (Path(os.environ.get("OUT", ".")) / "threads.json").write_text(json.dumps(log, indent=1))


if __name__ == "__main__":
    main()
