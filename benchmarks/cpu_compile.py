"""How long numba takes to compile the CPU score kernels on their first call: what a
user's first command of a kind waits for, and the tests pay once for every mode and width.

Each measurement runs in a fresh process with an empty ``NUMBA_CACHE_DIR`` of its own:
``score_many`` of one 3,100-residue query (local mode compiles its 8, 16 and 32-bit
kernels, global and semiglobal their 16 and 32-bit ones), and the all-pairs band kernel
at 16 bits. Printed: seconds of the first call, less a second call's (the kernels' run).

    python benchmarks/cpu_compile.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CALL = {
    "score_many": """
from swath.kernels.cpu import score_many
from swath.scoring import Scoring
from swath.sequences import sequence_set
protein = Scoring.protein()
query = sequence_set(["W" * 3100], protein.alphabet)
targets = sequence_set(["W" * 3100, "W" * 10, "ACDEFGHIKL" * 5], protein.alphabet)
def call():
    score_many(query.residues, query.offsets, targets.residues, targets.offsets,
               protein, MODE)
""",
    "band": """
import numpy as np
from swath.kernels.cpu.band import band_scores
from swath.scoring import Scoring
from swath.sequences import sequence_set
dna = Scoring.dna()
rng = np.random.default_rng(0)
seqs = sequence_set(["".join(rng.choice(list("ACGT"), n)) for n in (100, 120, 130)],
                    dna.alphabet)
def call():
    band_scores(seqs.residues, seqs.offsets, seqs.residues, seqs.offsets,
                np.full((3, 3), -20), np.full((3, 3), 20), dna)
""",
}

TIMED = """
import time
started = time.perf_counter()
call()
first = time.perf_counter() - started
started = time.perf_counter()
call()
print(round(first - (time.perf_counter() - started), 2))
"""


def compile_seconds(kernel: str, mode: str = "") -> float:
    """The first call's seconds less the second's, in a process with an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        code = CALL[kernel].replace("MODE", repr(mode)) + TIMED
        done = subprocess.run([sys.executable, "-c", code],
                              env=os.environ | {"NUMBA_CACHE_DIR": cache},
                              capture_output=True, text=True, check=True)
        return float(done.stdout.split()[-1])


def main() -> None:
    for mode in ("local", "global", "semiglobal"):
        print(f"score_many, {mode}: {compile_seconds('score_many', mode):.2f} s", flush=True)
    print(f"band kernel, 16 bits: {compile_seconds('band'):.2f} s", flush=True)


if __name__ == "__main__":
    main()
