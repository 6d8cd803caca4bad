"""What a long pair returns: its :class:`~swath.alignment.Alignment`, or a scores-only
job's :class:`PairScore`; and how both print.

The formats (:data:`FORMATS`) are what ``swath align`` and ``swath inspect`` print:
``text`` (a header and the pairwise view, like EMBOSS water/needle), ``json`` (one
object) and ``tsv`` (a header line and one row); json and tsv coordinates are 0-based,
end exclusive. A scores-only result prints its score and end cell. A store's text view
starts with a line that names the store, its matrix, tiles and stored bytes. Printers
yield the output in pieces that end with a newline.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from swath.alignment import Alignment
from swath.errors import InvalidParameter
from swath.results.alignments import PrintOptions
from swath.scoring import Scoring

if TYPE_CHECKING:       # the store module (and Zarr) loads when a store is read
    from swath.storage.longpair import AlignmentStore

FORMATS = ("text", "json", "tsv")
SCORE_FIELDS = ("query_name", "target_name", "score", "query_end", "target_end")


@dataclass(frozen=True)
class PairScore:
    """A scores-only job's result: the optimal score and the cell where it ends
    (``query_end``, ``target_end``: exclusive ends, as in :class:`swath.Alignment`).

    Examples
    --------
    >>> PairScore(16, 8, 10, "semiglobal")
    PairScore(score=16, query_end=8, target_end=10, mode='semiglobal')
    """

    score: int
    query_end: int
    target_end: int
    mode: str


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise InvalidParameter(f"format must be one of {', '.join(FORMATS)}, got {format!r}")


def score_lines(result: PairScore, names: tuple[str, str], format: str) -> Iterator[str]:
    """A scores-only result: the score and the (exclusive) end of the alignment."""
    _check_format(format)
    query_name, target_name = names
    record = {"query_name": query_name, "target_name": target_name, "score": result.score,
              "query_end": result.query_end, "target_end": result.target_end}
    if format == "json":
        yield json.dumps(record) + "\n"
    elif format == "tsv":
        yield "\t".join(SCORE_FIELDS) + "\n"
        yield "\t".join(str(record[f]) for f in SCORE_FIELDS) + "\n"
    else:
        yield (f"# {query_name} against {target_name} ({result.mode}): score {result.score}, "
               f"ending at query {result.query_end}, target {result.target_end} "
               "(scores only: no traceback)\n")


def _tsv_value(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def alignment_lines(alignment: Alignment, names: tuple[str, str], format: str, *,
                    query: np.ndarray | None = None, target: np.ndarray | None = None,
                    scoring: Scoring | None = None) -> Iterator[str]:
    """An alignment: text (needs the sequences' codes and the scoring), json or tsv."""
    from swath.views import RECORD_FIELDS, alignment_record, format_text

    _check_format(format)
    query_name, target_name = names
    if format == "text":
        if query is None or target is None or scoring is None:
            raise InvalidParameter("the text view of an alignment needs its query, target "
                                   "and scoring")
        yield format_text(alignment, query, target, scoring, query_name=query_name,
                          target_name=target_name)
        return
    record = alignment_record(alignment, query_name, target_name)
    if format == "json":
        yield json.dumps(record) + "\n"
    else:
        yield "\t".join(RECORD_FIELDS) + "\n"
        yield "\t".join(_tsv_value(record[field]) for field in RECORD_FIELDS) + "\n"


def stored_result(path: str) -> Alignment | PairScore:
    """The result of a finished long pair's store: its alignment, or its score."""
    from swath.storage.longpair import AlignmentStore

    opened = AlignmentStore.open(path)
    if not opened.traceback:
        return PairScore(*opened.end(), opened.mode)
    return opened.alignment()


def store_lines(path: str, format: str, options: PrintOptions) -> Iterator[str]:
    """A finished long pair's store as ``swath inspect`` prints it: what it holds (the
    alignment of a traceback job, whether its boundaries have origins or its path was
    found by splits, or the score and end cell of a scores-only job), the text view led
    by the store's line. ``options`` change none of its formats."""
    from swath.storage.longpair import AlignmentStore

    opened = AlignmentStore.open(path)
    if format == "text":
        yield _store_line(opened) + "\n"
    if not opened.traceback:
        yield from score_lines(PairScore(*opened.end(), opened.mode), opened.names, format)
        return
    q, t = opened.sequences()
    yield from alignment_lines(opened.alignment(), opened.names, format, query=q, target=t,
                               scoring=opened.scoring)


def _store_line(opened: AlignmentStore) -> str:
    """The text view's first line: the matrix, its tiles, the stored bytes, the job."""
    m, n = opened.lengths
    how = ("scores only" if not opened.traceback else
           "path by origins" if opened.origins else
           "path walked back through tiles" if opened.walks else "path by splits")
    return (f"# {opened.path}: a {m} x {n} matrix in {opened.tiles[0]} x {opened.tiles[1]} "
            f"tiles, {opened.stored_bytes():,} bytes of boundaries ({how})")


def plot(path: str, image: str) -> None:
    """Draw the path of a finished long pair's store over its matrix (a dot plot) to
    ``image`` (needs matplotlib).

    Raises
    ------
    InvalidParameter
        The store holds a score only, or matplotlib is not installed.
    """
    from swath.storage.longpair import AlignmentStore
    from swath.views import dot_plot

    opened = AlignmentStore.open(path)
    if not opened.traceback:
        raise InvalidParameter(f"--plot: {path} holds a score only (swath align "
                               "--score-only): no alignment path to draw")
    query_name, target_name = opened.names
    m, n = opened.lengths
    dot_plot(opened.alignment(), m, n, image, query_name=query_name, target_name=target_name)
