"""vsearch's UCLUST-format outputs of an all-pairs job: its kept pairs as
``vsearch --allpairs_global --uc`` writes them, and its single-linkage clusters as
``vsearch --cluster_fast`` writes its own (each cluster's centroid, its ``--uc`` records
and its ``--centroids`` FASTA).

# n: sequences (input order), k: clusters, h: members that are not their centroid,
# K: kept pairs

**The kept pairs' records** (:func:`pair_uc_lines`, format ``uc``), ten tab-separated
fields as ``vsearch --allpairs_global --uc`` writes them: for each sequence in input
order (the query), an ``H`` record a kept pair whose query it is (its earlier record; the
target the later one), the best first (the highest identity, then the earliest target),
or one ``N`` record where it has none (the last sequence always):

- ``H``: the target's input index (0-based), the query's length, the identity in percent
  (one decimal, the job's ``--iddef``, computed as vsearch computes it), strand ``+``,
  ``0``, ``0``, the CIGAR (below; ``=`` where the two sequences are identical), the
  query's label, the target's label;
- ``N``: ``*``, ``*``, ``*``, ``.``, ``*``, ``*``, ``*``, the query's label, ``*``.

**The centroid** of a cluster is the member ``vsearch --cluster_fast`` would have seeded
it with: ``--cluster_fast`` visits the sequences longest first, of equal lengths the most
abundant first (the ``size=N`` annotation of a label, ``seq1;size=12``, as vsearch
reads it; 1 without one), then by label (byte order), then in input order, and the first
member of a cluster it visits is its seed. Clusters are numbered from 0 in the order
their centroids are visited, as vsearch numbers them.

**The clusters' records** (:func:`uc_lines`, format ``clusters-uc``), ten tab-separated
fields as ``vsearch --cluster_fast --uc`` writes them, a line a sequence in the order of
the visit, then a line a cluster in the order of the numbers; a field that does not apply
is ``*``:

- ``S``, a centroid: its cluster's number, its length, then ``*`` up to its label;
- ``H``, any other member: its cluster's number, its length, its identity to the
  centroid in percent, strand ``+``, ``0``, ``0``, the CIGAR, its label, the centroid's
  label;
- ``C``, a cluster: its number, its size, then ``*`` up to its centroid's label.

An ``H`` record's member is aligned (the query) against its centroid (the target) with
the job's scoring and mode; its identity is the job's definition (``--iddef``) in percent
with one decimal, computed as vsearch computes it (``100.0 * matches / denominator``).

**The CIGARs** are vsearch's: runs of ``M`` (a match or a mismatch), ``I`` (a target
residue against a gap in the query) and ``D`` (a query residue against a gap), a count of
1 left out (``126MI117M``); ``*`` where a local alignment found nothing. ``=`` stands for
a perfect alignment, which the two commands define apart: ``--allpairs_global``'s is one
of two identical sequences (every column a match, no gap at all); ``--cluster_fast``'s
one whose every column but the terminal gaps is a match. In local and semiglobal jobs the
CIGAR covers the aligned residues only, as swath's other outputs do (vsearch aligns
globally).

Single linkage joins two sequences that a chain of kept pairs links, so a member's
identity to its centroid may be under the job's threshold: it reached it with another
member of its cluster.

**The centroids** (:func:`centroid_fasta`): one FASTA record a cluster, in the order of
the numbers, the label alone on the header, the residues upper case on lines of
:data:`FASTA_WIDTH` (vsearch's ``--fasta_width`` default).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import groupby

import numpy as np
import numpy.typing as npt

from swath.alignment import cigar_runs
from swath.constants import Mode
from swath.identity.definitions import cigar_counts, identity_percent
from swath.scoring import Alphabet, Scoring

__all__ = ["FASTA_WIDTH", "abundance", "centroid_fasta", "centroids", "pair_uc_lines",
           "query_order", "uc_cigar", "uc_lines", "visit_order"]

FASTA_WIDTH = 80            # vsearch's --fasta_width default
_SIZE = re.compile(r"(?:^|;)size=([0-9]+)(?=;|$)")
# swath's ``I`` is a query residue against a gap, vsearch's a target residue: swapped
UC_OPS = {"=": "M", "X": "M", "I": "D", "D": "I"}


def abundance(label: str) -> int:
    """The abundance a label carries, as vsearch reads it: the first ``size=N``
    annotation (at the start or after a ``;``, its digits followed by a ``;`` or the end),
    1 without one.

    Examples
    --------
    >>> abundance("otu1;size=25;"), abundance("size=3"), abundance("otu1;xsize=25")
    (25, 3, 1)
    """
    found = _SIZE.search(label)
    return int(found.group(1)) if found else 1


def visit_order(lengths: npt.ArrayLike, names: Sequence[str]) -> np.ndarray:
    """Input indices in the order ``vsearch --cluster_fast`` visits the sequences:
    longest first, of equal lengths the most abundant first (:func:`abundance`), then by
    label (byte order), then by input index.

    Examples
    --------
    >>> visit_order([5, 7, 5, 7, 5], ["b", "z", "a", "z", "c;size=2"]).tolist()
    [1, 3, 4, 2, 0]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    # str order is code point order, which is UTF-8's byte order (strcmp's)
    return np.array(sorted(range(len(lengths)),
                           key=lambda i: (-lengths[i], -abundance(names[i]), names[i], i)),
                    dtype=np.int64)


