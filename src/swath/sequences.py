"""FASTA and FASTQ input, plain or gzip, into ``uint8`` residue codes.

Files are read in blocks of about a megabyte; each stretch of sequence text is
encoded as it arrives (one C-level ``bytes.translate`` that maps residues to codes
and drops whitespace), so reading a file needs about its largest record plus the
output arrays. gzip is recognised by its magic bytes, FASTA or FASTQ by the first
non-blank character (``>`` or ``@``); file names do not matter.

Errors are one line and name the file and line::

    q.fasta line 12: residue 'J' is not in the protein alphabet (use --wildcard to map it to X)

A letter outside the alphabet and an alignment gap raise :class:`InvalidSequence`;
a malformed file (not FASTA/FASTQ, a character that is not a residue letter, a
broken FASTQ record, corrupt gzip, a header that is not UTF-8) raises
:class:`InvalidInput`; a path that cannot be opened raises :class:`InputNotFound`.
"""

from __future__ import annotations

import gzip
import logging
import os
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import IO, Any

import numpy as np

from swath.errors import (
    InputNotFound,
    InvalidInput,
    InvalidParameter,
    InvalidSequence,
    SwathError,
)
from swath.scoring import Alphabet

__all__ = [
    "Record",
    "SequenceSet",
    "encode_sequence",
    "iter_records",
    "read_sequences",
    "sequence_set",
    "slice_concatenated",
]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
SequenceLike = str | bytes | bytearray | np.ndarray

_BLOCK = 1 << 20
_BAD = 255  # translation result of a byte that is not a residue of the alphabet
_WHITESPACE = b" \t\r\n\v\f"
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_LETTERS = bytes(range(ord("A"), ord("Z") + 1)) + bytes(range(ord("a"), ord("z") + 1))

# The encoder turns raw sequence text (starting on the given line) into code bytes.
_Encoder = Callable[[bytes, int], bytes]
# A parsed record before its header is decoded: header bytes, header line, code parts.
_RawRecord = tuple[bytes, int, list[bytes]]


