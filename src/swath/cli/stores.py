"""``swath inspect`` and ``swath resume``: any swath result store, by its layout.

The result stores are a search's (``swath search``), a long pair's (``swath align
-o``: with origins, with its path found by splits, or scores only) and an all-pairs job's
(``swath allpairs``). ``inspect`` prints a finished one; ``resume`` finishes an unfinished
one and leaves a finished one alone.
"""

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
from swath.errors import InvalidParameter, StoreIncomplete

__all__ = ["inspect", "resume"]

FORMATS = ("tsv", "json", "text")


def _layout(store: str) -> tuple[str, bool]:
    """The result store's layout (its version checked), and whether its job has finished."""
    from swath.storage.allpairs import AllPairsStore
    from swath.storage.common import store_layout
    from swath.storage.longpair import AlignmentStore
    from swath.storage.results import SearchStore

    layout, version = store_layout(store)
    kinds = {"search": SearchStore, "alignment": AlignmentStore, "allpairs": AllPairsStore}
    if layout not in kinds:
        raise InvalidParameter(f"{store} is a {layout!r} store version {version}: inspect and "
                               "resume read search, alignment and allpairs result stores")
    opened = kinds[layout].open(store, complete=False)
    return layout, opened.attrs.get("complete") is True


@click.command(cls=SwathCommand)
@click.argument("store", metavar="RESULT.zarr")
@device_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def resume(store: str, device: str, scheduler: str | None, workers: int | None,
           progress: bool | None) -> None:
    """Finish an interrupted job (a search, all pairs, or a long pair in any phase): run
    only the work not marked done. A finished store is left as it is."""
    layout, complete = _layout(store)
    if complete:
        click.echo(f"swath: {store} is complete already: nothing to resume", err=True)
        return
    if layout == "search":
        from swath.cli.search import resume_search

        resume_search(store, device, scheduler, workers, progress)
    elif layout == "allpairs":
        from swath.cli.allpairs import resume_allpairs

        resume_allpairs(store, device, scheduler, workers, progress)
    else:
        from swath.cli.align import resume_alignment

        resume_alignment(store, device, scheduler, workers, progress)
    click.echo(f"swath: {store} is complete", err=True)


@click.command(cls=SwathCommand)
@click.argument("store", metavar="RESULT.zarr")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Search stores: tsv (BLAST's 12 tabular columns, 1-based inclusive, then "
                   "the raw score and the CIGAR; the default), json (one object per hit and "
                   "line) or text (pairwise views). All-pairs stores: tsv (vsearch's "
                   "--blast6out columns, then the raw score and the CIGAR; the default), json "
                   "(one object per kept pair and line) or text (a summary and the kept "
                   "pairs' views). Alignment stores: json (one line; the default), tsv, or "
                   "text (a summary and the alignment in blocks).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=str), default=None,
              metavar="PATH.png", help="Alignment stores with a path (all but --score-only): "
                                       "draw it over the matrix (a dot plot) to PATH.png "
                                       "(needs matplotlib).")
@verbose_option
def inspect(store: str, fmt: str | None, plot: str | None) -> None:
    """Print the results of a finished search, all-pairs or alignment store."""
    layout, complete = _layout(store)
    if layout in ("search", "allpairs") and plot:
        kind, what = (("a search store", "hits'") if layout == "search" else
                      ("an allpairs store", "kept pairs'"))
        raise InvalidParameter(f"--plot draws the path of a long pair's alignment store "
                               f"(swath align -o); {store} is {kind} (--format text shows "
                               f"its {what} alignments)")
    if not complete:
        raise StoreIncomplete(f"{store}: the store was not finished (the job writing it was "
                              "interrupted or is still running; finish it with `swath resume "
                              f"{store}`)")
    if layout == "search":
        from swath.cli.search import print_search

        print_search(store, fmt or "tsv")
    elif layout == "allpairs":
        from swath.cli.allpairs import print_allpairs

        print_allpairs(store, fmt or "tsv")
    else:
        from swath.cli.align import print_alignment_store

        print_alignment_store(store, fmt or "json", plot)
