"""The public API of DESIGN.md: swath.align, swath.scores, Alignment."""

from __future__ import annotations

import dataclasses
import doctest
import json
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest

import swath
from swath.testing import reference_align, rescore
from tests.helpers import DNA, PROTEIN, parasail_score

Q = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVV"
T = "MKTAYIAKQRQISFVKSHFSRQDERLGLIEVQAPILSRVGGTQDNLSGAEKAVQVKVKALPDAQFEVVHV"


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_align_matches_parasail_and_rescores(mode):
    aln = swath.align(Q, T, scoring=PROTEIN, mode=mode, device="cpu")
    q, t = PROTEIN.alphabet.encode(Q), PROTEIN.alphabet.encode(T)
    assert aln.score == parasail_score(q, t, PROTEIN, mode)
    assert rescore(aln, q, t, PROTEIN) == aln.score
    assert aln == reference_align(q, t, PROTEIN, mode)


def test_align_accepts_str_bytes_and_codes_alike():
    codes = DNA.alphabet.encode("acgtacgtta")
    results = {swath.align(x, "ACGTTCGTTA", scoring=DNA) for x in
               ("acgtacgtta", b"ACGTACGTTA", codes)}
    assert len(results) == 1


def test_default_scoring_is_blosum62_11_1_local():
    assert swath.align(Q, T) == swath.align(Q, T, scoring=PROTEIN, mode="local")


def test_alignment_is_frozen_picklable_and_prints():
    aln = swath.align("HEAGAWGHEE", "PAWHEAE")
    assert pickle.loads(pickle.dumps(aln)) == aln
    with pytest.raises(dataclasses.FrozenInstanceError):
        aln.score = 0  # type: ignore[misc]
    assert repr(aln).startswith("Alignment(score=")
    gapped = swath.Alignment(10, 0, 5, 0, 6, "2=1X1D2=", "global")
    assert (gapped.length, gapped.matches, gapped.mismatches, gapped.gap_opens) == (6, 4, 1, 1)
    assert gapped.identity == pytest.approx(4 / 6)


def test_scores_from_lists_and_files(tmp_path):
    fasta = tmp_path / "t.fasta"
    fasta.write_text(">a\nACGTACGT\n>b\nTTTTACGA\n>c\nG\n")
    queries = ["ACGTAC", "GGGG"]
    from_list = swath.scores(queries, ["ACGTACGT", "TTTTACGA", "G"], scoring=DNA, mode="local")
    from_file = swath.scores(queries, fasta, scoring=DNA, mode="local")
    np.testing.assert_array_equal(from_list, from_file)
    assert from_list.shape == (2, 3)
    assert from_list[0, 0] == 12


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: swath.align("ACGT", "ACGT", mode="glocal"), swath.InvalidParameter,
         "mode must be one of local, global, semiglobal, got 'glocal'"),
        (lambda: swath.align("ACGT", "ACGT", device="tpu"), swath.InvalidParameter,
         "device must be one of auto, cpu, gpu"),
        (lambda: swath.align("", "ACGT"), swath.InvalidSequence, "query is empty"),
        (lambda: swath.align("ACGT", "ACJT"), swath.InvalidSequence,
         r"target position 3: residue 'J'"),
        (lambda: swath.align("ACGT", "ACGT", scoring="BLOSUM62"), swath.InvalidParameter,
         "scoring must be a swath.Scoring"),
        (lambda: swath.scores([], ["ACGT"]), swath.InvalidParameter, "queries is empty"),
        (lambda: swath.scores(["AC"], "missing.fasta"), swath.InputNotFound, "missing.fasta"),
    ],
)
def test_bad_input_raises_specific_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_wildcard_maps_unknown_residues():
    aln = swath.align("ACJT", "ACXT", wildcard=True, mode="global")
    assert aln.cigar == "4="


def test_gpu_request_without_gpu_says_what_to_do():
    pytest.importorskip("numba")
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(swath.BackendUnavailable, match=r"pip install 'swath\[gpu\]'"):
            swath.align("ACGT", "ACGT", device="gpu")


def test_import_is_light():
    code = ("import sys, swath; "
            "print(sorted(m for m in ('numba', 'cupy', 'Bio', 'zarr') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["swath.api", "swath.scoring", "swath.alignment",
                                    "swath.testing", "swath.kernels",
                                    "swath.sequences.readers", "swath.sequences.encoding",
                                    "swath.storage.integrity", "swath.storage.allpairs",
                                    "swath.engine.allpairs", "swath.engine.database"])
