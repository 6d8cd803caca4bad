"""The result of aligning one pair: score, coordinates and an extended CIGAR."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from swath.constants import OP_DELETE, OP_INSERT, OP_MATCH

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
