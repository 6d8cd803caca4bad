"""Workload A1: all against all of the first N sequences of BioMarKs50k, beside vsearch.

The first ``--sequences`` records of ``BioMarKs50k.fsa.gz`` (Debian's vsearch-examples;
18S V4 amplicons, about 380 bp), global, identity at least 0.97. swath: match 2,
mismatch -3, gap 5 + 2 per base, through the command line from a cold process
(``swath allpairs ... -o R.zarr``), its identity definition given by ``--iddef``
(default 2, vsearch's own for ``--id``). vsearch: ``--allpairs_global --id 0.97`` with
its own scoring (match 2, mismatch -4, gaps 20 + 2 inside, smaller at the ends) on
``--threads`` threads. Reported: wall seconds, pairs per second (n (n - 1) / 2 over the
wall time), the pairs each keeps and how many both keep. Median of ``--repeats``.

With ``--vsearch-defaults`` swath runs vsearch's own scoring (``swath allpairs
--vsearch-defaults``: its end-gap costs and ``--iddef 2``) and vsearch its defaults
(``--iddef 2``): the two should keep the same pairs.

    python benchmarks/allpairs.py --sequences 1000 --threads 2 --device cpu
    python benchmarks/allpairs.py --sequences 1000 --threads 2 --device cpu --vsearch-defaults
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIOMARKS = Path("/usr/share/doc/vsearch-examples/BioMarKs50k.fsa.gz")


def first_records(source: Path, count: int, out: Path) -> None:
    """The first ``count`` FASTA records of ``source`` (plain or gzip), written to ``out``."""
    seen = 0
    reader = gzip.open if source.suffix == ".gz" else open
    with reader(source, "rt") as lines, open(out, "w") as fasta:
        for line in lines:
            if line.startswith(">"):
                seen += 1
                if seen > count:
                    break
            fasta.write(line)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def pairs_of(rows: list[list[str]]) -> set[tuple[str, str]]:
    return {tuple(sorted(row[:2])) for row in rows}  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=BIOMARKS)
    parser.add_argument("--sequences", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--iddef", default="1")
    parser.add_argument("--vsearch-defaults", action="store_true",
                        help="vsearch's scoring on both sides, --iddef 2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vsearch", default="vsearch", help="'' to skip the peer")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="swath-a1-"))
    fasta = scratch / "a1.fasta"
    first_records(args.source, args.sequences, fasta)
    n = args.sequences
    pairs = n * (n - 1) // 2
    report: dict[str, object] = {"sequences": n, "pairs": pairs}

    iddef = "2" if args.vsearch_defaults else args.iddef
    scoring = ["--vsearch-defaults"] if args.vsearch_defaults else ["--dna", "--iddef", iddef]

    def swath_run() -> float:
        out = scratch / f"s{time.monotonic_ns()}.zarr"
        seconds = timed([sys.executable, "-m", "swath", "allpairs", str(fasta), "-o", str(out),
                         *scoring, "--min-identity", "0.97", "--threads", str(args.threads),
                         "--device", args.device, "--no-progress"])
        report["swath_store"] = str(out)
        return seconds

    runs = [swath_run() for _ in range(args.repeats)]
    report["swath"] = {"seconds": statistics.median(runs), "runs": runs,
                       "pairs_per_second": pairs / statistics.median(runs)}
    tsv = subprocess.run([sys.executable, "-m", "swath", "inspect", str(report["swath_store"]),
                          "--format", "tsv"], check=True, capture_output=True, text=True)
    ours = pairs_of([line.split("\t") for line in tsv.stdout.splitlines()
                     if line and not line.startswith("#")])
    report["swath"]["kept"] = len(ours)  # type: ignore[index]
    if args.vsearch:
        hits = scratch / "vsearch.tsv"
        command = [args.vsearch, "--allpairs_global", str(fasta), "--id", "0.97",
                   "--iddef", iddef, "--blast6out", str(hits),
                   "--threads", str(args.threads)]
        runs = [timed(command) for _ in range(args.repeats)]
        theirs = pairs_of([line.split("\t") for line in hits.read_text().splitlines()])
        report["vsearch"] = {"seconds": statistics.median(runs), "runs": runs,
                             "pairs_per_second": pairs / statistics.median(runs),
                             "kept": len(theirs), "kept_by_both": len(ours & theirs)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
