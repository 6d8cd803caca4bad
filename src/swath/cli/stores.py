"""``swath inspect`` and ``swath resume``: any swath result store, by its layout."""

from __future__ import annotations

import click

from swath.cli.options import (
    SwathCommand,
    device_option,
    progress_option,
    scheduler_option,
    verbose_option,
    workers_option,
)
from swath.errors import InvalidParameter

__all__ = ["inspect", "resume"]

FORMATS = ("tsv", "json", "text")


def _layout(store: str) -> str:
    from swath.storage.common import store_layout

    layout, version = store_layout(store)
    if layout not in ("search", "alignment"):
        raise InvalidParameter(f"{store} is a {layout!r} store version {version}: inspect and "
                               "resume read search and alignment result stores")
    return layout


@click.command(cls=SwathCommand)
@click.argument("store", metavar="RESULT.zarr")
@device_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def resume(store: str, device: str, scheduler: str | None, workers: int | None,
           progress: bool | None) -> None:
    """Finish an interrupted job (a search, or a long pair in any phase): run only the
    work not marked done."""
    if _layout(store) == "search":
        from swath.cli.search import resume_search

        resume_search(store, device, scheduler, workers, progress)
    else:
        from swath.cli.align import resume_alignment

        resume_alignment(store, device, scheduler, workers, progress)
    click.echo(f"swath: {store} is complete", err=True)


@click.command(cls=SwathCommand)
@click.argument("store", metavar="RESULT.zarr")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Search stores: tsv (BLAST's 12 tabular columns, 1-based inclusive, then "
                   "the raw score and the CIGAR; the default), json (one object per hit and "
                   "line) or text (pairwise views). Alignment stores: json (one line; the "
                   "default), tsv, or text (a summary and the alignment in blocks).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=str), default=None,
              metavar="PATH.png", help="Alignment stores: draw the alignment path over the "
                                       "matrix (a dot plot) to PATH.png (needs matplotlib).")
@verbose_option
def inspect(store: str, fmt: str | None, plot: str | None) -> None:
    """Print the results of a finished search or alignment store."""
    if _layout(store) == "search":
        if plot:
            raise InvalidParameter("--plot draws alignment stores (swath align -o), "
                                   f"{store} is a search store")
        from swath.cli.search import print_search

        print_search(store, fmt or "tsv")
    else:
        from swath.cli.align import print_alignment_store

        print_alignment_store(store, fmt or "json", plot)
