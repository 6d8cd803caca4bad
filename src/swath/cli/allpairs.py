"""``swath allpairs``: every pair of a set of sequences, and how its stores are resumed and
printed.

The kept pairs print in vsearch's ``--blast6out`` columns (its ``--allpairs_global``
output), then the raw score and the CIGAR: query and target labels, identity in percent
(one decimal, by the store's identity definition), alignment length, mismatches and gap
opens of the alignment without its terminal gaps (vsearch's "internal" alignment),
1-based inclusive coordinates, e-value -1 and bit score 0 (vsearch computes no
statistics for global alignments).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
import numpy as np

import swath
from swath.alignment import cigar_runs
from swath.api import ALLPAIRS_BLOCK
from swath.cli.options import (
    SwathCommand,
    device_option,
    job_runner,
    mode_option,
    overwrite_option,
    probe_gpu_early,
    progress_option,
    rename_duplicates_option,
    scheduler_option,
    scoring_options,
    show_progress,
    verbose_option,
    wildcard_option,
    workers_option,
)
from swath.scoring import Scoring

if TYPE_CHECKING:      # the store reader (Zarr) loads when a command reads a store
    from swath.pairs import AllPairsResult

__all__ = ["BLAST6_COLUMNS", "allpairs", "blast6_row", "print_allpairs", "resume_allpairs"]

FORMATS = ("tsv", "json", "text")
IDDEFS = ("pident", "0", "1", "2", "3", "4")

# vsearch's --blast6out columns, then the raw score and the CIGAR
BLAST6_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart",
                  "qend", "sstart", "send", "evalue", "bitscore", "score", "cigar")

ProgressCallback = Callable[[int, int, int], None]   # (tiles done, tiles, pairs done)


def _iddef(value: str) -> str | int:
    """``--iddef`` as the API takes it: ``"pident"`` or vsearch's definitions 0 to 4."""
    return value if value == "pident" else int(value)


@contextmanager
def _tile_bar(enabled: bool) -> Iterator[ProgressCallback | None]:
    """A progress bar of tiles, with the pairs per second of the tiles done."""
    if not enabled:
        yield None
        return
    import tqdm

    make_bar: Any = tqdm.tqdm
    bars: list[Any] = []
    started = time.perf_counter()
    before = 0      # pairs of the tiles done before this run (a resumed job)

    def update(done: int, total: int, pairs: int) -> None:
        nonlocal before
        if not bars:
            bars.append(make_bar(total=total, initial=done, unit="tile", desc="swath allpairs",
                                 file=sys.stderr))
            before = pairs
        bar = bars[0]
        bar.n = done
        rate = (pairs - before) / max(time.perf_counter() - started, 1e-9)
        bar.set_postfix_str(f"{rate:,.0f} pairs/s", refresh=False)
        bar.refresh()

    try:
        yield update
    finally:
        for bar in bars:
            bar.close()


@click.command(cls=SwathCommand)
@click.argument("sequences", metavar="SEQS.fasta", type=click.Path(path_type=str))
@click.option("-o", "--output", required=True, metavar="RESULT.zarr",
              help="Result store (Zarr; a path or fsspec URL). Running the same command again "
                   "finishes what is missing.")
@click.option("--min-identity", type=click.FloatRange(0, 1, min_open=True), default=0.97,
              show_default=True,
              help="Keep the pairs whose identity reaches this [fraction, over 0 and at most 1].")
@click.option("--iddef", type=click.Choice(IDDEFS), default="pident", show_default=True,
              help="Identity: pident (BLAST's: matches over alignment columns) or vsearch's "
                   "--iddef 0 (matches over the shorter length), 1 (over columns), 2 (over "
                   "columns without terminal gaps; vsearch's default), 3 (1 - (mismatches + "
                   "gap opens) over the longer length) or 4 (as 1).")
@click.option("--scores", is_flag=True, default=False,
              help="Also store the dense n x n score matrix (int32; n^2 * 4 bytes).")
@click.option("--clusters", is_flag=True, default=False,
              help="Also store the single-linkage clusters of the kept pairs (an id per "
                   "sequence).")
