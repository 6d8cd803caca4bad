"""Database search (``swath search``): a ``search`` store, resumed unit by unit; its
result a :class:`~swath.results.search.SearchResult`, printed as BLAST's tabular rows
(the default), JSON or pairwise text. A small search without a store runs in this
process, its hits held in memory."""

from __future__ import annotations

import builtins
import os
import tempfile
from typing import TYPE_CHECKING, Any

from swath.results.search import PRINTERS, SearchResult
from swath.workloads import Workload, result_lines, start

if TYPE_CHECKING:
    from swath.engine.search import SearchJob
    from swath.progress import Progress
    from swath.scoring import Scoring
    from swath.sequences import SequenceSet
    from swath.storage.database import Database, DatabaseInfo
    from swath.storage.results import SearchStore


def store() -> type[SearchStore]:
    from swath.storage.results import SearchStore

    return SearchStore


def reopen(path: str, device: str) -> SearchJob:
    from swath.engine.search import reopen_search

    return reopen_search(path, device)


def run(job: SearchJob, where: Any, progress: Progress | None) -> None:
    from swath.engine.search import run_search

    run_search(job, where, progress)


WORKLOAD = Workload(name="search", store=store, result=SearchResult, reopen=reopen, run=run,
                    formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(SearchResult), items="hits",
                    cuda_sources=("search.cu", "traceback.cu"))


def database(value: Any, scoring: Scoring, wildcard: bool) -> tuple[str, Database]:
    """The database store a search reads, and it opened: ``value`` itself where it is one
    (a path or URL), else the store made from its sequences (a FASTA path, or sequences
    in memory) once and kept in swath's cache (``engine.database.cached_database``).

    Raises
    ------
    InvalidParameter
        The database's alphabet is not the scoring's.
    """
    from swath.engine.database import cached_database
    from swath.errors import InvalidParameter, StoreNotFound
    from swath.sequences.encoding import warn_if_dna
    from swath.storage.common import open_group
    from swath.storage.database import Database

    if isinstance(value, (str, os.PathLike)):
        try:
            open_group(value, mode="r")
            path = os.fspath(value)
        except StoreNotFound:
            path = cached_database(value, scoring.alphabet, wildcard=wildcard)
    else:
        with tempfile.TemporaryDirectory(prefix="swath-") as scratch:
            source = os.path.join(scratch, "database.fasta")
            with builtins.open(source, "w") as out:
                for name, codes in zip(value.names, value, strict=True):
                    out.write(f">{name}\n{scoring.alphabet.decode(codes)}\n")
            path = cached_database(source, scoring.alphabet, wildcard=wildcard)
    opened = Database.open(path)
    if opened.partitions:       # its shortest targets tell DNA read as protein
        warn_if_dna(opened.partition(0)[0], opened.alphabet, path)
    if opened.alphabet.letters != scoring.alphabet.letters:
        raise InvalidParameter(
            f"{path} holds residues of the alphabet {opened.alphabet.letters!r}; the scoring "
            f"{scoring.name} uses {scoring.alphabet.letters!r} (a DNA query against a protein "
            "database, or the reverse?)")
    return path, opened


def make_database(fasta: str | os.PathLike[str], path: str, scoring: Scoring, *,
                  partition_residues: int | None, **options: Any) -> DatabaseInfo:
    """Write a database store from ``fasta`` on the workers (``options`` as
    :func:`~swath.engine.database.write_database` takes them: its ``client`` and
    ``progress`` too)."""
    from swath.engine.database import write_database
    from swath.storage.database import DEFAULT_PARTITION_RESIDUES

    return write_database(fasta, path, scoring.alphabet,
                          partition_residues=partition_residues or DEFAULT_PARTITION_RESIDUES,
                          **options)


def search(store: str | None, queries: SequenceSet, database_path: str, scoring: Scoring, *,
           client: Any, progress: Progress | None, **options: Any) -> SearchResult:
    """A search run on the engine into ``store`` (or a scratch store the result owns);
    ``options`` as :func:`~swath.engine.search.prepare_search` takes them."""
    from swath.engine.search import prepare_search

    return start(WORKLOAD, store, lambda path, _: prepare_search(
        path, queries, database_path, scoring, **options), client, progress,
        device=options["device"], overwrite=options.get("overwrite", False))


def held(queries: SequenceSet, database_path: str, scoring: Scoring, **options: Any
         ) -> SearchResult:
    """A small search run in this process, without Dask and without a store
    (:func:`~swath.engine.search.search_held`), its hits held in memory."""
    from swath.engine.search import search_held

    return SearchResult(search_held(queries, database_path, scoring, **options))
