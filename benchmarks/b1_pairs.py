"""The pairs of workload B1 (``../shared/bench/README.md``), shared by the GPU and CPU
benchmarks: queries of 100 to 300 bp, targets of 200 to 1,000 bp that carry a mutated
copy of their query (about 10 % substitutions and small indels)."""

from __future__ import annotations

import numpy as np


def make_pairs(count: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The first ``count`` pairs of the generator seeded ``seed`` (B1: seed 1)."""
    rng = np.random.default_rng(seed)
    queries, targets = [], []
    for m, n in zip(rng.integers(100, 301, count), rng.integers(200, 1001, count), strict=True):
        query = rng.integers(0, 4, m).astype(np.uint8)
        copy = query.copy()
        copy[rng.random(m) < 0.08] = rng.integers(0, 4)
        for _ in range(int(rng.integers(0, 3))):
            at = int(rng.integers(0, len(copy)))
            copy = (np.insert(copy, at, rng.integers(0, 4, rng.integers(1, 4)))
                    if rng.random() < 0.5 else np.delete(copy, slice(at, at + 3)))
        copy = copy[: n]
        target = rng.integers(0, 4, n).astype(np.uint8)
        at = int(rng.integers(0, n - len(copy) + 1))
        target[at:at + len(copy)] = copy
        queries.append(query)
        targets.append(target)
    return queries, targets


def packed(seqs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Sequences end to end, and their (count + 1) offsets."""
    return (np.concatenate(seqs),
            np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64))
