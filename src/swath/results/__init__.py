"""What the workloads return, and how each prints: one module per workload.

:mod:`swath.results.search` (``SearchResult``: hits per query), :mod:`swath.results.allpairs`
(``AllPairsResult``: the kept pairs, scores, clusters) and :mod:`swath.results.longpair`
(``PairScore``, and the printers of a long pair's alignment or score). A result reads
its store when made; these modules load the store modules (and Zarr) only then, so the
workload registry that names their printers stays light to import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from swath.errors import InvalidParameter

Result = TypeVar("Result")


def printed(printers: Mapping[str, Callable[[Result], Iterator[str]]], format: str,
            result: Result) -> Iterator[str]:
    """``result``'s text in ``format``, by the printer of that name in ``printers``.

    Raises
    ------
    InvalidParameter
        ``format`` names none of ``printers``.
    """
    if format not in printers:
        raise InvalidParameter(f"format must be one of {', '.join(printers)}, got {format!r}")
    return printers[format](result)
