"""FASTA and FASTQ files read in batches of consecutive records, fast.

A batch is a :class:`SequenceSet` of about ``batch_residues`` residues: the unit in
which a job too large for memory takes in its input (``swath pairs`` writes each into
its store as it comes). Records are parsed by dnaio, a C parser (its records cost a
fraction of :mod:`~swath.sequences.parsers`' per-record Python work), and each batch
is encoded in one ``bytes.translate``.

dnaio is trusted only with what it reads well. Anything it rejects, and anything swath
would reject (a residue outside the alphabet, an empty record, a header that is not a
name), sends the batch, and the rest of the file, to swath's own parser: it reads the
same records the same way, and its error names the file and line as every swath
error does. Batches already handed out stay valid, as both parsers agree on them.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import closing
from typing import Any, BinaryIO, cast

import dnaio
import numpy as np

from swath.scoring import Alphabet
from swath.sequences.encoding import Translator, translator, warn_if_dna
from swath.sequences.parsers import PathLike, open_file, records
from swath.sequences.sets import SequenceSet

__all__ = ["BATCH_RESIDUES", "read_batches"]

logger = logging.getLogger(__name__)

#: residues of a batch, about: the memory a reader holds is a few times this
BATCH_RESIDUES = 1 << 24
_GROUP = 4096       # records taken from dnaio at a time
_SNIFF = 1 << 12    # bytes looked at for the format
# characters of a FASTA header where dnaio's id ends elsewhere than swath's name (NUL ends
# it; these whitespace characters do not, as str.split's do)
_ODD_HEADER = re.compile("[\x00\x0b\x0c\x1c-\x1f]")


class _Unsure(Exception):
    """A batch dnaio read that swath's own parser must read instead."""


def read_batches(path: PathLike, alphabet: Alphabet, *, wildcard: bool = False,
                 batch_residues: int = BATCH_RESIDUES) -> Iterator[SequenceSet]:
    """Read a FASTA or FASTQ file (plain or gzip) in batches of consecutive records.

    Memory holds about one batch (and the record being read). The path is checked at
    once; errors in the file's content are raised while iterating, as
    :func:`~swath.sequences.read_sequences` raises them.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip is detected from its first bytes, FASTA or FASTQ from its first
        non-blank character.
    alphabet : Alphabet
        The alphabet to encode into (``Scoring.alphabet``).
    wildcard : bool
        Map letters outside the alphabet to its wildcard instead of raising.
    batch_residues : int
        A batch ends at the first record that brings it to this many residues.

    Yields
    ------
    SequenceSet
        The next records, ``source`` set to the path.

    Raises
    ------
    InputNotFound, InvalidInput, InvalidSequence
        As :func:`~swath.sequences.iter_records`.

    Examples
    --------
    >>> import os, tempfile
    >>> from swath.scoring import Alphabet
    >>> path = os.path.join(tempfile.mkdtemp(), "q.fasta")
    >>> _ = open(path, "w").write(">a one\\nACGT\\n>b\\nGG\\nT\\n>c\\nA\\n")
    >>> [(s.names, s.lengths.tolist()) for s in read_batches(path, Alphabet("ACGTN", "N"),
    ...                                                      batch_residues=5)]
    [(('a', 'b'), [4, 3]), (('c',), [1])]
    """
    display = str(path)
    encoder = translator(alphabet, wildcard)
    with open_file(path, display):
        pass
    return _dna_checked(_batches(path, display, encoder, batch_residues), encoder, display)


def _dna_checked(batches: Iterator[SequenceSet], encoder: Translator, display: str
                 ) -> Iterator[SequenceSet]:
    """``batches``, the first looked at for DNA read as protein (:func:`warn_if_dna`)."""
    for k, batch in enumerate(batches):
        if k == 0:
            warn_if_dna(batch.residues, encoder.alphabet, display)
        yield batch


