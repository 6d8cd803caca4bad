"""The alignment formats users feed to other tools: SAM, PAF and BLAST's tabular rows.

Every workload hands its alignments to these writers as :class:`AlignedRows` (columns,
one row an alignment); a big store is printed chunk by chunk, each chunk one call. The
writers hold nothing across calls: a chunk's text depends on its rows only.

- :func:`sam_header` and :func:`sam_lines`: SAM 1.6, the targets as ``@SQ`` references
  and each query a read. A query's best row (highest score, the first of equal ones) is
  its primary record (FLAG 0, with the query's sequence as SEQ and, read from FASTQ, its
  base qualities as QUAL; ``*`` from FASTA), its other rows secondary (FLAG 256, SEQ and
  QUAL ``*``); SEQ and QUAL as the query was given (swath aligns its forward strand only);
  POS 1-based; CIGAR with ``=``/``X`` (``M`` with
  ``PrintOptions(cigar_m=True)``) and soft clips (``S``) for the query's unaligned ends;
  MAPQ 255; tags ``AS:i`` (score) and ``NM:i`` (edit distance). A row without an
  alignment (empty CIGAR: a local score of 0) is an unmapped record, as minimap2 writes
  one: FLAG 4, RNAME ``*``, POS 0, MAPQ 0, CIGAR ``*``, no tags (and SEQ on the query's
  first row if none of its rows has an alignment).
- :func:`paf_lines`: PAF as ``minimap2 -c --eqx`` writes it (0-based, end-exclusive
  coordinates, strand ``+``, residue matches, alignment columns, MAPQ 255), tags
  ``NM:i``, ``AS:i``, ``cg:Z`` (the CIGAR without clips); rows without an alignment are
  left out, as minimap2 leaves out unmapped reads.
- :func:`tabular_lines`: tab-separated columns named as blastp's ``-outfmt 6`` names
  them (:data:`COLUMNS`: BLAST's 12 and more, and swath's ``cigar``; 1-based inclusive;
  e-values and bit scores formatted as BLAST+ formats them); :func:`tabular_format`
  reads a format that names them (``"6 qseqid sseqid score cigar"``).

The text is built column by column in numpy (:mod:`swath.results.text_columns`), and
yielded in pieces of at most :data:`BLOCK_ROWS` rows, each ending with a newline.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from swath._version import __version__
from swath.alignment import CigarRunArrays, cigar_run_arrays
from swath.errors import InvalidInput, InvalidParameter
from swath.identity import cigar_counts
from swath.results.text_columns import Ragged, decimal, encoded, joined

__all__ = ["BLAST_COLUMNS", "BLOCK_ROWS", "COLUMNS", "TABULAR_COLUMNS", "AlignedRows",
           "PrintOptions", "blast_bitscore", "blast_evalue", "cigar_columns", "paf_lines",
           "sam_header", "sam_lines", "sam_quals", "tabular_format", "tabular_lines"]

BLOCK_ROWS = 1 << 16       # rows per piece of text: bounds a writer's memory, not its speed
SAM_VERSION = "1.6"
MAPQ = 255                 # SAM and PAF: mapping quality not available
SECONDARY = 256
UNMAPPED = 4
# a QNAME as the SAM specification allows it: 1 to 254 of the characters ! to ? and A to ~
_QNAME = re.compile(r"[!-?A-~]{1,254}")
_NOT_QNAME = re.compile(r"[^!-?A-~]")
QNAME_LENGTH = 254
# a QUAL as the SAM specification allows it: one of the characters ! to ~ a base
_QUAL = re.compile(r"[!-~]+")

logger = logging.getLogger(__name__)
#: blastp's tabular columns (``-outfmt 6``): what ``swath search`` prints as tsv
BLAST_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart",
                 "qend", "sstart", "send", "evalue", "bitscore")
#: BLAST's 12 columns, then the raw score and the CIGAR
TABULAR_COLUMNS = (*BLAST_COLUMNS, "score", "cigar")
#: every column a tabular format may name (``"6 qseqid sseqid score cigar"``): blastp's
#: names for what they mean to blastp, then swath's own
COLUMNS = {
    "qseqid": "the query's name",
    "sseqid": "the subject's (target's) name",
    "pident": "identical columns over alignment columns, in percent (3 decimals)",
    "length": "alignment columns",
    "mismatch": "mismatched columns",
    "gapopen": "gap openings",
    "qstart": "first aligned query residue (1-based)",
    "qend": "last aligned query residue (1-based)",
    "sstart": "first aligned subject residue (1-based)",
    "send": "last aligned subject residue (1-based)",
    "evalue": "expect value (empty where there is none)",
    "bitscore": "bit score (empty where there is none)",
    "score": "raw score",
    "nident": "identical columns",
    "gaps": "gap columns",
    "qlen": "the query's length",
    "slen": "the subject's length",
    "qcovhsp": "aligned query residues over the query's length, in percent (rounded)",
    "cigar": "swath's extended CIGAR (=, X, I, D; I a query residue against a gap)",
}
TABULAR_NAMES = ("tsv", "6")        # a tabular format's name, and blastp's number for it


@dataclass(frozen=True)
class AlignedRows:
    """Alignments as columns, one row each (what the SAM, PAF and tabular writers take).

    Attributes
    ----------
    query_name, target_name : numpy.ndarray
        Object arrays of str.
    query_length, target_length : numpy.ndarray
        Whole sequences' lengths (int64); SAM's ``@SQ`` lengths and PAF's come from
        ``target_length`` (the tabular writer reads neither).
    score : numpy.ndarray
        Scores (int).
    query_start, query_end, target_start, target_end : numpy.ndarray
        The aligned residues, 0-based, end exclusive (int).
    cigar : numpy.ndarray
        Object array of swath's extended CIGARs (``=``, ``X``, ``I``, ``D``); ``""`` for
        a row without an alignment.
    mode : str
        ``"local"``, ``"global"`` or ``"semiglobal"``.
    query_sequence : callable, optional
        ``query_sequence(i)``: row ``i``'s whole query as letters (SAM's SEQ); None
        writes SEQ ``*``.
    evalue, bitscore : numpy.ndarray, optional
        Floats, NaN where there is none (the tabular writer's cells; empty where None).
    primary : numpy.ndarray, optional
        Which rows are their query's primary alignment (bool), where rows beyond these
        decide it (a store printed a chunk at a time); None: :func:`primary_rows`.
    query_quality : callable, optional
        ``query_quality(i)``: row ``i``'s whole query's base qualities as its FASTQ
        quality line gives them (SAM's QUAL, on the rows that write SEQ), or None for a
        query without; None writes QUAL ``*``.

    Examples
    --------
    >>> rows = AlignedRows(np.array(["q"], object), np.array([6]), np.array(["t"], object),
    ...                    np.array([9]), np.array([8]), np.array([1]), np.array([5]),
    ...                    np.array([2]), np.array([6]), np.array(["4="], object), "local")
    >>> "".join(sam_lines(rows, PrintOptions()))
    'q\\t0\\tt\\t3\\t255\\t1S4=1S\\t*\\t0\\t0\\t*\\t*\\tAS:i:8\\tNM:i:0\\n'
    >>> import dataclasses
    >>> read = dataclasses.replace(rows, query_sequence=lambda i: "GACGTA",
    ...                            query_quality=lambda i: "II#III")
    >>> "".join(sam_lines(read, PrintOptions())).split("\\t")[9:11]
    ['GACGTA', 'II#III']
    >>> "".join(paf_lines(rows, PrintOptions(cigar_m=True)))
    'q\\t6\\t1\\t5\\t+\\tt\\t9\\t2\\t6\\t4\\t4\\t255\\tNM:i:0\\tAS:i:8\\tcg:Z:4M\\n'
    """

    query_name: np.ndarray
    query_length: np.ndarray
    target_name: np.ndarray
    target_length: np.ndarray
    score: np.ndarray
    query_start: np.ndarray
    query_end: np.ndarray
    target_start: np.ndarray
    target_end: np.ndarray
    cigar: np.ndarray
    mode: str
    query_sequence: Callable[[int], str] | None = None
    evalue: np.ndarray | None = None
    bitscore: np.ndarray | None = None
    primary: np.ndarray | None = None
    query_quality: Callable[[int], str | None] | None = None

    def __len__(self) -> int:
        return len(self.query_name)


@dataclass(frozen=True)
class PrintOptions:
    """How the printers write alignments.

    Attributes
    ----------
    cigar_m : bool
        Write ``M`` for the runs of ``=`` and ``X`` (SAM's CIGAR and PAF's ``cg:Z:``), as
        tools that predate the extended CIGAR read it.
    command : str, optional
        The command line that made the output (SAM's ``@PG CL:``).
    columns : tuple of str, optional
        The tabular columns to print (names of ``swath.TSV_COLUMNS``), in order; None:
        the format's own.

    Examples
    --------
    >>> PrintOptions(cigar_m=True)
    PrintOptions(cigar_m=True, command=None, columns=None)
    """

    cigar_m: bool = False
    command: str | None = None
    columns: tuple[str, ...] | None = None


def cigar_columns(cigar: np.ndarray) -> dict[str, np.ndarray]:
    """Counts of each row's CIGAR, in numpy: ``length`` (alignment columns), ``matches``,
    ``mismatches``, ``gap_opens`` (runs of I or D), ``identity`` (matches over columns,
    0.0 without columns) and ``edit_distance`` (mismatches and gap residues: SAM's
    ``NM``).

    Examples
    --------
    >>> c = cigar_columns(np.array(["3=1X2I4=", ""], dtype=object))
    >>> c["length"].tolist(), c["edit_distance"].tolist(), c["identity"].tolist()
    ([10, 0], [3, 0], [0.7, 0.0])
    """
    counts = cigar_counts(cigar)
    length, matches = counts["columns"], counts["matches"]
    identity = np.divide(matches, length, out=np.zeros(len(length)), where=length > 0)
    return {"length": length, "matches": matches, "mismatches": counts["mismatches"],
            "gap_opens": counts["gap_opens"], "identity": identity,
            "edit_distance": length - matches}


def sam_header(references: tuple[np.ndarray, np.ndarray], command: str | None
               ) -> Iterator[str]:
    """SAM's header: ``@HD``, one ``@SQ`` per distinct reference name (in the order they
    first appear), ``@PG`` (with ``CL:`` when ``command`` is given).

    Parameters
    ----------
    references : (numpy.ndarray, numpy.ndarray)
        The targets' names (str) and lengths, once or more each.
    command : str or None
        The command line that made the alignments.

    Raises
    ------
    InvalidInput
        A name given with two lengths (SAM holds one length a reference).

    Examples
    --------
    >>> header = "".join(sam_header((np.array(["b", "a", "b"]), np.array([5, 3, 5])), None))
    >>> header.splitlines()[:3]
    ['@HD\\tVN:1.6\\tSO:unsorted', '@SQ\\tSN:b\\tLN:5', '@SQ\\tSN:a\\tLN:3']
    """
    names, lengths = (np.asarray(a) for a in references)
    # each name's first length (of equal keys, a dict keeps the last value given)
    first = dict(zip(names[::-1].tolist(), lengths[::-1].tolist(), strict=True))
    known = np.fromiter(map(first.__getitem__, names.tolist()), np.int64, len(names))
    differ = np.flatnonzero(known != lengths)
    if len(differ):
        name = names[differ[0]]
        raise InvalidInput(f"reference {name!r} is given with two lengths, {first[name]} and "
                           f"{int(lengths[differ[0]])}: SAM holds one length per reference")
    yield f"@HD\tVN:{SAM_VERSION}\tSO:unsorted\n"
    items = [(name, first[name]) for name in dict.fromkeys(names.tolist())]
    for at in range(0, len(items), BLOCK_ROWS):
        yield "".join(f"@SQ\tSN:{name}\tLN:{length}\n"
                      for name, length in items[at:at + BLOCK_ROWS])
    program = f"@PG\tID:swath\tPN:swath\tVN:{__version__}"
    if command is not None:
        program += "\tCL:" + " ".join(command.split())     # one line, no tabs
    yield program + "\n"


def _mapped(rows: AlignedRows) -> npt.NDArray[np.bool_]:
    return np.fromiter(map(len, rows.cigar), np.int64, len(rows)) > 0


def primary_rows(rows: AlignedRows, mapped: npt.NDArray[np.bool_] | None = None
                 ) -> npt.NDArray[np.bool_]:
    """Each query name's primary row: its highest-scoring row with an alignment, the first
    of equal ones (a name without any: its first row).

    Examples
    --------
    >>> rows = AlignedRows(np.array(["a", "b", "a", "a"], object), *[np.zeros(4)] * 3,
    ...                    np.array([5, 1, 7, 7]), *[np.zeros(4)] * 4,
    ...                    np.array(["1=", "", "1=", "1="], object), "local")
    >>> primary_rows(rows).tolist()
    [False, True, True, False]
    """
    n = len(rows)
    mapped = _mapped(rows) if mapped is None else mapped
    group = _name_groups(np.asarray(rows.query_name))
    # by group (stably: rows in order), then each group's best key and its first row
    key = np.where(mapped, np.asarray(rows.score, np.int64), np.iinfo(np.int64).min)
    order = np.argsort(group, kind="stable")
    g, k = group[order], key[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    best = np.repeat(np.maximum.reduceat(k, starts), np.diff(np.r_[starts, n]))
    hits = np.flatnonzero(k == best)
    firsts = hits[np.r_[True, g[hits][1:] != g[hits][:-1]]]
    primary = np.zeros(n, dtype=bool)
    primary[order[firsts]] = True
    return primary


def _name_groups(names: np.ndarray) -> npt.NDArray[np.int64]:
    """A number per distinct name, for each row: the run of equal names it is in where
    each name is one run (rows by query, the usual order), else by hashing them all."""
    if not len(names):
        return np.zeros(0, dtype=np.int64)
    change = np.r_[True, names[1:] != names[:-1]]
    heads = names[change].tolist()
    if len(set(heads)) == len(heads):
        return np.cumsum(change) - 1
    listed = names.tolist()
    last = dict(zip(listed, range(len(listed)), strict=True))   # a name's last row
    return np.fromiter(map(last.__getitem__, listed), np.int64, len(listed))


def _cigar_text(cigar: np.ndarray, runs: CigarRunArrays, cigar_m: bool) -> Ragged:
    """The CIGARs as written: as given, or with runs of ``=`` and ``X`` merged into ``M``
    (``runs``: the CIGARs read)."""
    if not cigar_m:
        return encoded(cigar)
    ops = np.where((runs.ops == ord("=")) | (runs.ops == ord("X")), np.uint8(ord("M")),
                   runs.ops)
    starts = np.r_[True, ops[1:] != ops[:-1]] if len(ops) else np.zeros(0, dtype=bool)
    starts[runs.first[:-1][runs.first[:-1] < len(ops)]] = True     # each CIGAR's first run
    at = np.flatnonzero(starts)
    lengths = np.add.reduceat(runs.lengths, at) if len(at) else runs.lengths
    first = np.r_[0, np.cumsum(starts)][runs.first]
    return decimal(lengths, suffix=ops[at]).grouped(first)


def _clip(residues: np.ndarray) -> Ragged:
    """``{n}S`` where ``n`` > 0, else nothing."""
    return decimal(residues, suffix=np.full(len(residues), ord("S"), np.uint8)
                   ).where(residues > 0)


def _blocks(rows: AlignedRows) -> Iterator[slice]:
    for at in range(0, len(rows), BLOCK_ROWS):
        yield slice(at, min(at + BLOCK_ROWS, len(rows)))


def sam_qnames(names: np.ndarray) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """``names`` as SAM's QNAME field allows them (1 to 254 of the characters ``!`` to
    ``?`` and ``A`` to ``~``): a name that is not one written with each other character
    as ``_`` and cut at 254 characters; with the names so rewritten, (before, after).

    Examples
    --------
    >>> names, rewritten = sam_qnames(np.array(["r1", "r@2 x"], dtype=object))
    >>> names.tolist(), rewritten
    (['r1', 'r_2_x'], [('r@2 x', 'r_2_x')])
    """
    bad = [i for i, name in enumerate(names.tolist()) if not _QNAME.fullmatch(name)]
    if not bad:
        return names, []
    out = names.astype(object)
    for i in bad:
        out[i] = _NOT_QNAME.sub("_", str(names[i]))[:QNAME_LENGTH] or "_"
    return out, [(str(names[i]), str(out[i])) for i in bad]


def sam_quals(quality: Callable[[int], str | None], first: int, letters: list[str]
              ) -> tuple[list[str], int]:
    """SAM's QUAL of rows ``first``, ``first + 1``, ... whose SEQ is ``letters``: the
    row's base qualities (``quality``) where it writes SEQ and they are a QUAL (one of
    the characters ``!`` to ``~`` a base), else ``*``; and how many were not a QUAL.

    Examples
    --------
    >>> sam_quals({0: "I#", 2: "I I"}.get, 0, ["AC", "*", "ACG"])
    (['I#', '*', '*'], 1)
    """
    found, refused = [], 0
    for i, seq in enumerate(letters, first):
        qual = None if seq == "*" else quality(i)
        if qual is not None and (len(qual) != len(seq) or not _QUAL.fullmatch(qual)):
            qual, refused = None, refused + 1
        found.append("*" if qual is None else qual)
    return found, refused


def sam_lines(rows: AlignedRows, options: PrintOptions) -> Iterator[str]:
    """SAM records of ``rows``, one a row, without the header (:func:`sam_header`); query
    names as SAM allows them (:func:`sam_qnames`); base qualities that are no QUAL
    written as ``*`` (:func:`sam_quals`), with a warning."""
    mapped = _mapped(rows)
    primary = primary_rows(rows, mapped) if rows.primary is None else rows.primary
    flag = np.where(mapped, np.where(primary, 0, SECONDARY), UNMAPPED)
    sequence, quality = rows.query_sequence, rows.query_quality
    rewritten: list[tuple[str, str]] = []
    unwritten = 0
    for b in _blocks(rows):
        on = mapped[b]
        runs = cigar_run_arrays(rows.cigar[b])
        counts = cigar_counts(runs)
        qs, qe = (np.asarray(a[b], np.int64) for a in (rows.query_start, rows.query_end))
        tail = np.asarray(rows.query_length[b], np.int64) - qe
        cigar = joined([_clip(np.where(on, qs, 0)),
                        _cigar_text(rows.cigar[b], runs, options.cigar_m),
                        _clip(np.where(on, tail, 0))])
        star = encoded(["*"] * len(on))
        letters = None if sequence is None else [
            sequence(i) if first else "*"
            for i, first in zip(range(b.start, b.stop), primary[b].tolist(), strict=True)]
        seq = star if letters is None else encoded(letters)
        qual = star
        if letters is not None and quality is not None:
            quals, refused = sam_quals(quality, b.start, letters)
            qual, unwritten = encoded(quals), unwritten + refused
        tags = joined(["\tAS:i:", decimal(rows.score[b]), "\tNM:i:",
                       decimal(counts["columns"] - counts["matches"])]).where(on)
        qnames, renamed = sam_qnames(np.asarray(rows.query_name[b], dtype=object))
        rewritten += renamed
        yield joined([encoded(qnames), "\t", decimal(flag[b]), "\t",
                      encoded(np.where(on, rows.target_name[b], "*")), "\t",
                      decimal(np.where(on, np.asarray(rows.target_start[b]) + 1, 0)), "\t",
                      decimal(np.where(on, MAPQ, 0)), "\t", _either(on, cigar, star),
                      "\t*\t0\t0\t", seq, "\t", qual, tags, "\n"]).text()
    if rewritten:
        logger.warning("%d query name%s not a SAM QNAME (1 to %d of the characters ! to ? "
                       "and A to ~): written with each other character as _ and cut at %d "
                       "(%r as %r)", len(rewritten), " is" if len(rewritten) == 1 else "s are",
                       QNAME_LENGTH, QNAME_LENGTH, *(name[:60] for name in rewritten[0]))
    if unwritten:
        logger.warning("%d quer%s base qualities not a SAM QUAL (one of the characters ! to ~ "
                       "a base): written as *", unwritten, "y's" if unwritten == 1 else "ies'")


def _either(on: npt.NDArray[np.bool_], yes: Ragged, no: Ragged) -> Ragged:
    """``yes`` where ``on``, else ``no``."""
    return joined([yes.where(on), no.where(~on)])


def paf_lines(rows: AlignedRows, options: PrintOptions) -> Iterator[str]:
    """PAF lines of the ``rows`` with an alignment, as ``minimap2 -c --eqx`` writes them
    (``M`` for ``=`` and ``X`` with ``cigar_m``)."""
    mapped = _mapped(rows)
    for b in _blocks(rows):
        keep = np.flatnonzero(mapped[b]) + b.start
        if not len(keep):
            continue
        cigar = rows.cigar[keep]
        runs = cigar_run_arrays(cigar)
        counts = cigar_counts(runs)
        yield joined([encoded(rows.query_name[keep]), "\t", decimal(rows.query_length[keep]),
                      "\t", decimal(rows.query_start[keep]), "\t", decimal(rows.query_end[keep]),
                      "\t+\t", encoded(rows.target_name[keep]), "\t",
                      decimal(rows.target_length[keep]), "\t", decimal(rows.target_start[keep]),
                      "\t", decimal(rows.target_end[keep]), "\t", decimal(counts["matches"]),
                      "\t", decimal(counts["columns"]), f"\t{MAPQ}\tNM:i:",
                      decimal(counts["columns"] - counts["matches"]), "\tAS:i:",
                      decimal(rows.score[keep]), "\tcg:Z:",
                      _cigar_text(cigar, runs, options.cigar_m), "\n"]).text()


def blast_evalue(value: float) -> str:
    """An e-value as BLAST+'s tabular output (``-outfmt 6``) prints it.

    ``CBlastTabularInfo::SetScores`` (NCBI's ``tabular.cpp``), over
    ``CAlignFormatUtil::GetScoreString``: ``0.0`` below 1e-180, ``%.2e`` below 0.0009,
    then three, two, one and no decimals below 0.1, 1 and 10 and from 10 on.

    Examples
    --------
    >>> [blast_evalue(v) for v in (1e-200, 1.434e-110, 8.9e-4, 0.0463, 0.4347, 9.96, 1940.2)]
    ['0.0', '1.43e-110', '8.90e-04', '0.046', '0.43', '10.0', '1940']
    """
    if value < 1.0e-180:
        return "0.0"
    if value < 0.0009:
        return f"{value:.2e}"
    if value < 0.1:
        return f"{value:.3f}"
    if value < 1.0:
        return f"{value:.2f}"
    if value < 10.0:
        return f"{value:.1f}"
    return f"{value:.0f}"


def blast_bitscore(value: float) -> str:
    """A bit score as BLAST+'s tabular output prints it (``GetScoreString``): ``%4.1f``
    (space-padded to 4 characters) up to 99.9, then the integer part (truncated, not
    rounded; ``%3d``, so that 99.94 prints `` 99``), and ``%.3e`` beyond 99999.

    Examples
    --------
    >>> [blast_bitscore(v) for v in (8.81, 87.84, 99.94, 302.9, 15614.2, 102800.4)]
    [' 8.8', '87.8', ' 99', '302', '15614', '1.028e+05']
    """
    if value > 99999:
        return f"{value:.3e}"
    if value > 99.9:
        return f"{int(value):3d}"
    return f"{value:4.1f}"


def _formatted(write: Callable[[float], str], values: np.ndarray | None, rows: int) -> Ragged:
    """Floats by ``write``; empty cells for NaN, or for every row without values."""
    if values is None:
        return encoded([""] * rows)
    return encoded(["" if v != v else write(v) for v in values.tolist()])


def tabular_lines(rows: AlignedRows, columns: tuple[str, ...] = TABULAR_COLUMNS
                  ) -> Iterator[str]:
    """Tabular rows, tab-separated, of ``columns`` (names of :data:`COLUMNS`): identity in
    percent (3 decimals), 1-based inclusive coordinates, e-value and bit score as BLAST+
    prints them (:func:`blast_evalue`, :func:`blast_bitscore`), empty where there is
    none; ``slen`` needs ``rows.target_length``."""
    for b in _blocks(rows):
        cells = _tabular_cells(rows, b)
        pieces: list[Ragged | str] = []
        for name in columns:
            pieces += [cells[name](), "\t"]
        pieces[-1] = "\n"
        yield joined(pieces).text()


def _tabular_cells(rows: AlignedRows, b: slice) -> dict[str, Callable[[], Ragged]]:
    """Each column of :data:`COLUMNS` for the rows ``b``, written when called."""
    n = b.stop - b.start
    counted: list[dict[str, np.ndarray]] = []

    def count(name: str) -> np.ndarray:
        if not counted:
            counted.append(cigar_columns(rows.cigar[b]))
        return counted[0][name]

    def plus_one(values: np.ndarray) -> Ragged:
        return decimal(np.asarray(values, np.int64) + 1)

    def cover() -> Ragged:
        aligned = np.asarray(rows.query_end[b], np.int64) - rows.query_start[b]
        return decimal(np.floor(0.5 + 100 * aligned / np.maximum(rows.query_length[b], 1))
                       .astype(np.int64))

    return {
        "qseqid": lambda: encoded(rows.query_name[b]),
        "sseqid": lambda: encoded(rows.target_name[b]),
        "pident": lambda: encoded([f"{100 * v:.3f}" for v in count("identity").tolist()]),
        "length": lambda: decimal(count("length")),
        "mismatch": lambda: decimal(count("mismatches")),
        "gapopen": lambda: decimal(count("gap_opens")),
        "qstart": lambda: plus_one(rows.query_start[b]),
        "qend": lambda: decimal(rows.query_end[b]),
        "sstart": lambda: plus_one(rows.target_start[b]),
        "send": lambda: decimal(rows.target_end[b]),
        "evalue": lambda: _formatted(blast_evalue, None if rows.evalue is None
                                     else rows.evalue[b], n),
        "bitscore": lambda: _formatted(blast_bitscore, None if rows.bitscore is None
                                       else rows.bitscore[b], n),
        "score": lambda: decimal(rows.score[b]),
        "nident": lambda: decimal(count("matches")),
        "gaps": lambda: decimal(count("length") - count("matches") - count("mismatches")),
        "qlen": lambda: decimal(rows.query_length[b]),
        "slen": lambda: decimal(rows.target_length[b]),
        "qcovhsp": cover,
        "cigar": lambda: encoded(rows.cigar[b]),
    }


def tabular_format(format: str) -> tuple[str, tuple[str, ...] | None]:
    """A format as a printer's name and the tabular columns it names: ``"tsv"`` or
    ``"6"`` followed by names of :data:`COLUMNS` (blastp's ``-outfmt "6 qseqid ..."``)
    is ``("tsv", columns)``; ``"tsv"`` or ``"6"`` alone, or any other format, has None.

    Raises
    ------
    InvalidParameter
        A named column is not one of :data:`COLUMNS`, or another format names columns.

    Examples
    --------
    >>> tabular_format("6 qseqid sseqid score cigar")
    ('tsv', ('qseqid', 'sseqid', 'score', 'cigar'))
    >>> tabular_format("6"), tabular_format("sam")
    (('tsv', None), ('sam', None))
    """
    name, *columns = format.split()
    if name in TABULAR_NAMES:
        name = "tsv"
    if not columns:
        return name, None
    if name != "tsv":
        raise InvalidParameter(f"format {format!r}: only a tabular format (tsv, or blastp's "
                               "6) names columns")
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise InvalidParameter(f"format {format!r}: no column {unknown[0]!r}; the columns "
                               f"are {' '.join(COLUMNS)}")
    return name, tuple(columns)
