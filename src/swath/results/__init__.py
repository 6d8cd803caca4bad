"""What the workloads return, and how each prints: one module per workload.

:mod:`swath.results.search` (``SearchResult``: hits per query), :mod:`swath.results.allpairs`
(``AllPairsResult``: the kept pairs, scores, clusters) and :mod:`swath.results.longpair`
(``PairScore``, and the printers of a long pair's alignment or score). A result reads
its store when made; these modules load the store modules (and Zarr) only then, so the
workload registry that names their printers stays light to import. The formats every
workload shares (SAM, PAF, BLAST's tabular rows) are written by
:mod:`swath.results.alignments`; a printer is ``printer(result, options)``, ``options`` a
:class:`~swath.results.alignments.PrintOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import TypeVar

from swath.errors import InvalidParameter
from swath.results.alignments import PrintOptions, tabular_format

Result = TypeVar("Result")
Held = TypeVar("Held")
Opened = TypeVar("Opened")


def held_or_opened(store: str | Held, held: type[Held], open_store: Callable[[str], Opened]
                   ) -> tuple[Held | Opened, str | None]:
    """Where a result reads from: ``store`` itself where the result is held in memory (a
    ``held``), with no path; else the store at path ``store``, opened, and the path."""
    if isinstance(store, held):
        return store, None
    assert isinstance(store, str)
    return open_store(store), store


def printed(printers: Mapping[str, Callable[[Result, PrintOptions], Iterator[str]]],
            format: str, result: Result, options: PrintOptions = PrintOptions(), *,
            named_columns: bool = False) -> Iterator[str]:
    """``result``'s text in ``format``, by the printer of that name in ``printers``,
    written as ``options`` say; a tabular format may name its columns
    (``"6 qseqid sseqid score"``: :func:`~swath.results.alignments.tabular_format`)
    where its tsv printer takes them (``named_columns``).

    Raises
    ------
    InvalidParameter
        ``format`` names none of ``printers``, or columns where they are not taken.
    """
    name, columns = tabular_format(format)
    if name not in printers:
        raise InvalidParameter(f"format must be one of {', '.join(printers)}, got {format!r}")
    if columns is not None:
        if not named_columns:
            raise InvalidParameter(f"format {format!r}: these results print their own "
                                   "tsv columns; named columns are for search and pairs")
        options = replace(options, columns=columns)
    return printers[name](result, options)
