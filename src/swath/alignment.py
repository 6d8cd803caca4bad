"""The result of aligning one pair: score, coordinates and an extended CIGAR; and the
CIGARs as stores keep them, BAM's packed operations.

A store keeps a CIGAR as BAM does: each run one little-endian uint32, ``length << 4 |
op``, op codes in BAM's order ``MIDNSHP=X`` (``=`` 7, ``X`` 8, ``I`` 1, ``D`` 2). Text is
made only where CIGARs are shown: :func:`pack_cigars` and :func:`unpack_cigars` convert
many at once in numpy (a buffer and its lengths, no object a CIGAR), :func:`cigar_ops`
and :func:`ops_cigar` one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from swath.constants import OP_DELETE, OP_INSERT, OP_MATCH

#: BAM's CIGAR operations, each at its code
BAM_OPS = "MIDNSHP=X"
_BAM_CODES = np.full(256, 255, dtype=np.uint32)        # by ASCII letter
_BAM_CODES[np.frombuffer(BAM_OPS.encode("ascii"), np.uint8)] = np.arange(len(BAM_OPS))
_BAM_LETTERS = np.frombuffer(BAM_OPS.encode("ascii"), np.uint8)
_MAX_RUN = (1 << 28) - 1                                # BAM's 28 bits of a run's length
_POWERS = 10 ** np.arange(10, dtype=np.int64)           # a run length's decimal digits
_CIGAR_RUN = re.compile(r"(\d+)([=XID])")
# the CIGAR letter of each op, by op (a diagonal step's X becomes = where the residues match)
_OP_LETTERS = np.zeros(1 + max(OP_MATCH, OP_INSERT, OP_DELETE), dtype=np.uint8)
_OP_LETTERS[[OP_MATCH, OP_INSERT, OP_DELETE]] = ord("X"), ord("I"), ord("D")


def cigar_runs(cigar: str) -> list[tuple[int, str]]:
    """Split an extended CIGAR into ``(length, op)`` runs (ops ``=``, ``X``, ``I``, ``D``)."""
    return [(int(n), op) for n, op in _CIGAR_RUN.findall(cigar)]


@dataclass(frozen=True)
class CigarRunArrays:
    """The runs of many extended CIGARs, end to end, as numpy arrays.

    Run ``r`` has ``lengths[r]`` columns of operation ``ops[r]`` (an ASCII code: ``=``,
    ``X``, ``I``, ``D``); the runs of CIGAR ``i`` are ``first[i]:first[i + 1]``.
    """

    lengths: npt.NDArray[np.int64]
    ops: npt.NDArray[np.uint8]
    first: npt.NDArray[np.int64]


def cigar_run_arrays(cigars: Sequence[str] | npt.NDArray[Any] | tuple[np.ndarray, np.ndarray]
                     ) -> CigarRunArrays:
    """The runs of many CIGARs, read in numpy without a loop over CIGARs.

    ``cigars`` are strings, or one ASCII buffer (uint8) and its ``N + 1`` offsets, as the
    kernels' ``align_batch`` returns them.

    Examples
    --------
    >>> runs = cigar_run_arrays(["2I13=", "", "4="])
    >>> runs.lengths.tolist(), bytes(runs.ops), runs.first.tolist()
    ([2, 13, 4], b'I==', [0, 2, 2, 3])
    """
    if isinstance(cigars, tuple):
        text, offsets = np.asarray(cigars[0], dtype=np.uint8), np.asarray(cigars[1], np.int64)
    else:
        text = np.frombuffer("".join(cigars).encode("ascii"), dtype=np.uint8)
        offsets = np.zeros(len(cigars) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, cigars), np.int64, len(cigars)), out=offsets[1:])
    letter = text > ord("9")
    at = np.flatnonzero(letter)                          # each run's operation
    first = np.searchsorted(at, offsets).astype(np.int64)   # each CIGAR's first run
    if not len(at):
        return CigarRunArrays(np.zeros(0, np.int64), np.zeros(0, np.uint8), first)
    # a run's length: the digits before its letter, read by numpy's text parser with the
    # letters as separators (a CIGAR's runs all end with a letter: none joins the next)
    digits = np.where(letter, np.uint8(ord(" ")), text).tobytes()
    lengths = np.fromstring(digits, dtype=np.int64, sep=" ")
    return CigarRunArrays(lengths, text[at], first)


def join_cigars(pieces: list[str]) -> str:
    """One CIGAR from consecutive pieces, merging the runs that meet at their joins.

    >>> join_cigars(["3=1X", "2X4=", "", "1I"])
    '3=3X4=1I'
    """
    runs: list[list[Any]] = []
    for piece in pieces:
        for length, op in cigar_runs(piece):
            if runs and runs[-1][1] == op:
                runs[-1][0] += length
            else:
                runs.append([length, op])
    return "".join(f"{length}{op}" for length, op in runs)


def pack_cigars(text: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CIGARs given as one ASCII buffer (uint8, one after another) and their lengths, as
    BAM's packed operations: every run's ``length << 4 | op`` (uint32, one CIGAR's after
    another) and each CIGAR's count of runs (int64). In numpy, without a loop over CIGARs.

    Raises
    ------
    ValueError
        An operation is not one of BAM's (``MIDNSHP=X``), or a run is longer than BAM's
        28 bits hold.

    Examples
    --------
    >>> ops, counts = pack_cigars(np.frombuffer(b"3=1X2I", np.uint8), np.array([4, 0, 2]))
    >>> ops.tolist(), counts.tolist()
    ([55, 24, 33], [2, 0, 1])
    """
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    runs = cigar_run_arrays((text, offsets))
    codes = _BAM_CODES[runs.ops]
    if len(codes) and (codes.max() >= len(BAM_OPS) or runs.lengths.max() > _MAX_RUN):
        raise ValueError("CIGARs hold an operation that is not BAM's (MIDNSHP=X) or a run "
                         f"longer than {_MAX_RUN}")
    return runs.lengths.astype(np.uint32) << 4 | codes, np.diff(runs.first)


