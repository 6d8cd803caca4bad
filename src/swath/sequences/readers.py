"""FASTA and FASTQ files, plain or gzip, read into records and sets of ``uint8`` codes.

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

import logging
import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field

import numpy as np

from swath.errors import InvalidParameter
from swath.scoring import Alphabet
from swath.sequences.encoding import Translator, translator, warn_if_dna
from swath.sequences.parsers import STDIN, PathLike, open_file, records
from swath.sequences.sets import SequenceSet

__all__ = ["Record", "iter_records", "read_sequences"]

logger = logging.getLogger(__name__)


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
    encoder = translator(alphabet, wildcard)
    with open_file(path, display):
        pass
    return _iter_records(path, display, encoder)



def _iter_records(path: PathLike, display: str, encoder: Translator) -> Iterator[Record]:
    for name, description, line, parts, _quality in records(path, display, encoder):
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
        The records, with ``source`` set to the path, and a FASTQ file's base qualities
        (``qualities``; None for FASTA).

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
    >>> _ = open(path, "w").write("@r1\\nACGT\\n+\\nII#I\\n")
    >>> read_sequences(path, Alphabet("ACGTN", "N")).quality(0)
    'II#I'
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer))
                              or limit < 1):
        raise InvalidParameter(f"limit must be a positive integer or None, got {limit!r}")
    display = _display(path)
    encoder = translator(alphabet, wildcard)
    names: list[str] = []
    descriptions: list[str] = []
    offsets = [0]
    out = bytearray()  # grows geometrically; the residues array shares its memory
    qualities: bytearray | None = None      # FASTQ's, one a residue
    with closing(records(path, display, encoder)) as parsed:
        for name, description, _line, parts, quality in parsed:
            for part in parts:
                out += part
            if quality is not None:
                qualities = bytearray() if qualities is None else qualities
                qualities += quality
            names.append(name)
            descriptions.append(description)
            offsets.append(len(out))
            if limit is not None and len(names) >= limit:
                break
    logger.debug("read %d sequences, %d residues from %s", len(names), len(out), display)
    residues = np.frombuffer(out, dtype=np.uint8)
    warn_if_dna(residues, alphabet, display)
    return SequenceSet(tuple(names), tuple(descriptions), residues,
                       np.array(offsets, dtype=np.int64), display,
                       None if qualities is None else np.frombuffer(qualities, dtype=np.uint8))


def _display(path: PathLike) -> str:
    """What messages call ``path``: itself, or ``stdin`` for ``-``."""
    try:
        shown = os.fsdecode(path)
    except TypeError:
        raise InvalidParameter(
            f"path must be a str or os.PathLike, got {type(path).__name__}"
        ) from None
    return "stdin" if shown == STDIN else shown
