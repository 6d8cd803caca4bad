"""Where a command's printed result goes: stdout, or a file (``--out``) that appears
whole, never in place of a file swath was not asked to replace."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable

import click

from swath.cli.options import CommandError

__all__ = ["emit"]


def emit(pieces: Iterable[str], out: str | None, *, replace: bool = False) -> None:
    """Print ``pieces`` (text ending with newlines) to stdout, or write them to ``out``:
    into a hidden sibling renamed into place when all is written, so a failed command
    leaves no half a file. An existing ``out`` is refused unless ``replace``."""
    if out is None or out == "-":
        for text in pieces:
            click.echo(text, nl=False)
        return
    if os.path.lexists(out) and not replace:
        raise CommandError(f"{out} exists; swath will not overwrite it (choose another --out "
                           "path, or --overwrite to replace it)")
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
