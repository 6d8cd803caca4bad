"""GPU kernels (CuPy; CUDA C sources beside this file, compiled on first use).

Importing this package needs CuPy but no GPU work; ``swath.kernels.get_backend``
imports it only when CuPy finds a GPU.
"""

from swath.kernels.gpu.scores import score_many
from swath.kernels.gpu.tiles import tile_batch, tile_forward, tile_scores
from swath.kernels.gpu.traceback import align_batch, score_ends

__all__ = ["align_batch", "score_ends", "score_many", "tile_batch", "tile_forward", "tile_scores"]
