"""One source for every constant the Python code and the CUDA sources share.

``swath.constants`` defines each once; the CUDA sources get them as ``-D`` macros. These
tests fail on a copy: a CUDA source that defines one of those names or retypes one of
their values, or a Python module that does (checked without a GPU).
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path
from typing import get_args
from unittest import mock

import pytest

import swath
import swath.kernels
from swath import constants

PACKAGE = Path(swath.__file__).resolve().parent
CUDA = PACKAGE / "kernels" / "gpu"
SHARED = constants.cuda_macros()
NAMES = {*SHARED, "Mode", "MODES", "MODE_CODES"}
# a value of swath.constants typed out: its literal, a mode, state or source compared
# with a number, a block size in launch bounds, the padding score
CUDA_COPIES = {
    "a shift of 1 by 29, 30 or 40": r"\b1\s*<<\s*(29|30|40)\b",
    "a mode compared with a number": r"\bMODE\s*[!=]=\s*\d",
    "a walk's state or source compared with a number": r"\b(state|src|source)\s*[!=]=\s*\d",
    "a block size in launch bounds": r"__launch_bounds__\s*\(\s*\d",
    "the padding score": r"-\s*4096\b",
}


def cuda_sources() -> list[Path]:
    return sorted([*CUDA.glob("*.cu"), *CUDA.glob("*.cuh")])


def python_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != Path(constants.__file__).resolve())


def without_comments(source: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.DOTALL)


def cuda_copies(source: str) -> list[str]:
    """What a CUDA source repeats of swath.constants: a definition of one of its names
    (``#define``, a ``constexpr`` or ``const`` variable), or one of its values."""
    code = without_comments(source)
    found = [f"#define {name}" for name in
             re.findall(r"^\s*#\s*define\s+(\w+)", code, flags=re.MULTILINE) if name in NAMES]
    for declaration in re.findall(r"\b(?:constexpr|const)\b[^;{()]*?=[^;]*;", code):
        found += [f"a declaration of {name}"
                  for name in re.findall(r"(\w+)\s*=(?!=)", declaration) if name in NAMES]
    found += [what for what, pattern in CUDA_COPIES.items()
              if re.search(pattern, code, flags=re.IGNORECASE)]
    return found


def _is_shift(node: ast.AST, bits: set[int]) -> bool:
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.LShift)
            and isinstance(node.left, ast.Constant) and node.left.value == 1
            and isinstance(node.right, ast.Constant) and node.right.value in bits)


def _words(items: list[ast.expr | None]) -> set[str] | None:
    """The strings ``items`` are, or None when one is something else."""
    words = {item.value for item in items
             if isinstance(item, ast.Constant) and isinstance(item.value, str)}
    return words if len(words) == len(items) else None


def python_copies(source: str) -> list[str]:
    """What a Python module repeats of swath.constants: an assignment to one of its names,
    minus infinity or BAND_FREE typed out, the modes listed or coded, or a mode compared
    with a number."""
    found = []
    modes = set(constants.MODES)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in [t, *getattr(t, "elts", [])]
                     if isinstance(n, ast.Name)]
            found += [f"an assignment to {name}" for name in names if name in NAMES]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and _is_shift(node.operand, {30, 40}):
            found.append(f"minus infinity typed out (line {node.lineno})")
        elif _is_shift(node, {29}):
            found.append(f"BAND_FREE typed out (line {node.lineno})")
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and _words(node.elts) == modes:
            # a tuple, list or set of the modes (a Literal of them too)
            found.append(f"the modes listed (line {node.lineno})")
        elif isinstance(node, ast.Dict) and _words(node.keys) == modes \
                and all(isinstance(v, ast.Constant) and type(v.value) is int
                        for v in node.values):
            found.append(f"the modes coded (line {node.lineno})")
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) \
                and node.left.id == "mode" \
                and any(isinstance(c, ast.Constant) and type(c.value) is int
                        for c in node.comparators):
            found.append(f"a mode compared with a number (line {node.lineno})")
    return found


@pytest.mark.parametrize("path", cuda_sources(), ids=lambda p: p.name)
def test_no_cuda_source_copies_a_constant(path: Path) -> None:
    assert cuda_copies(path.read_text()) == []


