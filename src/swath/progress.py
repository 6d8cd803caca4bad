"""How far a job has come: one callback signature for every job.

:data:`Progress` is ``progress(phase, done, total, work)``: ``done`` of ``total`` steps
of ``phase`` (counting those done before a resume; ``total`` None while unknown), and
``work``, the pairs or cells computed so far (0 where a phase counts none). The phases:
``"search"`` (cells of a search: query residues times database residues), ``"allpairs"``
(tiles of an all-pairs job; work: pairs), ``"pieces"`` (the pieces of a batched-pairs
job's inputs, taken in) and ``"pairs"`` (its pairs; work: cells), a long pair's
``"tiles"`` (work: cells), ``"splits"`` and ``"segments"``, and a database's ``"pieces"``
(of its source, taken in) and ``"write"`` (partitions) (``swath.makedb``).
"""

from collections.abc import Callable

__all__ = ["Progress"]

Progress = Callable[[str, int, int | None, int], None]
