"""The ``swath`` command line (click).

Commands parse their options, set up logging, call the Python API and print; they
hold no logic of their own. Importing this package compiles no kernel: the numba
kernels load when a command first aligns.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import NoReturn

import click

from swath import __version__
from swath.cli.align import align
from swath.cli.allpairs import allpairs
from swath.cli.makedb import makedb
from swath.cli.options import SwathGroup
from swath.cli.pairs import pairs
from swath.cli.search import search
from swath.cli.stores import inspect, resume, verify

__all__ = ["main", "run"]


@click.group(cls=SwathGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="swath",
                      message="%(prog)s %(version)s")
def main() -> None:
    """swath: exact Smith-Waterman and Needleman-Wunsch alignment with affine gaps.

    A gap of length k costs open + k * extend. Errors print one line,
    'swath: error: ...', and exit with status 2.
    """


for command in (align, makedb, search, allpairs, pairs, resume, inspect, verify):
    main.add_command(command)


def run() -> NoReturn:
    """The ``swath`` console script and ``python -m swath``: :func:`main`, then an exit
    without the interpreter's teardown.

    Once the command has returned (its stores written and closed), its output is flushed
    and the exit handlers have run (``atexit``: logging, Zarr's I/O loop, temporary
    files), freeing every module and object one by one is all that is left: with numba
    or CUDA loaded, a quarter of a second a command, which the process's end does at
    once. Errors other than an exit status propagate as usual.
    """
    try:
        main(prog_name="swath")
        code: object = 0
    except SystemExit as done:
        code = done.code
    if code is None:
        code = 0
    elif not isinstance(code, int):       # sys.exit("message"), as Python prints it
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):   # a closed pipe: nothing to show
            stream.flush()
    os._exit(code)
