"""One long pair (``swath align -o``, ``swath.align(store=...)``, ``swath.score``): an
``alignment`` store, resumed in whichever phase it stopped; its result the
:class:`~swath.alignment.Alignment` (or a scores-only job's
:class:`~swath.results.longpair.PairScore`), printed as JSON (the default), TSV or text,
and drawn as a dot plot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swath.results.longpair import FORMATS, plot, store_lines, stored_result
from swath.workloads import Workload, start

if TYPE_CHECKING:
    import numpy as np

    from swath.alignment import Alignment
    from swath.constants import Mode
    from swath.engine.cluster import Runner
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


def align(store: str | None, query: np.ndarray, target: np.ndarray, scoring: Scoring, *,
          mode: Mode, device: str, tile_size: int | None, strip: int | None, client: Any,
          names: tuple[str, str], traceback: bool, progress: Progress | None,
          overwrite: bool) -> Alignment | PairScore:
    """One pair through the tiled long-pair engine (Dask tiles, Zarr boundaries) into
    ``store``, or a scratch store the result owns: its tiles ``tile_size`` square, or
    those of the job already in ``store``, or a size for the session's workers
    (:func:`~swath.engine.longpair.default_tile`); phase 1 records origins where a
    traceback runs on the CPU, else the path is found by splits (on the GPU) or walked back
    through the tiles (a local pair of a match/mismatch matrix on the CPU)."""
    from swath.engine.longpair import (
        DEFAULT_STRIP,
        default_tile,
        path_method,
        prepare_longpair,
        stored_tile,
        tile_device,
    )

    kind = tile_device(device)
    origins, walk = path_method(kind, traceback, mode, scoring, query, target)

    def prepare(path: str, where: Runner) -> PairJob:
        tile = ((tile_size, tile_size) if tile_size else
                (None if overwrite else stored_tile(path)) or
                default_tile(kind, len(query), len(target), where.workers, origins))
        return prepare_longpair(path, query, target, scoring, mode=mode, tile=tile,
                                strip=strip or DEFAULT_STRIP, names=names, device=kind,
                                traceback=traceback, origins=origins, walk=walk,
                                overwrite=overwrite)

    return start(WORKLOAD, store, prepare, client, progress, device=kind, overwrite=overwrite)
