"""All pairs (``swath allpairs``): an ``allpairs`` store, resumed tile by tile (then its
clusters); its result an :class:`~swath.results.allpairs.AllPairsResult`, printed in
vsearch's --blast6out columns (the default), JSON or a summary and pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.allpairs import PRINTERS, AllPairsResult
from swath.workloads import Workload, result_lines

if TYPE_CHECKING:
    from swath.engine import Progress
    from swath.storage.allpairs import AllPairsStore


def store() -> type[AllPairsStore]:
    from swath.storage.allpairs import AllPairsStore

    return AllPairsStore


def resume(path: str, device: str, client: Any, progress: Progress | None) -> None:
    """Run the tiles of an all-pairs store not marked done, its clusters, then finalize
    it."""
    from swath.engine.allpairs import job_from_store, run
    from swath.engine.cluster import session

    job = job_from_store(path, device)
    with session(client, device=device) as (where, _):
        run(job, where, progress)


WORKLOAD = Workload(name="allpairs", store=store, result=AllPairsResult, resume=resume,
                    formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(AllPairsResult), items="kept pairs",
                    cuda_sources=("traceback.cu",))
