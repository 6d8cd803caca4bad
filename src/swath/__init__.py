"""swath: exact Smith-Waterman and Needleman-Wunsch alignment with affine gaps.

A gap of length k costs ``gap_open + k * gap_extend``. Coordinates are 0-based and
end-exclusive.
"""

from typing import TYPE_CHECKING

from swath._version import __version__
from swath.alignment import Alignment
from swath.api import (
    FORMATS,
    align,
    align_pairs,
    allpairs,
    format_alignment,
    makedb,
    open,
    report,
    resume,
    score,
    scores,
    search,
    use_threads,
    verify,
    warm_up,
)
from swath.constants import MODES
from swath.engine.cluster import Cluster
from swath.errors import (
    BackendUnavailable,
    ClusterNotStarted,
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
    UnguardedMain,
    UnknownStatistics,
)
from swath.kernels import DEVICES
from swath.results.alignments import COLUMNS as TSV_COLUMNS
from swath.results.alignments import PrintOptions, tabular_format
from swath.scoring import Alphabet, Scoring
from swath.sequences import read_sequences

if TYPE_CHECKING:
    from swath.results.allpairs import AllPairsResult
    from swath.results.longpair import PairScore
    from swath.results.pairs import PairsResult
    from swath.results.search import SearchResult

# the result classes and their column names, whose modules load their store modules (and
# Zarr) when a result is read: named here, imported when first asked for, so that
# ``import swath`` stays light
_RESULTS = {"AllPairsResult": ("swath.results.allpairs", "AllPairsResult"),
            "PairScore": ("swath.results.longpair", "PairScore"),
            "PairsResult": ("swath.results.pairs", "PairsResult"),
            "SearchResult": ("swath.results.search", "SearchResult"),
            "SEARCH_COLUMNS": ("swath.results.search", "COLUMNS"),
            "ALLPAIRS_COLUMNS": ("swath.results.allpairs", "TABLE_COLUMNS"),
            "PAIRS_COLUMNS": ("swath.results.pairs", "COLUMNS")}


def __getattr__(name: str) -> object:
    """The result classes (``AllPairsResult``, ``PairScore``, ``PairsResult``,
    ``SearchResult``) and the columns of their tables (``SEARCH_COLUMNS``,
    ``ALLPAIRS_COLUMNS``, ``PAIRS_COLUMNS``: what ``to_pandas`` names), imported when
    first asked for."""
    if name in _RESULTS:
        import importlib

        module, attribute = _RESULTS[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'swath' has no attribute {name!r}")

__all__ = [
    "ALLPAIRS_COLUMNS",
    "DEVICES",
    "FORMATS",
    "MODES",
    "PAIRS_COLUMNS",
    "SEARCH_COLUMNS",
    "TSV_COLUMNS",
    "Alignment",
    "AllPairsResult",
    "Alphabet",
    "BackendUnavailable",
    "Cluster",
    "ClusterNotStarted",
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
    "PairScore",
    "PairsResult",
    "PrintOptions",
    "Scoring",
    "SearchResult",
    "StoreDamaged",
    "StoreIncomplete",
    "StoreLocked",
    "StoreNotFound",
    "SwathError",
    "UnguardedMain",
    "UnknownStatistics",
    "__version__",
    "align",
    "align_pairs",
    "allpairs",
    "format_alignment",
    "makedb",
    "open",
    "read_sequences",
    "report",
    "resume",
    "score",
    "scores",
    "search",
    "tabular_format",
    "use_threads",
    "verify",
    "warm_up",
]