def _seeds(clusters: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The centroid (input index) and cluster number of every sequence: a cluster's
    first member in ``order``, numbered by its place there."""
    labels, first, inverse = np.unique(clusters[order], return_index=True, return_inverse=True)
    number = np.empty(len(labels), dtype=np.int64)
    number[np.argsort(first, kind="stable")] = np.arange(len(labels))
    centroid, numbers = (np.empty(len(order), dtype=np.int64) for _ in range(2))
    centroid[order] = order[first][inverse]
    numbers[order] = number[inverse]
    return centroid, numbers


def centroids(clusters: npt.ArrayLike, lengths: npt.ArrayLike, names: Sequence[str]
              ) -> np.ndarray:
    """The centroid of each sequence's cluster, as an input index (int64, input order):
    of the members, the first that ``vsearch --cluster_fast`` visits (:func:`visit_order`).

    Parameters
    ----------
    clusters : array_like of int
        Each sequence's cluster (any labels; equal labels, one cluster).
    lengths : array_like of int
        The sequences' lengths.
    names : sequence of str
        Their labels.

    Examples
    --------
    >>> centroids([0, 0, 2, 0], [5, 7, 3, 7], ["a", "c", "d", "b"]).tolist()
    [3, 3, 2, 3]
    """
    order = visit_order(lengths, names)
    return _seeds(np.asarray(clusters, dtype=np.int64), order)[0]


def uc_cigar(cigar: str) -> str:
    """An extended CIGAR of a query (a member) against a target (its centroid) in
    vsearch's compressed form: ``=`` and ``X`` as ``M``, ``I`` and ``D`` swapped (vsearch's ``I`` is
    a target residue against a gap), a count of 1 left out.

    Examples
    --------
    >>> uc_cigar("120=1X5=1D117=")
    '126MI117M'
    >>> uc_cigar("3I2=1I")
    '3D2MD'
    """
    runs = groupby(((n, UC_OPS[op]) for n, op in cigar_runs(cigar)), key=lambda run: run[1])
    return "".join(f"{'' if n == 1 else n}{letter}"
                   for letter, n in ((letter, sum(n for n, _ in group)) for letter, group in runs))


def query_order(query: npt.ArrayLike, target: npt.ArrayLike, percent: npt.ArrayLike
                ) -> np.ndarray:
    """The order in which ``vsearch --allpairs_global`` writes pairs (its ``--uc``,
    ``--blast6out`` and other per-hit outputs, with one thread): by query, each query's
    highest identity first (the exact double it prints with one decimal,
    :func:`~swath.identity.definitions.identity_percent`), then the earliest target.

    Examples
    --------
    >>> query_order([1, 0, 0, 0], [2, 3, 2, 1], [90.0, 95.0, 97.5, 95.0]).tolist()
    [2, 3, 1, 0]
    """
    return np.lexsort((np.asarray(target), -np.asarray(percent, dtype=np.float64),
                       np.asarray(query)))


def pair_uc_lines(names: Sequence[str], lengths: npt.ArrayLike, query: npt.ArrayLike,
                  target: npt.ArrayLike, cigars: Sequence[str] | npt.NDArray[np.object_],
                  definition: str | int, *, queries: range | None = None) -> Iterator[str]:
    """vsearch's ``--allpairs_global --uc`` records of an all-pairs job's kept pairs
    (module docstring), a line each: a query's ``H`` records, the highest identity first,
    of equal identities the earliest target first (:func:`query_order`), or its ``N``
    record.

    Parameters
    ----------
    names : sequence of str
        The sequences' labels, in input order.
    lengths : array_like of int
        Their lengths.
    query, target : array_like of int
        The input indices of each kept pair, ``query < target`` (any order of pairs).
    cigars : sequence of str
        Each pair's extended CIGAR, the query against the target.
    definition : {"pident", 0, 1, 2, 3, 4}
        The job's identity definition (``--iddef``).
    queries : range, optional
        The queries whose records to write, in input order (every sequence by default):
        a run of them, the pairs given those whose query is in it, so that a large job's
        records are written a run of queries at a time.

    Examples
    --------
    >>> for line in pair_uc_lines(["a", "b", "c"], [6, 6, 5], [0, 1, 0], [2, 2, 1],
    ...                           ["5=1I", "5=1I", "6="], 2):
    ...     print(line.replace("\\t", " "), end="")
    H 1 6 100.0 + 0 0 = a b
    H 2 6 100.0 + 0 0 5MD a c
    H 2 6 100.0 + 0 0 5MD b c
    N * * * . * * * c *
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    query = np.asarray(query, dtype=np.int64)
    target = np.asarray(target, dtype=np.int64)
    texts = [str(cigar) for cigar in cigars]
    counts = cigar_counts(texts)
    m, n = lengths[query], lengths[target]
    percent = identity_percent(counts, m, n, definition)
    columns = counts["columns"]
    identical = (counts["matches"] == columns) & (columns == m) & (columns == n)
    order = query_order(query, target, percent)
    queries = range(len(lengths)) if queries is None else queries
    first = np.searchsorted(query[order], np.arange(queries.start, queries.stop + 1))
    for k, q in enumerate(queries):
        rows = order[first[k]:first[k + 1]].tolist()
        if not rows:
            yield f"N\t*\t*\t*\t.\t*\t*\t*\t{names[q]}\t*\n"
        for k in rows:
            cigar = "=" if identical[k] else uc_cigar(texts[k]) or "*"
            yield (f"H\t{target[k]}\t{lengths[q]}\t{percent[k]:.1f}\t+\t0\t0\t{cigar}\t"
                   f"{names[q]}\t{names[target[k]]}\n")