def test_docstring_examples_run(module):
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_duplicate_names_refused_or_renamed(tmp_path, caplog):
    fasta = tmp_path / "seqs.fa"
    fasta.write_text(">a\nACGTACGTAA\n>b\nACGTACGTAC\n>a\nACGTACGTAG\n>a_2\nACGTACGTTT\n")
    with pytest.raises(swath.InvalidInput, match=r"seqs\.fa: sequence name 'a' is given twice "
                                                 r"\(records 1 and 3\)"):
        swath.allpairs(str(fasta), swath.Scoring.dna(), min_identity=0.5, device="cpu",
                       store=str(tmp_path / "refused.zarr"))
    assert not (tmp_path / "refused.zarr").exists()
    res = swath.allpairs(str(fasta), swath.Scoring.dna(), min_identity=0.5, device="cpu",
                         store=str(tmp_path / "p.zarr"), rename_duplicates=True)
    assert {row[2] for row in res.to_table()} | {row[3] for row in res.to_table()} == {
        "a", "b", "a_3", "a_2"}
    with caplog.at_level("WARNING", logger="swath"):
        swath.search(str(fasta), ["ACGTACGTAA"], swath.Scoring.dna(), top_k=1, device="cpu",
                     store=str(tmp_path / "s.zarr"))
    assert "query name 'a' is given twice (records 1 and 3)" in caplog.text


def test_top_k_beyond_the_database_keeps_every_hit(tmp_path):
    # a billion ranks asked of three targets: three kept, nothing allocated for the rest
    res = swath.search(["MKTAYIAKQR"], ["MKTAYIAKQR", "MKTAYIAKQQ", "WWWW"], top_k=10**9,
                       device="cpu", store=str(tmp_path / "r.zarr"), max_evalue=math.inf)
    assert res.store.top_k == 3
    assert [hit.target_id for hit in res.hits(0)] == [0, 1, 2]


def test_the_api_and_the_command_line_keep_the_same_e_value_cutoff(caplog, monkeypatch):
    """Without max_evalue, a local search keeps the hits of e-value at most 10, as blastp
    and ``swath search`` (WWWW's is larger); a global one has no e-values and says so
    once."""
    import swath.api

    monkeypatch.setattr(swath.api, "_NO_EVALUES_SAID", set())
    targets = ["MKTAYIAKQR", "MKTAYIAKQQ", "WWWW"]
    res = swath.search(["MKTAYIAKQR"], targets, device="cpu")
    assert [hit.target_id for hit in res.hits(0)] == [0, 1]
    assert all(hit.evalue <= 10 for hit in res.hits(0))
    with caplog.at_level("WARNING", logger="swath"):
        for _ in range(2):
            found = swath.search(["MKTAYIAKQR"], targets, device="cpu", mode="semiglobal")
    assert len(found.hits(0)) == 3
    said = [r.getMessage() for r in caplog.records if "e-values" in r.getMessage()]
    assert said == ["semiglobal hits have no e-values or bit scores (Karlin-Altschul "
                    "statistics are for local alignments): their columns are left empty"]


def test_makedb_reports_progress_in_the_one_signature(tmp_path):
    fasta = tmp_path / "db.fasta"
    fasta.write_text(">a\nMKVLA\n>b\nWW\n>c\nMKV\n")
    calls: list[tuple] = []
    info = swath.makedb(fasta, str(tmp_path / "db.swdb"), partition_residues=5,
                        progress=lambda *args: calls.append(args))
    assert (info.sequences, info.residues, info.partitions) == (3, 10, 2)
    assert calls[:2] == [("pieces", 0, 1, 0), ("pieces", 1, 1, 0)]
    assert calls[2:] == [("write", 0, 2, 0), ("write", 1, 2, 0), ("write", 2, 2, 0)]
    res = swath.search(["MKVLA"], str(tmp_path / "db.swdb"), top_k=1, device="cpu",
                       store=str(tmp_path / "r.zarr"))
    assert res.hits(0)[0].target_name == "a"


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_score_is_the_score_and_end_of_the_alignment(mode, tmp_path):
    dna = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    a, b = "ACGTTGCATTGACCA", "TTACGTTGCATTGACGTT"
    aligned = swath.align(a, b, scoring=dna, mode=mode, device="cpu")
    scored = swath.score(a, b, scoring=dna, mode=mode, device="cpu", tile_size=4,
                         progress=None)
    assert (scored.score, scored.query_end, scored.target_end, scored.mode) == (
        aligned.score, aligned.query_end, aligned.target_end, mode)
    with pytest.raises(swath.InvalidParameter, match="tile_size must be a positive integer"):
        swath.score(a, b, scoring=dna, tile_size=0, device="cpu")


