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

__all__ = ["SequenceSet", "duplicate_name", "sequence_set", "unique_names"]


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
        raise duplicate_error(found, source, what)
    out = list(names)
    for i, name in renamed(list(enumerate(names)), set(names).__contains__).items():
        out[i] = name
    return tuple(out)


def duplicate_error(found: tuple[str, int, int], source: str | None,
                    what: str = "sequence") -> InvalidInput:
    """The refusal of a name given twice (``found`` as :func:`duplicate_name` gives it)."""
    name, first, second = found
    return InvalidInput(f"{source or 'the input'}: {what} name {name!r} is given twice "
                        f"(records {first + 1} and {second + 1}): names must be unique (swath "
                        "makedb and allpairs rename them with --rename-duplicates)")


def renamed(records: Sequence[tuple[int, str]], taken: Callable[[str], bool]
            ) -> dict[int, str]:
    """The new names of the second, third, ... record of a name, ``NAME_2``, ``NAME_3``,
    ..., skipping the names ``taken`` (a name of the input) or made already: by record
    number. ``records``: (number, name) in input order, all records of a name given more
    than once (the others are never renamed and need not be there).

    Examples
    --------
    >>> renamed([(0, "a"), (1, "a"), (2, "b"), (3, "a")], {"a", "b", "a_2"}.__contains__)
    {1: 'a_3', 3: 'a_4'}
    """
    seen: dict[str, int] = {}
    made: set[str] = set()
    out = {}
    for i, name in records:
        seen[name] = count = seen.get(name, 0) + 1
        if count > 1:
            while (new := f"{name}_{count}") in made or taken(new):
                count += 1
            seen[name] = count
            made.add(new)
            out[i] = new
    return out
