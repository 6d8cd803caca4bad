"""Every constant the Python code and the CUDA sources share, defined once.

Python imports them from here; every CUDA source gets each integer constant below as a
macro of the same name when it compiles (``-D NAME=value``, built from
:func:`cuda_macros` by ``swath.kernels.gpu._cuda``), so that no source retypes a value
(``tests/test_constants.py`` fails on a copy). A change here recompiles every kernel:
CuPy's kernel cache is keyed by the compile options.

This module imports nothing from swath: every layer may import it.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

# Modes: which ends of the two sequences an alignment may leave out. The API takes the
# name, the kernels the code; MODES lists the names in code order.
Mode = Literal["local", "global", "semiglobal"]
MODES: tuple[str, ...] = get_args(Mode)
MODE_LOCAL = 0          # Smith-Waterman: any part of the query against any part of the target
MODE_GLOBAL = 1         # Needleman-Wunsch: the whole query against the whole target
MODE_SEMIGLOBAL = 2     # the whole query against any part of the target
MODE_CODES = dict(zip(MODES, (MODE_LOCAL, MODE_GLOBAL, MODE_SEMIGLOBAL), strict=True))


def is_mode(name: object) -> TypeGuard[Mode]:
    """Whether ``name`` is one of ``MODES`` (then a ``Mode`` to type checkers)."""
    return name in MODES


# DP states: which of the three recurrences a path is in at a cell (a walk's state, and
# the state of an origin code ``cell * 4 + state``), and the start of a local path.
STATE_H = 0             # the cell's best score
STATE_E = 1             # a gap along the row: target residues against a gap (CIGAR D)
STATE_F = 2             # a gap down the column: query residues against a gap (CIGAR I)
STATE_START = 3         # where a local alignment starts (origin codes only)

# Direction codes of a cell, 4 bits (traceback.cu and the CPU kernels): where H came from
# (SOURCE_BITS of the code), and whether E and F extended a gap (else they opened one). A
# source of E or F leads the walk into that state (SOURCE_E - STATE_E == SOURCE_F - STATE_F).
SOURCE_START = 0        # a local path starts here (H = 0)
SOURCE_DIAGONAL = 1
SOURCE_E = 2
SOURCE_F = 3
SOURCE_BITS = 3         # the mask of the source
E_EXTENDED = 4          # E extended E
F_EXTENDED = 8          # F extended F

# Operations of a walked path (uint8, one a step).
OP_MATCH = 0            # a diagonal step: a query residue against a target residue (= or X)
OP_INSERT = 1           # a query residue against a gap (I)
OP_DELETE = 2           # a target residue against a gap (D)

# Minus infinity of the DP values: far below any score, and far enough above the type's
# least value that subtracting gap costs from it cannot wrap.
MINUS_INFINITY = -(1 << 30)       # int32 kernels: tiles, bands, the traceback lanes
MINUS_INFINITY_64 = -(1 << 40)    # int64 kernels and the reference DP (swath.testing)

# GPU launch shapes.
WARP = 32               # threads of a warp
BLOCK = 128             # threads of a block, every kernel
TRACEBACK_ROWS = 16     # query rows a thread of the batched traceback (ends, traceback, codes16)
BANDED_GROUP = 2        # threads of a group of codes16.cu (which takes two banded pairs)
ROW_GRAIN = 32          # search.cu: a query starts a stream's rows at a multiple of this

# Batched traceback (ends.cu, codes16.cu, walk.cuh).
BAND_FREE = 1 << 29     # the band edge (diagonals -BAND_FREE .. BAND_FREE) of a pair
                        # computed whole: every column
ENDS_PAD_SCORE = -4096  # the score of padding rows and columns against any residue
CODES_STAGE = 1024      # bytes of shared memory a warp of codes16.cu stages its codes in

# Tiles of a long pair on the GPU (tiles.cu).
WINDOW = 1024           # columns of a tier's ring
BATCH_FIELDS = 6        # int64 fields of a tile's row of tile_batch's table
BATCH_FIRST_TIER = 5    # the field that holds the tile's first tier (of the launch's)


def cuda_macros() -> dict[str, int]:
    """Every integer constant of this module, by name: the macros of every CUDA source."""
    return {name: value for name, value in globals().items()
            if name.isupper() and isinstance(value, int) and not isinstance(value, bool)}
