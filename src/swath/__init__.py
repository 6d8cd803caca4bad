"""swath: exact Smith-Waterman and Needleman-Wunsch alignment with affine gaps.

A gap of length k costs ``gap_open + k * gap_extend``. Coordinates are 0-based and
end-exclusive.
"""

from swath.alignment import Alignment
from swath.api import align, allpairs, scores, search, verify
from swath.errors import (
    BackendUnavailable,
    FormatVersionError,
    GpuOutOfMemory,
    GpuUnavailable,
    InputChanged,
    InputNotFound,
    InvalidInput,
    InvalidParameter,
    InvalidSequence,
    KernelCompileError,
    OutputExists,
    StoreDamaged,
    StoreIncomplete,
    StoreLocked,
    StoreNotFound,
    SwathError,
    UnknownStatistics,
)
from swath.scoring import Alphabet, Scoring

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``AllPairsResult`` loads its store module (and Zarr) when first asked for, so that
    ``import swath`` stays light."""
    if name == "AllPairsResult":
        from swath.pairs import AllPairsResult

        return AllPairsResult
    raise AttributeError(f"module 'swath' has no attribute {name!r}")

__all__ = [
    "Alignment",
    "AllPairsResult",
    "Alphabet",
    "BackendUnavailable",
    "FormatVersionError",
    "GpuOutOfMemory",
    "GpuUnavailable",
    "InputChanged",
    "InputNotFound",
    "InvalidInput",
    "InvalidParameter",
    "InvalidSequence",
    "KernelCompileError",
    "OutputExists",
    "Scoring",
    "StoreDamaged",
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
    "verify",
]
