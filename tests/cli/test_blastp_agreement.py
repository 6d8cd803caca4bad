"""swath search against NCBI's blastp (Debian's ncbi-blast+, installed by .ci/run; the
test skips only where it is missing): on the same protein files, every hit both report
with the same raw score has e-values within 10 % and bit scores equal as printed.

The set: three random ancestors (the queries) and ten mutated copies of each, from nearly
identical to barely related (the database), so that the e-values span 1e-100 to 10.
blastp runs without composition-based statistics and without SEG, whose adjustments
swath does not make, and keeps one HSP per subject, as swath keeps one alignment.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from swath.cli import main
from tests.helpers import write_fasta

BLASTP, MAKEBLASTDB = shutil.which("blastp"), shutil.which("makeblastdb")
pytestmark = pytest.mark.skipif(
    BLASTP is None or MAKEBLASTDB is None,
    reason="NCBI BLAST+ is not installed (apt-get install ncbi-blast+; .ci/run installs it)")

LETTERS = np.array(list("ARNDCQEGHILKMFPSTWYV"))
# background frequencies (percent), so that the copies look like proteins to BLAST
FREQUENCIES = np.array([7.4, 5.2, 4.5, 5.3, 2.5, 3.4, 5.4, 7.4, 2.6, 6.8, 9.9, 5.8, 2.5, 4.7,
                        3.9, 5.7, 5.1, 1.3, 3.2, 7.3])
RATES = (0.02, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75)   # substitutions per residue
COLUMNS = ("qseqid", "sseqid", "evalue", "bitscore", "score", "nident", "gaps", "qlen", "slen",
           "qstart", "qend", "qcovhsp")


def protein_family(rng: np.random.Generator) -> tuple[str, list[str]]:
    """An ancestor of 150 to 300 residues and a copy of it at each rate of :data:`RATES`,
    with substitutions, deletions and insertions (a twentieth of the rate each)."""
    p = FREQUENCIES / FREQUENCIES.sum()
    ancestor = "".join(rng.choice(LETTERS, int(rng.integers(150, 300)), p=p))
    copies = []
    for rate in RATES:
        draws = rng.random(len(ancestor))
        residues = rng.choice(LETTERS, (len(ancestor), 2), p=p)
        copy = [c if d >= rate * 1.1 else "" if rate <= d < rate * 1.05
                else c + r[1] if d >= rate * 1.05 else r[0]
                for c, d, r in zip(ancestor, draws, residues, strict=True)]
        copies.append("".join(copy))
    return ancestor, copies


def hits(tsv: str) -> dict[tuple[str, str], tuple[int, str, str, list[str]]]:
    """(query, subject): (raw score, e-value, bit score, the other cells), as printed."""
    rows = [line.split("\t") for line in tsv.splitlines()]
    assert all(len(r) == len(COLUMNS) for r in rows), tsv
    return {(r[0], r[1]): (int(r[4]), r[2], r[3], r[5:]) for r in rows}


def test_evalues_and_bit_scores_agree_with_blastp(tmp_path):
    rng = np.random.default_rng(34)
    families = [protein_family(rng) for _ in range(3)]
    queries, database = tmp_path / "q.fasta", tmp_path / "db.fasta"
    write_fasta(queries, [(f"q{f}", ancestor) for f, (ancestor, _) in enumerate(families)])
    write_fasta(database, [(f"f{f}_{i}", copy) for f, (_, copies) in enumerate(families)
                           for i, copy in enumerate(copies)])
    subprocess.run([MAKEBLASTDB, "-in", str(database), "-dbtype", "prot", "-out",
                    str(tmp_path / "db")], check=True, capture_output=True)
    blast = subprocess.run([BLASTP, "-query", str(queries), "-db", str(tmp_path / "db"),
                            "-comp_based_stats", "0", "-seg", "no", "-max_hsps", "1",
                            "-outfmt", "6 " + " ".join(COLUMNS)],
                           check=True, capture_output=True, text=True).stdout
    run = CliRunner().invoke(main, ["search", str(queries), str(database), "-o",
                                    str(tmp_path / "r.zarr"), "--top-k", "30", "--matrix",
                                    "BLOSUM62", "--gap-open", "11", "--gap-extend", "1",
                                    "--device", "cpu", "--outfmt", "6 " + " ".join(COLUMNS),
                                    "--no-progress"])
    assert run.exit_code == 0, run.output
    theirs, ours = hits(blast), hits(run.stdout)
    shared = [pair for pair in theirs if pair in ours and ours[pair][0] == theirs[pair][0]]
    assert len(shared) >= 30, (blast, run.stdout)
    evalues = [float(theirs[pair][1]) for pair in shared]
    assert min(evalues) < 1e-90 and max(evalues) > 1          # the range is covered
    same_path = 0
    for pair in shared:
        _, their_evalue, their_bits, their_cells = theirs[pair]
        _, our_evalue, our_bits, our_cells = ours[pair]
        assert float(our_evalue) == pytest.approx(float(their_evalue), rel=0.1), pair
        assert our_bits == their_bits, pair
        assert our_cells[2:4] == their_cells[2:4], pair       # qlen, slen
        if our_cells[4:6] == their_cells[4:6]:      # the same query range: the same cover
            same_path += 1
            assert our_cells[6] == their_cells[6], pair
            if our_cells[1] == their_cells[1] == "0":   # ungapped: the same identities
                assert our_cells[0] == their_cells[0], pair
    assert same_path >= 20
    # each query's hits in blastp's order: by e-value, then bit score
    for query in {pair[0] for pair in shared}:
        order = [[line.split("\t")[1] for line in tsv.splitlines()
                  if line.startswith(query + "\t") and (query, line.split("\t")[1]) in shared]
                 for tsv in (blast, run.stdout)]
        assert order[0] == order[1], query
    # the default cutoff is blastp's: no hit above 10
    assert max(float(cells[1]) for cells in ours.values()) <= 10


def test_max_hsps_finds_blastps_hsps_of_a_repeat(tmp_path):
    """A subject holding two mutated copies of the query: with --max-hsps, swath and
    ``blastp -max_hsps`` report both copies, with the same ranges, scores and e-values
    (swath may report weaker HSPs that blastp's seeds miss)."""
    from tests.engine.test_ranking import repeat_family

    query, seqs = repeat_family(np.random.default_rng(5))
    queries, database = tmp_path / "q.fasta", tmp_path / "db.fasta"
    write_fasta(queries, [("q", query)])
    write_fasta(database, [(f"s{i}", s) for i, s in enumerate(seqs)])
    subprocess.run([MAKEBLASTDB, "-in", str(database), "-dbtype", "prot", "-out",
                    str(tmp_path / "db")], check=True, capture_output=True)
    columns = "6 sseqid qstart qend sstart send evalue bitscore score"
    blast = subprocess.run([BLASTP, "-query", str(queries), "-db", str(tmp_path / "db"),
                            "-comp_based_stats", "0", "-seg", "no", "-max_hsps", "3",
                            "-outfmt", columns], check=True, capture_output=True,
                           text=True).stdout
    run = CliRunner().invoke(main, ["search", str(queries), str(database), "-o",
                                    str(tmp_path / "r.zarr"), "--max-hsps", "3", "--device",
                                    "cpu", "--outfmt", columns, "--no-progress"])
    assert run.exit_code == 0, run.output
    strong = [[line for line in tsv.splitlines() if float(line.split("\t")[5]) < 1e-5]
              for tsv in (blast, run.stdout)]
    assert strong[0] == strong[1] and [line.split("\t")[0] for line in strong[0]] == [
        "s0", "s0", "s1"]
    assert set(blast.splitlines()) - set(run.stdout.splitlines()) <= {
        line for line in blast.splitlines() if float(line.split("\t")[5]) > 1}
