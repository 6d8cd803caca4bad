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
    SwathCommand,
    device_option,
    progress_option,
    scheduler_option,
    verbose_option,
    workers_option,
)
from swath.errors import InvalidParameter, StoreIncomplete

__all__ = ["inspect", "resume", "verify"]

FORMATS = ("tsv", "json", "text")


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
    only the work not marked done, and again the work whose data no longer match their
    digests. A finished, sound store is left as it is."""
    from swath.storage.layouts import open_result

    opened = open_result(store)
    if opened.attrs.get("complete") is True and not any(opened.damaged().values()):
        click.echo(f"swath: {store} is complete already: nothing to resume", err=True)
        return
    if opened.LAYOUT == "search":
        from swath.cli.search import resume_search

        resume_search(store, device, scheduler, workers, progress)
    elif opened.LAYOUT == "allpairs":
        from swath.cli.allpairs import resume_allpairs

        resume_allpairs(store, device, scheduler, workers, progress)
    else:
        from swath.cli.align import resume_alignment

        resume_alignment(store, device, scheduler, workers, progress)
    click.echo(f"swath: {store} is complete", err=True)


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
    """Print the results of a finished search, all-pairs or alignment store (refused if
    any of its data no longer match their digests)."""
    from swath.storage.layouts import open_result

    opened = open_result(store)
    layout = opened.LAYOUT
    if layout in ("search", "allpairs") and plot:
        kind, what = (("a search store", "hits'") if layout == "search" else
                      ("an allpairs store", "kept pairs'"))
        raise InvalidParameter(f"--plot draws the path of a long pair's alignment store "
                               f"(swath align -o); {store} is {kind} (--format text shows "
                               f"its {what} alignments)")
    if opened.attrs.get("complete") is not True:
        raise StoreIncomplete(f"{store}: the store was not finished (the job writing it was "
                              "interrupted or is still running; finish it with `swath resume "
                              f"{store}`)")
    opened.check_sound()
    if layout == "search":
        from swath.cli.search import print_search

        print_search(store, fmt or "tsv")
    elif layout == "allpairs":
        from swath.cli.allpairs import print_allpairs

        print_allpairs(store, fmt or "tsv")
    else:
        from swath.cli.align import print_alignment_store

        print_alignment_store(store, fmt or "json", plot)
