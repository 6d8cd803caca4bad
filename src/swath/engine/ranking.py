"""The order of a query's hits: by e-value, then bit score, as blastp orders them.

# k: hits kept, w: the pool's width (candidates kept by score)

Where a hit's e-value falls as its score rises whatever its subject (length-adjusted
e-values, or no statistics at all), the order by score is the order by e-value, and the
score tasks' k best by score are the search's k best. Spouge's e-values (blastp's, for
BLAST's protein tables) depend on the subject's length as well: a hit against a short
subject may have a smaller e-value than one that scores more against a long subject.

The score tasks then keep a pool of :func:`pool_width` hits by score, and
:func:`by_evalue` keeps the k best of the pool by e-value. They are the k best of the
whole database when no hit outside the pool can beat the k-th: every hit outside scores
at most the pool's lowest score, and the least e-value that score can have against a
subject of any length in the database (:func:`~swath.statistics.least_spouge_evalue`)
is larger than the k-th's, or than the cutoff past which hits are dropped anyway. A
query whose pool does not show this is scored again against the whole database with a
pool four times as wide, until one does, or holds every sequence.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from swath.kernels.top_hits import PADDING
from swath.statistics import KarlinAltschul, least_spouge_evalue, search_evalue

__all__ = ["by_evalue", "pool_width"]

Top = tuple[np.ndarray, np.ndarray]     # (scores, ids), a row per query, best first


def pool_width(top_k: int, sequences: int, subject_dependent: bool) -> int:
    """Hits a score task keeps per query: ``top_k`` where the order by score is the order
    by e-value, else a pool of ``2 top_k + 16`` (at most the database's sequences)."""
    return min(sequences, 2 * top_k + 16) if subject_dependent else top_k


def by_evalue(top: Top, query_lengths: np.ndarray, lengths_of: Callable[[np.ndarray], np.ndarray],
              database: tuple[int, int, int, int], params: KarlinAltschul, top_k: int,
              max_evalue: float | None, rescore: Callable[[int, int], Top]) -> Top:
    """The ``top_k`` hits of each query with the least e-values (then the highest scores,
    then the lowest ids), from each query's pool ``top`` (the best by score).

    Parameters
    ----------
    top : (numpy.ndarray, numpy.ndarray)
        The pools: scores and target ids, a row per query (ids -1 past the hits).
    query_lengths : numpy.ndarray
        Each query's residues.
    lengths_of : callable
        ``lengths_of(ids)``: the targets' lengths.
    database : (int, int, int, int)
        The database's residues, sequences, shortest and longest sequence.
    params : KarlinAltschul
        The scheme's parameters, with their Gumbel block.
    top_k : int
        Hits kept per query.
    max_evalue : float, optional
        The cutoff past which hits are dropped (None: none).
    rescore : callable
        ``rescore(row, width)``: query ``row``'s best ``width`` hits by score against the
        whole database.
    """
    residues, sequences, shortest, longest = database
    scores, ids = top
    kept_scores = np.full((len(ids), top_k), PADDING, dtype=np.int64)
    kept_ids = np.full((len(ids), top_k), -1, dtype=np.int64)
    found = ids >= 0
    lengths = np.zeros(ids.shape, dtype=np.int64)
    lengths[found] = lengths_of(ids[found])
    cutoff = math.inf if max_evalue is None else max_evalue
    for row in range(len(ids)):
        pool_scores, pool_ids, pool_lengths = scores[row], ids[row], lengths[row]
        m = int(query_lengths[row])
        while True:
            hits = pool_ids >= 0
            s, i = pool_scores[hits], pool_ids[hits]
            e = search_evalue(s, m, pool_lengths[hits], residues, sequences, params)
            order = np.lexsort((i, -s, e))[:top_k]
            if len(pool_ids) >= sequences or not hits.all() or least_spouge_evalue(
                    int(s.min()), m, shortest, longest, residues, params) > min(
                    float(e[order[-1]]), cutoff):
                break
            pool_scores, pool_ids = rescore(row, 4 * len(pool_ids))
            pool_lengths = np.zeros(len(pool_ids), dtype=np.int64)
            pool_lengths[pool_ids >= 0] = lengths_of(pool_ids[pool_ids >= 0])
        kept_scores[row, :len(order)] = s[order]
        kept_ids[row, :len(order)] = i[order]
    return kept_scores, kept_ids
