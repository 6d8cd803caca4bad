"""The CUDA streams of a batch's phases, kept between batches."""

from __future__ import annotations

import cupy as cp
import numpy as np

# a stream's priority: the device's highest (the least int: CUDA clamps it into the
# device's range)
URGENT = int(np.iinfo(np.int32).min)
_STREAMS: dict[tuple[int, int], list[cp.cuda.Stream]] = {}   # by device and priority


def kept_stream(k: int, priority: int = 0) -> cp.cuda.Stream:
    """The current device's k-th kept stream of this priority: batches reuse their
    streams, since CuPy's memory pool keeps freed memory for reuse on the stream that
    freed it (a new stream every batch would take new memory every time)."""
    kept = _STREAMS.setdefault((cp.cuda.Device().id, priority), [])
    while len(kept) <= k:
        kept.append(cp.cuda.Stream(non_blocking=True, priority=priority))
    return kept[k]
