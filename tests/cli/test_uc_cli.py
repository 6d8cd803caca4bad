"""``swath allpairs --uc FILE --centroids FILE`` and ``swath inspect --format uc|centroids``:
the clusters written as vsearch writes its own, beside vsearch --cluster_fast on the
example amplicons."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import swath
from swath.cli import main
from tests.helpers import write_fasta

AMPLICONS = Path(__file__).parents[2] / "examples" / "amplicons.fasta"
VSEARCH = shutil.which("vsearch")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def fasta(tmp_path_factory) -> Path:
    """The example amplicons but otuB_1, which vsearch's greedy clustering leaves alone
    at 97% and single linkage joins to otuB: on the 19 others both make the same three
    clusters, of the same centroids."""
    alphabet = swath.Scoring.dna().alphabet
    records = swath.read_sequences(str(AMPLICONS), alphabet)
    kept = [(name, alphabet.decode(records[k])) for k, name in enumerate(records.names)
            if name != "otuB_1"]
    return write_fasta(tmp_path_factory.mktemp("uc") / "amplicons.fasta", kept)


def allpairs(fasta: Path, folder: Path, *extra: str) -> Result:
    return invoke("allpairs", "--dna", str(fasta), "-o", str(folder / "pairs.zarr"),
                  "--iddef", "2", "--device", "cpu", "--no-progress", *extra)


@pytest.fixture(scope="module")
def written(fasta, tmp_path_factory) -> Path:
    """A folder with the store, clusters.uc and centroids.fasta of one command (no
    --clusters: --uc implies it)."""
    folder = tmp_path_factory.mktemp("written")
    run = allpairs(fasta, folder, "--uc", str(folder / "clusters.uc"), "--centroids",
                   str(folder / "centroids.fasta"))
    assert run.exit_code == 0, run.output
    assert "3 clusters" in run.output
    return folder


def test_uc_and_centroids_files_are_the_results_formats(written):
    result = swath.open(str(written / "pairs.zarr"))
    assert (written / "clusters.uc").read_text() == "".join(result.lines("uc"))
    assert (written / "centroids.fasta").read_text() == "".join(result.lines("centroids"))
    records = [line.split("\t") for line in (written / "clusters.uc").read_text().splitlines()]
    assert [r[8] for r in records if r[0] == "C"] == ["otuB_2", "otuA_6", "otuC_1"]
    assert [r[2] for r in records if r[0] == "C"] == ["6", "7", "6"]


@pytest.mark.skipif(VSEARCH is None, reason="vsearch is not installed (apt-get install vsearch)")
def test_files_equal_vsearch_cluster_fasts(fasta, written, tmp_path):
    uc, centroids = tmp_path / "vsearch.uc", tmp_path / "vsearch.fasta"
    subprocess.run([str(VSEARCH), "--cluster_fast", str(fasta), "--id", "0.97", "--uc",
                    str(uc), "--centroids", str(centroids), "--quiet"], check=True)
    assert (written / "clusters.uc").read_text() == uc.read_text()
    assert (written / "centroids.fasta").read_text() == centroids.read_text()


def test_inspect_prints_both_formats_and_reads_the_uc_suffix(written, tmp_path):
    store = str(written / "pairs.zarr")
    for fmt, name in (("uc", "clusters.uc"), ("centroids", "centroids.fasta")):
        run = invoke("inspect", store, "--format", fmt)
        assert run.exit_code == 0, run.output
        assert run.output == (written / name).read_text()
    run = invoke("inspect", store, "--out", str(tmp_path / "again.uc"))
    assert run.exit_code == 0, run.output
    assert (tmp_path / "again.uc").read_text() == (written / "clusters.uc").read_text()


def test_existing_files_refused_before_the_job_and_replaced_with_overwrite(fasta, tmp_path):
    taken = tmp_path / "taken.uc"
    taken.write_text("mine\n")
    run = allpairs(fasta, tmp_path, "--uc", str(taken))
    assert run.exit_code == 2
    assert "taken.uc exists" in run.output
    assert not (tmp_path / "pairs.zarr").exists() and taken.read_text() == "mine\n"
    run = allpairs(fasta, tmp_path, "--centroids", str(taken), "--overwrite")
    assert run.exit_code == 0, run.output
    assert taken.read_text().startswith(">otuB_2\n")


def test_one_file_for_two_outputs_refused(fasta, tmp_path):
    same = str(tmp_path / "out.txt")
    run = allpairs(fasta, tmp_path, "--uc", same, "--centroids", same)
    assert run.exit_code == 2
    assert "name the same file" in run.output
    assert not (tmp_path / "pairs.zarr").exists()


def test_format_uc_implies_clusters(fasta, tmp_path):
    run = allpairs(fasta, tmp_path, "--format", "uc")
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("S\t0\t244\t")


def test_inspect_of_a_store_without_clusters_says_so(fasta, tmp_path):
    run = allpairs(fasta, tmp_path)
    assert run.exit_code == 0, run.output
    run = invoke("inspect", str(tmp_path / "pairs.zarr"), "--format", "centroids")
    assert run.exit_code == 2
    assert "computed no clusters" in run.output
