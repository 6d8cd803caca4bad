"""What an all-pairs job returns: the kept pairs as a table, scores, clusters, counters."""

from __future__ import annotations

import numpy as np

from swath.storage.allpairs import COUNTERS, AllPairsStore

TABLE_COLUMNS = ("query_index", "target_index", "query_id", "target_id", "identity", "length",
                 "mismatches", "gap_opens", "query_start", "query_end", "target_start",
                 "target_end", "score", "cigar")


class AllPairsResult:
    """The result of a finished all-pairs job, read from its store.

    Pairs are unordered; the query of a pair is its shorter sequence (of two as long,
    the one given first). Indices are positions in the input, coordinates 0-based and
    end exclusive.

    Examples
    --------
    >>> import swath
    >>> res = swath.allpairs(["ACGTACGT", "ACGTACGA", "TTTT"], scoring=swath.Scoring.dna(),
    ...                      min_identity=0.8, device="cpu", clusters=True)
    >>> len(res), res.to_table()[0][:5], res.clusters().tolist()
    (1, (0, 1, 'sequences[0]', 'sequences[1]', 0.875), [0, 0, 1])
    """

    def __init__(self, store: str) -> None:
        self.store = AllPairsStore.open(store)
        self.path = store
        self._order = self.store.order()

    def __len__(self) -> int:
        return int(self.filtered["kept"])

    def __repr__(self) -> str:
        return (f"AllPairsResult({self.store.sequences} sequences, {len(self)} pairs kept, "
                f"store={self.path!r})")

    @property
    def filtered(self) -> dict[str, int]:
        """The tiles' counters summed: pairs, length_filtered (ruled out by their lengths),
        score_filtered (by their score), traced, kept."""
        return dict(zip(COUNTERS, self.store.counters().sum(axis=0).tolist(), strict=True))

    def to_table(self) -> list[tuple[object, ...]]:
        """The kept pairs as rows of ``TABLE_COLUMNS``, by query index, then target index:
        input indices and names, identity (0 to 1, by the job's definition), alignment
        length, mismatches, gap opens, coordinates (0-based, end exclusive), raw score and
        extended CIGAR."""
        kept = self.store.kept_pairs()
        names = self.store.names()
        query, target = self._order[kept["i"]], self._order[kept["j"]]
        rows = [(int(query[k]), int(target[k]), str(names[kept["i"][k]]),
                 str(names[kept["j"][k]]), float(kept["identity"][k]), int(kept["length"][k]),
                 int(kept["mismatches"][k]), int(kept["gap_opens"][k]),
                 int(kept["query_start"][k]), int(kept["query_end"][k]),
                 int(kept["target_start"][k]), int(kept["target_end"][k]),
                 int(kept["score"][k]), str(kept["cigar"][k]))
                for k in range(len(query))]
        return sorted(rows, key=lambda row: (row[0], row[1]))

    def scores(self) -> np.ndarray:
        """The dense ``(n, n)`` int32 score matrix in input order (row the query); the
        diagonal holds ``storage.allpairs.NO_SCORE``.

        Raises
        ------
        StoreIncomplete
            The job kept no score matrix (``scores=False``).
        """
        stored = self.store.scores()
        out = np.empty_like(stored)
        out[np.ix_(self._order, self._order)] = stored
        return out

    def clusters(self) -> np.ndarray:
        """The single-linkage cluster of every sequence, in input order (int64; clusters
        numbered by their first sequence).

        Raises
        ------
        StoreIncomplete
            The job computed no clusters (``clusters=False``).
        """
        out = np.empty(self.store.sequences, dtype=np.int64)
        out[self._order] = self.store.clusters()
        return out
