"""Progress bars on stderr (tqdm): one drawer for the progress reports of every job.

Every job of the API reports ``progress(phase, done, total, work)``; a bar a phase is
drawn, the earlier phases' bars closed (and left on screen) as a new one starts, with
the rate of the pairs or cells of its work where the phase counts them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

__all__ = ["Watch", "progress_bars", "running"]


class _Bar(NamedTuple):
    """How a phase's bar looks: its label, what one step is called, what the work it
    reports counts ("pairs", "cells" or nothing), and whether counts are shown as 1.2k."""

    label: str
    unit: str
    work: str = ""
    scale: bool = False


_BARS = {
    "search": _Bar("swath search", "cells", scale=True),
    "allpairs": _Bar("swath allpairs", "tile", "pairs"),
    "pairs": _Bar("swath pairs", " pair", "cells", scale=True),
    "pieces": _Bar("swath: taking inputs in", " piece"),
    "tiles": _Bar("swath tiles", "tile", "cells"),
    "splits": _Bar("swath splits", "split"),
    "segments": _Bar("swath segments", "segment"),
    "write": _Bar("swath: writing", " partition", scale=True),
}


def _rate(work: str, per_second: float) -> str:
    return f"{per_second / 1e9:.2f} Gcells/s" if work == "cells" else \
        f"{per_second:,.0f} {work}/s"


@contextmanager
def progress_bars(enabled: bool
                  ) -> Iterator[Callable[[str, int, int | None, int], None] | None]:
    """A progress callback drawing a bar a phase on stderr, or None (not ``enabled``)."""
    if not enabled:
        yield None
        return
    import tqdm

    make_bar: Any = tqdm.tqdm
    bars: dict[str, Any] = {}
    first: dict[str, tuple[float, int]] = {}    # a phase's first report: when, its work

    def update(phase: str, done: int, total: int | None, work: int) -> None:
        look = _BARS.get(phase, _Bar(f"swath {phase}", phase.rstrip("s")))
        if phase not in bars:
            for other in bars.values():
                other.close()
            bars[phase] = make_bar(total=total, initial=done, desc=look.label, unit=look.unit,
                                   unit_scale=look.scale, file=sys.stderr)
            first[phase] = (time.perf_counter(), work)
        bar = bars[phase]
        bar.total = total
        bar.n = done
        if look.work:
            since, before = first[phase]
            rate = (work - before) / max(time.perf_counter() - since, 1e-9)
            bar.set_postfix_str(_rate(look.work, rate), refresh=False)
        bar.refresh()

    try:
        yield update
    finally:
        for bar in bars.values():
            bar.close()


class Watch:
    """A job's progress reports, passed on to ``bars`` (or to nothing), its first and last
    remembered: what was done before this run, and what this run did.

    Examples
    --------
    >>> watch = Watch(None)
    >>> watch("allpairs", 3, 3, 190)
    >>> watch.complete_already, watch.work_now
    (True, 0)
    """

    def __init__(self, bars: Callable[[str, int, int | None, int], None] | None) -> None:
        self.bars = bars
        self.first: tuple[int, int | None, int] | None = None
        self.last: tuple[int, int | None, int] | None = None

    def __call__(self, phase: str, done: int, total: int | None, work: int) -> None:
        if self.first is None:
            self.first = (done, total, work)
        self.last = (done, total, work)
        if self.bars is not None:
            self.bars(phase, done, total, work)

    @property
    def complete_already(self) -> bool:
        """Whether the job's first report found every step done (nothing ran)."""
        return self.first is not None and self.first[0] == self.first[1]

    @property
    def work_now(self) -> int:
        """The pairs or cells this run computed (its first report's work excluded)."""
        if self.first is None or self.last is None:
            return 0
        return self.last[2] - self.first[2]


@contextmanager
def running(job: str, device: str, scheduler: str | None, workers: int | None,
            progress: bool | None, traced: tuple[Any, str] | None = None
            ) -> Iterator[tuple[Any, Watch]]:
    """Where a command's ``job`` runs (``--scheduler``, ``--workers``; its device readied
    in the background meanwhile; ``traced``: a search's scheme and mode, whose CPU
    traceback kernels compile ahead) and its progress reports: drawn as bars where asked (or
    stderr is a terminal), remembered either way."""
    import swath
    from swath.cli.options import cluster, show_progress

    shown = show_progress(progress)
    where = cluster(scheduler, workers, shown)
    swath.warm_up(device, client=where, job=job,
                  **({"scoring": traced[0], "mode": traced[1]} if traced else {}))
    with progress_bars(shown) as bars:
        yield where, Watch(bars)
