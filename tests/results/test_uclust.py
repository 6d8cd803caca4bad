"""vsearch's UCLUST-format outputs of an all-pairs job (``swath.results.uclust``): the kept
pairs' ``--allpairs_global --uc`` records; the single-linkage clusters' centroids,
``--cluster_fast --uc`` records and ``--centroids`` FASTA; against what vsearch itself
writes (files vsearch 2.22.1 wrote, kept here; and vsearch run live where it is
installed)."""

from __future__ import annotations

import doctest
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import swath
from swath.results import uclust
from tests.helpers import DNA, write_fasta

VSEARCH = shutil.which("vsearch")
needs_vsearch = pytest.mark.skipif(VSEARCH is None, reason="vsearch is not installed "
                                                            "(apt-get install vsearch)")

# two clusters at identity 0.9 and a singleton: a 100-base centroid and five members (an
# identical copy, more abundant than the others by its size=3, which makes it the
# centroid; a mismatch; 2 deletions and 1 insertion; a prefix; a suffix), two 70/69-base
# sequences with a deletion and a mismatch, and an 80-base singleton
RECORDS = [
    ("m4", "GCTAAAGACAATTACATAACATACACGTCAGCACGAAACTTGTTGGCCCATTGTGAATCGCTTAAGGGTTAAGTAAGTGTG"
           "ATGCATACGCCTTTACTTG"),
    ("b1", "CTGTGTCCACCCCATCGGACTGGCATTTTTATTACACTCAGAAACAGAACTCGGGTAATTTTGACAGGTC"),
    ("cen", "GCTAAAGACAATTACATAACATACACGTCAGCACGAAACTTGTTGGCCCAGTGTGAATCGCTTAAGGGTTAAGTAAGTGT"
            "GATGCATACGCCTTTACTTG"),
    ("s1", "ACGCAGAGGCGCGCCCTCCTGAAGTGCGTGGACACTCGCTATGAATCTCTGATTTACCCACTCTGCCAAACTCCAGCGCG"),
    ("m2", "GCTAAAGACAATTACATAACATACACGTCAGCACGAAACTTGTTGGCCCAGTGTGAATCGCTTAAGGGTTAAGTAAGTGTG"
           "ATGCATACGCCTTT"),
    ("m3", "AAAGACAATTACATAACATACACGTCAGCACGAAACTTGTTGGCCCAGTGTGAATCGCTTAAGGGTTAAGTAAGTGTGATG"
           "CATACGCCTTTACTTG"),
    ("m1", "GCTAAAGACAATTACATAACATACACGTCAACGAAACTTGTTGGCCCAGTGTGAATCGGCTTAAGGGTTAAGTAAGTGTGA"
           "TGCATACGCCTTTACTTG"),
    ("b2", "CTGTGTCCACCCCATCGGACGGCATTTTTATTACACTCAGCAACAGAACTCGGGTAATTTTGACAGGTC"),
    ("m5;size=3", "GCTAAAGACAATTACATAACATACACGTCAGCACGAAACTTGTTGGCCCAGTGTGAATCGCTTAAGGGTTAAGT"
                  "AAGTGTGATGCATACGCCTTTACTTG"),
]
CLUSTERS = [0, 1, 0, 3, 0, 0, 0, 1, 0]
# vsearch --cluster_fast RECORDS.fasta --id 0.9 --uc OUT.uc --centroids OUT.fasta
VSEARCH_UC = """\
S	0	100	*	*	*	*	*	m5;size=3	*
H	0	100	100.0	+	0	0	=	cen	m5;size=3
H	0	100	99.0	+	0	0	100M	m4	m5;size=3
H	0	99	97.0	+	0	0	30M2I27MD41M	m1	m5;size=3
H	0	97	100.0	+	0	0	=	m3	m5;size=3
H	0	95	100.0	+	0	0	=	m2	m5;size=3
S	1	80	*	*	*	*	*	s1	*
S	2	70	*	*	*	*	*	b1	*
H	2	69	97.1	+	0	0	20MI49M	b2	b1
C	0	6	*	*	*	*	*	m5;size=3	*
C	1	1	*	*	*	*	*	s1	*
C	2	2	*	*	*	*	*	b1	*
"""
VSEARCH_CENTROIDS = """\
>m5;size=3
GCTAAAGACAATTACATAACATACACGTCAGCACGAAACTTGTTGGCCCAGTGTGAATCGCTTAAGGGTTAAGTAAGTGT
GATGCATACGCCTTTACTTG
>s1
ACGCAGAGGCGCGCCCTCCTGAAGTGCGTGGACACTCGCTATGAATCTCTGATTTACCCACTCTGCCAAACTCCAGCGCG
>b1
CTGTGTCCACCCCATCGGACTGGCATTTTTATTACACTCAGAAACAGAACTCGGGTAATTTTGACAGGTC
"""


