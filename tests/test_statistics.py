"""Karlin-Altschul statistics: BLAST's tables, length adjustment, bit scores, e-values.

Published numbers come from three places. The parameter values are those of NCBI's
``blast_stat.c`` (ncbi/ncbi-cxx-toolkit-public, src/algo/blast/core/blast_stat.c),
typed here independently of the module's tables. The length adjustments, effective
search spaces, bit scores and e-values are those BLAST itself printed in two XML
reports: BLASTP 2.2.26+ (Biopython's Tests/Blast/xml_2226_blastp_001.xml: BLOSUM62,
gaps 11/1, 20 sequences of 6406 residues) and BLASTN 2.2.27+ (2/-3, gaps 5/2, 1331289
sequences of 1634236772 bases, an XML report quoted in the tests of the
``dark.blast`` package of dark-matter). Spouge's e-values are those Debian's BLASTP
2.12.0+ printed (``-comp_based_stats 0 -seg no -outfmt "6 ... evalue bitscore score qlen
slen"``) for three queries against 30 mutated copies of them (5231 residues).
"""

from __future__ import annotations

import dataclasses
import doctest
import math
import pickle

import numpy as np
import pytest

import swath.statistics
from swath import InvalidParameter, Scoring, UnknownStatistics
from swath.statistics import (
    INT2_MAX,
    Gumbel,
    KarlinAltschul,
    bit_score,
    effective_lengths,
    evalue,
    gapped_parameters,
    length_adjustment,
    search_evalue,
    spouge_evalue,
)

BLOSUM62_11_1 = KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30)
DNA_2_3_5_2 = KarlinAltschul(lambda_=0.625, K=0.41, H=0.78, alpha=0.8, beta=-2,
                             round_down=True)


def values(ka: KarlinAltschul) -> tuple[float, ...]:
    return (ka.lambda_, ka.K, ka.H, ka.alpha, ka.beta)


# --- tabulated parameters ------------------------------------------------------------

def test_blosum62_11_1_is_blasts_default_row():
    ka = gapped_parameters(Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1))
    assert values(ka) == (0.267, 0.041, 0.14, 1.9, -30.0)
    assert ka.round_down is False
    assert dataclasses.replace(ka, gumbel=None) == BLOSUM62_11_1
    assert ka.gumbel == Gumbel(a=1.9, alpha=42.6028, sigma=43.6362, a_ungapped=0.7916,
                               alpha_ungapped=4.96466, gap=12)


# BLAST's preferred gap costs for each matrix (BLAST_MATRIX_BEST in blast_stat.c).
@pytest.mark.parametrize(("matrix", "gaps", "expected"), [
    ("BLOSUM45", (14, 2), (0.195, 0.032, 0.10, 1.9, -36)),
    ("BLOSUM50", (13, 2), (0.193, 0.035, 0.12, 1.6, -32)),
    ("BLOSUM62", (11, 1), (0.267, 0.041, 0.14, 1.9, -30)),
    ("BLOSUM80", (10, 1), (0.299, 0.071, 0.27, 1.1, -14)),
    ("BLOSUM90", (10, 1), (0.290, 0.075, 0.28, 1.04, -15)),
    ("PAM30", (9, 1), (0.294, 0.11, 0.61, 0.48, -6)),
    ("PAM70", (10, 1), (0.291, 0.091, 0.41, 0.71, -9)),
    ("PAM250", (14, 2), (0.182, 0.024, 0.073, 2.5, -53)),
    ("BLOSUM62", (9, 1), (0.206, 0.010, 0.052, 4.0, -87)),
    ("BLOSUM80", (25, 2), (0.342, 0.17, 0.66, 0.52, -1.6)),
])
def test_protein_rows_match_blast(matrix, gaps, expected):
    scoring = Scoring.protein(matrix, gap_open=gaps[0], gap_extend=gaps[1])
    assert values(gapped_parameters(scoring)) == pytest.approx(expected, abs=0)


