"""The ``swath`` command line (click).

Commands parse their options, set up logging, call the Python API and print; they
hold no logic of their own. Importing this package compiles no kernel: the numba
kernels load when a command first aligns.
"""

from __future__ import annotations

import click

from swath import __version__
from swath.cli.align import align
from swath.cli.allpairs import allpairs
from swath.cli.makedb import makedb
from swath.cli.options import SwathGroup
from swath.cli.search import search
from swath.cli.stores import inspect, resume

__all__ = ["main"]


@click.group(cls=SwathGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="swath",
                      message="%(prog)s %(version)s")
def main() -> None:
    """swath: exact Smith-Waterman and Needleman-Wunsch alignment with affine gaps.

    A gap of length k costs open + k * extend. Errors print one line,
    'swath: error: ...', and exit with status 2.
    """


for command in (align, makedb, search, allpairs, resume, inspect):
    main.add_command(command)
