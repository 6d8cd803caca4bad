"""The alignment writers (SAM, PAF, BLAST's tabular rows) and the columns they are built
from: SAM read back by samtools (Debian's, installed by .ci/run; these tests skip only
where it is absent), PAF checked column by column against the alignments."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import swath
from swath.cli import main
from swath.results.alignments import (
    SECONDARY,
    AlignedRows,
    PrintOptions,
    blast_bitscore,
    blast_evalue,
    cigar_columns,
    paf_lines,
    primary_rows,
    sam_header,
    sam_lines,
    sam_quals,
    tabular_format,
    tabular_lines,
)
from swath.results.text_columns import decimal, encoded, joined
from tests.helpers import DNA, PROTEIN, count_cigar, write_fasta

SAMTOOLS = shutil.which("samtools")
needs_samtools = pytest.mark.skipif(SAMTOOLS is None, reason="samtools is not installed "
                                    "(apt-get install samtools; .ci/run installs it)")


# ---------------------------------------------------------------------------------
# What each record must hold, computed plainly from one alignment


def clipped_cigar(cigar: str, head: int, tail: int, cigar_m: bool) -> str:
    """SAM's CIGAR of an extended CIGAR: ``M`` for ``=``/``X`` runs if asked, soft clips."""
    if cigar_m:
        runs: list[list[object]] = []
        for n, op in re.findall(r"(\d+)([=XID])", cigar):
            op = "M" if op in "=X" else op
            if runs and runs[-1][1] == op:
                runs[-1][0] = int(runs[-1][0]) + int(n)  # type: ignore[call-overload]
            else:
                runs.append([int(n), op])
        cigar = "".join(f"{n}{op}" for n, op in runs)
    return (f"{head}S" if head else "") + cigar + (f"{tail}S" if tail else "")


def rows_of(alignments: list[tuple[str, str, str, str, swath.Alignment]]) -> AlignedRows:
    """``(query name, query, target name, target, alignment)`` as AlignedRows."""
    def column(values: list[object], dtype: object = np.int64) -> np.ndarray:
        return np.array(values, dtype=dtype)

    queries = [q for _, q, _, _, _ in alignments]
    a = [aln for *_, aln in alignments]
    return AlignedRows(
        column([n for n, *_ in alignments], object), column([len(q) for q in queries]),
        column([t for _, _, t, _, _ in alignments], object),
        column([len(t) for _, _, _, t, _ in alignments]), column([x.score for x in a]),
        column([x.query_start for x in a]), column([x.query_end for x in a]),
        column([x.target_start for x in a]), column([x.target_end for x in a]),
        column([x.cigar for x in a], object), a[0].mode if a else "local",
        lambda i: queries[i])


def sam_file(path: Path, rows: AlignedRows, options: PrintOptions) -> Path:
    path.write_text("".join(sam_header((rows.target_name, rows.target_length), "swath x"))
                    + "".join(sam_lines(rows, options)))
    return path


def read_back(path: Path) -> list[list[str]]:
    """samtools quickcheck passes; samtools view's records, split into fields."""
    assert SAMTOOLS is not None
    subprocess.run([SAMTOOLS, "quickcheck", "-v", str(path)], check=True)
    done = subprocess.run([SAMTOOLS, "view", str(path)], check=True, capture_output=True,
                          text=True)
    assert "[W::" not in done.stderr and "[E::" not in done.stderr, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


def expected_record(rows: AlignedRows, i: int, primary: bool, cigar_m: bool) -> list[object]:
    """QNAME, FLAG, RNAME, POS, CIGAR, SEQ and tags of row ``i``, as the SAM spec has them."""
    cigar = str(rows.cigar[i])
    name = str(rows.query_name[i])
    if not cigar:
        return [name, 4, "*", 0, "*", rows.query_sequence(i) if primary else "*", []]
    counts = count_cigar(cigar)
    head, tail = int(rows.query_start[i]), int(rows.query_length[i] - rows.query_end[i])
    return [name, 0 if primary else 256, str(rows.target_name[i]),
            int(rows.target_start[i]) + 1, clipped_cigar(cigar, head, tail, cigar_m),
            rows.query_sequence(i) if primary else "*",
            [f"AS:i:{int(rows.score[i])}", f"NM:i:{counts['columns'] - counts['matches']}"]]


