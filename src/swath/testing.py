"""A plain NumPy reference aligner: the judge every kernel is tested against.

It fills the three Gotoh matrices in full (O(m * n) memory, Python loops: small inputs
only) and traces back with the tie rules of ``swath.kernels.cpu.traceback``. In global
mode, terminal gaps cost the scheme's end costs (``Scoring.end_gaps``): row 0 and
column 0, E along the last row and F down the last column.
"""

from __future__ import annotations

import numpy as np

from swath.alignment import Alignment, cigar_runs
from swath.constants import MINUS_INFINITY_64
from swath.scoring import Scoring


def reference_matrices(query: np.ndarray, target: np.ndarray, scoring: Scoring, mode: str
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The H, E (along rows, ``D``) and F (down columns, ``I``) matrices, (m+1) x (n+1)."""
    m, n = len(query), len(target)
    ego, ege = _end_costs(scoring, mode)
    H = np.zeros((m + 1, n + 1), dtype=np.int64)
    E = np.full((m + 1, n + 1), MINUS_INFINITY_64, dtype=np.int64)
    F = np.full((m + 1, n + 1), MINUS_INFINITY_64, dtype=np.int64)
    if mode != "local":
        H[1:, 0] = -(ego + ege * np.arange(1, m + 1))
    if mode == "global":
        H[0, 1:] = -(ego + ege * np.arange(1, n + 1))
    sub = scoring.matrix
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            go, ge = _costs(scoring, mode, i == m)
            E[i, j] = max(H[i, j - 1] - go - ge, E[i, j - 1] - ge)
            go, ge = _costs(scoring, mode, j == n)
            F[i, j] = max(H[i - 1, j] - go - ge, F[i - 1, j] - ge)
            h = max(H[i - 1, j - 1] + sub[query[i - 1], target[j - 1]], E[i, j], F[i, j])
            H[i, j] = max(h, 0) if mode == "local" else h
    return H, E, F


def _end_costs(scoring: Scoring, mode: str) -> tuple[int, int]:
    """The (open, extend) of terminal gaps in ``mode``: the end costs in global mode."""
    return _costs(scoring, mode, True)


def _costs(scoring: Scoring, mode: str, terminal: bool) -> tuple[int, int]:
    """The (open, extend) of a gap, terminal or not, in ``mode``."""
    if terminal and mode == "global" and scoring.end_gaps is not None:
        return scoring.end_gaps
    return scoring.gap_open, scoring.gap_extend


def reference_align(query: np.ndarray, target: np.ndarray, scoring: Scoring,
                    mode: str = "local") -> Alignment:
    """The optimal alignment of two encoded sequences, by the textbook recurrences.

    Examples
    --------
    >>> sc = Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> a = sc.alphabet.encode("ACGTACGT")
    >>> reference_align(a, a, sc, "global").cigar
    '8='
    """
    H, E, F = reference_matrices(query, target, scoring, mode)
    m, n = len(query), len(target)
    if mode == "global":
        i, j = m, n
    elif mode == "semiglobal":
        i, j = m, 1 + int(np.argmax(H[m, 1:]))
    else:
        i, j = (int(x) for x in np.unravel_index(int(np.argmax(H)), H.shape))
    end_i, end_j, score = i, j, int(H[i, j])
    ops: list[str] = []
    state = "H"
    while i > 0 and j > 0:
        if state == "H":
            diag = H[i - 1, j - 1] + scoring.matrix[query[i - 1], target[j - 1]]
            if mode == "local" and H[i, j] == 0:
                break
            if H[i, j] == diag:
                ops.append("=" if query[i - 1] == target[j - 1] else "X")
                i, j = i - 1, j - 1
            else:
                state = "E" if H[i, j] == E[i, j] else "F"
        elif state == "E":
            ops.append("D")
            go, ge = _costs(scoring, mode, i == m)
            state = "H" if E[i, j] == H[i, j - 1] - go - ge else "E"
            j -= 1
        else:
            ops.append("I")
            go, ge = _costs(scoring, mode, j == n)
            state = "H" if F[i, j] == H[i - 1, j] - go - ge else "F"
            i -= 1
    if mode != "local":
        ops.extend("I" * i)
        i = 0
    if mode == "global":
        ops.extend("D" * j)
        j = 0
    return Alignment(score, i, end_i, j, end_j, _to_cigar(ops[::-1]), mode)


def _to_cigar(ops: list[str]) -> str:
    out: list[str] = []
    for op in ops:
        if out and out[-1][-1] == op:
            out[-1] = f"{int(out[-1][:-1]) + 1}{op}"
        else:
            out.append(f"1{op}")
    return "".join(out)


def rescore(alignment: Alignment, query: np.ndarray, target: np.ndarray, scoring: Scoring) -> int:
    """The score of ``alignment``'s CIGAR, recomputed residue by residue.

    End gaps that the mode leaves free are not charged: in semiglobal mode the
    target outside ``target_start:target_end`` is simply not aligned. In global mode a
    terminal gap (``D`` before the first or after the last query residue, ``I`` before
    the first or after the last target residue) costs the scheme's end costs.
    """
    i, j, total = alignment.query_start, alignment.target_start, 0
    m, n = len(query), len(target)
    for length, op in cigar_runs(alignment.cigar):
        if op in "=X":
            for _ in range(length):
                if (query[i] == target[j]) != (op == "="):
                    raise AssertionError(f"CIGAR op {op} at query {i}, target {j} is wrong")
                total += int(scoring.matrix[query[i], target[j]])
                i, j = i + 1, j + 1
        else:
            edge = j in (0, n) if op == "I" else i in (0, m)
            total -= scoring.gap_cost(length, terminal=edge and alignment.mode == "global")
            if op == "I":
                i += length
            else:
                j += length
    if (i, j) != (alignment.query_end, alignment.target_end):
        raise AssertionError(f"CIGAR ends at ({i}, {j}), not at the alignment's end")
    return total
