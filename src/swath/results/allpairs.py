"""What an all-pairs job returns: the kept pairs as a table, scores, clusters, counters,
and how they print.

The printers (:data:`PRINTERS`) are what ``swath inspect`` and ``swath allpairs
--format`` print. ``blast6out`` writes the kept pairs as ``vsearch --allpairs_global
--blast6out`` does (with one thread), byte for byte where the scoring is vsearch's
(``--vsearch-defaults``): a block of lines a query (a pair's earlier input record), the
queries in input order, each query's pairs the highest identity first (the exact double
vsearch prints with one decimal: ``100.0 * matches / denominator``, by the store's
identity definition), then the earliest target; its columns are vsearch's: query and
target labels, identity in percent (``%.1f``), alignment length, mismatches and gap
opens of the alignment without its terminal gaps (vsearch's "internal" alignment),
1-based inclusive coordinates, e-value -1 and bit score 0 (vsearch computes no
statistics for global alignments). ``tsv`` adds the raw score and the CIGAR
(:data:`BLAST6_COLUMNS`); ``json`` the same fields and the input indices and identity
fraction, an object a line, in the same order. ``sam`` and ``paf`` write the kept pairs
for other tools: the query of a pair a read, its target a reference. ``uc`` writes the
kept pairs as ``vsearch --allpairs_global --uc`` does (a query's ``H`` records in the
same order, or its ``N`` record); ``clusters-uc`` and ``centroids`` write the clusters as
``vsearch --cluster_fast``'s ``--uc`` and ``--centroids`` do
(:mod:`swath.results.uclust`). Each printer yields the output in pieces that end with a
newline.

The store keeps the kept pairs tile after tile, not by query: the printers in vsearch's
order (blast6out, tsv, json, uc) read them a run of queries at a time
(:func:`query_runs`). A store of up to :data:`PRINT_PAIRS` kept pairs is read whole;
a larger one is read twice, a store chunk of :data:`PRINT_PAIRS` pairs at a time: once
for each query's count of pairs, which cut the queries into runs of about
:data:`PRINT_PAIRS` pairs, then to write each chunk's pairs into a temporary file per
run (``tempfile``'s directory; as many bytes as the pairs' fields), each run read back,
sorted and printed in turn. A printer holds one chunk or one run (at most
:data:`PRINT_PAIRS` pairs and those of one query, which has fewer than the sequences),
besides a count and a name per sequence.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from swath.alignment import cigar_runs
from swath.identity.definitions import cigar_counts, identity_percent
from swath.results import printed, uclust
from swath.results.alignments import AlignedRows, PrintOptions, paf_lines, sam_header, sam_lines
from swath.results.pairs import COLUMNS

if TYPE_CHECKING:       # the store module (and Zarr) loads when a result is read
    from swath.storage.allpairs import AllPairsStore

#: the table's columns (``to_table``, ``to_pandas``): the pairs' (``PairsResult``'s),
#: one convention for every result
TABLE_COLUMNS = COLUMNS
#: the kept pairs a printer in vsearch's order reads at once (module docstring)
PRINT_PAIRS = 1 << 20
LINE_BATCH = 1 << 16    # the pairs a printer holds as Python values at once

# vsearch's --blast6out columns, then the raw score and the CIGAR
BLAST6_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart",
                  "qend", "sstart", "send", "evalue", "bitscore", "score", "cigar")
BLAST6_FIELDS = 12      # vsearch's own, all that its --blast6out writes


class AllPairsResult:
    """The result of a finished all-pairs job, read from its store.

    Pairs are unordered; the query of a pair is its earlier input record (as in vsearch).
    Its table (:meth:`to_table`, :meth:`to_pandas`) has the columns of every result's
    (``swath.ALLPAIRS_COLUMNS``, ``swath.PAIRS_COLUMNS``'s): indices are positions in the
    input, coordinates 0-based and end exclusive, ``identity`` a fraction (by the job's
    definition, ``iddef``).

    Examples
    --------
    >>> import swath
    >>> res = swath.allpairs(["ACGTACGT", "ACGTACGA", "TTTT"], scoring=swath.Scoring.dna(),
    ...                      min_identity=0.8, device="cpu", clusters=True)
    >>> row = dict(zip(swath.ALLPAIRS_COLUMNS, res.to_table()[0]))
    >>> len(res), row["query_name"], row["target_name"], row["identity"], row["query_end"]
    (1, 'sequences[0]', 'sequences[1]', 0.875, 8)
    >>> res.clusters().tolist()
    [0, 0, 1]
    """

    def __init__(self, store: str) -> None:
        from swath.storage.allpairs import AllPairsStore

        self.store: AllPairsStore = AllPairsStore.open(store)
        self.path = store

    def __len__(self) -> int:
        return int(self.filtered["kept"])

    def __repr__(self) -> str:
        return (f"AllPairsResult({self.store.sequences} sequences, {len(self)} pairs kept, "
                f"store={self.path!r})")

    @property
    def filtered(self) -> dict[str, int]:
        """The tiles' counters summed: pairs, length_filtered (ruled out by their lengths),
        score_filtered (by their score), traced, kept."""
        from swath.storage.allpairs import COUNTERS

        return dict(zip(COUNTERS, self.store.counters().sum(axis=0).tolist(), strict=True))

    def to_table(self) -> list[tuple[object, ...]]:
        """The kept pairs as rows of ``TABLE_COLUMNS`` (``swath.ALLPAIRS_COLUMNS``, the
        columns of ``swath.PAIRS_COLUMNS``), in the store's order (tile after tile, the
        tiles' blocks being runs of sequences sorted by length; each tile's pairs by query
        index, then target index): ``query_index``, ``target_index`` (positions in the
        input, the query the earlier), ``query_name``, ``target_name``, ``score`` (raw),
        ``query_start``, ``query_end``, ``target_start``, ``target_end`` (0-based, end
        exclusive), ``length`` (alignment columns), ``matches``, ``mismatches``,
        ``gap_opens``, ``identity`` (0 to 1, by the job's definition) and ``cigar``
        (extended)."""
        kept = self.store.pairs()
        names = self.store.sequence_names()
        columns = {"query_index": kept["query"], "target_index": kept["target"],
                   "query_name": names[kept["query"]], "target_name": names[kept["target"]],
                   **kept}
        return list(zip(*(columns[name].tolist() for name in TABLE_COLUMNS), strict=True))

    def to_pandas(self) -> Any:
        """The rows of :meth:`to_table` as a ``pandas.DataFrame`` (``ALLPAIRS_COLUMNS``;
        needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.to_table(), columns=list(TABLE_COLUMNS))

    def scores(self) -> np.ndarray:
        """The dense ``(n, n)`` int32 score matrix in input order (row the query); the
        diagonal holds ``storage.allpairs.NO_SCORE``.

        Raises
        ------
        StoreIncomplete
            The job kept no score matrix (``scores=False``).
        """
        return self.store.scores()

    def clusters(self) -> np.ndarray:
        """The single-linkage cluster of every sequence, in input order (int64; clusters
        numbered by their first sequence).

        Raises
        ------
        StoreIncomplete
            The job computed no clusters (``clusters=False``).
        """
        return self.store.clusters()

    def centroids(self) -> np.ndarray:
        """The centroid of every sequence's single-linkage cluster, as an input index, in
        input order (int64; a centroid is its own): of the members, the longest, of equal
        lengths the most abundant (``size=N`` in its name), then the first by name, then
        in input order: the seed ``vsearch --cluster_fast`` would have chosen
        (:mod:`swath.results.uclust`).

        Raises
        ------
        StoreIncomplete
            The job computed no clusters (``clusters=False``).

        Examples
        --------
        >>> import swath
        >>> res = swath.allpairs(["ACGTACGT", "ACGTACGTA", "TTTT"], min_identity=0.8,
        ...                      scoring=swath.Scoring.dna(), device="cpu", clusters=True)
        >>> res.centroids().tolist()
        [1, 1, 2]
        """
        return uclust.centroids(self.clusters(), self.store.sequence_lengths(), _input_names(self))

    def cluster_count(self) -> int | None:
        """How many clusters the store holds, or None for a job without clusters."""
        if not self.store.has_clusters:
            return None
        return len(np.unique(self.clusters()))

    def aligned_rows(self) -> AlignedRows:
        """The kept pairs as the alignment writers take them, in the order of
        :meth:`to_table`: the query of a pair the row's query, with its sequence."""
        kept = self.store.pairs()
        names, lengths = self.store.sequence_names(), self.store.sequence_lengths()
        i, j = kept["query"], kept["target"]
        inputs = self.store.attrs["inputs"]
        alphabet = self.store.scoring.alphabet

        @functools.cache
        def sequences() -> list[np.ndarray]:     # read once, by the first sequence asked for
            return _input_sequences(self)

        def sequence(row: int) -> str:
            return alphabet.decode(sequences()[int(i[row])])

        return AlignedRows(names[i], lengths[i], names[j], lengths[j], kept["score"],
                           kept["query_start"], kept["query_end"], kept["target_start"],
                           kept["target_end"], kept["cigar"], inputs["mode"], sequence,
                           query_quality=_input_qualities(self, i))

    def lines(self, format: str = "tsv", options: PrintOptions = PrintOptions()
              ) -> Iterator[str]:
        """The kept pairs as ``swath inspect`` prints them, in pieces ending with a newline.

        Parameters
        ----------
        format : str
            One of ``PRINTERS``: tsv, vsearch's --blast6out columns
            (``BLAST6_COLUMNS``), the score, the CIGAR; blast6out: those 12 columns
            alone, as vsearch writes them (a query's pairs after another's, in input
            order, the highest identity first, then the earliest target); json: those
            and the input indices and identity fraction, one object per pair and line;
            text: a summary and the pairwise views (these four in the same order); uc:
            vsearch --allpairs_global's --uc records (a query's H records in that order,
            or its N record); sam: SAM with a header (the
            pairs' targets as references, each query a read: its best pair the primary
            record); paf: a line per pair. The clusters (``StoreIncomplete`` without
            them): clusters-uc, vsearch --cluster_fast's --uc records (each member
            aligned against its cluster's centroid); centroids, the centroids as FASTA,
            as vsearch's --centroids writes them (:mod:`swath.results.uclust`).
        options : PrintOptions
            ``cigar_m``: SAM's and PAF's CIGARs with ``M`` for ``=`` and ``X``.

        Raises
        ------
        InvalidParameter
            ``format`` is none of these.
        """
        return printed(PRINTERS, format, self, options)


def internal_columns(cigar: str) -> tuple[int, int]:
    """Alignment length and gap opens without the terminal gaps, as vsearch counts them
    (its "internal" alignment: a leading and a trailing run of I or D left out).

    Examples
    --------
    >>> internal_columns("3D10=1X2I5=4I")
    (18, 1)
    >>> internal_columns("5I")
    (0, 0)
    """
    runs = cigar_runs(cigar)
    length = sum(n for n, _ in runs)
    opens = sum(1 for _, op in runs if op in "ID")
    ends = [runs[0]] if len(runs) == 1 else [runs[0], runs[-1]] if runs else []
    for n, op in ends:
        if op in "ID":
            length -= n
            opens -= 1
    return length, opens


def blast6_row(pair: Mapping[str, Any], percent: float) -> tuple[object, ...]:
    """One kept pair (its ``TABLE_COLUMNS`` by name) in :data:`BLAST6_COLUMNS`: vsearch's
    ``--blast6out`` values (identity in percent, ``percent``: as vsearch computes it,
    :func:`~swath.identity.definitions.identity_percent`; length and gap opens without
    terminal gaps, 1-based inclusive coordinates, e-value -1, bit score 0), then the raw
    score and the CIGAR.

    Examples
    --------
    >>> blast6_row({"query_name": "a", "target_name": "b", "mismatches": 1, "query_start": 0,
    ...             "query_end": 9, "target_start": 0, "target_end": 10, "score": 12,
    ...             "cigar": "4=1X4=1D"}, 80.0)
    ('a', 'b', 80.0, 9, 1, 0, 1, 9, 1, 10, -1, 0, 12, '4=1X4=1D')
    """
    length, opens = internal_columns(pair["cigar"])
    return (pair["query_name"], pair["target_name"], percent, length, pair["mismatches"],
            opens, pair["query_start"] + 1, pair["query_end"], pair["target_start"] + 1,
            pair["target_end"], -1, 0, pair["score"], pair["cigar"])


def _tsv_cell(column: str, value: object) -> str:
    """A cell as vsearch prints it: identity with one decimal (``%.1f``)."""
    return f"{value:.1f}" if column == "pident" else str(value)


def query_runs(result: AllPairsResult) -> Iterator[tuple[range, dict[str, np.ndarray]]]:
    """The kept pairs a run of queries at a time (module docstring): runs of consecutive
    input indices, in input order, each with the pairs whose query is in it (their
    ``KEPT_FIELDS``, the CIGARs as strings; in no particular order). A run may have no
    pairs."""
    store = result.store
    n, kept, budget = store.sequences, len(result), PRINT_PAIRS
    if kept <= budget:
        yield range(n), store.pairs()
        return
    counts = np.zeros(n, dtype=np.int64)
    queries = store.array("query")
    for first in range(0, kept, budget):
        counts += np.bincount(np.asarray(queries[first:first + budget]), minlength=n)
    # a run: the queries whose pairs start in one window of ``budget`` pairs
    window = (np.cumsum(counts) - counts) // budget
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(window)) + 1, [n]]).tolist()
    empty = store.pairs(0, 0)
    with tempfile.TemporaryDirectory(prefix="swath-print-") as folder:
        files = [os.path.join(folder, f"run{r}") for r in range(len(bounds) - 1)]
        for first in range(0, kept, budget):
            pairs = store.pairs(first, first + budget)
            run = np.searchsorted(bounds, pairs["query"], side="right") - 1
            order = np.argsort(run, kind="stable")
            runs, starts = np.unique(run[order], return_index=True)
            for r, rows in zip(runs.tolist(), np.split(order, starts[1:]), strict=True):
                with open(files[r], "ab") as file:    # our own file, read back below
                    pickle.dump({name: values[rows] for name, values in pairs.items()}, file,
                                protocol=pickle.HIGHEST_PROTOCOL)
        for r, path in enumerate(files):
            yield range(bounds[r], bounds[r + 1]), _read_run(path, empty)