def test_every_protein_row_is_reachable_and_ordered_like_blast():
    tables = swath.statistics._PROTEIN_TABLES
    assert list(tables) == ["BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90",
                            "PAM250", "PAM30", "PAM70"]
    assert {name: len(rows) for name, rows in tables.items()} == {
        "BLOSUM45": 14, "BLOSUM50": 16, "BLOSUM62": 12, "BLOSUM80": 10, "BLOSUM90": 8,
        "PAM250": 16, "PAM30": 7, "PAM70": 7}
    for name, rows in tables.items():
        assert rows[0][:3] == (INT2_MAX, INT2_MAX, INT2_MAX)
        for row in rows[1:]:
            scoring = Scoring.protein(name, gap_open=int(row[0]), gap_extend=int(row[1]))
            assert values(gapped_parameters(scoring)) == tuple(row[3:8])


def test_every_protein_row_carries_its_gumbel_block():
    # Blast_GumbelBlkLoadFromTables: a = alpha, Alpha = alpha_v (10th), Sigma (11th), the
    # ungapped row's alpha and alpha_v, G = open + extend.
    for name, rows in swath.statistics._PROTEIN_TABLES.items():
        assert {len(row) for row in rows} == {11}
        for row in rows[1:]:
            scoring = Scoring.protein(name, gap_open=int(row[0]), gap_extend=int(row[1]))
            assert gapped_parameters(scoring).gumbel == Gumbel(
                row[6], row[9], row[10], rows[0][6], rows[0][9], row[0] + row[1])


def test_gumbel_intercepts_are_blasts():
    # BLOSUM62 11/1: the b, Beta and Tau BLAST derives (2 G (a_un - a), ...).
    g = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1)).gumbel
    assert (g.b, g.beta, g.tau) == pytest.approx((-26.6016, -903.31536, -928.11696),
                                                 rel=1e-12)
    g = gapped_parameters(Scoring.protein("PAM30", 9, 1)).gumbel
    assert (g.b, g.beta, g.tau) == pytest.approx(
        (20 * (0.1938 - 0.48), 20 * (0.161818 - 2.46392), 20 * (0.161818 - 3.18615)))


def test_dna_and_given_parameters_have_no_gumbel_block():
    assert gapped_parameters(Scoring.dna(2, -3, 5, 2)).gumbel is None
    protein = Scoring.protein("BLOSUM62", 11, 1)
    assert gapped_parameters(protein, lambda_=0.3, K=0.1, H=0.4).gumbel is None
    # another length-adjustment line asks for length-adjusted e-values
    assert gapped_parameters(protein, alpha=2.0).gumbel is None


def test_parameters_round_trip_through_the_dict_a_store_records():
    ka = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1))
    assert KarlinAltschul.from_dict(dataclasses.asdict(ka)) == ka
    written_before_gumbel = {k: v for k, v in dataclasses.asdict(ka).items() if k != "gumbel"}
    assert KarlinAltschul.from_dict(written_before_gumbel).gumbel is None
    with pytest.raises(InvalidParameter, match="gumbel must be a Gumbel"):
        KarlinAltschul(**dataclasses.asdict(ka))
    assert pickle.loads(pickle.dumps(ka)) == ka


def test_ungapped_row_answers_blasts_infinite_gap_sentinel():
    scoring = Scoring.protein("BLOSUM62", gap_open=INT2_MAX, gap_extend=INT2_MAX)
    assert values(gapped_parameters(scoring)) == (0.3176, 0.134, 0.4012, 0.7916, -3.2)


def test_protein_name_is_matched_case_insensitively():
    scoring = dataclasses.replace(Scoring.protein("PAM30", 9, 1), name="pam30")
    assert gapped_parameters(scoring).lambda_ == 0.294


