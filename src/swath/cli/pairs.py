"""``swath pairs``: batched pairs, one full alignment a given pair."""

from __future__ import annotations

import time

import click

import swath
from swath.cli.options import (
    COLUMNS_HELP,
    OutputFormat,
    SwathCommand,
    cigar_m_option,
    device_option,
    mode_option,
    overwrite_option,
    progress_option,
    scheduler_option,
    scoring_options,
    threads_option,
    verbose_option,
    wildcard_option,
    workers_option,
)
from swath.cli.output import out_format, out_option, print_result
from swath.cli.progress import running

__all__ = ["pairs"]

@click.command(cls=SwathCommand)
@click.argument("queries", metavar="QUERIES.fasta", type=click.Path(path_type=str))
@click.argument("targets", metavar="TARGETS.fasta", type=click.Path(path_type=str))
@click.option("-o", "--output", required=True, metavar="RESULT.zarr",
              help="Result store (Zarr; a path or fsspec URL). Running the same job again "
                   "finishes what is missing.")
@click.option("--pairs", "pairs_file", metavar="PAIRS.tsv", default=None,
              type=click.Path(path_type=str),
              help="Pair records by name: a line per pair, the query's name then the "
                   "target's (tab or spaces; '#' lines skipped). Default: by record order, "
                   "query i with target i.")
@click.option("--outfmt", type=OutputFormat(swath.FORMATS["pairs"], named_columns=True),
              default=None,
              help="Also print the alignments in this format (as `swath inspect`); default "
                   "with --out: from its suffix (.sam, .paf, .tsv, .json), else tsv (BLAST's "
                   "12 tabular columns, then the raw score and the CIGAR). " + COLUMNS_HELP)
@out_option
@click.option("--chunk", type=click.IntRange(min=1), default=None,
              help="Pairs per chunk [pairs; default 65,536, fewer for long pairs]: a chunk is "
                   "one task and what resume redoes; a task's memory grows with it, never "
                   "with the input.")
@cigar_m_option
@overwrite_option
@scoring_options
@mode_option("local")
@wildcard_option
@device_option
@threads_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def pairs(queries: str, targets: str, output: str, pairs_file: str | None, outfmt: str | None,
          out: str | None, chunk: int | None, cigar_m: bool, scoring: swath.Scoring, mode: str,
          wildcard: bool, device: str, scheduler: str | None, workers: int | None,
          progress: bool | None, overwrite: bool) -> None:
    """Align each query of QUERIES.fasta with its target in TARGETS.fasta, in full.

    Pairs are by record order (the files hold as many records each), or by name with
    --pairs. Each pair gets one optimal alignment, with its CIGAR, into the -o store;
    --outfmt prints them (SAM with the targets as references, PAF, BLAST-like tsv).

    \b
    Examples:
      swath pairs --dna reads.fasta contigs.fasta -o aln.zarr --outfmt sam --out aln.sam
      swath pairs --dna reads.fq contigs.fa --pairs candidates.tsv -o aln.zarr --mode semiglobal
      swath inspect aln.zarr --format paf
    """
    outfmt = out_format(out, outfmt, swath.FORMATS["pairs"], "tsv", replace=overwrite,
                        inputs=(queries, targets, pairs_file, output))
    started = time.perf_counter()
    with running("pairs", device, scheduler, workers, progress) as (where, watch):
        result = swath.align_pairs(queries, targets, scoring, mode, device, pairs=pairs_file,
                                   store=output, client=where, chunk=chunk, wildcard=wildcard,
                                   progress=watch, overwrite=overwrite)
    if watch.complete_already:
        click.echo(f"swath: {output} was complete already (nothing to run): {len(result):,} "
                   "pairs", err=True)
    else:
        click.echo(f"swath: {len(result):,} pairs ({result.cells:.3g} cells) in "
                   f"{time.perf_counter() - started:.2f} s, in {output}", err=True)
    print_result(result, outfmt, out, cigar_m=cigar_m, replace=overwrite)
