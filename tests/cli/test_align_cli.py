"""``swath align``: outputs, options and one-line errors (click's CliRunner)."""

from __future__ import annotations

import doctest
import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import swath
from swath.cli import main, options
from swath.cli.options import build_scoring
from tests.helpers import write_fasta

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
EXAMPLES = ROOT / "examples"

PROTEIN_Q = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQ"
# Two substitutions, a 3-residue deletion and a 2-residue insertion, inside flanks.
PROTEIN_T = ("GGSW" + PROTEIN_Q[:20] + "W" + PROTEIN_Q[21:30] + PROTEIN_Q[33:45] + "HH"
             + PROTEIN_Q[45:60] + "N" + PROTEIN_Q[61:] + "PPRW")
DNA_Q = "".join(random.Random(7).choices("ACGT", k=100))
# Two inserted bases, a substitution and two deleted bases, inside flanks.
DNA_T = ("TTTT" + DNA_Q[:15] + "GG" + DNA_Q[15:30] + ("A" if DNA_Q[30] != "A" else "C")
         + DNA_Q[31:70] + DNA_Q[72:] + "CCCC")


def fasta(path: Path, *records: tuple[str, str]) -> str:
    """A FASTA file of ``records``, each header with a description after the name."""
    return str(write_fasta(path, [(f"{name} some description", seq) for name, seq in records]))


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def protein_files(tmp_path: Path) -> tuple[str, str]:
    return (fasta(tmp_path / "q.fasta", ("q1", PROTEIN_Q), ("q2", "WWWW")),
            fasta(tmp_path / "t.fasta", ("t1", PROTEIN_T)))


@pytest.fixture
def dna_files(tmp_path: Path) -> tuple[str, str]:
    return (fasta(tmp_path / "q.fa", ("dq", DNA_Q)), fasta(tmp_path / "t.fa", ("dt", DNA_T)))


CASES = {
    "protein": ((), PROTEIN_Q, PROTEIN_T, ("q1", "t1"), swath.Scoring.protein("BLOSUM62", 11, 1)),
    "dna": (("--dna",), DNA_Q, DNA_T, ("dq", "dt"), swath.Scoring.dna(2, -3, 5, 2)),
}


def _files(kind: str, protein_files: tuple[str, str], dna_files: tuple[str, str]
           ) -> tuple[str, str]:
    return protein_files if kind == "protein" else dna_files


def text_rows(output: str, query_name: str, target_name: str) -> tuple[list[tuple], list[tuple]]:
    """(start, row, end) of each query and target line of the pairwise view."""
    rows: tuple[list[tuple], list[tuple]] = ([], [])
    for line in output.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] in (query_name, target_name):
            side = rows[0] if fields[0] == query_name else rows[1]
            side.append((int(fields[1]), fields[2], int(fields[3])))
    return rows


def header(output: str) -> dict[str, str]:
    values = {}
    for line in output.splitlines():
        if line.startswith("# ") and ":" in line:
            key, value = line[2:].split(":", 1)
            values[key] = value.strip()
    return values


def assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("swath: error: ")
    for needle in needles:
        assert needle in lines[0]


# ---------------------------------------------------------------------------------
# Outputs


