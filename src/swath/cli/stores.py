"""``swath inspect``, ``swath resume`` and ``swath verify``: any swath store, by its layout.

The result stores are a search's (``swath search``), a long pair's (``swath align
-o``: with origins, with its path found by splits, or scores only) and an all-pairs job's
(``swath allpairs``). ``inspect`` prints a finished one whose data match their digests;
``resume`` recomputes damaged units, finishes an unfinished one and leaves a finished,
sound one alone; ``verify`` checks any store (databases too) against its digests.
"""

from __future__ import annotations

import click

import swath
from swath.cli.options import (
    COLUMNS_HELP,
    OutputFormat,
    SwathCommand,
    cigar_m_option,
    cluster,
    command_line,
    device_option,
    progress_option,
    scheduler_option,
    show_progress,
    threads_option,
    verbose_option,
    workers_option,
)
from swath.cli.output import emit, out_format, out_option
from swath.cli.progress import progress_bars
from swath.errors import StoreDamaged, StoreIncomplete

__all__ = ["inspect", "resume", "verify"]

# every format of every workload, in the order of the first that prints it
FORMATS = tuple(dict.fromkeys(f for formats in swath.FORMATS.values() for f in formats))


@click.command(cls=SwathCommand)
@click.argument("store", metavar="RESULT.zarr")
@device_option
@threads_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def resume(store: str, device: str, scheduler: str | None, workers: int | None,
           progress: bool | None) -> None:
    """Finish an interrupted job (a search, all pairs, batched pairs, or a long pair in any
    phase): run only the work not marked done, and again the work whose data no longer
    match their digests. A finished, sound store is left as it is."""
    try:
        swath.open(store)
    except (StoreIncomplete, StoreDamaged):
        shown = show_progress(progress)
        with progress_bars(shown) as bar:
            swath.resume(store, device=device, client=cluster(scheduler, workers, shown),
                         progress=bar)
        click.echo(f"swath: {store} is complete", err=True)
        return
    click.echo(f"swath: {store} is complete already: nothing to resume", err=True)


@click.command(cls=SwathCommand)
@click.argument("store", metavar="STORE")
@verbose_option
def verify(store: str) -> None:
    """Check every done unit of a store (a result store or a database) against the digest
    written with it; exit status 2 and one line naming the damaged units if any."""
    counts = swath.verify(store)
    checked = ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items())
    click.echo(f"swath: {store} is sound ({checked} checked)", err=True)


@click.command(cls=SwathCommand)
@click.argument("store", metavar="RESULT.zarr")
@click.option("--format", "fmt", type=OutputFormat(FORMATS, named_columns=True), default=None,
              help="Search stores: tsv (blastp's 12 tabular columns, 1-based inclusive; the "
                   "default), json (one object per hit and "
                   "line) or text (pairwise views). All-pairs stores: tsv (vsearch's "
                   "--blast6out columns, then the raw score and the CIGAR; the default), "
                   "blast6out (its 12 columns alone), json (one object per kept pair and "
                   "line), text (a summary and the kept pairs' views), uc (vsearch "
                   "--allpairs_global's --uc records: H a kept pair, N a query without "
                   "one), or, with clusters, clusters-uc (vsearch --cluster_fast's --uc "
                   "records) or centroids (FASTA, as vsearch's --centroids). Batched-pairs "
                   "stores: tsv "
                   "(as search's; the default), json (one object per pair and line) or "
                   "text. All three: sam (targets as references, each query a read) or paf "
                   "(as minimap2 -c --eqx writes it). "
                   "Alignment stores: json (one line; the default), tsv, or text (a summary "
                   "and the alignment in blocks). Search and batched-pairs stores: " +
                   COLUMNS_HELP)
@click.option("--plot", type=click.Path(dir_okay=False, path_type=str), default=None,
              metavar="PATH.png", help="Alignment stores with a path (all but --score-only): "
                                       "draw it over the matrix (a dot plot) to PATH.png "
                                       "(needs matplotlib).")
@out_option
@cigar_m_option
@verbose_option
def inspect(store: str, fmt: str | None, plot: str | None, out: str | None,
            cigar_m: bool) -> None:
    """Print the results of a finished search, all-pairs, batched-pairs or alignment store
    (refused if any of its data no longer match their digests)."""
    fmt = out_format(out, fmt, FORMATS, None, inputs=(store,))
    emit(swath.report(store, fmt, plot=plot, cigar_m=cigar_m, command=command_line()), out)
    if plot:
        click.echo(f"swath: wrote {plot}", err=True)
