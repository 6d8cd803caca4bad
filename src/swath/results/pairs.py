"""What a batched-pairs job returns: one alignment a pair, as columns, and how it prints.

The printers (:data:`PRINTERS`) are what ``swath inspect`` and ``swath pairs --outfmt``
print, chunk by chunk of the store (a store of 10^8 pairs prints in the memory of one
chunk): ``tsv`` (BLAST's tabular columns as ``swath search`` prints them, then the score
and the CIGAR; no e-values: pairs have no database), ``sam`` (targets as references,
queries as reads), ``paf`` (as minimap2 writes it), ``json`` (one object a pair and
line) and ``text`` (a pairwise view a pair).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from swath.alignment import Alignment
from swath.results import held_or_opened, printed
from swath.results.alignments import (
    TABULAR_COLUMNS,
    AlignedRows,
    PrintOptions,
    paf_lines,
    sam_header,
    sam_lines,
    tabular_lines,
)

if TYPE_CHECKING:       # the store module (and Zarr) loads when a result is read
    from swath.scoring import Scoring
    from swath.sequences import SequenceSet
    from swath.storage.pairs import PairsStore

__all__ = ["COLUMNS", "PRINTERS", "HeldPairs", "PairsResult"]

#: the result's columns, in the order ``to_pandas`` gives them
COLUMNS = ("query_index", "target_index", "query_name", "target_name", "score",
           "query_start", "query_end", "target_start", "target_end", "length", "matches",
           "mismatches", "gap_opens", "identity", "cigar")


class HeldPairs:
    """A small job's pairs held in this process (run without a store): its inputs, each
    pair's records and per-pair fields, read through the members of
    :class:`~swath.storage.pairs.PairsStore` that :class:`PairsResult` reads, as one
    chunk."""

    units = 1

    def __init__(self, sides: dict[str, SequenceSet], rows: np.ndarray, cols: np.ndarray,
                 fields: dict[str, np.ndarray], scoring: Scoring, mode: str) -> None:
        self.sides, self.rows, self.cols, self._fields = sides, rows, cols, fields
        self.scoring, self.mode = scoring, mode
        self.cells = int(np.dot(self.lengths("query", rows), self.lengths("target", cols)))

    @property
    def pairs(self) -> int:
        return len(self.rows)

    def unit_pairs(self, unit: int) -> tuple[int, int]:
        return 0, self.pairs

    def pair_records(self, first: int = 0, last: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
        return self.rows[first:last], self.cols[first:last]

    def records(self, side: str, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from swath.sequences import take_concatenated

        held = self.sides[side]
        return take_concatenated(held.residues, held.offsets, which)

    def qualities(self, side: str, which: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        from swath.sequences import take_concatenated

        held = self.sides[side]
        if held.qualities is None:
            return None
        return take_concatenated(held.qualities, held.offsets, which)

    def names(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        names = np.asarray(self.sides[side].names, dtype=object)
        return names if which is None else names[which]

    def lengths(self, side: str, which: np.ndarray | None = None) -> np.ndarray:
        lengths = self.sides[side].lengths.astype(np.int64)
        return lengths if which is None else lengths[which]

    def fields(self, first: int = 0, last: int | None = None) -> dict[str, np.ndarray]:
        return {name: values[first:last] for name, values in self._fields.items()}

    def column(self, name: str, first: int = 0, last: int | None = None) -> np.ndarray:
        return self._fields[name][first:last]


def _open(path: str) -> PairsStore:
    """The finished store at ``path`` (its module, and Zarr, loaded now)."""
    from swath.storage.pairs import PairsStore

    return PairsStore.open(path)


class PairsResult:
    """The alignments of a batched-pairs job: read from its store, or held in this
    process for a small job run without one.

    Each column is a numpy array with one value a pair, in the order the pairs were
    given (read from the store when first asked for): ``query_index`` and
    ``target_index`` (the records of each pair), ``query_name``, ``target_name``,
    ``score``, coordinates (``query_start``, ``query_end``, ``target_start``,
    ``target_end``: 0-based, end exclusive), ``length`` (alignment columns),
    ``matches``, ``mismatches``, ``gap_opens``, ``identity`` (matches over columns) and
    ``cigar`` (extended: ``=``, ``X``, ``I``, ``D``).

    Examples
    --------
    >>> import swath
    >>> res = swath.align_pairs(["ACGTAC", "GGGT"], ["TACGTACT", "GGAT"], device="cpu",
    ...                         scoring=swath.Scoring.dna())
    >>> res.score.tolist(), res.cigar.tolist()
    ([12, 4], ['6=', '2='])
    """

    def __init__(self, store: str | HeldPairs) -> None:
        self.store: PairsStore | HeldPairs
        self.path: str | None
        self.store, self.path = held_or_opened(store, HeldPairs, _open)
        self._columns: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return self.store.pairs

    @property
    def cells(self) -> int:
        """The matrix cells of all pairs (sum of query length times target length)."""
        return self.store.cells

    def __repr__(self) -> str:
        where = "held in memory" if self.path is None else f"store={self.path!r}"
        return f"PairsResult({len(self)} pairs, {where})"

    def __getattr__(self, name: str) -> np.ndarray:
        if name not in COLUMNS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.column(name)

    def column(self, name: str) -> np.ndarray:
        """One column (``COLUMNS``) for every pair."""
        if name not in self._columns:
            self._columns.update(self._read(name))
        return self._columns[name]

    def _read(self, name: str) -> dict[str, np.ndarray]:
        store = self.store
        if name in ("query_index", "target_index"):
            rows, cols = store.pair_records()
            return {"query_index": rows, "target_index": cols}
        if name in ("query_name", "target_name"):
            side = name.split("_")[0]
            return {name: store.names(side)[self.column(f"{side}_index")]}
        values = store.column(name)
        return {name: values.astype(object) if name == "cigar" else values}

    def to_pandas(self) -> Any:
        """The columns as a ``pandas.DataFrame``, a row a pair (needs pandas)."""
        import pandas as pd

        return pd.DataFrame({name: self.column(name) for name in COLUMNS})

    def alignment(self, k: int) -> Alignment:
        """Pair ``k``'s alignment."""
        return _alignment(self.store.fields(k, k + 1), 0, self.store.mode)

    def chunks(self, sequences: bool = False) -> Iterator[AlignedRows]:
        """The pairs as :class:`~swath.results.alignments.AlignedRows`, a store chunk at a
        time; with ``sequences``, each row's query letters too (SAM's SEQ) and base
        qualities where the queries were FASTQ (SAM's QUAL), and which row is its query's
        primary alignment over all chunks."""
        store = self.store
        mode = store.mode
        best = _primary_pairs(store) if sequences else None
        for c in _store_chunks(store):
            primary = None if best is None else np.fromiter(
                (best[name] == k for k, name in enumerate(c.query_names.tolist(), c.first)),
                bool, len(c.rows))
            f = c.fields
            yield AlignedRows(
                c.query_names, store.lengths("query", c.rows), c.target_names,
                store.lengths("target", c.cols), f["score"], f["query_start"],
                f["query_end"], f["target_start"], f["target_end"], f["cigar"].astype(object),
                mode, _letters(store, c.rows) if sequences else None, primary=primary,
                query_quality=_qualities(store, c.rows) if sequences else None)

    def lines(self, format: str = "tsv", options: PrintOptions | None = None
              ) -> Iterator[str]:
        """The pairs as ``swath inspect`` prints them, in pieces ending with a newline.

        Parameters
        ----------
        format : {"tsv", "sam", "paf", "json", "text"}
            As the module says.
        options : PrintOptions, optional
            ``cigar_m``: SAM's and PAF's CIGARs with ``M`` for ``=`` and ``X``.

        Raises
        ------
        InvalidParameter
            ``format`` is none of these.
        """
        return printed(PRINTERS, format, self, options or PrintOptions(), named_columns=True)


