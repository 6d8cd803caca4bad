"""What a search returns: hits per query, BLAST-like rows, and how they print.

The printers (:data:`PRINTERS`) are what ``swath inspect`` and ``swath search --outfmt``
print: ``tsv`` (BLAST's 12 tabular columns, 1-based inclusive, then the raw score and
the CIGAR), ``json`` (one object per hit and line) and ``text`` (a pairwise view per
hit). Each yields the output in pieces that end with a newline.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from swath.alignment import Alignment
from swath.results import printed

if TYPE_CHECKING:       # the store module (and Zarr) loads when a result is read
    from swath.storage.results import SearchStore

TABULAR_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart",
                   "qend", "sstart", "send", "evalue", "bitscore", "score", "cigar")


@dataclass(frozen=True)
class Hit:
    """One database hit of a query: the target's index in the database, name, alignment."""

    target_id: int
    target_name: str
    score: int
    bitscore: float
    evalue: float
    alignment: Alignment


class SearchResult:
    """The hits of a finished search, read from its result store.

    Examples
    --------
    >>> res = swath.search(queries, database, top_k=5)  # doctest: +SKIP
    >>> res.hits(0)[0].alignment.cigar                   # doctest: +SKIP
    """

    def __init__(self, store: str) -> None:
        from swath.storage.results import SearchStore

        self.store: SearchStore = SearchStore.open(store)
        self.path = store
        self.query_names = self.store.queries().names
        self._hits = self.store.hits()

    def __len__(self) -> int:
        return len(self.query_names)

    def __repr__(self) -> str:
        return f"SearchResult({len(self)} queries, top_k={self.store.top_k}, store={self.path!r})"

    def hits(self, query_index: int) -> list[Hit]:
        """The hits of query ``query_index``, best first (coordinates 0-based, end exclusive)."""
        h = {name: column[query_index] for name, column in self._hits.items()}
        mode = self.store.attrs["inputs"]["mode"]
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

    def lines(self, format: str = "tsv") -> Iterator[str]:
        """The hits as ``swath inspect`` prints them, in pieces ending with a newline.

        Parameters
        ----------
        format : {"tsv", "json", "text"}
            tsv: BLAST's tabular rows (``TABULAR_COLUMNS``); json: one object per hit and
            line; text: a pairwise view per hit.

        Raises
        ------
        InvalidParameter
            ``format`` is none of these.
        """
        return printed(PRINTERS, format, self)


_FLOAT_FORMATS = {"pident": "{:.3f}", "evalue": "{:.3g}", "bitscore": "{:.1f}"}


def _cell(column: str, value: object) -> str:
    """A tabular cell as BLAST prints it (empty for a missing e-value or bit score)."""
    if value is None:
        return ""
    return _FLOAT_FORMATS[column].format(value) if column in _FLOAT_FORMATS else str(value)


def tsv_lines(result: SearchResult) -> Iterator[str]:
    """BLAST's tabular rows, tab-separated."""
    for row in result.to_table():
        yield "\t".join(_cell(column, v) for column, v in zip(TABULAR_COLUMNS, row,
                                                               strict=True)) + "\n"


def json_lines(result: SearchResult) -> Iterator[str]:
    """One JSON object per hit, keyed by ``TABULAR_COLUMNS``."""
    for row in result.to_table():
        yield json.dumps(dict(zip(TABULAR_COLUMNS, row, strict=True))) + "\n"


def text_lines(result: SearchResult) -> Iterator[str]:
    """Per hit: its e-value and bit score (or score) and its pairwise view."""
    from swath.scoring import Scoring
    from swath.storage.database import Database
    from swath.views import format_text

    db = Database.open(result.store.attrs["inputs"]["database"])
    queries = result.store.queries()
    scoring = Scoring.from_dict(result.store.attrs["inputs"]["scoring"])
    for qi, name in enumerate(result.query_names):
        for hit in result.hits(qi):
            yield (f"# hit: e-value {hit.evalue:.3g}, bit score {hit.bitscore:.1f}\n"
                   if not math.isnan(hit.evalue) else f"# hit: score {hit.score} (no "
                   "e-value: Karlin-Altschul statistics are for local alignments)\n")
            yield format_text(hit.alignment, queries[qi], db.sequence(hit.target_id), scoring,
                              query_name=name, target_name=hit.target_name)
            yield "\n"


PRINTERS: dict[str, Callable[[SearchResult], Iterator[str]]] = {
    "tsv": tsv_lines, "json": json_lines, "text": text_lines}
