"""Which query goes with which target: pairs by record name, from a file or lists.

A pairs file (``swath pairs --pairs PAIRS.tsv``) holds one pair a line: the query's
name, then the target's, separated by a tab or spaces (further columns are ignored;
blank lines and lines starting with ``#`` are skipped). Names are records' names as
swath reads them (the header up to its first whitespace).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from swath.errors import InputNotFound, InvalidInput

__all__ = ["NamedPairs", "read_pairs", "resolve"]


@dataclass(frozen=True)
class NamedPairs:
    """Pairs as names, with where each was given (for messages).

    Attributes
    ----------
    queries, targets : list of str
        The names of each pair's query and target.
    source : str or None
        The pairs file, or None for pairs given in memory.
    lines : list of int or None
        The line of each pair in ``source``.
    """

    queries: list[str]
    targets: list[str]
    source: str | None = None
    lines: list[int] | None = None

    def where(self, k: int) -> str:
        """Where pair ``k`` was given: ``PAIRS.tsv line 7`` or ``pair 7``."""
        if self.source is not None and self.lines is not None:
            return f"{self.source} line {self.lines[k]}"
        return f"pair {k + 1}"


def read_pairs(path: str | os.PathLike[str]) -> NamedPairs:
    """Read a pairs file: two name columns (query, target).

    Raises
    ------
    InputNotFound
        The file cannot be read.
    InvalidInput
        A line has fewer than two columns, or the file holds no pair (the message names
        the file and line).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.tsv")
    >>> _ = open(path, "w").write("# query target\\nr1\\tc1\\n\\nr2 c1 0.9\\n")
    >>> p = read_pairs(path)
    >>> p.queries, p.targets, p.lines
    (['r1', 'r2'], ['c1', 'c1'], [2, 4])
    """
    display = os.fsdecode(path)
    queries: list[str] = []
    targets: list[str] = []
    lines: list[int] = []
    try:
        with open(path, encoding="utf-8") as text:
            for number, line in enumerate(text, 1):
                words = line.split()
                if not words or words[0].startswith("#"):
                    continue
                if len(words) < 2:
                    raise InvalidInput(f"{display} line {number}: expected two names (query, "
                                       f"target), found one ({words[0]!r})")
                queries.append(words[0])
                targets.append(words[1])
                lines.append(number)
    except FileNotFoundError:
        raise InputNotFound(f"{display}: no such file") from None
    except IsADirectoryError:
        raise InputNotFound(f"{display}: is a directory, expected a pairs file") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{display}: not a text file of names (not UTF-8)") from None
    except OSError as exc:
        raise InputNotFound(f"{display}: cannot be read ({exc.strerror or exc})") from None
    if not queries:
        raise InvalidInput(f"{display}: holds no pair (expected lines of two names: query, "
                           "target)")
    return NamedPairs(queries, targets, display, lines)


def resolve(pairs: NamedPairs, names: tuple[Sequence[str], Sequence[str]],
            sources: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """The records (indices) of each pair's query and target, by name.

    ``names`` are the query and target records' names, ``sources`` what messages call
    the two inputs.

    Raises
    ------
    InvalidInput
        A name is given twice in one input (a name must say which record it is), or a
        pair names a record that is not there (the message names it and the pair's line).
    """
    from swath.sequences.sets import duplicate_name

    out = []
    for side, (given, known, source) in enumerate(zip((pairs.queries, pairs.targets), names,
                                                      sources, strict=True)):
        twice = duplicate_name(known)
        if twice is not None:
            name, first, second = twice
            raise InvalidInput(f"{source}: name {name!r} is given twice (records {first + 1} "
                               f"and {second + 1}): pairs by name need unique names")
        index = {name: i for i, name in enumerate(known)}
        records = np.empty(len(given), dtype=np.int64)
        for k, name in enumerate(given):
            at = index.get(name)
            if at is None:
                raise InvalidInput(f"{pairs.where(k)}: {('query', 'target')[side]} {name!r} is "
                                   f"not a record of {source}")
            records[k] = at
        out.append(records)
    return out[0], out[1]
