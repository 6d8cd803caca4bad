"""Database search (``swath search``): a ``search`` store, resumed unit by unit; its
result a :class:`~swath.results.search.SearchResult`, printed as BLAST's tabular rows
(the default), JSON or pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.search import PRINTERS, SearchResult
from swath.workloads import Workload, result_lines

if TYPE_CHECKING:
    from swath.engine import Progress
    from swath.storage.results import SearchStore


def store() -> type[SearchStore]:
    from swath.storage.results import SearchStore

    return SearchStore


def resume(path: str, device: str, client: Any, progress: Progress | None) -> None:
    """Run the work units of a search store not marked done, then finalize it."""
    from swath.engine.cluster import session
    from swath.engine.search import job_from_store, run

    job = job_from_store(path, device)
    with session(client, device=device) as (where, _):
        run(job, where, progress)


WORKLOAD = Workload(name="search", store=store, result=SearchResult, resume=resume,
                    formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(SearchResult), items="hits",
                    cuda_sources=("search.cu", "traceback.cu"))