def _member_alignments(sequences: Sequence[np.ndarray], members: np.ndarray,
                       centroid: np.ndarray, scoring: Scoring, mode: Mode,
                       definition: str | int, device: str) -> tuple[np.ndarray, list[str]]:
    """Each member aligned against its centroid: its identity in percent and its CIGAR
    as an ``H`` record writes it."""
    from swath.kernels import get_backend

    if not len(members):
        return np.zeros(0), []
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    residues = np.concatenate(list(sequences)).astype(np.uint8)
    targets = centroid[members]
    _, _, text, text_at = get_backend(device).align_batch(
        residues, offsets, residues, offsets, scoring, mode, pairs=(members, targets))
    counts = cigar_counts((text, text_at))
    percent = identity_percent(counts, lengths[members], lengths[targets], definition)
    perfect = (counts["columns"] > 0) & (counts["matches"] == counts["columns"]
                                         - counts["terminal"])
    whole = text.tobytes().decode("ascii")
    cigars = [("=" if perfect[k] else uc_cigar(whole[text_at[k]:text_at[k + 1]]) or "*")
              for k in range(len(members))]
    return percent, cigars


def uc_lines(names: Sequence[str], sequences: Sequence[np.ndarray], clusters: npt.ArrayLike,
             scoring: Scoring, mode: Mode, definition: str | int, *, device: str = "auto"
             ) -> Iterator[str]:
    """vsearch's ``--uc`` records of single-linkage clusters (module docstring), a line
    each.

    Parameters
    ----------
    names : sequence of str
        The sequences' labels, in input order.
    sequences : sequence of numpy.ndarray
        Their residues (uint8 codes of ``scoring.alphabet``), in input order.
    clusters : array_like of int
        Each sequence's cluster.
    scoring, mode, definition
        The job's scoring, mode and identity definition: what a member is aligned and
        its identity to its centroid computed with.
    device : {"auto", "cpu", "gpu"}
        Where the members are aligned.

    Examples
    --------
    >>> import numpy as np, swath
    >>> dna = swath.Scoring.dna()
    >>> seqs = [dna.alphabet.encode(s) for s in ("ACGTTA", "ACGTTAG", "CCCC")]
    >>> for line in uc_lines(["a", "b", "c"], seqs, [0, 0, 2], dna, "global", 2,
    ...                      device="cpu"):
    ...     print(line.replace("\\t", " "), end="")
    S 0 7 * * * * * b *
    H 0 6 100.0 + 0 0 = a b
    S 1 4 * * * * * c *
    C 0 2 * * * * * b *
    C 1 1 * * * * * c *
    """
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    order = visit_order(lengths, names)
    centroid, number = _seeds(np.asarray(clusters, dtype=np.int64), order)
    members = np.flatnonzero(centroid != np.arange(len(centroid)))
    percent, cigars = _member_alignments(sequences, members, centroid, scoring, mode,
                                         definition, device)
    row = np.full(len(centroid), -1, dtype=np.int64)
    row[members] = np.arange(len(members))
    for s in order.tolist():
        if row[s] < 0:
            yield f"S\t{number[s]}\t{lengths[s]}\t*\t*\t*\t*\t*\t{names[s]}\t*\n"
        else:
            k = int(row[s])
            yield (f"H\t{number[s]}\t{lengths[s]}\t{percent[k]:.1f}\t+\t0\t0\t{cigars[k]}\t"
                   f"{names[s]}\t{names[centroid[s]]}\n")
    sizes = np.bincount(number, minlength=int(number.max(initial=-1)) + 1)
    for s in _by_number(centroid, number):
        yield f"C\t{number[s]}\t{sizes[number[s]]}\t*\t*\t*\t*\t*\t{names[s]}\t*\n"


