"""Text views of one alignment: the EMBOSS-style header and the pairwise rows.

Pure functions of an :class:`~swath.alignment.Alignment`, the encoded query and
target it was computed from, and the :class:`~swath.scoring.Scoring` it was scored
with; they return strings and print nothing, so every command that shows an
alignment (``swath align``, ``swath inspect``) formats it the same way.

The middle line of the pairwise view marks each column as EMBOSS does: ``|`` for
identical residues, ``:`` for a different pair with a positive score, ``.`` for a
pair that scores zero or less, and a space where one side is a gap. Coordinates in
the view are 1-based and inclusive, as EMBOSS prints them; the
:class:`~swath.alignment.Alignment` itself stays 0-based and end-exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from swath.alignment import Alignment, cigar_runs
from swath.errors import InvalidParameter
from swath.scoring import Scoring

__all__ = [
    "RECORD_FIELDS",
    "AlignmentSummary",
    "aligned_rows",
    "alignment_record",
    "alignment_summary",
    "dot_plot",
    "format_text",
    "pairwise_lines",
    "path_vertices",
    "summary_lines",
]

#: The fields of :func:`alignment_record`, in output order (JSON keys, TSV columns).
RECORD_FIELDS: tuple[str, ...] = (
    "query_name", "target_name", "score", "query_start", "query_end", "target_start",
    "target_end", "cigar", "identity", "mode",
)

_MODE_NAMES = {
    "local": "local (Smith-Waterman)",
    "global": "global (Needleman-Wunsch)",
    "semiglobal": "semiglobal (whole query, free end gaps in the target)",
}
_NAME_WIDTH = 20  # longer names are cut in the pairwise view
_GAP = ord("-")


@dataclass(frozen=True)
class _Columns:
    """Per alignment column: residue indices and whether each side is a gap."""

    query_index: np.ndarray  # int64; meaningless where query_gap
    target_index: np.ndarray  # int64; meaningless where target_gap
    query_gap: np.ndarray  # bool
    target_gap: np.ndarray  # bool


def _columns(alignment: Alignment, query: np.ndarray, target: np.ndarray) -> _Columns:
    """Expand the CIGAR into columns, checking it against the coordinates and sequences."""
    runs = cigar_runs(alignment.cigar)
    if "".join(f"{n}{op}" for n, op in runs) != alignment.cigar:
        raise InvalidParameter(f"alignment CIGAR {alignment.cigar!r} is not an extended CIGAR "
                               "of = X I D runs")
    lengths = np.array([n for n, _ in runs], dtype=np.int64)
    ops = np.repeat(np.frombuffer("".join(op for _, op in runs).encode("ascii"), np.uint8),
                    lengths)
    query_gap = ops == ord("D")
    target_gap = ops == ord("I")
    query_index = alignment.query_start + np.cumsum(~query_gap) - 1
    target_index = alignment.target_start + np.cumsum(~target_gap) - 1
    for side, start, end, gaps, size in (
        ("query", alignment.query_start, alignment.query_end, query_gap, len(query)),
        ("target", alignment.target_start, alignment.target_end, target_gap, len(target)),
    ):
        used = int(np.count_nonzero(~gaps))
        if used != end - start:
            raise InvalidParameter(
                f"alignment CIGAR {alignment.cigar!r} covers {used} {side} residues but "
                f"{side}_end - {side}_start is {end - start}"
            )
        if not 0 <= start <= end <= size:
            raise InvalidParameter(
                f"alignment {side} range {start}:{end} is outside the {side} "
                f"({size} residues)"
            )
    return _Columns(query_index, target_index, query_gap, target_gap)


def _codes(codes: Any, scoring: Scoring, what: str) -> np.ndarray:
    array = np.asarray(codes)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise InvalidParameter(f"{what} must be a 1-D array of residue codes, got "
                               f"{array.dtype} of shape {array.shape}")
    size = len(scoring.alphabet.letters)
    if array.size and (array.min() < 0 or array.max() >= size):
        raise InvalidParameter(f"{what} holds codes outside 0..{size - 1} of the scoring's "
                               "alphabet")
    return array.astype(np.intp, copy=False)


def _letters(codes: np.ndarray, index: np.ndarray, gap: np.ndarray, scoring: Scoring
             ) -> np.ndarray:
    """ASCII bytes of one gapped row."""
    alphabet = np.frombuffer(scoring.alphabet.letters.encode("ascii"), dtype=np.uint8)
    row = alphabet[codes[np.where(gap, 0, index)]] if len(codes) else np.zeros(len(gap), np.uint8)
    row[gap] = _GAP
    return row


def _marks(codes_q: np.ndarray, codes_t: np.ndarray, cols: _Columns, scoring: Scoring
           ) -> np.ndarray:
    """ASCII bytes of the middle line: ``|``, ``:``, ``.`` or space per column."""
    paired = ~(cols.query_gap | cols.target_gap)
    marks = np.full(len(paired), ord(" "), dtype=np.uint8)
    q = codes_q[cols.query_index[paired]]
    t = codes_t[cols.target_index[paired]]
    scores = scoring.matrix[q, t]
    marks[paired] = np.where(q == t, ord("|"), np.where(scores > 0, ord(":"), ord(".")))
    return marks


def aligned_rows(alignment: Alignment, query: np.ndarray, target: np.ndarray,
                 scoring: Scoring) -> tuple[str, str, str]:
    """The aligned part of both sequences as gapped rows, with the middle line.

    Parameters
    ----------
    alignment : Alignment
        An alignment of ``query`` against ``target``.
    query, target : numpy.ndarray
        The whole sequences as codes of ``scoring.alphabet`` (not only the aligned parts).
    scoring : Scoring
        The scheme the alignment was computed with (for the letters and the ``:`` marks).

    Returns
    -------
    tuple of str
        ``(query_row, middle, target_row)``, all as long as the alignment; gaps are ``-``
        in the rows and spaces in the middle line.

    Raises
    ------
    InvalidParameter
        The CIGAR does not match the coordinates, or the coordinates or codes do not
        fit the sequences.

    Examples
    --------
    >>> from swath import Alignment, Scoring
    >>> sc = Scoring.protein("BLOSUM62", 11, 1)
    >>> aln = Alignment(11, 0, 5, 0, 4, "2=1I1X1=", "global")
    >>> aligned_rows(aln, sc.alphabet.encode("HEAGW"), sc.alphabet.encode("HEDW"), sc)
    ('HEAGW', '|| .|', 'HE-DW')
    """
    codes_q = _codes(query, scoring, "query")
    codes_t = _codes(target, scoring, "target")
    cols = _columns(alignment, codes_q, codes_t)
    return (
        _letters(codes_q, cols.query_index, cols.query_gap, scoring).tobytes().decode("ascii"),
        _marks(codes_q, codes_t, cols, scoring).tobytes().decode("ascii"),
        _letters(codes_t, cols.target_index, cols.target_gap, scoring).tobytes().decode("ascii"),
    )


@dataclass(frozen=True)
class AlignmentSummary:
    """Counts over the columns of one alignment, as EMBOSS water/needle report them.

    Attributes
    ----------
    score : int
        The alignment score.
    length : int
        Alignment columns (pairs and gap positions).
    identities : int
        Columns pairing identical residues (``|``).
    similarities : int
        Columns pairing identical residues or residues with a positive score
        (``|`` and ``:``).
    gaps : int
        Columns where one side is a gap (gap positions, not gap openings).
    gap_opens : int
        Gaps (runs of gap positions on one side).
    query_range, target_range : tuple of int or None
        The aligned residues, 1-based and inclusive, or None when that side is empty.
    """

    score: int
    length: int
    identities: int
    similarities: int
    gaps: int
    gap_opens: int
    query_range: tuple[int, int] | None
    target_range: tuple[int, int] | None


def alignment_summary(alignment: Alignment, query: np.ndarray, target: np.ndarray,
                      scoring: Scoring) -> AlignmentSummary:
    """Count identities, similarities and gaps of one alignment.

    Parameters
    ----------
    alignment : Alignment
        An alignment of ``query`` against ``target``.
    query, target : numpy.ndarray
        The whole sequences as codes of ``scoring.alphabet``.
    scoring : Scoring
        The scheme the alignment was computed with.

    Returns
    -------
    AlignmentSummary
        Length, identities, similarities, gaps and 1-based inclusive ranges.

    Examples
    --------
    >>> from swath import Alignment, Scoring
    >>> sc = Scoring.protein("BLOSUM62", 11, 1)
    >>> aln = Alignment(11, 0, 5, 0, 4, "2=1I1X1=", "global")
    >>> s = alignment_summary(aln, sc.alphabet.encode("HEAGW"), sc.alphabet.encode("HEDW"), sc)
    >>> s.identities, s.similarities, s.gaps, s.query_range, s.target_range
    (3, 3, 1, (1, 5), (1, 4))
    """
    _, middle, _ = aligned_rows(alignment, query, target, scoring)

    def span(start: int, end: int) -> tuple[int, int] | None:
        return (start + 1, end) if end > start else None

    return AlignmentSummary(
        score=int(alignment.score),
        length=len(middle),
        identities=middle.count("|"),
        similarities=middle.count("|") + middle.count(":"),
        gaps=middle.count(" "),
        gap_opens=alignment.gap_opens,
        query_range=span(alignment.query_start, alignment.query_end),
        target_range=span(alignment.target_start, alignment.target_end),
    )


def _fraction(count: int, total: int) -> str:
    percent = 100.0 * count / total if total else 0.0
    return f"{count}/{total} ({percent:.1f}%)"


def summary_lines(alignment: Alignment, query: np.ndarray, target: np.ndarray,
                  scoring: Scoring, *, query_name: str = "query", target_name: str = "target"
                  ) -> list[str]:
    """The header block of the text view, one ``# Key: value`` line each.

    Parameters
    ----------
    alignment : Alignment
        An alignment of ``query`` against ``target``.
    query, target : numpy.ndarray
        The whole sequences as codes of ``scoring.alphabet``.
    scoring : Scoring
        The scheme the alignment was computed with.
    query_name, target_name : str
        The ids to print.

    Returns
    -------
    list of str
        Ids and lengths, mode, matrix, gap costs, score, length, identity,
        similarity, gaps, 1-based inclusive ranges and the CIGAR.

    Examples
    --------
    >>> from swath import Alignment, Scoring
    >>> sc = Scoring.protein("BLOSUM62", 11, 1)
    >>> aln = Alignment(11, 0, 5, 0, 4, "2=1I1X1=", "global")
    >>> for line in summary_lines(aln, sc.alphabet.encode("HEAGW"),
    ...                           sc.alphabet.encode("HEDW"), sc)[5:10]:
    ...     print(line)
    # Score:        11
    # Length:       5
    # Identity:     3/5 (60.0%)
    # Similarity:   3/5 (60.0%)
    # Gaps:         1/5 (20.0%)
    """
    summary = alignment_summary(alignment, query, target, scoring)

    def span(bounds: tuple[int, int] | None, size: int) -> str:
        text = "none" if bounds is None else f"{bounds[0]}-{bounds[1]}"
        return f"{text} of {size}"

    g, e = scoring.gap_open, scoring.gap_extend
    rows = [
        ("Query", f"{query_name} ({len(query)} residues)"),
        ("Target", f"{target_name} ({len(target)} residues)"),
        ("Mode", _MODE_NAMES.get(alignment.mode, alignment.mode)),
        ("Matrix", scoring.name),
        ("Gap costs", f"open {g}, extend {e} (a gap of length k costs {g} + k * {e})"),
        ("Score", str(summary.score)),
        ("Length", str(summary.length)),
        ("Identity", _fraction(summary.identities, summary.length)),
        ("Similarity", _fraction(summary.similarities, summary.length)),
        ("Gaps", _fraction(summary.gaps, summary.length)),
        ("Query range", f"{span(summary.query_range, len(query))} (1-based, inclusive)"),
        ("Target range", f"{span(summary.target_range, len(target))} (1-based, inclusive)"),
        ("CIGAR", alignment.cigar or "(empty)"),
    ]
    return [f"# {key + ':':<13} {value}" for key, value in rows]


def pairwise_lines(alignment: Alignment, query: np.ndarray, target: np.ndarray,
                   scoring: Scoring, width: int = 60, *, query_name: str = "query",
                   target_name: str = "target") -> list[str]:
    """The pairwise view in blocks of ``width`` columns, as EMBOSS water/needle print it.

    Each block is three lines: the query row, the middle line and the target row,
    each row between the 1-based positions of its first and last residue (a row
    of gaps only shows its start one past its end, as EMBOSS does). Blocks are
    separated by an empty line.

    Parameters
    ----------
    alignment : Alignment
        An alignment of ``query`` against ``target``.
    query, target : numpy.ndarray
        The whole sequences as codes of ``scoring.alphabet``.
    scoring : Scoring
        The scheme the alignment was computed with.
    width : int
        Alignment columns per block.
    query_name, target_name : str
        The ids printed at the start of the rows (cut to 20 characters).

    Returns
    -------
    list of str
        The lines, without newlines; empty for an empty alignment.

    Examples
    --------
    >>> from swath import Alignment, Scoring
    >>> sc = Scoring.protein("BLOSUM62", 11, 1)
    >>> aln = Alignment(11, 0, 5, 0, 4, "2=1I1X1=", "global")
    >>> for line in pairwise_lines(aln, sc.alphabet.encode("HEAGW"),
    ...                            sc.alphabet.encode("HEDW"), sc, width=3,
    ...                            query_name="q", target_name="t"):
    ...     print(line)
    q 1 HEA 3
        ||
    t 1 HE- 2
    <BLANKLINE>
    q 4 GW 5
        .|
    t 3 DW 4
    """
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
        raise InvalidParameter(f"width must be a positive integer, got {width!r}")
    top, middle, bottom = aligned_rows(alignment, query, target, scoring)
    if not middle:
        return []
    names = [name[:_NAME_WIDTH] for name in (query_name, target_name)]
    name_width = max(len(name) for name in names)
    position = [alignment.query_start, alignment.target_start]  # residues before the block
    blocks = []  # (offset, [(start, row, end) for query and target])
    for offset in range(0, len(middle), int(width)):
        rows = []
        for side, row in enumerate((top[offset:offset + width], bottom[offset:offset + width])):
            start = position[side] + 1
            position[side] += len(row) - row.count("-")
            rows.append((start, row, position[side]))
        blocks.append((offset, rows))
    number_width = max(len(str(n)) for _, rows in blocks for start, _, end in rows
                       for n in (start, end))
    indent = " " * (name_width + number_width + 2)
    lines: list[str] = []
    for offset, rows in blocks:
        if lines:
            lines.append("")
        marks = indent + middle[offset:offset + width]
        # Trailing spaces are dropped, unless the whole line is gaps (it must not look empty).
        marks = marks.rstrip() or marks
        (q_start, q_row, q_end), (t_start, t_row, t_end) = rows
        lines += [
            f"{names[0]:<{name_width}} {q_start:>{number_width}} {q_row} {q_end:>{number_width}}",
            marks,
            f"{names[1]:<{name_width}} {t_start:>{number_width}} {t_row} {t_end:>{number_width}}",
        ]
    return lines


def format_text(alignment: Alignment, query: np.ndarray, target: np.ndarray, scoring: Scoring,
                *, query_name: str = "query", target_name: str = "target", width: int = 60
                ) -> str:
    """The whole text view: :func:`summary_lines`, an empty line, :func:`pairwise_lines`.

    Parameters
    ----------
    alignment, query, target, scoring
        As in :func:`pairwise_lines`.
    query_name, target_name : str
        The ids to print.
    width : int
        Alignment columns per block of the pairwise view.

    Returns
    -------
    str
        The lines joined with newlines, ending with one.

    Examples
    --------
    >>> from swath import Alignment, Scoring
    >>> sc = Scoring.protein("BLOSUM62", 11, 1)
    >>> aln = Alignment(11, 0, 5, 0, 4, "2=1I1X1=", "global")
    >>> text = format_text(aln, sc.alphabet.encode("HEAGW"), sc.alphabet.encode("HEDW"), sc)
    >>> print(text.splitlines()[-1])
    target 1 HE-DW 4
    """
    lines = summary_lines(alignment, query, target, scoring, query_name=query_name,
                          target_name=target_name)
    view = pairwise_lines(alignment, query, target, scoring, width, query_name=query_name,
                          target_name=target_name)
    if view:
        lines += ["", *view]
    else:
        lines += ["", "(empty alignment: no pair of residues scores above zero)"]
    return "\n".join(lines) + "\n"


def alignment_record(alignment: Alignment, query_name: str, target_name: str
                     ) -> dict[str, Any]:
    """One alignment as a flat record with the fields of :data:`RECORD_FIELDS`.

    Coordinates are 0-based and end-exclusive, as in :class:`~swath.alignment.Alignment`;
    ``identity`` is matches over alignment columns (0 to 1).

    Parameters
    ----------
    alignment : Alignment
        The alignment.
    query_name, target_name : str
        The names of the aligned sequences.

    Returns
    -------
    dict
        JSON-ready values keyed by field name, in :data:`RECORD_FIELDS` order.

    Examples
    --------
    >>> from swath import Alignment
    >>> alignment_record(Alignment(7, 0, 4, 0, 5, "2=1D2=", "local"), "q", "t")["identity"]
    0.8
    """
    return {
        "query_name": query_name,
        "target_name": target_name,
        "score": int(alignment.score),
        "query_start": int(alignment.query_start),
        "query_end": int(alignment.query_end),
        "target_start": int(alignment.target_start),
        "target_end": int(alignment.target_end),
        "cigar": alignment.cigar,
        "identity": float(alignment.identity),
        "mode": alignment.mode,
    }


def path_vertices(alignment: Alignment) -> np.ndarray:
    """(k, 2) int64 (target, query) positions where the alignment path turns.

    >>> path_vertices(Alignment(5, 1, 5, 0, 6, "2=1X2D1=", "local")).tolist()
    [[0, 1], [3, 4], [5, 4], [6, 5]]
    """
    runs = [(n, "M" if op in "=X" else op) for n, op in cigar_runs(alignment.cigar)]
    points = [(alignment.target_start, alignment.query_start)]
    last = None
    for n, op in runs:
        t, q = points[-1]
        step = (t + n, q + n) if op == "M" else (t + n, q) if op == "D" else (t, q + n)
        if op == last:
            points[-1] = step
        else:
            points.append(step)
        last = op
    return np.array(points, dtype=np.int64)


def dot_plot(alignment: Alignment, query_length: int, target_length: int, path: str, *,
             query_name: str = "query", target_name: str = "target") -> None:
    """Draw the alignment path over the whole matrix to an image file (matplotlib).

    Parameters
    ----------
    alignment : Alignment
        The alignment to draw.
    query_length, target_length : int
        The matrix's extent (the whole sequences).
    path : str
        The image file; its suffix picks the format (``.png``, ``.svg``, ``.pdf``).
    query_name, target_name : str
        Axis labels.

    Raises
    ------
    InvalidParameter
        matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidParameter("drawing needs matplotlib: pip install 'swath[plot]'") from None
    points = path_vertices(alignment)
    if len(points) > 200_000:            # more turns than pixels: keep every k-th
        points = np.concatenate([points[::len(points) // 100_000], points[-1:]])
    figure, axes = plt.subplots(figsize=(6, 6), dpi=150)
    axes.plot(points[:, 0], points[:, 1], linewidth=0.8, color="tab:blue")
    axes.set_xlim(0, max(target_length, 1))
    axes.set_ylim(max(query_length, 1), 0)
    axes.set_xlabel(f"{target_name} ({target_length:,} residues)")
    axes.set_ylabel(f"{query_name} ({query_length:,} residues)")
    axes.set_title(f"{alignment.mode} alignment, score {alignment.score:,}, "
                   f"identity {alignment.identity:.3f}", fontsize=9)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