@pytest.mark.parametrize(("match", "mismatch", "gaps", "expected", "round_down"), [
    (2, -3, (5, 2), (0.625, 0.41, 0.78, 0.8, -2), True),     # blastn's default
    (2, -3, (0, 4), (0.55, 0.21, 0.46, 1.2, -5), True),
    (1, -2, (3, 1), (1.32, 0.57, 1.0, 1.3, -1), False),      # NCBI's own unit test
    (1, -3, (2, 2), (1.37, 0.70, 1.2, 1.1, 0), False),
    (1, -1, (0, 2), (0.80, 0.064, 0.17, 4.8, -16), False),
    (3, -4, (4, 2), (0.281, 0.046, 0.16, 1.8, -23), True),
    (4, -5, (3, 5), (0.23, 0.065, 0.25, 0.9, -11), False),
    (5, -4, (8, 6), (0.146, 0.039, 0.11, 1.3, -29), False),
])
def test_blastn_rows(match, mismatch, gaps, expected, round_down):
    scoring = Scoring.dna(match=match, mismatch=mismatch, gap_open=gaps[0],
                          gap_extend=gaps[1])
    ka = gapped_parameters(scoring)
    assert values(ka) == pytest.approx(expected, abs=0)
    assert ka.round_down is round_down


def test_blastn_pair_with_common_divisor_uses_the_reduced_table():
    # 2/-4 is 1/-2 doubled: gaps double, lambda and alpha halve (s_AdjustGapParametersByGcd).
    ka = gapped_parameters(Scoring.dna(match=2, mismatch=-4, gap_open=6, gap_extend=2))
    assert values(ka) == pytest.approx((1.32 / 2, 0.57, 1.0, 1.3 / 2, -1))
    ka = gapped_parameters(Scoring.dna(match=4, mismatch=-6, gap_open=10, gap_extend=4))
    assert values(ka) == pytest.approx((0.625 / 2, 0.41, 0.78, 0.8 / 2, -2))
    assert ka.round_down is True


def test_blastn_non_affine_megablast_row_is_never_selected():
    # 2/-3's first row is megablast's (0, 0); swath cannot ask for it, and 0/4 is its own row.
    with pytest.raises(UnknownStatistics, match="tabulates 4/4, 2/4, 0/4, 3/3, 6/2, 5/2"):
        gapped_parameters(Scoring.dna(match=2, mismatch=-3, gap_open=1, gap_extend=1))


def test_dna_matrix_file_is_recognised_by_its_acgt_block(tmp_path):
    path = tmp_path / "dna.mat"
    path.write_text("   A  C  G  T  N\nA  1 -2 -2 -2 -1\nC -2  1 -2 -2 -1\n"
                    "G -2 -2  1 -2 -1\nT -2 -2 -2  1 -1\nN -1 -1 -1 -1 -1\n")
    ka = gapped_parameters(Scoring.from_file(path, gap_open=2, gap_extend=1))
    assert values(ka) == (1.29, 0.49, 0.92, 1.4, -1)


def test_iupac_dna_matrix_is_recognised_by_its_acgt_block():
    # NUC.4.4 scores A/C/G/T 5/-4 and the ambiguity codes in between.
    ka = gapped_parameters(Scoring.protein("NUC.4.4", gap_open=10, gap_extend=6))
    assert values(ka) == (0.163, 0.068, 0.16, 1.0, -19)


# --- unknown combinations ------------------------------------------------------------

def test_unknown_protein_gaps_list_the_known_ones():
    scoring = Scoring.protein("BLOSUM62", gap_open=12, gap_extend=2)
    with pytest.raises(UnknownStatistics, match=(
            r"^no published Karlin-Altschul parameters for BLOSUM62 with gap costs 12/2 "
            r"\(open/extend\); BLAST tabulates BLOSUM62 with 11/2, 10/2, 9/2, 8/2, 7/2, "
            r"6/2, 13/1, 12/1, 11/1, 10/1, 9/1; give --lambda, --k and --h")) as info:
        gapped_parameters(scoring)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_protein_matrix_lists_the_tabulated_ones():
    scoring = Scoring.protein("MCLACHLAN", gap_open=11, gap_extend=1)
    with pytest.raises(UnknownStatistics, match=(
            r"matrix 'MCLACHLAN' \(gap costs 11/1\); BLAST tabulates BLOSUM45, .*PAM70 "
            r"and DNA match/mismatch 1/-5, .*5/-4; give --lambda, --k and --h")):
        gapped_parameters(scoring)


