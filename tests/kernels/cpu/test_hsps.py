"""Further local alignments of a pair (``--max-hsps``): each is the best through no cell
of those found before it, checked against a plain Python matrix with the same cells
blocked; none shares a cell with another or crosses it; each scores what its CIGAR
scores."""

from __future__ import annotations

import numpy as np
import pytest

import swath
from swath.alignment import Alignment
from swath.kernels.cpu.hsps import further_alignments
from swath.testing import rescore

NEG = -(1 << 40)


def best_blocked(q, t, scoring, blocked) -> int:
    """The best local score of q against t through no blocked cell (plain Python)."""
    go, ge = scoring.gap_open, scoring.gap_extend
    m, n = len(q), len(t)
    h = [[0] * (n + 1) for _ in range(m + 1)]
    e = [[NEG] * (n + 1) for _ in range(m + 1)]
    f = [[NEG] * (n + 1) for _ in range(m + 1)]
    best = 0
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            if (i, j) in blocked:
                h[i][j] = NEG
                continue
            e[i][j] = max(h[i][j - 1] - go - ge, e[i][j - 1] - ge)
            f[i][j] = max(h[i - 1][j] - go - ge, f[i - 1][j] - ge)
            h[i][j] = max(0, h[i - 1][j - 1] + int(scoring.matrix[q[i - 1], t[j - 1]]),
                          e[i][j], f[i][j])
            best = max(best, h[i][j])
    return best


def cells(start_i: int, start_j: int, cigar: str) -> list[tuple[int, int]]:
    """The cells (1-based) an alignment's path passes through."""
    out, i, j, number = [], start_i, start_j, ""
    for char in cigar:
        if char.isdigit():
            number += char
            continue
        for _ in range(int(number)):
            i, j = i + (char != "D"), j + (char != "I")
            out.append((i, j))
        number = ""
    return out


def repeats(rng, alphabet: str, unit: int, copies: int) -> str:
    """A sequence with ``copies`` mutated copies of one unit, random residues between."""
    motif = rng.choice(list(alphabet), unit)
    parts = []
    for _ in range(copies):
        copy = motif.copy()
        copy[rng.random(unit) < 0.1] = rng.choice(list(alphabet), 1)[0]
        parts += [rng.choice(list(alphabet), int(rng.integers(3, 12))), copy]
    return "".join(np.concatenate(parts))


@pytest.mark.parametrize("seed", range(12))
def test_each_further_alignment_is_the_best_around_those_before(seed):
    rng = np.random.default_rng(seed)
    protein = seed % 2 == 0
    scoring = (swath.Scoring.protein() if protein
               else swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2))
    letters = "ACDEFGHIKLMNPQRSTVWY" if protein else "ACGT"
    q = scoring.alphabet.encode(repeats(rng, letters, int(rng.integers(8, 20)), 3))
    t = scoring.alphabet.encode(repeats(rng, letters, int(rng.integers(8, 20)), 2)
                                if seed % 3 else "".join(rng.choice(list(letters), 40)))
    first = swath.align(q, t, scoring=scoring, device="cpu")
    if first.score == 0:
        return
    found = further_alignments(q, t, scoring, (first.query_start, first.target_start,
                                               first.cigar), 4)
    blocked = set(cells(first.query_start, first.target_start, first.cigar))
    previous = first.score
    for score, qs, qe, ts, te, cigar in found:
        assert score == best_blocked(q, t, scoring, blocked) <= previous
        path = cells(qs, ts, cigar)
        assert path[-1] == (qe, te) and not blocked & set(path)
        assert rescore(Alignment(score, qs, qe, ts, te, cigar, "local"), q, t, scoring) == score
        blocked |= set(path)
        previous = score
    if len(found) < 4:      # stopped: nothing scores above 0 around them
        assert best_blocked(q, t, scoring, blocked) == 0


def test_a_repeat_gives_one_alignment_a_copy():
    """A query against a target holding three copies of it: the copies, best first."""
    dna = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    motif = "ACGTTGCAGGCTAACGTTAG"
    target = "TTTT" + motif + "GGGCCC" + motif[:15] + "AAAA" + motif[:10] + "C"
    q, t = dna.alphabet.encode(motif), dna.alphabet.encode(target)
    first = swath.align(q, t, scoring=dna, device="cpu")
    assert (first.score, first.target_start) == (40, 4)
    found = further_alignments(q, t, dna, (first.query_start, first.target_start,
                                           first.cigar), 5)
    assert [(s, ts, cigar) for s, _, _, ts, _, cigar in found][:2] == [
        (30, 30, "15="), (22, 49, "11=")]
