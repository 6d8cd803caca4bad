"""The CPU traceback kernel: 4-bit direction codes keep long pairs in bounded memory."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import swath
from tests.helpers import DNA, PROTEIN, packed, related

SCRIPT = textwrap.dedent("""
    import resource, numpy as np, swath
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, 50_000).astype(np.uint8)
    b = a.copy()
    b[rng.integers(0, len(b), 2_500)] = rng.integers(0, 4, 2_500)
    b = np.delete(b, slice(20_000, 20_050))
    b = np.insert(b, 30_000, rng.integers(0, 4, 50).astype(np.uint8))
    sc = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    aln = swath.align(a, b, scoring=sc, mode="global", device="cpu")
    from swath.testing import rescore
    assert rescore(aln, a, b, sc) == aln.score
    assert "50D" in aln.cigar and "50I" in aln.cigar, aln.cigar
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
""")


def test_two_50kbp_sequences_align_in_under_2_gb():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          check=True, timeout=600)
    peak = int(done.stdout.split()[-1])
    assert peak < 2 * 1024**3, f"peak memory {peak / 1024**3:.2f} GiB"


def _hits_like_batch(rng, queries, per_query, alphabet):
    """Pairs as a search hands them over: each query with several targets, some of which
    share a stretch with it (so paths cross gaps of every kind), lengths from 1."""
    q_list, t_list = [], []
    for _ in range(queries):
        q = rng.integers(0, alphabet, int(rng.integers(1, 60))).astype(np.uint8)
        for _ in range(int(rng.integers(1, per_query + 1))):
            t = rng.integers(0, alphabet, int(rng.integers(1, 90))).astype(np.uint8)
            if rng.random() < 0.6:
                piece = np.delete(q, rng.integers(0, len(q), len(q) // 6))
                at = int(rng.integers(0, len(t) + 1))
                t = np.insert(t, at, piece)
            q_list.append(q)
            t_list.append(t)
    offsets = [np.concatenate([[0], np.cumsum([len(x) for x in xs])]).astype(np.int64)
               for xs in (q_list, t_list)]
    return np.concatenate(q_list), offsets[0], np.concatenate(t_list), offsets[1]


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
@pytest.mark.parametrize("budget", [1 << 28, 600])
def test_lane_groups_equal_one_pair_at_a_time(mode, budget, monkeypatch):
    """Pairs sharing a query run in the lane kernel (or, over the budget, one at a time):
    the same scores, coordinates and CIGARs as aligning each pair alone."""
    from swath.alignment import cigar_from_path
    from swath.kernels.cpu import traceback

    monkeypatch.setattr(traceback, "LANE_CODES_BUDGET", budget)
    rng = np.random.default_rng(11)
    for scoring, alphabet in ((PROTEIN, 20), (DNA, 4)):
        q_res, q_off, t_res, t_off = _hits_like_batch(rng, 12, 21, alphabet)
        groups, _ = traceback._lane_groups(q_res, q_off, t_off, scoring.matrix,
                                           scoring.gap_open, scoring.gap_extend)
        assert bool(groups) == (budget > 600)
        scores, coords, text, at = traceback.align_batch(q_res, q_off, t_res, t_off, scoring,
                                                         mode)
        for k in range(len(q_off) - 1):
            q, t = q_res[q_off[k]:q_off[k + 1]], t_res[t_off[k]:t_off[k + 1]]
            score, qs, qe, ts, te, ops = traceback.align_pair(q, t, scoring, mode)
            assert (scores[k], *coords[k]) == (score, qs, qe, ts, te)
            assert text[at[k]:at[k + 1]].tobytes().decode() == cigar_from_path(ops, q, t, qs, ts)


def test_pairs_past_the_side_by_side_budget_run_one_at_a_time(monkeypatch):
    """Pairs whose direction buffers pass SIDE_BY_SIDE_BYTES go to the threads as one
    task (one such buffer at a time in memory), the others one task a pair; the
    alignments are those of every pair side by side."""
    from swath.kernels.cpu import traceback

    rng = np.random.default_rng(3)
    batch = _hits_like_batch(rng, 6, 4, 4)
    q_off, t_off = batch[1], batch[3]
    monkeypatch.setattr(traceback, "LANE_CODES_BUDGET", 600)     # every pair a single
    side_by_side = traceback.align_batch(*batch, DNA, "global")
    sizes = np.diff(q_off) * ((np.diff(t_off) + 1) // 2)
    limit = int(np.median(sizes))
    handed = []

    def record(function, items):
        tasks = list(items)
        handed.append(len(tasks))
        return [function(task) for task in tasks]

    monkeypatch.setattr(traceback, "SIDE_BY_SIDE_BYTES", limit)
    monkeypatch.setattr(traceback, "on_every_core", record)
    split = traceback.align_batch(*batch, DNA, "global")
    assert 0 < (sizes > limit).sum() < len(sizes)
    assert handed == [int((sizes <= limit).sum()) + 1]
    for a, b in zip(side_by_side, split, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
@pytest.mark.parametrize("gap_extend", [2, 60])
def test_pairs_of_distinct_queries_equal_one_pair_at_a_time(mode, gap_extend):
    """Pairs that share no query (batched pairs) run side by side in the pair lane kernel:
    at 16 bits, and at 32 where a pair's values pass 16 (a large gap extension), N
    scoring a mismatch even against N; the same scores, coordinates and CIGARs as
    aligning each pair alone."""
    from swath.alignment import cigar_from_path
    from swath.kernels.cpu import traceback

    rng = np.random.default_rng(17)
    queries = [rng.integers(0, 5, int(rng.integers(1, 120))).astype(np.uint8)
               for _ in range(80)]
    targets = [related(rng, q, int(rng.integers(1, 200)), 5) if k % 3 else
               rng.integers(0, 5, int(rng.integers(1, 200))).astype(np.uint8)
               for k, q in enumerate(queries)]
    (q_res, q_off), (t_res, t_off) = packed(queries), packed(targets)
    scoring = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=gap_extend)
    groups, left = traceback._pair_groups(q_off, t_off, np.arange(len(queries)),
                                          scoring.matrix, 5, gap_extend)
    widths = {dtype.itemsize for _, dtype in groups}
    assert not len(left) and widths == ({2} if gap_extend == 2 else {2, 4})
    scores, coords, text, at = traceback.align_batch(q_res, q_off, t_res, t_off, scoring, mode)
    for k, (q, t) in enumerate(zip(queries, targets, strict=True)):
        score, qs, qe, ts, te, ops = traceback.align_pair(q, t, scoring, mode)
        assert (scores[k], *coords[k]) == (score, qs, qe, ts, te)
        assert text[at[k]:at[k + 1]].tobytes().decode() == cigar_from_path(ops, q, t, qs, ts)
