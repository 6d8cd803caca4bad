"""The CUDA sources beside this file, compiled once per process with cupy.RawModule.

Every source compiles with the constants of :mod:`swath.constants` as macros
(``OPTIONS``). CuPy keeps the compiled binaries in its on-disk kernel cache, keyed by
the source text and the options, so a second process starts without compiling; the
headers a source includes are not part of CuPy's key, so each source's text leads with
a digest of them (:func:`source_text`): a swath whose headers changed compiles anew. A source
that does not compile raises :class:`~swath.errors.KernelCompileError`, one line naming
it.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from pathlib import Path

import cupy

from swath.constants import BANDED_GROUP, MODE_CODES, MODES, TRACEBACK_ROWS, cuda_macros
from swath.errors import KernelCompileError
from swath.kernels.probe import one_line

HERE = Path(__file__).resolve().parent
# every constant of swath.constants as a macro of the same name (a negative value in
# parentheses: one operand wherever the macro stands)
DEFINES = tuple(f"-D{name}={value if value >= 0 else f'({value})'}"
                for name, value in cuda_macros().items())
OPTIONS = ("-std=c++17", f"-I{HERE}", *DEFINES)
GROUP_SIZES = (4, 8, 16, 32)   # threads per group (one warp at most)
FILL_GROUPS = (BANDED_GROUP, *GROUP_SIZES)   # the group sizes of a fill's plan
# (threads per group, query rows per thread) of the search kernels, by rows per pass
SEARCH_CONFIGS = ((4, 16), (8, 16), (8, 32), (16, 16))
CELLS = ("Packed16", "QueryPacked16", "Int32")


def search_name(group: int, rows: int, cell: str, mode: str) -> str:
    return f"search_scores<{group}, {rows}, {cell}, {MODE_CODES[mode]}>"


def fill_name(group: int, mode: str, directions: bool = True, ends: bool = False) -> str:
    """traceback.cu's fill; ``ends``: global mode's with end costs (swath.kernels.scheme)."""
    return (f"traceback_fill<{group}, {TRACEBACK_ROWS}, {MODE_CODES[mode]}, "
            f"{str(directions).lower()}, {str(ends).lower()}>")


ENDS_MODES = ("local", "semiglobal")    # ends.cu's modes (global pairs are computed whole)


def ends_name(group: int, mode: str) -> str:
    return f"traceback_ends<{group}, {MODE_CODES[mode]}>"


def codes_name(mode: str) -> str:
    """codes16.cu's kernel: the codes of banded pairs (BANDED_GROUP), two a register."""
    return f"banded_codes<{MODE_CODES[mode]}>"


TILE_ROWS = {False: (4, 8, 16), True: (4, 8)}     # rows per lane: scores, origins


def tile_name(rows: int, local: bool, origins: bool, packed: bool) -> str:
    flags = ", ".join(str(x).lower() for x in (local, origins, packed))
    return f"tile_forward<{rows}, {flags}>"


def batch_name(rows: int, packed: bool) -> str:
    return f"tile_batch<{rows}, {str(packed).lower()}>"


BAND_WIDTHS = (16, 32, 64, 256, 1024, 4096)   # diagonals of the banded kernel's instances


def band_name(width: int) -> str:
    return f"band_scores<{width}>"


_NAMES = {
    "band.cu": tuple(band_name(w) for w in BAND_WIDTHS),
    "ends.cu": tuple(ends_name(g, m) for g in GROUP_SIZES for m in ENDS_MODES),
    "search.cu": tuple(search_name(g, r, c, m) for g, r in SEARCH_CONFIGS for c in CELLS
                       for m in MODES),
    "codes16.cu": tuple(codes_name(m) for m in ENDS_MODES),
    "traceback.cu": tuple([fill_name(g, m, d) for g in GROUP_SIZES for m in MODES
                           for d in (True, False)]
                          + [fill_name(g, "global", d, True) for g in GROUP_SIZES
                             for d in (True, False)]
                          + ["compact_text", "cigar_counts"]),
    "tiles.cu": tuple(tile_name(r, local, origins, packed) for origins, rows in TILE_ROWS.items()
                      for r in rows for local in (True, False) for packed in (True, False))
    + tuple(batch_name(r, packed) for r in TILE_ROWS[False] for packed in (True, False)),
}


# sources whose instances compile one at a time, when first used (each run uses few)
_ONE_BY_ONE = ("tiles.cu", "band.cu")


_LOCKS = {source: threading.Lock() for source in _NAMES}


@functools.cache
def source_text(source: str) -> str:
    """``source``'s text behind a comment naming the digest of every header beside it
    (and a ``#line`` directive, so that NVRTC's line numbers stay the file's)."""
    headers = hashlib.sha256()
    for header in sorted(HERE.glob("*.cuh")):
        headers.update(header.name.encode() + b"\0" + header.read_bytes())
    return f"// headers {headers.hexdigest()}\n#line 1\n{(HERE / source).read_text()}"


@functools.cache
def _module(source: str, names: tuple[str, ...]) -> cupy.RawModule:
    return cupy.RawModule(code=source_text(source), options=OPTIONS, name_expressions=names)


def kernel(source: str, name: str) -> cupy.RawKernel:
    """The compiled kernel ``name`` (a template instance) of ``source``.

    Raises :class:`~swath.errors.KernelCompileError` when NVRTC rejects the source.
    """
    if name not in _NAMES[source]:
        raise KeyError(f"{name} is not an instance of {source}")
    try:
        # one thread compiles or loads a source (the probe's thread may be preloading it)
        with _LOCKS[source]:
            return _module(source, (name,) if source in _ONE_BY_ONE else _NAMES[source]
                           ).get_function(name)
    except cupy.cuda.compiler.CompileException as exc:
        raise KernelCompileError(
            f"swath's CUDA source {source} did not compile for {name} "
            f"({_in_source(one_line(exc), source)}); this is a bug in swath, please report "
            "it with this line and the output of python -c 'import cupy; cupy.show_config()'"
        ) from exc


def preload(source: str) -> None:
    """Compile (or load from CuPy's disk cache) and load every instance of ``source``
    (one compiled at once), as the first :func:`kernel` call would."""
    if source in _ONE_BY_ONE:
        raise ValueError(f"{source} compiles its instances one at a time, when first used")
    kernel(source, _NAMES[source][0])


def _in_source(line: str, source: str) -> str:
    """An NVRTC log line with CuPy's temporary copy of ``source`` named as ``source``
    (``/tmp/tmpab12/3f9e.cu(41): error: ...`` -> ``search.cu(41): error: ...``); lines
    in the headers beside it keep their names."""
    where = re.match(r"(\S+?)(\(\d+\): )", line)
    if where is None or Path(where[1]).parent == HERE:
        return line
    return f"{source}{where[2]}{line[where.end():]}"