# vsearch --allpairs_global RECORDS.fasta --id 0.9 --uc OUT.uc --threads 1 (its scoring;
# swath's DNA scoring with --iddef 2 keeps the same pairs, aligned the same way): each
# query's kept pairs, the highest identity first (of equal ones, the earliest target);
# ``=`` for identical sequences only (cen and m2, a prefix, are 95M5D); N for a query
# without any
VSEARCH_ALLPAIRS_UC = """\
H	2	100	99.0	+	0	0	100M	m4	cen
H	8	100	99.0	+	0	0	100M	m4	m5;size=3
H	5	100	99.0	+	0	0	3D97M	m4	m3
H	4	100	98.9	+	0	0	95M5D	m4	m2
H	6	100	96.0	+	0	0	30M2D27MI41M	m4	m1
H	7	70	97.1	+	0	0	20MD49M	b1	b2
H	4	100	100.0	+	0	0	95M5D	cen	m2
H	5	100	100.0	+	0	0	3D97M	cen	m3
H	8	100	100.0	+	0	0	=	cen	m5;size=3
H	6	100	97.0	+	0	0	30M2D27MI41M	cen	m1
N	*	*	*	.	*	*	*	s1	*
H	5	95	100.0	+	0	0	3D92M5I	m2	m3
H	8	95	100.0	+	0	0	95M5I	m2	m5;size=3
H	6	95	96.9	+	0	0	30M2D27MI36M5I	m2	m1
H	8	97	100.0	+	0	0	3I97M	m3	m5;size=3
H	6	97	96.9	+	0	0	3I27M2D27MI41M	m3	m1
H	8	99	97.0	+	0	0	30M2I27MD41M	m1	m5;size=3
N	*	*	*	.	*	*	*	b2	*
N	*	*	*	.	*	*	*	m5;size=3	*
"""


def names() -> list[str]:
    return [name for name, _ in RECORDS]


def codes() -> list[np.ndarray]:
    return [DNA.alphabet.encode(residues) for _, residues in RECORDS]


def uc(clusters: list[int] = CLUSTERS, definition: str | int = 2, mode: str = "global",
       device: str = "cpu") -> str:
    return "".join(uclust.uc_lines(names(), codes(), clusters, DNA, mode, definition,
                                   device=device))


