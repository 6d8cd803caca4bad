"""Full alignment of one pair with traceback, in O(m * n / 2) bytes.

# m: query length, n: target length, residues: uint8 codes,
# dirs: (m, ceil(n / 2)) uint8, two cells a byte (low nibble: even column).

Each cell's direction code takes 4 bits (``swath.constants``): where H came from
(``SOURCE_START``, ``SOURCE_DIAGONAL``, ``SOURCE_E`` or ``SOURCE_F``), plus
``E_EXTENDED`` where E extended E (else it opened from H) and ``F_EXTENDED`` where F
extended F. E runs along a row (a target residue against a gap: ``D``), F down a column
(a query residue against a gap: ``I``). Two 50 kbp sequences take 1.25 GB of direction
codes.

Ties are broken the same way by every backend and by ``swath.testing``: the
alignment ends at the first best cell in row-major order (local) or the first best
column of the last row (semiglobal); H prefers the diagonal, then E, then F, and in
local mode a cell scoring 0 starts the alignment; E and F prefer opening to extending.

Global mode with end costs (``swath.kernels.scheme``) fills with a specialisation of
its own: rows 0 and column 0 start from them, E along the last row and F down the last
column take them; the walk reads the codes as they are.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
from numba.extending import overload

from swath.alignment import cigar_from_path
from swath.constants import (
    E_EXTENDED,
    F_EXTENDED,
    MINUS_INFINITY_64,
    MODE_CODES,
    MODE_GLOBAL,
    MODE_LOCAL,
    MODE_SEMIGLOBAL,
    OP_DELETE,
    OP_INSERT,
    OP_MATCH,
    SOURCE_BITS,
    SOURCE_DIAGONAL,
    SOURCE_E,
    SOURCE_F,
    SOURCE_START,
    STATE_E,
    STATE_F,
    STATE_H,
    Mode,
)
from swath.kernels import bounds
from swath.kernels.bounds import fits_every_mode
from swath.kernels.cpu import pair_lanes, tile_tiers, warm
from swath.kernels.cpu._jit import jit, readonly
from swath.kernels.cpu.cores import on_every_core
from swath.kernels.cpu.lane_traceback import BLOCK_COLUMNS, LANES, lane_fill
from swath.kernels.cpu.lanes import pack_lanes, padded_matrix
from swath.kernels.scheme import unpack
from swath.scoring import Scoring, widest_gaps
from swath.sequences import take_concatenated

LANE_CODES_BUDGET = 1 << 28   # bytes of direction codes one lane group may fill
TIER_CELLS = 1 << 20          # a local DNA pair of this many cells fills in the tier lanes


@functools.cache
def _make_fill(ends: bool) -> Any:

    @jit
    def fill(q, t, sub, gap_open, gap_extend, end_open, end_extend, mode, dirs):
        """Fill the direction codes; return (score, end row, end column). ``end_open``,
        ``end_extend``: the terminal gaps' costs (with ``ends``; the interior ones
        else)."""
        m = q.shape[0]
        n = t.shape[0]
        goe = gap_open + gap_extend
        end_goe = end_open + end_extend
        h_row = np.empty(n + 1, np.int64)
        f_row = np.full(n + 1, MINUS_INFINITY_64, np.int64)
        for j in range(n + 1):
            h_row[j] = 0 if mode != MODE_GLOBAL or j == 0 else -(end_open + end_extend * j)
        best, best_i, best_j = np.int64(0), 0, 0
        for i in range(1, m + 1):
            h_diag = h_row[0]
            h_left = 0 if mode == MODE_LOCAL else -(end_open + end_extend * i)
            h_row[0] = h_left
            e = np.int64(MINUS_INFINITY_64)
            scores = sub[q[i - 1]]
            code_pair = 0
            row_goe, row_ge = goe, gap_extend
            if ends and i == m:
                row_goe, row_ge = end_goe, end_extend
            for j in range(1, n + 1):
                e_open = h_left - row_goe
                e_ext = e - row_ge
                e = max(e_open, e_ext)
                if ends and j == n:
                    f_open = h_row[j] - end_goe
                    f_ext = f_row[j] - end_extend
                else:
                    f_open = h_row[j] - goe
                    f_ext = f_row[j] - gap_extend
                f = max(f_open, f_ext)
                f_row[j] = f
                h = h_diag + scores[t[j - 1]]
                src = SOURCE_DIAGONAL
                if e > h:
                    h = e
                    src = SOURCE_E
                if f > h:
                    h = f
                    src = SOURCE_F
                if mode == MODE_LOCAL and h <= 0:
                    h = 0
                    src = SOURCE_START
                code = (src | (E_EXTENDED if e_ext > e_open else 0)
                        | (F_EXTENDED if f_ext > f_open else 0))
                if j & 1:
                    code_pair = code
                else:
                    dirs[i - 1, (j - 1) >> 1] = code_pair | code << 4
                h_diag = h_row[j]
                h_row[j] = h
                h_left = h
                if mode == MODE_LOCAL and h > best:
                    best, best_i, best_j = h, i, j
            if n & 1:
                dirs[i - 1, n >> 1] = code_pair
        if mode == MODE_GLOBAL:
            return h_row[n], m, n
        if mode == MODE_SEMIGLOBAL:
            best, best_j = h_row[1], 1
            for j in range(2, n + 1):
                if h_row[j] > best:
                    best, best_j = h_row[j], j
            return best, m, best_j
        return best, best_i, best_j

    return fill


def _fill(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
          mode: int, dirs: np.ndarray, end_gaps: tuple[int, int] | None = None
          ) -> tuple[int, int, int]:
    """Fill the direction codes of one pair; (score, end row, end column)."""
    end_open, end_extend = end_gaps or (gap_open, gap_extend)
    return _make_fill(end_gaps is not None)(readonly(q), readonly(t), readonly(sub), gap_open,
                                            gap_extend, end_open, end_extend, mode, dirs)


@jit
def _walk(dirs, mode, end_i, end_j, state, ops):
    """Trace back from (end_i, end_j) in ``state`` (``STATE_H``, ``STATE_E`` or ``STATE_F``);
    write ops end-first.

    Stops where a local alignment starts, or on row or column 0 (then, in global and
    semiglobal mode, adds the end gaps to the matrix corner). Returns (count, start i,
    start j, state there).
    """
    i, j, count = end_i, end_j, 0
    while i > 0 and j > 0:
        code = code_at(dirs, i, j)
        if state == STATE_H:
            src = code & SOURCE_BITS
            if src == SOURCE_START:
                break
            if src == SOURCE_DIAGONAL:
                ops[count] = OP_MATCH
                count += 1
                i -= 1
                j -= 1
            else:
                state = src - SOURCE_E + STATE_E     # the source's state, E or F
        elif state == STATE_E:
            ops[count] = OP_DELETE
            count += 1
            j -= 1
            state = STATE_E if code & E_EXTENDED else STATE_H
        else:
            ops[count] = OP_INSERT
            count += 1
            i -= 1
            state = STATE_F if code & F_EXTENDED else STATE_H
    if mode != MODE_LOCAL:
        while i > 0:
            ops[count] = OP_INSERT
            count += 1
            i -= 1
    if mode == MODE_GLOBAL:
        while j > 0:
            ops[count] = OP_DELETE
            count += 1
            j -= 1
    return count, i, j, state


def code_at(dirs: np.ndarray, i: int, j: int) -> int:
    """The direction code of cell (i, j), 1-based: in ``_fill``'s layout (2-D: a row of
    bytes a matrix row, two columns a byte, the low nibble the even column) or in the
    tier lanes' (3-D: ``tile_tiers.tile_codes``'; four columns of a lane's block a value,
    column ``c`` at bits ``4 c``). In Python (``_walk.py_func``) and in numba kernels."""
    return int((_fill_code if dirs.ndim == 2 else _tier_code)(dirs, i, j))


def _fill_code(dirs, i, j):      # unannotated: numba matches the implementations' signatures
    return (dirs[i - 1, (j - 1) >> 1] >> (((j - 1) & 1) * 4)) & 15


def _tier_code(dirs, i, j):
    lane, row = divmod(i - 1, dirs.shape[1])
    block, column = divmod(j - 1, tile_tiers.BLOCK_COLUMNS)
    return (dirs[block + lane, row, lane] >> (column * 4)) & 15


@overload(code_at)
def _code_at(dirs, i, j):
    return _fill_code if dirs.ndim == 2 else _tier_code


@jit
def _walk_cigar(dirs, mode, end_i, end_j, q, t, ops, text):
    """Trace back from (end_i, end_j) and write the path's extended CIGAR to ``text``
    (``ops``: scratch of m + n); returns (start i, start j, CIGAR length). The runs of
    :func:`swath.alignment.cigar_from_path`, without a Python object per run (a CPU
    search's or all-against-all's CIGARs spent as long in Python as in the fill)."""
    count, i, j, _ = _walk(dirs, mode, end_i, end_j, STATE_H, ops)
    size, run, letter = 0, 0, 0
    qi, tj = i, j
    for step in range(count, -1, -1):
        if step:
            op = ops[step - 1]
            if op == OP_MATCH:
                now = 61 if q[qi] == t[tj] else 88     # "=" or "X"
                qi += 1
                tj += 1
            elif op == OP_INSERT:
                now = 73                                # "I"
                qi += 1
            else:
                now = 68                                # "D"
                tj += 1
            if now == letter:
                run += 1
                continue
        if run:
            digits = 1
            while run >= 10 ** digits:
                digits += 1
            for d in range(digits):
                text[size + digits - 1 - d] = 48 + run // 10 ** d % 10
            text[size + digits] = letter
            size += digits + 1
        if step:
            letter, run = now, 1
    return i, j, size


@jit
def _walk_lanes(dirs, mode, ends, members, q_res, q_off, t_res, t_off, starts, text, out):
    """``_walk_cigar`` of each lane's pair (``members[lane]``, its end in ``ends[1:, lane]``)
    in ``dirs[..., lane]`` (either layout of ``code_at``); lane ``lane``'s CIGAR goes to
    ``text[starts[lane]:]``, and (start i, start j, CIGAR length) to ``out[:, lane]``."""
    ops = np.empty(text.shape[0], np.uint8)
    for lane in range(members.shape[0]):
        k = members[lane]
        q = q_res[q_off[k]:q_off[k + 1]]
        t = t_res[t_off[k]:t_off[k + 1]]
        out[0, lane], out[1, lane], out[2, lane] = _walk_cigar(
            dirs[..., lane], mode, ends[1, lane], ends[2, lane], q, t, ops,
            text[starts[lane]:])


@jit
def _place(text, offsets, members, piece, starts):
    """Copy the CIGAR of ``members[lane]`` from ``piece[starts[lane]:]`` to its place in
    ``text`` (``offsets``)."""
    for lane in range(members.shape[0]):
        at = offsets[members[lane]]
        for b in range(offsets[members[lane] + 1] - at):
            text[at + b] = piece[starts[lane] + b]


def align_pair(query: np.ndarray, target: np.ndarray, scoring: Scoring, mode: Mode
               ) -> tuple[int, int, int, int, int, np.ndarray]:
    """Optimal alignment of one pair (terminal gaps at the scheme's end costs in global
    mode).

    Returns ``(score, query_start, query_end, target_start, target_end, ops)`` with
    0-based end-exclusive coordinates and ``ops`` the path from start to end as
    ``OP_MATCH`` (diagonal), ``OP_INSERT`` and ``OP_DELETE`` codes (uint8).
    """
    matrix, gap_open, gap_extend, ends = unpack(scoring, mode)
    code = MODE_CODES[mode]
    dirs = np.empty(codes_shape(len(query), len(target)), dtype=np.uint8)
    score, end_i, end_j = _fill(query, target, matrix, gap_open, gap_extend, code, dirs, ends)
    return (int(score), *_trace(dirs, code, int(end_i), int(end_j), len(query) + len(target)))


def _trace(dirs: np.ndarray, mode_code: int, end_i: int, end_j: int, longest: int
           ) -> tuple[int, int, int, int, np.ndarray]:
    """``(query_start, query_end, target_start, target_end, ops)`` walked back from an end,
    in Python (``_walk``'s own code: one pair's path, a few microseconds a step, takes
    less than the compiled walk's first compile, about a second)."""
    ops = np.empty(longest, dtype=np.uint8)
    count, start_i, start_j, _ = _walk.py_func(dirs, mode_code, end_i, end_j, STATE_H, ops)
    return int(start_i), end_i, int(start_j), end_j, ops[:count][::-1].copy()


def _one_short(query: np.ndarray, target: np.ndarray, scoring: Scoring, mode: Mode
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``align_batch`` of one pair below ``TIER_CELLS``: the one-pair fill and the walk in
    Python (a first ``swath align`` compiles the fill alone, not the lane kernels and the
    compiled walk, a second or two)."""
    score, *coords, ops = align_pair(query, target, scoring, mode)
    cigar = cigar_from_path(ops, query, target, coords[0], coords[2]).encode()
    return (np.array([score], dtype=np.int64), np.array([coords], dtype=np.int64),
            np.frombuffer(cigar, dtype=np.uint8), np.array([0, len(cigar)], dtype=np.int64))


def codes_shape(query_length: Any, target_length: Any) -> tuple[Any, Any]:
    """Rows and bytes a row of a pair's 4-bit direction codes (two columns a byte); of
    many pairs at once for arrays of lengths."""
    return query_length, (target_length + 1) // 2


class _Scratch:
    """Direction-code buffers kept between calls, so that a pair does not pay for fresh
    pages (a Dask worker's ``MALLOC_TRIM_THRESHOLD_`` returns freed ones to the system:
    the kept hits of a search aligned measurably slower before)."""

    KEEP = 1 << 26     # larger buffers are not kept

    def __init__(self) -> None:
        self._free: list[np.ndarray] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def take(self, shape: tuple[int, ...]) -> Iterator[np.ndarray]:
        """An uninitialized uint8 array of ``shape``, returned to the pool afterwards."""
        size = int(np.prod(shape))
        with self._lock:
            buffer = self._free.pop() if self._free else np.empty(0, dtype=np.uint8)
        if buffer.size < size:
            buffer = np.empty(size, dtype=np.uint8)
        try:
            yield buffer[:size].reshape(shape)
        finally:
            if buffer.size <= self.KEEP:
                with self._lock:
                    self._free.append(buffer)


_SCRATCH = _Scratch()
SIDE_BY_SIDE_BYTES = 1 << 28   # larger direction buffers are filled one at a time


def _lane_groups(q_res: np.ndarray, q_off: np.ndarray, t_off: np.ndarray, matrix: np.ndarray,
                 gap_open: int, gap_extend: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Pairs that share a query, in groups of 2 to ``LANES`` of similar target lengths for
    the lane kernel; and the pairs left to the one-pair kernel (gap costs: the widest,
    ``swath.scoring.widest_gaps``)."""
    t_len = np.diff(t_off)
    by_query: dict[bytes, list[int]] = {}
    for k in range(len(q_off) - 1):
        by_query.setdefault(q_res[q_off[k]:q_off[k + 1]].tobytes(), []).append(k)
    groups, singles = [], []
    for query, pairs in by_query.items():
        if len(pairs) == 1:
            singles.append(pairs[0])
            continue
        members = np.array(pairs)
        members = members[np.argsort(t_len[members], kind="stable")]
        ok = fits_every_mode(len(query), t_len[members], matrix, gap_open, gap_extend,
                             np.int32)
        singles.extend(members[~ok].tolist())
        members = members[ok]
        for start in range(0, len(members), LANES):
            chunk = members[start:start + LANES]
            width = -(-int(t_len[chunk[-1]]) // BLOCK_COLUMNS) * BLOCK_COLUMNS
            codes = width // 2 * len(query) * LANES
            if len(chunk) > 1 and codes <= LANE_CODES_BUDGET:
                groups.append(chunk)
            else:
                singles.extend(chunk.tolist())
    return groups, np.array(singles, dtype=np.int64)


def _pair_groups(q_off: np.ndarray, t_off: np.ndarray, singles: np.ndarray, matrix: np.ndarray,
                 gap_open: int, gap_extend: int, present: np.ndarray | None = None
                 ) -> tuple[list[tuple[np.ndarray, np.dtype]], np.ndarray]:
    """Of ``singles``, groups of up to ``pair_lanes.lanes(dtype)`` pairs for the pair lane
    kernel at the narrowest width that holds their values (16 or 32 bits), pairs of like
    query and target lengths together; and the pairs left to the one-pair kernel (any
    matrix but ``pair_lanes.equal_scores``' form over the residues ``present``, values
    past 32 bits, a group's codes past ``LANE_CODES_BUDGET``; gap costs: the widest,
    ``swath.scoring.widest_gaps``)."""
    if pair_lanes.equal_scores(matrix, present) is None or not len(singles):
        return [], singles
    m, n = np.diff(q_off)[singles], np.diff(t_off)[singles]
    low, high = bounds.score_bounds(m, n, matrix, gap_open, gap_extend, "global")
    groups, left = [], np.ones(len(singles), dtype=bool)
    for dtype in (np.dtype(np.int16), np.dtype(np.int32)):
        lanes = pair_lanes.lanes(dtype)
        limit = np.iinfo(dtype).max - pair_lanes.BLOCK_COLUMNS
        ok = left & bounds.fits(low, high, dtype, gap_extend, pair_lanes.minus_infinity(dtype)) \
            & (np.maximum(m, n) < limit)
        left &= ~ok
        # chunks of similar target lengths, each sorted by query length: few padded cells
        order = np.flatnonzero(ok)[np.argsort(n[ok], kind="stable")]
        chunk = lanes * max(1, round(math.sqrt(len(order) / lanes)))
        for start in range(0, len(order), chunk):
            part = order[start:start + chunk]
            part = part[np.argsort(m[part], kind="stable")]
            for at in range(0, len(part), lanes):
                group = part[at:at + lanes]
                codes = int(m[group].max()) * (int(n[group].max()) // 2 + 1) * lanes
                if codes <= LANE_CODES_BUDGET:
                    groups.append((singles[group], dtype))
                else:
                    left[group] = True
    return groups, singles[left]


def align_batch(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                scoring: Scoring, mode: Mode, pairs: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Optimal alignment of query k against target k, for every k; with ``pairs`` (rows,
    cols), of query ``rows[k]`` against target ``cols[k]``; terminal gaps at the scheme's
    end costs (global mode) where they cost apart.

    Where the matrix scores one match and one mismatch (DNA), pairs run side by side in
    the pair lane kernel, 16 or 32-bit (``_pair_groups``); otherwise pairs that share a
    query (a search's kept hits) run side by side in the lane kernel (a group's codes at
    most ``LANE_CODES_BUDGET``); the rest, and pairs too large for either, one a core; pairs
    whose direction buffer passes ``SIDE_BY_SIDE_BYTES`` one after another on one core.
    Host memory holds at most about one buffer of either budget a core, and one of the
    largest pairs.

    Returns ``scores`` (N,) int64, ``coords`` (N, 4) int64 (query start, query end,
    target start, target end; 0-based, end exclusive), and the CIGARs as one uint8
    text buffer with (N + 1,) int64 offsets.
    """
    if pairs is not None:
        q_res, q_off = take_concatenated(q_res, q_off, pairs[0])
        t_res, t_off = take_concatenated(t_res, t_off, pairs[1])
    count = len(q_off) - 1
    if count == 1 and q_off[1] * t_off[1] < TIER_CELLS:
        return _one_short(q_res, t_res, scoring, mode)
    warm.wait()         # the kernels a child process may be compiling
    code = MODE_CODES[mode]
    matrix, gap_open, gap_extend, ends = unpack(scoring, mode)
    wide = widest_gaps(gap_open, gap_extend, ends)
    scores = np.zeros(count, dtype=np.int64)
    coords = np.zeros((count, 4), dtype=np.int64)
    sizes = np.zeros(count, dtype=np.int64)
    lengths = np.diff(q_off), np.diff(t_off)
    # the CIGARs, a piece a task: (pairs, their CIGARs end to end, where each starts)
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def query(k: int) -> np.ndarray:
        return q_res[q_off[k]:q_off[k + 1]]

    def target(k: int) -> np.ndarray:
        return t_res[t_off[k]:t_off[k + 1]]

    def keep(members: np.ndarray, dirs: np.ndarray, ends: np.ndarray) -> None:
        """Score, coordinates and CIGAR of each lane's pair (``members[lane]``, its codes
        ``dirs[:, :, lane]``, its score and end ``ends[:, lane]``), walked in one call."""
        ends = ends[:, :len(members)]
        starts = np.zeros(len(members) + 1, dtype=np.int64)
        np.cumsum(2 * (lengths[0][members] + lengths[1][members]) + 1, out=starts[1:])
        text = np.empty(int(starts[-1]), dtype=np.uint8)
        out = np.empty((3, len(members)), dtype=np.int64)
        _walk_lanes(dirs, code, np.ascontiguousarray(ends), members, readonly(q_res),
                    readonly(q_off), readonly(t_res), readonly(t_off), starts, text, out)
        scores[members] = ends[0]
        coords[members] = np.stack([out[0], ends[1], out[1], ends[2]], axis=1)
        sizes[members] = out[2]
        pieces.append((members, text, starts))

    def one(k: int) -> None:
        q, t = query(k), target(k)
        if tiered[k] and tiers(k, q, t):
            return
        with _SCRATCH.take(codes_shape(len(q), len(t))) as dirs:
            got = np.array(_fill(q, t, matrix, gap_open, gap_extend, code, dirs, ends))
            keep(np.array([k]), dirs[:, :, None], got[:, None])

    def tiers(k: int, q: np.ndarray, t: np.ndarray) -> bool:
        """A long local pair in the tier lanes; False where its values pass 32 bits."""
        assert tier is not None
        got = tile_tiers.pair_codes(q, t, tier, gap_open, gap_extend)
        if got is None:
            return False
        dirs, (score, i, j) = got
        keep(np.array([k]), dirs[..., None], np.array([[score], [max(i, 0)], [max(j, 0)]]))
        return True

    sub = padded_matrix(matrix, np.int32)

    def lanes(members: np.ndarray) -> None:
        q = query(members[0])
        cols, _, lens = pack_lanes(t_res, t_off, members, LANES, pad=matrix.shape[0],
                                   multiple=BLOCK_COLUMNS)
        got = np.zeros((3, LANES), dtype=np.int64)
        with _SCRATCH.take((len(q), len(cols) // 2, LANES)) as dirs:
            lane_fill(q, cols, lens[0], sub, gap_open, gap_extend, code, dirs, got, ends)
            keep(members, dirs, got)

    size = matrix.shape[0]
    held = (np.bincount(q_res, minlength=size)[:size] + np.bincount(t_res, minlength=size)[:size]
            ) > 0
    equal = pair_lanes.equal_scores(matrix, held)

    def pairs_side_by_side(members: np.ndarray, dtype: np.dtype) -> None:
        assert equal is not None
        rows, m_len = pair_lanes.pack(q_res, q_off, members, equal[2], dtype)
        cols, n_len = pair_lanes.pack(t_res, t_off, members, equal[3], dtype,
                                      multiple=pair_lanes.BLOCK_COLUMNS)
        got = np.zeros((3, len(m_len)), dtype=np.int64)
        with _SCRATCH.take((len(cols) // 2, len(rows), len(m_len))) as dirs:
            pair_lanes.pair_fill(rows, cols, m_len, n_len, equal, gap_open, gap_extend, code,
                                 dirs, got, ends)
            keep(members, dirs.transpose(1, 0, 2), got)

    # a matrix of one match and one mismatch score: every pair to the pair lane kernel
    # (16-bit where it can, twice the lanes), those that share a query too
    groups, singles = ([], np.arange(count, dtype=np.int64)) if equal is not None else \
        _lane_groups(q_res, q_off, t_off, matrix, *wide)
    # long local pairs of such a matrix: one pair in the tier lanes, one after another
    tier = tile_tiers.scheme(matrix, q_res, t_res) if mode == "local" else None
    tiered = np.zeros(count, dtype=bool)
    if tier is not None:
        tiered = (lengths[0] >= tile_tiers.lanes(tile_tiers.TYPES[0])) \
            & (lengths[0] * lengths[1] >= TIER_CELLS)
    singles = singles[~tiered[singles]]
    paired, singles = _pair_groups(q_off, t_off, singles, matrix, *wide, held)
    singles = np.concatenate([singles, np.flatnonzero(tiered)])
    # the numba kernels release the GIL: groups and pairs run side by side on every core,
    # but pairs whose directions pass SIDE_BY_SIDE_BYTES one after another, in one task
    # (memory: one of those at a time, not one a core), started first
    rows, width = codes_shape(np.diff(q_off)[singles], np.diff(t_off)[singles])
    side = rows * width <= SIDE_BY_SIDE_BYTES
    large = singles[~side].tolist()

    def one_by_one() -> None:
        for k in large:
            one(k)

    on_every_core(lambda task: task(), ([one_by_one] if large else [])
                  + [functools.partial(lanes, g) for g in groups]
                  + [functools.partial(pairs_side_by_side, *g) for g in paired]
                  + [functools.partial(one, k) for k in singles[side].tolist()])
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    text = np.empty(int(offsets[-1]), dtype=np.uint8)
    for members, piece, starts in pieces:
        _place(text, offsets, members, piece, starts)
    return scores, coords, text, offsets


def score_ends(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
               scoring: Scoring, mode: Mode) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score and end cell of query k against target k: ``(scores, query_end, target_end)``;
    terminal gaps at the scheme's end costs (global mode) where they cost apart.

    Ends are 0-based exclusive, with the tie rules of the traceback.
    """
    matrix, gap_open, gap_extend, ends = unpack(scoring, mode)
    count = len(q_off) - 1
    out = np.zeros((3, count), dtype=np.int64)
    for k in range(count):
        query, target = q_res[q_off[k]:q_off[k + 1]], t_res[t_off[k]:t_off[k + 1]]
        dirs = np.empty(codes_shape(len(query), len(target)), dtype=np.uint8)
        out[:, k] = _fill(query, target, matrix, gap_open, gap_extend, MODE_CODES[mode], dirs,
                          ends)
    return out[0], out[1], out[2]
