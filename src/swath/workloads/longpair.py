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
    from swath.engine import Progress
    from swath.storage.longpair import AlignmentStore


def store() -> type[AlignmentStore]:
    from swath.storage.longpair import AlignmentStore

    return AlignmentStore


def resume(path: str, device: str, client: Any, progress: Progress | None) -> None:
    """Finish a long pair's store: its missing tiles, its path, its missing segments."""
    from swath.engine.cluster import session
    from swath.engine.longpair import job_from_store, run, tile_device

    kind = tile_device(device)
    job = job_from_store(path, kind)
    with session(client, device=kind, tile_tasks=True) as (where, _):
        run(job, where, progress)


WORKLOAD = Workload(name="longpair", store=store, result=stored_result, resume=resume,
                    formats=FORMATS, default_format="json", lines=store_lines,
                    items="alignment", plot=plot)
