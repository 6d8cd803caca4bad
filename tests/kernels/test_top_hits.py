"""The top-k order of hits (``swath.kernels.top_hits``), on the host and on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels.top_hits import PADDING, top


def test_top_k_orders_by_score_then_lowest_id():
    scores = np.array([[5, 9, 9, 1], [2, 2, 2, 2]])
    ids = np.array([[10, 3, 1, 7], [4, 3, 2, 1]])
    top_scores, top_ids = top(scores, ids, 3)
    assert top_ids.tolist() == [[1, 3, 10], [1, 2, 3]]
    assert top_scores.tolist() == [[9, 9, 5], [2, 2, 2]]
    padded_scores, padded_ids = top(scores[:, :2], ids[:, :2], 3)
    assert padded_scores[:, 2].tolist() == [PADDING, PADDING]
    assert padded_ids[:, 2].tolist() == [-1, -1]


def test_top_k_keys_at_the_limits():
    """The sort key holds every score above int32's minimum (the padding ``PADDING`` is
    the next one up) and ids below 2**32 - 1."""
    best = np.iinfo(np.int32).max
    scores = np.array([[best, PADDING + 1, -1, 0, best, PADDING + 1]])
    ids = np.array([[5, 0, 2**32 - 2, 7, 3, 1]])
    got_scores, got_ids = top(scores, ids, 8)
    assert got_scores.tolist() == [[best, best, 0, -1, PADDING + 1, PADDING + 1, PADDING,
                                    PADDING]]
    assert got_ids.tolist() == [[3, 5, 7, 2**32 - 2, 0, 1, -1, -1]]


def resident_top(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The GPU backend's top hits of ``scores`` against targets of these ``ids`` (all of
    one length: their device order is theirs)."""
    import cupy

    from swath.kernels import get_backend

    resident = get_backend("gpu").resident
    assert resident is not None
    offsets = np.arange(len(ids) + 1, dtype=np.int64)
    targets = resident.upload(np.zeros(len(ids), dtype=np.uint8), offsets, ids)
    return resident.top_hits(cupy.asarray(scores), targets, k)


@pytest.mark.gpu
def test_top_k_on_the_gpu_equals_the_host():
    rng = np.random.default_rng(3)
    scores = rng.integers(-3, 4, (6, 500)).astype(np.int32)     # many ties
    ids = rng.permutation(10_000)[:500].astype(np.int64)
    for k in (1, 7, 500, 600):
        want = top(scores, np.broadcast_to(ids, scores.shape), k)
        got = resident_top(scores, ids, k)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    best = np.iinfo(np.int32).max      # the key's limits, as test_top_k_keys_at_the_limits
    scores = np.array([[best, PADDING + 1, -1, 0, best, PADDING + 1]], dtype=np.int32)
    ids = np.array([5, 0, 2**32 - 2, 7, 3, 1], dtype=np.int64)
    want = top(scores, np.broadcast_to(ids, scores.shape), 8)
    got = resident_top(scores, ids, 8)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
