"""``swath align A.fasta B.fasta``: align the first record of each file; long pairs in tiles
with a resumable store (``-o``)."""

from __future__ import annotations

import logging
import time

import click

import swath
from swath.cli.options import (
    SwathCommand,
    cluster,
    device_option,
    mode_option,
    overwrite_option,
    progress_option,
    scheduler_option,
    scoring_options,
    show_progress,
    threads_option,
    verbose_option,
    wildcard_option,
    workers_option,
)
from swath.cli.output import check_out, emit, out_format, out_option
from swath.cli.progress import progress_bars

__all__ = ["align"]

logger = logging.getLogger(__name__)


@click.command(cls=SwathCommand)
@click.argument("query", metavar="A.fasta", type=click.Path(path_type=str))
@click.argument("target", metavar="B.fasta", type=click.Path(path_type=str))
@click.option("-o", "--output", metavar="RESULT.zarr", default=None,
              help="Align in tiles on Dask and keep the result in this Zarr store "
                   "(resumable with `swath resume`, printed by `swath inspect`).")
@click.option("--tile-size", type=click.IntRange(min=1), default=None, metavar="N",
              help="Tiles of N x N cells (forces the tiled path) [default with -o: 8192]. "
                   "Pairs whose traceback would need over 1 GiB take the tiled path anyway.")
@click.option("--strip", type=click.IntRange(min=1), default=None, metavar="S",
              help="Strip width inside a tile [default: 256].")
@click.option("--score-only", is_flag=True,
              help="The score and end cell only, no traceback (StripedScore: the tiled "
                   "path in tiles of any size; on a GPU, slabs of up to 786,432 rows).")
@click.option("--format", "fmt", type=click.Choice(swath.FORMATS["longpair"]), default=None,
              help="text: header and pairwise view (like EMBOSS water/needle; the default "
                   "without -o); json: one object; tsv: a header line and one row. json and "
                   "tsv coordinates are 0-based, end exclusive. With -o nothing is printed "
                   "unless a format (or --out) is given.")
@out_option
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
def align(query: str, target: str, output: str | None, tile_size: int | None,
          strip: int | None, score_only: bool, fmt: str | None, out: str | None,
          scoring: swath.Scoring, mode: str, wildcard: bool, device: str,
          scheduler: str | None, workers: int | None, progress: bool | None,
          overwrite: bool) -> None:
    """Align the first sequence of A.fasta against the first sequence of B.fasta.

    Files are FASTA or FASTQ, plain or gzip; only their first records are read.
    The alignment is exact, with affine gaps (a gap of length k costs
    open + k * extend). Long pairs (genomes, chromosomes) are cut into tiles run
    as a Dask wavefront; their boundaries go to the -o store, so an interrupted
    job resumes where it stopped.

    \b
    Examples:
      swath align examples/query.fasta examples/target.fasta
      swath align --dna --mode global a.fa b.fa --format json
      swath align --dna genome1.fa genome2.fa -o pair.zarr
      swath inspect pair.zarr --format json
      swath align --dna genome1.fa genome2.fa --score-only --format json
    """
    fmt = out_format(out, fmt, swath.FORMATS["longpair"], "text")
    check_out(out, replace=overwrite)
    where = cluster(scheduler, workers)
    swath.warm_up(device, client=where)
    queries = swath.read_sequences(query, scoring.alphabet, wildcard=wildcard, limit=1)
    targets = swath.read_sequences(target, scoring.alphabet, wildcard=wildcard, limit=1)
    names = queries.names[0], targets.names[0]
    q, t = queries[0], targets[0]
    report = show_progress(progress)
    if report:
        click.echo(f"swath: aligning {names[0]} ({len(q)} residues) against {names[1]} "
                   f"({len(t)} residues), {mode}", err=True)
    started = time.perf_counter()
    job = swath.score if score_only else swath.align
    with progress_bars(report) as bar:
        result = job(q, t, scoring=scoring, mode=mode, device=device, store=output,
                     tile_size=tile_size, strip=strip, client=where, names=names,
                     progress=bar, overwrite=overwrite)
    elapsed = time.perf_counter() - started
    if not score_only:
        logger.info("aligned %s against %s in %.3f s: score %d", *names, elapsed, result.score)
    if report:
        click.echo(f"swath: done in {elapsed:.2f} s, score {result.score}", err=True)
    if fmt or not output:
        emit([swath.format_alignment(result, fmt or "text", query=q, target=t,
                                     scoring=scoring, names=names)], out, replace=overwrite)
