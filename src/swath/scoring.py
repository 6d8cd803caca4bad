"""Scoring schemes: a substitution matrix over an alphabet, and affine gap costs.

The gap convention is BLAST's: a gap of length ``k`` costs ``gap_open + k * gap_extend``
(so "11/1" charges 12 for a one-residue gap). parasail and Biopython charge
``open + (k - 1) * extend``; swath's ``(11, 1)`` equals their ``(12, 1)``.

A terminal gap (one that touches the first or the last residue of either sequence) may
cost differently, in global mode: ``end_gap_open + k * end_gap_extend``
(:meth:`Scoring.vsearch`). In the DP, the leading gaps are row 0 and column 0, the
trailing ones the gaps along the last query row and down the last target column.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from swath.errors import InvalidParameter

PROTEIN_MATRICES = (
    "BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90", "PAM30", "PAM70", "PAM250",
)
DNA_ALPHABET = "ACGTN"


@dataclass(frozen=True)
class Alphabet:
    """The residues a scoring scheme knows, and how text maps to ``uint8`` codes.

    Parameters
    ----------
    letters : str
        The residues in code order: residue ``letters[c]`` is encoded as ``c``.
    wildcard : str or None
        The residue that unknown residues map to when the caller asks for it
        (``X`` for protein, ``N`` for DNA), or None when the alphabet has none.
    """

    letters: str
    wildcard: str | None
    table: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.letters)) != len(self.letters) or not 0 < len(self.letters) < 255:
            raise InvalidParameter(f"alphabet {self.letters!r} must hold 1 to 254 distinct letters")
        table = np.full(256, 255, dtype=np.uint8)
        for code, letter in enumerate(self.letters):
            table[ord(letter.upper())] = code
            table[ord(letter.lower())] = code
        object.__setattr__(self, "table", table)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Alphabet, (self.letters, self.wildcard))

    @property
    def wildcard_code(self) -> int | None:
        """The code of the wildcard residue, or None."""
        return None if self.wildcard is None else self.letters.index(self.wildcard)

    def encode(self, text: str | bytes) -> np.ndarray:
        """Encode residues (either case) into codes; unknown residues become 255."""
        raw = text.encode("ascii", "replace") if isinstance(text, str) else bytes(text)
        return self.table[np.frombuffer(raw, dtype=np.uint8)]

    def decode(self, codes: np.ndarray) -> str:
        """Turn codes back into upper-case residues."""
        letters = np.frombuffer(self.letters.encode("ascii"), dtype=np.uint8)
        return letters[np.asarray(codes, dtype=np.intp)].tobytes().decode("ascii")


#: the largest gap cost swath takes: the kernels' widest arithmetic (int32, minus
#: infinity at -2^30) holds every step of a matrix entry (at most 1,000) and a gap this
#: large exactly; a pair whose whole score would leave it is refused by the kernels
MAX_GAP = 1 << 20


def widest_gaps(gap_open: int, gap_extend: int, end_gaps: tuple[int, int] | None
                ) -> tuple[int, int]:
    """Gap costs at least those of every gap, interior or terminal: the larger of the
    interior and the end costs, each (what value and score bounds take).

    Examples
    --------
    >>> widest_gaps(18, 2, (1, 1)), widest_gaps(5, 2, None), widest_gaps(3, 1, (4, 0))
    ((18, 2), (5, 2), (4, 1))
    """
    if end_gaps is None:
        return gap_open, gap_extend
    return max(gap_open, end_gaps[0]), max(gap_extend, end_gaps[1])


def _check_gaps(gap_open: int, gap_extend: int, names: tuple[str, str] = ("gap_open", "gap_extend")
                ) -> tuple[int, int]:
    for name, value in zip(names, (gap_open, gap_extend), strict=True):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InvalidParameter(f"{name} must be an integer, got {value!r}")
        if value < 0:
            raise InvalidParameter(
                f"{name} must be >= 0 (a gap of length k costs gap_open + k * gap_extend), "
                f"got {value}"
            )
        if value > MAX_GAP:
            raise InvalidParameter(f"{name} must be at most {MAX_GAP:,} (the kernels' exact "
                                   f"range), got {value:,}")
    if gap_open + gap_extend == 0:
        raise InvalidParameter(
            f"{names[0]} and {names[1]} are both 0: gaps would be free; give {names[1]} >= 1"
        )
    return int(gap_open), int(gap_extend)


@dataclass(frozen=True)
class Scoring:
    """A substitution matrix over an alphabet plus affine gap costs.

    A gap of length ``k`` costs ``gap_open + k * gap_extend``; a terminal gap (touching
    the first or last residue of either sequence) ``end_gap_open + k * end_gap_extend``,
    in global mode only (by default the end costs are the interior ones: every mode
    takes such a scheme). Build one with :meth:`protein`, :meth:`dna`, :meth:`vsearch`
    or :meth:`from_file`; give other end costs with :meth:`with_end_gaps`.

    Examples
    --------
    >>> sc = Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
    >>> sc.score("W", "W"), sc.gap_cost(3), sc.end_gaps
    (11, 14, None)
    """

    name: str
    alphabet: Alphabet
    matrix: np.ndarray = field(repr=False, compare=False)
    gap_open: int
    gap_extend: int
    end_gap_open: int | None = None
    end_gap_extend: int | None = None
    _key: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        matrix = np.ascontiguousarray(self.matrix, dtype=np.int32)
        size = len(self.alphabet.letters)
        if matrix.shape != (size, size):
            raise InvalidParameter(
                f"matrix {self.name} has shape {matrix.shape}, expected {(size, size)}"
            )
        if np.abs(matrix).max() > 1000:
            raise InvalidParameter(f"matrix {self.name} has entries beyond +-1000")
        gap_open, gap_extend = _check_gaps(self.gap_open, self.gap_extend)
        ends: tuple[int, int] | tuple[None, None] = _check_gaps(
            gap_open if self.end_gap_open is None else self.end_gap_open,
            gap_extend if self.end_gap_extend is None else self.end_gap_extend,
            ("end_gap_open", "end_gap_extend"))
        if ends == (gap_open, gap_extend):
            # no end costs of its own: a copy with other interior costs follows them
            ends = (None, None)
        matrix.setflags(write=False)
        object.__setattr__(self, "matrix", matrix)
        object.__setattr__(self, "gap_open", gap_open)
        object.__setattr__(self, "gap_extend", gap_extend)
        object.__setattr__(self, "end_gap_open", ends[0])
        object.__setattr__(self, "end_gap_extend", ends[1])
        object.__setattr__(self, "_key", tuple(matrix.ravel().tolist()))

    @classmethod
    def protein(cls, matrix: str = "BLOSUM62", gap_open: int = 11, gap_extend: int = 1) -> Scoring:
        """A protein scheme from a named matrix (BLOSUM45/50/62/80/90, PAM30/70/250, ...).

        The matrices come from Biopython's ``Bio.Align.substitution_matrices``.

        Examples
        --------
        >>> Scoring.protein("PAM30", gap_open=9, gap_extend=1).score("A", "A")
        6
        """
        upper = str(matrix).upper()
        array = _named_matrix(upper)
        if array is None:
            known = ", ".join(PROTEIN_MATRICES)
            raise InvalidParameter(f"unknown matrix {matrix!r}; known matrices include {known}")
        return cls._from_biopython(upper, array, gap_open, gap_extend)

    @classmethod
    def dna(cls, match: int = 2, mismatch: int = -3, gap_open: int = 5, gap_extend: int = 2
            ) -> Scoring:
        """A DNA scheme over ``ACGTN``: ``match`` on equal bases, ``mismatch`` otherwise.

        ``N`` is the wildcard: it scores ``mismatch`` against every base, itself included.

        Examples
        --------
        >>> Scoring.dna(match=1, mismatch=-2, gap_open=2, gap_extend=1).score("A", "A")
        1
        """
        for name, value in (("match", match), ("mismatch", mismatch)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InvalidParameter(f"{name} must be an integer, got {value!r}")
        if match <= 0:
            raise InvalidParameter(f"match must be > 0, got {match}")
        if mismatch >= match:
            raise InvalidParameter(f"mismatch must be < match ({match}), got {mismatch}")
        size = len(DNA_ALPHABET)
        matrix = np.full((size, size), mismatch, dtype=np.int32)
        np.fill_diagonal(matrix[:4, :4], match)
        return cls(f"DNA{match}/{mismatch}", Alphabet(DNA_ALPHABET, "N"), matrix,
                   gap_open, gap_extend)

    @classmethod
    def vsearch(cls) -> Scoring:
        """vsearch's default nucleotide scoring, exactly (vsearch 2.22, ``--match 2
        --mismatch -4 --gapopen 20I/2E --gapext 2I/1E``), in swath's conventions.

        vsearch charges a gap of length ``k`` ``open + (k - 1) * extend``: 20 + 2(k - 1)
        inside, 2 + (k - 1) at either end, which is swath's ``gap_open=18, gap_extend=2,
        end_gap_open=1, end_gap_extend=1``. It scores any ambiguous residue (N, and the
        IUPAC codes, which swath maps to N with ``wildcard``) 0 against everything, and
        reads lower case as upper case (found with ``vsearch --allpairs_global
        --acceptall --userfields raw`` on hand-made pairs). vsearch also scores U as T
        (swath's DNA alphabet has no U) and counts an ambiguous residue against a base it
        may stand for as an identity (swath counts it as a mismatch).

        Examples
        --------
        >>> sc = Scoring.vsearch()
        >>> sc.gap_cost(1), sc.gap_cost(3), sc.gap_cost(3, terminal=True), sc.score("N", "A")
        (20, 24, 4, 0)
        """
        size = len(DNA_ALPHABET)
        matrix = np.full((size, size), -4, dtype=np.int32)
        np.fill_diagonal(matrix, 2)
        matrix[DNA_ALPHABET.index("N"), :] = matrix[:, DNA_ALPHABET.index("N")] = 0
        return cls("vsearch", Alphabet(DNA_ALPHABET, "N"), matrix, 18, 2, 1, 1)

    def with_end_gaps(self, end_gap_open: int, end_gap_extend: int) -> Scoring:
        """This scheme with terminal gaps of length ``k`` costing ``end_gap_open + k *
        end_gap_extend`` (global mode only).

        Examples
        --------
        >>> Scoring.dna(gap_open=5, gap_extend=2).with_end_gaps(0, 1).end_gaps
        (0, 1)
        """
        return Scoring(self.name, self.alphabet, np.array(self.matrix), self.gap_open,
                       self.gap_extend, end_gap_open, end_gap_extend)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], gap_open: int = 11, gap_extend: int = 1
                  ) -> Scoring:
        """A scheme from a matrix file in NCBI format (as BLAST and EMBOSS ship them)."""
        from Bio.Align import substitution_matrices

        try:
            array = substitution_matrices.read(os.fspath(path))
        except FileNotFoundError:
            from swath.errors import InputNotFound

            raise InputNotFound(f"{path}: no such matrix file") from None
        except Exception as exc:
            raise InvalidParameter(f"{path}: not an NCBI-format matrix ({exc})") from None
        return cls._from_biopython(os.path.basename(os.fspath(path)), array, gap_open, gap_extend)

    @classmethod
    def _from_biopython(cls, name: str, array: Any, gap_open: int, gap_extend: int) -> Scoring:
        values = np.asarray(array, dtype=np.float64)
        if values.ndim != 2 or not np.array_equal(values, np.round(values)):
            raise InvalidParameter(f"matrix {name} must be a square matrix of integers")
        letters = "".join(array.alphabet).upper()
        wildcard = next((w for w in ("X", "N") if w in letters), None)
        return cls(name, Alphabet(letters, wildcard), values.astype(np.int32),
                   gap_open, gap_extend)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Scoring, (self.name, self.alphabet, np.array(self.matrix), self.gap_open,
                          self.gap_extend, self.end_gap_open, self.end_gap_extend))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scoring):
            return NotImplemented
        return (self.alphabet, self.gap_open, self.gap_extend, self.end_gaps, self._key) == (
            other.alphabet, other.gap_open, other.gap_extend, other.end_gaps, other._key)

    def __hash__(self) -> int:
        return hash((self.alphabet.letters, self.gap_open, self.gap_extend, self.end_gaps,
                     self._key))

    @property
    def end_gaps(self) -> tuple[int, int] | None:
        """``(end_gap_open, end_gap_extend)`` where they differ from the interior costs,
        else None (what the kernels take)."""
        if self.end_gap_open is None or self.end_gap_extend is None:
            return None
        return self.end_gap_open, self.end_gap_extend

    def score(self, a: str, b: str) -> int:
        """The substitution score of residue ``a`` against residue ``b``."""
        return int(self.matrix[self.alphabet.encode(a)[0], self.alphabet.encode(b)[0]])

    def gap_cost(self, length: int, terminal: bool = False) -> int:
        """What a gap of ``length`` residues costs (a positive number); with ``terminal``,
        one touching an end of either sequence (in global mode)."""
        if length <= 0:
            return 0
        go, ge = self.end_gaps if terminal and self.end_gaps else (self.gap_open,
                                                                   self.gap_extend)
        return go + length * ge

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (stores record it in their attributes; end costs
        only where they differ from the interior ones, so a scheme without them is
        recorded as before)."""
        fields = {"name": self.name, "alphabet": self.alphabet.letters,
                  "wildcard": self.alphabet.wildcard, "matrix": self.matrix.tolist(),
                  "gap_open": self.gap_open, "gap_extend": self.gap_extend}
        if self.end_gaps is not None:
            fields["end_gap_open"], fields["end_gap_extend"] = self.end_gaps
        return fields

    @classmethod
    def from_dict(cls, fields: dict[str, Any]) -> Scoring:
        """The scoring a store recorded with :meth:`to_dict`."""
        return cls(fields["name"], Alphabet(fields["alphabet"], fields["wildcard"]),
                   np.array(fields["matrix"]), fields["gap_open"], fields["gap_extend"],
                   fields.get("end_gap_open"), fields.get("end_gap_extend"))


@functools.cache
def _named_matrix(name: str) -> Any:
    """Biopython's matrix ``name`` (upper case; None if it has none of that name), read
    from its file once a process: a scheme is made per call of the API, and reading the
    file costs more than aligning a short pair (never written to: ``Scoring`` copies it)."""
    from Bio.Align import substitution_matrices

    return substitution_matrices.load(name) if name in substitution_matrices.load() else None
