"""Shared fixtures: backends to test, oracle helpers, hypothesis strategies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

import swath
from swath.errors import BackendUnavailable
from swath.kernels import get_backend

PROTEIN = swath.Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
DNA = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def gpu_available() -> bool:
    try:
        get_backend("gpu")
    except BackendUnavailable:
        return False
    return True


@pytest.fixture(autouse=True, scope="session")
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """What swath caches (database stores made from FASTA files) goes to a temporary
    directory, also for the commands the tests start, not to the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWATH_CACHE_DIR", str(tmp_path_factory.mktemp("swath-cache")))
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable GPU backend (CuPy with a CUDA GPU)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def parasail_score(query: np.ndarray, target: np.ndarray, scoring: swath.Scoring, mode: str
                   ) -> int:
    """The score parasail gives, converting swath's gap convention to parasail's."""
    import parasail

    letters = scoring.alphabet.letters
    matrix = parasail.matrix_create(letters, 0, 0)
    for a in range(len(letters)):
        for b in range(len(letters)):
            matrix[a, b] = int(scoring.matrix[a, b])
    function = {"local": parasail.sw, "global": parasail.nw, "semiglobal": parasail.sg_dx}[mode]
    result = function(scoring.alphabet.decode(query), scoring.alphabet.decode(target),
                      scoring.gap_open + scoring.gap_extend, scoring.gap_extend, matrix)
    return int(result.score)


def biopython_score(query: np.ndarray, target: np.ndarray, scoring: swath.Scoring, mode: str
                    ) -> int:
    """The score Biopython's PairwiseAligner gives (local and global modes)."""
    from Bio.Align import PairwiseAligner, substitution_matrices

    aligner = PairwiseAligner()
    aligner.mode = mode
    aligner.substitution_matrix = substitution_matrices.Array(
        scoring.alphabet.letters, dims=2, data=scoring.matrix.astype(float))
    aligner.open_gap_score = -(scoring.gap_open + scoring.gap_extend)
    aligner.extend_gap_score = -scoring.gap_extend
    return int(aligner.score(scoring.alphabet.decode(target), scoring.alphabet.decode(query)))


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