def check_sam(path: Path, rows: AlignedRows, options: PrintOptions, *, dna: bool) -> None:
    records = read_back(sam_file(path, rows, options))
    primary = primary_rows(rows)
    assert len(records) == len(rows)
    for i, fields in enumerate(records):
        want = expected_record(rows, i, bool(primary[i]), options.cigar_m)
        got = [fields[0], int(fields[1]), fields[2], int(fields[3]), fields[5], fields[9],
               fields[11:]]
        if not dna:      # samtools keeps bases: a protein's letters read back as N
            got[5], want[5] = len(got[5]), len(str(want[5]))
        assert got == want, (i, fields)
        assert fields[4] == ("255" if rows.cigar[i] else "0")


# ---------------------------------------------------------------------------------
# Alignments of every kind


@pytest.fixture(scope="module")
def aligned() -> dict[str, tuple[AlignedRows, bool]]:
    """Real alignments (CPU): DNA and protein, each mode, of related pairs (clips, gaps at
    the ends, secondary rows: each query against several targets)."""
    rng = np.random.default_rng(33)
    out = {}
    for kind, scoring, letters in (("dna", DNA, "ACGT"), ("protein", PROTEIN,
                                                          "ACDEFGHIKLMNPQRSTVWY")):
        def seq(n: int, letters: str = letters) -> str:
            return "".join(rng.choice(list(letters), n))

        for mode in swath.MODES:
            found = []
            for q in range(4):
                query = seq(int(rng.integers(20, 60)))
                for t in range(3):
                    target = seq(5) + query[3:-4] + seq(int(rng.integers(0, 9)))
                    target = target[:10] + target[12:] if t == 1 else target
                    found.append((f"q{q}", query, f"t{q}.{t}", target,
                                  swath.align(query, target, scoring, mode, "cpu")))
            out[f"{kind}-{mode}"] = (rows_of(found), kind == "dna")
    return out


@needs_samtools
@pytest.mark.parametrize("cigar_m", [False, True], ids=["eqx", "cigar-m"])
def test_sam_of_every_mode_reads_back_through_samtools(aligned, tmp_path, cigar_m):
    for name, (rows, dna) in aligned.items():
        check_sam(tmp_path / f"{name}.sam", rows, PrintOptions(cigar_m=cigar_m), dna=dna)


def test_local_rows_are_clipped_and_global_ones_are_not(aligned):
    local = "".join(sam_lines(aligned["dna-local"][0], PrintOptions()))
    whole = "".join(sam_lines(aligned["dna-global"][0], PrintOptions()))
    assert re.search(r"\t\d+S\d", local)
    assert "S" not in "".join(line.split("\t")[5] for line in whole.splitlines())


@needs_samtools
def test_unmapped_and_secondary_records(tmp_path):
    """A row without an alignment is unmapped (FLAG 4, no position, CIGAR or tags); a
    query's best row is primary, the first of equal ones, its others secondary; a query
    with no alignment keeps its sequence on its first row."""
    none = swath.Alignment(0, 0, 0, 0, 0, "", "local")
    rows = rows_of([
        ("a", "ACGTAC", "r1", "TTACGTACTT", swath.Alignment(12, 0, 6, 2, 8, "6=", "local")),
        ("a", "ACGTAC", "r2", "ACGAAC", swath.Alignment(14, 0, 6, 0, 6, "3=1X2=", "local")),
        ("a", "ACGTAC", "r3", "ACGAAC", swath.Alignment(14, 0, 6, 0, 6, "3=1X2=", "local")),
        ("b", "GGGG", "r1", "TTACGTACTT", none),
        ("b", "GGGG", "r2", "ACGAAC", none),
        ("c", "ACGTTTAC", "r2", "ACGAAC", none),
        ("c", "ACGTTTAC", "r1", "TTACGTACTT",
         swath.Alignment(5, 1, 8, 3, 8, "3=2I2=", "local")),
    ])
    assert primary_rows(rows).tolist() == [False, True, False, True, False, False, True]
    records = read_back(sam_file(tmp_path / "u.sam", rows, PrintOptions()))
    assert [r[1] for r in records] == ["256", "0", "256", "4", "4", "4", "0"]
    assert records[3][2:6] == ["*", "0", "0", "*"] and records[3][9] == "GGGG"
    assert records[3][11:] == [] and records[4][9] == "*"
    assert records[6][5] == "1S3=2I2=" and records[6][11:] == ["AS:i:5", "NM:i:2"]
    check_sam(tmp_path / "m.sam", rows, PrintOptions(cigar_m=True), dna=True)


