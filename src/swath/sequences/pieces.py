"""FASTA and FASTQ text cut into pieces of whole records, and a piece parsed.

# n: bytes of a piece, l: its lines, r: its records, h: bytes of its headers.

A job that takes a large file in (``swath pairs``) hands each piece to a task of its
own, so that the pieces are parsed side by side. A piece holds about ``PIECE_BYTES``
bytes: its end is the first record start at or after the next multiple of that size
(:func:`plan` for a plain file, where a task reads its piece's byte range itself;
:func:`cut` for a stream, gzip, read once). The same file and size give the same
pieces, so that a job resumed redoes only the pieces it had not finished.

:func:`parse` reads a piece in a few numpy passes over its bytes (newlines, a lookup
table that encodes every byte, a mask of what is kept), which run without the GIL:
threads of one process parse pieces in parallel. What those passes do not read as
swath's own parser would (blank lines between FASTQ records, a header that is not
ASCII or starts with a space, a byte that is no residue, an empty record) is read
again by that parser (:func:`~swath.sequences.parsers.stream_records`), which gives
the same records or the same error, naming the file's line.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import IO

import numpy as np

from swath.sequences.encoding import Translator
from swath.sequences.parsers import (
    READ_ERRORS,
    PathLike,
    open_file,
    sniff,
    stream_records,
    unreadable,
)

__all__ = ["PIECE_BYTES", "Parsed", "cut", "decode_names", "file_format", "line_of", "parse",
           "plan", "read_range"]

#: bytes of a piece, about (a piece ends at the first record start past a multiple of it)
PIECE_BYTES = 1 << 23

_WINDOW = 1 << 16       # bytes read at a time looking for a record start
_SKIP, _BAD = 254, 255  # codes of a byte dropped (whitespace, headers) and of one refused
_NEWLINE, _CR = ord("\n"), ord("\r")
# the bytes str.split splits on, of ASCII: where a name ends
_SPACES = np.zeros(256, dtype=bool)
_SPACES[list(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")] = True


@dataclass(frozen=True, eq=False)
class Parsed:
    """The records of a piece: their names' UTF-8 bytes one after another (name ``i`` is
    ``names[name_offsets[i]:name_offsets[i + 1]]``: no string object is made for a name
    while a piece is taken in), their ``uint8`` codes (record ``i`` is
    ``residues[offsets[i]:offsets[i + 1]]``) and, where asked for and the file is FASTQ,
    their base qualities as the file gives them (``qualities``, laid out as ``residues``;
    else None)."""

    names: np.ndarray = field(repr=False)
    name_offsets: np.ndarray = field(repr=False)
    residues: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    qualities: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @classmethod
    def of(cls, names: Sequence[str], residues: np.ndarray, offsets: np.ndarray,
           qualities: np.ndarray | None = None) -> Parsed:
        """Records whose names are strings."""
        text = [name.encode() for name in names]
        ends = np.cumsum([0, *map(len, text)], dtype=np.int64)
        return cls(np.frombuffer(b"".join(text), dtype=np.uint8), ends, residues, offsets,
                   qualities)


def decode_names(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """Names given as UTF-8 bytes (``text``) and where each starts and ends in them.

    Examples
    --------
    >>> decode_names(np.frombuffer("abé".encode(), np.uint8), np.array([0, 2]), np.array([2, 4]))
    ['ab', 'é']
    """
    raw = text.tobytes()
    pairs = zip(starts.tolist(), ends.tolist(), strict=True)
    if raw.isascii():       # a character a byte: one decode
        whole = raw.decode("ascii")
        return [whole[start:end] for start, end in pairs]
    return [raw[start:end].decode() for start, end in pairs]


def file_format(path: PathLike, display: str) -> tuple[str, bool]:
    """``("fasta" | "fastq", gzipped)`` of a file, by its first non-blank character and
    its first bytes.

    Raises
    ------
    InputNotFound, InvalidInput
        The path cannot be read; the file is empty, blank, or neither format.
    """
    with open_file(path, display) as stream:
        gzipped = isinstance(stream, gzip.GzipFile)
        try:
            first, _, _ = sniff(stream, display)
        except READ_ERRORS as exc:
            raise unreadable(display, exc) from None
    return ("fasta" if first == ord(">") else "fastq"), gzipped


def plan(path: PathLike, fmt: str, piece_bytes: int = PIECE_BYTES) -> np.ndarray:
    """The pieces of a plain file: their starts and the file's size (int64, one more
    than the pieces), each start the first record start at or after a multiple of
    ``piece_bytes`` past the previous one. Reads a few bytes around each start.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "q.fa")
    >>> _ = open(path, "w").write(">a\\nACGT\\n>b\\nGG\\n>c\\nTTTT\\n")
    >>> plan(path, "fasta", 10).tolist()
    [0, 14, 22]
    """
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as raw:
        while (target := (bounds[-1] // piece_bytes + 1) * piece_bytes) < size:
            start = _start_at(raw, target, fmt)
            if start >= size:
                break
            bounds.append(start)
    return np.array([*bounds, size], dtype=np.int64)


def _start_at(raw: IO[bytes], at: int, fmt: str) -> int:
    """The first record start at or after byte ``at`` (a byte after a newline), or the
    file's size."""
    raw.seek(at - 1)
    buf, searched = bytearray(), 0
    while True:
        more = raw.read(_WINDOW)
        buf += more
        found, searched = _record_start(buf, fmt, searched)
        if found is not None:
            return at - 1 + found
        if not more:
            return at - 1 + len(buf)


