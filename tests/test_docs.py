"""The examples of README.md and of the documentation site (docs/), run as a reader runs
them, and their links.

In every page, in order, in a directory of its own holding a copy of ``examples/``:

- a ``console`` block's ``$`` lines run in bash (the installed ``swath`` first on PATH),
  and what follows each is what it prints: its stdout, or its stderr where it exits
  with an error. ``...`` stands for any text (doctest's ELLIPSIS), runs of blanks
  compare equal;
- ``pycon`` blocks run as doctests, a page's blocks sharing their names;
- ``python`` blocks run as scripts, each in a process of its own, and must exit 0.

An HTML comment on the line before a block, ``<!-- needs: gpu -->`` (or a program such as
``samtools``), skips it where that is missing; ``bash`` blocks are templates for the
reader's own files and run nowhere. The API reference's examples are the docstrings'
(their modules' doctests run in tests/test_api.py and beside each module's tests, the
rest below).
"""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(```+)\s*([\w{}-]*)")
NEEDS = re.compile(r"^<!--\s*needs:\s*([\w-]+)\s*-->$")
README_LIMIT = 12_000       # characters (issue 51: the reference lives in docs/)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Block:
    page: Path
    line: int            # 1-based, of the opening fence
    kind: str            # the fence's language
    text: str
    needs: str | None    # a program, or "gpu", without which it is skipped


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        fence, kind = opened.groups()
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        needs = NEEDS.match(before)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(fence))
        found.append(Block(page, i + 1, kind, "\n".join(lines[i + 1:end]) + "\n",
                           needs.group(1) if needs else None))
        i = end + 1
    return found


def commands(block: Block) -> list[tuple[str, str]]:
    """A console block's commands (continued lines joined) and what each prints."""
    runs: list[tuple[str, list[str]]] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + "\n" + lines[i]
            runs.append((command, []))
        else:
            assert runs, f"{block.page.name} line {block.line}: output before any command"
            runs[-1][1].append(line)
        i += 1
    return [(command, "".join(f"{line}\n" for line in printed)) for command, printed in runs]


def missing(needs: str | None) -> str | None:
    """Why a block that needs ``needs`` cannot run here, or None."""
    if needs is None:
        return None
    if needs == "gpu":
        from tests.conftest import gpu_available

        return None if gpu_available() else "no usable GPU"
    return None if shutil.which(needs) else f"no {needs} on PATH"


def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    return work


def environment() -> dict[str, str]:
    """This environment, with the interpreter's scripts (the installed ``swath``) first on
    PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def check_output(where: str, command: str, want: str, got: str) -> None:
    checker = doctest.OutputChecker()
    if not checker.check_output(want, got, FLAGS):
        pytest.fail(f"{where}: `{command}` printed\n{got}\nnot what the page shows:\n{want}")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_examples(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's examples, in order, in one directory: what a block writes, the next reads."""
    work = workdir(tmp_path)
    monkeypatch.chdir(work)
    env = environment()
    names: dict[str, object] = {"__name__": "__main__"}
    commands_run = 0
    for block in blocks(page):
        where = f"{page_id(page)} line {block.line}"
        if block.kind not in ("console", "pycon", "python") or missing(block.needs):
            continue
        if block.kind == "console":
            for command, want in commands(block):
                done = subprocess.run(["bash", "-c", command], cwd=work, env=env,
                                      capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    assert want, f"{where}: `{command}` exited {done.returncode}:\n{done.stderr}"
                    check_output(where, command, want, done.stderr)
                else:
                    check_output(where, command, want, done.stdout)
                commands_run += 1
        elif block.kind == "python":
            script = work / f"example_{block.line}.py"
            script.write_text(block.text, encoding="utf-8")
            done = subprocess.run([sys.executable, script.name], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{where}: the script failed:\n{done.stderr}"
        else:
            test = doctest.DocTestParser().get_doctest(block.text, names, where, str(page),
                                                       block.line)
            runner = doctest.DocTestRunner(optionflags=FLAGS)
            report: list[str] = []
            runner.run(test, out=report.append, clear_globs=False)
            names.update(test.globs)         # the page's next blocks see them
            assert runner.failures == 0, "".join(report)
    if page.name == "README.md":
        assert commands_run >= 4, "the README's quick start: a command per workload"


@pytest.mark.parametrize("module", ["swath.engine.cluster", "swath.results.search",
                                    "swath.results.allpairs",
                                    "swath.results.pairs", "swath.results.longpair"])
def test_api_reference_examples(module: str, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The docstrings' examples of the API reference's modules not doctested elsewhere."""
    monkeypatch.chdir(workdir(tmp_path))
    result = doctest.testmod(importlib.import_module(module), optionflags=FLAGS)
    assert result.failed == 0 and result.attempted > 0


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_links_lead_somewhere(page: Path) -> None:
    """Every relative link of a page names a file of the repository (the documentation
    build checks the docs' links to their own pages and anchors too)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        assert (page.parent / path).exists(), f"{page_id(page)}: a link to {target}: no such file"


def test_readme_is_short_and_tests_in_one_line() -> None:
    """The README stays an introduction (the reference lives in docs/), and its Test
    section is one command line, which .ci/run runs as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= README_LIMIT, f"README.md: {len(readme)} characters"
    section = readme.split("\n## Test\n", 1)[1].split("\n## ", 1)[0]
    fenced = re.findall(r"^```\w*\n(.*?)^```", section, flags=re.S | re.M)
    assert [block.count("\n") for block in fenced] == [1], fenced
