"""Batched pairs (``swath pairs``): a ``pairs`` store, resumed chunk by chunk; its result
a :class:`~swath.results.pairs.PairsResult`, printed as BLAST's tabular columns (the
default), SAM, PAF, JSON or pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.constants import Mode
from swath.results.pairs import PRINTERS, PairsResult
from swath.workloads import Workload, result_lines, start

if TYPE_CHECKING:
    from swath.engine.intake import Source
    from swath.engine.pairs import PairsJob
    from swath.progress import Progress
    from swath.scoring import Scoring
    from swath.sequences import SequenceSet
    from swath.storage.pairs import PairsStore


def store() -> type[PairsStore]:
    from swath.storage.pairs import PairsStore

    return PairsStore


def reopen(path: str, device: str) -> PairsJob:
    from swath.engine.pairs import reopen_pairs

    return reopen_pairs(path, device)


def run(job: PairsJob, where: Any, progress: Progress | None) -> None:
    from swath.engine.pairs import run_pairs

    run_pairs(job, where, progress)


WORKLOAD = Workload(name="pairs", store=store, result=PairsResult, reopen=reopen, run=run,
                    formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(PairsResult), items="pairs",
                    cuda_sources=("ends.cu", "codes16.cu", "traceback.cu"))


def source(value: str | SequenceSet, display: str, wildcard: bool) -> Source:
    """One side of a job as the engine takes it in: a file's path (taken in piece by piece
    on the workers), or records in memory."""
    from swath.engine.intake import file_source, memory_source

    if isinstance(value, str):
        return file_source(value, wildcard=wildcard)
    return memory_source(value, display)


def align_pairs(store: str | None, queries: Source, targets: Source, pairs: Any,
                scoring: Scoring, *, client: Any, progress: Progress | None,
                **options: Any) -> PairsResult:
    """A batched-pairs job run on the engine into ``store`` (or a scratch store the result
    owns); ``pairs`` and ``options`` as :func:`~swath.engine.pairs.prepare_pairs` takes
    them."""
    from swath.engine.pairs import prepare_pairs

    return start(WORKLOAD, store, lambda path, _: prepare_pairs(
        path, queries, targets, pairs, scoring, **options), client, progress,
        device=options["device"], overwrite=options.get("overwrite", False))


def held(queries: SequenceSet, targets: SequenceSet, pairs: Any, scoring: Scoring, *,
         mode: Mode, device: str, max_cells: int, max_pairs: int) -> PairsResult | None:
    """A job of at most ``max_pairs`` pairs and ``max_cells`` cells run in this process,
    without Dask and without a store (:func:`~swath.engine.pairs.pairs_held`), its pairs
    held in memory; None for a larger one."""
    from swath.engine.pairs import pairs_held

    found = pairs_held(queries, targets, pairs, scoring, mode, device, max_cells, max_pairs)
    return None if found is None else PairsResult(found)
