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
