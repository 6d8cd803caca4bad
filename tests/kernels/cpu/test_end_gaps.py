"""Terminal gap costs in global mode on the CPU: the score phase (every lane width) and
the traceback (the lane kernel of a shared query, the pair lane kernel, the one-pair
kernel) against the reference DP (``swath.testing``), Biopython's end gap scores and
vsearch itself; a scheme without end costs runs as before."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import swath
from swath.kernels.cpu import align_batch, score_many
from swath.testing import reference_align, reference_matrices, rescore
from tests.helpers import DNA, PROTEIN, biopython_score, packed

SCHEMES = {
    "vsearch": swath.Scoring.vsearch(),
    "dna-dearer-ends": DNA.with_end_gaps(9, 3),
    "protein-free-end-opens": PROTEIN.with_end_gaps(0, 1),
}


def edited(rng: np.random.Generator, seq: np.ndarray, alphabet: int) -> np.ndarray:
    """``seq`` with a few substitutions and indels, and perhaps its ends cut or grown:
    pairs whose optimal alignments have terminal gaps of either kind."""
    s = seq.tolist()
    for _ in range(int(rng.integers(0, 5))):
        at, kind = int(rng.integers(0, len(s) + 1)), int(rng.integers(3))
        if kind == 0 and at < len(s):
            s[at] = int(rng.integers(alphabet))
        elif kind == 1 and at < len(s):
            del s[at]
        else:
            s.insert(at, int(rng.integers(alphabet)))
    if rng.random() < 0.5:
        s = s[int(rng.integers(0, 4)):]
    if rng.random() < 0.5:
        s = s + rng.integers(0, alphabet, int(rng.integers(1, 4))).tolist()
    return np.array(s or [0], dtype=np.uint8)


def pair_set(rng: np.random.Generator, alphabet: int, shared: int, single: int
             ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``shared`` pairs of one query (the lane kernel) and ``single`` of their own."""
    first = rng.integers(0, alphabet, 30).astype(np.uint8)
    queries = [first] * shared + [rng.integers(0, alphabet, int(rng.integers(1, 40))
                                               ).astype(np.uint8) for _ in range(single)]
    return queries, [edited(rng, q, alphabet) for q in queries]


@pytest.mark.parametrize("name", list(SCHEMES))
def test_score_many_equals_the_reference_and_biopython(name):
    scoring = SCHEMES[name]
    rng = np.random.default_rng(len(name))
    alphabet = 4 if scoring.alphabet.letters == "ACGTN" else 20
    queries, targets = pair_set(rng, alphabet, 0, 6)
    targets += [rng.integers(0, alphabet, int(rng.integers(1, 40))).astype(np.uint8)
                for _ in range(14)]
    got = score_many(*packed(queries), *packed(targets), scoring, "global")
    want = np.array([[reference_matrices(q, t, scoring, "global")[0][-1, -1] for t in targets]
                     for q in queries])
    np.testing.assert_array_equal(got, want)
    assert [biopython_score(q, targets[k], scoring, "global") for k, q in enumerate(queries)
            ] == [int(want[k, k]) for k in range(len(queries))]


def test_score_many_past_16_bits_with_end_costs():
    """Pairs whose values leave 16 bits go on to the 32-bit round with the end costs."""
    scoring = DNA.with_end_gaps(3000, 5)
    rng = np.random.default_rng(5)
    queries = [rng.integers(0, 4, 30).astype(np.uint8)]
    targets = [edited(rng, queries[0], 4) for _ in range(3)]
    got = score_many(*packed(queries), *packed(targets), scoring, "global")
    assert got[0].tolist() == [reference_matrices(queries[0], t, scoring, "global")[0][-1, -1]
                               for t in targets]


@pytest.mark.parametrize("name", list(SCHEMES))
def test_align_batch_equals_the_reference(name):
    """Scores, coordinates and CIGARs of every kernel the traceback uses; the CIGAR
    rescored with end costs gives the score."""
    scoring = SCHEMES[name]
    rng = np.random.default_rng(10 + len(name))
    alphabet = 4 if scoring.alphabet.letters == "ACGTN" else 20
    queries, targets = pair_set(rng, alphabet, 20, 40)
    scores, coords, text, offsets = align_batch(
        *packed(queries), *packed(targets), scoring, "global")
    for k, (q, t) in enumerate(zip(queries, targets, strict=True)):
        want = reference_align(q, t, scoring, "global")
        cigar = text[offsets[k]:offsets[k + 1]].tobytes().decode()
        assert (int(scores[k]), cigar) == (want.score, want.cigar), k
        assert coords[k].tolist() == [0, len(q), 0, len(t)]
        assert rescore(want, q, t, scoring) == want.score


def test_equal_end_costs_are_no_end_costs():
    """A scheme whose end costs are its interior ones is the plain scheme, and the
    kernels give the same results with or without them."""
    same = DNA.with_end_gaps(DNA.gap_open, DNA.gap_extend)
    assert same == DNA and same.end_gaps is None
    rng = np.random.default_rng(3)
    queries, targets = pair_set(rng, 4, 4, 8)
    plain = score_many(*packed(queries), *packed(targets), DNA, "global")
    assert np.array_equal(plain, score_many(*packed(queries), *packed(targets), same, "global"))


def test_end_costs_outside_global_mode_are_refused():
    with pytest.raises(swath.InvalidParameter, match="global mode only"):
        score_many(*packed([np.zeros(3, np.uint8)]), *packed([np.zeros(3, np.uint8)]),
                   DNA.with_end_gaps(1, 1), "local")


@pytest.mark.skipif(shutil.which("vsearch") is None, reason="vsearch is not installed")
def test_vsearch_raw_scores(tmp_path):
    """vsearch --allpairs_global's raw scores of pairs with terminal and interior gaps,
    N and lower case, equal swath's under ``Scoring.vsearch()``."""
    rng = np.random.default_rng(8)
    scoring = swath.Scoring.vsearch()
    records = []
    for k in range(12):
        query = rng.integers(0, 4, int(rng.integers(20, 50))).astype(np.uint8)
        target = edited(rng, query, 4)
        a, b = scoring.alphabet.decode(query), scoring.alphabet.decode(target)
        if k % 4 == 1:
            a = a[:5] + "N" + a[6:].lower()
        records.append((a, b))
    path = tmp_path / "pairs.fasta"
    raw = []
    for a, b in records:
        path.write_text(f">a\n{a}\n>b\n{b}\n")
        out = subprocess.run(["vsearch", "--allpairs_global", str(path), "--acceptall",
                              "--userout", "-", "--userfields", "raw", "--quiet"],
                             capture_output=True, text=True, check=True).stdout
        raw.append(int(out.split()[0]))
    assert [swath.align(a, b, scoring, mode="global", device="cpu").score
            for a, b in records] == raw