@pytest.mark.parametrize("kind", ["protein", "dna"])
def test_text(kind: str, protein_files: tuple[str, str], dna_files: tuple[str, str]) -> None:
    options, q, t, (qid, tid), scoring = CASES[kind]
    expected = swath.align(q, t, scoring=scoring)
    result = run("align", *_files(kind, protein_files, dna_files), *options)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    info = header(result.output)
    assert info["Query"].startswith(f"{qid} ({len(q)} residues)")
    assert info["Target"].startswith(f"{tid} ({len(t)} residues)")
    assert info["Score"] == str(expected.score)
    assert info["CIGAR"] == expected.cigar
    assert info["Mode"].startswith("local")
    assert info["Matrix"] == scoring.name
    assert info["Length"] == str(expected.length)
    assert info["Identity"].startswith(f"{expected.matches}/{expected.length} (")
    assert info["Query range"].startswith(f"{expected.query_start + 1}-{expected.query_end} ")
    assert info["Target range"].startswith(f"{expected.target_start + 1}-{expected.target_end} ")

    q_rows, t_rows = text_rows(result.output, qid, tid)
    assert len(q_rows) == len(t_rows) == -(-expected.length // 60) > 1
    assert all(len(row) == 60 for _, row, _ in q_rows[:-1])
    q_text = "".join(row for _, row, _ in q_rows)
    t_text = "".join(row for _, row, _ in t_rows)
    assert q_text.replace("-", "") == q[expected.query_start:expected.query_end]
    assert t_text.replace("-", "") == t[expected.target_start:expected.target_end]
    assert (q_rows[0][0], q_rows[-1][2]) == (expected.query_start + 1, expected.query_end)
    assert (t_rows[0][0], t_rows[-1][2]) == (expected.target_start + 1, expected.target_end)
    # Each line starts one past where the previous one ended.
    for rows in (q_rows, t_rows):
        assert all(b[0] == a[2] + 1 for a, b in itertools.pairwise(rows))


@pytest.mark.parametrize("kind", ["protein", "dna"])
def test_json(kind: str, protein_files: tuple[str, str], dna_files: tuple[str, str]) -> None:
    options, q, t, (qid, tid), scoring = CASES[kind]
    expected = swath.align(q, t, scoring=scoring)
    result = run("align", *_files(kind, protein_files, dna_files), *options, "--format", "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record == {
        "query_name": qid, "target_name": tid, "score": expected.score,
        "query_start": expected.query_start, "query_end": expected.query_end,
        "target_start": expected.target_start, "target_end": expected.target_end,
        "cigar": expected.cigar, "identity": pytest.approx(expected.identity), "mode": "local",
    }


@pytest.mark.parametrize("kind", ["protein", "dna"])
def test_tsv(kind: str, protein_files: tuple[str, str], dna_files: tuple[str, str]) -> None:
    options, q, t, (qid, tid), scoring = CASES[kind]
    expected = swath.align(q, t, scoring=scoring)
    result = run("align", *_files(kind, protein_files, dna_files), *options, "--format", "tsv")
    assert result.exit_code == 0, result.output
    head, row, *rest = result.stdout.splitlines()
    assert rest == []
    assert head.split("\t") == ["query_name", "target_name", "score", "query_start", "query_end",
                                "target_start", "target_end", "cigar", "identity", "mode"]
    values = dict(zip(head.split("\t"), row.split("\t"), strict=True))
    assert values["query_name"] == qid and values["target_name"] == tid
    assert int(values["score"]) == expected.score
    assert [int(values[k]) for k in ("query_start", "query_end", "target_start", "target_end")
            ] == [expected.query_start, expected.query_end, expected.target_start,
                  expected.target_end]
    assert values["cigar"] == expected.cigar
    assert float(values["identity"]) == pytest.approx(expected.identity)
    assert values["mode"] == "local"


@pytest.mark.parametrize("mode", ["global", "semiglobal"])
def test_modes(mode: str, dna_files: tuple[str, str]) -> None:
    scoring = swath.Scoring.dna(2, -3, 5, 2)
    expected = swath.align(DNA_Q, DNA_T, scoring=scoring, mode=mode)
    result = run("align", *dna_files, "--dna", "--mode", mode, "--format", "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["mode"] == mode
    assert record["score"] == expected.score
    assert record["cigar"] == expected.cigar
    assert (record["query_start"], record["query_end"]) == (0, len(DNA_Q))
    if mode == "global":
        assert (record["target_start"], record["target_end"]) == (0, len(DNA_T))
    else:
        assert record["target_start"] == expected.target_start > 0

    text = run("align", *dna_files, "--dna", "--mode", mode)
    assert header(text.output)["Mode"].startswith(mode)
    q_rows, t_rows = text_rows(text.output, "dq", "dt")
    assert "".join(r for _, r, _ in q_rows).replace("-", "") == DNA_Q
    aligned_target = DNA_T[expected.target_start:expected.target_end]
    assert "".join(r for _, r, _ in t_rows).replace("-", "") == aligned_target


def test_scoring_options_reach_the_alignment(dna_files: tuple[str, str]) -> None:
    args = ["--dna", "--match", "1", "--mismatch", "-1", "--gap-open", "0", "--gap-extend", "3"]
    result = run("align", *dna_files, *args, "--format", "json")
    assert result.exit_code == 0, result.output
    expected = swath.align(DNA_Q, DNA_T, scoring=swath.Scoring.dna(1, -1, 0, 3))
    assert json.loads(result.stdout)["score"] == expected.score
    text = run("align", *dna_files, *args).output
    assert header(text)["Matrix"] == "DNA1/-1"
    assert header(text)["Gap costs"].startswith("open 0, extend 3")


def test_protein_matrix_and_gaps(protein_files: tuple[str, str]) -> None:
    result = run("align", *protein_files, "--matrix", "pam30", "--gap-open", "9",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    expected = swath.align(PROTEIN_Q, PROTEIN_T, scoring=swath.Scoring.protein("PAM30", 9, 1))
    assert json.loads(result.stdout)["score"] == expected.score


def test_only_the_first_record_is_read(tmp_path: Path) -> None:
    q = fasta(tmp_path / "q.fa", ("first", "MKVLAW"), ("second", "bad residue 1!"))
    t = fasta(tmp_path / "t.fa", ("other", "MKVLAW"))
    result = run("align", q, t, "--format", "tsv")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith("first\tother\t")


def test_wildcard(tmp_path: Path) -> None:
    q = fasta(tmp_path / "q.fa", ("q", "MKVJLAW"))
    t = fasta(tmp_path / "t.fa", ("t", "MKVXLAW"))
    refused = run("align", q, t)
    assert_one_line_error(refused, "q.fa line 2", "'J'", "--wildcard")
    result = run("align", q, t, "--wildcard", "--format", "json")
    assert result.exit_code == 0, result.output
    expected = swath.align("MKVXLAW", "MKVXLAW", scoring=swath.Scoring.protein())
    assert json.loads(result.stdout)["score"] == expected.score

    dq = fasta(tmp_path / "dq.fa", ("dq", "ACGTRACGT"))
    dt = fasta(tmp_path / "dt.fa", ("dt", "ACGTAACGT"))
    assert run("align", dq, dt, "--dna").exit_code == 2
    result = run("align", dq, dt, "--dna", "--wildcard", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["cigar"] == "4=1X4="


NCBI_MATRIX = """\
# A small made-up matrix in NCBI format
   A  C  G  T
A  5 -4 -4 -4
C -4  5 -4 -4
G -4 -4  5 -4
T -4 -4 -4  5
"""


def test_custom_matrix_file(tmp_path: Path, dna_files: tuple[str, str]) -> None:
    path = tmp_path / "small.mat"
    path.write_text(NCBI_MATRIX)
    scoring = swath.Scoring.from_file(path, gap_open=6, gap_extend=2)
    expected = swath.align(DNA_Q, DNA_T, scoring=scoring)
    result = run("align", *dna_files, "--matrix", str(path), "--gap-open", "6",
                 "--gap-extend", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["score"] == expected.score
    text = run("align", *dna_files, "--matrix", str(path), "--gap-open", "6",
               "--gap-extend", "2")
    assert header(text.output)["Matrix"] == "small.mat"


def test_example_files() -> None:
    query, target = EXAMPLES / "query.fasta", EXAMPLES / "target.fasta"
    result = run("align", str(query), str(target))
    assert result.exit_code == 0, result.output
    info = header(result.output)
    assert int(info["Score"]) > 400
    assert "D" in info["CIGAR"] or "I" in info["CIGAR"]
    assert "X" in info["CIGAR"]


def test_verbose_and_progress(dna_files: tuple[str, str]) -> None:
    quiet = run("align", *dna_files, "--dna")
    assert quiet.stderr == ""
    verbose = run("align", *dna_files, "--dna", "-v")
    assert verbose.exit_code == 0
    assert "swath: info: " in verbose.stderr and "aligned dq against dt" in verbose.stderr
    progress = run("align", *dna_files, "--dna", "--progress", "--format", "json")
    assert progress.exit_code == 0
    assert "aligning dq (100 residues) against dt" in progress.stderr
    assert json.loads(progress.stdout)["query_name"] == "dq"


def test_device_cpu(dna_files: tuple[str, str]) -> None:
    result = run("align", *dna_files, "--dna", "--device", "cpu", "--format", "json")
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------------------------
# Errors: one line, exit status 2, no traceback


def test_missing_file(tmp_path: Path, dna_files: tuple[str, str]) -> None:
    missing = str(tmp_path / "nope.fasta")
    assert_one_line_error(run("align", missing, dna_files[1], "--dna"), missing, "no such file")
    assert_one_line_error(run("align", dna_files[0], missing, "--dna"), missing)


def test_missing_argument(dna_files: tuple[str, str]) -> None:
    assert_one_line_error(run("align", dna_files[0]), "Missing argument", "B.fasta")


def test_not_fasta(tmp_path: Path, dna_files: tuple[str, str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    assert_one_line_error(run("align", str(bad), dna_files[1], "--dna"), "bad.txt line 1",
                          "not FASTA")


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("", ["empty file"]),
        ("\n\n", ["empty file"]),
        (">q1\n>q2\nACGT\n", ["line 1", "'q1' has no residues"]),
        (">q1\nMKTAY\nIAJQR\n", ["line 3", "residue 'J'", "--wildcard"]),
        ("@r1\nMKTAY\n+\nII\n", ["line 4", "quality"]),
    ],
)
def test_bad_file_contents(tmp_path: Path, protein_files: tuple[str, str], content: str,
                           needles: list[str]) -> None:
    bad = tmp_path / "bad.fasta"
    bad.write_text(content)
    assert_one_line_error(run("align", str(bad), protein_files[1]), "bad.fasta", *needles)


def test_directory_as_file(tmp_path: Path, dna_files: tuple[str, str]) -> None:
    assert_one_line_error(run("align", str(tmp_path), dna_files[1], "--dna"), str(tmp_path))


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--gap-open", "-1"], ["--gap-open", "-1"]),
        (["--gap-extend", "-2"], ["--gap-extend", "-2"]),
        (["--gap-open", "0", "--gap-extend", "0"], ["both 0"]),
        (["--gap-open", "x"], ["--gap-open", "'x'"]),
        (["--matrix", "BLOSUM99"], ["--matrix", "BLOSUM99"]),
        (["--matrix", "./no/such.mat"], ["--matrix", "no/such.mat"]),
        (["--mode", "glocal"], ["--mode", "glocal"]),
        (["--device", "tpu"], ["--device", "tpu"]),
        (["--format", "xml"], ["--format", "xml"]),
        (["--dna", "--matrix", "PAM30"], ["--matrix", "--dna"]),
        (["--match", "3"], ["--match", "--dna"]),
        (["--dna", "--match", "0"], ["--match", "0"]),
        (["--dna", "--mismatch", "2"], ["--mismatch", "2"]),
        (["--no-such-option"], ["--no-such-option"]),
    ],
)
def test_bad_option_values(args: list[str], needles: list[str],
                           protein_files: tuple[str, str]) -> None:
    assert_one_line_error(run("align", *protein_files, *args), *needles)


def test_bad_matrix_file(tmp_path: Path, protein_files: tuple[str, str]) -> None:
    path = tmp_path / "broken.mat"
    path.write_text("this is not a matrix\n1 2 3\n")
    assert_one_line_error(run("align", *protein_files, "--matrix", str(path)), "--matrix",
                          "broken.mat")


def test_unknown_command() -> None:
    assert_one_line_error(run("frobnicate"), "frobnicate")


# ---------------------------------------------------------------------------------
# Entry points


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    return env


def test_python_m_swath_help() -> None:
    done = subprocess.run([sys.executable, "-m", "swath", "--help"], capture_output=True,
                          text=True, env=_env(), check=False)
    assert done.returncode == 0, done.stderr
    assert "align" in done.stdout
    assert "Usage: swath" in done.stdout


def test_python_m_swath_error_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "swath", "align", str(tmp_path / "a.fa"),
                           str(tmp_path / "b.fa")], capture_output=True, text=True,
                          env=_env(), check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"swath: error: {tmp_path / 'a.fa'}: no such file"]


def test_console_entry_runs_exit_handlers_and_keeps_the_status(tmp_path: Path) -> None:
    """``run`` (the console script) skips the interpreter's teardown, not the exit
    handlers, the flushing of output or the exit status."""
    code = ("import atexit, sys; "
            "atexit.register(lambda: print('handlers ran', file=sys.stderr)); "
            "sys.argv = ['swath'] + sys.argv[1:]; "
            "from swath.cli import run; run()")
    done = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True,
                          text=True, env=_env(), check=False)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"swath {swath.__version__}\n", "handlers ran\n")
    done = subprocess.run([sys.executable, "-c", code, "align", str(tmp_path / "a.fa"),
                           str(EXAMPLES / "target.fasta")], capture_output=True, text=True,
                          env=_env(), check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"swath: error: {tmp_path / 'a.fa'}: no such file",
                                        "handlers ran"]
    done = subprocess.run([sys.executable, "-c", code, "align", "--format", "text",
                           str(EXAMPLES / "query.fasta"), str(EXAMPLES / "target.fasta")],
                          capture_output=True, text=True, env=_env(), check=False)
    in_process = run("align", "--format", "text", str(EXAMPLES / "query.fasta"),
                     str(EXAMPLES / "target.fasta"))
    assert done.returncode == 0 and done.stdout == in_process.stdout != ""


