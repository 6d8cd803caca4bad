"""Options shared by every swath command, defined once and applied as decorators.

Scoring (``--matrix``, ``--dna``, ``--match``, ``--mismatch``, ``--gap-open``,
``--gap-extend``) is one decorator, :func:`scoring_options`, which hands the command
a ready :class:`~swath.scoring.Scoring`; the others (:func:`mode_option`,
:data:`wildcard_option`, :data:`device_option`, :data:`verbose_option`,
:data:`progress_option`) are single options.

The errors of the command line live here too: :class:`CommandError` prints one
line, ``swath: error: <message>``, and exits with status 2. :class:`SwathCommand`
and :class:`SwathGroup` turn every :class:`~swath.errors.SwathError` and every usage
error of click into one.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

import click

import swath
from swath.errors import InvalidParameter, SwathError

__all__ = [
    "CommandError",
    "SwathCommand",
    "SwathGroup",
    "build_scoring",
    "cigar_m_option",
    "cluster",
    "command_line",
    "device_option",
    "end_gap_options",
    "given_options",
    "mode_option",
    "overwrite_option",
    "progress_option",
    "rename_duplicates_option",
    "scoring_options",
    "setup_logging",
    "show_progress",
    "threads_option",
    "verbose_option",
    "wildcard_option",
]

F = TypeVar("F", bound=Callable[..., Any])

PROTEIN_GAPS = (11, 1)
DNA_GAPS = (5, 2)
DEFAULT_MATRIX = "BLOSUM62"
DEFAULT_MATCH = 2
DEFAULT_MISMATCH = -3

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------
# Errors


class CommandError(click.ClickException):
    """An error the user can fix: printed as one line ``swath: error: ...``, exit status 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        lines = [line.strip() for line in str(message).splitlines() if line.strip()]
        super().__init__("; ".join(lines) or "unknown error")

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"swath: error: {self.format_message()}", file=file, err=file is None)


def _usage_message(exc: click.UsageError) -> str:
    message = exc.format_message().rstrip(".")
    if exc.ctx is not None:
        message += f" (see '{exc.ctx.command_path} --help')"
    return message


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """Turn SwathErrors and click usage errors into :class:`CommandError`."""
    try:
        yield
    except (CommandError, click.exceptions.NoArgsIsHelpError):
        raise  # already one line / shows the help, as click does
    except click.UsageError as exc:
        raise CommandError(_usage_message(exc)) from None
    except SwathError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        if exc.errno not in _OS_ERRORS:
            raise
        raise CommandError(os_message(exc)) from None


# what the file system says, in one line: a full or read-only disk, permissions, paths
_OS_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
              errno.EEXIST, errno.ENOENT, errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY,
              errno.ENAMETOOLONG, errno.EFBIG, errno.EBUSY}


def os_message(exc: OSError) -> str:
    """``PATH: No space left on device`` (the path where the system names one)."""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        reason += (" (free space, then run the same command again, or `swath resume` on its "
                   "store: finished work is kept)")
    return f"{exc.filename}: {reason}" if exc.filename else reason