def _primary_pairs(store: PairsStore | HeldPairs) -> dict[str, int]:
    """Each query name's primary pair: its highest-scoring pair with an alignment, the
    first of equal ones (a name without any: its first pair), over the whole store, read
    a chunk at a time."""
    best: dict[str, tuple[int, int]] = {}       # name -> (key, -pair): the largest wins
    for unit in range(store.units):
        first, last = store.unit_pairs(unit)
        names = store.names("query", store.pair_records(first, last)[0]).tolist()
        score = store.column("score", first, last).astype(np.int64)
        aligned = store.column("length", first, last) > 0
        keys = np.where(aligned, score, np.iinfo(np.int64).min).tolist()
        for k, (name, key) in enumerate(zip(names, keys, strict=True), first):
            held = best.get(name)
            if held is None or key > held[0]:
                best[name] = (key, -k)
    return {name: -pair for name, (_, pair) in best.items()}


@dataclass(frozen=True)
class _Chunk:
    """One chunk of a store's pairs as the printers read it: its first pair, each pair's
    records and names, and the per-pair fields."""

    first: int
    rows: np.ndarray
    cols: np.ndarray
    query_names: np.ndarray
    target_names: np.ndarray
    fields: dict[str, np.ndarray]


def _store_chunks(store: PairsStore | HeldPairs) -> Iterator[_Chunk]:
    """The store's pairs a chunk at a time (each chunk's arrays read once)."""
    for unit in range(store.units):
        first, last = store.unit_pairs(unit)
        rows, cols = store.pair_records(first, last)
        yield _Chunk(first, rows, cols, store.names("query", rows), store.names("target", cols),
                     store.fields(first, last))


