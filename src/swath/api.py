"""The public functions: align one pair, score many against many."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from swath.alignment import MODES, Alignment
from swath.errors import InvalidParameter
from swath.kernels import get_backend
from swath.scoring import Scoring
from swath.sequences import (
    SequenceLike,
    SequenceSet,
    encode_sequence,
    read_sequences,
    sequence_set,
)

SequencesLike = str | os.PathLike[str] | Sequence[SequenceLike] | SequenceSet


def _scoring(scoring: Scoring | None) -> Scoring:
    if scoring is None:
        return Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
    if not isinstance(scoring, Scoring):
        raise InvalidParameter(
            f"scoring must be a swath.Scoring, got {type(scoring).__name__} "
            "(build one with Scoring.protein(...) or Scoring.dna(...))")
    return scoring


def _mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidParameter(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def _sequences(value: SequencesLike, scoring: Scoring, wildcard: bool, what: str
               ) -> SequenceSet:
    if isinstance(value, SequenceSet):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read_sequences(value, scoring.alphabet, wildcard=wildcard)
    if isinstance(value, (bytes, np.ndarray)):
        raise InvalidParameter(f"{what} must be a FASTA path or a list of sequences, "
                               f"got a single {type(value).__name__}")
    names = [f"{what}[{i}]" for i in range(len(value))]
    if not names:
        raise InvalidParameter(f"{what} is empty")
    return sequence_set(list(value), scoring.alphabet, wildcard=wildcard, names=names)


def align(query: SequenceLike, target: SequenceLike, scoring: Scoring | None = None,
          mode: str = "local", device: str = "auto", *, wildcard: bool = False) -> Alignment:
    """Align one query against one target exactly, with traceback.

    Parameters
    ----------
    query, target : str, bytes or numpy.ndarray
        Residues as text (either case) or as ``uint8`` codes of ``scoring.alphabet``.
    scoring : Scoring, optional
        Matrix and gap costs; a gap of length k costs ``gap_open + k * gap_extend``.
        Default: BLOSUM62, gap 11 + 1 per residue.
    mode : {"local", "global", "semiglobal"}
        Smith-Waterman, Needleman-Wunsch, or the whole query against any part of
        the target (end gaps in the target are free).
    device : {"auto", "cpu", "gpu"}
        Where to compute; "auto" picks the GPU when one is usable.
    wildcard : bool
        Map residues outside the alphabet to its wildcard (X or N) instead of failing.

    Returns
    -------
    Alignment
        Score, 0-based end-exclusive coordinates and an extended CIGAR.

    Examples
    --------
    >>> import swath
    >>> sc = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> aln = swath.align("ACGTTGCA", "TTACGTTGCATT", scoring=sc, mode="semiglobal")
    >>> aln.score, aln.target_start, aln.target_end, aln.cigar
    (16, 2, 10, '8=')
    """
    scoring = _scoring(scoring)
    mode = _mode(mode)
    backend = get_backend(device)
    q = encode_sequence(query, scoring.alphabet, wildcard=wildcard, name="query")
    t = encode_sequence(target, scoring.alphabet, wildcard=wildcard, name="target")
    scores, coords, cigar, _ = backend.align_batch(
        q, np.array([0, len(q)]), t, np.array([0, len(t)]), scoring.matrix, scoring.gap_open,
        scoring.gap_extend, mode)
    q_start, q_end, t_start, t_end = (int(x) for x in coords[0])
    return Alignment(int(scores[0]), q_start, q_end, t_start, t_end, cigar.tobytes().decode(),
                     mode)


def scores(queries: SequencesLike, targets: SequencesLike, scoring: Scoring | None = None,
           mode: str = "global", device: str = "auto", *, wildcard: bool = False
           ) -> np.ndarray:
    """Optimal scores of every query against every target, without traceback.

    Parameters
    ----------
    queries, targets : FASTA path, list of sequences, or SequenceSet
        Sequences as text or ``uint8`` codes, or a FASTA/FASTQ file (plain or gzip).
    scoring, mode, device, wildcard
        As in :func:`align`.

    Returns
    -------
    numpy.ndarray
        ``int32`` array of shape ``(len(queries), len(targets))``.

    Examples
    --------
    >>> import swath
    >>> swath.scores(["HEAGAWGHEE", "PAW"], ["PAWHEAE", "HEAGAWGHEE"], mode="local")
    array([[17, 62],
           [22, 15]], dtype=int32)
    """
    scoring = _scoring(scoring)
    mode = _mode(mode)
    backend = get_backend(device)
    qs = _sequences(queries, scoring, wildcard, "queries")
    ts = _sequences(targets, scoring, wildcard, "targets")
    return backend.score_many(qs.residues, qs.offsets, ts.residues, ts.offsets, scoring.matrix,
                              scoring.gap_open, scoring.gap_extend, mode)
