"""Batched pairs (swath.align_pairs): exact scores and CIGARs, every way of pairing, chunks,
GPU against CPU, and the job's store: reopened, resumed, rerun, refused."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pytest

import swath
from swath.results.pairs import COLUMNS
from swath.storage.pairs import PairsStore
from swath.testing import rescore
from tests.helpers import DNA, PROTEIN, count_cigar, parasail_score, related_pair, write_fasta

MODES = ("local", "global", "semiglobal")
# long pairs beside the short ones: lengths up to 3,000, and 1 against 3,000
LONG = ((3000, 2800), (1, 3000), (3000, 1), (1700, 3000))


def residues(scoring: swath.Scoring) -> int:
    """How many of the alphabet's codes random sequences draw from (no wildcards)."""
    return 4 if scoring is DNA else 20


def pair_set(seed: int, scoring: swath.Scoring, short: int = 70
             ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``short`` pairs of 1 to 120 residues (half of them related: a mutated copy in
    flanks) and the pairs of ``LONG``, encoded."""
    rng = np.random.default_rng(seed)
    size = residues(scoring)
    queries, targets = [], []
    for k in range(short):
        if k % 2:
            a, b = related_pair(rng, int(rng.integers(1, 80)), size)
        else:
            a, b = (rng.integers(0, size, int(rng.integers(1, 121))).astype(np.uint8)
                    for _ in range(2))
        queries.append(a)
        targets.append(b)
    for m, n in LONG:
        a, b = related_pair(rng, max(m, n), size)
        queries.append(a[:m])
        targets.append(b[:n])
    return queries, targets


def texts(scoring: swath.Scoring, seqs: list[np.ndarray]) -> list[str]:
    return [scoring.alphabet.decode(s) for s in seqs]


def columns(result: swath.PairsResult, names: tuple[str, ...] = COLUMNS) -> dict[str, list]:
    return {name: result.column(name).tolist() for name in names}


SPAN = ("score", "query_start", "query_end", "target_start", "target_end", "cigar")
# the columns of the alignments, not of which records were paired
ALIGNED = tuple(name for name in COLUMNS if name not in ("query_index", "target_index",
                                                          "query_name", "target_name"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_scores_equal_parasail_and_cigars_rescore(mode, scoring, tmp_path):
    seed = zlib.crc32(f"{mode} {scoring.name}".encode())
    queries, targets = pair_set(seed, scoring)
    res = swath.align_pairs(texts(scoring, queries), texts(scoring, targets), scoring, mode,
                            "cpu", store=str(tmp_path / "p.zarr"))
    assert len(res) == len(queries)
    got = columns(res)
    for k, (q, t) in enumerate(zip(queries, targets, strict=True)):
        aln = swath.Alignment(*(got[name][k] for name in SPAN), mode)
        assert aln.score == parasail_score(q, t, scoring, mode), (k, len(q), len(t))
        assert rescore(aln, q, t, scoring) == aln.score, (k, aln.cigar)
        span = (aln.query_start, aln.query_end, aln.target_start, aln.target_end)
        if mode == "global":
            assert span == (0, len(q), 0, len(t)), k
        elif mode == "semiglobal":
            assert span[:2] == (0, len(q)), k
        counts = count_cigar(aln.cigar)
        assert [got[name][k] for name in ("length", "matches", "mismatches", "gap_opens")] == [
            counts["columns"], counts["matches"], counts["mismatches"], counts["gap_opens"]]
        assert got["identity"][k] == pytest.approx(
            counts["matches"] / counts["columns"] if counts["columns"] else 0.0)
    assert res.alignment(len(res) - 1) == aln


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Eight queries and six targets in FASTA files, and 23 pairs of them by index (some
    records in many pairs, some in none), aligned by index: the reference result."""
    root = tmp_path_factory.mktemp("pairs")
    rng = np.random.default_rng(3)
    queries = [DNA.alphabet.decode(s) for s in
               (rng.integers(0, 4, int(n)).astype(np.uint8) for n in rng.integers(1, 90, 8))]
    targets = [DNA.alphabet.decode(related_pair(rng, len(queries[k]), 4)[1]) for k in
               (0, 2, 2, 5, 6, 7)]
    rows = np.array([3, 0, 7, 3, 5, 1, 0, 0, 6, 2, 2, 7, 4, 3, 1, 0, 5, 6, 7, 2, 2, 4, 0])
    cols = np.array([1, 0, 5, 3, 3, 0, 1, 2, 4, 1, 2, 5, 0, 0, 1, 5, 3, 4, 4, 2, 1, 2, 0])
    qfile = write_fasta(root / "q.fa", [(f"q{i} query {i}", s) for i, s in enumerate(queries)],
                        width=25)
    tfile = write_fasta(root / "t.fa", [(f"t{i}", s) for i, s in enumerate(targets)])
    reference = swath.align_pairs(str(qfile), str(tfile), DNA, "local", "cpu",
                                  pairs=(rows, cols), store=str(root / "ref.zarr"))
    return {"queries": queries, "targets": targets, "rows": rows, "cols": cols,
            "qfile": str(qfile), "tfile": str(tfile), "root": root, "reference": reference}


def by(records, tmp_path, name="p.zarr", **options):
    """The reference job of ``records`` with other ``options`` (of ``align_pairs``)."""
    options = {"queries": records["qfile"], "targets": records["tfile"], "scoring": DNA,
               "mode": "local", "device": "cpu", "pairs": (records["rows"], records["cols"]),
               "store": str(tmp_path / name)} | options
    return swath.align_pairs(**options)


def test_pairs_by_index_name_file_and_position_align_alike(records, tmp_path):
    ref = records["reference"]
    rows, cols = records["rows"], records["cols"]
    assert ref.query_index.tolist() == rows.tolist()
    assert ref.target_index.tolist() == cols.tolist()
    assert ref.query_name.tolist() == [f"q{r}" for r in rows]
    assert ref.target_name.tolist() == [f"t{c}" for c in cols]
    for k in (0, 8, 22):
        want = swath.align(records["queries"][rows[k]], records["targets"][cols[k]], DNA,
                           mode="local", device="cpu")
        assert ref.alignment(k) == want
    names = ([f"q{r}" for r in rows], [f"t{c}" for c in cols])
    listed = (tmp_path / "pairs.tsv")
    listed.write_text("# query\ttarget\n" + "".join(f"{q}\t{t} extra\n\n"
                                                    for q, t in zip(*names, strict=True)))
    fastq = tmp_path / "t.fq.gz"                  # the targets as gzip FASTQ, too
    fastq.write_bytes(gzip.compress("".join(f"@t{i}\n{s}\n+\n{'I' * len(s)}\n" for i, s in
                                            enumerate(records["targets"])).encode()))
    want = columns(ref)
    assert columns(by(records, tmp_path, "names.zarr", pairs=names)) == want
    assert columns(by(records, tmp_path, "file.zarr", pairs=str(listed), targets=fastq)) == want
    position = swath.align_pairs([records["queries"][r] for r in rows],
                                 [records["targets"][c] for c in cols], DNA, "local", "cpu",
                                 store=str(tmp_path / "position.zarr"))
    assert columns(position, ALIGNED) == columns(ref, ALIGNED)
    assert position.query_index.tolist() == position.target_index.tolist() == list(range(23))
    assert position.query_name.tolist()[:2] == ["queries[0]", "queries[1]"]


def test_a_small_job_without_a_store_is_held_in_memory_as_the_store_holds_it(
        records, tmp_path, monkeypatch):
    """Pairs by index, name and position, from files and lists: no store, no scratch
    directory, the same columns and every format printed as from the job's store."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ref = records["reference"]
    rows, cols = records["rows"], records["cols"]
    names = ([f"q{r}" for r in rows], [f"t{c}" for c in cols])
    listed = tmp_path / "pairs.tsv"
    listed.write_text("".join(f"{q}\t{t}\n" for q, t in zip(*names, strict=True)))
    for pairs in ((rows, cols), names, str(listed)):
        held = by(records, tmp_path, store=None, pairs=pairs)
        assert held.path is None and "held in memory" in repr(held)
        assert columns(held) == columns(ref)
        assert {name: held.column(name).dtype for name in COLUMNS} == {
            name: ref.column(name).dtype for name in COLUMNS}
        assert held.cells == ref.cells and len(held) == len(ref)
        for k in (0, 11, 22):
            assert held.alignment(k) == ref.alignment(k)
        for format in swath.FORMATS["pairs"]:
            assert "".join(held.lines(format)) == "".join(ref.lines(format)), format
    listed.unlink()
    position = swath.align_pairs([records["queries"][r] for r in rows],
                                 [records["targets"][c] for c in cols], DNA, "local", "cpu")
    assert position.path is None and columns(position, ALIGNED) == columns(ref, ALIGNED)
    assert position.query_name.tolist()[:2] == ["queries[0]", "queries[1]"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("limit", ["IN_PROCESS_CELLS", "IN_PROCESS_BYTES", "IN_PROCESS_PAIRS"])
def test_a_job_past_the_in_process_limits_runs_on_the_engine(records, tmp_path, monkeypatch,
                                                             limit):
    monkeypatch.setattr(swath.api, limit, 10)
    res = by(records, tmp_path, store=None)
    assert res.path is not None and PairsStore.open(res.path).units == 1
    assert columns(res) == columns(records["reference"])


def test_standard_input_is_read_once_for_a_job_past_the_in_process_limits(records, tmp_path,
                                                                          monkeypatch):
    """Read whole to size the job, then handed to the engine as records: not read again
    (a pipe would be empty by then)."""
    import io
    import sys

    monkeypatch.setattr(swath.api, "IN_PROCESS_CELLS", 10)
    text = Path(records["qfile"]).read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    res = by(records, tmp_path, store=None, queries="-")
    assert res.path is not None
    assert columns(res) == columns(records["reference"])


def test_chunks_of_one_pair_do_not_change_the_result(records, tmp_path):
    res = by(records, tmp_path, chunk=1, pairs=(records["rows"][:9], records["cols"][:9]))
    assert PairsStore.open(res.path).units == 9
    assert columns(res) == {name: values[:9] for name, values in
                            columns(records["reference"]).items()}


def test_to_pandas_gives_every_column(records):
    pytest.importorskip("pandas")
    ref = records["reference"]
    frame = ref.to_pandas()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == len(ref) == 23
    for name in COLUMNS:
        assert frame[name].tolist() == ref.column(name).tolist(), name
    assert frame["cigar"].map(type).eq(str).all()


def test_open_resume_and_rerun_of_a_store(records, tmp_path):
    """In chunks of 4 pairs (the reference: one chunk), the same columns."""
    ref = records["reference"]
    path = str(tmp_path / "p.zarr")
    done = by(records, tmp_path, chunk=4)
    assert PairsStore.open(path).units == 6 and columns(done) == columns(ref)
    opened = swath.open(path)
    assert isinstance(opened, swath.PairsResult) and columns(opened) == columns(ref)
    assert columns(swath.resume(path, device="cpu")) == columns(ref)
    calls = []
    again = by(records, tmp_path, chunk=4, progress=lambda *a: calls.append(a))
    assert calls == [("pairs", 23, 23, 0)]          # the same job: nothing runs again
    assert columns(again) == columns(done)
    PairsStore.open(path, mode="r+").repair({"chunk": [1, 5]})   # as if interrupted
    with pytest.raises(swath.StoreIncomplete):
        swath.open(path)
    calls.clear()
    resumed = swath.resume(path, device="cpu", progress=lambda *a: calls.append(a))
    assert calls[0] == ("pairs", 16, 23, 0) and calls[-1][:3] == ("pairs", 23, 23)
    assert len(calls) == 3
    assert columns(resumed) == columns(ref)


def test_another_job_into_the_store_is_refused_unless_overwrite(records, tmp_path):
    path = tmp_path / "p.zarr"
    by(records, tmp_path)
    before = sorted(p.name for p in path.iterdir())
    others = [{"mode": "global"}, {"targets": records["qfile"]},
              {"pairs": (records["rows"][:-1], records["cols"][:-1])}, {"chunk": 3},
              {"scoring": swath.Scoring.dna(gap_open=4)}, {"pairs": None}]
    for other in others:
        with pytest.raises(swath.OutputExists, match="holds another pairs"):
            by(records, tmp_path, **other)
    assert sorted(p.name for p in path.iterdir()) == before
    replaced = by(records, tmp_path, targets=records["qfile"], mode="global", pairs=None,
                  overwrite=True)
    assert replaced.target_name.tolist() == [f"q{i}" for i in range(8)]
    assert replaced.query_end.tolist() == [len(s) for s in records["queries"]]


@pytest.mark.parametrize(("pairs", "error", "message"), [
    (([0, 9], [0, 1]), swath.InvalidInput, "pair 2: query index 9 is not a record"),
    (([0, 1], [0, -1]), swath.InvalidInput, "pair 2: target index -1 is not a record"),
    (([0, 1, 2], [0, 1]), swath.InvalidParameter, "two index arrays of one length"),
    (([0.0, 1.0], [0, 1]), swath.InvalidParameter, "two 1-D integer arrays"),
    ((["a", "b"], ["t0"]), swath.InvalidParameter, "two lists of one length"),
    ((["q0"], ["t9"]), swath.InvalidInput, "pair 1: target 't9' is not a record of"),
    ("nothing.tsv", swath.InputNotFound, "nothing.tsv: no such file"),
    ({"q0": "t0"}, swath.InvalidParameter, "pairs must be None, two index arrays"),
    ((np.zeros((2, 2), int), [0, 1]), swath.InvalidParameter, "two 1-D integer arrays"),
])
@pytest.mark.parametrize("store", ["p.zarr", None], ids=["store", "held"])
def test_bad_pairs_raise_and_leave_no_store(records, pairs, error, message, store, tmp_path):
    with pytest.raises(error, match=message):
        by(records, tmp_path, pairs=pairs, store=store and str(tmp_path / store))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("queries", "targets", "options", "error", "message"), [
    (["ACGT", "AC"], ["ACGT"], {}, swath.InvalidInput, "queries has 2 records and targets 1"),
    (["ACGT", ""], ["ACGT", "A"], {}, swath.InvalidSequence, r"queries\[1\] is empty"),
    ([], [], {}, swath.InvalidParameter, "queries is empty"),
    (["ACGT"], ["ACGT"], {"chunk": 0}, swath.InvalidParameter, "chunk must be a positive"),
    (["ACGT"], ["ACGT"], {"chunk": 1.5}, swath.InvalidParameter, "chunk must be a positive"),
    (["ACGT"], ["ACGT"], {"mode": "glocal"}, swath.InvalidParameter, "mode must be one of"),
    (["ACGT"], ["ACJT"], {}, swath.InvalidSequence, "'J'"),
])
def test_bad_sequences_raise_and_leave_no_store(queries, targets, options, error, message,
                                                tmp_path):
    options = {"mode": "local"} | options
    for store in (str(tmp_path / "p.zarr"), None):
        with pytest.raises(error, match=message):
            swath.align_pairs(queries, targets, DNA, device="cpu", store=store, **options)
        assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_gpu_equals_cpu(mode, scoring, tmp_path):
    """Random pairs (by position, and the same records by index), every column of the
    GPU's result the CPU's."""
    queries, targets = pair_set(zlib.crc32(f"gpu {mode}".encode()), scoring, short=400)
    q, t = texts(scoring, queries), texts(scoring, targets)
    rng = np.random.default_rng(5)
    pairs = (rng.integers(0, len(q), 300), rng.integers(0, len(t), 300))
    for name, options in {"position": {}, "index": {"pairs": pairs}}.items():
        cpu = swath.align_pairs(q, t, scoring, mode, "cpu", store=str(tmp_path / f"c{name}"),
                                **options)
        gpu = swath.align_pairs(q, t, scoring, mode, "gpu", store=str(tmp_path / f"g{name}"),
                                **options)
        held = swath.align_pairs(q, t, scoring, mode, "gpu", **options)
        assert held.path is None
        assert columns(gpu) == columns(held) == columns(cpu), name


def in_pieces(records, tmp_path, where=None, name="pieces.zarr", progress=None, **files):
    """The reference job of ``records`` with its inputs in pieces of about 97 bytes (a
    record straddles most cuts), through the engine; the targets as gzip FASTQ (read
    once, streamed) unless ``files`` say otherwise."""
    from swath.engine.cluster import InProcess
    from swath.engine.intake import file_source
    from swath.engine.pairs import prepare_pairs, run_pairs

    fastq = tmp_path / "t.fq.gz"
    fastq.write_bytes(gzip.compress("".join(f"@t{i}\r\n{s}\r\n+\r\n{'I' * len(s)}\r\n" for i, s in
                                            enumerate(records["targets"])).encode()))
    paths = {"queries": records["qfile"], "targets": str(fastq)} | files
    sources = [file_source(paths[side], wildcard=False, piece_bytes=97) for side in paths]
    path = str(tmp_path / name)
    job = prepare_pairs(path, *sources, (records["rows"], records["cols"]), DNA, mode="local",
                        device="cpu", chunk=4)
    run_pairs(job, where or InProcess(1, "CPU"), progress)
    return swath.open(path)


def test_inputs_taken_in_pieces_align_as_whole_files(records, tmp_path):
    """Plain FASTA and gzip FASTQ (CRLF) in pieces of 97 bytes, several a side; taken in
    again where some pieces of each were not done (the gzip file streamed again, its
    pieces done skipped)."""
    from swath.engine.cluster import InProcess
    from swath.engine.pairs import reopen_pairs, run_pairs

    calls = []
    res = in_pieces(records, tmp_path, progress=lambda *a: calls.append(a))
    store = PairsStore.open(res.path, mode="r+", complete=False)
    pieces = store.pieces("query") + store.pieces("target")
    assert store.pieces("query") > 3 and store.pieces("target") > 3
    assert columns(res) == columns(records["reference"])
    taking = [call for call in calls if call[0] == "pieces"]    # the gzip's: no total
    assert taking[0] == ("pieces", 0, None, 0) and taking[-1] == ("pieces", pieces, None, 0)
    store.unmark("query piece", [0, 2])
    store.unmark("target piece", [1, store.pieces("target") - 1])
    store.group.attrs["swath"] = {key: value for key, value in store.attrs.items()
                                  if key not in ("pairs", "streamed")} | {"complete": False}
    run_pairs(reopen_pairs(res.path, "cpu"), InProcess(1, "CPU"))
    assert columns(swath.open(res.path)) == columns(records["reference"])


def test_inputs_taken_in_pieces_on_a_cluster_of_processes(records, tmp_path):
    """Each piece parsed in a worker process of its own, the client holding none."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        res = in_pieces(records, tmp_path, client)
    assert columns(res) == columns(records["reference"])


def test_a_file_changed_since_it_was_taken_in_is_another_job(records, tmp_path):
    """Run again over its store: refused (its pieces are hashed again); resumed while
    its pieces are being taken in: refused (its size or time of change differ)."""
    import os

    from swath.engine.cluster import InProcess
    from swath.engine.pairs import reopen_pairs, run_pairs

    queries = tmp_path / "q.fa"
    queries.write_bytes(Path(records["qfile"]).read_bytes())
    in_pieces(records, tmp_path, queries=str(queries))
    text = queries.read_bytes()
    queries.write_bytes(text.replace(b"A", b"C", 1))
    with pytest.raises(swath.OutputExists, match=r"q\.fa has changed since it was taken in"):
        in_pieces(records, tmp_path, queries=str(queries))
    store = PairsStore.open(tmp_path / "pieces.zarr", mode="r+", complete=False)
    store.unmark("query piece", [1])                  # as if killed before the index was made
    store.group.attrs["swath"] = {key: value for key, value in store.attrs.items()
                                  if key != "pairs"} | {"complete": False}
    os.utime(queries, ns=(0, 0))
    with pytest.raises(swath.InputChanged, match=r"q\.fa has changed .* since this job started"):
        run_pairs(reopen_pairs(str(store.path), "cpu"), InProcess(1, "CPU"))


PEAK_MEMORY = """
import resource, sys
import swath
from swath.engine.cluster import InProcess
from swath.engine.intake import file_source
from swath.engine.pairs import prepare_pairs, run_pairs

queries, targets, store = sys.argv[1:4]
sides = [file_source(path, wildcard=False, piece_bytes=1 << 16) for path in (queries, targets)]
job = prepare_pairs(store, *sides, None, swath.Scoring.dna(), mode="local", device="cpu",
                    chunk=1000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
run_pairs(job, InProcess(2, "CPU"))
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.slow
def test_a_jobs_memory_is_bounded_by_its_unit_of_work_not_its_pairs(tmp_path):
    """Eight times the pairs (in pieces of 64 KiB, chunks of 1,000 pairs, in a process of
    its own): the job's peak memory grows by less than 12 MB (its per-pair columns; the
    inputs, 4.5 MB a side at the larger size, never whole in memory)."""
    import subprocess
    import sys

    script = tmp_path / "peak.py"
    script.write_text(PEAK_MEMORY)
    rng = np.random.default_rng(4)
    grown = []
    for count in (8000, 64000):
        names = []
        for side in ("q", "t"):
            codes = rng.integers(0, 4, (count, 60)).astype(np.uint8)
            path = tmp_path / f"{side}{count}.fa"
            path.write_bytes(b"".join(b">%s%d\n%s\n" % (side.encode(), i,
                                                         np.frombuffer(b"ACGT", np.uint8)[row]
                                                         .tobytes())
                                      for i, row in enumerate(codes)))
            names.append(str(path))
        done = subprocess.run([sys.executable, str(script), *names,
                               str(tmp_path / f"r{count}.zarr")],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        before, peak = map(int, done.stdout.split())
        grown.append(peak - before)          # kilobytes the job added to the process's peak
        assert len(swath.open(str(tmp_path / f"r{count}.zarr"))) == count
    assert grown[1] - grown[0] < 12 * 1024, grown
