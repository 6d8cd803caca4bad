"""Scoring: named matrices, DNA, matrix files, gap convention, validation."""

from __future__ import annotations

import pickle

import pytest

import swath
from swath import InputNotFound, InvalidParameter, Scoring
from swath.scoring import PROTEIN_MATRICES


@pytest.mark.parametrize("name", PROTEIN_MATRICES)
def test_named_protein_matrices_come_from_biopython(name):
    from Bio.Align import substitution_matrices

    sc = Scoring.protein(name, gap_open=10, gap_extend=1)
    reference = substitution_matrices.load(name)
    assert sc.alphabet.letters == "".join(reference.alphabet)
    assert sc.score("W", "C") == int(reference["W", "C"])
    assert sc.alphabet.wildcard == "X"


def test_blosum62_values_and_gap_convention():
    sc = Scoring.protein("blosum62", gap_open=11, gap_extend=1)
    assert (sc.score("W", "W"), sc.score("A", "R"), sc.score("a", "a")) == (11, -1, 4)
    assert [sc.gap_cost(k) for k in (0, 1, 2, 10)] == [0, 12, 13, 21]


def test_dna_scoring_has_n_as_wildcard_scoring_mismatch():
    sc = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    assert sc.alphabet.letters == "ACGTN"
    assert (sc.score("A", "A"), sc.score("A", "C"), sc.score("N", "N"), sc.score("N", "A")) == (
        2, -3, -3, -3)


def test_matrix_from_ncbi_file(tmp_path):
    path = tmp_path / "tiny.mat"
    path.write_text("# a tiny matrix\n   A  C  X\nA  3 -1 -2\nC -1  5 -2\nX -2 -2 -1\n")
    sc = Scoring.from_file(path, gap_open=4, gap_extend=1)
    assert sc.alphabet.letters == "ACX"
    assert sc.alphabet.wildcard == "X"
    assert (sc.score("C", "C"), sc.score("a", "c")) == (5, -1)


def test_matrix_file_errors(tmp_path):
    with pytest.raises(InputNotFound, match=r"missing\.mat"):
        Scoring.from_file(tmp_path / "missing.mat")
    bad = tmp_path / "bad.mat"
    bad.write_text("this is not a matrix\n")
    with pytest.raises(InvalidParameter, match=r"bad\.mat"):
        Scoring.from_file(bad)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gap_open": -1}, "gap_open must be >= 0"),
        ({"gap_extend": -2}, "gap_extend must be >= 0"),
        ({"gap_open": 0, "gap_extend": 0}, "gaps would be free"),
        ({"gap_open": 1.5}, "gap_open must be an integer"),
        ({"matrix": "BLOSUM63"}, "unknown matrix 'BLOSUM63'"),
    ],
)
def test_invalid_protein_parameters_name_the_argument(kwargs, message):
    with pytest.raises(InvalidParameter, match=message):
        Scoring.protein(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"match": 0}, "match must be > 0"), ({"mismatch": 3}, "mismatch must be < match"),
     ({"match": "2"}, "match must be an integer")],
)
def test_invalid_dna_parameters_name_the_argument(kwargs, message):
    with pytest.raises(InvalidParameter, match=message):
        Scoring.dna(**kwargs)


def test_scoring_pickles_compares_and_prints():
    sc = Scoring.protein("PAM30", gap_open=9, gap_extend=1)
    assert pickle.loads(pickle.dumps(sc)) == sc
    assert hash(pickle.loads(pickle.dumps(sc))) == hash(sc)
    assert sc != Scoring.protein("PAM30", gap_open=10, gap_extend=1)
    assert "PAM30" in repr(sc) and "gap_open=9" in repr(sc)
    assert isinstance(InvalidParameter("x"), (swath.SwathError, ValueError))


def test_vsearch_defaults_in_swaths_convention():
    """vsearch charges 20 + 2 (k - 1) inside and 2 + (k - 1) at the ends, match 2,
    mismatch -4, N 0 against anything (found with vsearch 2.22.1's raw scores)."""
    sc = Scoring.vsearch()
    assert (sc.gap_open, sc.gap_extend, sc.end_gaps) == (18, 2, (1, 1))
    assert [sc.gap_cost(k) for k in (1, 2, 3)] == [20, 22, 24]
    assert [sc.gap_cost(k, terminal=True) for k in (1, 2, 3)] == [2, 3, 4]
    assert (sc.score("A", "A"), sc.score("a", "G"), sc.score("N", "N"), sc.score("T", "N")) == (
        2, -4, 0, 0)


