"""``swath allpairs --uc FILE`` and ``swath inspect --format uc``: the kept pairs as
vsearch --allpairs_global --uc writes them, beside vsearch itself; ``--clusters-uc FILE
--centroids FILE`` and ``--format clusters-uc|centroids``: the clusters written as vsearch
--cluster_fast writes its own, beside it, on the example amplicons."""

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
needs_vsearch = pytest.mark.skipif(VSEARCH is None, reason="vsearch is not installed "
                                                            "(apt-get install vsearch)")
# vsearch --allpairs_global's scoring (what --vsearch-defaults sets but --iddef)
VSEARCH_SCORING = ("--dna", "--match", "2", "--mismatch", "-4", "--gap-open", "18",
                   "--gap-extend", "2", "--end-gap-open", "1", "--end-gap-extend", "1")


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
    """A folder with the store, pairs.uc, clusters.uc and centroids.fasta of one command
    (no --clusters: --clusters-uc implies it)."""
    folder = tmp_path_factory.mktemp("written")
    run = allpairs(fasta, folder, "--uc", str(folder / "pairs.uc"), "--clusters-uc",
                   str(folder / "clusters.uc"), "--centroids", str(folder / "centroids.fasta"))
    assert run.exit_code == 0, run.output
    assert "3 clusters" in run.output
    return folder


def vsearch_files(fasta: Path, folder: Path, threshold: str, *options: str) -> dict[str, str]:
    """What vsearch --allpairs_global --uc and --blast6out write, by their names (one
    thread: its queries in input order)."""
    files = {name: folder / f"vsearch.{name}" for name in ("uc", "blast6out")}
    subprocess.run([str(VSEARCH), "--allpairs_global", str(fasta), "--id", threshold,
                    "--uc", str(files["uc"]), "--blast6out", str(files["blast6out"]),
                    "--threads", "1", "--quiet", *options], check=True)
    return {name: path.read_text() for name, path in files.items()}


# ---------------------------------------------------------------------------------
# --uc: the kept pairs


def test_uc_file_holds_each_querys_kept_pairs_best_first_or_an_n_record(written):
    """For each sequence in input order: an H record a kept pair whose query (earlier
    record) it is, the highest identity first, or one N record; the H records are the
    store's kept pairs, with the target's input index, the query's length, the identity
    by the job's --iddef and the CIGAR in vsearch's letters."""
    text = (written / "pairs.uc").read_text()
    result = swath.open(str(written / "pairs.zarr"))
    assert text == "".join(result.lines("uc"))
    records = [line.split("\t") for line in text.splitlines()]
    assert all(len(r) == 10 for r in records)
    names = [str(name) for name in result.store.sequence_names()]
    lengths = result.store.sequence_lengths().tolist()
    queries = [r[8] for r in records]
    assert sorted(set(queries), key=names.index) == names           # every sequence, once
    assert queries == sorted(queries, key=names.index)               # in input order
    kept = {(row["query_name"], row["target_name"]): row
            for row in (dict(zip(swath.ALLPAIRS_COLUMNS, values, strict=True))
                        for values in result.to_table())}
    hits = [r for r in records if r[0] == "H"]
    assert {(r[8], r[9]) for r in hits} == set(kept) and len(hits) == len(kept)
    for kind, target, length, pct, strand, six, seven, cigar, query, label in records:
        if kind == "N":
            assert not any(q == query for q, _ in kept)
            assert [target, length, pct, strand, six, seven, cigar, label] == [
                "*", "*", "*", ".", "*", "*", "*", "*"]
            continue
        row = kept[query, label]
        assert (int(target), int(length)) == (names.index(label), lengths[names.index(query)])
        assert (strand, six, seven) == ("+", "0", "0")
        assert float(pct) == pytest.approx(100 * row["identity"], abs=0.05 + 1e-9)
        assert cigar == "=" or set(cigar) <= set("0123456789MID")
    assert records[-1][0] == "N" and sum(r[0] == "N" for r in records) >= 3
    for query in names:
        identities = [float(r[3]) for r in hits if r[8] == query]
        assert identities == sorted(identities, reverse=True)


def test_uc_alone_needs_no_clusters_and_inspect_prints_it(fasta, tmp_path):
    run = allpairs(fasta, tmp_path, "--uc", str(tmp_path / "pairs.uc"))
    assert run.exit_code == 0, run.output
    assert "clusters" not in run.stderr.strip().splitlines()[-1]
    store = str(tmp_path / "pairs.zarr")
    assert not swath.open(store).store.has_clusters
    printed = invoke("inspect", store, "--format", "uc")
    assert printed.exit_code == 0, printed.output
    assert printed.stdout == (tmp_path / "pairs.uc").read_text()
    assert printed.stdout.startswith("H\t")


