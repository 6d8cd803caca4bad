"""``swath search``: database search jobs, and how their stores are resumed and printed."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

import swath
from swath.cli.options import (
    SwathCommand,
    device_option,
    job_runner,
    mode_option,
    overwrite_option,
    probe_gpu_early,
    progress_option,
    scheduler_option,
    scoring_options,
    show_progress,
    verbose_option,
    wildcard_option,
    workers_option,
)
from swath.scoring import Scoring

__all__ = ["print_search", "resume_search", "search"]

FORMATS = ("tsv", "json", "text")


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    if not enabled:
        yield None
        return
    import tqdm

    make_bar: Any = tqdm.tqdm
    bar = make_bar(unit="unit", desc="swath search", file=sys.stderr)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()


@click.command(cls=SwathCommand)
@click.argument("queries", metavar="QUERIES.fasta", type=click.Path(path_type=str))
@click.argument("database", metavar="DB.{fasta,swdb}", type=str)
@click.option("-o", "--output", required=True, metavar="RESULT.zarr",
              help="Result store (Zarr; a path or fsspec URL). Running the same search again "
                   "finishes what is missing.")
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Hits kept per query.")
@click.option("--max-evalue", type=click.FloatRange(min=0), default=None,
              help="Drop hits with a larger e-value (local mode).")
@click.option("--outfmt", type=click.Choice(FORMATS), default=None,
              help="Also print the hits to stdout in this format (as `swath inspect`).")
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
@scheduler_option
@workers_option
@verbose_option
@progress_option
def search(queries: str, database: str, output: str, top_k: int, max_evalue: float | None,
           outfmt: str | None, query_block: int, lambda_: float | None, K: float | None,
           H: float | None, scoring: Scoring, mode: str, wildcard: bool, device: str,
           scheduler: str | None, workers: int | None, progress: bool | None,
           overwrite: bool) -> None:
    """Search QUERIES.fasta against a database (a `swath makedb` store or a FASTA file).

    \b
    Examples:
      swath makedb db.fasta db.swdb
      swath search queries.fasta db.swdb -o result.zarr --top-k 10 --outfmt tsv
    """
    probe_gpu_early(device, scheduler, ("search.cu", "traceback.cu"), workers)
    given = {k: v for k, v in (("lambda_", lambda_), ("K", K), ("H", H)) if v is not None}
    with job_runner(scheduler, workers, device) as client, \
            _progress_bar(show_progress(progress)) as bar:
        swath.search(queries, database, scoring=scoring, top_k=top_k, client=client,
                     store=output, mode=mode, device=device, max_evalue=max_evalue,
                     statistics=given or None, query_block=query_block, wildcard=wildcard,
                     progress=bar, overwrite=overwrite)
    if outfmt:
        print_search(output, outfmt)


def resume_search(store: str, device: str, scheduler: str | None, workers: int | None,
                  progress: bool | None) -> None:
    """Run the work units of a search store not marked done, then finalize it."""
    from swath.engine.search import job_from_store, run

    job = job_from_store(store, device)
    with job_runner(scheduler, workers, device) as client, \
            _progress_bar(show_progress(progress)) as bar:
        run(job, client, bar)


def print_search(store: str, fmt: str) -> None:
    from swath.hits import TABULAR_COLUMNS, SearchResult

    result = SearchResult(store)
    if fmt == "tsv":
        for row in result.to_table():
            click.echo("\t".join(_cell(column, v) for column, v in zip(TABULAR_COLUMNS, row,
                                                                        strict=True)))
    elif fmt == "json":
        for row in result.to_table():
            click.echo(json.dumps(dict(zip(TABULAR_COLUMNS, row, strict=True))))
    else:
        _print_text(result)


_FLOAT_FORMATS = {"pident": "{:.3f}", "evalue": "{:.3g}", "bitscore": "{:.1f}"}


def _cell(column: str, value: object) -> str:
    """A tabular cell as BLAST prints it (empty for a missing e-value or bit score)."""
    if value is None:
        return ""
    return _FLOAT_FORMATS[column].format(value) if column in _FLOAT_FORMATS else str(value)


def _print_text(result: Any) -> None:
    from swath.engine.search import stored_scoring
    from swath.storage.database import Database
    from swath.views import format_text

    db = Database.open(result.store.attrs["inputs"]["database"])
    queries = result.store.queries()
    scoring = stored_scoring(result.store)
    for qi, name in enumerate(result.query_names):
        for hit in result.hits(qi):
            click.echo(f"# hit: e-value {hit.evalue:.3g}, bit score {hit.bitscore:.1f}"
                       if not math.isnan(hit.evalue) else f"# hit: score {hit.score} (no "
                       "e-value: Karlin-Altschul statistics are for local alignments)")
            click.echo(format_text(hit.alignment, queries[qi], db.sequence(hit.target_id),
                                   scoring, query_name=name, target_name=hit.target_name),
                       nl=False)
            click.echo("")