def test_end_costs_default_to_the_interior_ones_and_round_trip():
    plain = Scoring.dna(gap_open=5, gap_extend=2)
    assert plain.end_gaps is None and plain.gap_cost(2, terminal=True) == plain.gap_cost(2)
    assert "end_gap_open" not in plain.to_dict()     # stores record a plain scheme as before
    ends = plain.with_end_gaps(0, 1)
    assert ends != plain and hash(ends) != hash(plain)
    for copy in (pickle.loads(pickle.dumps(ends)), Scoring.from_dict(ends.to_dict())):
        assert copy == ends and copy.end_gaps == (0, 1)
    assert Scoring.from_dict(plain.to_dict()) == plain


@pytest.mark.parametrize(("ends", "message"), [
    ((-1, 1), "end_gap_open must be >= 0"), ((0, 0), "end_gap_open and end_gap_extend are both 0"),
    ((1, 0.5), "end_gap_extend must be an integer")])
def test_invalid_end_costs_name_the_argument(ends, message):
    with pytest.raises(InvalidParameter, match=message):
        Scoring.dna().with_end_gaps(*ends)


def test_end_costs_outside_global_mode_or_workloads_without_them_are_refused():
    sc = Scoring.vsearch()
    with pytest.raises(InvalidParameter, match=r"global mode only, not local"):
        swath.align("ACGT", "ACGT", sc, mode="local", device="cpu")
    with pytest.raises(InvalidParameter, match=r"search takes no end gap costs"):
        swath.search(["ACGT"], ["ACGT"], sc, mode="global", device="cpu")
    with pytest.raises(InvalidParameter, match=r"semiglobal"):
        swath.allpairs(["ACGT", "ACGA"], sc, mode="semiglobal", device="cpu")
    assert swath.align("GGACGTACGTAC", "ACGTACGTAC", sc, mode="global", device="cpu").score == 17
    assert swath.scores(["ACGTA"], ["ACGTAC"], sc, mode="global", device="cpu")[0, 0] == 8


@pytest.mark.parametrize("ends", [(9, 3), (0, 1)], ids=["dearer", "cheaper"])
def test_allpairs_with_end_costs_keeps_what_the_reference_keeps(ends):
    """The score filter stays sound with end costs of either size (its bound takes the
    larger costs): the kept pairs are those whose reference alignment (pident) reaches
    the threshold."""
    import numpy as np

    from swath.testing import reference_align
    from tests.helpers import DNA, count_cigar

    sc = DNA.with_end_gaps(*ends)
    rng = np.random.default_rng(sum(ends))
    ancestor = rng.integers(0, 4, 60)
    seqs = []
    for _ in range(10):
        copy = ancestor.copy()
        copy[rng.integers(0, 60, int(rng.integers(0, 6)))] = rng.integers(0, 4)
        seqs.append(copy[int(rng.integers(0, 4)):60 - int(rng.integers(0, 4))])
    seqs += [rng.integers(0, 4, 58) for _ in range(3)]      # for the score filter
    threshold = 0.9
    want = set()
    for a in range(len(seqs)):
        for b in range(a + 1, len(seqs)):
            counts = count_cigar(reference_align(seqs[a], seqs[b], sc, "global").cigar)
            if counts["matches"] / counts["columns"] >= threshold:
                want.add(frozenset((a, b)))
    got = swath.allpairs([sc.alphabet.decode(s) for s in seqs], sc, min_identity=threshold,
                         device="cpu", block=5)
    assert {frozenset(row[:2]) for row in got.to_table()} == want and want


def test_a_copy_with_other_interior_costs_keeps_its_end_costs_or_follows():
    import dataclasses

    assert dataclasses.replace(Scoring.dna(), gap_open=7).end_gaps is None
    assert dataclasses.replace(Scoring.vsearch(), gap_open=7).end_gaps == (1, 1)
