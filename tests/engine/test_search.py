"""Database search on Dask: exact top hits, resumption, faults, bad input."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from distributed.comm.core import CommClosedError

import swath
from swath.alignment import ops_cigar
from swath.engine.database import write_database
from swath.results.search import SearchResult
from swath.statistics import gapped_parameters, search_evalue
from swath.storage.results import SearchStore
from tests.helpers import PROTEIN, assert_refused_as_older, lose_worker_at, write_fasta


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """150 random proteins, 7 queries made from some of them (mutated), a database store."""
    rng = np.random.default_rng(8)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    seqs = ["".join(rng.choice(list(letters), int(n))) for n in rng.integers(30, 400, 150)]
    queries = []
    for i in (0, 10, 10, 42, 77, 120, 149):
        q = list(seqs[i][: 150])
        for k in rng.integers(0, len(q), len(q) // 8):
            q[k] = letters[int(rng.integers(0, 20))]
        queries.append("".join(q))
    root = tmp_path_factory.mktemp("search")
    fasta = write_fasta(root / "db.fasta", [(f"t{i} protein {i}", s) for i, s in enumerate(seqs)])
    qfasta = write_fasta(root / "q.fasta", [(f"q{i}", s) for i, s in enumerate(queries)])
    db = root / "db.swdb"
    write_database(fasta, str(db), PROTEIN.alphabet, partition_residues=9000)
    return {"seqs": seqs, "queries": queries, "db": str(db), "qfasta": str(qfasta),
            "root": root}


def expected_hits(data, top_k, mode="local", max_evalue=10.0):
    """Each query's top_k hits (target, score) from the whole score matrix: in local mode
    the least e-values (blastp's, Spouge's: they depend on the subject's length) at most
    ``max_evalue``, then the highest scores, then the lowest targets; else the highest
    scores, then the lowest targets."""
    scores = swath.scores(data["queries"], data["seqs"], mode=mode, device="cpu")
    lengths = np.array([len(s) for s in data["seqs"]])
    out = []
    for query, row in zip(data["queries"], scores, strict=True):
        if mode == "local":
            e = search_evalue(row, len(query), lengths, lengths.sum(), len(lengths),
                              gapped_parameters(PROTEIN))
            order = [t for t in np.lexsort((np.arange(len(row)), -row, e)).tolist()
                     if e[t] <= max_evalue]
        else:
            order = sorted(range(len(row)), key=lambda t: (-row[t], t))
        out.append([(t, int(row[t])) for t in order[:top_k]])
    return out


def log_score_tasks(monkeypatch, engine, log, what):
    """Replace the engine's score task by one that appends ``what(job, partition)`` to
    the file ``log`` (tasks sent to a cluster are pickled: a file sees every call), then
    scores."""
    real = engine.score_partition

    def logged(job, q_res, q_off, p, k):
        with open(log, "a") as out:
            out.write(f"{what(job, p)}\n")
        return real(job, q_res, q_off, p, k)

    monkeypatch.setattr(engine, "score_partition", logged)


def test_partitions_are_read_once_ahead_and_failed_reads_again(data, monkeypatch):
    """A process reads each partition once; ``read_ahead`` starts the first one not yet
    asked for; a read that failed is read again when next asked for."""
    from swath.engine.search import _Partitions
    from swath.storage.database import Database

    reads = []
    real = Database.partition
    failing = {3}

    def partition(self, p):
        reads.append(p)
        if p in failing:
            failing.discard(p)
            raise swath.StoreIncomplete(f"{self.path}: chunk {p} is missing")
        return real(self, p)

    monkeypatch.setattr(Database, "partition", partition)
    parts, path = _Partitions(readers=1), data["db"]     # one reader: reads in order
    assert Database.open(path).partitions == 4
    got = parts.get(path, 1)
    for mine, theirs in zip(got, real(Database.open(path), 1), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    parts.read_ahead(path)
    parts.read_ahead(path)
    parts.get(path, 0), parts.get(path, 2), parts.get(path, 1)
    assert reads == [1, 0, 2]
    with pytest.raises(swath.StoreIncomplete, match="chunk 3"):
        parts.get(path, 3)
    parts.get(path, 3)
    parts.read_ahead(path)      # every partition asked for: nothing to read
    assert reads == [1, 0, 2, 3, 3]
    # a cache of two: partitions it let go are read again when asked, never ahead
    reads.clear()
    small = _Partitions(readers=1, keep=2)
    for p in range(4):
        small.get(path, p)
        small.read_ahead(path)
    small.get(path, 0)
    assert reads == [0, 1, 2, 3, 0]


def test_jobs_in_this_process_read_ahead(data, client, tmp_path, monkeypatch):
    """A job in this process, which scores every partition, reads ahead; a cluster's
    workers do not (they would read partitions that other workers score). Both find the
    same hits."""
    import swath.engine.search as engine
    from swath.engine.cluster import InProcess

    log = tmp_path / "read_ahead.log"
    log_score_tasks(monkeypatch, engine, log, lambda job, p: job.read_ahead)
    mine = swath.search(data["qfasta"], data["db"], top_k=3, client=InProcess(2, "CPU"),
                        store=str(tmp_path / "a.zarr"), device="cpu")
    assert set(log.read_text().split()) == {"True"}
    log.unlink()
    theirs = swath.search(data["qfasta"], data["db"], top_k=3, client=client,
                          store=str(tmp_path / "b.zarr"), device="cpu")
    assert set(log.read_text().split()) == {"False"}
    assert mine.to_table() == theirs.to_table()


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["local", "global"])
def test_gpu_search_finds_the_exact_top_hits(data, client, tmp_path, mode):
    result = swath.search(data["qfasta"], data["db"], top_k=4, client=client,
                          store=str(tmp_path / "r.zarr"), mode=mode, query_block=3, device="gpu")
    for qi, want in enumerate(expected_hits(data, 4, mode)):
        hits = result.hits(qi)
        assert [(h.target_id, h.score) for h in hits] == want
        for h in hits:
            assert h.alignment == swath.align(data["queries"][qi], data["seqs"][h.target_id],
                                              mode=mode, device="cpu")


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_search_finds_the_exact_top_hits_with_alignments(data, client, tmp_path, mode):
    result = swath.search(data["qfasta"], data["db"], top_k=4, client=client,
                          store=str(tmp_path / "r.zarr"), mode=mode, query_block=3)
    assert len(result) == len(data["queries"])
    for qi, want in enumerate(expected_hits(data, 4, mode)):
        hits = result.hits(qi)
        assert [(h.target_id, h.score) for h in hits] == want
        for h in hits:
            assert h.target_name == f"t{h.target_id}"
            assert h.alignment == swath.align(data["queries"][qi], data["seqs"][h.target_id],
                                              mode=mode, device="cpu")
    if mode == "local":
        best = result.hits(1)[0]
        assert best.evalue < 1e-20 and best.bitscore > 50
        # blastp's e-value: Spouge's, from the query's and the subject's whole lengths
        want = search_evalue([best.score], len(data["queries"][1]),
                             [len(data["seqs"][best.target_id])], sum(map(len, data["seqs"])),
                             len(data["seqs"]), gapped_parameters(PROTEIN))
        assert best.evalue == pytest.approx(want[0], rel=1e-12)
    rows = result.to_table()
    assert rows[0][0] == "q0" and rows[0][6] == result.hits(0)[0].alignment.query_start + 1


@pytest.mark.parametrize(("mode", "options"), [("local", {}), ("local", {"max_evalue": 1e-5}),
                                               ("semiglobal", {})])
@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_small_search_without_a_store_is_held_in_memory_as_the_store_holds_it(
        data, tmp_path, monkeypatch, mode, options, device):
    """No store, no scratch directory: the hits, table and every format printed as from
    the same search's store."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    progress = []
    held = swath.search(data["qfasta"], data["db"], top_k=4, mode=mode, device=device,
                        query_block=3, progress=lambda *args: progress.append(args),
                        **options)
    stored = swath.search(data["qfasta"], data["db"], top_k=4, mode=mode, device="cpu",
                          store=str(tmp_path / "r.zarr"), query_block=3, **options)
    assert held.path is None and "held in memory" in repr(held)
    assert list((tmp_path / "scratch").iterdir()) == []
    cells = sum(map(len, data["queries"])) * sum(map(len, data["seqs"]))
    assert progress == [("search", 0, cells, 0), ("search", cells, cells, cells)]
    assert held.to_table() == stored.to_table()
    for qi in range(len(data["queries"])):      # repr: e-values may be NaN
        assert repr(held.hits(qi)) == repr(stored.hits(qi))
    for format in swath.FORMATS["search"]:
        assert "".join(held.lines(format)) == "".join(stored.lines(format)), format


def test_a_search_past_the_in_process_cells_runs_on_the_engine(data, monkeypatch):
    monkeypatch.setattr(swath.api, "IN_PROCESS_SEARCH_CELLS", 0)
    result = swath.search(data["qfasta"], data["db"], top_k=2, device="cpu")
    assert result.path is not None and SearchStore.open(result.path).units == 1
    assert [[(h.target_id, h.score) for h in result.hits(q)] for q in range(7)] == \
        expected_hits(data, 2)


def test_the_store_is_tidy_in_xarray_and_an_older_one_is_refused_by_version(data, tmp_path):
    """The queries' names index the ``query`` dimension; the job's own arrays are out of
    the way, in ``work``; the CIGARs are BAM's packed operations; a version 3 store
    (CIGARs as strings) is refused in one line naming its version."""
    xarray = pytest.importorskip("xarray")
    from swath.storage.results import HIT_FIELDS

    path = str(tmp_path / "r.zarr")
    result = swath.search(data["qfasta"], data["db"], top_k=3, device="cpu", store=path)
    ds = xarray.open_zarr(path)
    assert dict(ds.sizes) == {"query": 7, "rank": 3}
    assert set(ds.data_vars) == set(HIT_FIELDS) - {"target_name"}
    assert ds["query"].values.tolist() == [f"q{i}" for i in range(7)]
    hits = ds.sel(query="q3")
    assert hits["target"].values.tolist() == [h.target_id for h in result.hits(3)]
    assert hits["target_name"].values.tolist() == [h.target_name for h in result.hits(3)]
    assert [ops_cigar(np.frombuffer(v, "<u4")) for v in hits["cigar"].values] == [
        h.alignment.cigar for h in result.hits(3)]
    assert_refused_as_older(path, swath.open, 3)


def test_max_evalue_drops_weak_hits(data, client, tmp_path):
    result = swath.search(data["qfasta"], data["db"], top_k=5, client=client,
                          store=str(tmp_path / "r.zarr"), max_evalue=1e-5)
    for qi in range(len(data["queries"])):
        hits = result.hits(qi)
        assert 1 <= len(hits) <= 2
        assert all(h.evalue <= 1e-5 for h in hits)


def test_a_scoring_without_published_statistics_gives_hits_without_e_values(data, tmp_path,
                                                                          caplog):
    """BLOSUM62 with gaps 7 + 3 has no published parameters: the search runs, its hits
    carry scores but no e-values or bit scores, and a warning says so."""
    scoring = swath.Scoring.protein("BLOSUM62", gap_open=7, gap_extend=3)
    with caplog.at_level("WARNING", logger="swath"):
        result = swath.search(data["qfasta"], data["db"], scoring, top_k=2, device="cpu",
                              store=str(tmp_path / "r.zarr"))
    assert "no e-values or bit scores" in caplog.text
    best = result.hits(1)[0]
    assert best.score > 0 and np.isnan(best.evalue) and np.isnan(best.bitscore)
    assert result.to_table()[0][10] is None and result.to_table()[0][11] is None


@pytest.mark.parametrize("mode", ["global", "semiglobal"])
def test_max_evalue_outside_local_mode_is_refused(data, tmp_path, mode):
    with pytest.raises(swath.InvalidParameter, match="applies to local searches"):
        swath.search(data["qfasta"], data["db"], top_k=2, mode=mode, device="cpu",
                     store=str(tmp_path / "r.zarr"), max_evalue=1.0)
    assert not (tmp_path / "r.zarr").exists()


def test_interrupted_job_resumes_without_redoing_done_units(data, client, tmp_path,
                                                            monkeypatch):
    import swath.engine.search as engine

    store = str(tmp_path / "r.zarr")
    reference = swath.search(data["qfasta"], data["db"], top_k=3, client=client,
                             store=str(tmp_path / "ref.zarr"), query_block=2)
    real_write = lose_worker_at(monkeypatch, engine, "write_unit", 2)
    with pytest.raises(RuntimeError, match="worker lost"):
        swath.search(data["qfasta"], data["db"], top_k=3, client=client, store=store,
                     query_block=2)
    done = SearchStore.open(store, complete=False).done()
    assert not done[2] and done.sum() == 3
    with pytest.raises(swath.StoreIncomplete):
        SearchResult(store)
    monkeypatch.setattr(engine, "write_unit", real_write)
    log = tmp_path / "scored.log"
    log_score_tasks(monkeypatch, engine, log, lambda job, p: p)
    resumed = swath.search(data["qfasta"], data["db"], top_k=3, client=client, store=store,
                           query_block=2)
    partitions = engine._database(data["db"]).partitions
    assert len(log.read_text().split()) == partitions   # one unit redone, not four
    assert resumed.to_table() == reference.to_table()


@pytest.mark.parametrize("on_cluster", [False, True])
def test_a_one_unit_job_reports_its_cells_partition_by_partition(data, client, tmp_path,
                                                                 on_cluster):
    """The progress of a job of one work unit moves as each database partition is
    scored, in cells, in this process and on a cluster; a rerun starts complete."""
    import swath.engine.search as engine

    reports: list[tuple[str, int, int | None, int]] = []
    store = str(tmp_path / "r.zarr")
    database = engine._database(data["db"])
    for _ in range(2):
        swath.search(data["qfasta"], data["db"], top_k=1, store=store, device="cpu",
                     client=client if on_cluster else None, query_block=len(data["queries"]),
                     progress=lambda *report: reports.append(report))
    total = sum(len(q) for q in data["queries"]) * database.residues
    first_run, rerun = reports[:-1], reports[-1:]
    assert database.partitions > 2 and len(first_run) == database.partitions + 1
    assert first_run[0] == ("search", 0, total, 0)
    assert first_run[-1] == rerun[0] == ("search", total, total, total)
    done = [report[1] for report in first_run]
    assert done == sorted(done) and len(set(done)) == len(done)


KILLED_JOB = textwrap.dedent("""
    import sys, swath
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster, \\
            Client(cluster) as client:
        swath.search(sys.argv[1], sys.argv[2], top_k=3, client=client, store=sys.argv[3],
                     query_block=1)
""")


def test_client_killed_with_sigkill_then_resumed(data, tmp_path):
    store = str(tmp_path / "r.zarr")
    job = subprocess.Popen([sys.executable, "-c", KILLED_JOB, data["qfasta"], data["db"],
                            store])
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if SearchStore.open(store, complete=False).done().sum() >= 2:
                break
        except swath.SwathError:
            pass
        time.sleep(0.05)
    os.kill(job.pid, signal.SIGKILL)
    job.wait()
    partial = SearchStore.open(store, complete=False)
    assert partial.attrs["complete"] is False
    from click.testing import CliRunner

    from swath.cli import main

    resumed = CliRunner().invoke(main, ["resume", store, "--no-progress", "--device", "cpu"])
    assert resumed.exit_code == 0, resumed.output
    uninterrupted = swath.search(data["qfasta"], data["db"], top_k=3,
                                 store=str(tmp_path / "ref.zarr"), query_block=1, device="cpu")
    assert SearchResult(store).to_table() == uninterrupted.to_table()


def test_worker_killed_mid_job_loses_nothing(data, tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        import threading

        def kill_one():
            time.sleep(1.0)
            worker = next(iter(c.scheduler_info()["workers"]))
            with contextlib.suppress(CommClosedError):   # the worker dies during the call
                c.run(os._exit, 1, workers=[worker])

        threading.Thread(target=kill_one, daemon=True).start()
        result = swath.search(data["qfasta"], data["db"], top_k=3, client=c,
                              store=str(tmp_path / "r.zarr"), query_block=1)
    for qi, want in enumerate(expected_hits(data, 3)):
        assert [(h.target_id, h.score) for h in result.hits(qi)] == want


def test_second_writer_is_refused(data, client, tmp_path):
    from swath.storage.locking import store_lock

    store = str(tmp_path / "r.zarr")
    swath.search(data["qfasta"], data["db"], top_k=2, client=client, store=store)
    with store_lock(store), pytest.raises(swath.StoreLocked, match="is being written"):
        swath.search(data["qfasta"], data["db"], top_k=2, client=client, store=store)


def test_bad_inputs(data, client, tmp_path):
    with pytest.raises(swath.InvalidParameter, match="alphabet"):
        swath.search(["ACGT"], data["db"], scoring=swath.Scoring.dna(), client=client,
                     store=str(tmp_path / "a.zarr"))
    with pytest.raises(swath.FormatVersionError, match="'database' store"):
        SearchResult(data["db"])
    swath.search(data["qfasta"], data["db"], top_k=2, client=client,
                 store=str(tmp_path / "b.zarr"))
    with pytest.raises(swath.InvalidParameter, match="holds another search"):
        swath.search(data["qfasta"], data["db"], top_k=3, client=client,
                     store=str(tmp_path / "b.zarr"))
    from swath.engine.cluster import connect

    started = time.monotonic()      # a refused port at once, not after the client's 10 s
    with pytest.raises(swath.InvalidParameter, match=r"cannot reach a Dask scheduler.*refused"):
        connect("tcp://127.0.0.1:1")
    assert time.monotonic() - started < 5


def test_result_store_behind_an_fsspec_url(data, client):
    store = "memory://swath-tests/result.zarr"
    result = swath.search(data["qfasta"], data["db"], top_k=2, client=client, store=store)
    again = SearchResult(store)
    assert again.to_table() == result.to_table()
    assert [h.target_id for h in again.hits(1)][:1] == [10]


@pytest.mark.parametrize("kind", ["fasta", "list"])
def test_a_fasta_or_list_database_is_encoded_once_and_outlives_the_job(data, client, tmp_path,
                                                                      monkeypatch, kind):
    """A search against sequences that are no store encodes them into a database store
    kept in swath's cache (not a temporary directory), which the result store names: a
    second search reuses it, and the result stays readable and resumable."""
    monkeypatch.setenv("SWATH_CACHE_DIR", str(tmp_path / "cache"))
    database = str(data["root"] / "db.fasta") if kind == "fasta" else data["seqs"]
    first = swath.search(data["qfasta"], database, top_k=2, client=client,
                         store=str(tmp_path / "a.zarr"))
    made = first.store.attrs["inputs"]["database"]
    assert made.startswith(str(tmp_path / "cache" / "databases"))
    stamp = os.stat(os.path.join(made, "zarr.json")).st_mtime_ns
    second = swath.search(data["qfasta"], database, top_k=2, client=client,
                          store=str(tmp_path / "b.zarr"))
    assert second.store.attrs["inputs"]["database"] == made
    assert os.stat(os.path.join(made, "zarr.json")).st_mtime_ns == stamp
    assert second.to_table() == first.to_table()
    want = [[(h.target_id, h.score) for h in first.hits(q)] for q in range(7)]
    assert want == expected_hits(data, 2)


def test_to_pandas_names_the_hits_as_every_result_names_its_alignments(data, tmp_path):
    """A search's frame and a pairs job's frame of the same alignments: the same names,
    the same 0-based coordinates and counts (plus the hits' e-values and bit scores)."""
    import pandas as pd

    result = swath.search(data["qfasta"], data["db"], top_k=3, device="cpu")
    hits = result.to_pandas()
    assert tuple(hits.columns) == swath.SEARCH_COLUMNS
    assert hits["query_index"].tolist() == [q for q in range(len(result))
                                            for _ in result.hits(q)]
    pairs = swath.align_pairs(data["queries"], data["seqs"], device="cpu",
                              pairs=(hits["query_index"].to_numpy(),
                                     hits["target_index"].to_numpy())).to_pandas()
    shared = [c for c in swath.PAIRS_COLUMNS if c not in ("query_name", "target_name")]
    assert set(swath.PAIRS_COLUMNS) <= set(swath.SEARCH_COLUMNS)
    pd.testing.assert_frame_equal(hits[shared].reset_index(drop=True),
                                  pairs[shared].reset_index(drop=True), check_dtype=False)
    assert hits["target_name"].tolist() == [f"t{t}" for t in hits["target_index"]]
    best = result.hits(0)[0]
    assert (hits["evalue"][0], hits["query_start"][0]) == (best.evalue,
                                                          best.alignment.query_start)
