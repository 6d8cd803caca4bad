"""Batched pairs (``swath pairs``): a ``pairs`` store, resumed chunk by chunk; its result
a :class:`~swath.results.pairs.PairsResult`, printed as BLAST's tabular columns (the
default), SAM, PAF, JSON or pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.constants import Mode
from swath.results.pairs import PRINTERS, PairsResult
from swath.workloads import Workload, result_lines, start

if TYPE_CHECKING:
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


def align_pairs(store: str | None, queries: str | SequenceSet, targets: str | SequenceSet,
                pairs: Any, scoring: Scoring, *, client: Any, progress: Progress | None,
                wildcard: bool, **options: Any) -> PairsResult:
    """A batched-pairs job run on the engine into ``store`` (or a scratch store the result
    owns): each side a file's path (taken in on the workers) or records in memory;
    ``pairs`` and ``options`` as :func:`~swath.engine.pairs.prepare_pairs` takes them."""
    from swath.engine.intake import source
    from swath.engine.pairs import prepare_pairs

    sides = source(queries, "queries", wildcard), source(targets, "targets", wildcard)
    return start(WORKLOAD, store, lambda path, _: prepare_pairs(
        path, *sides, pairs, scoring, **options), client, progress,
        device=options["device"], overwrite=options.get("overwrite", False))


def held(queries: SequenceSet, targets: SequenceSet, pairs: Any, scoring: Scoring, *,
         mode: Mode, device: str, max_cells: int, max_pairs: int) -> PairsResult | None:
    """A job of at most ``max_pairs`` pairs and ``max_cells`` cells run in this process,
    without Dask and without a store (:func:`~swath.engine.pairs.pairs_held`), its pairs
    held in memory; None for a larger one."""
    from swath.engine.pairs import pairs_held

    found = pairs_held(queries, targets, pairs, scoring, mode, device, max_cells, max_pairs)
    return None if found is None else PairsResult(found)
