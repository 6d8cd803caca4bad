"""``--out FILE`` on every command that prints a result: the file holds what stdout would,
in the format its suffix names unless one is given, and an existing file is never
replaced unless the command has --overwrite and it is given."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from swath.cli import main
from tests.helpers import write_fasta

SEQS = ["ACGTACGTTAGCATGCAAGT", "ACGTACGTTAGCTTGCAAGT", "ACGAACGTTAGCATGCAAGT",
        "TTGACCATGGCAAGTCCAGT"]


def without_commands(text: str) -> list[str]:
    """The lines of a printed result but SAM's @PG line (it holds the command line)."""
    return [line for line in text.splitlines() if not line.startswith("@PG")]


def invoke(*argv: str):
    return CliRunner().invoke(main, [*argv])


@pytest.fixture(scope="module")
def fasta(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("out")
    return write_fasta(root / "s.fasta", [(f"s{i}", s) for i, s in enumerate(SEQS)])


@pytest.mark.parametrize(("command", "suffix", "first"), [
    (["search", "--dna", "--mode", "global"], ".sam", "@HD"),
    (["allpairs", "--dna", "--min-identity", "0.8"], ".json", "{"),
    (["pairs", "--dna"], ".paf", "s0\t20"),
    (["align", "--dna"], ".tsv", "query_name"),
])
def test_out_writes_the_format_its_suffix_names(fasta, tmp_path, command, suffix, first):
    out = tmp_path / f"result{suffix}"
    inputs = [str(fasta)] if command[0] == "allpairs" else [str(fasta), str(fasta)]
    store = [] if command[0] == "align" else ["-o", str(tmp_path / "r.zarr")]
    argv = [command[0], *inputs, *command[1:], *store, "--device", "cpu", "--no-progress"]
    run = invoke(*argv, "--out", str(out))
    assert run.exit_code == 0, run.output
    assert out.read_text().startswith(first) and run.stdout == ""
    fmt = {".sam": "sam", ".json": "json", ".paf": "paf", ".tsv": "tsv"}[suffix]
    if store:
        printed = invoke("inspect", store[1], "--format", fmt)
        assert printed.exit_code == 0
        assert without_commands(printed.stdout) == without_commands(out.read_text())
        again = invoke("inspect", store[1], "--out", str(out))
        assert again.exit_code == 2 and again.output == (
            f"swath: error: {out} exists; swath will not overwrite it (choose another --out "
            "path, or remove it first)\n")
    kept = out.read_text()
    refused = invoke(*argv, "--out", str(out))
    assert refused.exit_code == 2 and "--overwrite to replace it" in refused.output
    assert out.read_text() == kept
    replaced = invoke(*argv, "--out", str(out), "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize(("command", "option"), [
    (["allpairs", "--dna"], "--centroids"), (["allpairs", "--dna"], "--uc"),
    (["allpairs", "--dna"], "--clusters-uc"),
    (["allpairs", "--dna"], "--out"), (["search", "--dna"], "--out"),
    (["pairs", "--dna"], "--out"), (["align", "--dna"], "--out"),
])
def test_an_output_that_is_an_input_or_in_the_store_is_refused_even_with_overwrite(
        fasta, tmp_path, command, option):
    """--overwrite replaces a result file, never the command's own input or store: refused
    in one line before the job runs, the input left as it was."""
    inputs = [str(fasta)] if command[0] == "allpairs" else [str(fasta), str(fasta)]
    store = str(tmp_path / "r.zarr")
    argv = [command[0], *inputs, *command[1:], *([] if command[0] == "align" else ["-o", store]),
            "--device", "cpu", "--no-progress", "--overwrite"]
    before = fasta.read_text()
    for target in ([str(fasta)] if command[0] == "align" else [str(fasta), f"{store}/x.txt"]):
        refused = invoke(*argv, option, target)
        assert refused.exit_code == 2, refused.output
        assert "an input or the store of this command" in refused.output
        assert len(refused.output.strip().splitlines()) == 1
    assert fasta.read_text() == before and not Path(store).exists()


def test_an_out_file_swath_may_not_write_is_named_as_given(fasta, tmp_path, monkeypatch):
    """--out in a directory swath may not write into: one line naming the file asked for
    (not the hidden file swath writes first), exit 2."""
    import os
    import tempfile

    def refused(prefix, dir):
        raise PermissionError(13, "Permission denied", os.path.join(dir, f"{prefix}x1y2"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    out = tmp_path / "hits.tsv"
    result = invoke("align", str(fasta), str(fasta), "--dna", "--device", "cpu", "--out",
                    str(out))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"swath: error: {out}: Permission denied"]
