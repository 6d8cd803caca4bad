"""The result layouts by name: what ``inspect``, ``resume`` and ``verify`` open.

A result store's ``"swath"`` attributes name its layout; :func:`open_result` opens it
as the store class of that layout (its version checked), whatever kind of job wrote it.
"""

from __future__ import annotations

from swath.errors import InvalidParameter
from swath.storage.allpairs import AllPairsStore
from swath.storage.common import LayoutStore, StorePath, display, store_layout
from swath.storage.longpair import AlignmentStore
from swath.storage.results import SearchStore

__all__ = ["RESULT_LAYOUTS", "open_result"]

RESULT_LAYOUTS: dict[str, type[LayoutStore]] = {
    SearchStore.LAYOUT: SearchStore,
    AlignmentStore.LAYOUT: AlignmentStore,
    AllPairsStore.LAYOUT: AllPairsStore,
}


def open_result(path: StorePath, *, mode: str = "r") -> LayoutStore:
    """The result store at ``path``, finished or not, as its layout's class.

    Raises
    ------
    StoreNotFound
        No swath store is at ``path``.
    InvalidParameter
        The store is not a result store (a database).
    FormatVersionError
        The store is of a version this swath does not read.
    """
    layout, version = store_layout(path)
    if layout not in RESULT_LAYOUTS:
        raise InvalidParameter(f"{display(path)} is a {layout!r} store version {version}, not a "
                               f"result store ({', '.join(RESULT_LAYOUTS)})")
    return RESULT_LAYOUTS[layout].open(path, mode=mode, complete=False)