class _OneLineErrors(click.Command):
    """Parsing and invoking turn every error into one line on stderr and exit status 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        with _one_line_errors():
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_errors():
            return super().invoke(ctx)


class SwathCommand(_OneLineErrors):
    """A click command whose errors are one line on stderr and exit status 2."""


class SwathGroup(_OneLineErrors, click.Group):
    """A click group of :class:`SwathCommand` with the same one-line errors."""

    command_class = SwathCommand


# ---------------------------------------------------------------------------------
# Scoring


def _matrix_scoring(matrix: str, gap_open: int, gap_extend: int) -> swath.Scoring:
    """A named matrix, or an NCBI-format matrix file (an existing file or a path)."""
    is_path = os.path.isfile(matrix) or any(
        sep and sep in matrix for sep in (os.sep, os.altsep))
    try:
        if is_path:
            return swath.Scoring.from_file(matrix, gap_open, gap_extend)
        return swath.Scoring.protein(matrix, gap_open, gap_extend)
    except SwathError as exc:
        raise type(exc)(f"--matrix: {exc}") from None


def build_scoring(*, matrix: str | None = None, dna: bool = False, match: int | None = None,
                  mismatch: int | None = None, gap_open: int | None = None,
                  gap_extend: int | None = None) -> swath.Scoring:
    """The :class:`~swath.scoring.Scoring` that the parsed scoring options describe.

    ``None`` stands for an option the user did not give: the matrix is then
    BLOSUM62, match/mismatch 2/-3, and the gap costs 11/1 for protein or 5/2 with
    ``dna``. A gap of length k costs ``gap_open + k * gap_extend``.

    Parameters
    ----------
    matrix : str or None
        A matrix name known to Biopython (BLOSUM62, PAM30, ...) or the path of an
        NCBI-format matrix file. Not allowed with ``dna``.
    dna : bool
        Score DNA (alphabet ACGTN) with ``match``/``mismatch`` instead of a matrix.
    match, mismatch : int or None
        Scores of equal and different bases; only with ``dna``.
    gap_open, gap_extend : int or None
        Gap costs, both >= 0 and not both 0.

    Returns
    -------
    Scoring

    Raises
    ------
    InvalidParameter
        A value is out of range or options conflict; the message names the option.
    InputNotFound
        The matrix file does not exist.

    Examples
    --------
    >>> build_scoring(dna=True).gap_cost(1)
    7
    >>> build_scoring(matrix="PAM30", gap_open=9).score("W", "W")
    13
    """
    if dna and matrix is not None:
        raise InvalidParameter(
            "--matrix and --dna cannot be used together (--dna scores bases with "
            "--match and --mismatch)")
    if not dna and (match is not None or mismatch is not None):
        raise InvalidParameter("--match and --mismatch apply only with --dna "
                               "(protein scores come from --matrix)")
    default_open, default_extend = DNA_GAPS if dna else PROTEIN_GAPS
    gap_open = default_open if gap_open is None else gap_open
    gap_extend = default_extend if gap_extend is None else gap_extend
    for flag, value in (("--gap-open", gap_open), ("--gap-extend", gap_extend)):
        if value < 0:
            raise InvalidParameter(
                f"{flag} must be >= 0 (a gap of length k costs open + k * extend), got {value}")
    if gap_open == 0 and gap_extend == 0:
        raise InvalidParameter("--gap-open and --gap-extend are both 0: gaps would be free; "
                               "give --gap-extend >= 1")
    if not dna:
        return _matrix_scoring(DEFAULT_MATRIX if matrix is None else matrix, gap_open,
                               gap_extend)
    match = DEFAULT_MATCH if match is None else match
    mismatch = DEFAULT_MISMATCH if mismatch is None else mismatch
    if match <= 0:
        raise InvalidParameter(f"--match must be > 0, got {match}")
    if mismatch >= match:
        raise InvalidParameter(f"--mismatch must be below --match ({match}), got {mismatch}")
    return swath.Scoring.dna(match, mismatch, gap_open, gap_extend)


_SCORING_OPTIONS = (
    click.option(
        "--matrix", metavar="NAME|FILE", default=DEFAULT_MATRIX, show_default=True,
        help="Protein substitution matrix: a name (BLOSUM45/50/62/80/90, PAM30/70/250, ...) "
             "or the path of an NCBI-format matrix file. Not with --dna."),
    click.option(
        "--dna", is_flag=True, default=False,
        help="Align DNA (A, C, G, T, N) scored with --match/--mismatch instead of a matrix."),
    click.option(
        "--match", type=int, metavar="N", default=DEFAULT_MATCH, show_default=True,
        help="With --dna: score of two equal bases [score units]."),
    click.option(
        "--mismatch", type=int, metavar="N", default=DEFAULT_MISMATCH, show_default=True,
        help="With --dna: score of two different bases (or N) [score units]."),
    click.option(
        "--gap-open", type=int, metavar="N", default=None,
        show_default=f"{PROTEIN_GAPS[0]}, or {DNA_GAPS[0]} with --dna",
        help="Cost of opening a gap [score units]; a gap of length k costs "
             "open + k * extend."),
    click.option(
        "--gap-extend", type=int, metavar="N", default=None,
        show_default=f"{PROTEIN_GAPS[1]}, or {DNA_GAPS[1]} with --dna",
        help="Cost of each gap position [score units per residue]."),
)


def scoring_options(f: F) -> F:
    """Add the scoring options to a command; it receives ``scoring: Scoring`` instead.

    The options are ``--matrix``, ``--dna``, ``--match``, ``--mismatch``,
    ``--gap-open`` and ``--gap-extend``; :func:`build_scoring` turns them into one
    :class:`~swath.scoring.Scoring` when the command runs.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, matrix: str, dna: bool, match: int, mismatch: int,
                gap_open: int | None, gap_extend: int | None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()

        def given(name: str, value: Any) -> Any:
            source = ctx.get_parameter_source(name)
            return None if source in (None, click.ParameterSource.DEFAULT) else value

        scoring = build_scoring(matrix=given("matrix", matrix), dna=dna,
                                match=given("match", match), mismatch=given("mismatch", mismatch),
                                gap_open=gap_open, gap_extend=gap_extend)
        return f(*args, scoring=scoring, **kwargs)

    for option in reversed(_SCORING_OPTIONS):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