# ---------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, eq=False)
class SequenceSet:
    """Many encoded sequences, concatenated into one residue array.

    Record ``i`` is ``residues[offsets[i]:offsets[i + 1]]``. The arrays are
    read-only. Two sets are equal when they hold the same names, descriptions and
    residues; ``source`` is not compared (a FASTA file and its gzip copy give
    equal sets). Sets pickle (Dask ships them) and are not hashable.

    Parameters
    ----------
    names : tuple of str
        Record ids: each header up to its first whitespace.
    descriptions : tuple of str
        Full header lines without the leading ``>`` or ``@``.
    residues : numpy.ndarray
        ``uint8`` codes of all records, concatenated.
    offsets : numpy.ndarray
        ``int64``, one more than there are records, starting at 0 and ending at
        ``len(residues)``.
    source : str or None
        The file the set was read from, or None.

    Examples
    --------
    >>> from swath.scoring import Alphabet
    >>> s = sequence_set(["ACGT", "GG"], Alphabet("ACGTN", "N"), names=["a", "b"])
    >>> len(s), s[1].tolist(), s.lengths.tolist()
    (2, [2, 2], [4, 2])
    >>> s
    SequenceSet(2 sequences, 6 residues, source=None)
    """

    names: tuple[str, ...]
    descriptions: tuple[str, ...]
    residues: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    source: str | None = None

    def __post_init__(self) -> None:
        names = tuple(self.names)
        descriptions = tuple(self.descriptions)
        residues = np.asarray(self.residues)
        if residues.ndim != 1 or residues.dtype != np.uint8:
            raise InvalidParameter(
                f"residues must be a 1-D uint8 array, got {residues.dtype} of shape "
                f"{residues.shape}"
            )
        offsets = np.asarray(self.offsets)
        if offsets.ndim != 1 or offsets.dtype.kind not in "iu":
            raise InvalidParameter(f"offsets must be a 1-D integer array, got {offsets.dtype}")
        offsets = offsets.astype(np.int64, copy=False)
        if len(names) != len(descriptions) or len(offsets) != len(names) + 1:
            raise InvalidParameter(
                f"{len(names)} names, {len(descriptions)} descriptions and {len(offsets)} "
                "offsets: expected n names, n descriptions and n + 1 offsets"
            )
        if offsets[0] != 0 or offsets[-1] != len(residues) or np.any(np.diff(offsets) < 0):
            raise InvalidParameter(
                f"offsets must rise from 0 to len(residues) = {len(residues)}"
            )
        # Views, so that making them read-only leaves the caller's arrays alone.
        residues = residues.view()
        offsets = offsets.view()
        residues.setflags(write=False)
        offsets.setflags(write=False)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "descriptions", descriptions)
        object.__setattr__(self, "residues", residues)
        object.__setattr__(self, "offsets", offsets)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int | np.integer[Any]) -> np.ndarray:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"SequenceSet indices must be integers, got {type(i).__name__}")
        n = len(self.names)
        index = int(i) + n if i < 0 else int(i)
        if not 0 <= index < n:
            raise IndexError(f"record {i} is out of range for a set of {n} sequences")
        return self.residues[self.offsets[index] : self.offsets[index + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self.names)):
            yield self.residues[self.offsets[i] : self.offsets[i + 1]]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SequenceSet):
            return NotImplemented
        return (
            self.names == other.names
            and self.descriptions == other.descriptions
            and np.array_equal(self.offsets, other.offsets)
            and np.array_equal(self.residues, other.residues)
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (SequenceSet, (self.names, self.descriptions, np.asarray(self.residues),
                              np.asarray(self.offsets), self.source))

    def __repr__(self) -> str:
        return (f"SequenceSet({len(self)} sequences, {len(self.residues)} residues, "
                f"source={self.source!r})")

    @property
    def lengths(self) -> np.ndarray:
        """The length of each record (``int64``)."""
        return np.diff(self.offsets)


@dataclass(frozen=True, eq=False)
class Record:
    """One encoded record of a FASTA or FASTQ file.

    Parameters
    ----------
    name : str
        The header up to its first whitespace.
    description : str
        The full header line without the leading ``>`` or ``@``.
    codes : numpy.ndarray
        The residues as ``uint8`` codes (read-only).
    line : int
        The line number (1-based) of the record's header.
    """

    name: str
    description: str
    codes: np.ndarray = field(repr=False)
    line: int

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return ((self.name, self.description, self.line)
                == (other.name, other.description, other.line)
                and np.array_equal(self.codes, other.codes))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Record(name={self.name!r}, length={len(self.codes)}, line={self.line})"


# ---------------------------------------------------------------------------------
# Public functions


def iter_records(path: PathLike, alphabet: Alphabet, *, wildcard: bool = False
                 ) -> Iterator[Record]:
    """Read a FASTA or FASTQ file (plain or gzip) one record at a time.

    Only the current record is held in memory. The path and ``wildcard`` are
    checked at once; errors in the file's content are raised while iterating.

    Parameters
    ----------
    path : str or os.PathLike
        The file. gzip is detected from its first bytes, FASTA or FASTQ from its
        first non-blank character.
    alphabet : Alphabet
        The alphabet to encode into (``Scoring.alphabet``).
    wildcard : bool
        Map letters outside the alphabet to its wildcard (``X``, ``N``) instead
        of raising. Characters that are not letters are an error regardless.

    Yields
    ------
    Record
        Name, description, ``uint8`` codes and header line of each record.

    Raises
    ------
    InputNotFound
        The path does not exist, is a directory or cannot be read.
    InvalidInput
        The file is empty, not FASTA/FASTQ, malformed or corrupt.
    InvalidSequence
        A record has no residues, a residue outside the alphabet or a gap.

    Examples
    --------
    >>> import os, tempfile
    >>> from swath.scoring import Alphabet
    >>> path = os.path.join(tempfile.mkdtemp(), "reads.fastq")
    >>> _ = open(path, "w").write("@r1 first\\nACGT\\n+\\nIIII\\n@r2\\nggn\\n+\\nIII\\n")
    >>> [(r.name, r.codes.tolist(), r.line) for r in iter_records(path, Alphabet("ACGTN", "N"))]
    [('r1', [0, 1, 2, 3], 1), ('r2', [2, 2, 4], 5)]
    """
    display = _display(path)
    encoder = _Translator.get(alphabet, wildcard)
    with _open(path, display):
        pass
    return _iter_records(path, display, encoder)


def _iter_records(path: PathLike, display: str, encoder: _Translator) -> Iterator[Record]:
    for name, description, line, parts in _records(path, display, encoder):
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        yield Record(name, description, np.frombuffer(data, dtype=np.uint8), line)


def read_sequences(path: PathLike, alphabet: Alphabet, *, wildcard: bool = False,
                   limit: int | None = None) -> SequenceSet:
    """Read all records of a FASTA or FASTQ file (plain or gzip) into a SequenceSet.

    The file is streamed: memory holds the output arrays plus about one record.

    Parameters
    ----------
    path : str or os.PathLike
        The file. gzip is detected from its first bytes, FASTA or FASTQ from its
        first non-blank character.
    alphabet : Alphabet
        The alphabet to encode into (``Scoring.alphabet``).
    wildcard : bool
        Map letters outside the alphabet to its wildcard (``X``, ``N``) instead
        of raising. Characters that are not letters are an error regardless.
    limit : int or None
        Stop after this many records (``swath align`` reads only the first);
        None reads them all. The rest of the file is not read or checked.

    Returns
    -------
    SequenceSet
        The records, with ``source`` set to the path.

    Raises
    ------
    InputNotFound, InvalidInput, InvalidSequence
        As :func:`iter_records`.
    InvalidParameter
        ``limit`` is not a positive integer, or ``wildcard`` is set and the
        alphabet has no wildcard.

    Examples
    --------
    >>> import os, tempfile
    >>> from swath.scoring import Alphabet
    >>> path = os.path.join(tempfile.mkdtemp(), "q.fasta")
    >>> _ = open(path, "w").write(">q1 first query\\nMKV\\nla*\\n>q2\\nWW\\n")
    >>> protein = Alphabet("ARNDCQEGHILKMFPSTWYVBZX*", "X")
    >>> seqs = read_sequences(path, protein)
    >>> seqs.names, seqs.descriptions[0], seqs.lengths.tolist()
    (('q1', 'q2'), 'q1 first query', [6, 2])
    >>> protein.decode(seqs[0])
    'MKVLA*'
    >>> len(read_sequences(path, protein, limit=1))
    1
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer))
                              or limit < 1):
        raise InvalidParameter(f"limit must be a positive integer or None, got {limit!r}")
    display = _display(path)
    encoder = _Translator.get(alphabet, wildcard)
    names: list[str] = []
    descriptions: list[str] = []
    offsets = [0]
    out = bytearray()  # grows geometrically; the residues array shares its memory
    with closing(_records(path, display, encoder)) as records:
        for name, description, _line, parts in records:
            for part in parts:
                out += part
            names.append(name)
            descriptions.append(description)
            offsets.append(len(out))
            if limit is not None and len(names) >= limit:
                break
    logger.debug("read %d sequences, %d residues from %s", len(names), len(out), display)
    return SequenceSet(tuple(names), tuple(descriptions), np.frombuffer(out, dtype=np.uint8),
                       np.array(offsets, dtype=np.int64), display)


def duplicate_name(names: Sequence[str]) -> tuple[str, int, int] | None:
    """The first name given twice, with the (0-based) records of both, or None."""
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            return name, first[name], i
        first[name] = i
    return None


def unique_names(names: Sequence[str], source: str | None, *, rename: bool = False,
                 what: str = "sequence") -> tuple[str, ...]:
    """``names`` if they are unique; with ``rename``, the second, third, ... record of a
    name as ``NAME_2``, ``NAME_3``, ... (skipping names already taken).

    Raises
    ------
    InvalidInput
        A name is given twice and ``rename`` is false (the message names both records
        and ``source``).

    Examples
    --------
    >>> unique_names(["a", "a", "a_2"], "s.fa", rename=True)
    ('a', 'a_3', 'a_2')
    """
    found = duplicate_name(names)
    if found is None:
        return tuple(names)
    if not rename:
        name, first, second = found
        raise InvalidInput(f"{source or 'the input'}: {what} name {name!r} is given twice "
                           f"(records {first + 1} and {second + 1}): names must be unique (swath "
                           "makedb and allpairs rename them with --rename-duplicates)")
    taken, seen, out = set(names), dict[str, int](), []
    for name in names:
        seen[name] = count = seen.get(name, 0) + 1
        if count > 1:
            while f"{name}_{count}" in taken:
                count += 1
            seen[name] = count
            taken.add(name := f"{name}_{count}")
        out.append(name)
    return tuple(out)


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
    encoder = _Translator.get(alphabet, wildcard)
    if isinstance(seq, np.ndarray):
        return _check_codes(seq, alphabet, name)
    return np.frombuffer(bytearray(_encode_one(seq, encoder, name)), dtype=np.uint8)


def sequence_set(seqs: Iterable[SequenceLike], alphabet: Alphabet, *,
                 wildcard: bool = False, names: Sequence[str] | None = None) -> SequenceSet:
    """Build a SequenceSet from in-memory sequences.

    Parameters
    ----------
    seqs : sequence of str, bytes or numpy.ndarray
        The sequences, as :func:`encode_sequence` accepts them.
    alphabet : Alphabet
        The alphabet to encode into (``Scoring.alphabet``).
    wildcard : bool
        Map letters outside the alphabet to its wildcard instead of raising.
    names : sequence of str or None
        One name per sequence (also used as its description); by default
        ``seq0``, ``seq1``, ... Error messages call sequence ``i`` by its name, or
        ``seqs[i]`` when no names are given.

    Returns
    -------
    SequenceSet
        The encoded sequences, with ``source`` None.

    Examples
    --------
    >>> from swath.scoring import Alphabet
    >>> s = sequence_set(["ACGT", b"gg"], Alphabet("ACGTN", "N"))
    >>> s.names, s.residues.tolist(), s.offsets.tolist()
    (('seq0', 'seq1'), [0, 1, 2, 3, 2, 2], [0, 4, 6])
    """
    if isinstance(seqs, (str, bytes, bytearray)):
        raise InvalidParameter(
            "seqs must be a list of sequences, got a single sequence; wrap it in a list"
        )
    encoder = _Translator.get(alphabet, wildcard)
    seqs = list(seqs)
    if names is None:
        labels = [f"seqs[{i}]" for i in range(len(seqs))]
        names = [f"seq{i}" for i in range(len(seqs))]
    else:
        names = [str(n) for n in names]
        labels = names
        if len(names) != len(seqs):
            raise InvalidParameter(f"{len(names)} names given for {len(seqs)} sequences")
    out = bytearray()
    offsets = [0]
    for seq, label in zip(seqs, labels, strict=True):
        if isinstance(seq, np.ndarray):
            out += np.ascontiguousarray(_check_codes(seq, alphabet, label)).data
        else:
            out += _encode_one(seq, encoder, label)
        offsets.append(len(out))
    return SequenceSet(tuple(names), tuple(names), np.frombuffer(out, dtype=np.uint8),
                       np.array(offsets, dtype=np.int64), None)


# ---------------------------------------------------------------------------------
# Encoding


class _Translator:
    """Byte tables of one alphabet: codes (255 where not a residue) and messages."""

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

    @staticmethod
    def get(alphabet: Alphabet, wildcard: bool) -> _Translator:
        if not isinstance(alphabet, Alphabet):
            raise InvalidParameter(
                f"alphabet must be a swath Alphabet (Scoring.alphabet), got "
                f"{type(alphabet).__name__}"
            )
        return _translator(alphabet.letters, alphabet.wildcard, bool(wildcard))

    def first_bad(self, raw: bytes) -> int:
        """The index of the first byte of ``raw`` that is neither residue nor whitespace."""
        return int(np.argmax(self.bad[np.frombuffer(raw, dtype=np.uint8)]))

    def explain(self, byte: int, hint: str, other: type[SwathError]
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


def take_concatenated(residues: np.ndarray, offsets: np.ndarray, index: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Sequences ``index`` (in that order, repeats allowed) of a concatenated set, as
    residues and offsets of their own.

    Examples
    --------
    >>> res, off = take_concatenated(np.arange(6), np.array([0, 2, 3, 6]), np.array([2, 0, 2]))
    >>> res.tolist(), off.tolist()
    ([3, 4, 5, 0, 1, 3, 4, 5], [0, 3, 5, 8])
    """
    starts, ends = offsets[index], offsets[index + 1]
    out_offsets = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=out_offsets[1:])
    if not len(index):
        return residues[:0].copy(), out_offsets
    # slices joined: 40x faster than one fancy index (an int64 per residue) for amplicons
    return np.concatenate([residues[start:end] for start, end in
                           zip(starts.tolist(), ends.tolist(), strict=True)]), out_offsets