def _read_run(path: str, empty: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A run's pairs from its file (``query_runs``), ``empty`` where it has none."""
    if not os.path.exists(path):
        return empty
    parts = []
    with open(path, "rb") as file:
        while file.peek(1):
            parts.append(pickle.load(file))     # written by query_runs, just now
    return {name: np.concatenate([part[name] for part in parts]) for name in empty}


def vsearch_order(result: AllPairsResult
                  ) -> Iterator[tuple[range, dict[str, np.ndarray], np.ndarray]]:
    """The kept pairs in the order ``vsearch --allpairs_global`` writes them, a run of
    queries at a time (:func:`query_runs`): each run's queries, their pairs
    (``KEPT_FIELDS`` and ``query_name``, ``target_name``) sorted by query, the highest
    identity first, then the earliest target (:func:`~swath.results.uclust.query_order`),
    and each pair's identity in percent as vsearch computes it."""
    names, lengths = result.store.sequence_names(), result.store.sequence_lengths()
    iddef = result.store.attrs["inputs"]["iddef"]
    for queries, pairs in query_runs(result):
        query, target = pairs["query"], pairs["target"]
        percent = identity_percent(cigar_counts(pairs["cigar"]), lengths[query],
                                   lengths[target], iddef)
        order = uclust.query_order(query, target, percent)
        named = {**pairs, "query_name": names[query], "target_name": names[target]}
        yield queries, {name: values[order] for name, values in named.items()}, percent[order]


def tsv_lines(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """vsearch's --blast6out rows, then the score and the CIGAR, tab-separated."""
    yield from _blast6_lines(result, BLAST6_COLUMNS)


def blast6out_lines(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """vsearch's --blast6out rows alone: its 12 columns, tab-separated."""
    yield from _blast6_lines(result, BLAST6_COLUMNS[:BLAST6_FIELDS])


def _blast6_rows(result: AllPairsResult) -> Iterator[tuple[dict[str, Any], tuple[object, ...]]]:
    """Each kept pair (its fields by name) and its :func:`blast6_row`, in vsearch's
    order (:func:`vsearch_order`), made Python values ``LINE_BATCH`` pairs at a time."""
    for _, pairs, percent in vsearch_order(result):
        for at in range(0, len(percent), LINE_BATCH):
            fields = {name: values[at:at + LINE_BATCH].tolist()
                      for name, values in pairs.items()}
            for k, value in enumerate(percent[at:at + LINE_BATCH].tolist()):
                pair = {name: column[k] for name, column in fields.items()}
                yield pair, blast6_row(pair, value)


def _blast6_lines(result: AllPairsResult, columns: tuple[str, ...]) -> Iterator[str]:
    for _, values in _blast6_rows(result):
        yield "\t".join(_tsv_cell(c, v) for c, v in zip(columns, values, strict=False)) + "\n"


def json_lines(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """The tsv fields (``pident`` unrounded) and the input indices and identity fraction,
    one object a line, in the tsv's order."""
    for pair, values in _blast6_rows(result):
        record = dict(zip(BLAST6_COLUMNS, values, strict=True))
        record.update(query_index=pair["query"], target_index=pair["target"],
                      identity=pair["identity"])
        yield json.dumps(record) + "\n"


def summary_lines(result: AllPairsResult) -> list[str]:
    """The text view's head: the sequences, tiles, pairs, each filter's count, kept and
    clusters."""
    inputs = result.store.attrs["inputs"]
    counts = result.filtered
    n = result.store.sequences
    lines = [f"# {result.path}: all pairs of {n:,} sequences"]
    lines.append(f"# Mode:         {inputs['mode']}")
    lines.append(f"# Threshold:    identity >= {inputs['min_identity']} "
                 f"({_iddef_name(inputs['iddef'])})")
    lines.append(f"# Tiles:        {result.store.tiles:,} (blocks of {result.store.block:,} "
                 "sequences)")
    lines += [
        f"# Pairs:        {int(counts['pairs']):,}",
        f"# By length:    {int(counts['length_filtered']):,} ruled out before any DP",
        f"# By score:     {int(counts['score_filtered']):,} ruled out by the score bound",
        f"# Aligned:      {int(counts['traced']):,}",
        f"# Kept:         {int(counts['kept']):,}",
    ]
    groups = result.cluster_count()
    if groups is not None:
        lines.append(f"# Clusters:     {groups:,}")
    return lines


def _iddef_name(iddef: object) -> str:
    return "pident" if str(iddef) == "pident" else f"vsearch --iddef {iddef}"


def text_lines(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """A summary, then the pairwise view of every kept pair, in the tsv's order."""
    from swath.alignment import Alignment
    from swath.views import format_text

    yield "\n".join(summary_lines(result)) + "\n"
    inputs = result.store.attrs["inputs"]
    scoring = result.store.scoring
    sequences = _input_sequences(result)
    how = _iddef_name(inputs["iddef"])
    for k, (r, values) in enumerate(_blast6_rows(result)):
        alignment = Alignment(r["score"], r["query_start"], r["query_end"], r["target_start"],
                              r["target_end"], r["cigar"], inputs["mode"])
        yield "\n"
        yield f"# pair {k + 1} of {len(result)}: identity {values[2]:.1f}% ({how})\n"
        yield format_text(alignment, sequences[r["query"]], sequences[r["target"]], scoring,
                          query_name=r["query_name"], target_name=r["target_name"])


def _input_sequences(result: AllPairsResult) -> list[np.ndarray]:
    """The stored sequences (codes) in input order."""
    return result.store.input_sequences()


def _input_qualities(result: AllPairsResult, queries: np.ndarray
                     ) -> Callable[[int], str | None] | None:
    """Row k's query's base qualities (SAM's QUAL; ``queries``: each row's input index),
    those of the rows' queries read once, by the first asked for; None where the
    sequences have none (FASTA)."""
    from swath.storage.allpairs import SIDE

    store = result.store
    if not store.has_qualities(SIDE):
        return None

    @functools.cache
    def read() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ids, at = np.unique(queries, return_inverse=True)
        found = store.qualities(SIDE, ids)
        assert found is not None
        return (*found, at)

    def quality(row: int) -> str:
        values, offsets, at = read()
        return values[offsets[at[row]]:offsets[at[row] + 1]].tobytes().decode("latin-1")

    return quality


def _input_names(result: AllPairsResult) -> list[str]:
    """The sequences' names, in input order."""
    return [str(name) for name in result.store.sequence_names()]


def uc_text(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """vsearch --allpairs_global's --uc records of the kept pairs: for each sequence in
    input order, its H records (the pairs whose query it is, the highest identity first,
    by the job's definition) or its N record; a run of queries at a time
    (:func:`query_runs`)."""
    names, lengths = _input_names(result), result.store.sequence_lengths()
    iddef = result.store.attrs["inputs"]["iddef"]
    for queries, pairs in query_runs(result):
        yield from uclust.pair_uc_lines(names, lengths, pairs["query"], pairs["target"],
                                        pairs["cigar"], iddef, queries=queries)


def clusters_uc_text(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """vsearch --cluster_fast's --uc records of the clusters: each member aligned against
    its centroid with the job's scoring and mode, its identity by the job's definition."""
    inputs = result.store.attrs["inputs"]
    yield from uclust.uc_lines(_input_names(result), _input_sequences(result),
                               result.clusters(), result.store.scoring, result.store.mode,
                               inputs["iddef"])


def centroids_text(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """The clusters' centroids as FASTA, as vsearch's --centroids writes them."""
    alphabet = result.store.scoring.alphabet
    yield from uclust.centroid_fasta(_input_names(result), _input_sequences(result),
                                     result.clusters(), alphabet)


def sam_text(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """SAM: the pairs' targets as references, each query a read (its best pair primary)."""
    rows = result.aligned_rows()
    yield from sam_header((rows.target_name, rows.target_length), options.command)
    yield from sam_lines(rows, options)


def paf_text(result: AllPairsResult, options: PrintOptions) -> Iterator[str]:
    """PAF: a line per kept pair."""
    yield from paf_lines(result.aligned_rows(), options)


PRINTERS: dict[str, Callable[[AllPairsResult, PrintOptions], Iterator[str]]] = {
    "tsv": tsv_lines, "blast6out": blast6out_lines, "json": json_lines, "text": text_lines,
    "uc": uc_text, "clusters-uc": clusters_uc_text, "centroids": centroids_text,
    "sam": sam_text, "paf": paf_text}
