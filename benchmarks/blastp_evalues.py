"""swath search's e-values against blastp's (issue 34): shared hits, and how far apart.

The queries are the 20 Swiss-Prot proteins of ``search_queries_20.fasta`` (S1's). The
database: ``synth.py protein 2000 3`` (random proteins of Swiss-Prot-like lengths),
then seven mutated copies of every query, one at each substitution rate of 0.1, 0.2,
..., 0.7 (with a twentieth of the rate in deletions and in insertions each), so that
the hits' e-values span the whole range. blastp (BLAST+, ``-comp_based_stats 0 -seg no
-max_hsps 1``) and ``swath search`` (BLOSUM62, 11/1, local, top 200, ``--max-evalue 10``)
search the same files; for the hits both report with the same raw score this prints
how many there are and the largest relative difference of the e-values, swath's as it
prints them and as the length-adjusted formula (swath's before issue 34) gives them.

    python benchmarks/blastp_evalues.py QUERIES.fasta SYNTH.py WORKDIR
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

import swath
from swath.results.alignments import blast_evalue
from swath.statistics import effective_lengths, evalue, gapped_parameters

LETTERS = np.array(list("ARNDCQEGHILKMFPSTWYV"))
RATES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def read_fasta(path: Path) -> list[tuple[str, str]]:
    records: list[tuple[str, list[str]]] = []
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            records.append((line[1:].split()[0], []))
        elif records:
            records[-1][1].append(line.strip())
    return [(name, "".join(parts)) for name, parts in records]


def mutated(rng: np.random.Generator, sequence: str, rate: float) -> str:
    draws = rng.random(len(sequence))
    residues = rng.choice(LETTERS, (len(sequence), 2))
    return "".join(c if d >= rate * 1.1 else "" if rate <= d < rate * 1.05
                   else c + r[1] if d >= rate * 1.05 else r[0]
                   for c, d, r in zip(sequence, draws, residues, strict=True))


def database(queries: Path, synth: Path, work: Path) -> Path:
    background = work / "synth_2000_3.fasta"
    subprocess.run([sys.executable, str(synth), "protein", "2000", "3", str(background)],
                   check=True, capture_output=True)
    rng = np.random.default_rng(34)
    path = work / "db.fasta"
    with path.open("w") as out:
        out.write(background.read_text())
        for name, sequence in read_fasta(queries):
            for rate in RATES:
                out.write(f">{name}_m{int(rate * 100)}\n{mutated(rng, sequence, rate)}\n")
    return path


def blastp(queries: Path, db: Path, work: Path) -> dict[tuple[str, str], tuple[int, str]]:
    subprocess.run(["makeblastdb", "-in", str(db), "-dbtype", "prot", "-out",
                    str(work / "db")], check=True, capture_output=True)
    out = subprocess.run(["blastp", "-query", str(queries), "-db", str(work / "db"),
                          "-comp_based_stats", "0", "-seg", "no", "-max_hsps", "1",
                          "-max_target_seqs", "200", "-outfmt", "6 qseqid sseqid score evalue"],
                         check=True, capture_output=True, text=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return {(r[0], r[1]): (int(r[2]), r[3]) for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries", type=Path)
    parser.add_argument("synth", type=Path)
    parser.add_argument("work", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    db = database(args.queries, args.synth, args.work)
    theirs = blastp(args.queries, db, args.work)
    scoring = swath.Scoring.protein("BLOSUM62", 11, 1)
    result = swath.search(str(args.queries), str(db), scoring=scoring, top_k=200,
                          store=str(args.work / "r.zarr"), max_evalue=10.0, device="cpu",
                          overwrite=True)
    lengths = {name: len(s) for name, s in read_fasta(args.queries)}
    residues = sum(len(s) for _, s in read_fasta(db))
    sequences = len(read_fasta(db))
    plain = gapped_parameters(scoring)
    pairs = same_score = printed_alike = printed_alike_before = 0
    now, before, evalues = [], [], []
    for row in result.to_table():
        query, target, score, e = row[0].split()[0], row[1], row[-2], row[10]
        blast = theirs.get((query, target))
        if blast is None:
            continue
        pairs += 1
        if blast[0] != score:
            continue
        same_score += 1
        m, n = effective_lengths(lengths[query], residues, sequences, plain)
        adjusted = evalue(score, m, n, plain)
        printed_alike += blast_evalue(e) == blast[1]
        printed_alike_before += blast_evalue(adjusted) == blast[1]
        if float(blast[1]) == 0:        # printed 0.0: below 1e-180
            continue
        now.append(abs(e - float(blast[1])) / float(blast[1]))
        before.append(abs(adjusted - float(blast[1])) / float(blast[1]))
        evalues.append(float(blast[1]))
    print(f"database: {sequences} sequences, {residues} residues")
    print(f"hits: blastp {len(theirs)}, swath {len(result.to_table())}; pairs in both "
          f"{pairs}, with the same raw score {same_score}, their e-values printed alike "
          f"{printed_alike} (length-adjusted: {printed_alike_before})")
    print(f"of those printed above 0.0 ({len(now)}; {min(evalues):.3g} to "
          f"{max(evalues):.3g}), the largest relative difference from blastp's printed "
          f"e-value: now {max(now):.3g}, length-adjusted (before) {max(before):.3g}; "
          f"median now {np.median(now):.3g}, before {np.median(before):.3g}")

if __name__ == "__main__":
    main()