def slice_concatenated(residues: np.ndarray, offsets: np.ndarray, first: int, last: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Sequences ``first:last`` of a concatenated set (residues, offsets): their residues
    (a view) and their offsets from 0."""
    return residues[offsets[first]:offsets[last]], offsets[first:last + 1] - offsets[first]


@lru_cache(maxsize=32)
def _translator(letters: str, wildcard_letter: str | None, wildcard: bool) -> _Translator:
    return _Translator(Alphabet(letters, wildcard_letter), wildcard)


def _describe(alphabet: Alphabet) -> str:
    letters = alphabet.letters
    if letters == "ACGTN":
        return "DNA alphabet"
    if "W" in letters and len(letters) > 20:
        return "protein alphabet"
    return f"alphabet {letters}"


def _encode_one(seq: SequenceLike, encoder: _Translator, name: str) -> bytes:
    """Code bytes of a str or bytes sequence."""
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
    coded = raw.translate(encoder.table)
    if _BAD in coded:
        # Whitespace is not skipped here: any byte that did not encode is the culprit.
        pos = coded.index(_BAD)
        cls, message = encoder.explain(raw[pos], "wildcard=True", InvalidSequence)
        raise cls(f"{name} position {pos + 1}: {message}")
    return coded


def _check_codes(codes: np.ndarray, alphabet: Alphabet, name: str) -> np.ndarray:
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


# ---------------------------------------------------------------------------------
# Files


def _display(path: PathLike) -> str:
    try:
        return os.fsdecode(path)
    except TypeError:
        raise InvalidParameter(
            f"path must be a str or os.PathLike, got {type(path).__name__}"
        ) from None


@contextmanager
def _open(path: PathLike, display: str) -> Iterator[IO[bytes]]:
    """Open ``path`` for binary reading, through gzip when its first bytes say so."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 (closed by the with below)
    except FileNotFoundError:
        raise InputNotFound(f"{display}: no such file") from None
    except IsADirectoryError:
        raise InputNotFound(f"{display}: is a directory, expected a FASTA or FASTQ file"
                            ) from None
    except PermissionError:
        raise InputNotFound(f"{display}: cannot be read (permission denied)") from None
    except OSError as exc:
        raise InputNotFound(f"{display}: cannot be opened ({exc.strerror or exc})") from None
    with raw:
        if raw.peek(2)[:2] == _GZIP_MAGIC:
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            yield raw


def _records(path: PathLike, display: str, encoder: _Translator
             ) -> Generator[tuple[str, str, int, list[bytes]], None, None]:
    """(name, description, header line, code parts) of each record in the file."""

    def encode(raw: bytes, line: int) -> bytes:
        coded = raw.translate(encoder.table, _WHITESPACE)
        if _BAD in coded:
            pos = encoder.first_bad(raw)
            cls, message = encoder.explain(raw[pos], "--wildcard", InvalidInput)
            where = line + raw.count(b"\n", 0, pos)
            raise cls(f"{display} line {where}: {message}")
        return coded

    with _open(path, display) as stream:
        try:
            first, buf, line = _sniff(stream, display)
            if first == ord(">"):
                parser = _fasta(stream, buf, line, encode)
            else:
                parser = _fastq(stream, buf, line, encode, display)
            marker = chr(first)
            for header, line, parts in parser:
                name, description = _header(header, marker, display, line)
                if not any(parts):
                    raise InvalidSequence(f"{display} line {line}: record {name!r} has no residues")
                yield name, description, line, parts
        except (OSError, EOFError, zlib.error) as exc:
            raise InvalidInput(f"{display}: cannot be read, corrupt or truncated ({exc})"
                               ) from None


def _sniff(stream: IO[bytes], display: str) -> tuple[int, bytes, int]:
    """Skip leading blank lines: the first character, the text from it, its line."""
    buf = stream.read(_BLOCK)
    if buf.startswith(_UTF8_BOM):
        buf = buf[len(_UTF8_BOM):]
    line = 1
    while True:
        if not buf:
            raise InvalidInput(f"{display}: empty file, expected FASTA or FASTQ")
        text = buf.lstrip()
        line += buf.count(b"\n", 0, len(buf) - len(text))
        if text:
            break
        buf = stream.read(_BLOCK)
    if text[0] not in b">@":
        found = repr(text[:1])[1:]
        raise InvalidInput(
            f"{display} line {line}: not FASTA or FASTQ (expected '>' or '@', found {found})"
        )
    return text[0], text, line


def _header(header: bytes, marker: str, display: str, line: int) -> tuple[str, str]:
    try:
        description = header.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise InvalidInput(f"{display} line {line}: header is not valid UTF-8 text") from None
    if not description:
        raise InvalidInput(f"{display} line {line}: record has an empty name "
                           f"(nothing after {marker!r})")
    words = description.split(maxsplit=1)
    # One string object serves as both when the header has no description.
    return (description if len(words) == 1 else words[0]), description


def _fasta(stream: IO[bytes], buf: bytes, line: int, encode: _Encoder) -> Iterator[_RawRecord]:
    """FASTA records from ``buf`` (which starts with '>' on ``line``) and the stream.

    A record's sequence runs to the next newline followed by '>'. Sequence text is
    encoded block by block, so a long record is never held as text.
    """
    read = stream.read
    eof = False
    pos = 0  # buf[pos] is the '>' of the next header
    while True:
        newline = buf.find(b"\n", pos)
        while newline < 0 and not eof:
            more = read(_BLOCK)
            if more:
                buf = buf[pos:] + more
                pos = 0
                newline = buf.find(b"\n")
            else:
                eof = True
        if newline < 0:  # a header on the last line, without residues
            yield buf[pos + 1:], line, []
            return
        header, header_line = buf[pos + 1:newline], line
        line += 1
        parts: list[bytes] = []
        start, search = newline + 1, newline
        while True:
            end = buf.find(b"\n>", search)
            if end >= 0:
                raw = buf[start:end + 1]
                pos = end + 1
            elif eof:
                raw = buf[start:]
            else:
                more = read(_BLOCK)
                if not more:
                    eof = True
                    continue
                # Encode all but the last byte: it may be the newline before a '>'.
                raw = buf[start:-1]
                tail_consumed = start >= len(buf)  # the last byte is the header's newline
                buf = buf[-1:] + more
                start, search = (1 if tail_consumed else 0), 0
            if raw:
                parts.append(encode(raw, line))
                line += raw.count(b"\n")
            if end >= 0 or eof:
                break
        yield header, header_line, parts
        if end < 0:
            return


def _fastq(stream: IO[bytes], buf: bytes, line: int, encode: _Encoder, display: str
           ) -> Iterator[_RawRecord]:
    """Four-line FASTQ records from ``buf`` (starting with '@' on ``line``) and the stream."""
    lines = enumerate(_lines(buf, stream), start=line)
    for number, text in lines:
        header = text.rstrip()
        if not header:
            continue
        if header[:1] != b"@":
            raise InvalidInput(
                f"{display} line {number}: expected a FASTQ header starting with '@', "
                f"found {repr(header[:1])[1:]}"
            )
        label = _label(header[1:])
        sequence = next(lines, None)
        if sequence is None:
            raise InvalidInput(f"{display} line {number}: FASTQ record {label!r} is truncated "
                               "(no sequence line)")
        plus = next(lines, None)
        if plus is None:
            raise InvalidInput(f"{display} line {sequence[0]}: FASTQ record {label!r} is "
                               "truncated (no '+' line)")
        if not plus[1].startswith(b"+"):
            found = repr(plus[1][:1])[1:] if plus[1].strip() else "a blank line"
            raise InvalidInput(f"{display} line {plus[0]}: expected the '+' line of FASTQ "
                               f"record {label!r}, found {found}")
        quality = next(lines, None)
        if quality is None:
            raise InvalidInput(f"{display} line {plus[0]}: FASTQ record {label!r} is "
                               "truncated (no quality line)")
        residues, scores = sequence[1].rstrip(), quality[1].rstrip()
        if len(residues) != len(scores):
            raise InvalidInput(
                f"{display} line {quality[0]}: FASTQ record {label!r} has {len(scores)} "
                f"quality characters for {len(residues)} residues"
            )
        yield header[1:], number, [encode(residues, sequence[0])] if residues else []


def _lines(buf: bytes, stream: IO[bytes]) -> Iterator[bytes]:
    """The lines of ``buf`` followed by those of the stream."""
    start = 0
    while (newline := buf.find(b"\n", start)) >= 0:
        yield buf[start:newline + 1]
        start = newline + 1
    if start < len(buf):
        yield buf[start:] + stream.readline()
    yield from stream


def _label(header: bytes) -> str:
    """A record's name for an error message (before its header is checked)."""
    words = header.split(maxsplit=1)
    return words[0].decode("utf-8", "replace") if words else ""
