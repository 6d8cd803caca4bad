"""The workload registry (``swath.workloads``) and the public functions that look a store
up in it: ``swath.open``, ``swath.resume``, ``swath.report``; and the printers of
``swath.results``."""

from __future__ import annotations

import doctest
import importlib
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import swath
from swath.engine import allpairs as engine
from swath.engine.intake import memory_source
from swath.results.allpairs import AllPairsResult
from swath.results.longpair import PairScore
from swath.sequences import sequence_set
from swath.storage.allpairs import AllPairsStore
from swath.workloads import lookup, named, registered
from tests.helpers import DNA, TABLE_CONVENTION, convention_rows, write_fasta

SEQUENCES = ["ACGTACGTACGTAAGG", "ACGTACGTACGTAAGC", "ACGTTCGTACGTAAGG", "TTTTGGGGCCCCAAAA",
             "ACGTACGTACCTAAGG", "GGGGCCCCAAAATTTT"]


def allpairs(path: str) -> AllPairsResult:
    return swath.allpairs(SEQUENCES, DNA, min_identity=0.8, device="cpu", block=2,
                          clusters=True, store=path)


def test_every_workload_declares_one_layout_and_its_formats():
    layouts = [w.store().LAYOUT for w in registered()]
    assert [w.name for w in registered()] == ["search", "longpair", "allpairs", "pairs"]
    assert layouts == ["search", "alignment", "allpairs", "pairs"]
    for workload in registered():
        assert workload.default_format in workload.formats
        assert swath.FORMATS[workload.name] == workload.formats
    assert named("longpair").plot is not None and named("search").plot is None
    with pytest.raises(swath.InvalidParameter, match="job must be one of search, longpair, "
                                                     "allpairs, pairs, got 'triples'"):
        named("triples")


