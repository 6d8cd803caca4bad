"""``swath makedb``: the summary line, options and one-line errors (click's CliRunner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from swath.cli import main
from swath.scoring import Scoring
from swath.storage.database import Database
from tests.helpers import write_fasta


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("swath: error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture
def fasta(tmp_path: Path) -> Path:
    return write_fasta(tmp_path / "db.fasta", [("a first", "MKVLA"), ("b", "WW"),
                                               ("c third", "MKV")])


def test_listed_in_help() -> None:
    result = run("--help")
    assert result.exit_code == 0 and "makedb" in result.output


def test_success(tmp_path: Path, fasta: Path) -> None:
    store = tmp_path / "db.swdb"
    result = run("makedb", str(fasta), str(store))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{store}: 3 sequences, 10 residues, 1 partition\n"
    assert result.stderr == ""
    db = Database.open(store)
    protein = Scoring.protein().alphabet
    assert db.alphabet == protein
    assert [protein.decode(db.sequence(i)) for i in range(3)] == ["MKVLA", "WW", "MKV"]
    assert db.names([0, 1, 2]) == ["a", "b", "c"]


def test_dna_partitions_and_wildcard(tmp_path: Path) -> None:
    fasta = tmp_path / "dna.fa"
    fasta.write_text(">x\nACGTACGTAC\n>y\nGGRT\n>z\nTTTTTT\n")
    store = tmp_path / "dna.swdb"
    assert_one_line_error(run("makedb", "--dna", str(fasta), str(store)),
                          "dna.fa line 4: residue 'R' is not in the DNA alphabet",
                          "use --wildcard")
    result = run("makedb", "--dna", "--wildcard", "--partition-residues", "8", str(fasta),
                 str(store))
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(": 3 sequences, 20 residues, 3 partitions\n")
    db = Database.open(store)
    assert db.alphabet == Scoring.dna().alphabet and db.wildcard
    assert db.alphabet.decode(db.sequence(1)) == "GGNT"
    sizes = [db.partition_residues(p) for p in range(db.partitions)]
    assert sizes == [4, 6, 10]
    np.testing.assert_array_equal(db.partition(2)[2], [0])


def test_bad_fasta(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fasta"
    bad.write_text("this is not fasta\n")
    assert_one_line_error(run("makedb", str(bad), str(tmp_path / "bad.swdb")),
                          "bad.fasta line 1: not FASTA or FASTQ")
    assert not (tmp_path / "bad.swdb").exists()
    assert_one_line_error(run("makedb", str(tmp_path / "missing.fa"), str(tmp_path / "m.swdb")),
                          "missing.fa: no such file")


def test_existing_output(tmp_path: Path, fasta: Path) -> None:
    store = tmp_path / "db.swdb"
    assert run("makedb", str(fasta), str(store)).exit_code == 0
    assert_one_line_error(run("makedb", str(fasta), str(store)),
                          f"{store} already exists (use --overwrite")
    result = run("makedb", "--overwrite", "--partition-residues", "3", str(fasta), str(store))
    assert result.exit_code == 0, result.output
    assert Database.open(store).partitions == 3


def test_bad_partition_residues(tmp_path: Path, fasta: Path) -> None:
    assert_one_line_error(run("makedb", "--partition-residues", "0", str(fasta),
                              str(tmp_path / "x.swdb")),
                          "--partition-residues", "0")


def test_not_a_store_is_not_overwritten(tmp_path: Path, fasta: Path) -> None:
    assert_one_line_error(run("makedb", "--overwrite", str(fasta), str(fasta)),
                          "is not a swath database")
    assert fasta.read_text().startswith(">a first")


def test_progress_and_verbose(tmp_path: Path, fasta: Path) -> None:
    store = tmp_path / "db.swdb"
    result = run("makedb", "--progress", "-v", str(fasta), str(store))
    assert result.exit_code == 0, result.output
    assert "swath: taking inputs in" in result.stderr
    assert "swath: writing" in result.stderr
    assert "swath: info: wrote" in result.stderr
    assert result.stdout == f"{store}: 3 sequences, 10 residues, 1 partition\n"
    quiet = run("makedb", "--no-progress", "--overwrite", str(fasta), str(store))
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_on_a_dask_scheduler(tmp_path: Path, fasta: Path, cluster: Any) -> None:
    """--scheduler: the pieces and partitions taken in and written by its workers, the
    same store; one that cannot be reached is one line."""
    here, there = tmp_path / "here.swdb", tmp_path / "there.swdb"
    assert run("makedb", "--partition-residues", "4", str(fasta), str(here)).exit_code == 0
    result = run("makedb", "--partition-residues", "4", "--scheduler",
                 cluster.scheduler_address, str(fasta), str(there))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{there}: 3 sequences, 10 residues, 3 partitions\n"
    for name in ("residues", "order", "names"):
        np.testing.assert_array_equal(Database.open(there).array(name)[...],
                                      Database.open(here).array(name)[...])
    assert_one_line_error(run("makedb", "--scheduler", "tcp://127.0.0.1:1", str(fasta),
                              str(tmp_path / "x.swdb")), "cannot reach a Dask scheduler")
    assert not (tmp_path / "x.swdb").exists()


def test_default_partition_size_matches_the_store_module() -> None:
    from swath.cli.makedb import DEFAULT_PARTITION_RESIDUES as cli_default
    from swath.storage.database import DEFAULT_PARTITION_RESIDUES as store_default

    assert cli_default == store_default