def test_cli_import_is_light() -> None:
    code = ("import sys, swath.cli, swath.views; "
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('numba', 'cupy', 'dask', "
            "'zarr')]; "
            "assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(), check=False)
    assert done.returncode == 0, done.stderr


def test_version_and_help() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"swath {swath.__version__}"
    help_text = run("align", "--help").output
    for option in ("--matrix", "--dna", "--match", "--mismatch", "--gap-open", "--gap-extend",
                   "--mode", "--wildcard", "--device", "--verbose", "--progress", "--format"):
        assert option in help_text
    assert "open + k * extend" in help_text
    assert "[default: BLOSUM62]" in help_text


def test_options_doctests() -> None:
    result = doctest.testmod(options)
    assert result.attempted > 0
    assert result.failed == 0


def test_build_scoring_defaults() -> None:
    assert build_scoring() == swath.Scoring.protein("BLOSUM62", 11, 1)
    assert build_scoring(dna=True) == swath.Scoring.dna(2, -3, 5, 2)
    assert build_scoring(dna=True, gap_open=3) == swath.Scoring.dna(2, -3, 3, 2)


def test_the_first_query_against_every_target_then_every_query_with_all_pairs(tmp_path):
    """As EMBOSS water: A's first record against each record of B, in B's order; with
    --all-pairs every record of A in turn; tsv rows under one header, JSON a line each."""
    from click.testing import CliRunner

    from swath.cli import main

    a = tmp_path / "a.fa"
    b = tmp_path / "b.fa"
    a.write_text(">q1\nHEAGAWGHEE\n>q2\nPAW\n")
    b.write_text(">t1\nHEAGAWGHEE\n>t2\nPAWHEAE\n")
    first = CliRunner().invoke(main, ["align", str(a), str(b), "--format", "tsv"])
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    assert lines[0].startswith("query_name\t") and len(lines) == 3
    assert [line.split("\t")[:3] for line in lines[1:]] == [["q1", "t1", "62"],
                                                            ["q1", "t2", "17"]]
    every = CliRunner().invoke(main, ["align", str(a), str(b), "--all-pairs", "--format",
                                      "json"])
    assert every.exit_code == 0, every.output
    rows = [json.loads(line) for line in every.stdout.splitlines()]
    assert [(r["query_name"], r["target_name"]) for r in rows] == [
        ("q1", "t1"), ("q1", "t2"), ("q2", "t1"), ("q2", "t2")]
    text = CliRunner().invoke(main, ["align", str(a), str(b)])
    assert text.stdout.count("# Query:") == 2 and "\n\n# Query:        q1 (10 residues)\n" \
        "# Target:       t2" in text.stdout
