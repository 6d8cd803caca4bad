"""The all-pairs gathers alone, without a GPU: ``finalize`` of a synthetic store.

A store of ``--sequences`` made-up sequences in blocks of 64 whose ``--tiles`` tiles each
keep ``--kept`` pairs (random indices, names of A2's shape, CIGARs of 5 to 13 letters),
then ``AllPairsStore.finalize()`` in this process, timed and profiled (the functions of
most time, cumulative). ``--chunk`` sets the root's chunk of pairs (``PAIR_CHUNK``; scale
it with ``--kept`` to keep A2's number of gathers: A2 is 325 tiles of about 67,000 kept
pairs in chunks of 1,048,576).

    python benchmarks/allpairs_gather.py --tiles 325 --kept 6700 --chunk 100000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import time

import numpy as np

import swath.storage.allpairs as layout
from swath.scoring import Scoring
from swath.sequences import sequence_set


def synthetic_store(path: str, tiles: int, kept: int, seed: int = 1) -> layout.AllPairsStore:
    """A store whose ``tiles`` tiles (at least; blocks of 64) are written, ``kept`` pairs
    each."""
    rng = np.random.default_rng(seed)
    blocks = int(np.ceil((np.sqrt(8 * tiles + 1) - 1) / 2))
    n = blocks * 64
    dna = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    names = [f"{rng.bytes(16).hex()};size={k}" for k in range(n)]
    seqs = sequence_set(["ACGT" * 10] * n, dna.alphabet, names=names)
    store = layout.AllPairsStore.create(path, seqs, block=64, scores=False, clusters=False)
    cigars = np.array([f"{a}={b}{'ID'[a % 2]}{c}=" for a, b, c in
                       rng.integers(1, 300, (1000, 3))])
    for t in range(store.tiles):
        query = rng.integers(0, n - 1, kept)
        target = np.minimum(query + rng.integers(1, n, kept), n - 1)
        picked = cigars[rng.integers(0, len(cigars), kept)]
        pairs = {name: np.zeros(kept, dtype) for name, dtype in layout.TILE_FIELDS.items()}
        pairs |= {"query": query, "target": target,
                  "cigar_length": np.array([len(c) for c in picked], np.int32),
                  layout.CIGAR_TEXT: np.frombuffer("".join(picked).encode(), np.uint8)}
        store.write_tile(t, pairs, dict.fromkeys(layout.COUNTERS, 0) | {"kept": kept}, [])
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, default=325)
    parser.add_argument("--kept", type=int, default=6700)
    parser.add_argument("--chunk", type=int, default=layout.PAIR_CHUNK)
    parser.add_argument("--functions", type=int, default=25)
    args = parser.parse_args()
    layout.PAIR_CHUNK = args.chunk
    scratch = tempfile.mkdtemp()
    try:
        started = time.perf_counter()
        store = synthetic_store(f"{scratch}/a.zarr", args.tiles, args.kept)
        print(f"{store.tiles} tiles of {args.kept} kept pairs written in "
              f"{time.perf_counter() - started:.1f} s")
        store = layout.AllPairsStore.open(store.path, mode="r+", complete=False)
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        store.finalize()
        profile.disable()
        print(f"finalize: {time.perf_counter() - started:.2f} s")
        pstats.Stats(profile).sort_stats("cumtime").print_stats(args.functions)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
