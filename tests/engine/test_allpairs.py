"""All pairs on Dask: exact scores, exactly the pairs that pass, clusters, resumption."""

from __future__ import annotations

import collections
import dataclasses
import itertools
import threading
import time
import zlib
from typing import ClassVar

import numpy as np
import pytest

import swath
from swath.engine import allpairs as engine
from swath.engine.allpairs import boxes, union
from swath.identity import identity
from swath.storage.allpairs import NO_SCORE, AllPairsStore
from tests.helpers import DNA, PROTEIN, lose_worker_at, packed, parasail_score

MODES = ("global", "semiglobal", "local")


def family_set(seed, scoring, count, longest, families=3):
    """``count`` sequences of lengths 1 to ``longest``: mutated copies of a few ancestors
    (pairs near any threshold) and unrelated ones."""
    rng = np.random.default_rng(seed)
    letters = scoring.alphabet.letters[:20] if len(scoring.alphabet.letters) > 5 else "ACGT"
    ancestors = ["".join(rng.choice(list(letters), int(rng.integers(1, longest + 1))))
                 for _ in range(families)]
    seqs = []
    for _ in range(count):
        if rng.random() < 0.25:
            seqs.append("".join(rng.choice(list(letters), int(rng.integers(1, longest + 1)))))
            continue
        s = list(ancestors[int(rng.integers(families))])
        for _ in range(int(rng.integers(0, 1 + len(s) // 15))):
            at = int(rng.integers(0, len(s) + 1))
            kind = rng.integers(3)
            if kind == 0 and at < len(s):
                s[at] = str(rng.choice(list(letters)))
            elif kind == 1:
                s.insert(at, str(rng.choice(list(letters))))
            elif len(s) > 1:
                del s[min(at, len(s) - 1)]
        seqs.append("".join(s))
    return seqs


def transposed(aln):
    """The alignment read the other way round: query and target swapped."""
    return dataclasses.replace(aln, query_start=aln.target_start, query_end=aln.target_end,
                               target_start=aln.query_start, target_end=aln.query_end,
                               cigar=aln.cigar.translate(str.maketrans("ID", "DI")))


def brute_force(seqs, scoring, mode, min_identity, iddef):
    """Every unordered pair (a, b), a < b, aligned by swath.align with the earlier record
    ``a`` the query: with a symmetric scoring the shorter one aligned first (of two as long
    the first) and the alignment transposed, as the tiles do; {(a, b): alignment} of
    those whose identity reaches the threshold."""
    symmetric = mode != "semiglobal" and np.array_equal(scoring.matrix, scoring.matrix.T)
    kept = {}
    for a, b in itertools.combinations(range(len(seqs)), 2):
        turn = symmetric and len(seqs[b]) < len(seqs[a])
        q, t = (b, a) if turn else (a, b)
        aln = swath.align(seqs[q], seqs[t], scoring=scoring, mode=mode, device="cpu")
        if identity(aln, len(seqs[q]), len(seqs[t]), iddef) >= min_identity:
            kept[a, b] = transposed(aln) if turn else aln
    return kept


def run(seqs, tmp_path, name="a.zarr", **options):
    """``swath.allpairs`` on the CPU; blocks of 10 sequences: a few tiles on and off the
    diagonal (each tile costs its store's writes: a test of many tiles asks for them)."""
    options = {"scoring": DNA, "device": "cpu", "block": 10} | options
    return swath.allpairs(seqs, store=str(tmp_path / name), **options)


def alignment_of(row, mode):
    """A row of the table (by column name) as an :class:`swath.Alignment`."""
    return swath.Alignment(row["score"], row["query_start"], row["query_end"],
                           row["target_start"], row["target_end"], row["cigar"], mode)


@pytest.mark.parametrize("mask", ["diagonal", "full", "scattered"])
def test_pair_counts_count_the_pairs_of_each_pair_of_lengths(mask):
    rng = np.random.default_rng(len(mask))
    rows = np.sort(rng.integers(1, 6, 40))
    cols = rows if mask == "diagonal" else np.sort(rng.integers(1, 6, 30))
    lengths = engine.Lengths(*(np.concatenate([[0], np.cumsum(x)]) for x in (rows, cols)))
    pairs = {"diagonal": np.triu(np.ones((40, 40), bool), 1), "full": np.ones((40, 30), bool),
             "scattered": rng.random((40, 30)) < 0.3}[mask]
    m, n = lengths.distinct
    want = np.array([[np.sum(pairs & (rows[:, None] == a) & (cols[None, :] == b)) for b in n[0]]
                     for a in m[:, 0]])
    np.testing.assert_array_equal(lengths.pair_counts(pairs), want)


def test_boxes_cover_the_needed_pairs_and_about_half_a_triangle():
    rng = np.random.default_rng(0)
    for need in [np.triu(np.ones((300, 300), bool), 1), rng.random((90, 70)) < 0.05,
                 np.zeros((5, 5), bool), np.tril(np.ones((200, 150), bool))]:
        covered = np.zeros(need.shape, int)
        for top, bottom, left, right in boxes(need):
            covered[top:bottom, left:right] += 1
        assert covered.max() <= 1 and np.all(covered[need] == 1)
    triangle = boxes(np.triu(np.ones((1024, 1024), bool), 1))
    assert sum((b - t) * (r - left) for t, b, left, r in triangle) < 0.56 * 1024 ** 2


def test_trace_batches_take_every_pair_once_in_order_within_the_budget():
    rng = np.random.default_rng(2)
    for budget in (1, 40, 700, 10 ** 9):
        lengths = rng.integers(2, 300, int(rng.integers(0, 200)))
        batches = engine.trace_batches(lengths, budget)
        assert np.array_equal(np.concatenate([np.arange(len(lengths))[b] for b in batches]
                                             + [np.empty(0, int)]), np.arange(len(lengths)))
        for b in batches:
            weight = int((lengths[b] + engine.PAIR_RESIDUES).sum())
            assert weight <= budget or b.stop - b.start == 1
    assert engine.trace_batches(np.array([5, 5, 5]), 10 ** 9) == [slice(0, 3)]
    assert engine.trace_batches(np.array([5, 5, 5]), 1) == [slice(0, 1), slice(1, 2),
                                                            slice(2, 3)]


def traced_set(seqs, scoring, mode, device, budget=None):
    """``engine.trace`` of every pair of ``seqs`` (iddef 2: no score bound, every pair
    traced) in batches of ``budget`` residues."""
    res, off = packed([scoring.alphabet.encode(s) for s in seqs])
    rows, cols = np.nonzero(np.triu(np.ones((len(seqs), len(seqs)), bool), 1))
    job = engine.AllPairsJob("unused", scoring, mode, device, 0.5, 2, False, "unused")
    lower = np.full(len(rows), np.iinfo(np.int32).min)
    return engine.trace(job, (res, off), (res, off), rows, cols, lower, False, budget=budget)


def same_fields(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_traceback_in_small_batches_keeps_the_same_pairs_and_cigars(mode, scoring):
    """Batches of one pair, of a few, and one batch: the same kept pairs and alignments."""
    seqs = family_set(zlib.crc32(f"batches {mode} {scoring.name}".encode()) % 1000, scoring,
                      20, 80)
    whole = traced_set(seqs, scoring, mode, "cpu", budget=10 ** 12)
    assert len(whole["query"]) > 10
    for budget in (1, 1000):
        assert same_fields(traced_set(seqs, scoring, mode, "cpu", budget), whole)


def test_a_job_traced_in_small_batches_gives_the_same_store(tmp_path, monkeypatch):
    seqs = family_set(8, DNA, 24, 80)
    options = {"iddef": 2, "min_identity": 0.8, "block": 16}
    whole = run(seqs, tmp_path, "whole.zarr", **options)
    monkeypatch.setattr("swath.kernels.cpu.trace_residues", 300)
    batched = run(seqs, tmp_path, "batched.zarr", **options)
    assert len(whole) > 0 and batched.to_table() == whole.to_table()
    assert batched.filtered == whole.filtered


@pytest.mark.parametrize(("options", "surplus", "first_phase", "rules_out"), [
    ({"iddef": 2}, True, False, True), ({"iddef": 2}, False, False, False),
    ({"mode": "local"}, True, False, False), ({"iddef": 2, "scores": True}, False, True, False),
    ({"iddef": "pident"}, True, True, True)])
def test_the_first_phase_runs_only_where_a_score_can_rule_a_pair_out(
        options, surplus, first_phase, rules_out, tmp_path, monkeypatch):
    """Local mode bounds no score, nor --iddef 2: its pairs go to the surplus filter on the
    CPU, and straight to the traceback on a backend without it (the GPU's)
    (``test_kept_pairs_are_exactly_those_that_reach_the_threshold`` checks what is kept)."""
    called = []
    real = engine.first_phase
    monkeypatch.setattr(engine, "first_phase", lambda *a: called.append(1) or real(*a))
    if not surplus:
        monkeypatch.setattr("swath.kernels.cpu.surplus", None)
    res = run(family_set(6, DNA, 12, 60), tmp_path, min_identity=0.8, **options)
    assert bool(called) == first_phase
    assert (res.filtered["score_filtered"] > 0) == rules_out


def test_union_find_gives_connected_components():
    pytest.importorskip("scipy")
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(1)
    for n, edges in [(50, 30), (200, 180), (7, 0), (1000, 2000)]:
        i, j = rng.integers(0, n, edges), rng.integers(0, n, edges)
        parent = np.arange(n)
        union(parent, i, j)
        roots = engine._roots(parent)
        _, labels = connected_components(coo_matrix((np.ones(edges), (i, j)), (n, n)),
                                         directed=False)
        assert _same_partition(roots, labels)


def _same_partition(a, b):
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
def test_every_score_equals_parasail(mode, scoring, tmp_path):
    seqs = family_set(zlib.crc32(f"{mode} {scoring.name}".encode()) % 1000, scoring, 24, 300)
    res = run(seqs, tmp_path, scoring=scoring, mode=mode, scores=True, block=5)
    got = res.scores()
    for a, b in itertools.permutations(range(len(seqs)), 2):
        query, target = (scoring.alphabet.encode(s) for s in (seqs[a], seqs[b]))
        assert got[a, b] == parasail_score(query, target, scoring, mode), (a, b)
    assert np.all(np.diag(got) == NO_SCORE)


@pytest.mark.parametrize(("mode", "min_identity", "iddef"), [
    ("global", 0.9, "pident"), ("global", 0.75, 2), ("semiglobal", 0.85, "pident"),
    ("local", 0.9, "pident"), ("global", 0.8, 0), ("global", 0.8, 1), ("global", 0.8, 3),
    ("global", 0.8, 4), ("semiglobal", 0.7, 2)])
@pytest.mark.parametrize("first_phase", ["full", "banded"])
def test_kept_pairs_are_exactly_those_that_reach_the_threshold(mode, min_identity, iddef,
                                                               first_phase, tmp_path,
                                                               monkeypatch):
    """With the full first phase, and with the banded one wherever a band exists."""
    monkeypatch.setattr("swath.kernels.cpu.band_worth", 0.0 if first_phase == "full" else 1.0)
    seqs = family_set(7, DNA, 30, 120)
    res = run(seqs, tmp_path, mode=mode, min_identity=min_identity, iddef=iddef)
    want = brute_force(seqs, DNA, mode, min_identity, iddef)
    table = [dict(zip(swath.ALLPAIRS_COLUMNS, row, strict=True)) for row in res.to_table()]
    assert {(row["query_index"], row["target_index"]) for row in table} == set(want)
    for row in table:
        q, t = row["query_index"], row["target_index"]
        aln = want[q, t]
        assert alignment_of(row, aln.mode) == aln
        assert row["identity"] == identity(aln, len(seqs[q]), len(seqs[t]), iddef)
    counts = res.filtered
    assert counts["pairs"] == len(seqs) * (len(seqs) - 1) // 2
    assert counts["length_filtered"] + counts["score_filtered"] + counts["traced"] == \
        counts["pairs"]
    assert counts["kept"] == len(res) == len(want)


@pytest.mark.parametrize("min_identity", [0.75, 0.9, 0.97])
@pytest.mark.parametrize("scoring", [DNA, swath.Scoring.vsearch()], ids=["dna", "vsearch"])
def test_the_surplus_filter_rules_pairs_out_and_keeps_exactly_those_that_pass(
        scoring, min_identity, tmp_path, monkeypatch):
    """--iddef 2 has no score bound: the identity surplus rules out pairs on the CPU, and
    the kept pairs are those of tracing every pair (the brute force) and of the run
    without the filter (as the GPU runs)."""
    seqs = family_set(int(min_identity * 100), scoring, 40, 90)
    res = run(seqs, tmp_path, scoring=scoring, min_identity=min_identity, iddef=2, block=16)
    want = brute_force(seqs, scoring, "global", min_identity, 2)
    table = res.to_table()
    assert {(row[0], row[1]) for row in table} == set(want) and len(want) > 5
    counts = res.filtered
    assert counts["score_filtered"] > 0 and counts["length_filtered"] == 0
    monkeypatch.setattr("swath.kernels.cpu.surplus", None)
    every = run(seqs, tmp_path, "every.zarr", scoring=scoring, min_identity=min_identity,
                iddef=2, block=16)
    assert every.filtered["score_filtered"] == 0 and every.to_table() == table


@pytest.mark.parametrize("scores", [False, True])
def test_an_asymmetric_matrix_aligns_each_pair_with_its_earlier_record_the_query(scores,
                                                                              tmp_path):
    """No transposing where score(a, b) != score(b, a): each pair is aligned the right way
    round, in a tile whose rows are the later records too."""
    matrix = np.array(DNA.matrix)
    matrix[0, 2], matrix[2, 0] = 1, -4          # A against G scores 1, G against A -4
    scoring = swath.Scoring("asymmetric", DNA.alphabet, matrix, DNA.gap_open, DNA.gap_extend)
    seqs = family_set(13, DNA, 14, 50)
    res = run(seqs, tmp_path, scoring=scoring, min_identity=0.8, scores=scores)
    want = brute_force(seqs, scoring, "global", 0.8, "pident")
    table = [dict(zip(swath.ALLPAIRS_COLUMNS, row, strict=True)) for row in res.to_table()]
    pairs = [(row["query_index"], row["target_index"]) for row in table]
    assert len(table) > 3 and set(pairs) == set(want)
    assert any(len(seqs[q]) > len(seqs[t]) for q, t in pairs)          # the longer first
    for row, pair in zip(table, pairs, strict=True):
        assert alignment_of(row, "global") == want[pair]
    if scores:
        full = swath.scores(seqs, seqs, scoring=scoring, mode="global", device="cpu")
        off = ~np.eye(len(seqs), dtype=bool)
        assert np.array_equal(res.scores()[off], full[off]) and not np.array_equal(full, full.T)


def test_scores_match_swath_scores_and_open_as_a_labelled_matrix(tmp_path):
    xarray = pytest.importorskip("xarray")
    seqs = family_set(3, DNA, 17, 80)
    res = run(seqs, tmp_path, mode="semiglobal", scores=True)
    want = swath.scores(seqs, seqs, scoring=DNA, mode="semiglobal", device="cpu")
    off = ~np.eye(len(seqs), dtype=bool)
    assert np.array_equal(res.scores()[off], want[off])
    matrix = xarray.open_zarr(str(tmp_path / "a.zarr"))["score_matrix"]
    assert matrix.dims == ("query_sequence", "target_sequence")
    assert np.array_equal(matrix.values[off], want[off])
    for a, b in ((3, 9), (9, 3)):
        assert int(matrix.sel(query_sequence=f"sequences[{a}]",
                              target_sequence=f"sequences[{b}]")) == want[a, b]


def test_clusters_are_the_connected_components_of_the_kept_pairs(tmp_path):
    pytest.importorskip("scipy")
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    seqs = family_set(11, DNA, 35, 60, families=5)
    res = run(seqs, tmp_path, min_identity=0.85, clusters=True)
    edges = np.array([row[:2] for row in res.to_table()]).reshape(-1, 2)
    _, labels = connected_components(coo_matrix(
        (np.ones(len(edges)), (edges[:, 0], edges[:, 1])), (len(seqs), len(seqs))),
        directed=False)
    clusters = res.clusters()
    assert _same_partition(clusters, labels)
    _, first = np.unique(clusters, return_index=True)
    assert clusters[np.sort(first)].tolist() == list(range(len(first)))


def test_a_killed_job_resumed_gives_the_same_store(tmp_path, monkeypatch):
    seqs = family_set(5, DNA, 26, 70)
    options = {"scores": True, "clusters": True, "min_identity": 0.8}
    reference = run(seqs, tmp_path, "ref.zarr", **options)
    real = lose_worker_at(monkeypatch, engine, "run_tile", 4)
    with pytest.raises(RuntimeError, match="worker lost"):
        run(seqs, tmp_path, **options)
    store = AllPairsStore.open(str(tmp_path / "a.zarr"), complete=False)
    left = np.flatnonzero(~store.done()).tolist()
    assert 4 in left and len(left) < store.tiles
    with pytest.raises(swath.StoreIncomplete):
        swath.AllPairsResult(str(tmp_path / "a.zarr"))
    ran = []
    monkeypatch.setattr(engine, "run_tile", lambda job, t: ran.append(t) or real(job, t))
    job = engine.reopen_allpairs(str(tmp_path / "a.zarr"), device="cpu")
    from swath.engine.cluster import InProcess

    engine.run_allpairs(job, InProcess(1, "CPU"))
    assert sorted(ran) == left
    resumed = swath.AllPairsResult(str(tmp_path / "a.zarr"))
    assert resumed.to_table() == reference.to_table()
    assert np.array_equal(resumed.scores(), reference.scores())
    assert np.array_equal(resumed.clusters(), reference.clusters())
    assert resumed.filtered == reference.filtered
    again = run(seqs, tmp_path, **options)       # the same call on a finished store
    assert again.to_table() == reference.to_table() and sorted(ran) == left


def test_a_finished_store_run_again_is_not_gathered_again(tmp_path, monkeypatch):
    seqs = family_set(6, DNA, 8, 40)
    first = run(seqs, tmp_path, min_identity=0.7, clusters=True)

    def refuse(store):
        raise AssertionError("gathered again")

    monkeypatch.setattr(AllPairsStore, "finalize", refuse)
    assert run(seqs, tmp_path, min_identity=0.7, clusters=True).to_table() == first.to_table()


def test_a_store_of_another_job_is_refused(tmp_path):
    seqs = family_set(2, DNA, 6, 30)
    run(seqs, tmp_path)
    with pytest.raises(swath.InvalidParameter, match="holds another allpairs"):
        run(seqs, tmp_path, min_identity=0.5)
    with pytest.raises(swath.InvalidParameter, match="holds another allpairs"):
        run(seqs[:-1], tmp_path)


def test_progress_counts_tiles_and_pairs(tmp_path):
    calls = []
    run(family_set(4, DNA, 10, 40), tmp_path, block=4, progress=lambda *a: calls.append(a))
    assert calls[0] == ("allpairs", 0, 6, 0) and calls[-1] == ("allpairs", 6, 6, 45)
    assert len(calls) == 7


def test_one_and_two_sequences(tmp_path):
    one = run(["ACGT"], tmp_path, "one.zarr", scores=True, clusters=True)
    assert (one.to_table(), one.filtered["pairs"]) == ([], 0)
    assert one.scores().tolist() == [[NO_SCORE]] and one.clusters().tolist() == [0]
    two = run(["ACGTACGTAA", "ACGTACGTA"], tmp_path, "two.zarr", scores=True, clusters=True,
              min_identity=0.9)
    (row,) = two.to_table()
    aln = swath.align("ACGTACGTA", "ACGTACGTAA", scoring=DNA, mode="global", device="cpu")
    assert aln.cigar == "8=1D1="
    assert row[:4] == (0, 1, "sequences[0]", "sequences[1]")     # the earlier one the query
    fields = dict(zip(swath.ALLPAIRS_COLUMNS, row, strict=True))
    assert alignment_of(fields, "global") == swath.Alignment(aln.score, 0, 10, 0, 9, "8=1I1=",
                                                             "global")
    assert fields["identity"] == 0.9 and (fields["matches"], fields["length"]) == (9, 10)
    assert two.clusters().tolist() == [0, 0]
    assert two.scores()[0, 1] == two.scores()[1, 0] == aln.score


def fasta_text(names, seqs, newline="\n", fastq=False):
    """Records as FASTA (or FASTQ) text, the last without a newline."""
    if fastq:
        lines = [line for name, s in zip(names, seqs, strict=True)
                 for line in (f"@{name}", s, "+", "I" * len(s))]
    else:
        lines = [line for name, s in zip(names, seqs, strict=True)
                 for line in (f">{name} a description", s[:20], s[20:])]
    return newline.join(lines)


@pytest.mark.parametrize("form", ["fasta", "crlf", "gzip fastq"])
def test_a_file_taken_in_piece_by_piece_gives_the_job_of_its_records_in_memory(
        form, tmp_path, monkeypatch):
    """Pieces of about 97 bytes (records straddle most cuts; a gzip file cut as it is
    read): the same store as the records handed over in memory, whatever the piece."""
    import gzip

    from swath.engine import intake
    from swath.sequences import sequence_set

    monkeypatch.setattr(intake, "PIECE_BYTES", 97)
    seqs = family_set(8, DNA, 30, 60)
    names = [f"r{i}" for i in range(len(seqs))]
    text = fasta_text(names, seqs, "\r\n" if form == "crlf" else "\n", "fastq" in form)
    path = tmp_path / ("s.fq.gz" if "gzip" in form else "s.fa")
    path.write_bytes(gzip.compress(text.encode()) if "gzip" in form else text.encode())
    options = {"min_identity": 0.8, "scores": True, "clusters": True}
    held = run(sequence_set(seqs, DNA.alphabet, names=names), tmp_path, "held.zarr", **options)
    taken = run(str(path), tmp_path, "taken.zarr", **options)
    store = AllPairsStore.open(str(tmp_path / "taken.zarr"))
    assert store.pieces("sequence") > 5
    assert taken.to_table() == held.to_table() and len(held.to_table()) > 10
    assert np.array_equal(taken.scores(), held.scores())
    assert np.array_equal(taken.clusters(), held.clusters())
    assert store.sequence_names().tolist() == names
    assert store.input_sequences()[7].tolist() == DNA.alphabet.encode(seqs[7]).tolist()


def test_names_given_twice_in_different_pieces_are_refused_or_renamed(tmp_path, monkeypatch):
    """A name given twice is found across pieces (by hashes of the names, the names
    themselves read only where hashes meet): refused, naming both records, and no store
    is left; or renamed as ``unique_names`` renames them."""
    from swath.engine import intake
    from swath.sequences import unique_names

    monkeypatch.setattr(intake, "PIECE_BYTES", 64)
    seqs = family_set(9, DNA, 12, 40)
    names = ["a", "b", "a_2", "c", "a", "b", "d", "a", "e", "f", "g", "h"]
    path = tmp_path / "s.fa"
    path.write_text(fasta_text(names, seqs))
    with pytest.raises(swath.InvalidInput, match=r"s.fa: sequence name 'a' is given twice "
                                                 r"\(records 1 and 5\)"):
        run(str(path), tmp_path, "refused.zarr")
    assert not (tmp_path / "refused.zarr").exists()
    renamed = run(str(path), tmp_path, "renamed.zarr", rename_duplicates=True)
    want = list(unique_names(names, None, rename=True))
    assert want[4] == "a_3" and want[7] == "a_4" and want[5] == "b_2"
    assert renamed.store.sequence_names().tolist() == want


@pytest.mark.parametrize(("sequences", "options", "message"), [
    ([], {}, "sequences is empty"),
    (["ACGT"], {"min_identity": 0}, "min_identity must be a number in"),
    (["ACGT"], {"min_identity": 1.5}, "min_identity must be a number in"),
    (["ACGT"], {"min_identity": True}, "min_identity must be a number in"),
    (["ACGT"], {"iddef": 5}, "iddef must be"),
    (["ACGT"], {"iddef": "blast"}, "iddef must be"),
    (["ACGT"], {"mode": "glocal"}, "mode must be one of"),
    (["ACGT"], {"block": 0}, "block must be a positive integer"),
    (["ACGT"], {"device": "tpu"}, "device must be one of"),
])
def test_bad_input_is_refused(sequences, options, message, tmp_path):
    with pytest.raises(swath.InvalidParameter, match=message):
        run(sequences, tmp_path, **options)


def test_on_a_distributed_client(client, tmp_path):
    seqs = family_set(9, DNA, 20, 90)
    on_cluster = run(seqs, tmp_path, "c.zarr", client=client, scores=True, clusters=True)
    here = run(seqs, tmp_path, "h.zarr", scores=True, clusters=True)
    assert on_cluster.to_table() == here.to_table()
    assert np.array_equal(on_cluster.scores(), here.scores())


class Held:
    """Tiles held on the worker named 1 of an in-process cluster until ``let_go`` is set,
    and those that went on after (tasks are pickled: the state lives here, not in a
    closure)."""

    let_go = threading.Event()
    late: ClassVar[list[int]] = []          # held tiles, as they go on
    written: ClassVar[collections.Counter[int]] = collections.Counter()
    run_tile, write_tile = engine.run_tile, AllPairsStore.write_tile

    @staticmethod
    def slowed(job, t):
        from distributed import get_worker

        if get_worker().name != 1:
            return Held.run_tile(job, t)
        Held.let_go.wait(120)
        result = Held.run_tile(job, t)
        Held.late.append(t)
        return result

    @staticmethod
    def counted(store, t, *args):
        Held.written[t] += 1
        return Held.write_tile(store, t, *args)


def test_a_slow_workers_tiles_are_copied_to_an_idle_faster_one(tmp_path, monkeypatch):
    """A mixed cluster is never slower than its fastest worker: a worker held on each tile
    until the job is over (a slow worker at the extreme) takes a tile or two, the fast
    one the rest, then copies of the held ones (``engine.stragglers``), so the job ends
    without them. Each tile is written once (the held copy, let go after the job, finds
    its tile done) and the store is the one computed in this process."""
    from distributed import Client, LocalCluster

    monkeypatch.setattr(engine, "run_tile", Held.slowed)
    monkeypatch.setattr(AllPairsStore, "write_tile", Held.counted)
    seqs = family_set(9, DNA, 40, 60)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        mixed = run(seqs, tmp_path, "m.zarr", client=c, block=4)
        assert Held.late == []                # the job did not wait for the held worker
        Held.let_go.set()
        deadline = time.monotonic() + 60
        while not Held.late and time.monotonic() < deadline:
            time.sleep(0.05)
    assert Held.late and sorted(Held.written) == list(range(55))
    assert set(Held.written.values()) == {1}
    monkeypatch.undo()
    assert not any(AllPairsStore.open(str(tmp_path / "m.zarr")).damaged().values())
    # other blocks, another order of the same pairs
    assert sorted(mixed.to_table()) == sorted(run(seqs, tmp_path, "h.zarr").to_table())


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
def test_gpu_equals_cpu(mode, tmp_path):
    """The GPU's score phase and traceback give the CPU's store: the same kept pairs (their
    alignments too), the same score matrix and clusters."""
    seqs = family_set(11, DNA, 40, 300)
    options = {"mode": mode, "min_identity": 0.8, "scores": True, "clusters": True,
               "block": 16}
    cpu = run(seqs, tmp_path, "cpu.zarr", **options)
    gpu = run(seqs, tmp_path, "gpu.zarr", device="gpu", **options)
    assert len(cpu) > 0
    assert gpu.to_table() == cpu.to_table()
    assert np.array_equal(gpu.scores(), cpu.scores())
    assert np.array_equal(gpu.clusters(), cpu.clusters())
    assert gpu.filtered == cpu.filtered


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
def test_gpu_traceback_in_small_batches_equals_the_cpu(mode):
    """The GPU's traceback of a tile's pairs in batches of a few pairs keeps the CPU's
    pairs and alignments (taken in one batch)."""
    seqs = family_set(13, DNA, 40, 300)
    cpu = traced_set(seqs, DNA, mode, "cpu", budget=10 ** 12)
    assert len(cpu["query"]) > 10
    for budget in (2_000, 10 ** 12):
        assert same_fields(traced_set(seqs, DNA, mode, "gpu", budget), cpu)


def test_unsplit_boxes_are_the_bounding_box():
    """The GPU scores a tile's needed pairs in their bounding box, not in rectangles."""
    need = np.triu(np.ones((300, 300), bool), 1)
    assert boxes(need, split=False) == [(0, 299, 1, 300)]
    assert len(boxes(need)) > 1
    assert boxes(np.zeros((5, 5), bool), split=False) == []


def test_gathers_side_by_side_fit_a_quarter_of_the_free_memory(monkeypatch):
    """A thread a core, as many gathers as a quarter of the available memory holds."""
    import collections

    import psutil

    import swath.engine.allpairs as engine

    memory = collections.namedtuple("memory", "available")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "16")
    for available, threads in ((128 << 30, 16), (16 << 30, 5), (1 << 30, 1)):
        monkeypatch.setattr(psutil, "virtual_memory", lambda a=available: memory(a))
        assert engine.gather_threads() == threads