def _record_start(buf: bytes | bytearray, fmt: str, at: int = 0) -> tuple[int | None, int]:
    """Where in ``buf`` the first record starting after a newline at or after ``at``
    starts, or None if ``buf`` holds none or cannot tell yet (the lines that would tell
    are not all in it: more may follow, or the text ends there); and where to search
    again once more follows (a record longer than many reads is searched once). A FASTQ
    record start is an ``@`` line two lines before a ``+`` line (a quality line may start
    with ``@`` too)."""
    marker = b"\n>" if fmt == "fasta" else b"\n@"
    while (newline := buf.find(marker, at)) >= 0:
        if fmt == "fasta":
            return newline + 1, newline
        sequence = buf.find(b"\n", newline + 1)
        plus = buf.find(b"\n", sequence + 1) if sequence >= 0 else -1
        if plus < 0 or plus + 1 >= len(buf):
            return None, newline    # undecided, or (at the end) a last line starting none
        if buf[plus + 1] == ord("+"):
            return newline + 1, newline
        at = newline + 1
    return None, max(at, len(buf) - 1)


def cut(stream: IO[bytes], fmt: str, display: str, piece_bytes: int = PIECE_BYTES
        ) -> Iterator[tuple[int, bytes]]:
    """The pieces of a stream (a gzip file, read once), each with its start: the same
    cuts :func:`plan` makes in a plain file's bytes. Memory holds about one piece.

    Raises
    ------
    InvalidInput
        The stream cannot be read (corrupt or truncated gzip).
    """
    start, buf, searched = 0, bytearray(), 0
    eof = False
    while not eof:
        try:
            more = stream.read(piece_bytes)
        except READ_ERRORS as exc:
            raise unreadable(display, exc) from None
        eof = not more
        buf += more
        while (target := (start // piece_bytes + 1) * piece_bytes - start) <= len(buf):
            found, searched = _record_start(buf, fmt, max(target - 1, searched))
            if found is None:
                break
            yield start, bytes(buf[:found])
            start += found
            del buf[:found]
            searched = 0
    if buf or not start:
        yield start, bytes(buf)


def read_range(path: PathLike, start: int, end: int) -> bytes:
    """Bytes ``start:end`` of a file."""
    with open(path, "rb") as raw:
        raw.seek(start)
        return raw.read(end - start)


def line_of(path: PathLike, at: int) -> int:
    """The line (1-based) of byte ``at`` of a plain file (for messages: reads the file
    up to it)."""
    lines = 1
    with open(path, "rb") as raw:
        while at > 0 and (block := raw.read(min(at, 1 << 20))):
            lines += block.count(b"\n")
            at -= len(block)
    return lines


def parse(data: bytes, fmt: str, encoder: Translator, display: str,
          line: Callable[[], int], qualities: bool = False) -> Parsed:
    """The records of a piece (``data``, whole records of a ``fmt`` file), encoded (with
    their base qualities if ``qualities`` and the file is FASTQ).

    Parameters
    ----------
    data : bytes
        The piece.
    fmt : str
        ``"fasta"`` or ``"fastq"``: the file's format.
    encoder : Translator
        The alphabet's byte tables (:func:`~swath.sequences.encoding.translator`).
    display : str
        What messages call the file.
    line : callable
        The file's line of the piece's first byte, for messages (asked only where the
        piece is read by swath's parser).
    qualities : bool
        Keep a FASTQ record's quality characters (``Parsed.qualities``).

    Raises
    ------
    InvalidInput, InvalidSequence
        As :func:`~swath.sequences.read_sequences`, naming the file's line.

    Examples
    --------
    >>> from swath.scoring import Alphabet
    >>> from swath.sequences.encoding import translator
    >>> dna = translator(Alphabet("ACGTN", "N"), False)
    >>> got = parse(b">a x\\nAC\\ngt\\n>b\\nN\\n", "fasta", dna, "q.fa", lambda: 1)
    >>> got.names.tobytes(), got.name_offsets.tolist(), got.residues.tolist(), got.offsets.tolist()
    (b'ab', [0, 1, 2], [0, 1, 2, 3, 4], [0, 4, 5])
    >>> parse(b"@r\\nACG\\n+\\nI#I\\n", "fastq", dna, "q.fq", lambda: 1, True).qualities.tobytes()
    b'I#I'
    """
    kept = qualities and fmt == "fastq"
    if not data or data.isspace():   # none, or the blank lines before a first record
        return Parsed.of([], np.zeros(0, np.uint8), np.zeros(1, np.int64),
                         np.zeros(0, np.uint8) if kept else None)
    text = np.frombuffer(data, dtype=np.uint8)
    found = (_fasta(text, _table(encoder)) if fmt == "fasta"
             else _fastq(text, _table(encoder), kept))
    if found is not None:
        return found
    names, parts, scores = [], [], []
    for name, _description, _line, codes, quality in stream_records(
            io.BytesIO(data), display, encoder, line()):
        names.append(name)
        parts.append(b"".join(codes))
        scores.append(quality or b"")
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    return Parsed.of(names, np.frombuffer(b"".join(parts), dtype=np.uint8),
                     np.concatenate([[0], np.cumsum(lengths)]),
                     np.frombuffer(b"".join(scores), dtype=np.uint8) if kept else None)


@lru_cache(maxsize=16)
def _table(encoder: Translator) -> np.ndarray:
    """The alphabet's codes of every pair of bytes (a little-endian ``uint16``), as two
    ``uint8``: whitespace ``_SKIP``, any other byte that is no residue ``_BAD``. One
    lookup a pair halves the gathers of one a byte (measured: 14 ms an 8 MiB piece, not
    24)."""
    table = np.frombuffer(encoder.table, dtype=np.uint8).copy()
    table[list(b" \t\r\n\x0b\x0c")] = _SKIP
    pairs = np.arange(1 << 16)
    return (table[pairs & 0xFF] | table[pairs >> 8].astype("<u2") << 8).astype("<u2")


def _encoded(text: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The code of every byte of ``text`` (``table``: :func:`_table`'s)."""
    even = len(text) & ~1
    codes = np.empty(len(text), dtype=np.uint8)
    codes[:even] = table[text[:even].view("<u2")].view(np.uint8)
    if even < len(text):
        codes[-1] = table[text[-1]] & 0xFF
    return codes


def _lines(text: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each line starts and ends (its newline, or the end of the text), and its
    length without a carriage return at its end."""
    ends = np.flatnonzero(text == _NEWLINE)
    if text[-1] != _NEWLINE:
        ends = np.append(ends, len(text))
    starts = np.concatenate([[0], ends[:-1] + 1])
    return starts, ends, ends - starts - ((ends > starts) & (text[ends - 1] == _CR))


def _fasta(text: np.ndarray, table: np.ndarray) -> Parsed | None:
    """FASTA records read in numpy passes, or None where swath's parser must read them."""
    if text[0] != ord(">"):
        return None
    starts, ends, lengths = _lines(text)
    headers = np.flatnonzero(text[starts] == ord(">"))
    lengths[headers] = 0
    summed = np.concatenate([[0], np.cumsum(lengths)])
    residues = summed[np.append(headers[1:], len(starts))] - summed[headers + 1]
    heads, head_ends = starts[headers], ends[headers]
    codes = _encoded(text, table)
    codes[_spans(heads, np.minimum(head_ends + 1, len(text)))] = _SKIP
    return _records(text, codes, heads, head_ends, residues)


def _fastq(text: np.ndarray, table: np.ndarray, qualities: bool = False) -> Parsed | None:
    """Four-line FASTQ records (no blank lines) read in numpy passes, with their quality
    lines' characters if ``qualities``, or None where swath's parser must read them."""
    starts, ends, lengths = _lines(text)
    if len(ends) % 4 or np.any(starts >= len(text)):
        return None
    heads, seqs, pluses = starts[0::4], starts[1::4], starts[2::4]
    if np.any(text[heads] != ord("@")) or np.any(text[pluses] != ord("+")) or np.any(
            lengths[1::4] != lengths[3::4]):
        return None
    codes = np.where(_inside(len(text), seqs, ends[1::4]), _encoded(text, table), _SKIP)
    found = _records(text, codes, heads, ends[0::4], lengths[1::4])
    if found is None or not qualities:
        return found
    # no whitespace inside a sequence line (else _records gave None): a quality a residue
    scores = starts[3::4]
    return dataclasses.replace(found, qualities=text[_inside(len(text), scores,
                                                              scores + lengths[3::4])])


def _inside(size: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A mask of ``size`` bytes, true in the ranges ``starts[i]:ends[i]`` (ascending, apart;
    a byte a position, not an index an element: a piece's mask costs its size)."""
    inside = np.zeros(size + 1, dtype=np.int8)
    inside[starts] = 1
    inside[ends] -= 1       # a range may end where the next starts (an empty one)
    return np.cumsum(inside[:-1], dtype=np.int8).view(bool)


def _records(text: np.ndarray, codes: np.ndarray, heads: np.ndarray, head_ends: np.ndarray,
             lengths: np.ndarray) -> Parsed | None:
    """The records whose headers start at ``heads`` and end at ``head_ends``, of
    ``lengths`` residues (their lines' bytes but carriage returns), whose codes are
    ``codes`` but the ``_SKIP`` ones; None for a byte that is no residue, an empty
    record, whitespace inside a line, or a header swath's parser must read."""
    if codes.max() == _BAD or not lengths.all() or head_ends[-1] >= len(text):
        return None
    keep = codes != _SKIP
    if np.count_nonzero(keep) != lengths.sum():
        return None         # whitespace inside a line: the lines' lengths are not the records'
    names = _names(text, heads, head_ends)
    if names is None:
        return None
    return Parsed(*names, codes[keep], np.concatenate([[0], np.cumsum(lengths)]))


def _names(text: np.ndarray, heads: np.ndarray, head_ends: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray] | None:
    """Each header's name (up to its first whitespace), as :class:`Parsed` holds them; None
    where a header is not ASCII, holds a control character, or has no name right after
    its marker."""
    starts, lengths = heads + 1, head_ends - heads      # each header and its newline
    header = text[_spans(starts, starts + lengths)]
    if not len(header) or header.max() >= 0x7f or ((header < 0x20) & ~_SPACES[header]).any():
        return None
    at = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    space = _SPACES[header]
    if space[at].any():
        return None                                     # an empty name, or a space first
    ends = np.minimum.reduceat(np.where(space, np.arange(len(header)), len(header)), at)
    named = np.zeros(len(header), dtype=np.int8)        # 1 from a name's start to its end
    named[at], named[ends] = 1, -1                      # (a space: its header's newline, last)
    kept = np.cumsum(named, dtype=np.int8).view(bool)
    return header[kept], np.concatenate([[0], np.cumsum(ends - at)])


def _spans(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Every position of the ranges ``starts[i]:ends[i]``, one after another."""
    lengths = ends - starts
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return np.arange(len(shift)) + shift
