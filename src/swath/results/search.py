"""What a search returns: hits per query, BLAST-like rows, and how they print.

The printers (:data:`PRINTERS`) are what ``swath inspect`` and ``swath search --outfmt``
print: ``tsv`` (BLAST's 12 tabular columns, 1-based inclusive, then the raw score and
the CIGAR), ``json`` (one object per hit and line), ``text`` (a pairwise view per hit),
``sam`` (the hit targets as references, each query a read: its best hit the primary
record, the others secondary) and ``paf`` (a line per hit). Each yields the output in
pieces that end with a newline.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from swath.alignment import Alignment, unpacked_cigars
from swath.results import held_or_opened, printed
from swath.results.alignments import (
    BLAST_COLUMNS,
    BLOCK_ROWS,
    TABULAR_COLUMNS,
    AlignedRows,
    PrintOptions,
    cigar_columns,
    paf_lines,
    sam_header,
    sam_lines,
    tabular_lines,
)

if TYPE_CHECKING:       # the store module (and Zarr) loads when a result is read
    from swath.scoring import Scoring
    from swath.sequences import SequenceSet
    from swath.storage.results import SearchStore


#: the columns of :meth:`SearchResult.to_pandas`: :data:`swath.PAIRS_COLUMNS` with each
#: hit's e-value and bit score (NaN where there are none)
COLUMNS = ("query_index", "target_index", "query_name", "target_name", "score", "evalue",
           "bitscore", "query_start", "query_end", "target_start", "target_end", "length",
           "matches", "mismatches", "gap_opens", "identity", "cigar")


@dataclass(frozen=True)
class Hit:
    """One database hit of a query: the target's index in the database, name, alignment."""

    target_id: int
    target_name: str
    score: int
    bitscore: float
    evalue: float
    alignment: Alignment


@dataclass(frozen=True)
class HeldHits:
    """A small search's hits held in this process (run without a store), read through
    the members of :class:`~swath.storage.results.SearchStore` that
    :class:`SearchResult` reads."""

    held_queries: SequenceSet
    held_hits: dict[str, np.ndarray]
    top_k: int
    scoring: Scoring
    mode: str
    database: str

    def queries(self) -> SequenceSet:
        return self.held_queries

    @property
    def ranks(self) -> int:
        """Hits a query has room for."""
        return int(self.held_hits["target"].shape[1])

    def hits(self) -> dict[str, np.ndarray]:
        """The hits, the CIGARs as strings (held packed, as a store keeps them)."""
        return self.held_hits | {"cigar": unpacked_cigars(self.held_hits["cigar"])}


def _open(path: str) -> SearchStore:
    """The finished store at ``path`` (its module, and Zarr, loaded now)."""
    from swath.storage.results import SearchStore

    return SearchStore.open(path)