def _by_number(centroid: np.ndarray, number: np.ndarray) -> list[int]:
    """The centroids (input indices) in the order of their clusters' numbers."""
    seeds = np.flatnonzero(centroid == np.arange(len(centroid)))
    return seeds[np.argsort(number[seeds])].tolist()


def centroid_fasta(names: Sequence[str], sequences: Sequence[np.ndarray],
                   clusters: npt.ArrayLike, alphabet: Alphabet, *, width: int = FASTA_WIDTH
                   ) -> Iterator[str]:
    """The centroids of single-linkage clusters as FASTA, as vsearch's ``--centroids``
    writes them (module docstring): a record each, in the order of the cluster numbers.

    Examples
    --------
    >>> import swath
    >>> dna = swath.Scoring.dna()
    >>> seqs = [dna.alphabet.encode(s) for s in ("ACGTTA", "ACGTTAG", "CCCC")]
    >>> print("".join(centroid_fasta(["a", "b", "c"], seqs, [0, 0, 2], dna.alphabet,
    ...                              width=4)), end="")
    >b
    ACGT
    TAG
    >c
    CCCC
    """
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    centroid, number = _seeds(np.asarray(clusters, dtype=np.int64),
                              visit_order(lengths, names))
    for s in _by_number(centroid, number):
        residues = alphabet.decode(sequences[s])
        lines = [residues[at:at + width] for at in range(0, len(residues), width)]
        yield f">{names[s]}\n" + "".join(f"{line}\n" for line in lines)
