"""Hits ordered by e-value as blastp orders them, and the top k by e-value exact where
Spouge's e-values depend on the subject's length (:mod:`swath.engine.ranking`)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import swath
import swath.engine.search as engine
from swath.statistics import (
    _PROTEIN_TABLES,
    gapped_parameters,
    least_spouge_evalue,
    spouge_evalue,
)
from tests.engine.test_search import expected_hits

LETTERS = list("ACDEFGHIKLMNPQRSTVWY")


def protein_schemes() -> list[swath.Scoring]:
    return [swath.Scoring.protein(matrix, gap_open=int(row[0]), gap_extend=int(row[1]))
            for matrix, rows in _PROTEIN_TABLES.items() for row in rows[1:]]


@pytest.mark.parametrize("scoring", protein_schemes(), ids=str)
def test_spouge_evalues_fall_as_scores_rise_and_the_least_is_a_floor(scoring):
    """What the pool's exactness rests on, for every protein table: at any subject length
    a higher score has a smaller e-value, and no subject length in a range gives a score
    a smaller e-value than :func:`least_spouge_evalue` says."""
    params = gapped_parameters(scoring)
    lengths = np.arange(1, 6001)
    for query in (8, 150, 2000):
        e = spouge_evalue(np.arange(1, 1500)[:, None], query, lengths[::37][None, :], 10**8,
                          params)
        assert (np.diff(e, axis=0) < 0).all()
        for score in (12, 40, 90, 400):
            for shortest, longest in ((1, 6000), (30, 400), (500, 6000)):
                floor = least_spouge_evalue(score, query, shortest, longest, 10**8, params)
                span = lengths[shortest - 1:longest]
                assert floor == spouge_evalue(score, query, span, 10**8, params).min()


@pytest.fixture
def widths(monkeypatch) -> list[int]:
    """The pool width of every score task the searches of a test run, as they run."""
    seen: list[int] = []
    real = engine.score_partition

    def logged(job, q_res, q_off, p, k):
        seen.append(k)
        return real(job, q_res, q_off, p, k)

    monkeypatch.setattr(engine, "score_partition", logged)
    return seen


def test_the_top_k_by_evalue_are_exact_when_short_subjects_beat_the_pool(widths):
    """300 random 1,500-residue subjects and 200 of 25: the pool of the best by score
    holds long subjects only, whose e-values are too close to rule the short ones out, so
    each query is scored again with a wider pool; the hits are the 10 least e-values of
    the whole score matrix, in blastp's order."""
    rng = np.random.default_rng(3)
    seqs = ["".join(rng.choice(LETTERS, n)) for n in [1500] * 300 + [25] * 200]
    queries = ["".join(rng.choice(LETTERS, 200)) for _ in range(3)]
    result = swath.search(queries, seqs, top_k=10, device="cpu", max_evalue=math.inf)
    want = expected_hits({"seqs": seqs, "queries": queries}, 10, max_evalue=math.inf)
    assert [[(h.target_id, h.score) for h in result.hits(q)] for q in range(3)] == want
    assert sorted(set(widths)) == [36, 144]          # the pool, then a wider one
    for q in range(3):
        keys = [(h.evalue, -h.score, h.target_id) for h in result.hits(q)]
        assert keys == sorted(keys)


def test_without_subject_dependent_evalues_the_pool_is_the_top_k(widths):
    """DNA statistics (length-adjusted) and global mode order by score: no wider pool."""
    rng = np.random.default_rng(4)
    seqs = ["".join(rng.choice(list("ACGT"), n)) for n in rng.integers(20, 300, 60)]
    dna = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    swath.search([seqs[3][:80]], seqs, scoring=dna, top_k=5, device="cpu")
    swath.search([seqs[3][:80]], seqs, scoring=dna, top_k=5, device="cpu", mode="global")
    assert widths == [5, 5]


def repeat_family(rng: np.random.Generator) -> tuple[str, list[str]]:
    """A 60-residue query; a subject holding a 10 % and a 20 % mutated copy of it (the
    second of its residues 10 to 50), one holding a 30 % copy, and 30 random ones."""
    def random(n: int) -> str:
        return "".join(rng.choice(LETTERS, n))

    def mutated(s: str, rate: float) -> str:
        return "".join(random(1) if rng.random() < rate else c for c in s)

    query = random(60)
    return query, [random(30) + mutated(query, 0.1) + random(40) + mutated(query[10:50], 0.2)
                   + random(30), random(20) + mutated(query, 0.3) + random(20),
                   *(random(200) for _ in range(30))]


@pytest.mark.parametrize("stored", [False, True])
def test_max_hsps_keeps_each_subjects_further_alignments_after_its_best(tmp_path, stored):
    """A subject's hits are its optimal alignment, then the further ones the CPU kernel
    finds around it, each with its own e-value; subjects keep their order by best e-value,
    and ``max_hsps=1`` keeps the optimal one alone, as before."""
    from swath.kernels.cpu.hsps import further_alignments

    query, seqs = repeat_family(np.random.default_rng(5))
    store = {"store": str(tmp_path / "r.zarr")} if stored else {}
    one = swath.search([query], seqs, top_k=5, device="cpu", max_evalue=math.inf,
                       **({"store": str(tmp_path / "one.zarr")} if stored else {}))
    three = swath.search([query], seqs, top_k=5, max_hsps=3, device="cpu",
                         max_evalue=math.inf, **store)
    hits, firsts = three.hits(0), one.hits(0)
    subjects = list(dict.fromkeys(h.target_id for h in hits))
    assert subjects == [h.target_id for h in firsts] and subjects[:2] == [0, 1]
    scoring = swath.Scoring.protein()
    for first in firsts:
        mine = [h for h in hits if h.target_id == first.target_id]
        assert mine[0] == first
        more = further_alignments(scoring.alphabet.encode(query),
                                  scoring.alphabet.encode(seqs[first.target_id]), scoring,
                                  (first.alignment.query_start, first.alignment.target_start,
                                   first.alignment.cigar), 2)
        assert [(h.score, h.alignment.query_start, h.alignment.target_start,
                 h.alignment.cigar) for h in mine[1:]] == [(s, qs, ts, c)
                                                            for s, qs, _, ts, _, c in more]
        assert all(a.evalue <= b.evalue for a, b in itertools.pairwise(mine))
    second = [h for h in hits if h.target_id == 0][1]
    assert second.alignment.target_start > 120 and second.evalue < 1e-10   # the 2nd copy
    assert len(three.to_pandas()) == len(hits)


def test_max_hsps_is_refused_outside_local_mode():
    with pytest.raises(swath.InvalidParameter, match="several alignments a subject are local"):
        swath.search(["MKTAYIAKQR"], ["PPMKTAYIAKQRPP"], max_hsps=2, mode="global",
                     device="cpu")
    with pytest.raises(swath.InvalidParameter, match="max_hsps must be a positive integer"):
        swath.search(["MKTAYIAKQR"], ["PPMKTAYIAKQRPP"], max_hsps=0, device="cpu")
