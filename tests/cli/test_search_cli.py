"""swath search / resume / inspect from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from swath.cli import main
from tests.helpers import write_fasta


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(3)
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    seqs = ["".join(rng.choice(letters, int(n))) for n in rng.integers(40, 300, 80)]
    root = tmp_path_factory.mktemp("cli-search")
    write_fasta(root / "db.fasta", [(f"d{i}", s) for i, s in enumerate(seqs)])
    write_fasta(root / "q.fasta", [("qa", seqs[5][:120]), ("qb", seqs[60])])
    write_fasta(root / "dna.fasta", [("x", "ACGTACGTAC")])
    run = CliRunner().invoke(main, ["makedb", str(root / "db.fasta"), str(root / "db.swdb"),
                                    "--partition-residues", "4000", "--no-progress"])
    assert run.exit_code == 0, run.output
    return root


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_search_prints_blast_tabular_rows(files, cluster, tmp_path):
    out = str(tmp_path / "r.zarr")
    run = invoke("search", str(files / "q.fasta"), str(files / "db.swdb"), "-o", out,
                 "--top-k", "3", "--outfmt", "tsv", "--scheduler", cluster.scheduler_address,
                 "--no-progress")
    assert run.exit_code == 0, run.output
    rows = [line.split("\t") for line in run.stdout.splitlines()]
    assert len(rows) == 6 and all(len(r) == 12 for r in rows)     # blastp's 12 columns
    assert rows[0][:2] == ["qa", "d5"] and rows[0][2] == "100.000"
    assert (rows[0][6], rows[0][7]) == ("1", "120")
    assert rows[3][:2] == ["qb", "d60"]
    again = invoke("inspect", out)
    assert again.exit_code == 0 and again.stdout == run.stdout
    lines = invoke("inspect", out, "--format", "json").stdout.splitlines()
    first = json.loads(lines[0])
    assert (first["qseqid"], first["sseqid"], first["qstart"]) == ("qa", "d5", 1)
    assert first["cigar"] == "120="
    named = invoke("inspect", out, "--format", "6 sseqid score cigar qlen").stdout
    assert named.splitlines()[0] == f"d5\t{first['score']}\t120=\t120"
    refused = invoke("inspect", out, "--format", "6 sseqid sequence")
    assert refused.exit_code == 2 and "no column 'sequence'" in refused.stderr
    text = invoke("inspect", out, "--format", "text").stdout
    assert "# Query:        qa (120 residues)" in text and "# hit: e-value" in text
    done = invoke("resume", out, "--scheduler", cluster.scheduler_address, "--no-progress")
    assert done.exit_code == 0 and "is complete" in done.stderr


@pytest.mark.parametrize("workers", [None, 2])
def test_search_takes_a_fasta_database_in_process_or_on_local_workers(files, tmp_path,
                                                                      workers):
    """Without --workers the job runs in the command's process (no cluster, no
    dashboard); --workers N starts a local cluster and names its dashboard."""
    extra = ["--workers", str(workers)] if workers else []
    run = invoke("search", str(files / "q.fasta"), str(files / "db.fasta"), "-o",
                 str(tmp_path / "r.zarr"), "--top-k", "1", "--outfmt", "tsv", "--device", "cpu",
                 "--progress", *extra)
    assert run.exit_code == 0, run.output
    assert ("dashboard http" in run.stderr) == bool(workers)
    assert [r.split("\t")[1] for r in run.stdout.splitlines()] == ["d5", "d60"]


def test_debug_log_is_a_timeline(files, tmp_path):
    """-vv stamps each record with the milliseconds since the process started and its
    thread (where a command's seconds go); -v keeps the plain lines."""
    import logging
    import re

    logger = logging.getLogger("swath")
    level, handlers = logger.level, list(logger.handlers)
    try:
        run = invoke("search", str(files / "q.fasta"), str(files / "db.swdb"), "-o",
                     str(tmp_path / "r.zarr"), "--device", "cpu", "--no-progress", "-vv")
        assert run.exit_code == 0, run.output
        lines = run.stderr.splitlines()
        stamped = re.compile(r"swath: +\d+ ms (\S+): (debug|info): swath\.")
        assert lines and all(stamped.match(line) for line in lines), lines
        assert any("partition" in line for line in lines)
        assert {stamped.match(line)[1] for line in lines} >= {"MainThread"}
        run = invoke("search", str(files / "q.fasta"), str(files / "db.swdb"), "-o",
                     str(tmp_path / "s.zarr"), "--device", "cpu", "--no-progress", "-v")
        assert run.exit_code == 0, run.output
        assert run.stderr.splitlines()[0].startswith("swath: info: ")
    finally:
        logger.setLevel(level)
        logger.handlers[:] = handlers


GPU_COMMANDS = """
import sys
from swath.cli import main
for args in sys.argv[1:]:
    main(args.split("|"), standalone_mode=False)
    print("loaded:", *sorted(m for m in sys.modules if m.split(".")[0] == "numba"
                             or m.startswith(("cupyx.scipy", "swath.kernels.cpu"))),
          flush=True)
"""


@pytest.mark.gpu
def test_gpu_search_and_allpairs_load_no_cpu_kernels(files, tmp_path):
    """GPU commands import no CPU kernel (their numba compiles, a cost in every process):
    a search not even numba or cupyx.scipy (which CuPy's first operator on a Python
    number imports); an all-pairs job imports numba for its store's string chunks
    (``storage.string_chunks``), not ``swath.kernels.cpu``."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import swath

    rng = np.random.default_rng(5)
    base = "".join(rng.choice(list("ACGT"), 300))
    (tmp_path / "amplicons.fasta").write_text("".join(
        f">a{i}\n{base[i:] + base[:i] if i % 2 else base}\n" for i in range(12)))
    commands = [f"search|{files / 'q.fasta'}|{files / 'db.swdb'}|-o|{tmp_path / 'r.zarr'}"
                "|--device|gpu|--no-progress",
                f"allpairs|{tmp_path / 'amplicons.fasta'}|-o|{tmp_path / 'a.zarr'}|--dna"
                "|--device|gpu|--no-progress"]
    package = str(Path(swath.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (package, os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-c", GPU_COMMANDS, *commands], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    after_search, after_allpairs = (line.split()[1:] for line in done.stdout.splitlines()
                                    if line.startswith("loaded:"))
    assert after_search == [], done.stdout
    assert not [m for m in after_allpairs if m.startswith("swath.kernels.cpu")], done.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["inspect", "{db}"], "is a 'database' store version 1"),
        (["inspect", "{root}/nothing.zarr"], "no swath store here"),
        (["search", "{root}/missing.fasta", "{db}", "-o", "{out}"], "missing.fasta: no such file"),
        (["search", "{root}/dna.fasta", "{db}", "-o", "{out}", "--dna"], "alphabet"),
        (["search", "{root}/q.fasta", "{db}", "-o", "{out}", "--scheduler", "tcp://127.0.0.1:1"],
         "cannot reach a Dask scheduler"),
        (["search", "{root}/q.fasta", "{db}", "-o", "{out}", "--gap-open", "12",
          "--gap-extend", "3", "--max-evalue", "1"], "max_evalue needs e-values"),
        (["search", "{root}/q.fasta", "{db}", "-o", "{out}", "--gap-open", "12",
          "--gap-extend", "3", "--lambda", "0.3"], "missing K, H"),
        (["resume", "{db}"], "is a 'database' store"),
    ],
)
def test_errors_are_one_line_with_exit_status_2(files, cluster, tmp_path, args, needle):
    fill = {"db": str(files / "db.swdb"), "root": str(files), "out": str(tmp_path / "o.zarr")}
    args = [a.format(**fill) for a in args]
    if args[0] in ("search", "resume") and "--scheduler" not in args:
        args += ["--scheduler", cluster.scheduler_address]
    run = invoke(*args, "--no-progress") if args[0] != "inspect" else invoke(*args)
    assert run.exit_code == 2, run.output
    assert needle in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.output


def test_user_statistics_for_unpublished_gap_costs(files, cluster, tmp_path):
    run = invoke("search", str(files / "q.fasta"), str(files / "db.swdb"), "-o",
                 str(tmp_path / "r.zarr"), "--gap-open", "12", "--gap-extend", "3", "--lambda",
                 "0.25", "--k", "0.03", "--h", "0.1", "--top-k", "1", "--outfmt", "json",
                 "--scheduler", cluster.scheduler_address, "--no-progress")
    assert run.exit_code == 0, run.output
    hit = json.loads(run.stdout.splitlines()[0])
    expected = (0.25 * hit["score"] - np.log(0.03)) / np.log(2)
    assert hit["bitscore"] == pytest.approx(expected)


def test_inspect_refuses_an_unfinished_store(files, tmp_path):
    from swath.sequences import sequence_set
    from swath.storage.results import SearchStore
    from tests.helpers import PROTEIN

    store = str(tmp_path / "half.zarr")
    SearchStore.create(store, sequence_set(["ACDE"], PROTEIN.alphabet), top_k=2, query_block=1,
                       inputs={})
    run = invoke("inspect", store)
    assert run.exit_code == 2 and "not finished" in run.stderr
