"""Stores on an object store: S3 as moto serves it on this machine, through fsspec's s3fs
(the way a cluster past one host shares its database and results). A database made
there, a search and an all-pairs job written there, each stopped by a lost worker and
resumed, then damaged and resumed: the same results as on a local disk."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

import swath
from swath.engine import allpairs as allpairs_engine
from swath.engine import search as search_engine
from swath.storage.allpairs import AllPairsStore
from tests.helpers import DNA, PROTEIN, lose_worker_at, write_fasta


@pytest.fixture(scope="module")
def bucket():
    """A bucket of a moto S3 server (a process of its own) on 127.0.0.1 that fsspec's
    ``s3://`` URLs reach (its endpoint and keys in fsspec's configuration, as a user would
    set ``FSSPEC_S3_ENDPOINT_URL``); ``s3://`` and the bucket's name. (s3fs and moto are
    imported here, not at collection: every test worker collects this module.)"""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    import fsspec

    with socket.socket() as probe:          # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before = fsspec.config.conf.get("s3")
    fsspec.config.conf["s3"] = {"endpoint_url": f"http://127.0.0.1:{port}", "key": "testing",
                                "secret": "testing"}
    name = f"swath-{uuid.uuid4().hex[:8]}"
    try:
        for _ in range(200):
            try:
                s3().mkdir(name)
                break
            except OSError:
                time.sleep(0.1)
        yield f"s3://{name}"
    finally:
        if before is None:
            fsspec.config.conf.pop("s3")
        else:
            fsspec.config.conf["s3"] = before
        server.terminate()
        server.wait()


def s3():
    import fsspec

    return fsspec.filesystem("s3", skip_instance_cache=True)


def related(seed, letters, count, length):
    """``count`` sequences of about ``length``: copies of three ancestors, each with a
    few substitutions (close pairs and far ones)."""
    rng = np.random.default_rng(seed)
    ancestors = [rng.choice(list(letters), length) for _ in range(3)]
    seqs = []
    for k in range(count):
        s = ancestors[k % 3].copy()
        s[rng.integers(0, length, int(rng.integers(0, length // 10)))] = rng.choice(list(letters))
        seqs.append("".join(s))
    return seqs


def test_a_search_on_s3_stopped_and_damaged_resumes_to_the_local_result(bucket, tmp_path,
                                                                      monkeypatch):
    seqs = related(8, PROTEIN.alphabet.letters[:20], 40, 120)
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
    seqs = related(5, "ACGT", 26, 70)
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
    assert opened.damaged() == {"tile": [1], "array": ["cigar"]}
    assert swath.resume(store, device="cpu").to_table() == local.to_table()
    assert swath.verify(store)["tile"] == opened.tiles