def end_gap_options(f: F) -> F:
    """Add ``--end-gap-open`` and ``--end-gap-extend`` (terminal gaps' costs, global mode)
    to a command decorated with :func:`scoring_options` (put this one below it); the
    command's ``scoring`` then carries them (``Scoring.with_end_gaps``)."""

    @functools.wraps(f)
    def wrapper(*args: Any, scoring: swath.Scoring, end_gap_open: int | None,
                end_gap_extend: int | None, **kwargs: Any) -> Any:
        if end_gap_open is not None or end_gap_extend is not None:
            scoring = scoring.with_end_gaps(
                scoring.gap_open if end_gap_open is None else end_gap_open,
                scoring.gap_extend if end_gap_extend is None else end_gap_extend)
        return f(*args, scoring=scoring, **kwargs)

    wrapper = click.option(
        "--end-gap-extend", type=int, metavar="N", default=None,
        show_default="--gap-extend",
        help="Global mode: cost of each position of a terminal gap (one touching either "
             "end of either sequence) [score units per residue].")(wrapper)
    wrapper = click.option(
        "--end-gap-open", type=int, metavar="N", default=None, show_default="--gap-open",
        help="Global mode: cost of opening a terminal gap [score units]; one of length k "
             "costs open + k * extend.")(wrapper)
    return wrapper  # type: ignore[return-value]


def given_options(*names: str) -> list[str]:
    """The options among ``names`` (parameter names) that the user gave to the running
    command, as flags (``--gap-open``)."""
    ctx = click.get_current_context()
    given = [name for name in names if ctx.get_parameter_source(name)
             not in (None, click.ParameterSource.DEFAULT)]
    return ["--" + name.replace("_", "-") for name in given]


# ---------------------------------------------------------------------------------
# Other shared options


def mode_option(default: str = "local") -> Callable[[F], F]:
    """``--mode {local,global,semiglobal}``, with a per-command default."""
    return click.option(
        "--mode", type=click.Choice(swath.MODES), default=default, show_default=True,
        help="local: Smith-Waterman; global: Needleman-Wunsch; semiglobal: the whole "
             "query against any part of the target (end gaps in the target are free).")


class OutputFormat(click.Choice):
    """One of ``formats``, or, with ``named_columns``, a tabular format naming its columns
    as blastp's ``-outfmt`` does (``"6 qseqid sseqid score cigar"``, or ``"tsv ..."``)."""

    def __init__(self, formats: tuple[str, ...], named_columns: bool = False) -> None:
        super().__init__(formats)
        self.named_columns = named_columns

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        words = value.split() if isinstance(value, str) else []
        if words == ["6"]:
            words = ["tsv"]
        if len(words) < 2:
            return super().convert(words[0] if words else value, param, ctx)
        if not self.named_columns:
            self.fail(f"{value!r}: only search and pairs results print named tsv columns",
                      param, ctx)
        try:
            name, _ = swath.tabular_format(value)
        except InvalidParameter as exc:
            self.fail(str(exc), param, ctx)
        if name not in self.choices:
            self.fail(f"{value!r}: only a tabular format (tsv, or blastp's 6) names columns",
                      param, ctx)
        return " ".join(words)


COLUMNS_HELP = ("A tsv may name its columns as blastp's -outfmt does, \"6 qseqid sseqid "
                "score cigar\" (quoted): " + ", ".join(swath.TSV_COLUMNS) + ".")


wildcard_option = click.option(
    "--wildcard", is_flag=True, default=False,
    help="Map residues outside the alphabet to its wildcard (X for protein, N for DNA) "
         "instead of failing.")

overwrite_option = click.option(
    "--overwrite", is_flag=True, default=False,
    help="Replace a swath store at -o that holds another job. A path holding anything "
         "swath did not write is refused whatever this says.")

