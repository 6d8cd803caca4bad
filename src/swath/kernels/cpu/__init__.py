"""CPU kernels (numba): the backend every machine has."""

from swath.kernels.cpu.scores import score_many
from swath.kernels.cpu.traceback import align_pair

__all__ = ["align_pair", "score_many"]
