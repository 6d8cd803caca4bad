"""One long pair (``swath align -o``, ``swath.align(store=...)``, ``swath.score``): an
``alignment`` store, resumed in whichever phase it stopped; its result the
:class:`~swath.alignment.Alignment` (or a scores-only job's
:class:`~swath.results.longpair.PairScore`), printed as JSON (the default), TSV or text,
and drawn as a dot plot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.longpair import FORMATS, plot, store_lines, stored_result
from swath.workloads import Workload

if TYPE_CHECKING:
    import numpy as np

    from swath.alignment import Alignment
    from swath.engine.longpair import PairJob
    from swath.progress import Progress
    from swath.results.longpair import PairScore
    from swath.scoring import Scoring
    from swath.storage.longpair import AlignmentStore


def store() -> type[AlignmentStore]:
    from swath.storage.longpair import AlignmentStore

    return AlignmentStore


def reopen(path: str, device: str) -> PairJob:
    """The job of a store, its tiles where ``device`` ("auto" too) computes."""
    from swath.engine.longpair import reopen_longpair, tile_device

    return reopen_longpair(path, tile_device(device))


def run(job: PairJob, where: Any, progress: Progress | None) -> Alignment | PairScore:
    from swath.engine.longpair import run_longpair

    return run_longpair(job, where, progress)


WORKLOAD = Workload(name="longpair", store=store, result=stored_result, reopen=reopen,
                    run=run, formats=FORMATS, default_format="json", lines=store_lines,
                    items="alignment", plot=plot, tile_tasks=True)


def align(store: str | None, query: np.ndarray, target: np.ndarray, scoring: Scoring,
          **options: Any) -> Alignment | PairScore:
    """One pair through the tiled long-pair engine (Dask tiles, Zarr boundaries) into
    ``store``, or a scratch store removed afterwards; ``options`` as
    :func:`~swath.engine.longpair.align_pair` takes them. A long pair's job starts its
    session before its store: the default tile depends on the workers it finds."""
    from swath.engine.longpair import align_pair

    return align_pair(store, query, target, scoring, **options)