def test_unknown_dna_gaps_list_the_known_ones():
    scoring = Scoring.dna(match=1, mismatch=-2, gap_open=1, gap_extend=0)
    with pytest.raises(UnknownStatistics, match=(
            r"DNA 1/-2 \(match/mismatch\) with gap costs 1/0 \(open/extend\); BLAST "
            r"tabulates 2/2, 1/2, 0/2, 3/1, 2/1, 1/1, and BLAST uses ungapped parameters "
            r"from 2/2 on; give --lambda")):
        gapped_parameters(scoring)


def test_dna_gaps_beyond_the_tables_say_blast_goes_ungapped():
    scoring = Scoring.dna(match=2, mismatch=-3, gap_open=8, gap_extend=5)
    with pytest.raises(UnknownStatistics, match=(
            r"gap costs of at least 6/4 make BLAST use ungapped parameters of the query's "
            r"composition, which swath does not compute; give --lambda, --k and --h")):
        gapped_parameters(scoring)


def test_unknown_dna_pair():
    scoring = Scoring.dna(match=5, mismatch=-3, gap_open=5, gap_extend=2)
    with pytest.raises(UnknownStatistics, match=(
            r"DNA 5/-3 \(match/mismatch\) with gap costs 5/2; BLAST tabulates match/mismatch "
            r"1/-5, 1/-4, 2/-7, .* and their multiples")):
        gapped_parameters(scoring)


# --- user-supplied parameters --------------------------------------------------------

def test_user_parameters_work_for_any_scheme():
    scoring = Scoring.protein("MCLACHLAN", gap_open=11, gap_extend=1)
    ka = gapped_parameters(scoring, lambda_=0.3, K=0.05, H=0.2)
    assert values(ka) == (0.3, 0.05, 0.2, pytest.approx(1.5), 0.0)
    assert ka.round_down is False
    ka = gapped_parameters(scoring, lambda_=0.3, K=0.05, H=0.2, alpha=2.0, beta=-10)
    assert values(ka) == (0.3, 0.05, 0.2, 2.0, -10.0)


def test_user_parameters_override_the_tables():
    scoring = Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
    assert gapped_parameters(scoring, lambda_=0.25, K=0.03, H=0.125).alpha == 2.0
    assert values(gapped_parameters(scoring, beta=0)) == (0.267, 0.041, 0.14, 1.9, 0.0)


def test_partial_user_parameters_are_refused():
    scoring = Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
    with pytest.raises(InvalidParameter, match="or none of them; missing K, H"):
        gapped_parameters(scoring, lambda_=0.3)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("K", 0.0, "K must be > 0, got 0.0"),
    ("lambda_", -1.0, "lambda_ must be > 0"),
    ("H", float("nan"), "H must be finite"),
    ("alpha", -0.5, "alpha must be >= 0"),
    ("beta", "x", "beta must be a number"),
])
def test_invalid_parameters_are_refused(field, value, message):
    kwargs = {"lambda_": 0.3, "K": 0.05, "H": 0.2, "alpha": 1.0, "beta": 0.0, field: value}
    with pytest.raises(InvalidParameter, match=message):
        KarlinAltschul(**kwargs)


def test_parameters_pickle_compare_and_print():
    assert pickle.loads(pickle.dumps(DNA_2_3_5_2)) == DNA_2_3_5_2
    assert dataclasses.replace(DNA_2_3_5_2, round_down=False) != DNA_2_3_5_2
    assert repr(BLOSUM62_11_1) == (
        "KarlinAltschul(lambda_=0.267, K=0.041, H=0.14, alpha=1.9, beta=-30.0, "
        "round_down=False, gumbel=None)")
    assert BLOSUM62_11_1.log_K == math.log(0.041)


