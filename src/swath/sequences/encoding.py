"""Encoding residue letters into ``uint8`` codes, and sets of sequences laid end to end.

An alphabet's :class:`Translator` holds its byte tables: one C-level ``bytes.translate``
maps letters (either case) to codes and, for file text, drops whitespace; a byte that is
not a residue becomes 255 and is explained in the error (a gap, a letter outside the
alphabet, or not a letter at all). :func:`encode_sequence` encodes one in-memory sequence.

Many sequences are kept concatenated: one residue array and ``N + 1`` offsets, record ``i``
being ``residues[offsets[i]:offsets[i + 1]]`` (:class:`~swath.sequences.SequenceSet`, the
database partitions, the kernels' batches); :func:`take_concatenated` and
:func:`slice_concatenated` cut such sets.
"""

from __future__ import annotations

import logging
from functools import lru_cache

import numpy as np

from swath.errors import InvalidInput, InvalidParameter, InvalidSequence, SwathError
from swath.scoring import Alphabet

__all__ = [
    "SequenceLike",
    "Translator",
    "check_codes",
    "encode_sequence",
    "looks_like_dna",
    "slice_concatenated",
    "take_concatenated",
    "translator",
    "warn_if_dna",
]

logger = logging.getLogger(__name__)

SequenceLike = str | bytes | bytearray | np.ndarray

_BAD = 255  # translation result of a byte that is not a residue of the alphabet
_WHITESPACE = b" \t\r\n\v\f"
_LETTERS = bytes(range(ord("A"), ord("Z") + 1)) + bytes(range(ord("a"), ord("z") + 1))


def encode_sequence(seq: SequenceLike, alphabet: Alphabet, *, wildcard: bool = False,
                    name: str = "sequence") -> np.ndarray:
    """Encode one in-memory sequence into ``uint8`` codes.

    Parameters
    ----------
    seq : str, bytes or numpy.ndarray
        Residue letters (either case; whitespace is not allowed), or an integer
        array of codes, which is checked and returned as ``uint8`` (the same array
        when it already is one).
    alphabet : Alphabet
        The alphabet to encode into (``Scoring.alphabet``).
    wildcard : bool
        Map letters outside the alphabet to its wildcard instead of raising.
    name : str
        What error messages call the sequence.

    Returns
    -------
    numpy.ndarray
        The codes, ``uint8``.

    Raises
    ------
    InvalidSequence
        The sequence is empty, or holds a residue or code outside the alphabet.
    InvalidParameter
        ``seq`` has another type, or ``wildcard`` is set and the alphabet has no
        wildcard.

    Examples
    --------
    >>> from swath.scoring import Alphabet
    >>> dna = Alphabet("ACGTN", "N")
    >>> encode_sequence("ACgtn", dna).tolist()
    [0, 1, 2, 3, 4]
    >>> encode_sequence("ACRT", dna, wildcard=True).tolist()
    [0, 1, 4, 3]
    >>> encode_sequence("ACRT", dna, name="query")
    Traceback (most recent call last):
    ...
    swath.errors.InvalidSequence: query position 3: residue 'R' is not in the DNA alphabet (use wildcard=True to map it to N)
    """  # noqa: E501
    encoder = translator(alphabet, wildcard)
    if isinstance(seq, np.ndarray):
        return check_codes(seq, alphabet, name)
    return np.frombuffer(bytearray(encoder.encode(seq, name)), dtype=np.uint8)


