"""``swath align A.fasta B.fasta``: align the first record of each file and print it."""

from __future__ import annotations

import json
import logging
import time

import click

import swath
from swath.cli.options import (
    SwathCommand,
    device_option,
    mode_option,
    progress_option,
    scoring_options,
    show_progress,
    verbose_option,
    wildcard_option,
)
from swath.scoring import Scoring
from swath.sequences import read_sequences
from swath.views import RECORD_FIELDS, alignment_record, format_text

__all__ = ["align"]

logger = logging.getLogger(__name__)

FORMATS = ("text", "json", "tsv")


def _tsv_value(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


@click.command(cls=SwathCommand)
@click.argument("query", metavar="A.fasta", type=click.Path(path_type=str))
@click.argument("target", metavar="B.fasta", type=click.Path(path_type=str))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: header and pairwise view (like EMBOSS water/needle); json: one "
                   "object; tsv: a header line and one row. json and tsv coordinates are "
                   "0-based, end exclusive.")
@scoring_options
@mode_option("local")
@wildcard_option
@device_option
@verbose_option
@progress_option
def align(query: str, target: str, fmt: str, scoring: Scoring, mode: str, wildcard: bool,
          device: str, progress: bool | None) -> None:
    """Align the first sequence of A.fasta against the first sequence of B.fasta.

    Files are FASTA or FASTQ, plain or gzip; only their first records are read.
    The alignment is exact, with affine gaps (a gap of length k costs
    open + k * extend), and is printed to stdout.

    \b
    Examples:
      swath align examples/query.fasta examples/target.fasta
      swath align --dna --mode global a.fa b.fa --format json
    """
    queries = read_sequences(query, scoring.alphabet, wildcard=wildcard, limit=1)
    targets = read_sequences(target, scoring.alphabet, wildcard=wildcard, limit=1)
    query_id, target_id = queries.names[0], targets.names[0]
    q, t = queries[0], targets[0]
    report = show_progress(progress)
    if report:
        click.echo(f"swath: aligning {query_id} ({len(q)} residues) against {target_id} "
                   f"({len(t)} residues), {mode}", err=True)
    started = time.perf_counter()
    alignment = swath.align(q, t, scoring=scoring, mode=mode, device=device)
    elapsed = time.perf_counter() - started
    logger.info("aligned %s against %s in %.3f s: score %d", query_id, target_id, elapsed,
                alignment.score)
    if report:
        click.echo(f"swath: done in {elapsed:.2f} s", err=True)

    if fmt == "text":
        click.echo(format_text(alignment, q, t, scoring, query_name=query_id,
                               target_name=target_id), nl=False)
        return
    record = alignment_record(alignment, query_id, target_id)
    if fmt == "json":
        click.echo(json.dumps(record))
    else:
        click.echo("\t".join(RECORD_FIELDS))
        click.echo("\t".join(_tsv_value(record[field]) for field in RECORD_FIELDS))
