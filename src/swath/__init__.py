"""swath: exact Smith-Waterman and Needleman-Wunsch alignment with affine gaps.

A gap of length k costs ``gap_open + k * gap_extend``. Coordinates are 0-based and
end-exclusive.
"""

from swath.alignment import Alignment
from swath.api import align, allpairs, scores, search
from swath.errors import (
    BackendUnavailable,
    FormatVersionError,
    GpuOutOfMemory,
    GpuUnavailable,
    InputNotFound,
    InvalidInput,
    InvalidParameter,
    InvalidSequence,
    KernelCompileError,
    StoreIncomplete,
    StoreLocked,
    StoreNotFound,
    SwathError,
    UnknownStatistics,
)
from swath.pairs import AllPairsResult
from swath.scoring import Alphabet, Scoring

__version__ = "0.1.0"

__all__ = [
    "Alignment",
    "AllPairsResult",
    "Alphabet",
    "BackendUnavailable",
    "FormatVersionError",
    "GpuOutOfMemory",
    "GpuUnavailable",
    "InputNotFound",
    "InvalidInput",
    "InvalidParameter",
    "InvalidSequence",
    "KernelCompileError",
    "Scoring",
    "StoreIncomplete",
    "StoreLocked",
    "StoreNotFound",
    "SwathError",
    "UnknownStatistics",
    "__version__",
    "align",
    "allpairs",
    "scores",
    "search",
]
