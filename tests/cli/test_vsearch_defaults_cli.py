"""swath allpairs --vsearch-defaults and --end-gap-open / --end-gap-extend: the scheme a
store records, what is refused beside them, and vsearch's own pairs where it is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

import swath
from swath.cli import main
from tests.helpers import DNA, write_fasta


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def fasta(tmp_path_factory) -> Path:
    """16 amplicon-like sequences: copies of two ancestors with substitutions, indels and
    a few residues more or fewer at either end (terminal gaps decide their scores)."""
    rng = np.random.default_rng(34)
    seqs = []
    for size in (90, 120):
        ancestor = rng.integers(0, 4, size).astype(np.uint8)
        for _ in range(8):
            s = ancestor.tolist()
            for _ in range(int(rng.integers(0, 3))):
                s[int(rng.integers(len(s)))] = int(rng.integers(4))
            if rng.random() < 0.4:
                del s[int(rng.integers(10, len(s) - 10))]
            s = s[int(rng.integers(0, 3)):len(s) - int(rng.integers(0, 3))]
            seqs.append(DNA.alphabet.decode(np.array(s, dtype=np.uint8)))
    root = tmp_path_factory.mktemp("vsearch")
    return write_fasta(root / "amplicons.fasta", [(f"a{k}", s) for k, s in enumerate(seqs)])


def run(fasta: Path, out: Path, *extra: str) -> Result:
    return invoke("allpairs", str(fasta), "-o", str(out), "--device", "cpu", "--no-progress",
                  "--block", "8", *extra)


def test_vsearch_defaults_record_vsearchs_scheme(fasta, tmp_path):
    done = run(fasta, tmp_path / "v.zarr", "--vsearch-defaults", "--min-identity", "0.95")
    assert done.exit_code == 0, done.output
    inputs = swath.open(str(tmp_path / "v.zarr")).store.attrs["inputs"]
    assert swath.Scoring.from_dict(inputs["scoring"]) == swath.Scoring.vsearch()
    assert (inputs["mode"], inputs["iddef"]) == ("global", 2)


@pytest.mark.parametrize("clash", [["--gap-open", "20"], ["--mode", "global"], ["--iddef", "2"],
                                   ["--dna", "--match", "1"],
                                   ["--end-gap-extend", "1"],
                                   ["--matrix", "BLOSUM62"]])
def test_vsearch_defaults_beside_what_they_set_are_refused(fasta, tmp_path, clash):
    refused = run(fasta, tmp_path / "r.zarr", "--vsearch-defaults", *clash)
    assert refused.exit_code == 2
    assert refused.stderr.startswith("swath: error: --vsearch-defaults sets ")
    assert clash[-2] in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_end_gap_options_make_the_scheme_and_a_changed_one_is_refused(fasta, tmp_path):
    out = tmp_path / "e.zarr"
    first = run(fasta, out, "--dna", "--end-gap-open", "0", "--end-gap-extend", "1")
    assert first.exit_code == 0, first.output
    recorded = swath.Scoring.from_dict(swath.open(str(out)).store.attrs["inputs"]["scoring"])
    assert recorded == DNA.with_end_gaps(0, 1)
    other = run(fasta, out, "--dna", "--end-gap-open", "1", "--end-gap-extend", "1")
    assert other.exit_code == 2 and "other sequences, scoring or options" in other.stderr
    local = run(fasta, tmp_path / "l.zarr", "--dna", "--end-gap-open", "0", "--mode", "local")
    assert local.exit_code == 2 and "global mode only" in local.stderr


@pytest.mark.skipif(shutil.which("vsearch") is None, reason="vsearch is not installed")
def test_vsearch_defaults_keep_vsearchs_pairs_with_its_raw_scores(fasta, tmp_path):
    found = subprocess.run(
        ["vsearch", "--allpairs_global", str(fasta), "--id", "0.95", "--threads", "1",
         "--userout", "-", "--userfields", "query+target+raw", "--quiet"],
        capture_output=True, text=True, check=True).stdout
    theirs = {frozenset(line.split("\t")[:2]): int(line.split("\t")[2])
              for line in found.splitlines()}
    done = run(fasta, tmp_path / "v.zarr", "--vsearch-defaults", "--min-identity", "0.95")
    assert done.exit_code == 0, done.output
    rows = [dict(zip(swath.ALLPAIRS_COLUMNS, row, strict=True))
            for row in swath.open(str(tmp_path / "v.zarr")).to_table()]
    ours = {frozenset((row["query_name"], row["target_name"])): row["score"] for row in rows}
    assert len(theirs) > 10 and ours == theirs


@pytest.mark.skipif(shutil.which("vsearch") is None, reason="vsearch is not installed")
@pytest.mark.parametrize("budget", [None, 4])
def test_blast6out_is_vsearchs_byte_for_byte(fasta, tmp_path, monkeypatch, budget):
    """``--format blast6out`` writes what vsearch --allpairs_global --blast6out writes
    (one thread), byte for byte: the same pairs, lines, identities and order (a block a
    query in input order, the highest identity first, then the earliest target); the
    tsv's lines are the same with the score and the CIGAR. With ``budget``, the store's
    pairs are read a chunk of 4 at a time and printed a run of queries at a time."""
    found = subprocess.run(
        ["vsearch", "--allpairs_global", str(fasta), "--id", "0.95", "--threads", "1",
         "--blast6out", "-", "--quiet"], capture_output=True, text=True, check=True).stdout
    assert all(len(line.split("\t")) == 12 for line in found.splitlines())
    assert len(found.splitlines()) > 10
    if budget is not None:
        monkeypatch.setattr("swath.results.allpairs.PRINT_PAIRS", budget)
    done = run(fasta, tmp_path / "v.zarr", "--vsearch-defaults", "--min-identity", "0.95",
               "--format", "blast6out")
    assert done.exit_code == 0, done.output
    assert done.stdout == found
    tsv = run(fasta, tmp_path / "v.zarr", "--vsearch-defaults", "--min-identity", "0.95",
              "--format", "tsv").stdout.splitlines()
    assert done.stdout.splitlines() == ["\t".join(line.split("\t")[:12]) for line in tsv]