@click.option("--block", type=click.IntRange(min=1), default=ALLPAIRS_BLOCK, show_default=True,
              metavar="N",
              help="Sequences per block [sequences]; a tile (two blocks, one task) is what "
                   "resume redoes, and a task's memory grows with N^2, never with the number "
                   "of sequences.")
@click.option("--format", "--outfmt", "fmt", type=click.Choice(FORMATS), default=None,
              help="Also print the kept pairs to stdout in this format (as `swath inspect`).")
@overwrite_option
@rename_duplicates_option
@scoring_options
@mode_option("global")
@wildcard_option
@device_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def allpairs(sequences: str, output: str, min_identity: float, iddef: str, scores: bool,
             clusters: bool, block: int, fmt: str | None, scoring: Scoring, mode: str,
             wildcard: bool, device: str, scheduler: str | None, workers: int | None,
             progress: bool | None, overwrite: bool, rename_duplicates: bool) -> None:
    """Align every pair of sequences of SEQS.fasta; keep those above an identity.

    Pairs are unordered and no sequence is paired with itself. Every pair is scored;
    a pair is aligned in full only if its lengths and its score allow the identity
    (pairs ruled out are counted, never dropped wrongly). The pairs that reach
    --min-identity go to the -o store, with the scores of all pairs (--scores) and
    the clusters (--clusters) if asked.

    \b
    Examples:
      swath allpairs --dna examples/amplicons.fasta -o pairs.zarr --format tsv
      swath allpairs --dna seqs.fasta -o pairs.zarr --min-identity 0.99 --iddef 2 --clusters
      swath inspect pairs.zarr --format text
    """
    probe_gpu_early(device, scheduler, ("traceback.cu",), workers)
    started = time.perf_counter()
    with job_runner(scheduler, workers, device) as client, \
            _tile_bar(show_progress(progress)) as bar:
        result = swath.allpairs(sequences, scoring, mode=mode, min_identity=min_identity,
                                iddef=_iddef(iddef), store=output, client=client,
                                device=device, scores=scores, clusters=clusters, block=block,
                                wildcard=wildcard, progress=bar, overwrite=overwrite,
                                rename_duplicates=rename_duplicates)
    click.echo(summary_line(result, time.perf_counter() - started), err=True)
    if fmt:
        print_allpairs(output, fmt)


def summary_line(result: AllPairsResult, seconds: float) -> str:
    """``swath: N pairs in S s (P pairs/s): ...`` the pairs, what each filter removed,
    what was traced and kept (and the clusters)."""
    counts = result.filtered
    pairs = int(counts["pairs"])
    line = (f"swath: {pairs:,} pairs in {seconds:.2f} s ({pairs / max(seconds, 1e-9):,.0f} "
            f"pairs/s): {int(counts['length_filtered']):,} ruled out by length, "
            f"{int(counts['score_filtered']):,} by score, {int(counts['traced']):,} aligned, "
            f"{int(counts['kept']):,} kept")
    groups = _clusters(result)
    if groups is not None:
        line += f", {groups:,} clusters"
    return line


def _clusters(result: AllPairsResult) -> int | None:
    """How many clusters the store holds, or None without clusters."""
    if not result.store.has_clusters:
        return None
    return len(np.unique(result.clusters()))


def resume_allpairs(store: str, device: str, scheduler: str | None, workers: int | None,
                    progress: bool | None) -> None:
    """Run the tiles of an all-pairs store not marked done, its clusters, then finalize it."""
    from swath.engine.allpairs import job_from_store, run

    job = job_from_store(store, device)
    with job_runner(scheduler, workers, device) as client, \
            _tile_bar(show_progress(progress)) as bar:
        run(job, client, bar)


# ---------------------------------------------------------------------------------
# Printing


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


def _fields(row: tuple[object, ...]) -> dict[str, Any]:
    """A row of ``AllPairsResult.to_table()`` by column name."""
    from swath.pairs import TABLE_COLUMNS

    return dict(zip(TABLE_COLUMNS, row, strict=True))


