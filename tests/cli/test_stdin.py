"""``-`` reads a command's sequences from standard input (plain or gzip), as a file would
be read; errors name ``stdin`` and its line."""

from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

import swath
from swath.cli import main
from tests.helpers import write_fasta

SEQS = ["ACGTACGTTAGCATGCAAGT", "ACGTACGTTAGCTTGCAAGT", "ACGAACGTTAGCATGCAAGT"]
TEXT = "".join(f">s{i}\n{s}\n" for i, s in enumerate(SEQS))


def invoke(*argv: str, given: bytes):
    return CliRunner().invoke(main, [*argv], input=given)


@pytest.mark.parametrize("zipped", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("command", ["align", "search", "allpairs", "pairs"])
def test_a_dash_reads_standard_input_as_the_file(command, zipped, tmp_path):
    fasta = write_fasta(tmp_path / "s.fasta", [(f"s{i}", s) for i, s in enumerate(SEQS)])
    given = gzip.compress(TEXT.encode()) if zipped else TEXT.encode()
    common = ["--dna", "--device", "cpu", "--no-progress"]
    argv = {"align": ["align", "-", str(fasta), "--format", "tsv"],
            "search": ["search", "-", str(fasta), "--mode", "global", "--outfmt", "tsv"],
            "allpairs": ["allpairs", "-", "--min-identity", "0.8", "--format", "tsv"],
            "pairs": ["pairs", "-", str(fasta), "--outfmt", "tsv"]}[command]
    store = [] if command == "align" else ["-o", str(tmp_path / "r.zarr")]
    from_stdin = invoke(*argv, *store, *common, given=given)
    assert from_stdin.exit_code == 0, from_stdin.output
    argv[argv.index("-")] = str(fasta)
    store = [] if command == "align" else ["-o", str(tmp_path / "f.zarr")]
    from_file = invoke(*argv, *store, *common, given=b"")
    assert from_file.exit_code == 0, from_file.output
    assert from_stdin.stdout == from_file.stdout != ""


def test_errors_in_standard_input_name_it_and_the_line(tmp_path):
    fasta = write_fasta(tmp_path / "s.fasta", [("s0", SEQS[0])])
    run = invoke("align", "-", str(fasta), "--dna", given=b">a\nACGT\nACJT\n")
    assert run.exit_code == 2
    assert run.output == ("swath: error: stdin line 3: residue 'J' is not in the DNA "
                          "alphabet (use --wildcard to map it to N)\n")


def test_read_sequences_of_a_dash_reads_standard_input(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode())))
    seqs = swath.read_sequences("-", swath.Scoring.dna().alphabet)
    assert seqs.names == ("s0", "s1", "s2") and seqs.source == "stdin"