@needs_vsearch
@pytest.mark.parametrize("iddef", ["0", "1", "2", "3", "4"])
def test_uc_and_blast6out_equal_vsearch_allpairs_globals(iddef, tmp_path):
    """All the amplicons at 90% with vsearch's scoring, by each of its identity
    definitions: the same H records (pairs, target numbers, lengths, identities,
    CIGARs), in the same order, and the same N records, byte for byte; and the same
    --blast6out lines, in the same order."""
    theirs = vsearch_files(AMPLICONS, tmp_path, "0.9", "--iddef", iddef)
    kinds = [line[0] for line in theirs["uc"].splitlines()]
    assert kinds.count("H") > 40 and kinds.count("N") >= 3
    run = invoke("allpairs", str(AMPLICONS), "-o", str(tmp_path / "pairs.zarr"),
                 *VSEARCH_SCORING, "--iddef", iddef, "--min-identity", "0.9", "--device",
                 "cpu", "--no-progress", "--uc", str(tmp_path / "pairs.uc"), "--format",
                 "blast6out")
    assert run.exit_code == 0, run.output
    assert (tmp_path / "pairs.uc").read_text() == theirs["uc"]
    assert run.stdout == theirs["blast6out"]


@needs_vsearch
def test_uc_of_vsearch_defaults_equals_vsearchs(fasta, tmp_path):
    """--vsearch-defaults at 97%, printed with --format uc: vsearch's own records."""
    theirs = vsearch_files(fasta, tmp_path, "0.97")["uc"]
    run = invoke("allpairs", str(fasta), "-o", str(tmp_path / "pairs.zarr"),
                 "--vsearch-defaults", "--min-identity", "0.97", "--device", "cpu",
                 "--no-progress", "--format", "uc")
    assert run.exit_code == 0, run.output
    assert "=" in theirs and run.stdout == theirs


# ---------------------------------------------------------------------------------
# --clusters-uc and --centroids: the clusters


def test_clusters_uc_and_centroids_files_are_the_results_formats(written):
    result = swath.open(str(written / "pairs.zarr"))
    assert (written / "clusters.uc").read_text() == "".join(result.lines("clusters-uc"))
    assert (written / "centroids.fasta").read_text() == "".join(result.lines("centroids"))
    records = [line.split("\t") for line in (written / "clusters.uc").read_text().splitlines()]
    assert [r[8] for r in records if r[0] == "C"] == ["otuB_2", "otuA_6", "otuC_1"]
    assert [r[2] for r in records if r[0] == "C"] == ["6", "7", "6"]


@needs_vsearch
def test_files_equal_vsearch_cluster_fasts(fasta, written, tmp_path):
    uc, centroids = tmp_path / "vsearch.uc", tmp_path / "vsearch.fasta"
    subprocess.run([str(VSEARCH), "--cluster_fast", str(fasta), "--id", "0.97", "--uc",
                    str(uc), "--centroids", str(centroids), "--quiet"], check=True)
    assert (written / "clusters.uc").read_text() == uc.read_text()
    assert (written / "centroids.fasta").read_text() == centroids.read_text()


def test_inspect_prints_each_format_and_the_uc_suffix_means_the_pairs(written, tmp_path):
    store = str(written / "pairs.zarr")
    for fmt, name in (("uc", "pairs.uc"), ("clusters-uc", "clusters.uc"),
                      ("centroids", "centroids.fasta")):
        run = invoke("inspect", store, "--format", fmt)
        assert run.exit_code == 0, run.output
        assert run.output == (written / name).read_text()
    run = invoke("inspect", store, "--out", str(tmp_path / "again.uc"))
    assert run.exit_code == 0, run.output
    assert (tmp_path / "again.uc").read_text() == (written / "pairs.uc").read_text()


def test_existing_files_refused_before_the_job_and_replaced_with_overwrite(fasta, tmp_path):
    taken = tmp_path / "taken.uc"
    taken.write_text("mine\n")
    for option in ("--uc", "--clusters-uc"):
        run = allpairs(fasta, tmp_path, option, str(taken))
        assert run.exit_code == 2
        assert "taken.uc exists" in run.output
        assert not (tmp_path / "pairs.zarr").exists() and taken.read_text() == "mine\n"
    run = allpairs(fasta, tmp_path, "--centroids", str(taken), "--overwrite")
    assert run.exit_code == 0, run.output
    assert taken.read_text().startswith(">otuB_2\n")


@pytest.mark.parametrize("options", [("--clusters-uc", "--centroids"), ("--uc", "--out"),
                                     ("--uc", "--clusters-uc")])
def test_one_file_for_two_outputs_refused(fasta, tmp_path, options):
    same = str(tmp_path / "out.txt")
    run = allpairs(fasta, tmp_path, options[0], same, options[1], same)
    assert run.exit_code == 2
    assert "--out, --uc, --clusters-uc and --centroids name the same file" in run.output
    assert not (tmp_path / "pairs.zarr").exists()


def test_format_clusters_uc_implies_clusters(fasta, tmp_path):
    run = allpairs(fasta, tmp_path, "--format", "clusters-uc")
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("S\t0\t244\t")


def test_inspect_of_a_store_without_clusters_says_so(fasta, tmp_path):
    run = allpairs(fasta, tmp_path)
    assert run.exit_code == 0, run.output
    for fmt in ("centroids", "clusters-uc"):
        run = invoke("inspect", str(tmp_path / "pairs.zarr"), "--format", fmt)
        assert run.exit_code == 2
        assert "computed no clusters" in run.output
