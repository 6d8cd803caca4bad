"""Every backend, every kernel family, against an oracle.

One suite (``BackendSuite``) runs on each backend: alignments, scores and ends against
the NumPy reference aligner (``swath.testing``); CIGAR counts, band scores and tiles
against the backend's oracle, which is a plain reference for the CPU (``Reference``
in ``tests.helpers``) and the CPU backend for the GPU. The GPU's class adds the inputs
at its kernels' edges (partition cuts, passes, band width classes, tile rows), which
are too large for the references and are checked against the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import swath
from swath.kernels import get_backend
from swath.kernels.band_geometry import SKIPPED
from swath.testing import reference_align, rescore
from tests.helpers import (
    BOUNDARY_NEG,
    DNA,
    EDGE_LENGTHS,
    PROTEIN,
    TILE_SHAPES,
    Reference,
    packed,
    pairs,
    random_bands,
    random_set,
    reference_band,
    related,
    tile_batch_inputs,
    tile_boundary,
    tile_pair,
)

MODES = ["local", "global", "semiglobal"]
SETTINGS = settings(deadline=None, max_examples=150,
                    suppress_health_check=[HealthCheck.too_slow])
# single matches (query row, target column offset, residue) whose cells score the best, 2,
# and the first of them in row-major order (row, column offset), both 1-based
ARRANGEMENTS = {"later-row-first": ([(5, 0, 1), (3, 1, 2)], (4, 2)),
                "earlier-row-first": ([(3, 0, 1), (5, 1, 2)], (4, 1)),
                "same-row": ([(3, 0, 1), (3, 1, 1)], (4, 1)),
                "same-column": ([(5, 0, 1), (3, 0, 1)], (4, 1))}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``tile_rows``: the rows per band a backend's tile kernels can be asked for (the
    GPU's 4, 8 or 16; ``None``, the kernel's own choice), from the suite's class."""
    if "tile_rows" in metafunc.fixturenames:
        metafunc.parametrize("tile_rows", metafunc.cls.TILE_ROWS,
                             ids=lambda rows: f"rows-{rows or 'default'}")


def shape_id(shape: tuple[int, int]) -> str:
    return "x".join(map(str, shape))


def assert_same_tile_scores(got: Any, want: Any, mode: str) -> None:
    """Equal ``tile_scores`` results under the contract: H and the best cell exactly; in
    local mode a gap value (F, E) of at most 0 as any value of at most 0."""
    if mode == "local":
        got, want = ([(np.concatenate([side[:1], np.maximum(side[1:], 0)]))
                      for side in result[:2]] + [tuple(result[2])] for result in (got, want))
    assert_same(got, want)


def assert_same(got: Any, want: Any) -> None:
    """Equal kernel results: arrays, numbers, and dicts, tuples or lists of them."""
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    else:
        np.testing.assert_array_equal(got, want)


