"""``swath align A.fasta B.fasta``: align the first record of each file; long pairs in tiles
with a resumable store (``-o``)."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

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
from swath.errors import InvalidParameter
from swath.scoring import Scoring
from swath.sequences import read_sequences
from swath.views import RECORD_FIELDS, alignment_record, format_text

if TYPE_CHECKING:
    from swath.storage.longpair import AlignmentStore

__all__ = ["align", "print_alignment_store", "resume_alignment"]

logger = logging.getLogger(__name__)

FORMATS = ("text", "json", "tsv")


def _tsv_value(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


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
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="text: header and pairwise view (like EMBOSS water/needle; the default "
                   "without -o); json: one object; tsv: a header line and one row. json and "
                   "tsv coordinates are 0-based, end exclusive. With -o nothing is printed "
                   "unless a format is given.")
@overwrite_option
@scoring_options
@mode_option("local")
@wildcard_option
@device_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def align(query: str, target: str, output: str | None, tile_size: int | None,
          strip: int | None, score_only: bool, fmt: str | None, scoring: Scoring, mode: str,
          wildcard: bool, device: str, scheduler: str | None, workers: int | None,
          progress: bool | None, overwrite: bool) -> None:
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
    probe_gpu_early(device, scheduler)
    from swath.api import TILED_ABOVE
    from swath.engine.longpair import align_pair, tile_device

    queries = read_sequences(query, scoring.alphabet, wildcard=wildcard, limit=1)
    targets = read_sequences(target, scoring.alphabet, wildcard=wildcard, limit=1)
    query_id, target_id = queries.names[0], targets.names[0]
    q, t = queries[0], targets[0]
    report = show_progress(progress)
    if report:
        click.echo(f"swath: aligning {query_id} ({len(q)} residues) against {target_id} "
                   f"({len(t)} residues), {mode}", err=True)
    started = time.perf_counter()
    if score_only:
        kind = tile_device(device)
        with job_runner(scheduler, workers, kind, tile_tasks=True) as client, \
                _tile_bar(report) as bar:
            result = align_pair(output, q, t, scoring, mode=mode, device=kind,
                                tile_size=tile_size, strip=strip, client=client,
                                names=(query_id, target_id), traceback=False, progress=bar,
                                overwrite=overwrite)
        if report:
            click.echo(f"swath: done in {time.perf_counter() - started:.2f} s, score "
                       f"{result.score}", err=True)
        if fmt or not output:
            _print_score(result, query_id, target_id, fmt or "text")
        return
    if output or tile_size or len(q) * len(t) // 2 > TILED_ABOVE:
        kind = tile_device(device)
        with job_runner(scheduler, workers, kind, tile_tasks=True) as client, \
                _tile_bar(report) as bar:
            alignment = swath.align(q, t, scoring=scoring, mode=mode, device=device,
                                    store=output, tile_size=tile_size, strip=strip,
                                    client=client, names=(query_id, target_id), progress=bar,
                                    overwrite=overwrite)
    else:
        alignment = swath.align(q, t, scoring=scoring, mode=mode, device=device)
    elapsed = time.perf_counter() - started
    logger.info("aligned %s against %s in %.3f s: score %d", query_id, target_id, elapsed,
                alignment.score)
    if report:
        click.echo(f"swath: done in {elapsed:.2f} s, score {alignment.score}", err=True)
    if fmt or not output:
        _print(alignment, q, t, scoring, query_id, target_id, fmt or "text")


SCORE_FIELDS = ("query_id", "target_id", "score", "query_end", "target_end")


def _print_score(result: Any, query_id: str, target_id: str, fmt: str) -> None:
    """A scores-only result: the score and the (exclusive) end of the alignment."""
    record = {"query_id": query_id, "target_id": target_id, "score": result.score,
              "query_end": result.query_end, "target_end": result.target_end}
    if fmt == "json":
        click.echo(json.dumps(record))
    elif fmt == "tsv":
        click.echo("\t".join(SCORE_FIELDS))
        click.echo("\t".join(str(record[f]) for f in SCORE_FIELDS))
    else:
        click.echo(f"# {query_id} against {target_id} ({result.mode}): score {result.score}, "
                   f"ending at query {result.query_end}, target {result.target_end} "
                   "(scores only: no traceback)")


def _print(alignment: swath.Alignment, q: Any, t: Any, scoring: Scoring, query_id: str,
           target_id: str, fmt: str) -> None:
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


@contextmanager
def _tile_bar(enabled: bool) -> Iterator[Callable[[str, int, int, int], None] | None]:
    """A progress bar of tiles (with cells per second), then of the path's splits (jobs
    without origins), then of segments."""
    if not enabled:
        yield None
        return
    import tqdm

    make_bar: Any = tqdm.tqdm
    bars: dict[str, Any] = {}
    started = time.perf_counter()

    def update(phase: str, done: int, total: int, cells: int) -> None:
        if phase not in bars:
            bars[phase] = make_bar(total=total, unit=phase[:-1], desc=f"swath {phase}",
                                   file=sys.stderr)
        bar = bars[phase]
        bar.n = done
        if cells:
            rate = cells / max(time.perf_counter() - started, 1e-9)
            bar.set_postfix_str(f"{rate / 1e9:.2f} Gcells/s", refresh=False)
        bar.refresh()

    try:
        yield update
    finally:
        for bar in bars.values():
            bar.close()


def resume_alignment(store: str, device: str, scheduler: str | None, workers: int | None,
                     progress: bool | None) -> None:
    """Finish a long pair's store: its missing tiles, phase 2, its missing segments."""
    from swath.engine.longpair import job_from_store, run, tile_device

    kind = tile_device(device)
    job = job_from_store(store, kind)
    with job_runner(scheduler, workers, kind, tile_tasks=True) as client, \
            _tile_bar(show_progress(progress)) as bar:
        run(job, client, bar)


