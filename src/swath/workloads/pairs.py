"""Batched pairs (``swath pairs``): a ``pairs`` store, resumed chunk by chunk; its result
a :class:`~swath.results.pairs.PairsResult`, printed as BLAST's tabular columns (the
default), SAM, PAF, JSON or pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.pairs import PRINTERS, PairsResult
from swath.workloads import Workload, result_lines

if TYPE_CHECKING:
    from swath.engine import Progress
    from swath.storage.pairs import PairsStore


def store() -> type[PairsStore]:
    from swath.storage.pairs import PairsStore

    return PairsStore


def resume(path: str, device: str, client: Any, progress: Progress | None) -> None:
    """Run the chunks of a pairs store not marked done, then finalize it."""
    from swath.engine.cluster import session
    from swath.engine.pairs import job_from_store, run

    job = job_from_store(path, device)
    with session(client, device=device) as (where, _):
        run(job, where, progress)


WORKLOAD = Workload(name="pairs", store=store, result=PairsResult, resume=resume,
                    formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(PairsResult), items="pairs",
                    cuda_sources=("ends.cu", "codes16.cu", "traceback.cu"))
