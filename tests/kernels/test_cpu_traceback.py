"""The CPU traceback kernel: 4-bit direction codes keep long pairs in bounded memory."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

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


@pytest.mark.slow
def test_two_50kbp_sequences_align_in_under_2_gb():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          check=True, timeout=600)
    peak = int(done.stdout.split()[-1])
    assert peak < 2 * 1024**3, f"peak memory {peak / 1024**3:.2f} GiB"