class SearchResult:
    """The hits of a search: read from its result store, or held in this process for a
    small search run without one.

    Examples
    --------
    >>> import swath
    >>> res = swath.search(["MNRGDRTHFQVDAIG"], ["PPMNRGDRTHFQVDAIGKK", "MNRG"], top_k=5)
    >>> [(hit.target_name, hit.score) for hit in res.hits(0)]
    [('database[0]', 81), ('database[1]', 22)]
    >>> res.hits(0)[0].alignment.cigar
    '15='
    """

    def __init__(self, store: str | HeldHits) -> None:
        self.store: SearchStore | HeldHits
        self.path: str | None
        self.store, self.path = held_or_opened(store, HeldHits, _open)
        self.queries = self.store.queries()
        self.query_names = self.queries.names
        self._hits = self.store.hits()

    def __len__(self) -> int:
        return len(self.query_names)

    def __repr__(self) -> str:
        where = "held in memory" if self.path is None else f"store={self.path!r}"
        return f"SearchResult({len(self)} queries, top_k={self.store.top_k}, {where})"

    def hits(self, query_index: int) -> list[Hit]:
        """The hits of query ``query_index``, best first: by e-value, then score, as blastp
        orders them (by score where they have no e-values); coordinates 0-based, end
        exclusive."""
        h = {name: column[query_index] for name, column in self._hits.items()}
        mode = self.store.mode
        return [Hit(int(h["target"][r]), str(h["target_name"][r]), int(h["score"][r]),
                    float(h["bitscore"][r]), float(h["evalue"][r]),
                    Alignment(int(h["score"][r]), int(h["query_start"][r]),
                              int(h["query_end"][r]), int(h["target_start"][r]),
                              int(h["target_end"][r]), str(h["cigar"][r]), mode))
                for r in np.flatnonzero(h["target"] >= 0).tolist()]

    def to_table(self) -> list[tuple[object, ...]]:
        """BLAST tabular rows (``TABULAR_COLUMNS``): 1-based inclusive coordinates as BLAST
        prints them, then the raw score and the CIGAR."""
        rows: list[tuple[object, ...]] = []
        for qi, name in enumerate(self.query_names):
            for hit in self.hits(qi):
                a = hit.alignment
                rows.append((name, hit.target_name, 100 * a.identity, a.length,
                             a.mismatches, a.gap_opens, a.query_start + 1, a.query_end,
                             a.target_start + 1, a.target_end,
                             hit.evalue if not math.isnan(hit.evalue) else None,
                             hit.bitscore if not math.isnan(hit.bitscore) else None,
                             hit.score, a.cigar))
        return rows

    def aligned_rows(self, first: int = 0, last: int | None = None) -> AlignedRows:
        """The hits of queries ``first:last``, by query, best first, as the alignment
        writers (:mod:`swath.results.alignments`) take them, with the queries' sequences
        and the targets' lengths (read from the database)."""
        return _rows(self, first, last, _target_lengths(self))

    def to_pandas(self) -> Any:
        """The hits as a ``pandas.DataFrame``, a row a hit, by query, best first: the
        columns ``swath.SEARCH_COLUMNS``, named and placed as every
        result's ``to_pandas`` names them: ``query_index`` (the query's position in the
        input) and ``target_index`` (the target's in the database), coordinates 0-based
        and end exclusive, ``identity`` a fraction (needs pandas)."""
        import pandas as pd

        h = self._hits
        found = h["target"] >= 0
        query = np.nonzero(found)[0]
        cigars = h["cigar"][found].astype(object)
        counts = cigar_columns(cigars)
        columns = {"query_index": query, "target_index": h["target"][found],
                   "query_name": np.asarray(self.query_names, dtype=object)[query],
                   "target_name": h["target_name"][found].astype(object),
                   **{name: h[name][found] for name in ("score", "evalue", "bitscore",
                                                        "query_start", "query_end",
                                                        "target_start", "target_end")},
                   **{name: counts[name] for name in ("length", "matches", "mismatches",
                                                      "gap_opens", "identity")},
                   "cigar": cigars}
        return pd.DataFrame({name: columns[name] for name in COLUMNS})

    def lines(self, format: str = "tsv", options: PrintOptions = PrintOptions()
              ) -> Iterator[str]:
        """The hits as ``swath inspect`` prints them, in pieces ending with a newline.

        Parameters
        ----------
        format : {"tsv", "json", "text", "sam", "paf"}
            tsv: blastp's 12 tabular columns (``BLAST_COLUMNS``; ``"6 qseqid ..."`` names
            others, as blastp's ``-outfmt`` does); json: one object per hit and
            line; text: a pairwise view per hit; sam: SAM with a header (the hit targets
            as references, each query's best hit its primary record); paf: a line per
            hit.
        options : PrintOptions
            ``cigar_m``: SAM's and PAF's CIGARs with ``M`` for ``=`` and ``X``.

        Raises
        ------
        InvalidParameter
            ``format`` is none of these.
        """
        return printed(PRINTERS, format, self, options, named_columns=True)


