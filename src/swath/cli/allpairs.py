"""``swath allpairs``: every pair of a set of sequences, the close ones kept."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import click

import swath
from swath.api import ALLPAIRS_BLOCK
from swath.cli.options import (
    CommandError,
    OutputFormat,
    SwathCommand,
    cigar_m_option,
    device_option,
    end_gap_options,
    given_options,
    mode_option,
    overwrite_option,
    progress_option,
    rename_duplicates_option,
    scheduler_option,
    scoring_options,
    threads_option,
    verbose_option,
    wildcard_option,
    workers_option,
)
from swath.cli.output import check_out, emit, out_format, out_option, print_result
from swath.cli.progress import Watch, running

__all__ = ["allpairs", "summary_line"]

IDDEFS = ("pident", "0", "1", "2", "3", "4")
CLUSTER_FORMATS = ("clusters-uc", "centroids")     # the formats that print the clusters
# what --vsearch-defaults sets, refused beside it
VSEARCH_SET = ("matrix", "match", "mismatch", "gap_open", "gap_extend", "end_gap_open",
               "end_gap_extend", "mode", "iddef")


def _iddef(value: str) -> str | int:
    """``--iddef`` as the API takes it: ``"pident"`` or vsearch's definitions 0 to 4.

    Examples
    --------
    >>> _iddef("pident"), _iddef("2")
    ('pident', 2)
    """
    return value if value == "pident" else int(value)


@click.command(cls=SwathCommand)
@click.argument("sequences", metavar="SEQS.fasta", type=click.Path(path_type=str))
@click.option("-o", "--output", required=True, metavar="RESULT.zarr",
              help="Result store (Zarr; a path or fsspec URL). Running the same command again "
                   "finishes what is missing.")
@click.option("--min-identity", type=click.FloatRange(0, 1, min_open=True), default=0.97,
              show_default=True,
              help="Keep the pairs whose identity reaches this [fraction, over 0 and at most 1].")
@click.option("--iddef", type=click.Choice(IDDEFS), default="pident", show_default=True,
              help="Identity: pident (BLAST's: matches over alignment columns) or vsearch's "
                   "--iddef 0 (matches over the shorter length), 1 (over columns), 2 (over "
                   "columns without terminal gaps; vsearch's default), 3 (1 - (mismatches + "
                   "gap opens) over the longer length) or 4 (as 1).")
@click.option("--vsearch-defaults", is_flag=True, default=False,
              help="vsearch --allpairs_global's defaults: DNA, match 2, mismatch -4, N 0, "
                   "gaps 20 + 2 (k - 1) inside and 2 + (k - 1) at the ends (--gap-open 18 "
                   "--gap-extend 2 --end-gap-open 1 --end-gap-extend 1), --iddef 2, global "
                   "mode. Not with the options it sets.")
@click.option("--scores", is_flag=True, default=False,
              help="Also store the dense n x n score matrix (int32; n^2 * 4 bytes).")
@click.option("--clusters", is_flag=True, default=False,
              help="Also store the single-linkage clusters of the kept pairs (an id per "
                   "sequence).")
@click.option("--uc", metavar="FILE", default=None, type=click.Path(path_type=str),
              help="Write the kept pairs to FILE as vsearch --allpairs_global --uc does: "
                   "for each sequence in input order, an H record a kept pair whose query "
                   "it is (the earlier record; the highest identity first, then the "
                   "earliest target), or an N record where it has none.")
@click.option("--clusters-uc", metavar="FILE", default=None, type=click.Path(path_type=str),
              help="Write the clusters to FILE as vsearch --cluster_fast --uc does (S, H "
                   "and C records; each cluster's centroid its longest member, each other "
                   "member aligned against it). Implies --clusters.")
@click.option("--centroids", metavar="FILE", default=None, type=click.Path(path_type=str),
              help="Write each cluster's centroid to FILE as FASTA, as vsearch's "
                   "--centroids does. Implies --clusters.")
@click.option("--block", type=click.IntRange(min=1), default=ALLPAIRS_BLOCK, show_default=True,
              metavar="N",
              help="Sequences per block [sequences]; a tile (two blocks, one task) is what "
                   "resume redoes, and a task's memory grows with N^2, never with the number "
                   "of sequences.")
@click.option("--format", "--outfmt", "fmt", type=OutputFormat(swath.FORMATS["allpairs"]),
              default=None,
              help="Also print the kept pairs to stdout in this format (as `swath inspect`): "
                   "tsv (vsearch's --blast6out columns, the score and the CIGAR), blast6out "
                   "(its 12 columns alone, as vsearch --blast6out writes them: a query after "
                   "another in input order, its best first), json, text, "
                   "uc (as --uc writes it), sam (each pair's query a read, its target a "
                   "reference) or paf; or the clusters: clusters-uc or centroids (as "
                   "--clusters-uc and --centroids write them; either implies --clusters).")
@out_option
@cigar_m_option
@overwrite_option
@rename_duplicates_option
@scoring_options
@end_gap_options
@mode_option("global")
@wildcard_option
@device_option
@threads_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def allpairs(sequences: str, output: str, min_identity: float, iddef: str,
             vsearch_defaults: bool, scores: bool,
             clusters: bool, uc: str | None, clusters_uc: str | None,
             centroids: str | None, block: int,
             fmt: str | None, out: str | None, cigar_m: bool, scoring: swath.Scoring, mode: str,
             wildcard: bool, device: str, scheduler: str | None, workers: int | None,
             progress: bool | None, overwrite: bool, rename_duplicates: bool) -> None:
    """Align every pair of sequences of SEQS.fasta; keep those above an identity.

    Pairs are unordered and no sequence is paired with itself. Every pair is scored;
    a pair is aligned in full only if its lengths and its score allow the identity
    (pairs ruled out are counted, never dropped wrongly). The pairs that reach
    --min-identity go to the -o store, with the scores of all pairs (--scores) and
    the clusters (--clusters) if asked. --uc writes the kept pairs as vsearch
    --allpairs_global --uc does; --clusters-uc and --centroids write the clusters as
    vsearch --cluster_fast writes its own.

    \b
    Examples:
      swath allpairs --dna examples/amplicons.fasta -o pairs.zarr --format tsv
      swath allpairs --dna seqs.fasta -o pairs.zarr --min-identity 0.99 --iddef 2 --clusters
      swath allpairs --dna seqs.fasta -o pairs.zarr --iddef 2 --clusters-uc clusters.uc \\
          --centroids centroids.fasta
      swath allpairs seqs.fasta -o pairs.zarr --vsearch-defaults --uc pairs.uc
      swath inspect pairs.zarr --format text
    """
    if vsearch_defaults:
        clash = given_options(*VSEARCH_SET)
        if clash:
            raise swath.InvalidParameter(f"--vsearch-defaults sets {', '.join(clash)}: give "
                                         "one or the other")
        scoring, mode, iddef = swath.Scoring.vsearch(), "global", "2"
    inputs = (sequences, output)
    fmt = out_format(out, fmt, swath.FORMATS["allpairs"], "tsv", replace=overwrite,
                     inputs=inputs)
    files = output_files({"uc": uc, "clusters-uc": clusters_uc, "centroids": centroids}, out,
                         replace=overwrite, inputs=inputs)
    clusters = clusters or any(name in CLUSTER_FORMATS for name in (*files, fmt))
    started = time.perf_counter()
    with running("allpairs", device, scheduler, workers, progress) as (where, watch):
        result = swath.allpairs(sequences, scoring, mode=mode, min_identity=min_identity,
                                iddef=_iddef(iddef), store=output, client=where,
                                device=device, scores=scores, clusters=clusters, block=block,
                                wildcard=wildcard, progress=watch, overwrite=overwrite,
                                rename_duplicates=rename_duplicates)
    click.echo(summary_line(result, time.perf_counter() - started, watch, output), err=True)
    print_result(result, fmt, out, cigar_m=cigar_m, replace=overwrite)
    for name, path in files.items():
        emit(result.lines(name), path, replace=overwrite)


def output_files(asked: dict[str, str | None], out: str | None, *, replace: bool,
                 inputs: Sequence[str | None]) -> dict[str, str]:
    """The files of the formats asked for by their options (``{"uc": FILE,
    "clusters-uc": FILE, "centroids": FILE}``, None where not asked), each refused before
    the job runs if it exists (unless ``replace``), if it is one of the command's
    ``inputs``, or if another output names it too."""
    files = {name: path for name, path in asked.items() if path is not None}
    named = [path for path in (out, *files.values()) if path is not None and path != "-"]
    if len({os.path.realpath(path) for path in named}) < len(named):
        options = ["--out", *(f"--{name}" for name in asked)]
        raise CommandError(f"{', '.join(options[:-1])} and {options[-1]} name the same file "
                           f"({', '.join(named)}): give each its own")
    for path in files.values():
        check_out(path, replace=replace, inputs=inputs)
    return files


def summary_line(result: swath.AllPairsResult, seconds: float, watch: Watch, output: str
                 ) -> str:
    """``swath: N pairs in S s (P pairs/s): ...`` the pairs, what each filter removed,
    what was traced and kept (and the clusters); for a store complete before the
    command, ``swath: OUTPUT was complete already: N pairs: ...``; for a resumed one, the
    rate of the pairs this run computed."""
    counts = result.filtered
    pairs = int(counts["pairs"])
    if watch.complete_already:
        head = f"swath: {output} was complete already (nothing to run): {pairs:,} pairs"
    else:
        now = watch.work_now
        resumed = f", {now:,} of them now" if now != pairs else ""
        head = (f"swath: {pairs:,} pairs in {seconds:.2f} s ({now / max(seconds, 1e-9):,.0f} "
                f"pairs/s{resumed})")
    line = (f"{head}: {int(counts['length_filtered']):,} ruled out by length, "
            f"{int(counts['score_filtered']):,} by score, {int(counts['traced']):,} aligned, "
            f"{int(counts['kept']):,} kept")
    groups = result.cluster_count()
    if groups is not None:
        line += f", {groups:,} clusters"
    return line
