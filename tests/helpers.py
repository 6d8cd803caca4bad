"""What the tests share: scorings, random sequence makers, a FASTA writer, oracles (plain
references the kernels are judged by) and a fake CuPy.

Test modules import from here (and take fixtures from the conftest files), never from
each other.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

import swath
from swath.alignment import cigar_from_path
from swath.constants import MINUS_INFINITY_64, STATE_E, STATE_F, STATE_H, STATE_START
from swath.kernels.band_geometry import SKIPPED

PROTEIN = swath.Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
DNA = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
# groups of 4..16 threads x 16 or 32 rows; the GPU's partitions cut at target lengths 64,
# 128, 256: lengths on either side of each
EDGE_LENGTHS = [1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511,
                512, 513, 1023, 1024, 1025]
# tile shapes around the GPU tile kernel's bands (32 lanes x 4, 8 or 16 rows, then half
# bands, with and without a tail) and past its ring of 1,024 columns
TILE_SHAPES = [(1, 1), (5, 70), (31, 33), (256, 40), (257, 300), (600, 129), (768, 50),
               (1100, 515), (300, 2500)]
BOUNDARY_NEG = MINUS_INFINITY_64     # a closed gap on a tile's input boundary


# ---------------------------------------------------------------------------------
# Sequences


def packed(seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Encoded sequences as the kernels take a set: residues end to end and offsets."""
    return (np.concatenate(seqs).astype(np.uint8),
            np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64))


def random_set(rng: np.random.Generator, count: int, longest: int, alphabet: int
               ) -> list[np.ndarray]:
    """``count`` random sequences of lengths 1 to ``longest``."""
    return [rng.integers(0, alphabet, int(rng.integers(1, longest + 1))).astype(np.uint8)
            for _ in range(count)]