def test_docstring_examples_run():
    result = doctest.testmod(uclust, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_uc_records_equal_vsearch_cluster_fasts_byte_for_byte():
    assert uc() == VSEARCH_UC


def test_uc_fields_parse_back_as_vsearch_defines_them():
    lines = [line.split("\t") for line in uc().splitlines()]
    assert all(len(fields) == 10 for fields in lines)
    assert [f[0] for f in lines] == ["S", "H", "H", "H", "H", "H", "S", "S", "H", "C", "C", "C"]
    lengths = dict(zip(names(), (len(r) for _, r in RECORDS), strict=True))
    seeds = {f[1]: f[8] for f in lines if f[0] == "S"}
    sizes = {f[1]: int(f[2]) for f in lines if f[0] == "C"}
    for kind, number, length, pct, strand, six, seven, cigar, label, target in lines:
        if kind == "S":
            assert (int(length), pct, strand, six, seven, cigar, target) == (
                lengths[label], "*", "*", "*", "*", "*", "*")
        elif kind == "H":
            assert (int(length), strand, six, seven) == (lengths[label], "+", "0", "0")
            assert seeds[number] == target and 0 <= float(pct) <= 100
            assert pct == f"{float(pct):.1f}"
            assert cigar == "=" or set(cigar) <= set("0123456789MID")
        else:
            assert (label, pct, cigar, target) == (seeds[number], "*", "*", "*")
    assert sum(sizes.values()) == len(RECORDS)
    assert sizes == {"0": 6, "1": 1, "2": 2}


def test_cigar_spans_the_member_and_the_centroid():
    records = {line.split("\t")[8]: line.split("\t") for line in uc().splitlines()
               if line.startswith("H")}
    lengths = dict(zip(names(), (len(r) for _, r in RECORDS), strict=True))
    for label, fields in records.items():
        if fields[7] == "=":
            continue
        runs = [(int(n or 1), op) for n, op in re.findall(r"(\d*)([MID])", fields[7])]
        assert sum(n for n, op in runs if op in "MD") == lengths[label]   # the member
        assert sum(n for n, op in runs if op in "MI") == lengths[fields[9]]   # the centroid


def test_centroid_fasta_equals_vsearchs():
    text = "".join(uclust.centroid_fasta(names(), codes(), CLUSTERS, DNA.alphabet))
    assert text == VSEARCH_CENTROIDS


def test_centroids_the_longest_then_most_abundant_then_by_label_then_first():
    assert uclust.centroids(CLUSTERS, [len(r) for _, r in RECORDS], names()).tolist() == [
        8, 1, 8, 3, 8, 8, 8, 1, 8]
    # equal lengths and abundances: by label; equal labels: the first given
    assert uclust.centroids([0, 0, 0], [4, 4, 4], ["b", "a", "a"]).tolist() == [1, 1, 1]
    assert uclust.centroids([5, 5], [4, 4], ["x;size=1", "y"]).tolist() == [0, 0]


@pytest.mark.parametrize(("cigar", "expected"), [
    ("5=", "5M"), ("1=", "M"), ("2=1X2=", "5M"), ("2I3=", "2D3M"), ("3=1D", "3MI"),
    ("1I1D1=", "DIM"), ("", ""),
])
def test_uc_cigar_is_vsearchs_compressed_form(cigar, expected):
    assert uclust.uc_cigar(cigar) == expected


def test_identity_rounds_as_vsearch_computes_it():
    """49 matches in 80 columns: vsearch prints 100.0 * 49 / 80 = 61.25 as 61.2 (the
    fraction times 100 is 61.250000000000007, 61.3)."""
    centroid, member = "A" * 49 + "C" * 31, "A" * 49 + "G" * 31
    seqs = [DNA.alphabet.encode(s) for s in (centroid, member)]
    for definition in (1, 2, "pident"):
        line = list(uclust.uc_lines(["c", "m"], seqs, [0, 0], DNA, "global", definition,
                                    device="cpu"))[1]
        assert line.split("\t")[3] == "61.2"


def test_local_alignments_cover_the_aligned_residues_and_none_is_a_star():
    seqs = [DNA.alphabet.encode(s) for s in ("TTTTACGTACGTACGTTTTT", "GGACGTACGTACGG", "NN")]
    lines = [line.split("\t") for line in uclust.uc_lines(
        ["long", "mid", "short"], seqs, [0, 0, 0], DNA, "local", 2, device="cpu")]
    cigars = {f[8]: f[7] for f in lines if f[0] == "H"}
    # mid: its ACGTACGTACG matches; NN (N scores a mismatch against any base): no alignment
    assert cigars == {"mid": "=", "short": "*"}


def pair_records(query, target, cigars, lengths=(6, 6, 5, 5), definition=2) -> list[str]:
    names = ["a", "b", "c", "d"][:len(lengths)]
    return list(uclust.pair_uc_lines(names, list(lengths), query, target, cigars, definition))


def test_pair_records_by_query_best_first_then_earliest_target_whatever_the_pairs_order():
    pairs = [(0, 3, "4=1X1I"), (0, 1, "6="), (0, 2, "5=1I"), (1, 2, "4=1X1I")]
    lines = pair_records(*zip(*pairs, strict=True))
    assert [line.split("\t")[:4] + line.split("\t")[7:] for line in lines] == [
        ["H", "1", "6", "100.0", "=", "a", "b\n"],
        ["H", "2", "6", "100.0", "5MD", "a", "c\n"],   # 100%: a tie broken by the target
        ["H", "3", "6", "80.0", "5MD", "a", "d\n"],
        ["H", "2", "6", "80.0", "5MD", "b", "c\n"],
        ["N", "*", "*", "*", "*", "c", "*\n"],
        ["N", "*", "*", "*", "*", "d", "*\n"]]
    for order in ([3, 2, 1, 0], [2, 0, 3, 1]):
        again = [pairs[k] for k in order]
        assert pair_records(*zip(*again, strict=True)) == lines


def test_pair_records_a_run_of_queries_at_a_time_equal_all_at_once():
    """``queries``: the records of a run of queries from the pairs whose query is in it;
    the runs one after another are the records of all (a large job's, written in runs)."""
    pairs = [(0, 3, "4=1X1I"), (0, 1, "6="), (0, 2, "5=1I"), (2, 3, "4=1X1I")]
    whole = pair_records(*zip(*pairs, strict=True))
    for bounds in ([0, 1, 4], [0, 2, 3, 4], [0, 1, 2, 3, 4]):
        runs = []
        for first, last in itertools.pairwise(bounds):
            mine = [pair for pair in pairs if first <= pair[0] < last]
            query, target, cigars = (list(c) for c in zip(*mine, strict=True)) if mine \
                else ([], [], [])
            runs += uclust.pair_uc_lines(["a", "b", "c", "d"], [6, 6, 5, 5], query, target,
                                         cigars, 2, queries=range(first, last))
        assert runs == whole


def test_query_order_is_vsearchs_exact_identity_then_target():
    """By query, then the identity in percent as a double (99.16 before 99.15, both
    printed 99.2), then the target."""
    percent = [100.0 * 117 / 118, 100.0 * 118 / 119, 100.0 * 118 / 119, 100.0]
    assert uclust.query_order([0, 0, 0, 1], [9, 7, 8, 2], percent).tolist() == [1, 2, 0, 3]


def test_pair_records_without_any_pair_are_all_n():
    assert pair_records([], [], [], lengths=(3, 4)) == [
        "N\t*\t*\t*\t.\t*\t*\t*\ta\t*\n", "N\t*\t*\t*\t.\t*\t*\t*\tb\t*\n"]


def test_pair_records_equal_sign_only_for_identical_sequences():
    """``=`` where every column is a match and the alignment spans both sequences whole
    (vsearch --allpairs_global's rule; --cluster_fast's ignores terminal gaps)."""
    cigar = {line.split("\t")[9].strip(): line.split("\t")[7] for line in pair_records(
        [0, 0, 0], [1, 2, 3], ["6=", "5=1I", "1I4=1I"], lengths=(6, 6, 5, 4))
        if line.startswith("H")}
    assert cigar == {"b": "=", "c": "5MD", "d": "D4MD"}
    local = pair_records([0], [1], ["4="], lengths=(6, 6))        # a local alignment's part
    assert local[0].split("\t")[7] == "4M"


def test_pair_identity_rounds_as_vsearch_computes_it():
    """49 matches in 80 columns: 61.2 as vsearch prints 100.0 * 49 / 80 (not 61.3)."""
    for definition in (1, 2, "pident"):
        line = pair_records([0], [1], ["49=31X"], lengths=(80, 80), definition=definition)[0]
        assert line.split("\t")[3] == "61.2"


def test_allpairs_result_centroids_and_formats(tmp_path):
    fasta = write_fasta(tmp_path / "seqs.fasta", RECORDS)
    res = swath.allpairs(str(fasta), scoring=DNA, min_identity=0.9, iddef=2, device="cpu",
                         clusters=True, store=str(tmp_path / "pairs.zarr"))
    assert res.centroids().tolist() == [8, 1, 8, 3, 8, 8, 8, 1, 8]
    assert "".join(res.lines("clusters-uc")) == VSEARCH_UC
    assert "".join(res.lines("centroids")) == VSEARCH_CENTROIDS
    assert "".join(res.lines("uc")) == VSEARCH_ALLPAIRS_UC
    assert {"uc", "clusters-uc", "centroids"} <= set(swath.FORMATS["allpairs"])


def test_a_store_without_clusters_has_no_centroids(tmp_path):
    res = swath.allpairs(["ACGTACGT", "ACGTACGA"], scoring=DNA, min_identity=0.8,
                         device="cpu", store=str(tmp_path / "pairs.zarr"))
    with pytest.raises(swath.StoreIncomplete, match="computed no clusters"):
        res.centroids()
    with pytest.raises(swath.StoreIncomplete, match="computed no clusters"):
        "".join(res.lines("clusters-uc"))
    assert "".join(res.lines("uc")) == "H\t1\t8\t87.5\t+\t0\t0\t8M\tsequences[0]\t" \
                                      "sequences[1]\nN\t*\t*\t*\t.\t*\t*\t*\tsequences[1]\t*\n"


@pytest.mark.gpu
def test_members_aligned_on_the_gpu_as_on_the_cpu():
    for mode in swath.MODES:
        assert uc(mode=mode, device="gpu") == uc(mode=mode, device="cpu")


def test_allpairs_identity_prints_as_vsearch_computes_it():
    """49 matches in 80 columns: the tabular formats print 61.2 as vsearch does (100.0 *
    49 / 80 is 61.25 exactly), json the double itself; uc the same."""
    res = swath.allpairs(["A" * 49 + "C" * 31, "A" * 49 + "G" * 31], scoring=DNA,
                         min_identity=0.6, iddef=2, device="cpu")
    assert "".join(res.lines("blast6out")).split("\t")[2] == "61.2"
    assert "".join(res.lines("tsv")).split("\t")[2] == "61.2"
    assert json.loads("".join(res.lines("json")))["pident"] == 61.25
    assert "".join(res.lines("uc")).split("\t")[3] == "61.2"
    assert "# pair 1 of 1: identity 61.2% (vsearch --iddef 2)" in "".join(res.lines("text"))


@needs_vsearch
@pytest.mark.parametrize("definition", [0, 1, 2, 3, 4])
def test_allpairs_uc_and_blast6out_equal_vsearch_run_here(tmp_path: Path, definition,
                                                          monkeypatch):
    """Byte for byte, and again read a chunk of 2 pairs at a time and printed a run of
    queries at a time."""
    fasta = write_fasta(tmp_path / "seqs.fasta", RECORDS)
    out, blast6 = tmp_path / "vsearch.uc", tmp_path / "vsearch.blast6out"
    subprocess.run([str(VSEARCH), "--allpairs_global", str(fasta), "--id", "0.8", "--iddef",
                    str(definition), "--uc", str(out), "--blast6out", str(blast6),
                    "--threads", "1", "--quiet"], check=True)
    res = swath.allpairs(str(fasta), scoring=swath.Scoring.vsearch(), min_identity=0.8,
                         iddef=definition, device="cpu", block=4,
                         store=str(tmp_path / "pairs.zarr"))
    assert len(blast6.read_text().splitlines()) > 5
    for budget in (None, 2):
        if budget is not None:
            monkeypatch.setattr("swath.results.allpairs.PRINT_PAIRS", budget)
        assert "".join(res.lines("uc")) == out.read_text()
        assert "".join(res.lines("blast6out")) == blast6.read_text()


@needs_vsearch
@pytest.mark.parametrize("definition", [0, 1, 2, 3, 4])
def test_uc_and_centroids_equal_vsearch_run_here(tmp_path: Path, definition):
    fasta = write_fasta(tmp_path / "seqs.fasta", RECORDS)
    out, centroids = tmp_path / "vsearch.uc", tmp_path / "centroids.fasta"
    subprocess.run([str(VSEARCH), "--cluster_fast", str(fasta), "--id", "0.9", "--iddef",
                    str(definition), "--uc", str(out), "--centroids", str(centroids),
                    "--quiet"], check=True)
    assert uc(definition=definition) == out.read_text()
    assert "".join(uclust.centroid_fasta(names(), codes(), CLUSTERS, DNA.alphabet)) == \
        centroids.read_text()
