"""``swath align A.fasta B.fasta``: align the first record of each file; long pairs in tiles
with a resumable store (``-o``)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import click

import swath
from swath.cli.options import (
    CommandError,
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
from swath.cli.output import emit, out_format, out_option
from swath.cli.progress import progress_bars

if TYPE_CHECKING:
    import numpy as np

__all__ = ["align"]

logger = logging.getLogger(__name__)


@click.command(cls=SwathCommand)
@click.argument("query", metavar="A.fasta", type=click.Path(path_type=str))
@click.argument("target", metavar="B.fasta", type=click.Path(path_type=str))
@click.option("-o", "--output", metavar="RESULT.zarr", default=None,
              help="Align in tiles on Dask and keep the result in this Zarr store "
                   "(resumable with `swath resume`, printed by `swath inspect`).")
@click.option("--tile-size", type=click.IntRange(min=1), default=None, metavar="N",
              help="Tiles of N x N cells (forces the tiled path) [default with -o on the "
                   "CPU: 16384 for a local DNA pair or --score-only, else 8192]. "
                   "Pairs whose traceback would need over 1 GiB take the tiled path anyway.")
@click.option("--strip", type=click.IntRange(min=1), default=None, metavar="S",
              help="Strip width inside a tile [default: 256].")
@click.option("--score-only", is_flag=True,
              help="The score and end cell only, no traceback (StripedScore: the tiled "
                   "path in tiles of any size; on a GPU, slabs of up to 786,432 rows).")
@click.option("--all-pairs", is_flag=True,
              help="Align every record of A.fasta (not only its first) against every record "
                   "of B.fasta.")
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
          strip: int | None, score_only: bool, all_pairs: bool, fmt: str | None,
          out: str | None,
          scoring: swath.Scoring, mode: str, wildcard: bool, device: str,
          scheduler: str | None, workers: int | None, progress: bool | None,
          overwrite: bool) -> None:
    """Align the first sequence of A.fasta against every sequence of B.fasta.

    As EMBOSS water and needle do: the first record of A.fasta (every record with
    --all-pairs) against each record of B.fasta, one alignment printed after another
    (in B.fasta's order; for each record of A.fasta in turn). Files are FASTA or FASTQ,
    plain or gzip. The alignment is exact, with affine gaps (a gap of length k costs
    open + k * extend). Long pairs (genomes, chromosomes) are cut into tiles run as a
    Dask wavefront; their boundaries go to the -o store (one pair: one record in each
    file), so an interrupted job resumes where it stopped. Many pairs at once: `swath
    pairs`.

    \b
    Examples:
      swath align examples/query.fasta examples/target.fasta
      swath align --dna --mode global a.fa b.fa --format json
      swath align --dna genome1.fa genome2.fa -o pair.zarr
      swath inspect pair.zarr --format json
      swath align --dna genome1.fa genome2.fa --score-only --format json
    """
    fmt = out_format(out, fmt, swath.FORMATS["longpair"], "text", replace=overwrite,
                     inputs=(query, target, output))
    report = show_progress(progress)
    where = cluster(scheduler, workers, report)
    swath.warm_up(device, client=where)
    queries = swath.read_sequences(query, scoring.alphabet, wildcard=wildcard,
                                   limit=None if all_pairs else 1)
    targets = swath.read_sequences(target, scoring.alphabet, wildcard=wildcard)
    count = len(queries) * len(targets)
    if output and count > 1:
        raise CommandError(f"-o keeps the store of one pair; {query} against {target} makes "
                           f"{count} pairs (give one record in each file, or align many "
                           "pairs with `swath pairs`)")
    shown = fmt or (None if output else "text")      # with -o, printed only when asked
    texts: list[str] = []
    for i in range(len(queries)):
        for j in range(len(targets)):
            names = queries.names[i], targets.names[j]
            q, t = queries[i], targets[j]
            result = _one(q, t, names, scoring, mode, device, output, tile_size, strip, where,
                          score_only, report, overwrite)
            if shown:
                text = swath.format_alignment(result, shown, query=q, target=t,
                                              scoring=scoring, names=names)
                texts.append(text if not texts or shown != "tsv" else text.split("\n", 1)[1])
    if texts:         # text views a blank line apart, tsv rows under one header
        emit(["\n".join(texts)] if shown == "text" else texts, out, replace=overwrite)


def _one(q: np.ndarray, t: np.ndarray, names: tuple[str, str], scoring: swath.Scoring,
         mode: str, device: str, output: str | None, tile_size: int | None,
         strip: int | None, where: swath.Cluster, score_only: bool, report: bool,
         overwrite: bool) -> swath.Alignment | swath.PairScore:
    """One pair aligned (or scored), with its progress and timing on stderr if ``report``."""
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
    return result