# --- bit scores and e-values ---------------------------------------------------------

def test_bit_score_formula():
    expected = (0.267 * 100 - math.log(0.041)) / math.log(2)
    assert bit_score(100, BLOSUM62_11_1) == pytest.approx(expected, rel=1e-15)
    assert isinstance(bit_score(100, BLOSUM62_11_1), float)


def test_bit_scores_match_blastp_report():
    # raw score -> bit score as BLASTP 2.2.26+ printed them (6 significant digits)
    reported = {350: 139.428, 219: 88.9669, 204: 83.1889, 29: 15.779, 522: 205.682,
                101: 43.5134, 72: 32.3426}
    raw = np.array(list(reported))
    assert bit_score(raw, BLOSUM62_11_1) == pytest.approx(list(reported.values()), rel=5e-6)


def test_bit_score_keeps_array_shape_and_does_not_round_down():
    raw = np.array([[32, 33], [40, 41]], dtype=np.int32)
    bits = bit_score(raw, DNA_2_3_5_2)
    assert bits.shape == (2, 2) and bits.dtype == np.float64
    assert bits[0, 1] > bits[0, 0]  # BLAST rounds only the e-value's score down to even
    assert bits[0, 0] == pytest.approx(30.1402, rel=5e-6)  # BLASTN 2.2.27+


def test_evalue_formula():
    m, n, s = 250, 1_000_000, 60
    expected = 0.041 * m * n * math.exp(-0.267 * s)
    assert evalue(s, m, n, BLOSUM62_11_1) == pytest.approx(expected, rel=1e-13)
    assert isinstance(evalue(s, m, n, BLOSUM62_11_1), float)


def test_evalue_matches_blastn_report_and_rounds_odd_scores_down():
    # BLASTN 2.2.27+: score 32 against effective search space 3 x 1610273570 -> 4.0824
    assert evalue(32, 3, 1_610_273_570, DNA_2_3_5_2) == pytest.approx(4.0824, rel=2e-5)
    scores = np.array([31, 32, 33, 34])
    e = evalue(scores, 3, 1_610_273_570, DNA_2_3_5_2)
    assert e[1] == e[2] and e[0] > e[1] > e[3]
    no_rounding = evalue(scores, 3, 1_610_273_570,
                         dataclasses.replace(DNA_2_3_5_2, round_down=False))
    assert no_rounding[2] < e[2]


def test_evalue_broadcasts_scores_against_per_query_lengths():
    scores = np.array([[40, 50, 60], [40, 50, 60]])
    query = np.array([[100], [300]])
    e = evalue(scores, query, 10_000, BLOSUM62_11_1)
    assert e.shape == (2, 3)
    assert e[1] == pytest.approx(3 * e[0])
    with pytest.raises(InvalidParameter, match="must be > 0"):
        evalue(scores, 0, 10_000, BLOSUM62_11_1)


# --- Spouge's e-values ---------------------------------------------------------------

BLASTP_DB_RESIDUES = 5231

# (matrix, open, extend): (score, query length, subject length, e-value as blastp printed)
BLASTP_2_12 = {
    ("BLOSUM62", 11, 1): [(773, 159, 158, "1.43e-110"), (322, 159, 161, "6.31e-42"),
                          (93, 159, 158, "3.76e-08"), (676, 150, 149, "4.49e-96"),
                          (40, 159, 214, "0.43"), (29, 150, 216, "10.0"),
                          (28, 159, 212, "14"), (22, 159, 218, "82")],
    ("BLOSUM45", 14, 2): [(923, 159, 158, "4.25e-96"), (405, 159, 161, "5.98e-39"),
                          (119, 159, 158, "7.01e-08"), (35, 159, 150, "18")],
    ("PAM30", 9, 1): [(1133, 159, 158, "1.33e-166"), (399, 159, 161, "2.43e-49"),
                      (78, 159, 159, "6.51e-06"), (1028, 211, 213, "1.27e-143")],
    ("BLOSUM80", 10, 1): [(826, 159, 158, "3.43e-127"), (84, 159, 158, "2.08e-07"),
                          (22, 159, 215, "72"), (28, 150, 159, "10")],
}