def test_sam_header_names_each_reference_once_and_refuses_two_lengths():
    header = list(sam_header((np.array(["b", "a", "b"], object), np.array([5, 3, 5])),
                             "swath search q.fa\tdb.swdb"))
    assert header[0] == "@HD\tVN:1.6\tSO:unsorted\n"
    assert "".join(header[1:-1]) == "@SQ\tSN:b\tLN:5\n@SQ\tSN:a\tLN:3\n"
    assert header[-1] == (f"@PG\tID:swath\tPN:swath\tVN:{swath.__version__}\t"
                          "CL:swath search q.fa db.swdb\n")
    assert "CL:" not in list(sam_header((np.array(["b"]), np.array([5])), None))[-1]
    with pytest.raises(swath.InvalidInput, match=r"'b' is given with two lengths, 5 and 6"):
        list(sam_header((np.array(["b", "a", "b"], object), np.array([5, 3, 6])), None))


@pytest.mark.parametrize("cigar_m", [False, True], ids=["eqx", "cigar-m"])
def test_paf_columns_are_the_alignments(aligned, cigar_m):
    """minimap2's 12 columns (0-based, end exclusive), NM, AS and the CIGAR without clips;
    rows without an alignment left out."""
    for rows, _ in aligned.values():
        lines = "".join(paf_lines(rows, PrintOptions(cigar_m=cigar_m))).splitlines()
        kept = [i for i in range(len(rows)) if rows.cigar[i]]
        assert len(lines) == len(kept)
        for i, line in zip(kept, lines, strict=True):
            counts = count_cigar(str(rows.cigar[i]))
            fields = line.split("\t")
            assert fields[:12] == [
                str(rows.query_name[i]), str(rows.query_length[i]), str(rows.query_start[i]),
                str(rows.query_end[i]), "+", str(rows.target_name[i]),
                str(rows.target_length[i]), str(rows.target_start[i]),
                str(rows.target_end[i]), str(counts["matches"]), str(counts["columns"]),
                "255"]
            assert fields[12:] == [f"NM:i:{counts['columns'] - counts['matches']}",
                                   f"AS:i:{rows.score[i]}",
                                   "cg:Z:" + clipped_cigar(str(rows.cigar[i]), 0, 0,
                                                           cigar_m)]


def test_writers_hold_nothing_across_chunks(aligned):
    """Rows printed in two calls, cut between queries, give the text of one call."""
    rows, _ = aligned["protein-local"]
    halves = [AlignedRows(**{k: v[s] if isinstance(v, np.ndarray) else v
                             for k, v in vars(rows).items() if k != "query_sequence"},
                          query_sequence=lambda i, s=s: rows.query_sequence(i + s.start))
              for s in (slice(0, 6), slice(6, None))]
    for write in (lambda r: sam_lines(r, PrintOptions()), lambda r: paf_lines(r, PrintOptions()),
                  tabular_lines):
        assert "".join(write(rows)) == "".join(s for half in halves for s in write(half))


def test_tabular_rows_are_blasts_cells():
    rows = rows_of([("q", "ACGTACGTAC", "t", "ACGAACGT",
                     swath.Alignment(9, 1, 9, 0, 8, "2=1X3=1I1=", "global")),
                    ("q", "ACGTACGTAC", "u", "A", swath.Alignment(0, 0, 0, 0, 0, "", "local"))])
    assert "".join(tabular_lines(rows)) == ("q\tt\t75.000\t8\t1\t1\t2\t9\t1\t8\t\t\t9\t"
                                            "2=1X3=1I1=\nq\tu\t0.000\t0\t0\t0\t1\t0\t1\t0\t\t\t0"
                                            "\t\n")
    stats = AlignedRows(**{**vars(rows), "evalue": np.array([1.234e-5, np.nan]),
                           "bitscore": np.array([40.06, np.nan])})
    assert "".join(tabular_lines(stats)).splitlines()[0].split("\t")[10:12] == ["1.23e-05",
                                                                                "40.1"]
    named = ("sseqid", "nident", "gaps", "qlen", "slen", "qcovhsp", "score")
    assert "".join(tabular_lines(rows, named)).splitlines() == ["t\t6\t1\t10\t8\t80\t9",
                                                               "u\t0\t0\t10\t1\t0\t0"]


@pytest.mark.parametrize(("format", "message"), [
    ("6 qseqid qseq", "no column 'qseq'; the columns are qseqid sseqid"),
    ("sam qseqid", "only a tabular format"),
])
def test_a_format_names_only_known_tabular_columns(format, message):
    with pytest.raises(swath.InvalidParameter, match=message):
        tabular_format(format)