def _records(store: PairsStore | HeldPairs, side: str, which: np.ndarray
             ) -> Callable[[int], np.ndarray]:
    """Pair k's record of ``side`` (codes), for the pairs of one chunk: the chunk's
    records read in one go."""
    ids, at = np.unique(which, return_inverse=True)
    residues, offsets = store.records(side, ids)
    return lambda k: residues[offsets[at[k]]:offsets[at[k] + 1]]


def _letters(store: PairsStore | HeldPairs, rows: np.ndarray) -> Callable[[int], str]:
    """Pair k's whole query as letters (SAM's SEQ), for the pairs of one chunk."""
    alphabet = store.scoring.alphabet
    codes = _records(store, "query", rows)
    return lambda k: alphabet.decode(codes(k))


def _qualities(store: PairsStore | HeldPairs, rows: np.ndarray
               ) -> Callable[[int], str | None] | None:
    """Pair k's whole query's base qualities (SAM's QUAL), for the pairs of one chunk,
    read in one go; None where the queries have none (FASTA)."""
    ids, at = np.unique(rows, return_inverse=True)
    found = store.qualities("query", ids)
    if found is None:
        return None
    values, offsets = found
    return lambda k: values[offsets[at[k]]:offsets[at[k] + 1]].tobytes().decode("latin-1")


def _alignment(fields: dict[str, np.ndarray], k: int, mode: str) -> Alignment:
    """Row ``k`` of a chunk's per-pair fields as an :class:`Alignment`."""
    return Alignment(int(fields["score"][k]), int(fields["query_start"][k]),
                     int(fields["query_end"][k]), int(fields["target_start"][k]),
                     int(fields["target_end"][k]), str(fields["cigar"][k]), mode)


def tsv_lines(result: PairsResult, options: PrintOptions) -> Iterator[str]:
    """BLAST's tabular columns, the score and the CIGAR (or ``options.columns``), a pair a
    line."""
    for rows in result.chunks():
        yield from tabular_lines(rows, options.columns or TABULAR_COLUMNS)


def json_lines(result: PairsResult, options: PrintOptions) -> Iterator[str]:
    """One JSON object a pair: its records (``query_index``, ``target_index``) and the
    columns of :data:`COLUMNS` (coordinates 0-based, end exclusive)."""
    for c in _store_chunks(result.store):
        columns = {"query_index": c.rows, "target_index": c.cols, "query_name": c.query_names,
                   "target_name": c.target_names, **c.fields}
        for k in range(len(c.rows)):
            yield json.dumps({name: _plain(columns[name][k]) for name in COLUMNS}) + "\n"


def _plain(value: Any) -> Any:
    """A numpy value as JSON takes it."""
    return value.item() if isinstance(value, np.generic) else str(value) \
        if not isinstance(value, (int, float)) else value


def sam_text(result: PairsResult, options: PrintOptions) -> Iterator[str]:
    """SAM: the targets as references (``@SQ``), each pair's query as a read."""
    store = result.store
    yield from sam_header((store.names("target"), store.lengths("target")), options.command)
    for rows in result.chunks(sequences=True):
        yield from sam_lines(rows, options)


def paf_text(result: PairsResult, options: PrintOptions) -> Iterator[str]:
    """PAF as minimap2 writes it (``NM``, ``AS`` and ``cg`` tags)."""
    for rows in result.chunks():
        yield from paf_lines(rows, options)


def text_lines(result: PairsResult, options: PrintOptions) -> Iterator[str]:
    """A pairwise view a pair, with its names and score."""
    from swath.views import format_text

    store = result.store
    scoring, mode = store.scoring, store.mode
    for c in _store_chunks(store):
        queries, targets = _records(store, "query", c.rows), _records(store, "target", c.cols)
        for k in range(len(c.rows)):
            yield format_text(_alignment(c.fields, k, mode), queries(k), targets(k), scoring,
                              query_name=str(c.query_names[k]),
                              target_name=str(c.target_names[k]))
            yield "\n"


PRINTERS: dict[str, Callable[[PairsResult, PrintOptions], Iterator[str]]] = {
    "tsv": tsv_lines, "sam": sam_text, "paf": paf_text, "json": json_lines,
    "text": text_lines}