def printed_tolerance(text: str) -> float:
    """The relative error a value printed as ``text`` (BLAST's tabular format) may carry."""
    if "e" in text:
        return 0.005 / float(text.split("e")[0]) + 1e-12
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0 ** -decimals / float(text) + 1e-12


@pytest.mark.parametrize("scheme", list(BLASTP_2_12))
def test_spouge_evalues_are_blastps(scheme):
    ka = gapped_parameters(Scoring.protein(*scheme))
    for score, m, n, printed in BLASTP_2_12[scheme]:
        got = spouge_evalue(score, m, n, BLASTP_DB_RESIDUES, ka)
        assert got == pytest.approx(float(printed), rel=printed_tolerance(printed)), (
            scheme, score, printed)


def test_spouge_evalues_broadcast_like_their_scalars():
    ka = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1))
    scores, subjects = np.array([773, 93, 22]), np.array([158, 158, 218])
    many = spouge_evalue(scores, 159, subjects, BLASTP_DB_RESIDUES, ka)
    one = [spouge_evalue(int(s), 159, int(n), BLASTP_DB_RESIDUES, ka)
           for s, n in zip(scores, subjects, strict=True)]
    assert many.tolist() == one and isinstance(one[0], float)
    assert (np.diff(many) > 0).all()


def test_spouge_differs_from_length_adjusted_evalues_of_strong_hits():
    # the case: the length-adjusted formula is 20 orders of magnitude above
    # blastp's 1.43e-110 for this strong hit
    ka = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1))
    m, n = effective_lengths(159, BLASTP_DB_RESIDUES, 30, ka)
    assert spouge_evalue(773, 159, 158, BLASTP_DB_RESIDUES, ka) < 1e-20 * evalue(773, m, n, ka)


def test_spouge_evalue_refuses_what_it_cannot_compute():
    with pytest.raises(InvalidParameter, match="Gumbel block"):
        spouge_evalue(50, 100, 100, 1000, BLOSUM62_11_1)
    ka = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1))
    with pytest.raises(InvalidParameter, match="must be > 0"):
        spouge_evalue(50, 100, [100, 0], 1000, ka)


def test_search_evalue_is_spouges_for_proteins_and_length_adjusted_otherwise():
    protein = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1))
    got = search_evalue([773, 93], 159, [158, 158], BLASTP_DB_RESIDUES, 30, protein)
    assert got.tolist() == spouge_evalue(np.array([773, 93]), 159, 158, BLASTP_DB_RESIDUES,
                                         protein).tolist()
    dna = gapped_parameters(Scoring.dna(2, -3, 5, 2))
    got = search_evalue([32], 21, [500], 1_634_236_772, 1_331_289, dna)
    assert got.tolist() == pytest.approx([4.0824], rel=2e-5)
    given = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1), lambda_=0.267, K=0.041,
                              H=0.14, alpha=1.9, beta=-30)
    m, n = effective_lengths(159, BLASTP_DB_RESIDUES, 30, given)
    assert search_evalue([93], 159, [158], BLASTP_DB_RESIDUES, 30, given).tolist() == [
        evalue(93, m, n, given)]


# --- length adjustment ---------------------------------------------------------------