def related(rng: np.random.Generator, query: np.ndarray, length: int, alphabet: int
            ) -> np.ndarray:
    """A target of ``length`` holding a mutated piece of ``query`` (so scores are high)."""
    target = rng.integers(0, alphabet, length).astype(np.uint8)
    piece = query[: max(1, min(len(query), length) // 2)].copy()
    piece[rng.random(len(piece)) < 0.1] = rng.integers(0, alphabet)
    at = int(rng.integers(0, length - len(piece) + 1))
    target[at:at + len(piece)] = piece
    return target


def related_pair(rng: np.random.Generator, length: int, alphabet: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """A sequence and a mutated copy inside random flanks: substitutions, and gaps of
    1 to 12 residues on both sides (the path crosses tiles in H, E and F states)."""
    a = rng.integers(0, alphabet, length).astype(np.uint8)
    b = a.copy()
    for _ in range(max(1, length // 15)):
        at, size = int(rng.integers(0, len(b))), int(rng.integers(1, 13))
        b = np.delete(b, slice(at, at + size)) if rng.random() < 0.5 else \
            np.insert(b, at, rng.integers(0, alphabet, size).astype(np.uint8))
    b[rng.integers(0, len(b), len(b) // 10)] = rng.integers(0, alphabet, len(b) // 10)
    flank = [rng.integers(0, alphabet, int(rng.integers(0, 40))).astype(np.uint8)
             for _ in range(2)]
    return a, np.concatenate([flank[0], b, flank[1]]).astype(np.uint8)


def mutated_pairs(rng: np.random.Generator, count: int, query_lengths: tuple[int, int],
                  target_lengths: tuple[int, int], alphabet: int = 4
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Targets holding a mutated copy of their query (substitutions, small indels)."""
    queries, targets = [], []
    for m, n in zip(rng.integers(*query_lengths, count), rng.integers(*target_lengths, count),
                    strict=True):
        query = rng.integers(0, alphabet, m).astype(np.uint8)
        copy = query.copy()
        changed = rng.random(m) < 0.1
        copy[changed] = rng.integers(0, alphabet, int(changed.sum()))
        for _ in range(int(rng.integers(0, 4))):
            at = int(rng.integers(0, len(copy) + 1))
            copy = (np.insert(copy, at, rng.integers(0, alphabet, rng.integers(1, 6)))
                    if rng.random() < 0.5 else np.delete(copy, slice(at, at + 5)))
        copy = copy[:n]
        target = rng.integers(0, alphabet, n).astype(np.uint8)
        at = int(rng.integers(0, n - len(copy) + 1))
        target[at:at + len(copy)] = copy
        queries.append(query)
        targets.append(target)
    return queries, targets


def descendants(seed: int, letters: str, count: int, length: int) -> list[str]:
    """``count`` sequences of about ``length``: copies of three ancestors, each with a
    few substitutions (close pairs and far ones)."""
    rng = np.random.default_rng(seed)
    ancestors = [rng.choice(list(letters), length) for _ in range(3)]
    seqs = []
    for k in range(count):
        s = ancestors[k % 3].copy()
        s[rng.integers(0, length, int(rng.integers(0, length // 10)))] = rng.choice(list(letters))
        seqs.append("".join(s))
    return seqs


def tile_pair(rng: np.random.Generator, h: int, w: int, alphabet: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """A tile's query (``h``) and target (``w``), their first halves mostly equal."""
    q = rng.integers(0, alphabet, h).astype(np.uint8)
    t = rng.integers(0, alphabet, w).astype(np.uint8)
    k = min(h, w) // 2
    t[:k] = np.where(rng.random(k) < 0.8, q[:k], t[:k])
    return q, t


def tile_boundary(rng: np.random.Generator, h: int, w: int, scale: int
                  ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A tile's random input boundary, ``(top_h, top_f), (left_h, left_e)``: H in a
    plausible range (times ``scale``), some gaps closed (``BOUNDARY_NEG``)."""
    top_h = rng.integers(-40, 40, w + 1) * scale
    top_f = np.where(rng.random(w + 1) < 0.3, BOUNDARY_NEG, top_h - rng.integers(5, 30, w + 1))
    left_h = rng.integers(-40, 40, h) * scale
    left_e = np.where(rng.random(h) < 0.3, BOUNDARY_NEG, left_h - rng.integers(5, 30, h))
    return ((top_h.astype(np.int64), top_f.astype(np.int64)),
            (left_h.astype(np.int64), left_e.astype(np.int64)))


def tile_batch_inputs(rng: np.random.Generator, scoring: swath.Scoring
                      ) -> list[tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray],
                                      tuple[np.ndarray, np.ndarray]]]:
    """Tiles ``(q, t, top, left)`` of every shape for one batch: ``TILE_SHAPES``, a
    large one, a tall column and a flat row."""
    batch = []
    for h, w in [*TILE_SHAPES, (3000, 2100), (40, 1), (1, 900)]:
        q, t = tile_pair(rng, h, w, scoring.matrix.shape[0])
        batch.append((q, t, *tile_boundary(rng, h, w, 1)))
    return batch


def random_bands(rng: np.random.Generator, nq: int, nt: int, alphabet: int
                 ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """Short queries and targets (1 to 14 residues) and a band ``lo .. hi`` for each
    pair: some hold paths, some none (``lo > hi`` among them)."""
    queries, targets = random_set(rng, nq, 14, alphabet), random_set(rng, nt, 14, alphabet)
    lo = rng.integers(-16, 4, (nq, nt))
    hi = lo + rng.integers(-2, 20, (nq, nt))
    return queries, targets, lo, hi


@st.composite
def scorings(draw: st.DrawFn) -> swath.Scoring:
    """Protein or DNA scoring with random gap costs (open 0-15, extend 0-5, not both 0)."""
    gap_open = draw(st.integers(0, 15))
    gap_extend = draw(st.integers(0 if gap_open else 1, 5))
    if draw(st.booleans()):
        name = draw(st.sampled_from(["BLOSUM62", "BLOSUM45", "PAM30", "BLOSUM90"]))
        return swath.Scoring.protein(name, gap_open, gap_extend)
    match = draw(st.integers(1, 5))
    mismatch = draw(st.integers(-6, match - 1))
    return swath.Scoring.dna(match, mismatch, gap_open, gap_extend)


@st.composite
def pairs(draw: st.DrawFn, max_len: int = 40) -> tuple[swath.Scoring, np.ndarray, np.ndarray]:
    """A scoring and two encoded sequences (length 1 up), often related to each other."""
    scoring = draw(scorings())
    residues = min(len(scoring.alphabet.letters), 20)
    seq = st.lists(st.integers(0, residues - 1), min_size=1, max_size=max_len)
    query = np.array(draw(seq), dtype=np.uint8)
    if draw(st.booleans()):
        target = np.array(draw(seq), dtype=np.uint8)
    else:  # a mutated copy with flanks, so that gaps and long matches occur
        target = query.copy()
        for _ in range(draw(st.integers(0, 4))):
            pos = draw(st.integers(0, len(target) - 1))
            kind = draw(st.sampled_from(["sub", "ins", "del"]))
            if kind == "sub":
                target[pos] = draw(st.integers(0, residues - 1))
            elif kind == "ins":
                target = np.insert(target, pos, draw(seq)[:5])
            elif len(target) > 4:
                target = np.delete(target, slice(pos, pos + draw(st.integers(1, 4))))
        target = np.concatenate([draw(seq)[:8], target, draw(seq)[:8]]).astype(np.uint8)
    return scoring, query, target


# ---------------------------------------------------------------------------------
# Files


def write_fasta(path: Path, records: Iterable[tuple[str, str]], width: int | None = None
                ) -> Path:
    """Write ``(header, sequence)`` records to ``path`` as FASTA (the header is the line
    after ``>``: a name and any description), each sequence on one line or in lines of
    ``width``; ``path``."""
    lines = []
    for header, seq in records:
        lines.append(f">{header}\n")
        step = width or max(len(seq), 1)
        lines += [seq[k:k + step] + "\n" for k in range(0, len(seq), step)]
    path.write_text("".join(lines))
    return path


# ---------------------------------------------------------------------------------
# Oracles


@functools.lru_cache(maxsize=16)
def _parasail_matrix(letters: str, values: tuple[tuple[int, ...], ...]) -> Any:
    import parasail

    matrix = parasail.matrix_create(letters, 0, 0)
    for a, row in enumerate(values):
        for b, value in enumerate(row):
            matrix[a, b] = value
    return matrix


def parasail_score(query: np.ndarray, target: np.ndarray, scoring: swath.Scoring, mode: str
                   ) -> int:
    """The score parasail gives, converting swath's gap convention to parasail's."""
    import parasail

    matrix = _parasail_matrix(scoring.alphabet.letters, tuple(map(tuple, scoring.matrix.tolist())))
    function = {"local": parasail.sw, "global": parasail.nw, "semiglobal": parasail.sg_dx}[mode]
    result = function(scoring.alphabet.decode(query), scoring.alphabet.decode(target),
                      scoring.gap_open + scoring.gap_extend, scoring.gap_extend, matrix)
    return int(result.score)


def biopython_score(query: np.ndarray, target: np.ndarray, scoring: swath.Scoring, mode: str
                    ) -> int:
    """The score Biopython's PairwiseAligner gives (local and global modes; in global
    mode with the scheme's end costs, Biopython's end gap scores, whose convention is
    its open and extend scores': open + (k - 1) * extend)."""
    from Bio.Align import PairwiseAligner, substitution_matrices

    aligner = PairwiseAligner()
    aligner.mode = mode
    aligner.substitution_matrix = substitution_matrices.Array(
        scoring.alphabet.letters, dims=2, data=scoring.matrix.astype(float))
    aligner.open_gap_score = -(scoring.gap_open + scoring.gap_extend)
    aligner.extend_gap_score = -scoring.gap_extend
    if mode == "global" and scoring.end_gaps is not None:
        end_open, end_extend = scoring.end_gaps
        aligner.open_end_gap_score = -(end_open + end_extend)
        aligner.extend_end_gap_score = -end_extend
    return int(aligner.score(scoring.alphabet.decode(target), scoring.alphabet.decode(query)))


def reference_band(q: np.ndarray, t: np.ndarray, lo: int, hi: int, matrix: np.ndarray,
                   gap_open: int, gap_extend: int) -> int | None:
    """Gotoh's global recurrences over the whole matrix, cells off diagonals lo..hi
    excluded (a gap of length k costs open + k * extend); None if no path."""
    neg = float("-inf")
    m, n = len(q), len(t)
    go, ge = gap_open, gap_extend
    H_ = np.full((m + 1, n + 1), neg)
    E_ = np.full((m + 1, n + 1), neg)
    F_ = np.full((m + 1, n + 1), neg)
    for i in range(m + 1):
        for j in range(n + 1):
            if not lo <= i - j <= hi:
                continue
            if i == 0 and j == 0:
                H_[i, j] = 0
                continue
            if i > 0:
                E_[i, j] = max(E_[i - 1, j] - ge, H_[i - 1, j] - go - ge)
            if j > 0:
                F_[i, j] = max(F_[i, j - 1] - ge, H_[i, j - 1] - go - ge)
            diag = H_[i - 1, j - 1] + matrix[q[i - 1], t[j - 1]] if i and j else neg
            H_[i, j] = max(diag, E_[i, j], F_[i, j])
    return None if H_[m, n] == neg else int(H_[m, n])


def _latest_max(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running maximum of ``values`` and, at each place, the last index holding it."""
    running = np.maximum.accumulate(values)
    index = np.arange(len(values))
    return running, np.maximum.accumulate(np.where(values == running, index, -1))


def reference_tile(q: np.ndarray, t: np.ndarray, matrix: np.ndarray, gap_open: int,
                   gap_extend: int, local: bool, top: tuple[np.ndarray, np.ndarray],
                   left: tuple[np.ndarray, np.ndarray]
                   ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """One tile of Gotoh's recurrences from its input boundary, row by row in NumPy.

    ``top`` is the H and F of the row above (``len(t) + 1``, index 0 the corner) and
    ``left`` the H and E of the column left of it (``len(q)``). Returns ``bottom`` (4, w:
    H, F and their origins), ``right`` (4, h: H, E and their origins) and the first best
    cell in row-major order, ``(score, i, j, origin)`` with 1-based tile rows and columns
    (``(0, -1, -1, -1)`` in global mode or when no cell scores above 0). An origin is
    ``(row * (w + 1) + column) * 4 + state``: the input-boundary cell and state where the
    optimal path into a cell enters the tile, or the START of a local path.

    Ties go as in the kernels: a gap extends only when that scores strictly more than
    opening it, and H takes E, then F, only when they score strictly more than what came
    before them (the diagonal, then E). A gap opening from an H that came from E is
    never better than extending E, so E is computed from H without E (one cumulative
    maximum per row) and gives the same values and origins.
    """
    h, w = len(q), len(t)
    goe, ge = gap_open + gap_extend, gap_extend
    wide = w + 1
    columns = np.arange(1, w + 1)
    h_up, f_up = top[0].astype(np.int64), top[1].astype(np.int64)
    oh_up, of_up = np.arange(wide) * 4 + STATE_H, np.arange(wide) * 4 + STATE_F
    right = np.empty((4, h), dtype=np.int64)
    best = (0, -1, -1, -1)
    for i in range(1, h + 1):
        f_open, f_ext = h_up[1:] - goe, f_up[1:] - ge
        f = np.maximum(f_open, f_ext)
        of = np.where(f_ext > f_open, of_up[1:], oh_up[1:])
        diag = h_up[:-1] + matrix[q[i - 1], t].astype(np.int64)
        start = (i * wide + columns) * 4 + STATE_START
        # H without E: the sources of this row's E (and the left boundary's H before them)
        no_e = np.maximum(diag, f)
        o_no_e = np.where(f > diag, of, oh_up[:-1])
        if local:
            o_no_e = np.where(no_e <= 0, start, o_no_e)
            no_e = np.maximum(no_e, 0)
        row_h, row_e = int(left[0][i - 1]), int(left[1][i - 1])
        sources = np.concatenate([[row_e], np.r_[row_h, no_e[:-1]] - goe + ge * columns])
        origins = np.concatenate([[i * wide * 4 + STATE_E, i * wide * 4 + STATE_H], o_no_e[:-1]])
        running, at = _latest_max(sources)
        e = running[1:] - ge * columns
        oe = origins[at[1:]]
        hv = np.maximum(diag, e)
        oh = np.where(e > diag, oe, oh_up[:-1])
        oh = np.where(f > hv, of, oh)
        hv = np.maximum(hv, f)
        if local:
            oh = np.where(hv <= 0, start, oh)
            hv = np.maximum(hv, 0)
            j = int(np.argmax(hv))
            if hv[j] > best[0]:
                best = (int(hv[j]), i, j + 1, int(oh[j]))
        right[:, i - 1] = hv[-1], e[-1], oh[-1], oe[-1]
        h_up, f_up = np.r_[row_h, hv], np.r_[0, f]
        oh_up, of_up = np.r_[i * wide * 4 + STATE_H, oh], np.r_[0, of]
    return np.stack([h_up[1:], f_up[1:], oh_up[1:], of_up[1:]]), right, best


def whole_matrix(a: np.ndarray, b: np.ndarray, scoring: swath.Scoring, mode: str
                 ) -> swath.Alignment:
    """The alignment of ``a`` and ``b`` by the CPU's whole-matrix traceback kernel."""
    from swath.kernels.cpu.traceback import align_pair

    score, qs, qe, ts, te, ops = align_pair(a, b, scoring, mode)
    return swath.Alignment(score, qs, qe, ts, te, cigar_from_path(ops, a, b, qs, ts), mode)


def count_cigar(cigar: str) -> dict[str, int]:
    """M, X, L, O and T of one CIGAR, run by run: matches, mismatches, columns, gap
    openings and the gap columns at either end."""
    runs = [(int(n), op) for n, op in re.findall(r"(\d+)([=XID])", cigar)]
    gaps = [op in "ID" for _, op in runs]
    ends = (runs[0][0] if gaps and gaps[0] else 0) + \
        (runs[-1][0] if len(runs) > 1 and gaps[-1] else 0)
    return {"matches": sum(n for n, op in runs if op == "="),
            "mismatches": sum(n for n, op in runs if op == "X"),
            "columns": sum(n for n, _ in runs), "gap_opens": sum(gaps), "terminal": ends}


#: the columns every result's table (``to_pandas()``) names alike, in this order:
#: ``swath.PAIRS_COLUMNS``, the model
TABLE_CONVENTION = ("query_index", "target_index", "query_name", "target_name", "score",
                    "query_start", "query_end", "target_start", "target_end", "length",
                    "matches", "mismatches", "gap_opens", "identity", "cigar")


def convention_rows(frame: Any, queries: Sequence[tuple[str, str]],
                    targets: Sequence[tuple[str, str]]) -> dict[tuple[int, int], dict[str, Any]]:
    """A result's ``to_pandas()`` frame checked against the one convention of every
    result's table, and its rows by (query_index, target_index), each a dict of the
    :data:`TABLE_CONVENTION` columns (plain Python values) to compare across results.

    ``queries`` and ``targets`` are the inputs' ``(name, residues)`` records in input
    order. Checked: the columns of :data:`TABLE_CONVENTION` in that order (a result may
    add its own among them: a search's ``evalue``, ``bitscore``); ``query_index`` and
    ``target_index`` are 0-based positions in the inputs, whose names ``query_name`` and
    ``target_name`` are; coordinates are
    0-based and end exclusive: the CIGAR walked from (``query_start``, ``target_start``)
    ends at (``query_end``, ``target_end``), its ``=`` columns equal residues and its
    ``X`` columns unequal ones there; ``length``, ``matches``, ``mismatches`` and
    ``gap_opens`` are the CIGAR's; ``identity`` is a fraction (0 to 1)."""
    columns = list(frame.columns)
    assert [name for name in columns if name in TABLE_CONVENTION] == list(TABLE_CONVENTION), \
        columns
    rows = {}
    for record in frame[list(TABLE_CONVENTION)].to_dict("records"):
        row = {name: value.item() if isinstance(value, np.generic) else value
               for name, value in record.items()}
        q, t = row["query_index"], row["target_index"]
        (qname, qres), (tname, tres) = queries[q], targets[t]
        assert (row["query_name"], row["target_name"]) == (qname, tname), row
        i, j = row["query_start"], row["target_start"]
        assert 0 <= i <= row["query_end"] <= len(qres), row
        assert 0 <= j <= row["target_end"] <= len(tres), row
        for n, op in re.findall(r"(\d+)([=XID])", row["cigar"]):
            for _ in range(int(n)):
                if op in "=X":
                    assert (qres[i] == tres[j]) == (op == "="), (row, i, j)
                i, j = i + (op in "=XI"), j + (op in "=XD")
        assert (i, j) == (row["query_end"], row["target_end"]), row
        counts = count_cigar(row["cigar"])
        assert (row["length"], row["matches"], row["mismatches"], row["gap_opens"]) == (
            counts["columns"], counts["matches"], counts["mismatches"], counts["gap_opens"])
        assert 0.0 <= row["identity"] <= 1.0, row
        rows[q, t] = row
    return rows


class Reference:
    """The backend functions that have no C or NumPy twin in ``swath.testing``, computed
    plainly: the CPU backend's oracle in the backend suite (the GPU's is the CPU
    backend). Same arguments and results as ``swath.kernels.cpu``'s."""

    @staticmethod
    def cigar_counts(cigars: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
        text, at = cigars
        counted = [count_cigar(text[at[k]:at[k + 1]].tobytes().decode())
                   for k in range(len(at) - 1)]
        names = ("matches", "mismatches", "columns", "gap_opens", "terminal")
        return {name: np.array([c[name] for c in counted], dtype=np.int64) for name in names}

    @staticmethod
    def band_scores(q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                    t_off: np.ndarray, lo: np.ndarray, hi: np.ndarray, scoring: swath.Scoring
                    ) -> np.ndarray:
        out = np.empty((len(q_off) - 1, len(t_off) - 1), dtype=np.int32)
        for a, b in np.ndindex(out.shape):
            score = reference_band(q_res[q_off[a]:q_off[a + 1]], t_res[t_off[b]:t_off[b + 1]],
                                   int(lo[a, b]), int(hi[a, b]), scoring.matrix,
                                   scoring.gap_open, scoring.gap_extend)
            out[a, b] = SKIPPED if score is None else score
        return out

    @staticmethod
    def tile_forward(q: np.ndarray, t: np.ndarray, scoring: swath.Scoring, mode: str,
                     corner: tuple[int, int], n: int, strip: int,
                     top: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray]
                     ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
        bottom, right, (score, i, j, origin) = reference_tile(
            q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, mode == "local", top,
            left)
        w = len(t)

        def matrix_wide(code: np.ndarray) -> np.ndarray:
            cell, state = np.divmod(code, 4)
            row, column = np.divmod(cell, w + 1)
            return ((corner[0] + row) * (n + 1) + corner[1] + column) * 4 + state

        bottom[2:], right[2:] = matrix_wide(bottom[2:]), matrix_wide(right[2:])
        if i < 0:
            return bottom, right, (0, -1, -1, -1)
        return bottom, right, (score, corner[0] + i, corner[1] + j,
                               int(matrix_wide(np.array(origin))))

    @staticmethod
    def tile_scores(q: np.ndarray, t: np.ndarray, scoring: swath.Scoring, mode: str,
                    strip: int, top: tuple[np.ndarray, np.ndarray],
                    left: tuple[np.ndarray, np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]]:
        bottom, right, best = reference_tile(q, t, scoring.matrix, scoring.gap_open,
                                             scoring.gap_extend, mode == "local", top, left)
        return bottom[:2], right[:2], best[:3]

    @staticmethod
    def tile_batch(tiles: Sequence[tuple[np.ndarray, np.ndarray, Any, Any]],
                   scoring: swath.Scoring) -> list[np.ndarray]:
        return [reference_tile(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                               False, top, left)[0][:2]
                for q, t, top, left in tiles]


# ---------------------------------------------------------------------------------
# Test doubles


class CUDARuntimeError(RuntimeError):
    """As CuPy's: ``status`` and the message ``cudaErrorName: text``."""

    def __init__(self, status: int, text: str) -> None:
        self.status = status
        super().__init__(text)


class CUDADriverError(RuntimeError):
    def __init__(self, status: int, text: str) -> None:
        self.status = status
        super().__init__(text)


class OutOfMemoryError(MemoryError):
    """As ``cupy.cuda.memory.OutOfMemoryError``."""

    def __init__(self, size: int, total: int) -> None:
        super().__init__(f"Out of memory allocating {size:,} bytes "
                         f"(allocated so far: {total:,} bytes).")


class CompileException(Exception):
    """As ``cupy.cuda.compiler.CompileException``: the NVRTC log is the message."""


def fake_cupy(devices: int | Exception = 1, probe: Exception | None = None,
              compile_log: str | None = None) -> ModuleType:
    """A ``cupy`` whose ``getDeviceCount`` returns or raises ``devices``, whose kernels
    fail with ``probe`` (the probe kernel) or fail to compile with ``compile_log``
    (``RawModule``), and whose arrays are NumPy's."""

    def device_count() -> int:
        if isinstance(devices, Exception):
            raise devices
        return devices

    class RawKernel:
        def __init__(self, code: str, name: str) -> None:
            self.name = name

        def __call__(self, grid: tuple, block: tuple, args: tuple) -> None:
            if probe is not None:
                raise probe
            args[0][0] = 7

    class RawModule:
        def __init__(self, **kwargs: Any) -> None:
            self.options = kwargs

        def get_function(self, name: str) -> RawKernel:
            if compile_log is not None:
                raise CompileException(compile_log)
            return RawKernel("", name)

    cupy = ModuleType("cupy")
    cupy.cuda = SimpleNamespace(  # type: ignore[attr-defined]
        runtime=SimpleNamespace(getDeviceCount=device_count, CUDARuntimeError=CUDARuntimeError,
                                memGetInfo=lambda: (3 * 2**30, 80 * 2**30)),
        driver=SimpleNamespace(CUDADriverError=CUDADriverError),
        memory=SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
        compiler=SimpleNamespace(CompileException=CompileException),
        Device=lambda: SimpleNamespace(id=0))
    for name in ("int32", "zeros", "ones", "empty", "asarray", "ndarray"):
        setattr(cupy, name, getattr(np, name))
    cupy.RawKernel = RawKernel  # type: ignore[attr-defined]
    cupy.RawModule = RawModule  # type: ignore[attr-defined]
    cupy.get_default_memory_pool = lambda: SimpleNamespace(  # type: ignore[attr-defined]
        free_bytes=lambda: 2**30)
    return cupy


def s3() -> Any:
    """fsspec's S3 filesystem as the configuration is now (the ``s3_server`` fixture's
    endpoint), not a cached instance of another."""
    import fsspec

    return fsspec.filesystem("s3", skip_instance_cache=True)


def lose_worker_at(monkeypatch: pytest.MonkeyPatch, module: object, name: str, at: int
                   ) -> Any:
    """Make ``module.name(job, k, ...)`` raise "worker lost" for ``k == at`` (a task that
    dies mid-job), and run as before for every other ``k``; the real function."""
    real = getattr(module, name)

    def failing(job: object, k: int, *rest: object) -> object:
        if k == at:
            raise RuntimeError("worker lost")
        return real(job, k, *rest)

    monkeypatch.setattr(module, name, failing)
    return real


def assert_refused_as_older(path: str, open_store: Any, version: int) -> None:
    """A store at ``path``, marked as written in its layout's ``version`` (an older
    one), is refused by ``open_store(path)`` in one line naming both versions."""
    from swath.storage.common import ROOT_KEY, open_group

    group = open_group(path, mode="r+")
    attrs = group.attrs[ROOT_KEY]
    group.attrs[ROOT_KEY] = {**attrs, "version": version}
    with pytest.raises(swath.FormatVersionError) as refused:
        open_store(path)
    layout = attrs["layout"]
    assert str(refused.value) == (
        f"{path} is a {layout!r} store version {version}, this swath reads {layout!r} "
        f"version {attrs['version']} (it was written by an older swath: write it again "
        "with this one)")
