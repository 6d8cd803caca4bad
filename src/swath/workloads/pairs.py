"""Batched pairs (``swath pairs``): a ``pairs`` store, resumed chunk by chunk; its result
a :class:`~swath.results.pairs.PairsResult`, printed as BLAST's tabular columns (the
default), SAM, PAF, JSON or pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.pairs import PRINTERS, PairsResult
from swath.workloads import Workload, result_lines

if TYPE_CHECKING:
    from swath.engine.pairs import PairsJob
    from swath.progress import Progress
    from swath.storage.pairs import PairsStore


def store() -> type[PairsStore]:
    from swath.storage.pairs import PairsStore

    return PairsStore


def reopen(path: str, device: str) -> PairsJob:
    from swath.engine.pairs import job_from_store

    return job_from_store(path, device)


def run(job: PairsJob, where: Any, progress: Progress | None) -> None:
    from swath.engine.pairs import run as run_pairs

    run_pairs(job, where, progress)


WORKLOAD = Workload(name="pairs", store=store, result=PairsResult, reopen=reopen, run=run,
                    formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(PairsResult), items="pairs", phases=("pairs",),
                    cuda_sources=("ends.cu", "codes16.cu", "traceback.cu"))