@pytest.mark.parametrize("path", python_modules(),
                         ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_python_module_copies_a_constant(path: Path) -> None:
    assert python_copies(path.read_text()) == []


@pytest.mark.parametrize(("source", "what"), [
    ("#define BAND_FREE (1 << 29)\n", "#define BAND_FREE"),
    ("    constexpr int G = 2, R = 16, BLOCK = 128;\n", "a declaration of BLOCK"),
    ("constexpr int WINDOW = 1024;  // columns\n", "a declaration of WINDOW"),
    ("constexpr int NEG = -(1 << 30);\n", "a shift of 1 by 29, 30 or 40"),
    ("if (MODE == 0) {\n", "a mode compared with a number"),
    ("    if (mode != 0 && i > 0) {\n", "a mode compared with a number"),
    ("        if (state == 1) {\n", "a walk's state or source compared with a number"),
    ("__global__ void __launch_bounds__(128, 4) k() {}\n", "a block size in launch bounds"),
    ("entry(2 * A, k) = (short)(-4096 + open);\n", "the padding score"),
])
def test_a_copy_in_cuda_is_found(source: str, what: str) -> None:
    assert what in cuda_copies(source)
    assert cuda_copies("// " + source) == []        # comments may name values


@pytest.mark.parametrize(("source", "what"), [
    ("NEG = -(1 << 30)\n", "minus infinity typed out (line 1)"),
    ("_NEG = -(1 << 40)\n", "minus infinity typed out (line 1)"),
    ("BAND_FREE = 1 << 29\n", "an assignment to BAND_FREE"),
    ("x = 1 << 29\n", "BAND_FREE typed out (line 1)"),
    ("OP_MATCH, OP_INSERT, OP_DELETE = 0, 1, 2\n", "an assignment to OP_MATCH"),
    ('MODES = ("global", "semiglobal", "local")\n', "an assignment to MODES"),
    ('codes = {"local": 0, "global": 1, "semiglobal": 2}\n', "the modes coded (line 1)"),
    ('names = ["global", "local", "semiglobal"]\n', "the modes listed (line 1)"),
    ("local = mode == 0\n", "a mode compared with a number (line 1)"),
])
def test_a_copy_in_python_is_found(source: str, what: str) -> None:
    assert what in python_copies(source)


def test_every_integer_constant_is_a_macro() -> None:
    """cuda_macros holds every integer constant the module defines (read from its source,
    not from the function under test)."""
    tree = ast.parse(Path(constants.__file__).read_text())
    defined = {t.id for node in tree.body if isinstance(node, ast.Assign)
               for t in node.targets if isinstance(t, ast.Name) and t.id.isupper()}
    integers = {name for name in defined if type(getattr(constants, name)) is int}
    assert integers == set(SHARED)
    assert tuple(constants.MODE_CODES) == constants.MODES
    assert get_args(constants.Mode) == constants.MODES
    assert [constants.MODE_CODES[m] for m in constants.MODES] == [
        constants.MODE_LOCAL, constants.MODE_GLOBAL, constants.MODE_SEMIGLOBAL]
    # a walk goes from a source of E or F to that state
    assert (constants.SOURCE_E - constants.STATE_E == constants.SOURCE_F - constants.STATE_F)


@pytest.fixture
def cuda_module(monkeypatch: pytest.MonkeyPatch) -> tuple[object, mock.MagicMock]:
    """``swath.kernels.gpu._cuda`` imported afresh against a stand-in for CuPy, and the
    stand-in; the real modules are back afterwards."""
    for name in [n for n in sys.modules if n == "cupy" or n.startswith("swath.kernels.gpu")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(swath.kernels, "gpu", raising=False)
    cupy = mock.MagicMock()
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    return importlib.import_module("swath.kernels.gpu._cuda"), cupy


def test_every_source_compiles_with_every_constant(cuda_module: tuple) -> None:
    """The options every CUDA source compiles with define each constant of
    swath.constants as a macro of its value, and nothing else."""
    cuda, cupy = cuda_module
    cuda._module("search.cu", ("search_scores<4, 16, Packed16, 0>",))
    options = cupy.RawModule.call_args.kwargs["options"]
    assert options == cuda.OPTIONS
    defined = dict(re.fullmatch(r"-D(\w+)=(.+)", o).groups() for o in options
                   if o.startswith("-D"))
    assert {name: int(value.strip("()")) for name, value in defined.items()} == SHARED


def test_a_changed_header_changes_the_source_cupy_keys_on(cuda_module: tuple,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """CuPy's kernel cache is keyed by the source text and options, not the headers a
    source includes: the text each source compiles from carries the headers' digest, so
    that a swath with changed headers does not load an older build's binaries."""
    cuda, cupy = cuda_module
    cuda._module("search.cu", ("search_scores<4, 16, Packed16, 0>",))
    code = cupy.RawModule.call_args.kwargs["code"]
    assert code.endswith((cuda.HERE / "search.cu").read_text())
    assert code.splitlines()[1] == "#line 1"
    for path in [*cuda.HERE.glob("*.cuh"), cuda.HERE / "search.cu"]:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(cuda, "HERE", tmp_path)
    cuda.source_text.cache_clear()
    assert cuda.source_text("search.cu") == code
    with open(tmp_path / "cells.cuh", "a") as header:
        header.write("// changed\n")
    cuda.source_text.cache_clear()
    assert cuda.source_text("search.cu") != code