@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_a_local_score_in_process_equals_the_tiled_engine(scoring, monkeypatch):
    """Without a store, a tile size or a client, a local pair runs as one tile in this
    process (no scratch store): the same score and end cell as the tiled engine, whose
    tiles' ties it keeps (repeats: many equal best cells)."""
    import tempfile

    rng = np.random.default_rng(len(scoring.alphabet.letters))
    size = len(scoring.alphabet.letters) - 1
    cases = [(rng.integers(0, size, 150), rng.integers(0, size, 230)),
             (np.tile([0, 1], 90), np.tile([0, 1, 1], 70)),
             (np.zeros(40, np.uint8), np.ones(50, np.uint8))]
    made = []
    mkdtemp = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: made.append(1) or mkdtemp(*a, **k))
    for a, b in cases:
        a, b = a.astype(np.uint8), b.astype(np.uint8)
        calls: list[tuple] = []
        alone = swath.score(a, b, scoring=scoring, device="cpu",
                            progress=lambda *args, seen=calls: seen.append(args))
        assert not made
        tiled = swath.score(a, b, scoring=scoring, device="cpu", tile_size=64)
        assert alone == tiled
        assert alone.score == parasail_score(a, b, scoring, "local")
        assert calls == [("tiles", 0, 1, 0), ("tiles", 1, 1, len(a) * len(b))]
        made.clear()


def test_format_alignment_prints_as_swath_align_does():
    from swath.views import format_text

    sc = swath.Scoring.protein("BLOSUM62", 11, 1)
    aln = swath.align("HEAGAWGHEE", "PAWHEAE", scoring=sc)
    text = swath.format_alignment(aln, query="HEAGAWGHEE", target="PAWHEAE", scoring=sc,
                                  names=("q", "t"))
    assert text == format_text(aln, sc.alphabet.encode("HEAGAWGHEE"),
                               sc.alphabet.encode("PAWHEAE"), sc, query_name="q",
                               target_name="t")
    record = json.loads(swath.format_alignment(aln, "json", names=("q", "t")))
    assert (record["query_name"], record["score"], record["cigar"]) == ("q", aln.score, aln.cigar)
    header, row = swath.format_alignment(aln, "tsv").splitlines()
    assert header.split("\t")[:3] == ["query_name", "target_name", "score"]
    assert row.split("\t")[:3] == ["query", "target", str(aln.score)]
    score = swath.PairScore(17, 3, 7, "local")
    assert swath.format_alignment(score, "tsv", names=("q", "t")).splitlines()[1] == \
        "q\tt\t17\t3\t7"
    with pytest.raises(swath.InvalidParameter, match="needs its query, target"):
        swath.format_alignment(aln)
    with pytest.raises(swath.InvalidParameter, match="format must be one of text, json, tsv"):
        swath.format_alignment(aln, "sam")


def test_warm_up_refuses_unknown_devices_and_jobs_and_does_nothing_for_the_cpu():
    assert swath.warm_up("cpu", job="search") is None
    with pytest.raises(swath.InvalidParameter, match="device must be one of auto, cpu, gpu"):
        swath.warm_up("tpu")
    with pytest.raises(swath.InvalidParameter, match="job must be one of"):
        swath.warm_up("cpu", job="nope")


JOBS_WITHOUT_STORE = {
    "search": lambda: swath.search(["ACGTACGTAA"], ["ACGTACGTAA", "GGGGCCCC"], DNA,
                                   mode="global", device="cpu"),
    "allpairs": lambda: swath.allpairs(["ACGTACGTAA", "ACGTACGTAT"], DNA, device="cpu",
                                       min_identity=0.5),
    "align_pairs": lambda: swath.align_pairs(["ACGTAC"], ["TACGTACT"], DNA, device="cpu"),
}