rename_duplicates_option = click.option(
    "--rename-duplicates", is_flag=True, default=False,
    help="Rename the second, third, ... sequence of a name NAME_2, NAME_3, ... (by default "
         "a name given twice is refused: results would be ambiguous).")

cigar_m_option = click.option(
    "--cigar-m", is_flag=True, default=False,
    help="SAM and PAF: write M for runs of = and X in CIGARs (for tools that do not read "
         "the extended CIGAR).")


def command_line() -> str:
    """The command being run, as SAM's header names it (``@PG CL:``)."""
    import shlex

    return shlex.join(["swath", *sys.argv[1:]])


device_option = click.option(
    "--device", type=click.Choice(swath.DEVICES), default="auto", show_default=True,
    help="Where to compute: auto is the GPU when CuPy finds one, else the CPU.")


class _EchoHandler(logging.Handler):
    """Writes log records to click's current stderr (so CliRunner captures them)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            click.echo(self.format(record), err=True)
        except Exception:
            self.handleError(record)


# a record as the command's other messages read ("swath: warning: ..."); DEBUG records
# also say when (milliseconds since Python's logging module was imported, which swath's
# import does first thing), on which thread and from which module: a command's timeline
_FORMAT = "swath: %(level)s: %(message)s"
_DEBUG_FORMAT = "swath: %(relativeCreated)6.0f ms %(threadName)s: %(level)s: %(name)s: " \
                "%(message)s"


class _Formatter(logging.Formatter):
    """``level``: the record's level in lower case."""

    def format(self, record: logging.LogRecord) -> str:
        record.level = record.levelname.lower()
        return super().format(record)


def setup_logging(verbosity: int) -> None:
    """Send swath's log records to stderr: 0 WARNING, 1 INFO, 2 or more DEBUG (each record
    then stamped with the milliseconds since the command started and its thread).

    Only the command line calls this; the library never configures logging.
    """
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(max(verbosity, 0), 2)]
    logger = logging.getLogger("swath")
    logger.setLevel(level)
    handler = next((h for h in logger.handlers if isinstance(h, _EchoHandler)), None)
    if handler is None:
        handler = _EchoHandler()
        logger.addHandler(handler)
    handler.setFormatter(_Formatter(_DEBUG_FORMAT if level == logging.DEBUG else _FORMAT))


def _verbose_callback(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if not ctx.resilient_parsing:
        setup_logging(value)
    return value


verbose_option = click.option(
    "-v", "--verbose", count=True, expose_value=False, callback=_verbose_callback,
    help="Log more to stderr: -v for INFO, -vv for DEBUG (default: warnings only).")

def _threads_callback(ctx: click.Context, param: click.Parameter, value: int | None
                      ) -> int | None:
    if value is not None and not ctx.resilient_parsing:
        swath.use_threads(value)
    return value


threads_option = click.option(
    "--threads", type=click.IntRange(min=1), default=None, expose_value=False,
    callback=_threads_callback, metavar="N",
    help="CPU threads for the kernels [default: every core]; with --workers, shared among "
         "them.")

progress_option = click.option(
    "--progress/--no-progress", default=None, show_default="on when stderr is a terminal",
    help="Report progress on stderr.")


def show_progress(progress: bool | None) -> bool:
    """Whether to report progress: the flag when given, else whether stderr is a terminal."""
    if progress is not None:
        return progress
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


scheduler_option = click.option(
    "--scheduler", metavar="ADDRESS", default=None,
    help="Address of a running Dask scheduler (tcp://host:8786); default: start a local "
         "cluster (one worker per GPU when GPUs are used).")

workers_option = click.option(
    "--workers", type=click.IntRange(min=1), default=None,
    help="Workers of a local Dask cluster [processes; default: none on the CPU or one "
         "GPU, where the job runs in this process; one per GPU on several; on GPUs at "
         "most one per GPU].")


def cluster(scheduler: str | None, workers: int | None, progress: bool) -> swath.Cluster:
    """Where a command's job runs (``--scheduler``, ``--workers``); a local cluster started
    for it is named with its dashboard (not a job in this process): on stderr where
    progress is shown, else in the log (``-v``), so that a quiet command's stderr holds
    only its warnings and errors."""
    def started(where: str) -> None:
        if progress:
            click.echo(f"swath: running {where}", err=True)
        else:
            logger.info("running %s", where)

    return swath.Cluster(scheduler, workers, started=started)
