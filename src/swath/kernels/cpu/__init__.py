"""CPU kernels (numba): the backend every machine has."""

from swath.identity import cigar_counts
from swath.kernels.cpu.band import band_scores
from swath.kernels.cpu.scores import score_many
from swath.kernels.cpu.tiles import tile_batch, tile_forward, tile_scores
from swath.kernels.cpu.traceback import align_batch, score_ends

__all__ = ["align_batch", "band_scores", "cigar_counts", "score_ends", "score_many", "tile_batch",
           "tile_forward", "tile_scores"]