def test_the_registry_and_the_command_line_load_no_store_engine_or_kernel():
    code = ("import sys, swath.cli, swath.workloads; swath.workloads.registered(); "
            "print(sorted(m for m in ('numba', 'cupy', 'zarr', 'dask', 'swath.storage', "
            "'swath.engine.search') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_a_database_or_nothing_is_no_result_store(tmp_path):
    fasta = tmp_path / "db.fasta"
    fasta.write_text(">a\nACGT\n")
    swath.makedb(fasta, str(tmp_path / "db.swdb"), DNA)
    for call in (swath.open, swath.resume, swath.report, lookup):
        with pytest.raises(swath.InvalidParameter, match=r"db\.swdb is a 'database' store "
                           r"version \d+, not a result store \(search, alignment, allpairs, "
                           r"pairs\)"):
            call(str(tmp_path / "db.swdb"))
        with pytest.raises(swath.StoreNotFound):
            call(str(tmp_path / "nothing.zarr"))


def test_open_report_and_resume_of_a_finished_store(tmp_path):
    path = str(tmp_path / "p.zarr")
    ran = allpairs(path)
    opened = swath.open(path)
    assert isinstance(opened, AllPairsResult) and opened.to_table() == ran.to_table()
    assert "".join(swath.report(path)) == "".join(ran.lines("tsv"))
    assert [(json.loads(line)["qseqid"], json.loads(line)["sseqid"])
            for line in swath.report(path, "json")] == [
        tuple(line.split("\t")[:2]) for line in "".join(ran.lines("tsv")).splitlines()]
    calls: list[tuple] = []
    again = swath.resume(path, device="cpu", progress=lambda *a: calls.append(a))
    assert calls == [] and again.to_table() == ran.to_table()     # nothing ran
    with pytest.raises(swath.InvalidParameter, match=r"--plot draws the path of a long pair's "
                       r"alignment store .* is an allpairs store .*kept pairs' alignments"):
        swath.report(path, plot=str(tmp_path / "p.png"))
    with pytest.raises(swath.InvalidParameter, match=r"format must be one of tsv, blast6out, "
                       r"json, text, uc, clusters-uc, centroids, sam, paf for .*, got 'bam'"):
        swath.report(path, "bam")


def test_resume_finishes_an_interrupted_store_as_an_uninterrupted_run(tmp_path):
    whole = allpairs(str(tmp_path / "whole.zarr"))
    path = str(tmp_path / "x.zarr")
    seqs = sequence_set(SEQUENCES, DNA.alphabet, names=[f"sequences[{i}]" for i in
                                                        range(len(SEQUENCES))])
    job = engine.prepare_allpairs(path, memory_source(seqs, "sequences"), DNA, mode="global",
                                  min_identity=0.8, iddef="pident", block=2, scores=False,
                                  clusters=True, device="cpu")
    engine.index_sequences(job)         # records in memory are in the store already
    engine.run_tile(job, 0)
    with pytest.raises(swath.StoreIncomplete, match=r"not finished .* `swath resume "):
        swath.open(path)
    with pytest.raises(swath.StoreIncomplete, match="not finished"):
        swath.report(path)
    calls: list[tuple] = []
    resumed = swath.resume(path, device="cpu", progress=lambda *a: calls.append(a))
    tiles = AllPairsStore.open(path).tiles
    assert calls[0] == ("allpairs", 1, tiles, calls[0][3]) and calls[-1][:3] == (
        "allpairs", tiles, tiles)
    assert resumed.to_table() == whole.to_table()
    assert resumed.clusters().tolist() == whole.clusters().tolist()
    assert list(swath.report(path, "tsv")) == list(whole.lines("tsv"))


def test_a_scores_only_store_opens_as_its_pair_score(tmp_path):
    path = str(tmp_path / "s.zarr")
    a, b = "ACGTTGCAACGTTGCA", "TTACGTTGCATTACGTAGCA"
    scored = swath.score(a, b, scoring=DNA, mode="local", device="cpu", store=path,
                         names=("a", "b"))
    aligned = swath.align(a, b, scoring=DNA, mode="local", device="cpu")
    assert isinstance(scored, PairScore)
    assert (scored.score, scored.query_end, scored.target_end) == (
        aligned.score, aligned.query_end, aligned.target_end)
    assert swath.open(path) == scored == swath.resume(path, device="cpu")
    record = json.loads("".join(swath.report(path)))              # json: the default
    assert record == {"query_name": "a", "target_name": "b", "score": scored.score,
                      "query_end": scored.query_end, "target_end": scored.target_end}
    with pytest.raises(swath.InvalidParameter, match="holds a score only"):
        swath.report(path, plot=str(tmp_path / "p.png"))


@pytest.mark.parametrize("module", ["swath.results.search", "swath.results.allpairs",
                                    "swath.results.longpair", "swath.results.pairs",
                                    "swath.cli.allpairs"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


FINISHED_STORES = {
    "search": lambda path: swath.search(SEQUENCES[:2], SEQUENCES, DNA, top_k=2,
                                        mode="global", device="cpu", store=path),
    "allpairs": allpairs,
    "pairs": lambda path: swath.align_pairs(SEQUENCES[:3], SEQUENCES[3:], DNA, device="cpu",
                                            store=path),
    "longpair": lambda path: swath.align(SEQUENCES[0] * 8, SEQUENCES[1] * 8, DNA,
                                         device="cpu", store=path, tile_size=32),
    "scores-only": lambda path: swath.score(SEQUENCES[0] * 8, SEQUENCES[1] * 8, DNA,
                                            device="cpu", store=path, tile_size=32),
    "database": lambda path: swath.makedb(_fasta(path), path, DNA),
}


# the arrays of names each layout's store opens with as coordinates (a pairs store keeps
# its names in its inputs' pieces, each taken in by a task of its own: no whole array)
NAME_COORDINATES = {"search": ("query", "target_name"),
                    "allpairs": ("name",),
                    "database": ("names",)}


def _fasta(store: str) -> str:
    path = f"{store}.fasta"
    with open(path, "w") as out:
        out.writelines(f">s{i}\n{seq}\n" for i, seq in enumerate(SEQUENCES))
    return path


@pytest.mark.parametrize("kind", list(FINISHED_STORES))
def test_every_finished_store_opens_in_xarray_without_a_warning(kind, tmp_path):
    """A finished store carries consolidated metadata (xarray's first try: no warning);
    a repair drops it until the store is finished again, so it never reads stale."""
    import warnings

    import xarray

    path = str(tmp_path / "store.zarr")
    FINISHED_STORES[kind](path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = xarray.open_zarr(path)
    assert data.data_vars
    assert set(NAME_COORDINATES.get(kind, ())) <= set(data.coords), data.coords
    if kind in ("search", "allpairs", "pairs"):
        workload, _ = lookup(path)
        opened = workload.store().open(path, mode="r+", complete=False)
        opened.repair({"array": [], next(iter(opened.MARKS)): [0]})
        with pytest.raises(swath.StoreIncomplete):
            swath.open(path)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            xarray.open_zarr(path)
        assert any("consolidated" in str(w.message) for w in seen)    # none to read stale
        swath.resume(path, device="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            xarray.open_zarr(path)


def test_the_tables_of_all_pairs_and_pairs_name_and_place_an_alignment_alike(tmp_path):
    """One convention across the results' tables (``swath.PAIRS_COLUMNS`` the model):
    the same alignment, kept by all pairs and given to pairs, is the same row in both
    ``to_pandas()``: its 0-based input indices, names, score, 0-based end-exclusive
    coordinates, counts, identity fraction (pident) and CIGAR."""
    pytest.importorskip("pandas")
    rng = np.random.default_rng(51)
    core = rng.integers(0, 4, 40)
    seqs = []
    for k in range(8):           # local hits inside random flanks of one length (70)
        left = int(rng.integers(0, 20))
        piece = core.copy()
        piece[rng.integers(0, 40, int(rng.integers(0, 3)))] = rng.integers(0, 4)
        flank = rng.integers(0, 4, 30)
        seqs.append((f"s{k}", DNA.alphabet.decode(np.concatenate(
            [flank[:left], piece, flank[left:]]).astype(np.uint8))))
    fasta = write_fasta(tmp_path / "seqs.fasta", seqs)
    kept = swath.allpairs(str(fasta), DNA, mode="local", min_identity=0.9, device="cpu",
                          block=3, store=str(tmp_path / "a.zarr"))
    assert swath.ALLPAIRS_COLUMNS == swath.PAIRS_COLUMNS == TABLE_CONVENTION
    mine = convention_rows(kept.to_pandas(), seqs, seqs)
    assert len(mine) == len(kept) > 10
    assert any(row["query_start"] > 0 and row["target_start"] > 0 for row in mine.values())
    q, t = (np.array(side) for side in zip(*mine, strict=True))
    given = swath.align_pairs(str(fasta), str(fasta), DNA, mode="local", device="cpu",
                              pairs=(q, t))
    theirs = convention_rows(given.to_pandas(), seqs, seqs)
    assert theirs == mine
    # a search of each sequence against the set: its hits' rows, where all pairs kept the
    # pair, are the same rows
    found = swath.search(str(fasta), str(fasta), DNA, top_k=8, device="cpu",
                         max_evalue=math.inf)
    hits = convention_rows(found.to_pandas(), seqs, seqs)
    shared = [pair for pair in mine if pair in hits]
    assert len(shared) > 10 and all(hits[pair] == mine[pair] for pair in shared)


def test_every_table_is_a_data_frame_named_by_the_exported_columns(tmp_path):
    search = FINISHED_STORES["search"](str(tmp_path / "s.zarr"))
    frame, rows = search.to_pandas(), search.to_table()      # rows: BLAST's, 1-based
    assert list(frame.columns) == list(swath.SEARCH_COLUMNS) and len(frame) == len(rows) > 0
    first = frame.iloc[0]
    assert (first["query_name"], first["target_name"], first["query_start"] + 1,
            first["target_end"], first["score"], first["cigar"]) == (
        rows[0][0], rows[0][1], rows[0][6], rows[0][9], rows[0][12], rows[0][13])
    kept = allpairs(str(tmp_path / "a.zarr"))
    frame, rows = kept.to_pandas(), kept.to_table()
    assert list(frame.columns) == list(swath.ALLPAIRS_COLUMNS) and len(frame) == len(rows) > 0
    assert tuple(frame.iloc[0]) == rows[0]
    pairs = FINISHED_STORES["pairs"](str(tmp_path / "p.zarr"))
    frame = pairs.to_pandas()
    assert list(frame.columns) == list(swath.PAIRS_COLUMNS) and len(frame) == len(pairs) == 3
    assert frame["cigar"].tolist() == pairs.cigar.tolist()
