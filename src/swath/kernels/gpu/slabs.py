"""A long pair's tile column in slabs of rows on several GPUs of this host, each slab's
launch reading the row above as the launch of the slab above computes it (the ``slabs``
capability of the GPU backend; ``tiles.RowStream``).

# h x w: a slab; rows stream as int32 H and F, ``(2, w)``.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from swath.constants import Mode
from swath.kernels.backend import Boundary, RowStream, TileBest
from swath.kernels.gpu import tiles
from swath.kernels.gpu.errors import translate_errors
from swath.scoring import Scoring

row_stream = translate_errors(tiles.row_stream)


def _ours(stream: RowStream | None) -> tiles.RowStream | None:
    if stream is not None and not isinstance(stream, tiles.RowStream):
        raise TypeError(f"a row stream the GPU backend did not make: {type(stream).__name__}")
    return stream


@translate_errors
def tile_scores(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, strip: int,
                top: Boundary, left: Boundary, *,
                stream_in: RowStream | None, stream_out: RowStream | None
                ) -> tuple[np.ndarray, np.ndarray, TileBest]:
    """``tiles.tile_scores`` of a slab, in one launch, its row above from ``stream_in``
    (of ``top`` only the corner is read) and its last row to ``stream_out``."""
    return tiles.tile_scores(q, t, scoring, mode, strip, top, left,
                             stream_in=_ours(stream_in), stream_out=_ours(stream_out))


def on_device(device: int) -> cp.cuda.Device:
    """A context in which this thread's launches run on GPU ``device``."""
    return cp.cuda.Device(device)