def _rows(result: SearchResult, first: int, last: int | None,
          target_lengths: np.ndarray | None) -> AlignedRows:
    """The hits of queries ``first:last`` as AlignedRows; ``target_lengths``: the length
    of every hit's target, shaped as the hits (queries x ranks), or None for -1 (unknown:
    the tabular rows need no database)."""
    h = {name: column[first:last] for name, column in result._hits.items()}
    found = h["target"] >= 0
    query = np.nonzero(found)[0] + first
    lengths = np.diff(result.queries.offsets)
    alphabet = result.store.scoring.alphabet
    queries = result.queries

    def sequence(row: int) -> str:
        return alphabet.decode(queries[int(query[row])])

    return AlignedRows(
        np.asarray(result.query_names, dtype=object)[query], lengths[query],
        h["target_name"][found],
        (np.full(len(query), -1) if target_lengths is None
         else target_lengths[first:last][found]),
        h["score"][found], h["query_start"][found], h["query_end"][found],
        h["target_start"][found], h["target_end"][found], h["cigar"][found],
        result.store.mode, sequence, h["evalue"][found],
        h["bitscore"][found], query_quality=None if queries.qualities is None
        else lambda row: queries.quality(int(query[row])))


def _chunks(result: SearchResult, target_lengths: np.ndarray | None = None
            ) -> Iterator[AlignedRows]:
    """The hits in chunks of whole queries, about ``BLOCK_ROWS`` hits each."""
    step = max(1, BLOCK_ROWS // result.store.ranks)
    for first in range(0, len(result), step):
        yield _rows(result, first, first + step, target_lengths)


def tsv_lines(result: SearchResult, options: PrintOptions) -> Iterator[str]:
    """Tabular rows: blastp's 12 columns (``BLAST_COLUMNS``), or ``options.columns``."""
    columns = options.columns or BLAST_COLUMNS
    lengths = _target_lengths(result) if "slen" in columns else None
    for rows in _chunks(result, lengths):
        yield from tabular_lines(rows, columns)


def _target_lengths(result: SearchResult) -> np.ndarray:
    """The length of every hit's target (queries x ranks; -1 for an empty rank), from the
    database."""
    from swath.storage.database import Database

    targets = result._hits["target"]
    found = targets >= 0
    ids, where = np.unique(targets[found], return_inverse=True)
    lengths = np.full(targets.shape, -1, dtype=np.int64)
    lengths[found] = Database.open(result.store.database).record_lengths(ids)[where]
    return lengths


def sam_text(result: SearchResult, options: PrintOptions) -> Iterator[str]:
    """SAM: the hit targets as references, each query a read (its best hit primary)."""
    lengths = _target_lengths(result)
    found = result._hits["target"] >= 0
    yield from sam_header((result._hits["target_name"][found], lengths[found]),
                          options.command)
    for rows in _chunks(result, lengths):
        yield from sam_lines(rows, options)


def paf_text(result: SearchResult, options: PrintOptions) -> Iterator[str]:
    """PAF: a line per hit with an alignment."""
    for rows in _chunks(result, _target_lengths(result)):
        yield from paf_lines(rows, options)


def json_lines(result: SearchResult, options: PrintOptions) -> Iterator[str]:
    """One JSON object per hit, keyed by ``TABULAR_COLUMNS``."""
    for row in result.to_table():
        yield json.dumps(dict(zip(TABULAR_COLUMNS, row, strict=True))) + "\n"


def text_lines(result: SearchResult, options: PrintOptions) -> Iterator[str]:
    """Per hit: its e-value and bit score (or score) and its pairwise view."""
    from swath.storage.database import Database
    from swath.views import format_text

    db = Database.open(result.store.database)
    queries = result.queries
    scoring = result.store.scoring
    for qi, name in enumerate(result.query_names):
        for hit in result.hits(qi):
            yield (f"# hit: e-value {hit.evalue:.3g}, bit score {hit.bitscore:.1f}\n"
                   if not math.isnan(hit.evalue) else f"# hit: score {hit.score} (no "
                   "e-value: Karlin-Altschul statistics are for local alignments)\n")
            yield format_text(hit.alignment, queries[qi], db.sequence(hit.target_id), scoring,
                              query_name=name, target_name=hit.target_name)
            yield "\n"


PRINTERS: dict[str, Callable[[SearchResult, PrintOptions], Iterator[str]]] = {
    "tsv": tsv_lines, "json": json_lines, "text": text_lines, "sam": sam_text,
    "paf": paf_text}
