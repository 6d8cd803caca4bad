"""The GPU score kernel's passes and launches: spilled rows of a long query, queries
streamed side by side over one launch or several (its results at the partitions' edge
lengths are in the backend suite, tests/kernels/test_backends.py)."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels import get_backend
from tests.helpers import DNA, EDGE_LENGTHS, PROTEIN, packed, related

pytestmark = pytest.mark.gpu


def test_long_query_against_long_target():
    """A 40,000-residue query against a 100,000-residue target: 79 passes, spilled rows."""
    rng = np.random.default_rng(4)
    query = rng.integers(0, 4, 40_000).astype(np.uint8)
    target = related(rng, query, 100_000, 4)
    for mode in ("local", "semiglobal"):
        gpu = get_backend("gpu").score_many(*packed([query]), *packed([target]), DNA, mode)
        from swath.kernels.cpu.traceback import align_pair

        assert gpu[0, 0] == align_pair(query, target, DNA, mode)[0]


@pytest.mark.parametrize("launch_rows", [32 * 1024, 640], ids=["one-launch", "launches"])
def test_local_query_streams_equal_cpu(monkeypatch, launch_rows):
    """Many queries in two local streams: queries starting inside a pass and going on
    over several, a thread's rows ending one query, lengths at SEGMENT's edges, W
    queries past 16 bits in both streams (the longest go first, one to each); in one
    launch or several."""
    from swath.kernels.gpu import scores

    monkeypatch.setattr(scores, "LAUNCH_ROWS", launch_rows)
    rng = np.random.default_rng(launch_rows)
    lengths = [1, 2, 31, 32, 33, 63, 64, 65, 200, 255, 256, 257, 511, 700, 1100, 1500]
    queries = [rng.integers(0, 20, m).astype(np.uint8) for m in lengths]
    queries += [PROTEIN.alphabet.encode("W" * 3000), PROTEIN.alphabet.encode("W" * 3100)]
    targets = [related(rng, q, n, 20) for q in queries[::3] for n in (20, 90, 300, 900)]
    targets += [queries[-1], queries[-1][:2000]]
    targets += [rng.integers(0, 20, n).astype(np.uint8) for n in EDGE_LENGTHS]
    targets += [rng.integers(0, 20, n).astype(np.uint8) for n in rng.integers(1, 1200, 100)]
    order = rng.permutation(len(queries))
    args = (*packed([queries[i] for i in order]), *packed(targets), PROTEIN, "local")
    gpu, cpu = get_backend("gpu").score_many(*args), get_backend("cpu").score_many(*args)
    np.testing.assert_array_equal(gpu, cpu)