def print_alignment_store(store: str, fmt: str, plot: str | None) -> None:
    """Print a finished alignment store (json, tsv or text); draw its dot plot.

    What is printed follows what the store holds: the alignment (CIGAR and all) of a
    traceback job, whether its boundaries have origins or its path was found by splits
    (a GPU job's default), or the score and end cell of a scores-only job."""
    from swath.engine.longpair import PairScore
    from swath.storage.longpair import AlignmentStore

    opened = AlignmentStore.open(store)
    query_id, target_id = opened.names
    if not opened.traceback:
        if plot:
            raise InvalidParameter(f"--plot: {store} holds a score only (swath align "
                                   "--score-only): no alignment path to draw")
        score, query_end, target_end = opened.end()
        if fmt == "text":
            click.echo(_store_line(opened))
        _print_score(PairScore(score, query_end, target_end, opened.mode), query_id, target_id,
                     fmt)
        return
    alignment = opened.alignment()
    q, t = opened.sequences()
    scoring = Scoring.from_dict(opened.attrs["inputs"]["scoring"])
    if fmt == "text":
        click.echo(_store_line(opened))
    _print(alignment, q, t, scoring, query_id, target_id, fmt)
    if plot:
        from swath.views import dot_plot

        dot_plot(alignment, len(q), len(t), plot, query_name=query_id, target_name=target_id)
        click.echo(f"swath: wrote {plot}", err=True)


def _store_line(opened: AlignmentStore) -> str:
    """The text view's first line: the matrix, its tiles, the stored bytes, the job."""
    m, n = (int(opened.array(name).shape[0]) for name in ("query", "target"))
    how = ("scores only" if not opened.traceback else
           "path by origins" if opened.origins else "path by splits")
    return (f"# {opened.path}: a {m} x {n} matrix in {opened.tiles[0]} x {opened.tiles[1]} "
            f"tiles, {opened.stored_bytes():,} bytes of boundaries ({how})")
