"""Scores of gapless global alignments: cheap lower bounds of optimal global scores (the
surplus filter's, ``swath.identity.surplus``).

# m, n: a pair's lengths, k = min(m, n), d = |m - n|.

Of a query against a target, two alignments: residue i of each against residue i for
i < k, the longer one's last d residues a terminal gap; and the same from the ends, its
first d residues the terminal gap. Each is a global alignment, so the better of their
scores is at most the optimal score; O(k) a pair, against the DP's O(m * n).
"""

from __future__ import annotations

import numpy as np

from swath.kernels.cpu._jit import jit
from swath.kernels.cpu.cores import share_tasks
from swath.kernels.scheme import unpack
from swath.scoring import Scoring


@jit
def _gapless(q_res, q_off, t_res, t_off, matrix, gap_open, gap_extend, out, first_query, step):
    for qi in range(first_query, q_off.shape[0] - 1, step):
        q = q_res[q_off[qi]:q_off[qi + 1]]
        m = q.shape[0]
        for ti in range(t_off.shape[0] - 1):
            t = t_res[t_off[ti]:t_off[ti + 1]]
            n = t.shape[0]
            k, d = min(m, n), abs(m - n)
            head = 0
            tail = 0
            for i in range(k):
                head += matrix[q[i], t[i]]
                tail += matrix[q[m - k + i], t[n - k + i]]
            out[qi, ti] = max(head, tail) - ((gap_open + gap_extend * d) if d else 0)


def gapless_scores(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray, t_off: np.ndarray,
                   scoring: Scoring) -> np.ndarray:
    """The better score of the two gapless global alignments of every query against
    every target, ``(nq, nt)`` int32; the terminal gap at the scheme's end costs."""
    matrix, gap_open, gap_extend, ends = unpack(scoring, "global")
    out = np.empty((len(q_off) - 1, len(t_off) - 1), dtype=np.int32)
    share_tasks(_gapless, len(q_off) - 1, q_res, np.asarray(q_off, np.int64), t_res,
                np.asarray(t_off, np.int64), np.asarray(matrix, np.int32),
                *(ends or (gap_open, gap_extend)), out)
    return out
