"""Batched alignment with traceback on the GPU: many pairs, CIGARs built on the device.

# N: pairs (query k against target k, or the chosen rows[k] and cols[k] of two sets), m, n:
# their lengths, residues: uint8 codes.

Local and semiglobal pairs whose cells fit 16 bits (with ``gap_extend >= 1`` and an
alphabet of at most ``plan.ENDS_ALPHABET`` letters: DNA) first go through ends.cu, two
pairs a register: their scores, and each a window of its matrix with a band of diagonals
that holds its traced path. Their direction codes are then computed in that band only,
again two pairs a register (codes16.cu). The other pairs are computed whole, in 32-bit
cells (traceback.cu).

For the codes, pairs are put in a processing order (``plan``). Pairs are taken in
consecutive batches whose direction codes fit ``memory_budget`` bytes (half of it each,
when the codes go in two waves, see ``pipeline``). The walk writes each CIGAR into a
slot of its own; one last kernel packs them in the caller's order (``launches``). A pair
whose direction codes alone exceed the budget is aligned by the CPU twin (identical
results).

Modules: ``plan`` (the processing order and where each pair's buffers go, made on the
GPU), ``elementwise`` (the plans' per-pair arithmetic), ``launches`` (the kernels of each
phase), ``streams`` (the streams they run on), ``pipeline`` (the upload in parts and the
phases beside it: ``align_batch`` and ``score_ends``).
"""

from swath.kernels.gpu.traceback.launches import cigar_counts
from swath.kernels.gpu.traceback.pipeline import align_batch, score_ends, warm_up

__all__ = ["align_batch", "cigar_counts", "score_ends", "warm_up"]