class Translator:
    """Byte tables of one alphabet: codes (255 where not a residue) and messages.

    Made once per alphabet and wildcard setting (:func:`translator`).
    """

    def __init__(self, alphabet: Alphabet, wildcard: bool) -> None:
        self.alphabet = alphabet
        self.wildcard = wildcard
        table = np.array(alphabet.table, dtype=np.uint8)
        if wildcard:
            code = alphabet.wildcard_code
            if code is None:
                raise InvalidParameter(
                    f"wildcard=True, but the {_describe(alphabet)} has no wildcard residue"
                )
            unknown = np.frombuffer(_LETTERS + b"*", dtype=np.uint8)
            table[unknown[table[unknown] == _BAD]] = code
        self.table = table.tobytes()
        # Which raw bytes are errors: not a residue and not whitespace.
        bad = table == _BAD
        bad[np.frombuffer(_WHITESPACE, dtype=np.uint8)] = False
        self.bad = bad

    def encode(self, seq: SequenceLike, name: str) -> bytes:
        """Code bytes of an in-memory str or bytes sequence (whitespace is an error)."""
        if isinstance(seq, str):
            if not seq.isascii():
                pos = next(i for i, ch in enumerate(seq) if not ch.isascii())
                raise InvalidSequence(f"{name} position {pos + 1}: character {seq[pos]!r} "
                                      "is not a residue letter")
            raw = seq.encode("ascii")
        elif isinstance(seq, (bytes, bytearray, memoryview)):
            raw = bytes(seq)
        else:
            raise InvalidParameter(
                f"{name} must be a str, bytes or numpy array of codes, got {type(seq).__name__}"
            )
        if not raw:
            raise InvalidSequence(f"{name} is empty")
        coded = raw.translate(self.table)
        if _BAD in coded:
            # Whitespace is not skipped here: any byte that did not encode is the culprit.
            pos = coded.index(_BAD)
            cls, message = self._explain(raw[pos], "wildcard=True", InvalidSequence)
            raise cls(f"{name} position {pos + 1}: {message}")
        return coded

    def encode_text(self, raw: bytes, display: str, line: int) -> bytes:
        """Code bytes of sequence text of file ``display`` starting on ``line``,
        whitespace dropped; an error names the line of the first byte that is not a
        residue."""
        coded = raw.translate(self.table, _WHITESPACE)
        if _BAD in coded:
            pos = int(np.argmax(self.bad[np.frombuffer(raw, dtype=np.uint8)]))
            cls, message = self._explain(raw[pos], "--wildcard", InvalidInput)
            where = line + raw.count(b"\n", 0, pos)
            raise cls(f"{display} line {where}: {message}")
        return coded

    def _explain(self, byte: int, hint: str, other: type[SwathError]
                 ) -> tuple[type[SwathError], str]:
        """The error class and message for a byte that is not a residue."""
        shown = repr(bytes([byte]))[1:]
        if byte in b"-.":
            return InvalidSequence, (
                f"alignment gaps are not allowed in input sequences (found {shown})"
            )
        if byte in _LETTERS or byte == ord("*"):
            tip = ""
            if self.alphabet.wildcard is not None and not self.wildcard:
                tip = f" (use {hint} to map it to {self.alphabet.wildcard})"
            return InvalidSequence, (
                f"residue {shown} is not in the {_describe(self.alphabet)}{tip}"
            )
        return other, f"character {shown} is not a residue letter"


def translator(alphabet: Alphabet, wildcard: bool) -> Translator:
    """The :class:`Translator` of ``alphabet`` (``InvalidParameter`` if it is not one),
    with letters outside it mapped to its wildcard if ``wildcard``."""
    if not isinstance(alphabet, Alphabet):
        raise InvalidParameter(
            f"alphabet must be a swath Alphabet (Scoring.alphabet), got "
            f"{type(alphabet).__name__}"
        )
    return _translator(alphabet.letters, alphabet.wildcard, bool(wildcard))


@lru_cache(maxsize=32)
def _translator(letters: str, wildcard_letter: str | None, wildcard: bool) -> Translator:
    return Translator(Alphabet(letters, wildcard_letter), wildcard)


def _describe(alphabet: Alphabet) -> str:
    letters = alphabet.letters
    if letters == "ACGTN":
        return "DNA alphabet"
    if "W" in letters and len(letters) > 20:
        return "protein alphabet"
    return f"alphabet {letters}"