class BackendSuite:
    """The kernel contract of ``swath.kernels``; subclasses name the device, and the
    oracle its results must equal where ``swath.testing`` has no twin."""

    device: str
    oracle: Any
    TILE_ROWS: tuple[int | None, ...] = (None,)

    @property
    def backend(self) -> Any:
        return get_backend(self.device)

    def align_all(self, queries, targets, scoring, mode) -> list[swath.Alignment]:
        scores, coords, text, offsets = self.backend.align_batch(
            *packed(queries), *packed(targets), scoring, mode)
        cigars = text.tobytes().decode()
        return [swath.Alignment(int(s), *map(int, c), cigars[offsets[k]:offsets[k + 1]], mode)
                for k, (s, c) in enumerate(zip(scores, coords, strict=True))]

    def align(self, query, target, scoring, mode) -> swath.Alignment:
        return self.align_all([query], [target], scoring, mode)[0]

    @staticmethod
    def rows(tile_rows: int | None) -> dict[str, int]:
        """The keyword that asks a tile kernel for ``tile_rows`` rows per band."""
        return {} if tile_rows is None else {"rows": tile_rows}

    # ---- align_batch, score_many, score_ends: against the reference aligner

    @pytest.mark.parametrize("mode", MODES)
    @given(cases=st.lists(pairs(max_len=70), min_size=1, max_size=12))
    @SETTINGS
    def test_align_batch_equals_reference(self, mode, cases):
        scoring = cases[0][0]
        residues = min(len(scoring.alphabet.letters), 20)
        queries = [(q % residues).astype(np.uint8) for _, q, _ in cases]
        targets = [(t % residues).astype(np.uint8) for _, _, t in cases]
        got = self.align_all(queries, targets, scoring, mode)
        assert got == [reference_align(q, t, scoring, mode)
                       for q, t in zip(queries, targets, strict=True)]

    @pytest.mark.parametrize("mode", MODES)
    def test_align_batch_of_chosen_pairs_equals_gathered_sequences(self, mode):
        """``pairs=(rows, cols)`` aligns query rows[k] with target cols[k] of the sets as
        given (repeats, any order) as the gathered sequences align."""
        rng = np.random.default_rng(7)
        queries = [rng.integers(0, 4, int(m)).astype(np.uint8) for m in rng.integers(1, 90, 9)]
        targets = [np.concatenate([q[: len(q) // 2], rng.integers(0, 4, 20)]).astype(np.uint8)
                   for q in queries[::-1]] + [rng.integers(0, 4, 5).astype(np.uint8)]
        rows = rng.integers(0, len(queries), 40)
        cols = rng.integers(0, len(targets), 40)
        chosen = self.backend.align_batch(
            *packed(queries), *packed(targets), DNA, mode, pairs=(rows, cols))
        gathered = self.backend.align_batch(
            *packed([queries[r] for r in rows]), *packed([targets[c] for c in cols]), DNA, mode)
        for a, b in zip(chosen, gathered, strict=True):
            np.testing.assert_array_equal(a, b)

    @pytest.mark.parametrize("mode", MODES)
    @given(case=pairs())
    @SETTINGS
    def test_align_equals_reference(self, mode, case):
        scoring, query, target = case
        expected = reference_align(query, target, scoring, mode)
        got = self.align(query, target, scoring, mode)
        assert got == expected
        assert rescore(got, query, target, scoring) == got.score

    @pytest.mark.parametrize("mode", MODES)
    @given(cases=st.lists(pairs(max_len=50), min_size=1, max_size=8))
    @SETTINGS
    def test_score_ends_equal_the_alignments_ends(self, mode, cases):
        scoring = cases[0][0]
        residues = min(len(scoring.alphabet.letters), 20)
        queries = [(q % residues).astype(np.uint8) for _, q, _ in cases]
        targets = [(t % residues).astype(np.uint8) for _, _, t in cases]
        scores, q_end, t_end = self.backend.score_ends(
            *packed(queries), *packed(targets), scoring, mode)
        expected = [reference_align(q, t, scoring, mode)
                    for q, t in zip(queries, targets, strict=True)]
        assert scores.tolist() == [a.score for a in expected]
        assert q_end.tolist() == [a.query_end for a in expected]
        assert t_end.tolist() == [a.target_end for a in expected]

    @pytest.mark.parametrize("mode", MODES)
    @given(case=pairs(), more=st.lists(pairs(max_len=60), min_size=1, max_size=40))
    @SETTINGS
    def test_score_many_equals_reference(self, mode, case, more):
        scoring, query, target = case
        residues = min(len(scoring.alphabet.letters), 20)
        queries = [query, target]
        targets = [target, query] + [(s % residues).astype(np.uint8)
                                     for _, q, t in more for s in (q, t)]
        got = self.backend.score_many(*packed(queries), *packed(targets), scoring, mode)
        expected = [[reference_align(q, t, scoring, mode).score for t in targets]
                    for q in queries]
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, expected)

    @pytest.mark.parametrize("mode", MODES)
    def test_scores_beyond_16_bits(self, mode):
        """Scores past 32767: flagged by the 16-bit pass and re-run exactly in 32 bits."""
        w = PROTEIN.alphabet.encode("W" * 3100)
        near = PROTEIN.alphabet.encode("W" * 1500 + "A" + "W" * 1599)
        targets = [w, near, w[:10], PROTEIN.alphabet.encode("ACDEFGHIKL" * 5)]
        got = self.backend.score_many(*packed([w]), *packed(targets), PROTEIN, mode)
        expected = [self.align(w, t, PROTEIN, mode).score for t in targets]
        np.testing.assert_array_equal(got[0], expected)
        assert got[0, 0] == 3100 * 11 > 32767
        assert got[0, 1] == 3099 * 11 - 3 if mode == "global" else got[0, 1] > 32767

    @pytest.mark.parametrize("mode", MODES)
    def test_many_queries_many_lane_groups(self, mode):
        rng = np.random.default_rng(7)
        queries = [rng.integers(0, 4, n).astype(np.uint8) for n in (1, 17, 64)]
        targets = [rng.integers(0, 4, n).astype(np.uint8) for n in rng.integers(1, 90, 75)]
        got = self.backend.score_many(*packed(queries), *packed(targets), DNA, mode)
        expected = [[reference_align(q, t, DNA, mode).score for t in targets] for q in queries]
        np.testing.assert_array_equal(got, expected)

    def test_identical_sequences_align_end_to_end(self):
        seq = PROTEIN.alphabet.encode("MKTAYIAKQRQISFVKSHFSRQ")
        for mode in MODES:
            aln = self.align(seq, seq, PROTEIN, mode)
            assert aln.cigar == f"{len(seq)}="
            assert (aln.query_start, aln.query_end) == (0, len(seq))

    def test_local_alignment_of_unrelated_residues_is_empty(self):
        scoring = swath.Scoring.dna(1, -1, 2, 1)
        aln = self.align(scoring.alphabet.encode("AAAA"), scoring.alphabet.encode("CCCC"),
                         scoring, "local")
        assert (aln.score, aln.cigar, aln.query_end, aln.target_end) == (0, "", 0, 0)

    # ---- cigar_counts

    def test_cigar_counts_equal_the_oracle(self):
        """The CIGARs of a batch of alignments, and made-up ones: empty, a gap alone, gaps
        at either end or both, gap after gap."""
        rng = np.random.default_rng(5)
        queries = [rng.integers(0, 4, m).astype(np.uint8) for m in rng.integers(1, 300, 80)]
        targets = [related(rng, q, int(rng.integers(1, 400)), 4) for q in queries]
        _, _, text, text_at = get_backend("cpu").align_batch(
            *packed(queries), *packed(targets), DNA, "global")
        made = ["", "5I", "2D3=", "3=4I", "12=1X100=", "1I1D1I", "7D"]
        extra = np.frombuffer("".join(made).encode(), dtype=np.uint8)
        extra_at = np.cumsum([0] + [len(c) for c in made]) + text_at[-1]
        cigars = np.concatenate([text, extra]), np.concatenate([text_at, extra_at[1:]])
        got = self.backend.cigar_counts(cigars)
        assert_same(got, self.oracle.cigar_counts(cigars))
        assert got["terminal"][-7:].tolist() == [0, 5, 2, 4, 0, 2, 7]
        assert got["gap_opens"][-7:].tolist() == [0, 1, 1, 1, 0, 3, 1]
        empty = self.backend.cigar_counts((np.zeros(0, np.uint8), np.zeros(1, np.int64)))
        assert empty["matches"].shape == (0,)

    # ---- band_scores

    @pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
    @pytest.mark.parametrize("nq, nt", [(9, 11), (37, 41)])   # 41: two or three lane groups
    def test_band_scores_equal_the_oracle(self, scoring, nq, nt):
        rng = np.random.default_rng(11)
        queries, targets, lo, hi = random_bands(rng, nq, nt, 4 if scoring is DNA else 20)
        args = (*packed(queries), *packed(targets), lo, hi, scoring)
        got = self.backend.band_scores(*args)
        np.testing.assert_array_equal(got, self.oracle.band_scores(*args))
        assert 0 < (got == SKIPPED).sum() < got.size          # both kinds of band were drawn

    def test_an_empty_band_far_off_the_matrix_stays_skipped(self):
        """Bands are kept relative to their lane group's: an empty one must not wrap into a
        band that looks whole (16 bits: 32,763 diagonals off; 32 bits: 2^31)."""
        rng = np.random.default_rng(5)
        q = rng.integers(0, 4, 5).astype(np.uint8)
        targets = [rng.integers(0, 4, 5).astype(np.uint8) for _ in range(2)]   # union from -5
        for lo in (32763, 2**31 - 5):
            got = self.backend.band_scores(q, np.array([0, 5]), *packed(targets),
                                           np.array([[-5, lo]]), np.array([[5, lo + 7]]), DNA)
            assert got[0, 1] == SKIPPED
            assert got[0, 0] == reference_band(q, targets[0], -5, 5, DNA.matrix, DNA.gap_open,
                                               DNA.gap_extend)

    def test_a_band_wider_than_16_bits_of_diagonals(self):
        """No gap extension: the values fit 16 bits at any length, the diagonals do not."""
        rng = np.random.default_rng(6)
        scoring = swath.Scoring.dna(match=1, mismatch=-1, gap_open=5, gap_extend=0)
        q, t = rng.integers(0, 4, 10).astype(np.uint8), rng.integers(0, 4, 32760).astype(np.uint8)
        args = (q, np.array([0, 10]), t, np.array([0, 32760]))
        band = self.backend.band_scores(*args, np.array([[-10**6]]), np.array([[10**6]]),
                                        scoring)
        assert band[0, 0] == self.backend.score_many(*args, scoring, "global")[0, 0]

    @pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
    def test_a_band_of_every_diagonal_is_the_optimal_global_score(self, scoring):
        rng = np.random.default_rng(12)
        alphabet = 4 if scoring is DNA else 20
        queries, targets = random_set(rng, 7, 90, alphabet), random_set(rng, 13, 90, alphabet)
        args = (*packed(queries), *packed(targets))
        band = self.backend.band_scores(*args, np.full((7, 13), -10**6),
                                        np.full((7, 13), 10**6), scoring)
        full = self.backend.score_many(*args, scoring, "global")
        np.testing.assert_array_equal(band, full)

    # ---- tile_forward, tile_scores, tile_batch

    @pytest.mark.parametrize("mode", ["local", "global"])
    @pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
    @pytest.mark.parametrize("shape", TILE_SHAPES, ids=shape_id)
    def test_tile_forward_equals_the_oracle(self, shape, scoring, mode):
        rng = np.random.default_rng(hash((shape, mode == "local")) % 2**32)
        h, w = shape
        q, t = tile_pair(rng, h, w, scoring.matrix.shape[0])
        top, left = tile_boundary(rng, h, w, 1)
        args = (q, t, scoring, mode, (1000, 2000), 5000, 64, top, left)
        assert_same(self.backend.tile_forward(*args), self.oracle.tile_forward(*args))

    @pytest.mark.parametrize("mode", ["local", "global"])
    @pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
    @pytest.mark.parametrize("shape", [*TILE_SHAPES, (3000, 2100)], ids=shape_id)
    @pytest.mark.parametrize("h_floor", [None, 0], ids=["any-h", "local-h"])
    def test_tile_scores_equal_the_oracle(self, shape, scoring, mode, tile_rows, h_floor):
        """Any input H, and H of at least 0 (a local matrix's: the CPU's unsigned lanes
        take such tiles of DNA's matrix)."""
        rng = np.random.default_rng(hash((shape, mode == "local", tile_rows or 0)) % 2**32)
        h, w = shape
        q, t = tile_pair(rng, h, w, scoring.matrix.shape[0])
        (top_h, top_f), (left_h, left_e) = tile_boundary(rng, h, w, 1)
        if h_floor is not None:
            top_h, left_h = np.maximum(top_h, h_floor), np.maximum(left_h, h_floor)
        args = (q, t, scoring, mode, 64, (top_h, top_f), (left_h, left_e))
        got = self.backend.tile_scores(*args, **self.rows(tile_rows))
        assert_same_tile_scores(got, self.oracle.tile_scores(*args), mode)
        assert got[2][1] >= 0 or min(h, w) < 30 or mode != "local"   # related: a best cell

    def test_best_cell_ties_take_the_first_row(self):
        """Equal best scores in several bands and lanes: the first in row-major order."""
        q = np.zeros(2000, dtype=np.uint8)
        t = np.ones(300, dtype=np.uint8)
        q[[100, 700, 1500]] = 1           # three single-residue matches, one per band or lane
        top = (np.zeros(301, dtype=np.int64), np.full(301, BOUNDARY_NEG, dtype=np.int64))
        left = (np.zeros(2000, dtype=np.int64), np.full(2000, BOUNDARY_NEG, dtype=np.int64))
        args = (q, t, DNA, "local", 64, top, left)
        got = self.backend.tile_scores(*args)
        assert got[2] == tuple(self.oracle.tile_scores(*args)[2]) == (2, 101, 1)

    @pytest.mark.parametrize("column", [40, 41], ids=["one-pair-of-steps", "two-pairs"])
    @pytest.mark.parametrize("arrangement", ARRANGEMENTS)
    def test_equal_best_cells_in_a_lane_take_the_first(self, tile_rows, column, arrangement):
        """Equal best scores in one lane, in one column or two adjacent ones (looked for in
        the same pair of steps or in two): the first in row-major order."""
        matches, (row, offset) = ARRANGEMENTS[arrangement]
        q = np.zeros(600, dtype=np.uint8)
        t = np.full(300, 3, dtype=np.uint8)
        for i, j, residue in matches:
            q[i], t[column + j] = residue, residue
        top = (np.zeros(301, dtype=np.int64), np.full(301, BOUNDARY_NEG, dtype=np.int64))
        left = (np.zeros(600, dtype=np.int64), np.full(600, BOUNDARY_NEG, dtype=np.int64))
        args = (q, t, DNA, "local", 64, top, left)
        got = self.backend.tile_scores(*args, **self.rows(tile_rows))
        assert got[2] == tuple(self.oracle.tile_scores(*args)[2]) == (2, row, column + offset)

    @pytest.mark.parametrize("seed", range(3))
    def test_repeats_with_many_equal_scores_equal_the_oracle(self, tile_rows, seed):
        """Two-letter and periodic sequences: equal best scores in many rows and columns."""
        rng = np.random.default_rng(seed)
        q = rng.integers(0, 2, 1500).astype(np.uint8)
        t = np.tile(q[:37], 20)[:700] if seed else rng.integers(0, 2, 700).astype(np.uint8)
        top, left = tile_boundary(rng, len(q), len(t), 0)
        args = (q, t, DNA, "local", 64, top, left)
        got = self.backend.tile_scores(*args, **self.rows(tile_rows))
        assert_same_tile_scores(got, self.oracle.tile_scores(*args), "local")

    @pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
    def test_tile_batch_equals_the_oracle(self, scoring, tile_rows):
        """Tiles of every shape in one batch, global mode: each one's last row."""
        rng = np.random.default_rng(tile_rows or 0)
        batch = tile_batch_inputs(rng, scoring)
        got = self.backend.tile_batch(batch, scoring, **self.rows(tile_rows))
        assert len(got) == len(batch)
        for g, tile in zip(got, batch, strict=True):
            assert g.shape == (2, len(tile[1]))
        assert_same(got, self.oracle.tile_batch(batch, scoring))


class TestCPU(BackendSuite):
    device = "cpu"
    oracle = Reference


@pytest.mark.gpu
class TestGPU(BackendSuite):
    """Also at the GPU kernels' edges, against the CPU: target lengths either side of
    each partition cut, queries of one pass and several, two queries to a register,
    band width classes from registers to local memory."""

    device = "gpu"
    TILE_ROWS = (None, 4, 8, 16)

    @property
    def oracle(self) -> Any:
        return get_backend("cpu")

    def both(self, function: str, *args: Any) -> tuple[Any, Any]:
        """``function`` of the GPU and of the CPU on ``args``."""
        return (getattr(self.backend, function)(*args),
                getattr(self.oracle, function)(*args))

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
    @pytest.mark.parametrize("query_length", [1, 31, 32, 33, 300, 513, 1100])
    def test_scores_equal_cpu_at_edge_lengths(self, mode, scoring, query_length):
        rng = np.random.default_rng(query_length)
        alphabet = 20 if scoring is PROTEIN else 4
        query = rng.integers(0, alphabet, query_length).astype(np.uint8)
        targets = [related(rng, query, n, alphabet) for n in EDGE_LENGTHS]
        targets += [rng.integers(0, alphabet, n).astype(np.uint8)
                    for n in rng.integers(1, 700, 150)]
        # three queries: the shortest pairs with one of the other two in a register, and
        # the third goes alone, two targets a register
        queries = [query, query[::-1].copy(), query[: query_length // 2 + 1].copy()]
        gpu, cpu = self.both("score_many", *packed(queries), *packed(targets), scoring, mode)
        np.testing.assert_array_equal(gpu, cpu)

    @pytest.mark.parametrize("mode", MODES)
    def test_scores_past_16_bits_are_rerun_exactly(self, mode):
        w = PROTEIN.alphabet.encode("W" * 3100)
        targets = [w, w[:2000], PROTEIN.alphabet.encode("W" * 1500 + "A" + "W" * 1599),
                   PROTEIN.alphabet.encode("ACDEFGHIKLMNPQRSTVWY" * 40)]
        gpu, cpu = self.both("score_many", *packed([w]), *packed(targets), PROTEIN, mode)
        np.testing.assert_array_equal(gpu, cpu)
        assert gpu[0, 0] == 3100 * 11

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("lengths", [(1, 7, 33, 100, 300), (513, 1100, 2000, 3100)],
                             ids=["odd-count", "apart"])
    def test_two_queries_to_a_register_equal_cpu(self, mode, lengths):
        """Queries go two to a register, nearest lengths together: an odd one out; lengths
        whose last rows fall in different passes (513 and 1100 rows in passes of 256); a
        query of 3,100 W past 16 bits in the lane beside one that is not."""
        rng = np.random.default_rng(len(lengths))
        queries = [rng.integers(0, 20, m).astype(np.uint8) for m in lengths[:-1]]
        queries.append(PROTEIN.alphabet.encode("W" * lengths[-1]) if lengths[-1] > 3000
                       else rng.integers(0, 20, lengths[-1]).astype(np.uint8))
        targets = [related(rng, q, n, 20) for q in queries for n in (40, 300, 900)]
        targets += [queries[-1], queries[-1][:2000]]
        targets += [rng.integers(0, 20, n).astype(np.uint8) for n in rng.integers(1, 1200, 100)]
        order = rng.permutation(len(queries))
        gpu, cpu = self.both("score_many", *packed([queries[i] for i in order]),
                             *packed(targets), PROTEIN, mode)
        np.testing.assert_array_equal(gpu, cpu)

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("scoring", [PROTEIN, DNA], ids=["protein", "dna"])
    def test_align_batch_equals_cpu_at_edge_lengths(self, mode, scoring):
        rng = np.random.default_rng(11)
        alphabet = 20 if scoring is PROTEIN else 4
        lengths = EDGE_LENGTHS[:-3] + rng.integers(1, 400, 60).tolist()
        queries = [rng.integers(0, alphabet, m).astype(np.uint8) for m in lengths]
        targets = [related(rng, q, int(rng.integers(1, 900)), alphabet) for q in queries]
        gpu, cpu = self.both("align_batch", *packed(queries), *packed(targets), scoring, mode)
        assert_same(gpu, cpu)

    @pytest.mark.parametrize("mode", MODES)
    def test_score_ends_equal_cpu_at_edge_lengths(self, mode):
        rng = np.random.default_rng(12)
        queries = [rng.integers(0, 20, m).astype(np.uint8) for m in EDGE_LENGTHS]
        targets = [related(rng, q, int(rng.integers(1, 1500)), 20) for q in queries]
        gpu, cpu = self.both("score_ends", *packed(queries), *packed(targets), PROTEIN, mode)
        assert_same(gpu, cpu)

    @pytest.mark.parametrize("scoring", [DNA, PROTEIN], ids=["dna", "protein"])
    def test_bands_equal_cpu_in_every_width_class(self, scoring):
        """Bands of every instance (16 to 4,096 diagonals, registers and local memory) and
        wider ones (the CPU twin's), empty bands, related and unrelated pairs."""
        rng = np.random.default_rng(13)
        alphabet = 4 if scoring is DNA else 20
        queries = [*random_set(rng, 6, 300, alphabet),
                   rng.integers(0, alphabet, 4500).astype(np.uint8)]
        targets = [related(rng, queries[k % len(queries)], int(rng.integers(1, 400)), alphabet)
                   for k in range(40)] + random_set(rng, 20, 300, alphabet)
        targets.append(rng.integers(0, alphabet, 4400).astype(np.uint8))
        shape = (len(queries), len(targets))
        half = rng.choice([3, 10, 30, 60, 120, 500, 2000, 5000], shape)
        m, n = np.array([len(q) for q in queries])[:, None], np.array([len(t) for t in targets])
        centre = (m - n) // 2 + rng.integers(-2, 3, shape)
        lo, hi = centre - half, centre + half
        lo[0, :5], hi[0, :5] = 1, 0                                  # empty bands
        gpu, cpu = self.both("band_scores", *packed(queries), *packed(targets), lo, hi, scoring)
        np.testing.assert_array_equal(gpu, cpu)
        assert (cpu == SKIPPED).any() and (cpu != SKIPPED).any()