def test_cigar_columns_count_each_row():
    cigars = np.array(["3=1X2I4=1D", "", "5D", "12="], dtype=object)
    c = cigar_columns(cigars)
    assert c["length"].tolist() == [11, 0, 5, 12]
    assert c["matches"].tolist() == [7, 0, 0, 12]
    assert c["mismatches"].tolist() == [1, 0, 0, 0]
    assert c["gap_opens"].tolist() == [2, 0, 1, 0]
    assert c["edit_distance"].tolist() == [4, 0, 5, 0]
    assert c["identity"].tolist() == [7 / 11, 0.0, 0.0, 1.0]


def test_text_columns_write_as_python_does():
    values = np.array([0, 9, 10, -1, -10, 123456789, 2**62, -(2**62)], dtype=np.int64)
    assert decimal(values).text() == "".join(map(str, values.tolist()))
    names = np.array(["a", "", "é-ß", "long name"], dtype=object)
    line = joined([encoded(names), "\t", decimal([1, 2, 3, 4]), "\n"]).text()
    assert line == "".join(f"{n}\t{k}\n" for n, k in zip(names, range(1, 5), strict=True))
    assert joined([decimal([]), "\n"]).text() == ""


# ---------------------------------------------------------------------------------
# The workloads' stores, and the command line


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    rng = np.random.default_rng(8)
    root = tmp_path_factory.mktemp("formats")
    seqs = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(30, 90, 12)]
    seqs += [s[:-3] + "GA" for s in seqs[:4]]
    write_fasta(root / "db.fasta", [(f"d{i}", s) for i, s in enumerate(seqs)])
    write_fasta(root / "q.fasta", [("qa", seqs[2][4:50]), ("qb", seqs[7]), ("qc", "ACGTT")])
    return root


@needs_samtools
def test_sam_of_a_search_store(inputs, tmp_path):
    result = swath.search(str(inputs / "q.fasta"), str(inputs / "db.fasta"), DNA, top_k=3,
                          store=str(tmp_path / "s.zarr"), device="cpu")
    path = tmp_path / "s.sam"
    path.write_text("".join(result.lines("sam")))
    records = read_back(path)
    rows = result.aligned_rows()
    assert len(records) == len(rows) == sum(len(result.hits(q)) for q in range(len(result)))
    assert [(r[0], r[1]) for r in records[:3]] == [("qa", "0"), ("qa", "256"), ("qa", "256")]
    db = {name: seq for name, seq in zip(*_fasta(inputs / "db.fasta"), strict=True)}
    header = subprocess.run([SAMTOOLS or "", "view", "-H", str(path)], check=True,
                            capture_output=True, text=True).stdout
    for name, length in re.findall(r"@SQ\tSN:(\S+)\tLN:(\d+)", header):
        assert len(db[name]) == int(length)
    check_sam(tmp_path / "again.sam", rows, PrintOptions(), dna=True)
    assert rows.query_sequence is not None and rows.query_sequence(0) == \
        _fasta(inputs / "q.fasta")[1][0]


@needs_samtools
def test_sam_and_paf_of_an_allpairs_store(inputs, tmp_path):
    result = swath.allpairs(str(inputs / "db.fasta"), DNA, min_identity=0.8, device="cpu",
                            store=str(tmp_path / "a.zarr"))
    table = [dict(zip(swath.ALLPAIRS_COLUMNS, row, strict=True)) for row in result.to_table()]
    assert table
    path = tmp_path / "a.sam"
    path.write_text("".join(result.lines("sam", PrintOptions(cigar_m=True))))
    records = read_back(path)
    assert [(r[0], r[2], int(r[3]) - 1) for r in records] == [
        (row["query_name"], row["target_name"], row["target_start"]) for row in table]
    check_sam(tmp_path / "b.sam", result.aligned_rows(), PrintOptions(cigar_m=True), dna=True)
    paf = [line.split("\t") for line in "".join(result.lines("paf")).splitlines()]
    assert [(f[0], f[5], f[-1]) for f in paf] == [
        (row["query_name"], row["target_name"], f"cg:Z:{row['cigar']}") for row in table]


def _fasta(path: Path) -> tuple[list[str], list[str]]:
    names, seqs = [], []
    for block in path.read_text().split(">")[1:]:
        head, *lines = block.splitlines()
        names.append(head.split()[0])
        seqs.append("".join(lines))
    return names, seqs


