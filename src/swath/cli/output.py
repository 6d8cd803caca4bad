"""Where a command's printed result goes: stdout, or a file (``--out``) that appears
whole, never in place of a file swath was not asked to replace."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

import click

import swath
from swath.cli.options import CommandError, command_line
from swath.errors import naming

__all__ = ["check_out", "emit", "out_format", "out_option", "print_result"]

#: the format a --out file's name asks for, without --outfmt
SUFFIXES = {".sam": "sam", ".paf": "paf", ".tsv": "tsv", ".json": "json", ".txt": "text",
            ".uc": "uc"}

out_option = click.option(
    "--out", metavar="FILE", default=None, type=click.Path(path_type=str),
    help="Write the printed result to FILE instead of stdout ('-': stdout), in the format "
         "its suffix names (.sam, .paf, .tsv, .json, .txt, .uc) unless one is given; an "
         "existing FILE is refused (with --overwrite where the command has it, replaced).")


def out_format(out: str | None, given: str | None, formats: tuple[str, ...],
               default: str | None, *, replace: bool | None = None,
               inputs: Sequence[str | None] = ()) -> str | None:
    """The format to print: ``given``; else, for an ``out`` file, the one its suffix
    names (if ``formats`` has it) or ``default``; else None (nothing to print). An
    existing ``out``, or one that is one of the command's ``inputs`` (files and stores),
    is refused first (:func:`check_out`), before any work is done."""
    check_out(out, replace=replace, inputs=inputs)
    if given is not None or out is None:
        return given
    suffix = os.path.splitext(out)[1].lower()
    found = SUFFIXES.get(suffix)
    return found if found in formats else default


#: the exit status where stdout's reader closed the pipe: a shell's for a command that
#: SIGPIPE ended, as other command-line tools end there (128 + 13)
CLOSED_PIPE = 141


def emit(pieces: Iterable[str], out: str | None, *, replace: bool | None = None) -> None:
    """Print ``pieces`` (text ending with newlines) to stdout, or write them to ``out``:
    into a hidden sibling linked into place when all is written, so a failed command
    leaves no half a file. An existing ``out`` is refused unless ``replace`` (None: the
    command has no --overwrite)."""
    if out is None or out == "-":
        try:
            for text in pieces:
                click.echo(text, nl=False)
            sys.stdout.flush()
        except BrokenPipeError:     # the reader closed the pipe (`| head`): end quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(CLOSED_PIPE) from None
        return
    check_out(out, replace=replace)
    folder = os.path.dirname(os.path.abspath(out))
    hidden = os.path.join(folder, f".{os.path.basename(out)}.")
    try:
        handle, partial = tempfile.mkstemp(prefix=os.path.basename(hidden), dir=folder)
    except OSError as exc:
        raise naming(exc, hidden, out) from None
    try:
        with os.fdopen(handle, "w") as file:
            for text in pieces:
                file.write(text)
        os.chmod(partial, 0o666 & ~_umask())
        if replace:
            os.replace(partial, out)
        else:       # a link fails where a file appeared meanwhile: never replace it
            os.link(partial, out)
            os.unlink(partial)
    except FileExistsError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise CommandError(f"{out} appeared while swath wrote it; swath will not overwrite "
                           "it (choose another --out path)") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def print_result(result: Any, fmt: str | None, out: str | None, *, cigar_m: bool,
                 replace: bool | None) -> None:
    """A job's result in ``fmt`` (nothing for None) on stdout or in ``out``, as ``swath
    inspect`` prints it (SAM's ``@PG`` line naming this command)."""
    if fmt:
        options = swath.PrintOptions(cigar_m=cigar_m, command=command_line())
        emit(result.lines(fmt, options), out, replace=replace)


def check_out(out: str | None, *, replace: bool | None = None,
              inputs: Sequence[str | None] = ()) -> None:
    """Refuse an existing ``out`` unless ``replace`` (None: the command has no
    --overwrite), and, whatever ``replace`` says, an ``out`` that is one of ``inputs`` (the
    command's input files and its store) or lies in one: called before a job runs too, so
    that its work is not done for a file it may not write."""
    if out is None or out == "-":
        return
    here = os.path.realpath(out)
    for given in inputs:
        if given is None or given == "-" or "://" in given:
            continue
        there = os.path.realpath(given)
        if here == there or here.startswith(there + os.sep):
            raise CommandError(f"{out} is {given}, an input or the store of this command; "
                               "swath will not write over it (choose another path)")
    if os.path.lexists(out) and not replace:
        remedy = "remove it first" if replace is None else "--overwrite to replace it"
        raise CommandError(f"{out} exists; swath will not overwrite it (choose another --out "
                           f"path, or {remedy})")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