@pytest.mark.parametrize("job", list(JOBS_WITHOUT_STORE))
def test_a_job_without_a_store_leaves_no_scratch_directory(job, tmp_path, monkeypatch):
    """Its store lives in a temporary directory as long as its result, which reads it;
    then (or at the process's end) the directory is removed."""
    import gc
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for small in ("IN_PROCESS_CELLS", "IN_PROCESS_SEARCH_CELLS"):    # jobs for the engine
        monkeypatch.setattr(swath.api, small, 0)
    result = JOBS_WITHOUT_STORE[job]()
    (scratch,) = tmp_path.glob("swath-*")
    assert len(result) >= 1 and scratch.is_dir()
    del result
    gc.collect()
    assert not list(tmp_path.iterdir())


def test_a_failed_job_without_a_store_leaves_no_scratch_directory(tmp_path, monkeypatch):
    """A job for the engine (``chunk``: not one held in this process) that fails once its
    scratch store is made: the directory goes with it."""
    import tempfile

    made = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: made.append(real(**kw)) or made[-1])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(swath.InvalidInput, match="pairs by position need as many"):
        swath.align_pairs(["ACGTAC", "GG"], ["TACGTACT"], DNA, device="cpu", chunk=1)
    assert len(made) == 1 and made[0].startswith(str(tmp_path))
    assert not list(tmp_path.iterdir())


def test_scratch_stores_go_when_the_process_ends(tmp_path):
    script = ("import swath, tempfile; tempfile.tempdir = " + repr(str(tmp_path)) + "\n"
              "result = swath.align_pairs(['ACGTAC'], ['TACGTACT'], swath.Scoring.dna(), "
              "device='cpu', chunk=1)\nprint(result.score[0])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "12" and not list(tmp_path.iterdir())


def test_threads_option_is_the_kernels_thread_count(tmp_path, monkeypatch):
    import os

    from click.testing import CliRunner

    from swath.cli import main
    from swath.kernels.cores import cores

    fasta = tmp_path / "a.fa"
    fasta.write_text(">a\nACGTACGTTAGC\n")
    # set, then unset: monkeypatch restores only a variable it has recorded, and the
    # command sets it in this process
    monkeypatch.setenv("NUMBA_NUM_THREADS", str(os.cpu_count() or 1))
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    run = CliRunner().invoke(main, ["align", "--dna", str(fasta), str(fasta), "--threads",
                                    "1", "--device", "cpu"])
    assert run.exit_code == 0, run.output
    assert cores() == 1


def test_threads_out_of_range_are_refused_and_a_later_change_holds(monkeypatch):
    import os

    from swath.kernels.cpu.cores import share_tasks

    for wrong in (0, (os.cpu_count() or 1) + 1, 1.5):
        with pytest.raises(swath.InvalidParameter, match="threads must be 1 to"):
            swath.use_threads(wrong)
    monkeypatch.setenv("NUMBA_NUM_THREADS", str(os.cpu_count() or 1))
    swath.align("ACGT", "ACGT", scoring=swath.Scoring.dna(), device="cpu")  # kernels loaded
    calls: list[tuple[int, int]] = []

    def kernel(first: int, step: int) -> None:
        calls.append((first, step))

    for threads in sorted({1, os.cpu_count() or 1}):
        swath.use_threads(threads)
        calls.clear()
        share_tasks(kernel, 100)        # the kernels' next call takes the count
        assert sorted(calls) == [(first, threads) for first in range(threads)]


def test_a_protein_search_of_a_database_of_dna_warns(tmp_path, caplog):
    """A database made of DNA read as protein (makedb without --dna): the search says the
    database wants --dna, as it says of such queries."""
    fasta = tmp_path / "dna.fa"
    fasta.write_text(">a\nACGTACGTAAGT\n>b\nACGGTTACGTAC\n")
    swath.makedb(str(fasta), str(tmp_path / "dna.swdb"))
    with caplog.at_level("WARNING", logger="swath"):
        swath.search(["MKTAYIAKQR"], str(tmp_path / "dna.swdb"), device="cpu")
    assert any(r.getMessage().startswith(f"{tmp_path / 'dna.swdb'}: the sequences hold only "
                                         "A, C, G, T and N") for r in caplog.records)
