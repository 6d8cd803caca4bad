"""``swath makedb DB.fasta DB.swdb``: encode, sort and partition a database into a Zarr store."""

from __future__ import annotations

import click

import swath
from swath.cli.options import (
    SwathCommand,
    cluster,
    progress_option,
    rename_duplicates_option,
    scheduler_option,
    show_progress,
    verbose_option,
    wildcard_option,
    workers_option,
)
from swath.cli.progress import progress_bars

# the store module's (swath.storage.database): the store module (and Zarr) load when the
# command runs, so that `swath --help` stays quick
DEFAULT_PARTITION_RESIDUES = 1 << 26

__all__ = ["makedb"]


@click.command(cls=SwathCommand)
@click.argument("source", metavar="DB.fasta", type=click.Path(path_type=str))
@click.argument("store", metavar="DB.swdb", type=click.Path(path_type=str))
@click.option("--dna", is_flag=True, default=False,
              help="Encode DNA (A, C, G, T, N) instead of protein (the BLOSUM62 alphabet).")
@wildcard_option
@click.option("--partition-residues", type=click.IntRange(min=1), metavar="N",
              default=DEFAULT_PARTITION_RESIDUES, show_default=True,
              help="About how many residues each partition holds; a partition is one "
                   "chunk and one unit of search work [residues].")
@click.option("--overwrite", is_flag=True, default=False,
              help="Replace an existing database store at DB.swdb.")
@rename_duplicates_option
@scheduler_option
@workers_option
@verbose_option
@progress_option
def makedb(source: str, store: str, dna: bool, wildcard: bool, partition_residues: int,
           overwrite: bool, rename_duplicates: bool, scheduler: str | None,
           workers: int | None, progress: bool | None) -> None:
    """Prepare a database store (Zarr) from DB.fasta for searches.

    DB.fasta is FASTA or FASTQ, plain or gzip. Its sequences are encoded, sorted
    by length and cut into partitions of about equal residues. DB.swdb is a local
    path or an fsspec URL (file://, s3://, ...). DB.fasta is taken in as pieces,
    each parsed by a task of its own, then each partition is written by a task: no
    process holds all residues.

    \b
    Examples:
      swath makedb uniprot_sprot.fasta.gz sprot.swdb
      swath makedb --dna --partition-residues 16000000 contigs.fa contigs.swdb
    """
    scoring = swath.Scoring.dna() if dna else swath.Scoring.protein()
    shown = show_progress(progress)
    with progress_bars(shown) as bar:
        info = swath.makedb(source, store, scoring, wildcard=wildcard,
                            partition_residues=partition_residues, overwrite=overwrite,
                            rename_duplicates=rename_duplicates, progress=bar,
                            client=cluster(scheduler, workers, shown))
    plural = "" if info.partitions == 1 else "s"
    click.echo(f"{info.path}: {info.sequences} sequences, {info.residues} residues, "
               f"{info.partitions} partition{plural}")