def _batches(path: PathLike, display: str, encoder: Translator, batch_residues: int
             ) -> Iterator[SequenceSet]:
    given = 0
    try:
        with open_file(path, display) as stream, \
                dnaio.open(cast(BinaryIO, stream), mode="r",
                           fileformat=_format(stream)) as reader:
            for batch in _dnaio_batches(reader, display, encoder, batch_residues):
                given += len(batch)
                yield batch
        if given:
            return
    except (_Unsure, dnaio.exceptions.FileFormatError, dnaio.exceptions.UnknownFileFormat,
            OSError, EOFError, ValueError) as exc:
        logger.debug("%s: from record %d on, swath's parser reads it (%s)", display,
                     given + 1, exc)
    yield from _parsed_batches(path, display, encoder, batch_residues, skip=given)


def _format(stream: object) -> str | None:
    """``"fasta"`` or ``"fastq"`` by the first non-blank character in sight, as swath's
    parser decides (dnaio goes by the file's name first: a FASTQ file named .fa would
    all go to swath's parser); None where none is in sight."""
    head = stream.peek(_SNIFF).lstrip()[:1]  # type: ignore[attr-defined]
    return {b">": "fasta", b"@": "fastq"}.get(head)


def _dnaio_batches(reader: Iterable[Any], display: str, encoder: Translator,
                   batch_residues: int) -> Iterator[SequenceSet]:
    """Batches of dnaio's records, each ending at the record that brings it to
    ``batch_residues``; records are taken from dnaio ``_GROUP`` at a time."""
    records = iter(reader)
    batch: list[Any] = []
    size = 0
    while group := list(itertools.islice(records, _GROUP)):
        ends = size + np.cumsum([len(r.sequence) for r in group])
        while len(group):
            cut = int(np.searchsorted(ends, batch_residues)) + 1   # records up to the end
            if cut > len(group):
                break
            yield _encoded(batch + group[:cut], display, encoder)
            batch, group, ends = [], group[cut:], ends[cut:] - ends[cut - 1]
        batch += group
        size = int(ends[-1]) if len(ends) else 0
    if batch:
        yield _encoded(batch, display, encoder)


def _encoded(batch: list[Any], display: str, encoder: Translator) -> SequenceSet:
    """One batch of dnaio's records encoded, or :class:`_Unsure` where swath's parser
    would read them otherwise or reject them."""
    texts = [r.sequence for r in batch]
    names = [r.id for r in batch]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if not lengths.all() or not all(names):
        raise _Unsure("an empty record or name")
    joined = "".join(texts)
    if not joined.isascii():
        raise _Unsure("a character that is not ASCII")
    coded = joined.encode("ascii").translate(encoder.table)
    if 255 in coded:
        raise _Unsure("a byte that is not a residue")
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    headers = [r.name for r in batch]
    text = "".join(headers)
    if _ODD_HEADER.search(text):
        raise _Unsure("a header with a NUL or a control character")
    if not text.isprintable():     # a tab or a carriage return in a header
        headers = [h.strip() for h in headers]
    return SequenceSet(tuple(names), tuple(headers), np.frombuffer(coded, dtype=np.uint8),
                       offsets, display)


def _parsed_batches(path: PathLike, display: str, encoder: Translator, batch_residues: int,
                    *, skip: int) -> Iterator[SequenceSet]:
    """Batches by swath's own parser, from record ``skip`` on."""
    names: list[str] = []
    descriptions: list[str] = []
    offsets = [0]
    out = bytearray()
    with closing(records(path, display, encoder)) as parsed:
        for name, description, _line, parts in itertools.islice(parsed, skip, None):
            for part in parts:
                out += part
            names.append(name)
            descriptions.append(description)
            offsets.append(len(out))
            if len(out) >= batch_residues:
                yield SequenceSet(tuple(names), tuple(descriptions),
                                  np.frombuffer(bytes(out), dtype=np.uint8),
                                  np.array(offsets, dtype=np.int64), display)
                names, descriptions, offsets, out = [], [], [0], bytearray()
    if names:
        yield SequenceSet(tuple(names), tuple(descriptions),
                          np.frombuffer(bytes(out), dtype=np.uint8),
                          np.array(offsets, dtype=np.int64), display)
