"""Text views of one alignment (swath.views): rows, middle line, wrapping, summary."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from swath import Alignment, Scoring, views
from swath.errors import InvalidParameter
from swath.views import (
    RECORD_FIELDS,
    aligned_rows,
    alignment_record,
    alignment_summary,
    format_text,
    pairwise_lines,
    summary_lines,
)

DNA = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
PROTEIN = Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)


def dna(text: str) -> np.ndarray:
    return DNA.alphabet.encode(text)


def protein(text: str) -> np.ndarray:
    return PROTEIN.alphabet.encode(text)


# Columns: GA/GA, C/- (I), TT/TT, -/G (D), A/C (X), A/A; score 5 * 2 - 3 - 2 * (5 + 2) = -7.
GAPPED_QUERY = "GACTTAA"
GAPPED_TARGET = "GATTGCA"
GAPPED = Alignment(-7, 0, 7, 0, 7, "2=1I2=1D1X1=", "global")


def test_doctests() -> None:
    result = doctest.testmod(views)
    assert result.attempted > 0
    assert result.failed == 0


def test_rows_of_a_gapped_alignment() -> None:
    top, middle, bottom = aligned_rows(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA)
    assert top == "GACTT-AA"
    assert middle == "|| || .|"
    assert bottom == "GA-TTGCA"


def test_lines_of_a_gapped_alignment() -> None:
    lines = pairwise_lines(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA,
                           query_name="q", target_name="t")
    assert lines == [
        "q 1 GACTT-AA 7",
        "    || || .|",
        "t 1 GA-TTGCA 7",
    ]


def test_middle_line_marks_positive_pairs() -> None:
    # I/V scores +3 in BLOSUM62, W/P -4, K/K identical.
    aln = Alignment(0, 0, 3, 0, 3, "2X1=", "global")
    _, middle, _ = aligned_rows(aln, protein("IWK"), protein("VPK"), PROTEIN)
    assert middle == ":.|"


def test_local_alignment_starting_mid_sequence() -> None:
    query = "TTTT" + GAPPED_QUERY + "CC"
    target = "CCCCCC" + GAPPED_TARGET + "GGGG"
    aln = Alignment(GAPPED.score, 4, 11, 6, 13, GAPPED.cigar, "local")
    lines = pairwise_lines(aln, dna(query), dna(target), DNA, query_name="query",
                           target_name="target")
    assert lines == [
        "query   5 GACTT-AA 11",
        "          || || .|",
        "target  7 GA-TTGCA 13",
    ]
    summary = alignment_summary(aln, dna(query), dna(target), DNA)
    assert summary.query_range == (5, 11)
    assert summary.target_range == (7, 13)


def _random_protein(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    return "".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWY"), size=n))


def test_wrapping_at_60_columns_with_coordinates() -> None:
    # 130 query residues, 125 target residues: 5 query residues against a gap at 70..74.
    query = _random_protein(130, seed=1)
    target = query[:70] + query[75:]
    aln = Alignment(0, 0, 130, 0, 125, "70=5I55=", "global")
    lines = pairwise_lines(aln, protein(query), protein(target), PROTEIN,
                           query_name="q", target_name="t")
    assert len(lines) == 3 * 3 + 2
    assert lines[3] == lines[7] == ""
    blocks = [lines[0:3], lines[4:7], lines[8:11]]
    expected = [((1, 60), (1, 60), 60), ((61, 120), (61, 115), 60), ((121, 130), (116, 125), 10)]
    for block, (q_span, t_span, width) in zip(blocks, expected, strict=True):
        q_name, q_start, q_row, q_end = block[0].split()
        t_name, t_start, t_row, t_end = block[2].split()
        assert (q_name, t_name) == ("q", "t")
        assert (int(q_start), int(q_end)) == q_span
        assert (int(t_start), int(t_end)) == t_span
        assert len(q_row) == len(t_row) == width
        # The rows and the middle line start in the same column.
        column = block[0].index(q_row)
        assert block[2].index(t_row) == column
        assert len(block[1]) <= column + width
    assert blocks[1][2].split()[2][10:15] == "-----"
    rows = [block[0].split()[2] for block in blocks], [block[2].split()[2] for block in blocks]
    assert "".join(rows[0]).replace("-", "") == query
    assert "".join(rows[1]).replace("-", "") == target
    assert "".join(rows[1])[70:75] == "-----"


def test_width_sets_the_block_size() -> None:
    lines = pairwise_lines(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA, width=3,
                           query_name="q", target_name="t")
    assert lines == [
        "q 1 GAC 3", "    ||", "t 1 GA- 2", "",
        "q 4 TT- 5", "    ||", "t 3 TTG 5", "",
        "q 6 AA 7", "    .|", "t 6 CA 7",
    ]


def test_row_of_gaps_only_keeps_its_middle_line() -> None:
    aln = Alignment(0, 0, 2, 0, 5, "2=3D", "global")
    lines = pairwise_lines(aln, dna("AC"), dna("ACGGG"), DNA, width=2, query_name="q",
                           target_name="t")
    assert lines[4:7] == ["q 3 -- 2", " " * 6, "t 3 GG 4"]
    assert lines[5].strip() == "" and lines[5] != ""


def test_long_names_are_cut() -> None:
    lines = pairwise_lines(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA,
                           query_name="x" * 30, target_name="t")
    assert lines[0].startswith("x" * 20 + " 1 ")
    assert lines[2].startswith("t" + " " * 19 + " 1 ")


def test_empty_alignment() -> None:
    aln = Alignment(0, 0, 0, 0, 0, "", "local")
    assert pairwise_lines(aln, protein("WWW"), protein("PPP"), PROTEIN) == []
    summary = alignment_summary(aln, protein("WWW"), protein("PPP"), PROTEIN)
    assert (summary.length, summary.identities, summary.query_range) == (0, 0, None)
    text = format_text(aln, protein("WWW"), protein("PPP"), PROTEIN)
    assert "# Identity:     0/0 (0.0%)" in text
    assert "empty alignment" in text


def test_summary_counts() -> None:
    summary = alignment_summary(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA)
    assert summary.length == 8
    assert summary.identities == 5
    assert summary.similarities == 5
    assert summary.gaps == 2
    assert summary.gap_opens == 2
    assert (summary.query_range, summary.target_range) == ((1, 7), (1, 7))


def test_summary_lines() -> None:
    lines = summary_lines(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA,
                          query_name="q1", target_name="t1")
    text = "\n".join(lines)
    assert all(line.startswith("# ") for line in lines)
    assert "# Query:        q1 (7 residues)" in text
    assert "# Mode:         global (Needleman-Wunsch)" in text
    assert "# Matrix:       DNA2/-3" in text
    assert "a gap of length k costs 5 + k * 2" in text
    assert "# Identity:     5/8 (62.5%)" in text
    assert "# Gaps:         2/8 (25.0%)" in text
    assert "# Query range:  1-7 of 7" in text
    assert f"# CIGAR:        {GAPPED.cigar}" in text


def test_alignment_record() -> None:
    record = alignment_record(GAPPED, "q1", "t1")
    assert tuple(record) == RECORD_FIELDS
    assert record["identity"] == pytest.approx(5 / 8)
    assert record["query_end"] == 7 and record["cigar"] == GAPPED.cigar


@pytest.mark.parametrize(
    ("aln", "match"),
    [
        (Alignment(0, 0, 6, 0, 7, "2=1I2=1D1X1=", "global"), "covers 7 query residues"),
        (Alignment(0, 0, 7, 0, 6, "2=1I2=1D1X1=", "global"), "covers 7 target residues"),
        (Alignment(0, 5, 12, 0, 7, "2=1I2=1D1X1=", "global"), "outside the query"),
        (Alignment(0, 0, 2, 0, 2, "2M", "global"), "not an extended CIGAR"),
    ],
)
def test_inconsistent_alignment(aln: Alignment, match: str) -> None:
    with pytest.raises(InvalidParameter, match=match):
        aligned_rows(aln, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA)


def test_bad_width() -> None:
    with pytest.raises(InvalidParameter, match="width must be a positive integer"):
        pairwise_lines(GAPPED, dna(GAPPED_QUERY), dna(GAPPED_TARGET), DNA, width=0)
