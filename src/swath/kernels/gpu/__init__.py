"""GPU kernels (CuPy; CUDA C sources beside this file, compiled on first use): a
:class:`~swath.kernels.backend.Backend` with targets resident on the GPU (``resident``)
and tile rows streaming between GPUs (``slabs``).

Importing this package needs CuPy but no GPU work; ``swath.kernels.get_backend``
imports it only when CuPy finds a GPU.

Every function here goes through :func:`~swath.kernels.gpu.errors.translate_errors`:
the GPU running out of memory leaves as :class:`~swath.errors.GpuOutOfMemory`, one line
saying how much was asked and free.
"""

from __future__ import annotations

from typing import Final

from swath.kernels.backend import ResidentTargets, SlabStreaming
from swath.kernels.gpu import band, scores, tiles, traceback
from swath.kernels.gpu import resident as _resident
from swath.kernels.gpu import slabs as _slabs
from swath.kernels.gpu.errors import translate_errors

__all__ = ["align_batch", "band_scores", "band_worth", "cigar_counts", "codes", "hsps", "name",
           "resident", "score_ends", "score_many", "slabs", "split_boxes", "surplus",
           "tile_batch", "tile_forward", "tile_scores", "trace_residues"]

name: Final = "gpu"
band_worth = 1.0        # the banded phase is one launch a tile, the full score phase one a query
split_boxes = False     # the score phase costs a launch per query row of a box, its cells little
# about 4 bytes of device memory a residue (the walks' CIGAR slots, the packed text) and
# fewer of host memory than the CPU's; direction codes stay within traceback.MEMORY_BUDGET
trace_residues = 1 << 25
resident: ResidentTargets = _resident
slabs: SlabStreaming = _slabs
codes = None
hsps = None
# the surplus scheme's terminal gaps cost apart: its score phase would go through
# traceback.cu's fill, one pair a group, slower than tracing every pair (--iddef 2)
surplus = None

score_many = translate_errors(scores.score_many)
align_batch = translate_errors(traceback.align_batch)
cigar_counts = translate_errors(traceback.cigar_counts)
band_scores = translate_errors(band.band_scores)
score_ends = translate_errors(traceback.score_ends)
tile_forward = translate_errors(tiles.tile_forward)
tile_scores = translate_errors(tiles.tile_scores)
tile_batch = translate_errors(tiles.tile_batch)