def check_codes(codes: np.ndarray, alphabet: Alphabet, name: str) -> np.ndarray:
    """Check an array of codes against the alphabet; return it as uint8."""
    if codes.ndim != 1 or codes.dtype.kind not in "iu":
        raise InvalidSequence(
            f"{name} must be a 1-D integer array of codes, got {codes.dtype} of shape "
            f"{codes.shape}"
        )
    if codes.size == 0:
        raise InvalidSequence(f"{name} is empty")
    size = len(alphabet.letters)
    outside = (codes >= size) | (codes < 0) if codes.dtype.kind == "i" else codes >= size
    if outside.any():
        pos = int(np.argmax(outside))
        raise InvalidSequence(
            f"{name} position {pos + 1}: code {int(codes[pos])} is not in the "
            f"{_describe(alphabet)} (codes are 0 to {size - 1})"
        )
    return codes if codes.dtype == np.uint8 else codes.astype(np.uint8)


def take_concatenated(residues: np.ndarray, offsets: np.ndarray, index: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Sequences ``index`` (in that order, repeats allowed) of a concatenated set, as
    residues and offsets of their own: each item copied as one slice, by a compiled loop
    (one fancy index, an int64 a residue, was slow for amplicons; a Python slice an item,
    for millions of names and CIGARs). ``residues``: numbers in native byte order (what
    numba compiles the loop for: one build a dtype, cached).

    Examples
    --------
    >>> res, off = take_concatenated(np.arange(6), np.array([0, 2, 3, 6]), np.array([2, 0, 2]))
    >>> res.tolist(), off.tolist()
    ([3, 4, 5, 0, 1, 3, 4, 5], [0, 3, 5, 8])
    """
    from swath.sequences.segments import copy_segments

    index = np.asarray(index)
    if index.size and index.dtype.kind not in "iu":    # a mask or floats: no silent cast
        raise TypeError(f"index must hold integers, not {index.dtype}")
    index = index.astype(np.int64, copy=False)
    offsets = np.asarray(offsets)
    starts = offsets[index].astype(np.int64)
    out_offsets = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(offsets[index + 1] - starts, out=out_offsets[1:])
    out = np.empty(int(out_offsets[-1]), dtype=residues.dtype)
    if len(out):
        copy_segments(np.ascontiguousarray(residues), starts, out_offsets, out)
    return out, out_offsets


def slice_concatenated(residues: np.ndarray, offsets: np.ndarray, first: int, last: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Sequences ``first:last`` of a concatenated set (residues, offsets): their residues
    (a view) and their offsets from 0."""
    return residues[offsets[first]:offsets[last]], offsets[first:last + 1] - offsets[first]


_NUCLEOTIDES = "ACGTN"
_WARNED: set[str] = set()       # the sources warned about (warn_if_dna)


def looks_like_dna(residues: np.ndarray, alphabet: Alphabet) -> bool:
    """Whether codes of a protein alphabet hold only the letters A, C, G, T and N: DNA read
    as protein (scored with a protein matrix, it would align, with nonsense scores).

    Examples
    --------
    >>> protein = Alphabet("ARNDCQEGHILKMFPSTWYVBZX*", "X")
    >>> looks_like_dna(np.array([0, 4, 7, 16], np.uint8), protein)     # A C G T
    True
    >>> looks_like_dna(np.array([0, 12, 4], np.uint8), protein)        # A M C
    False
    """
    if not set(_NUCLEOTIDES) < set(alphabet.letters) or not len(residues):
        return False
    codes = np.array([alphabet.letters.index(c) for c in _NUCLEOTIDES], dtype=np.uint8)
    return bool(np.isin(residues, codes).all())


def warn_if_dna(residues: np.ndarray, alphabet: Alphabet, source: str) -> None:
    """One warning (a source once a process), where a protein alphabet reads residues
    that look like DNA, that the sequences of ``source`` want ``--dna`` (``Scoring.dna``)."""
    if source not in _WARNED and looks_like_dna(residues, alphabet):
        _WARNED.add(source)
        logger.warning("%s: the sequences hold only A, C, G, T and N, and are read as protein "
                       "(a protein matrix would score them): DNA wants --dna "
                       "(swath.Scoring.dna() in Python)", source)

