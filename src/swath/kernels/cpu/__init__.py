"""CPU kernels (numba): the backend every machine has, a
:class:`~swath.kernels.backend.Backend` whose tiles give direction codes (``codes``)."""

from typing import Final

from swath.identity import cigar_counts
from swath.kernels.backend import FurtherAlignments, SurplusFloors, TileCodes
from swath.kernels.cpu import gapless, tiles
from swath.kernels.cpu import hsps as _hsps
from swath.kernels.cpu.band import band_scores
from swath.kernels.cpu.scores import score_many
from swath.kernels.cpu.tiles import tile_batch, tile_forward, tile_scores
from swath.kernels.cpu.traceback import align_batch, score_ends

__all__ = ["align_batch", "band_scores", "band_worth", "cigar_counts", "codes", "hsps", "name",
           "resident", "score_ends", "score_many", "slabs", "split_boxes", "surplus",
           "tile_batch", "tile_forward", "tile_scores", "trace_residues"]

name: Final = "cpu"
# the band is a scalar loop, the full score phase 16-bit lanes: the band must skip most cells
band_worth = 1 / 16
split_boxes = True      # the score phase costs its cells
# about 7 bytes of host memory a residue (gathered residues, CIGAR scratch, their runs)
trace_residues = 1 << 24
resident = None
slabs = None
codes: TileCodes = tiles
hsps: FurtherAlignments = _hsps
# a 16-bit score phase and gapless scores cost about a fifth of tracing every pair
surplus: SurplusFloors = gapless
