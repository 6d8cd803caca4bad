"""All pairs (``swath allpairs``): an ``allpairs`` store, resumed tile by tile (then its
clusters); its result an :class:`~swath.results.allpairs.AllPairsResult`, printed in
vsearch's --blast6out columns (the default), JSON or a summary and pairwise text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.allpairs import PRINTERS, AllPairsResult
from swath.workloads import Workload, result_lines, start

if TYPE_CHECKING:
    from swath.engine.allpairs import AllPairsJob
    from swath.progress import Progress
    from swath.scoring import Scoring
    from swath.sequences import SequenceSet
    from swath.storage.allpairs import AllPairsStore


def store() -> type[AllPairsStore]:
    from swath.storage.allpairs import AllPairsStore

    return AllPairsStore


def reopen(path: str, device: str) -> AllPairsJob:
    from swath.engine.allpairs import reopen_allpairs

    return reopen_allpairs(path, device)


def run(job: AllPairsJob, where: Any, progress: Progress | None) -> None:
    from swath.engine.allpairs import run_allpairs

    run_allpairs(job, where, progress)


WORKLOAD = Workload(name="allpairs", store=store, result=AllPairsResult, reopen=reopen,
                    run=run, formats=tuple(PRINTERS), default_format="tsv",
                    lines=result_lines(AllPairsResult), items="kept pairs",
                    cuda_sources=("traceback.cu",))


def allpairs(store: str | None, sequences: str | SequenceSet, scoring: Scoring, *,
             client: Any, progress: Progress | None, wildcard: bool, **options: Any
             ) -> AllPairsResult:
    """An all-pairs job run on the engine into ``store`` (or a scratch store the result
    owns): ``sequences`` a file's path (taken in on the workers) or records in memory;
    ``options`` as :func:`~swath.engine.allpairs.prepare_allpairs` takes them."""
    from swath.engine.allpairs import prepare_allpairs
    from swath.engine.intake import source

    taken = source(sequences, "sequences", wildcard)
    return start(WORKLOAD, store, lambda path, _: prepare_allpairs(
        path, taken, scoring, **options), client, progress, device=options["device"],
        overwrite=options.get("overwrite", False))