def blast6_row(row: tuple[object, ...]) -> tuple[object, ...]:
    """One row of ``AllPairsResult.to_table()`` in :data:`BLAST6_COLUMNS`: vsearch's
    ``--blast6out`` values (identity in percent, length and gap opens without terminal
    gaps, 1-based inclusive coordinates, e-value -1, bit score 0), then the raw score and
    the CIGAR."""
    r = _fields(row)
    length, opens = internal_columns(r["cigar"])
    return (r["query_id"], r["target_id"], 100.0 * r["identity"], length, r["mismatches"],
            opens, r["query_start"] + 1, r["query_end"], r["target_start"] + 1,
            r["target_end"], -1, 0, r["score"], r["cigar"])


def _tsv_cell(column: str, value: object) -> str:
    """A cell as vsearch prints it: identity with one decimal (``%.1f``)."""
    return f"{value:.1f}" if column == "pident" else str(value)


def print_allpairs(store: str, fmt: str) -> None:
    """Print the kept pairs of a finished all-pairs store: tsv (vsearch's --blast6out
    columns, the score, the CIGAR), json (those and the input indices and identity
    fraction, one object per pair and line) or text (a summary and the pairwise views)."""
    from swath.pairs import AllPairsResult

    result = AllPairsResult(store)
    if fmt == "text":
        _print_text(store, result)
        return
    for row in result.to_table():
        cells = blast6_row(row)
        if fmt == "tsv":
            click.echo("\t".join(_tsv_cell(c, v) for c, v in zip(BLAST6_COLUMNS, cells,
                                                                  strict=True)))
        else:
            r = _fields(row)
            record = dict(zip(BLAST6_COLUMNS, cells, strict=True))
            record.update(query_index=r["query_index"], target_index=r["target_index"],
                          identity=r["identity"])
            click.echo(json.dumps(record))


def summary_lines(store: str, result: AllPairsResult) -> list[str]:
    """The text view's head: the sequences, tiles, pairs, each filter's count, kept and
    clusters."""
    inputs = result.store.attrs["inputs"]
    counts = result.filtered
    n = result.store.sequences
    lines = [f"# {store}: all pairs of {n:,} sequences"]
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
    groups = _clusters(result)
    if groups is not None:
        lines.append(f"# Clusters:     {groups:,}")
    return lines


def _iddef_name(iddef: object) -> str:
    return "pident" if str(iddef) == "pident" else f"vsearch --iddef {iddef}"


def _print_text(store: str, result: AllPairsResult) -> None:
    from swath.alignment import Alignment
    from swath.views import format_text

    click.echo("\n".join(summary_lines(store, result)))
    scoring = Scoring.from_dict(result.store.attrs["inputs"]["scoring"])
    mode = result.store.attrs["inputs"]["mode"]
    sequences = _input_sequences(result)
    rows = result.to_table()
    how = _iddef_name(result.store.attrs["inputs"]["iddef"])
    for k, row in enumerate(rows):
        r = _fields(row)
        alignment = Alignment(r["score"], r["query_start"], r["query_end"], r["target_start"],
                              r["target_end"], r["cigar"], mode)
        click.echo("")
        click.echo(f"# pair {k + 1} of {len(rows)}: identity {100 * r['identity']:.1f}% "
                   f"({how})")
        click.echo(format_text(alignment, sequences[r["query_index"]],
                               sequences[r["target_index"]], scoring, query_name=r["query_id"],
                               target_name=r["target_id"]), nl=False)


def _input_sequences(result: AllPairsResult) -> list[np.ndarray]:
    """The stored sequences (codes) in input order; the store keeps them sorted by length."""
    store = result.store
    residues = np.asarray(store.array("residues")[:], dtype=np.uint8)
    offsets = np.asarray(store.array("offsets")[:], dtype=np.int64)
    by_input: list[np.ndarray] = [np.empty(0, np.uint8)] * store.sequences
    for s, i in enumerate(store.order().tolist()):
        by_input[i] = residues[offsets[s]:offsets[s + 1]]
    return by_input
