"""What a search returns: hits per query, BLAST-like rows (the public result objects)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from swath.alignment import Alignment
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
        self.store = SearchStore.open(store)
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
