"""The engine: turns a job into a Dask graph and runs it on a client (see DESIGN.md).

Every job reports how far it has come through one callback signature,
:data:`Progress`: ``progress(phase, done, total, work)``: ``done`` of ``total`` steps of
``phase`` (counting those done before a resume; ``total`` None while unknown), and
``work``, the pairs or cells computed so far (0 where a phase counts none). The phases:
``"search"`` (work units of a search), ``"allpairs"`` (tiles of an all-pairs job; work:
pairs), ``"pairs"`` (pairs of a batched-pairs job; work: cells), a long pair's
``"tiles"`` (work: cells), ``"splits"`` and ``"segments"``, and
a database's ``"read"`` (sequences) and ``"write"`` (partitions) (``swath.makedb``).
"""

from collections.abc import Callable

Progress = Callable[[str, int, int | None, int], None]
