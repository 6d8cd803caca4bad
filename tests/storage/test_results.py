"""The search result store: chunks of empty units, written concurrently, all counted."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from swath.sequences import sequence_set
from swath.storage.results import SearchStore, empty_hits
from tests.conftest import PROTEIN


def test_units_written_side_by_side_leave_no_chunk_missing(tmp_path):
    """Every unit's chunks exist, even all-empty ones written while other units write
    (a global zarr config switch, undone by one writer while another writes, lost some)."""
    queries = sequence_set(["ACDEFG"] * 64, PROTEIN.alphabet)
    store = SearchStore.create(str(tmp_path / "r.zarr"), queries, top_k=3, query_block=1)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda unit: store.write_unit(unit, empty_hits(1, 3)), range(64)))
    store.finalize()
    assert store.done().all()
    assert np.all(store.hits()["target"] == -1)
