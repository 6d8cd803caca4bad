"""Sets of encoded sequences: :class:`SequenceSet`, built from memory by
:func:`sequence_set` (files: :func:`~swath.sequences.read_sequences`), and the names of
their records (:func:`unique_names`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from swath.errors import InvalidInput, InvalidParameter
from swath.scoring import Alphabet
from swath.sequences.encoding import SequenceLike, check_codes, translator

__all__ = ["SequenceSet", "duplicate_error", "duplicate_name", "name_hashes", "sequence_set",
           "suffixed", "unique_names"]

# name_hashes: a name's bytes times powers of an odd number, then splitmix64's finalizer
_HASH_BASE = np.uint64(0x100000001B3)
_HASH_LENGTH = np.uint64(0x9E3779B97F4A7C15)
_HASH_MIX = ((30, np.uint64(0xBF58476D1CE4E5B9)), (27, np.uint64(0x94D049BB133111EB)))


@dataclass(frozen=True, eq=False)
class SequenceSet:
    """Many encoded sequences, concatenated into one residue array.

    Record ``i`` is ``residues[offsets[i]:offsets[i + 1]]``, and, read from FASTQ, its
    base qualities ``qualities[offsets[i]:offsets[i + 1]]`` (:meth:`quality`). The arrays
    are read-only. Two sets are equal when they hold the same names, descriptions,
    residues and qualities; ``source`` is not compared (a FASTA file and its gzip copy
    give equal sets). Sets pickle (Dask ships them) and are not hashable.

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
    qualities : numpy.ndarray or None
        ``uint8``: a FASTQ file's quality characters (Phred + 33, as the file gives
        them), one a residue, laid out as ``residues``; None without (FASTA, or
        sequences from memory).

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
    qualities: np.ndarray | None = field(default=None, repr=False)

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
        qualities = None if self.qualities is None else np.asarray(self.qualities)
        if qualities is not None and (qualities.dtype != np.uint8 or
                                      qualities.shape != residues.shape):
            raise InvalidParameter(
                f"qualities must be a 1-D uint8 array of one quality a residue ("
                f"{len(residues)}), got {qualities.dtype} of shape {qualities.shape}")
        # Views, so that making them read-only leaves the caller's arrays alone.
        residues = residues.view()
        offsets = offsets.view()
        residues.setflags(write=False)
        offsets.setflags(write=False)
        if qualities is not None:
            qualities = qualities.view()
            qualities.setflags(write=False)
            object.__setattr__(self, "qualities", qualities)
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
            and _same(self.qualities, other.qualities)
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (SequenceSet, (self.names, self.descriptions, np.asarray(self.residues),
                              np.asarray(self.offsets), self.source,
                              None if self.qualities is None else np.asarray(self.qualities)))

    def __repr__(self) -> str:
        return (f"SequenceSet({len(self)} sequences, {len(self.residues)} residues, "
                f"source={self.source!r})")

    @property
    def lengths(self) -> np.ndarray:
        """The length of each record (``int64``)."""
        return np.diff(self.offsets)

    def quality(self, i: int) -> str | None:
        """Record ``i``'s base qualities as its FASTQ quality line gives them, or None
        for a set without qualities."""
        if self.qualities is None:
            return None
        return self.qualities[self.offsets[i]:self.offsets[i + 1]].tobytes().decode("latin-1")


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Both None, or equal arrays."""
    return a is b if a is None or b is None else np.array_equal(a, b)


def sequence_set(seqs: Iterable[SequenceLike], alphabet: Alphabet, *,
                 wildcard: bool = False, names: Sequence[str] | None = None) -> SequenceSet:
    """Build a SequenceSet from in-memory sequences.

    Parameters
    ----------
    seqs : sequence of str, bytes or numpy.ndarray
        The sequences, as :func:`~swath.sequences.encode_sequence` accepts them.
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
    encoder = translator(alphabet, wildcard)
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
            out += np.ascontiguousarray(check_codes(seq, alphabet, label)).data
        else:
            out += encoder.encode(seq, label)
        offsets.append(len(out))
    return SequenceSet(tuple(names), tuple(names), np.frombuffer(out, dtype=np.uint8),
                       np.array(offsets, dtype=np.int64), None)


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
    name as ``NAME_2``, ``NAME_3``, ... (skipping names already taken: :func:`suffixed`).

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
        raise duplicate_error(*found, source, what)
    records: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        records.setdefault(name, []).append(i)
    out, given = list(names), set(names)
    for name, found_at in records.items():
        for record, new in zip(found_at[1:], suffixed(name, len(found_at), given.__contains__),
                               strict=True):
            out[record] = new
    return tuple(out)


def duplicate_error(name: str, first: int, second: int, source: str | None,
                    what: str = "sequence") -> InvalidInput:
    """The refusal of ``name``, given twice (records ``first`` and ``second``, 0-based) in
    ``source``."""
    return InvalidInput(f"{source or 'the input'}: {what} name {name!r} is given twice "
                        f"(records {first + 1} and {second + 1}): names must be unique (swath "
                        "makedb and allpairs rename them with --rename-duplicates)")


def suffixed(name: str, count: int, given: Callable[[str], bool]) -> list[str]:
    """The new names of the second to the ``count``-th record named ``name``: ``NAME_2``,
    ``NAME_3``, ..., each past the last, skipping those that are names ``given`` in the
    input. Only the input's names need asking for: a name made so is ``name`` and a number
    after its last ``_``, which no name made so from another name is.

    Examples
    --------
    >>> suffixed("a", 3, {"a", "a_2"}.__contains__)
    ['a_3', 'a_4']
    """
    out, suffix = [], 1
    for _ in range(count - 1):
        suffix += 1
        while given(f"{name}_{suffix}"):
            suffix += 1
        out.append(f"{name}_{suffix}")
    return out


def name_hashes(text: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A 64-bit hash (uint64) of each name given as UTF-8 bytes, name ``i`` being
    ``text[offsets[i]:offsets[i + 1]]`` (``offsets`` ascending): the same in every process
    (Python's hash of a str is not). Names whose hashes differ differ; names whose hashes
    are equal are most likely equal (read them to know).

    Examples
    --------
    >>> found = name_hashes(np.frombuffer(b"abab", np.uint8), np.array([0, 2, 4, 4]))
    >>> bool(found[0] == found[1]), bool(found[0] == found[2])
    (True, False)
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    at = offsets - offsets[0]
    # sum of byte j of a name times B**j, modulo 2**64 (uint64 arrays wrap silently)
    position = np.arange(int(at[-1]), dtype=np.int64) - np.repeat(at[:-1], lengths)
    powers = np.cumprod(np.full(int(lengths.max(initial=0)) + 1, _HASH_BASE, np.uint64))
    powers = np.concatenate([[np.uint64(1)], powers[:-1]])
    terms = text[offsets[0]:offsets[-1]].astype(np.uint64) * powers[position]
    sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms, dtype=np.uint64)])
    mixed = sums[at[1:]] - sums[at[:-1]] + lengths.astype(np.uint64) * _HASH_LENGTH
    for shift, factor in _HASH_MIX:     # splitmix64's finalizer: every bit moves every bit
        mixed = (mixed ^ (mixed >> np.uint64(shift))) * factor
    return mixed ^ (mixed >> np.uint64(31))
