"""The search result store: units written concurrently, each marked with its digest."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from swath.alignment import packed_cigars
from swath.errors import StoreDamaged, StoreIncomplete
from swath.sequences import SequenceSet, sequence_set
from swath.storage.results import SearchStore, empty_hits
from tests.helpers import PROTEIN


def test_units_written_side_by_side_are_all_sound(tmp_path):
    """Units written at once are all done and their marks match what they wrote."""
    queries = sequence_set(["ACDEFG"] * 64, PROTEIN.alphabet)
    store = SearchStore.create(str(tmp_path / "r.zarr"), queries, top_k=3, query_block=1)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda unit: store.write_unit(unit, empty_hits(1, 3)), range(64)))
    store.finalize()
    assert store.done().all()
    assert np.all(store.hits()["target"] == -1)
    assert not any(store.damaged().values())


def test_finalize_refuses_while_a_unit_is_not_done(tmp_path):
    queries = sequence_set(["ACDEFG"] * 3, PROTEIN.alphabet)
    store = SearchStore.create(str(tmp_path / "r.zarr"), queries, top_k=2, query_block=2)
    store.write_unit(0, empty_hits(2, 2))
    with pytest.raises(StoreIncomplete, match="1 of 2 work units are not done"):
        store.finalize()
    assert store.done().tolist() == [True, False] and store.attrs["complete"] is False


def test_a_damaged_unit_is_found_and_only_it_is_recomputed(tmp_path):
    queries = sequence_set(["ACDEFG"] * 4, PROTEIN.alphabet)
    store = SearchStore.create(str(tmp_path / "r.zarr"), queries, top_k=2, query_block=2)
    hits = empty_hits(2, 2)
    hits["target"][:] = [[3, 1], [0, -1]]
    hits["score"][:] = [[9, 5], [4, 0]]
    hits["cigar"][:] = packed_cigars([["3=", "1X"], ["2=", ""]])
    for unit in range(2):
        store.write_unit(unit, hits)
    store.finalize()
    root = tmp_path / "r.zarr"
    (root / "score" / "c" / "1" / "0").unlink()           # a deleted chunk: unit 1
    assert store.damaged() == {"unit": [1], "array": []}
    (root / "cigar" / "c" / "0" / "0").write_bytes(b"\x00" * 7)   # corrupt bytes: unit 0
    (root / "work" / "query_residues" / "c" / "0").unlink()  # an input kept in the store
    assert store.damaged() == {"unit": [0, 1], "array": ["work/query_residues"]}
    with pytest.raises(StoreDamaged, match="damaged beyond repair: work/query_residues"):
        store.repair(store.damaged())


def test_a_finished_store_missing_a_units_mark_and_chunks_is_damaged(tmp_path):
    # a unit whose chunks and done mark are both gone (or whose mark cannot be read)
    # must not read as "no hits" in a finished store
    queries = sequence_set(["ACDEFG"] * 3, PROTEIN.alphabet)
    store = SearchStore.create(str(tmp_path / "r.zarr"), queries, top_k=2, query_block=1)
    hits = empty_hits(1, 2)
    hits["target"][:] = [[1, 0]]
    hits["score"][:] = [[7, 3]]
    for unit in range(3):
        store.write_unit(unit, hits)
    store.finalize()
    root = tmp_path / "r.zarr"
    for name in ("target", "score"):
        (root / name / "c" / "1" / "0").unlink()
    (root / "work" / "done" / "c" / "1").unlink()
    (root / "work" / "done" / "c" / "2").write_bytes(b"\x28\xb5")      # truncated
    opened = SearchStore.open(root, mode="r+")
    assert opened.done().tolist() == [True, False, False]
    assert opened.damaged() == {"unit": [1, 2], "array": []}
    opened.repair(opened.damaged())
    assert opened.attrs["complete"] is False


def test_fastq_queries_keep_their_qualities_and_fasta_ones_none(tmp_path):
    """FASTQ queries' base qualities are kept beside their codes (digested as an input:
    damage to them cannot be recomputed); FASTA queries write no such array."""
    plain = sequence_set(["ACDEFG", "MKV"], PROTEIN.alphabet)
    read = SequenceSet(plain.names, plain.names, plain.residues, plain.offsets, None,
                       np.frombuffer(b"II#I!~+@+", np.uint8))
    store = SearchStore.create(str(tmp_path / "q.zarr"), read, top_k=1, query_block=2)
    assert store.queries() == read and store.queries().quality(1) == "+@+"
    assert "work/query_qualities" in store.attrs["digests"]
    (tmp_path / "q.zarr" / "work" / "query_qualities" / "c" / "0").unlink()
    assert store.damaged() == {"unit": [], "array": ["work/query_qualities"]}
    fasta = SearchStore.create(str(tmp_path / "a.zarr"), plain, top_k=1, query_block=2)
    assert fasta.queries().qualities is None and "work" in fasta.group
    assert "query_qualities" not in fasta.group["work"]