@needs_samtools
def test_cli_search_prints_sam_and_inspect_prints_paf_with_m(inputs, tmp_path,
                                                             restore_logging):
    out = str(tmp_path / "r.zarr")
    run = CliRunner().invoke(main, ["search", "--dna", str(inputs / "q.fasta"),
                                    str(inputs / "db.fasta"), "-o", out, "--top-k", "2",
                                    "--outfmt", "sam", "--device", "cpu", "--no-progress"])
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("@HD\tVN:1.6") and "\n@PG\tID:swath" in run.stdout
    path = tmp_path / "r.sam"
    path.write_text(run.stdout)
    assert len(read_back(path)) == len(swath.open(out).aligned_rows())
    paf = CliRunner().invoke(main, ["inspect", out, "--format", "paf", "--cigar-m"])
    assert paf.exit_code == 0, paf.output
    cigars = [line.split("\t")[-1] for line in paf.stdout.splitlines()]
    assert cigars and all(re.fullmatch(r"cg:Z:(\d+[MID])+", c) for c in cigars)
    assert swath.FORMATS["search"][-2:] == swath.FORMATS["allpairs"][-2:] == ("sam", "paf")


@needs_samtools
@pytest.mark.parametrize("mode", ["local", "semiglobal", "global"])
def test_swath_pairs_writes_sam_that_samtools_reads_back(inputs, tmp_path, restore_logging,
                                                         mode):
    names, seqs = _fasta(inputs / "db.fasta")
    reads = [(f"r{i}", s[3:-2] if i % 2 else "TTGCA" + s[5:]) for i, s in enumerate(seqs)]
    write_fasta(tmp_path / "reads.fasta", reads)
    (tmp_path / "pairs.tsv").write_text("".join(f"r{i}\t{names[i]}\n" for i in range(len(reads)))
                                        + f"r0\t{names[1]}\n")
    out, sam = str(tmp_path / "p.zarr"), tmp_path / "p.sam"
    argv = ["pairs", "--dna", str(tmp_path / "reads.fasta"), str(inputs / "db.fasta"),
            "--pairs", str(tmp_path / "pairs.tsv"), "-o", out, "--mode", mode, "--device",
            "cpu", "--chunk", "5", "--no-progress"]
    run = CliRunner().invoke(main, [*argv, "--out", str(sam)])
    assert run.exit_code == 0, run.output
    rerun = CliRunner().invoke(main, argv)
    assert rerun.exit_code == 0 and rerun.stderr == (
        f"swath: {out} was complete already (nothing to run): {len(reads) + 1} pairs\n")
    result = swath.open(out)
    records = read_back(sam)
    assert len(records) == len(result) == len(reads) + 1
    assert [(r[0], r[1], r[2], int(r[3]) - 1) for r in records] == [
        (q, "256" if k == len(reads) else "0", t, s) for k, (q, t, s) in enumerate(zip(
            result.query_name, result.target_name, result.target_start.tolist(), strict=True))]
    rows = AlignedRows(result.query_name, np.array([len(s) for _, s in reads] + [len(reads[0][1])]),
                       result.target_name, np.array([len(seqs[i]) for i in result.target_index]),
                       result.score, result.query_start, result.query_end, result.target_start,
                       result.target_end, result.cigar, mode,
                       lambda i: reads[int(result.query_index[i])][1])
    check_sam(tmp_path / "again.sam", rows, PrintOptions(), dna=True)
    assert sam.read_text() == "".join(result.lines("sam", PrintOptions(
        command=sam.read_text().split("CL:")[1].split("\n")[0])))
    paf = [line.split("\t") for line in "".join(result.lines("paf")).splitlines()]
    assert [(f[0], int(f[2]), f[5], int(f[7]), f[-1]) for f in paf] == [
        (q, a, t, b, f"cg:Z:{c}") for q, a, t, b, c in zip(
            result.query_name, result.query_start.tolist(), result.target_name,
            result.target_start.tolist(), result.cigar, strict=True)]
    tsv = [line.split("\t") for line in "".join(swath.report(out)).splitlines()]
    assert [(f[0], f[1], f[-2], f[-1]) for f in tsv] == [
        (q, t, str(s), c) for q, t, s, c in zip(result.query_name, result.target_name,
                                               result.score.tolist(), result.cigar, strict=True)]
    objects = [json.loads(line) for line in swath.report(out, "json")]
    assert [o["cigar"] for o in objects] == list(result.cigar)
    assert "".join(swath.report(out, "text")).count("# Score:") == len(result)


