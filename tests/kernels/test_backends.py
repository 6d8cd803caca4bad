"""Every backend against the NumPy reference: scores, coordinates and CIGARs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import swath
from swath.kernels import get_backend
from swath.testing import reference_align, rescore
from tests.conftest import DNA, PROTEIN, pairs

MODES = ["local", "global", "semiglobal"]
SETTINGS = settings(deadline=None, max_examples=150,
                    suppress_health_check=[HealthCheck.too_slow])


def offsets_of(seqs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return (np.concatenate(seqs).astype(np.uint8),
            np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64))


class BackendSuite:
    """The kernel contract of ``swath.kernels``; subclasses name the device."""

    device: str

    @property
    def backend(self):
        return get_backend(self.device)

    def align_all(self, queries, targets, scoring, mode) -> list[swath.Alignment]:
        scores, coords, text, offsets = self.backend.align_batch(
            *offsets_of(queries), *offsets_of(targets), scoring.matrix, scoring.gap_open,
            scoring.gap_extend, mode)
        cigars = text.tobytes().decode()
        return [swath.Alignment(int(s), *map(int, c), cigars[offsets[k]:offsets[k + 1]], mode)
                for k, (s, c) in enumerate(zip(scores, coords, strict=True))]

    def align(self, query, target, scoring, mode) -> swath.Alignment:
        return self.align_all([query], [target], scoring, mode)[0]

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
            *offsets_of(queries), *offsets_of(targets), DNA.matrix, DNA.gap_open,
            DNA.gap_extend, mode, pairs=(rows, cols))
        gathered = self.backend.align_batch(
            *offsets_of([queries[r] for r in rows]), *offsets_of([targets[c] for c in cols]),
            DNA.matrix, DNA.gap_open, DNA.gap_extend, mode)
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
            *offsets_of(queries), *offsets_of(targets), scoring.matrix, scoring.gap_open,
            scoring.gap_extend, mode)
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
        got = self.backend.score_many(*offsets_of(queries), *offsets_of(targets), scoring.matrix,
                                      scoring.gap_open, scoring.gap_extend, mode)
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
        got = self.backend.score_many(*offsets_of([w]), *offsets_of(targets), PROTEIN.matrix, 11, 1,
                                      mode)
        expected = [self.align(w, t, PROTEIN, mode).score for t in targets]
        np.testing.assert_array_equal(got[0], expected)
        assert got[0, 0] == 3100 * 11 > 32767
        assert got[0, 1] == 3099 * 11 - 3 if mode == "global" else got[0, 1] > 32767

    @pytest.mark.parametrize("mode", MODES)
    def test_many_queries_many_lane_groups(self, mode):
        rng = np.random.default_rng(7)
        queries = [rng.integers(0, 4, n).astype(np.uint8) for n in (1, 17, 64)]
        targets = [rng.integers(0, 4, n).astype(np.uint8) for n in rng.integers(1, 90, 75)]
        got = self.backend.score_many(*offsets_of(queries), *offsets_of(targets), DNA.matrix, 5, 2,
                                      mode)
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


class TestCPU(BackendSuite):
    device = "cpu"


@pytest.mark.gpu
class TestGPU(BackendSuite):
    device = "gpu"
