"""Stores on an object store: S3 as moto serves it on this machine, through fsspec's s3fs
(the way a cluster past one host shares its database and results). A database made
there, a search and an all-pairs job written there, each stopped by a lost worker and
resumed, then damaged and resumed: the same results as on a local disk."""

from __future__ import annotations

import pytest

import swath
from swath.engine import allpairs as allpairs_engine
from swath.engine import search as search_engine
from swath.storage.allpairs import AllPairsStore
from tests.helpers import DNA, PROTEIN, descendants, lose_worker_at, s3, write_fasta


def test_a_search_on_s3_stopped_and_damaged_resumes_to_the_local_result(bucket, tmp_path,
                                                                      monkeypatch):
    seqs = descendants(8, PROTEIN.alphabet.letters[:20], 40, 120)
    fasta = write_fasta(tmp_path / "db.fasta", [(f"t{i}", s) for i, s in enumerate(seqs)])
    queries = seqs[::5]
    swath.makedb(fasta, str(tmp_path / "db.swdb"))
    local = swath.search(queries, str(tmp_path / "db.swdb"), top_k=3, device="cpu",
                         store=str(tmp_path / "r.zarr"))
    database = f"{bucket}/db.swdb"
    swath.makedb(fasta, database)
    store = f"{bucket}/search.zarr"
    real = lose_worker_at(monkeypatch, search_engine, "write_unit", 0)
    with pytest.raises(RuntimeError, match="worker lost"):
        swath.search(queries, database, top_k=3, device="cpu", store=store)
    with pytest.raises(swath.StoreIncomplete):
        swath.open(store)
    monkeypatch.setattr(search_engine, "write_unit", real)
    assert swath.resume(store, device="cpu").to_table() == local.to_table()
    s3().pipe(f"{store[len('s3://'):]}/score/c/0/0", b"garbage")    # a unit's scores
    with pytest.raises(swath.StoreDamaged):
        swath.verify(store)
    assert swath.resume(store, device="cpu").to_table() == local.to_table()
    assert swath.verify(store)


def test_an_allpairs_job_on_s3_stopped_and_damaged_resumes_to_the_local_result(
        bucket, tmp_path, monkeypatch):
    seqs = descendants(5, "ACGT", 26, 70)
    options = {"scoring": DNA, "min_identity": 0.8, "device": "cpu", "block": 13,
               "clusters": True}
    local = swath.allpairs(seqs, store=str(tmp_path / "a.zarr"), **options)
    store = f"{bucket}/allpairs.zarr"
    real = lose_worker_at(monkeypatch, allpairs_engine, "run_tile", 2)
    with pytest.raises(RuntimeError, match="worker lost"):
        swath.allpairs(seqs, store=store, **options)
    monkeypatch.setattr(allpairs_engine, "run_tile", real)
    resumed = swath.resume(store, device="cpu")
    assert resumed.to_table() == local.to_table()
    assert resumed.clusters().tolist() == local.clusters().tolist()
    root = store[len("s3://"):]
    s3().pipe(f"{root}/cigar/c/0", b"garbage")          # a gathered variable's chunk
    s3().rm(f"{root}/work/kept/1/index/c/0/0")          # a tile's kept pairs
    opened = AllPairsStore.open(store)
    assert opened.damaged() == {"tile": [1], "sequence piece": [], "array": ["cigar"]}
    assert swath.resume(store, device="cpu").to_table() == local.to_table()
    assert swath.verify(store)["tile"] == opened.tiles
