"""``swath search``: database search jobs."""

from __future__ import annotations

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

__all__ = ["search"]


@click.command(cls=SwathCommand)
@click.argument("queries", metavar="QUERIES.fasta", type=click.Path(path_type=str))
@click.argument("database", metavar="DB.{fasta,swdb}", type=str)
@click.option("-o", "--output", required=True, metavar="RESULT.zarr",
              help="Result store (Zarr; a path or fsspec URL). Running the same search again "
                   "finishes what is missing.")
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Hits kept per query.")
@click.option("--max-hsps", type=click.IntRange(min=1), default=1, show_default=True,
              help="Alignments kept a subject, as blastp's -max_hsps (local mode): its best, "
                   "then each the best through none of the cells of those before it, while "
                   "they score above 0.")
@click.option("--max-evalue", type=click.FloatRange(min=0), default=None,
              help="Drop hits with a larger e-value.  [default: 10, as blastp, where hits "
                   "have e-values (local mode, with published or given statistics); given, "
                   "it is refused where they have none]")
@click.option("--outfmt", type=OutputFormat(swath.FORMATS["search"], named_columns=True),
              default=None,
              help="Also print the hits to stdout in this format (as `swath inspect`): tsv "
                   "(blastp's 12 tabular columns), json, text, sam (the hit targets as "
                   "references, each query a read) or paf. " + COLUMNS_HELP)
@out_option
@cigar_m_option
@click.option("--query-block", type=click.IntRange(min=1), default=32, show_default=True,
              help="Queries per work unit [queries]; a unit is what resume redoes.")
@click.option("--lambda", "lambda_", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Karlin-Altschul lambda [nats per score unit], with --k and --h, for a "
                   "matrix and gap combination without published parameters.")
@click.option("--k", "K", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Karlin-Altschul K (with --lambda and --h).")
@click.option("--h", "H", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Karlin-Altschul H [nats per aligned pair] (with --lambda and --k).")
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
def search(queries: str, database: str, output: str, top_k: int, max_hsps: int,
           max_evalue: float | None,
           outfmt: str | None, out: str | None, query_block: int, lambda_: float | None,
           K: float | None, H: float | None, cigar_m: bool, scoring: swath.Scoring, mode: str,
           wildcard: bool, device: str, scheduler: str | None, workers: int | None,
           progress: bool | None, overwrite: bool) -> None:
    """Search QUERIES.fasta against a database (a `swath makedb` store or a FASTA file).

    \b
    Examples:
      swath makedb db.fasta db.swdb
      swath search queries.fasta db.swdb -o result.zarr --top-k 10 --outfmt tsv
    """
    outfmt = out_format(out, outfmt, swath.FORMATS["search"], "tsv", replace=overwrite,
                        inputs=(queries, database, output))
    given = {k: v for k, v in (("lambda_", lambda_), ("K", K), ("H", H)) if v is not None}
    with running("search", device, scheduler, workers, progress, (scoring, mode)) as (
            where, watch):
        result = swath.search(queries, database, scoring=scoring, top_k=top_k,
                              max_hsps=max_hsps, client=where,
                              store=output, mode=mode, device=device, max_evalue=max_evalue,
                              statistics=given or None, query_block=query_block,
                              wildcard=wildcard, progress=watch, overwrite=overwrite)
    print_result(result, outfmt, out, cigar_m=cigar_m, replace=overwrite)
