"""Where a command's printed result goes: stdout, or a file (``--out``) that appears
whole, never in place of a file swath was not asked to replace."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable

import click

from swath.cli.options import CommandError

__all__ = ["check_out", "emit"]


def emit(pieces: Iterable[str], out: str | None, *, replace: bool = False) -> None:
    """Print ``pieces`` (text ending with newlines) to stdout, or write them to ``out``:
    into a hidden sibling renamed into place when all is written, so a failed command
    leaves no half a file. An existing ``out`` is refused unless ``replace``."""
    if out is None or out == "-":
        for text in pieces:
            click.echo(text, nl=False)
        return
    check_out(out, replace=replace)
    folder = os.path.dirname(os.path.abspath(out))
    handle, partial = tempfile.mkstemp(prefix=f".{os.path.basename(out)}.", dir=folder)
    try:
        with os.fdopen(handle, "w") as file:
            for text in pieces:
                file.write(text)
        os.chmod(partial, 0o666 & ~_umask())
        os.replace(partial, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def check_out(out: str | None, *, replace: bool = False) -> None:
    """Refuse an existing ``out`` unless ``replace``: called before a job runs too, so that
    its work is not done for a file it may not write."""
    if out is not None and out != "-" and os.path.lexists(out) and not replace:
        raise CommandError(f"{out} exists; swath will not overwrite it (choose another --out "
                           "path, or --overwrite to replace it)")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