@pytest.mark.parametrize(("query_length", "adjustment", "search_space"), [
    (32, 7, 156_650), (102, 38, 361_344), (98, 37, 345_626),
])
def test_length_adjustment_matches_blastp_report(query_length, adjustment, search_space):
    params = gapped_parameters(Scoring.protein("BLOSUM62", 11, 1))
    assert length_adjustment(query_length, 6406, 20, params) == adjustment
    m, n = effective_lengths(query_length, 6406, 20, params)
    assert (m, n) == (query_length - adjustment, 6406 - 20 * adjustment)
    assert m * n == search_space


@pytest.mark.parametrize(("query_length", "adjustment", "search_space"), [
    (63, 28, 55_893_623_800), (21, 18, 4_830_820_710),
])
def test_length_adjustment_matches_blastn_report(query_length, adjustment, search_space):
    # blastn's adjustment uses the tabulated alpha/beta (0.8, -2), not 1/H and 0.
    params = gapped_parameters(Scoring.dna(2, -3, 5, 2))
    db_residues, db_sequences = 1_634_236_772, 1_331_289
    assert length_adjustment(query_length, db_residues, db_sequences, params) == adjustment
    m, n = effective_lengths(query_length, db_residues, db_sequences, params)
    assert m * n == search_space


def largest_integer_below_fixed_point(m: int, n: int, num: int, ka: KarlinAltschul) -> int:
    """The adjustment by exhaustion: the largest integer ell with f(ell) >= ell.

    f(ell) = beta + alpha / lambda * ln(K (m - ell) (n - N ell)), over the ell that keep
    K (m - ell)(n - N ell) > max(m, n).
    """
    best = 0
    for ell in range(m):
        space = ka.K * (m - ell) * (n - num * ell)
        if space <= max(m, n):
            break
        if ka.beta + ka.alpha / ka.lambda_ * math.log(space) >= ell:
            best = ell
    return best


@pytest.mark.parametrize(("m", "n", "num", "scheme"), [
    (32, 6406, 20, ("BLOSUM62", 11, 1)),
    (350, 10_000_000, 30_000, ("BLOSUM62", 11, 1)),
    (1000, 200_000_000, 500_000, ("BLOSUM45", 14, 2)),
    (120, 5_000_000, 1, ("PAM30", 9, 1)),
    (5000, 3_000_000_000, 24, ("BLOSUM80", 10, 1)),
    (80, 10**9, 10**6, ("DNA", 1, -2, 2, 1)),
    (2000, 3_000_000_000, 24, ("DNA", 2, -3, 5, 2)),
])
def test_length_adjustment_is_the_largest_integer_below_the_fixed_point(m, n, num, scheme):
    if scheme[0] == "DNA":
        params = gapped_parameters(Scoring.dna(*scheme[1:]))
    else:
        params = gapped_parameters(Scoring.protein(*scheme))
    assert length_adjustment(m, n, num, params) == largest_integer_below_fixed_point(
        m, n, num, params)


def test_tiny_search_space_needs_no_adjustment():
    # K m n < max(m, n): BLAST gives up and adjusts nothing.
    assert length_adjustment(10, 100, 1, BLOSUM62_11_1) == 0
    assert effective_lengths(10, 100, 1, BLOSUM62_11_1) == (10, 100)


@pytest.mark.parametrize(("args", "message"), [
    ((0, 100, 1), "query_length must be >= 1, got 0"),
    ((10, -5, 1), "db_residues must be >= 1, got -5"),
    ((10, 100, True), "db_sequences must be an integer, got True"),
    ((10.5, 100, 1), "query_length must be an integer"),
])
def test_length_adjustment_refuses_bad_lengths(args, message):
    with pytest.raises(InvalidParameter, match=message):
        effective_lengths(*args, BLOSUM62_11_1)


def test_effective_lengths_accept_numpy_integers():
    m, n = effective_lengths(np.int64(32), np.int64(6406), np.int32(20), BLOSUM62_11_1)
    assert (m, n) == (25, 6266) and type(m) is int and type(n) is int


def test_docstring_examples_run():
    result = doctest.testmod(swath.statistics, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