def unpack_cigars(ops: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CIGARs of BAM's packed operations (``ops``, one CIGAR's after another) and
    each CIGAR's count of them, as one ASCII buffer (uint8) and each CIGAR's length in it
    (int64): :func:`pack_cigars` undone, in numpy.

    Examples
    --------
    >>> text, lengths = unpack_cigars(np.array([55, 24, 33], np.uint32), np.array([2, 0, 1]))
    >>> text.tobytes(), lengths.tolist()
    (b'3=1X2I', [4, 0, 2])
    """
    ops = np.asarray(ops, dtype=np.uint32)
    runs = (ops >> 4).astype(np.int64)
    digits = np.searchsorted(_POWERS, runs, side="right")     # 0 is written "0"
    digits = np.maximum(digits, 1)
    width = digits + 1                                        # the digits, then the letter
    ends = np.cumsum(width)
    run = np.repeat(np.arange(len(ops)), width)               # each character's run
    place = digits[run] - 1 - (np.arange(int(ends[-1]) if len(ends) else 0)
                               - (ends - width)[run])         # its power of ten; -1: letter
    text = np.where(place >= 0, ord("0") + runs[run] // _POWERS[np.maximum(place, 0)] % 10,
                    _BAM_LETTERS[(ops & 15)[run] % len(BAM_OPS)]).astype(np.uint8)
    first = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    written = np.concatenate([[0], ends])
    return text, np.diff(written[first])


def cigar_ops(cigar: str) -> np.ndarray:
    """One CIGAR as BAM's packed operations (uint32): :func:`pack_cigars` of one.

    >>> cigar_ops("2=1D").tolist()
    [39, 18]
    """
    text = np.frombuffer(cigar.encode("ascii"), np.uint8)
    return pack_cigars(text, np.array([len(text)]))[0]


def ops_cigar(ops: np.ndarray) -> str:
    """One CIGAR of BAM's packed operations: :func:`unpack_cigars` of one.

    >>> ops_cigar(np.array([39, 18], np.uint32))
    '2=1D'
    """
    return unpack_cigars(ops, np.array([len(ops)]))[0].tobytes().decode("ascii")


def packed_cigars(cigars: Sequence[str] | npt.NDArray[Any]) -> npt.NDArray[Any]:
    """CIGAR strings (any shape) as a store keeps them: each one's packed operations as
    little-endian uint32 bytes (a Zarr variable-length bytes value), in an object array of
    the same shape.

    >>> [np.frombuffer(value, "<u4").tolist() for value in packed_cigars(["2=1D", ""])]
    [[39, 18], []]
    """
    strings = np.asarray(cigars, dtype=object)
    flat = strings.ravel().tolist()
    text = np.frombuffer("".join(flat).encode("ascii"), np.uint8)
    ops, counts = pack_cigars(text, np.fromiter(map(len, flat), np.int64, len(flat)))
    return _split(ops.astype("<u4").tobytes(), 4 * counts).reshape(strings.shape)


def unpacked_cigars(packed: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """:func:`packed_cigars` undone: the CIGAR strings of packed values (any shape), an
    object array of the same shape.

    >>> unpacked_cigars(packed_cigars(["2=1D", "", "7X"])).tolist()
    ['2=1D', '', '7X']
    """
    values = np.asarray(packed, dtype=object)
    flat = values.ravel().tolist()
    ops = np.frombuffer(b"".join(flat), dtype="<u4")
    text, lengths = unpack_cigars(ops, np.fromiter(map(len, flat), np.int64, len(flat)) // 4)
    return cigar_strings(text, lengths).reshape(values.shape)


def cigar_strings(text: np.ndarray, lengths: np.ndarray) -> npt.NDArray[Any]:
    """The CIGARs of an ASCII buffer and their lengths, as an object array of str.

    >>> cigar_strings(np.frombuffer(b"3=1X2=", np.uint8), np.array([2, 0, 4])).tolist()
    ['3=', '', '1X2=']
    """
    return _split(text.tobytes().decode("ascii"), lengths)


def _split(data: str | bytes, lengths: np.ndarray) -> npt.NDArray[Any]:
    """``data`` cut in pieces of ``lengths``, one after another (an object array)."""
    ends = np.cumsum(lengths, dtype=np.int64).tolist()
    pieces = np.empty(len(ends), dtype=object)
    pieces[:] = [data[end - size:end] for end, size in
                 zip(ends, np.asarray(lengths).tolist(), strict=True)]
    return pieces


@dataclass(frozen=True)
class Alignment:
    """One optimal alignment of a query against a target.

    Coordinates are 0-based and end-exclusive (parasail and pyopal report
    inclusive ends): ``query[query_start:query_end]`` is the aligned part of the query.

    Attributes
    ----------
    score : int
        The optimal score under the scoring scheme.
    query_start, query_end : int
        The aligned query residues, 0-based, end exclusive.
    target_start, target_end : int
        The aligned target residues, 0-based, end exclusive.
    cigar : str
        Extended CIGAR: ``=`` match, ``X`` mismatch, ``I`` a query residue against
        a gap, ``D`` a target residue against a gap.
    mode : str
        ``"local"``, ``"global"`` or ``"semiglobal"``.

    Examples
    --------
    >>> aln = Alignment(7, 0, 4, 0, 5, "2=1D2=", "local")
    >>> aln.identity, aln.length
    (0.8, 5)
    """

    score: int
    query_start: int
    query_end: int
    target_start: int
    target_end: int
    cigar: str
    mode: str = "local"

    @property
    def length(self) -> int:
        """Number of alignment columns (matches, mismatches and gap positions)."""
        return sum(n for n, _ in cigar_runs(self.cigar))

    @property
    def matches(self) -> int:
        """Number of identical residue pairs."""
        return sum(n for n, op in cigar_runs(self.cigar) if op == "=")

    @property
    def mismatches(self) -> int:
        """Number of aligned residue pairs that differ."""
        return sum(n for n, op in cigar_runs(self.cigar) if op == "X")

    @property
    def gap_opens(self) -> int:
        """Number of gaps (runs of ``I`` or ``D``)."""
        return sum(1 for _, op in cigar_runs(self.cigar) if op in "ID")

    @property
    def identity(self) -> float:
        """Matches over alignment columns (BLAST's pident / 100); 0.0 for an empty alignment."""
        length = self.length
        return self.matches / length if length else 0.0


def cigar_from_path(ops: np.ndarray, query: np.ndarray, target: np.ndarray, query_start: int,
                    target_start: int) -> str:
    """Extended CIGAR of a path of kernel ops (``swath.constants.OP_*``).

    Diagonal steps become ``=`` or ``X`` by comparing the residues they pair.
    """
    if len(ops) == 0:
        return ""
    ops = np.asarray(ops, dtype=np.uint8)
    diagonal = ops == OP_MATCH
    q_pos = query_start + np.cumsum(ops != OP_DELETE) - 1
    t_pos = target_start + np.cumsum(ops != OP_INSERT) - 1
    letters = _OP_LETTERS[ops]
    same = diagonal & (query[np.where(diagonal, q_pos, 0)] == target[np.where(diagonal, t_pos, 0)])
    letters[same] = ord("=")
    starts = np.flatnonzero(np.r_[True, letters[1:] != letters[:-1]])
    lengths = np.diff(np.r_[starts, len(letters)])
    runs = zip(lengths.tolist(), letters[starts].tolist(), strict=True)
    return "".join(f"{n}{chr(c)}" for n, c in runs)