@pytest.mark.parametrize("module", ["swath.results.alignments", "swath.results.text_columns"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


# (value, as Debian's blastp 2.12.0+ printed it in -outfmt 6), values recomputed from the
# same hits' scores; the bands' edges from NCBI's GetScoreString and tabular.cpp
@pytest.mark.parametrize(("value", "printed"), [
    (1e-200, "0.0"), (1.429e-110, "1.43e-110"), (2.4300e-60, "2.43e-60"),
    (3.7637e-08, "3.76e-08"), (8.9e-4, "8.90e-04"), (0.0009, "0.001"), (0.0463, "0.046"),
    (0.43469, "0.43"), (5.2, "5.2"), (9.96, "10.0"), (13.53, "14"), (1940.2, "1940"),
])
def test_evalues_print_as_blastp_prints_them(value, printed):
    assert blast_evalue(value) == printed


@pytest.mark.parametrize(("value", "printed"), [
    (8.81, " 8.8"), (10.04, "10.0"), (87.84, "87.8"), (99.9, "99.9"), (99.94, " 99"),
    (302.9, "302"), (15614.6, "15614"), (102800.4, "1.028e+05"),
])
def test_bit_scores_print_as_blastp_prints_them(value, printed):
    assert blast_bitscore(value) == printed


@needs_samtools
def test_query_names_sam_does_not_allow_are_rewritten_with_a_warning(tmp_path, caplog):
    """A QNAME is 1 to 254 of the characters ! to ? and A to ~: a longer name, or one with
    ``@`` or a letter beyond ASCII, is written with each other character as ``_`` and cut
    at 254, once warned of; samtools reads every record back (its own check of long names
    included), and the names it may keep stay as they are."""
    long = "q" * 300
    aln = swath.Alignment(8, 0, 4, 0, 4, "4=", "local")
    rows = rows_of([(long, "ACGT", "r1", "ACGT", aln), ("x@y", "ACGT", "r1", "ACGT", aln),
                    ("é1", "ACGT", "r1", "ACGT", aln), ("ok|1:2", "ACGT", "r1", "ACGT", aln)])
    with caplog.at_level("WARNING", logger="swath"):
        records = read_back(sam_file(tmp_path / "n.sam", rows, PrintOptions()))
    assert [r[0] for r in records] == ["q" * 254, "x_y", "_1", "ok|1:2"]
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith("3 query names are not a SAM QNAME (1 to 254 of the characters ! "
                           "to ? and A to ~): written with each other character as _")


# ---------------------------------------------------------------------------------
# Base qualities: FASTQ's QUAL on the records that write SEQ, FASTA's *


def reads_file(path: Path, reads: list[tuple[str, str, str]], fmt: str, gz: bool = False
               ) -> Path:
    """``(name, sequence, qualities)`` reads written as FASTQ, or as FASTA (without
    their qualities); gzip'd if ``gz``."""
    if fmt == "fastq":
        text = "".join(f"@{name} read {name}\n{seq}\n+\n{qual}\n" for name, seq, qual in reads)
    else:
        text = "".join(f">{name} read {name}\n{seq}\n" for name, seq, _ in reads)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


def with_qualities(seqs: list[tuple[str, str]], seed: int) -> list[tuple[str, str, str]]:
    """Each ``(name, sequence)`` with random qualities: every character ``!`` to ``~``."""
    rng = np.random.default_rng(seed)
    return [(name, seq, "".join(map(chr, rng.integers(33, 127, len(seq)))))
            for name, seq in seqs]


def check_qualities(sam: Path, reads: list[tuple[str, str, str]], fastq: bool) -> None:
    """samtools reads ``sam`` back: each read's one primary record holds its sequence as
    SEQ and its FASTQ qualities as QUAL (``*`` from FASTA); every secondary record SEQ
    and QUAL ``*``; some of each."""
    given = {name: (seq, qual) for name, seq, qual in reads}
    records = read_back(sam)
    primary = [r for r in records if not int(r[1]) & SECONDARY]
    secondary = [r for r in records if int(r[1]) & SECONDARY]
    assert primary and secondary
    assert len({r[0] for r in primary}) == len(primary)
    for r in primary:
        seq, qual = given[r[0]]
        assert r[9:11] == [seq, qual if fastq else "*"], r
    assert all(r[9:11] == ["*", "*"] for r in secondary)


@needs_samtools
def test_sam_writes_qualities_where_it_writes_seq(tmp_path, caplog):
    """QUAL on the primary record and on the first row of a query without an alignment;
    ``*`` on secondary rows, rows of a query without qualities, and qualities that are no
    QUAL (a warning says how many)."""
    none = swath.Alignment(0, 0, 0, 0, 0, "", "local")
    aln = swath.Alignment(8, 0, 4, 0, 4, "4=", "local")
    rows = rows_of([("a", "ACGT", "r1", "ACGT", aln), ("a", "ACGT", "r2", "ACGT", aln),
                    ("b", "GGGG", "r1", "ACGT", none), ("b", "GGGG", "r2", "ACGT", none),
                    ("c", "ACGT", "r1", "ACGT", aln), ("d", "ACGT", "r1", "ACGT", aln),
                    ("e", "ACGT", "r1", "ACGT", aln)])
    quals = {"a": "I#!~", "b": "++@5", "c": None, "d": "II I", "e": "III"}
    rows = AlignedRows(**{**vars(rows), "query_quality": lambda i: quals[rows.query_name[i]]})
    with caplog.at_level("WARNING", logger="swath"):
        records = read_back(sam_file(tmp_path / "q.sam", rows, PrintOptions()))
    assert [(r[0], r[1], r[9], r[10]) for r in records] == [
        ("a", "0", "ACGT", "I#!~"), ("a", "256", "*", "*"), ("b", "4", "GGGG", "++@5"),
        ("b", "4", "*", "*"), ("c", "0", "ACGT", "*"), ("d", "0", "ACGT", "*"),
        ("e", "0", "ACGT", "*")]
    [said] = [r.getMessage() for r in caplog.records]
    assert said == ("2 queries' base qualities not a SAM QUAL (one of the characters ! to ~ "
                    "a base): written as *")
    assert sam_quals(lambda i: "I", 0, ["A"]) == (["I"], 0)


def search_reads(inputs: Path) -> list[tuple[str, str, str]]:
    """Reads of the database's records (its first four have near copies: hits beyond the
    best, secondary records)."""
    _, seqs = _fasta(inputs / "db.fasta")
    return with_qualities([(f"r{i}", seqs[i][3:-2]) for i in range(6)], 51)


@needs_samtools
@pytest.mark.parametrize("fmt", ["fastq", "fasta"])
def test_a_search_writes_the_queries_qualities_as_qual(inputs, tmp_path, restore_logging, fmt):
    """Printed as it runs, from the store (``swath inspect``) and held in this process;
    the same search over a FASTQ whose qualities changed is another job."""
    reads = search_reads(inputs)
    path = reads_file(tmp_path / f"q.{fmt}", reads, fmt)
    out, sam = str(tmp_path / "s.zarr"), tmp_path / "s.sam"
    argv = ["search", "--dna", str(path), str(inputs / "db.fasta"), "-o", out, "--top-k", "3",
            "--device", "cpu", "--no-progress"]
    run = CliRunner().invoke(main, [*argv, "--out", str(sam)])
    assert run.exit_code == 0, run.output
    check_qualities(sam, reads, fmt == "fastq")
    shown = CliRunner().invoke(main, ["inspect", out, "--format", "sam"])
    assert shown.exit_code == 0, shown.output
    (tmp_path / "again.sam").write_text(shown.stdout)
    check_qualities(tmp_path / "again.sam", reads, fmt == "fastq")
    (Path(out) / "score" / "c" / "0" / "0").unlink()      # a damaged unit, resumed
    swath.resume(out, device="cpu")
    assert CliRunner().invoke(main, ["inspect", out, "--format", "sam"]).stdout == shown.stdout
    held = swath.search(str(path), str(inputs / "db.fasta"), DNA, top_k=3, device="cpu")
    assert held.path is None
    (tmp_path / "held.sam").write_text("".join(held.lines("sam")))
    check_qualities(tmp_path / "held.sam", reads, fmt == "fastq")
    if fmt == "fastq":
        reads_file(path, [(n, s, q[::-1]) for n, s, q in reads], fmt)
        rerun = CliRunner().invoke(main, argv)
        assert rerun.exit_code != 0 and "holds another search (other queries" in rerun.stderr


def pairs_reads(inputs: Path) -> tuple[list[tuple[str, str, str]], str]:
    """Reads of the database's records and a pairs file: each read with its record, and
    ``r0`` with two more (its secondary records)."""
    names, seqs = _fasta(inputs / "db.fasta")
    reads = with_qualities([(f"r{i}", s[3:-2] if i % 2 else "TTGCA" + s[5:])
                            for i, s in enumerate(seqs)], 52)
    pairs = [(f"r{i}", names[i]) for i in range(len(reads))] + [("r0", names[1]),
                                                                ("r0", names[2])]
    return reads, "".join(f"{q}\t{t}\n" for q, t in pairs)


@needs_samtools
@pytest.mark.parametrize(("fmt", "gz"), [("fastq", False), ("fastq", True), ("fasta", False)],
                         ids=["fastq", "fastq-gzip", "fasta"])
def test_pairs_write_the_queries_qualities_as_qual(inputs, tmp_path, restore_logging,
                                                   monkeypatch, fmt, gz):
    """The queries taken in as pieces of a few records on the workers (a gzip file
    streamed), printed as the job runs and from its store; held in this process; a
    FASTQ changed since it was taken in is refused."""
    from swath.engine import intake

    monkeypatch.setattr(intake, "PIECE_BYTES", 150)
    reads, pairs = pairs_reads(inputs)
    path = reads_file(tmp_path / f"r.{fmt}", reads, fmt, gz)
    (tmp_path / "pairs.tsv").write_text(pairs)
    out, sam = str(tmp_path / "p.zarr"), tmp_path / "p.sam"
    argv = ["pairs", "--dna", str(path), str(inputs / "db.fasta"), "--pairs",
            str(tmp_path / "pairs.tsv"), "-o", out, "--device", "cpu", "--chunk", "4",
            "--no-progress"]
    run = CliRunner().invoke(main, [*argv, "--out", str(sam)])
    assert run.exit_code == 0, run.output
    check_qualities(sam, reads, fmt == "fastq")
    assert swath.open(out).store.pieces("query") > 3
    shown = CliRunner().invoke(main, ["inspect", out, "--format", "sam"])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.split("@PG")[1].split("\n", 1)[1] == \
        sam.read_text().split("@PG")[1].split("\n", 1)[1]
    if fmt == "fastq":      # query pieces lost, taken in again by a resume: the same SAM
        from swath.storage.pairs import PairsStore

        store = PairsStore.open(out, mode="r+")
        store.unmark("query piece", [0, 2])
        for k in (0, 2):
            shutil.rmtree(Path(out) / "work" / "query_pieces" / str(k))
        store.group.attrs["swath"] = {key: value for key, value in store.attrs.items()
                                      if key not in ("pairs", "streamed")} | {"complete": False}
        swath.resume(out, device="cpu")
        again = CliRunner().invoke(main, ["inspect", out, "--format", "sam"])
        assert again.exit_code == 0 and again.stdout == shown.stdout
    names = [line.split("\t") for line in pairs.splitlines()]
    held = swath.align_pairs(str(path), str(inputs / "db.fasta"), DNA, device="cpu",
                             pairs=([q for q, _ in names], [t for _, t in names]))
    assert held.path is None
    (tmp_path / "held.sam").write_text("".join(held.lines("sam")))
    check_qualities(tmp_path / "held.sam", reads, fmt == "fastq")
    if fmt == "fastq" and not gz:
        reads_file(path, [(n, s, q[::-1]) for n, s, q in reads], fmt)
        rerun = CliRunner().invoke(main, argv)
        assert rerun.exit_code != 0 and "has changed since it was taken in" in rerun.stderr


@needs_samtools
@pytest.mark.parametrize("fmt", ["fastq", "fasta"])
def test_allpairs_writes_the_sequences_qualities_as_qual(tmp_path, restore_logging,
                                                         monkeypatch, fmt):
    """Sequences taken in as pieces of a few records, each kept sorted by length: the
    query of a pair (its earlier record) has its own qualities, printed as the job runs
    and from its store."""
    from swath.engine import intake

    monkeypatch.setattr(intake, "PIECE_BYTES", 200)
    rng = np.random.default_rng(53)
    base = "".join(rng.choice(list("ACGT"), 70))
    seqs = [(f"s{i}", base[i:70 - 2 * (i % 3)]) for i in range(8)]
    seqs += [(f"u{i}", "".join(rng.choice(list("ACGT"), int(n))))
             for i, n in enumerate(rng.integers(20, 80, 4))]
    reads = with_qualities(seqs, 54)
    path = reads_file(tmp_path / f"a.{fmt}", reads, fmt)
    out, sam = str(tmp_path / "a.zarr"), tmp_path / "a.sam"
    run = CliRunner().invoke(main, ["allpairs", "--dna", str(path), "-o", out,
                                    "--min-identity", "0.8", "--device", "cpu",
                                    "--no-progress", "--out", str(sam)])
    assert run.exit_code == 0, run.output
    check_qualities(sam, reads, fmt == "fastq")
    assert swath.open(out).store.pieces("sequence") > 3
    shown = CliRunner().invoke(main, ["inspect", out, "--format", "sam"])
    assert shown.exit_code == 0, shown.output
    (tmp_path / "again.sam").write_text(shown.stdout)
    check_qualities(tmp_path / "again.sam", reads, fmt == "fastq")
