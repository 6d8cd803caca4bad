"""How far a job has come: one callback signature for every job.

:data:`Progress` is ``progress(phase, done, total, work)``: ``done`` of ``total`` steps
of ``phase`` (counting those done before a resume; ``total`` None while unknown), and
``work``, the pairs or cells computed so far (0 where a phase counts none). The phases
(each workload's record lists its own): ``"search"`` (work units of a search),
``"allpairs"`` (tiles of an all-pairs job; work: pairs), ``"pairs"`` (pairs of a
batched-pairs job; work: cells), a long pair's ``"tiles"`` (work: cells), ``"splits"``
and ``"segments"``, and a database's ``"read"`` (sequences) and ``"write"``
(partitions) (``swath.makedb``).
"""

from collections.abc import Callable

__all__ = ["Progress"]

Progress = Callable[[str, int, int | None, int], None]
