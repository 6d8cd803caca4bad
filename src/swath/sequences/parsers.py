"""FASTA and FASTQ text, plain or gzip, parsed into records of encoded residues (and a
FASTQ record's base qualities, its quality line as given).

Files are read in blocks of about a megabyte; each stretch of sequence text is
encoded as it arrives (:meth:`~swath.sequences.encoding.Translator.encode_text`), so
parsing a file needs about its largest record plus the output. gzip is recognised by its
magic bytes, FASTA or FASTQ by the first non-blank character (``>`` or ``@``); file
names do not matter.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import IO, Any

from swath.errors import InputNotFound, InvalidInput, InvalidSequence
from swath.sequences.encoding import Translator

__all__ = ["READ_ERRORS", "STDIN", "ParsedRecord", "PathLike", "open_file", "records", "sniff",
           "stream_records", "unreadable"]

PathLike = str | os.PathLike[str]

_BLOCK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"

# The encoder turns raw sequence text (starting on the given line) into code bytes.
_Encoder = Callable[[bytes, int], bytes]
# A parsed record before its header is decoded: header bytes, header line, code parts,
# qualities (FASTQ's, one a residue; None for FASTA).
_RawRecord = tuple[bytes, int, list[bytes], bytes | None]
# what a file's records are given as: name, description, header line, code parts, qualities
ParsedRecord = tuple[str, str, int, list[bytes], bytes | None]
# the bytes encode_text drops from sequence text
_DROPPED = frozenset(b" \t\r\n\x0b\x0c")


#: the path that names standard input (read once: what reads a file twice refuses it)
STDIN = "-"
#: what reading a corrupt or truncated file (gzip) raises
READ_ERRORS = (OSError, EOFError, zlib.error)


@contextmanager
def open_file(path: PathLike, display: str) -> Iterator[IO[bytes]]:
    """Open ``path`` (``-``: standard input, left open) for binary reading, through gzip
    when its first bytes say so."""
    if os.fspath(path) == STDIN:
        stream: Any = sys.stdin.buffer
        raw = stream if hasattr(stream, "peek") else io.BufferedReader(stream)  # a test's
        yield from _unzipped(raw)
        return
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
        yield from _unzipped(raw)


def _unzipped(raw: Any) -> Iterator[IO[bytes]]:
    if raw.peek(2)[:2] == _GZIP_MAGIC:
        with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            yield unzipped  # type: ignore[misc]
    else:
        yield raw


def unreadable(display: str, exc: BaseException) -> InvalidInput:
    """The error of a file that cannot be read (one of ``READ_ERRORS``)."""
    return InvalidInput(f"{display}: cannot be read, corrupt or truncated ({exc})")


def records(path: PathLike, display: str, encoder: Translator
            ) -> Generator[ParsedRecord, None, None]:
    """(name, description, header line, code parts, qualities) of each record in the file
    (``display``: what messages call it); qualities are a FASTQ record's quality
    characters, one a residue (None for FASTA)."""
    with open_file(path, display) as stream:
        yield from stream_records(stream, display, encoder)


def stream_records(stream: IO[bytes], display: str, encoder: Translator, line: int = 1
                   ) -> Generator[ParsedRecord, None, None]:
    """:func:`records` of an open binary stream whose first byte is on ``line`` of
    ``display`` (a piece of a file starts further on: its messages name the file's
    lines)."""

    def encode(raw: bytes, line: int) -> bytes:
        return encoder.encode_text(raw, display, line)

    try:
        first, buf, line = sniff(stream, display, line)
        if first == ord(">"):
            parser = _fasta(stream, buf, line, encode)
        else:
            parser = _fastq(stream, buf, line, encode, display)
        marker = chr(first)
        for header, line, parts, quality in parser:
            name, description = _header(header, marker, display, line)
            if not any(parts):
                raise InvalidSequence(f"{display} line {line}: record {name!r} has no residues")
            yield name, description, line, parts, quality
    except READ_ERRORS as exc:
        raise unreadable(display, exc) from None


def sniff(stream: IO[bytes], display: str, line: int = 1) -> tuple[int, bytes, int]:
    """Skip leading blank lines: the first character (``>`` or ``@``), the text from it,
    its line (the stream's first being ``line``).

    Raises
    ------
    InvalidInput
        The stream is empty or blank, or its first character is neither.
    """
    buf = stream.read(_BLOCK)
    if buf.startswith(_UTF8_BOM):
        buf = buf[len(_UTF8_BOM):]
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
    if not words[0].isprintable():
        raise InvalidInput(f"{display} line {line}: name {words[0]!r} holds a character that "
                           "does not print (a control character): names must be printable "
                           "text")
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
            yield buf[pos + 1:], line, [], None
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
        yield header, header_line, parts, None
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
        codes = encode(residues, sequence[0]) if residues else b""
        if len(codes) != len(scores):   # whitespace inside the sequence line: not residues
            scores = bytes(q for s, q in zip(residues, scores, strict=True) if s not in _DROPPED)
        yield header[1:], number, [codes] if codes else [], scores


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
