"""A scoring scheme as every backend's launches take it: plain arrays and ints.

A backend's methods take a :class:`~swath.scoring.Scoring` and the mode; each unpacks
them here, once, at its boundary (:func:`unpack`, or :func:`interior` for kernels that
charge every gap alike), and hands the pieces to its numba or CUDA launches.

A scheme's end costs (``Scoring.end_gaps``: ``(open, extend)``, a terminal gap of length
``k`` costing ``open + k * extend``) apply in global mode only: to the leading gaps (row
0 and column 0 of the DP) and the trailing ones (E along the last query row, F down the
last target column). A kernel compiles a specialisation with them, so a scheme without
them runs the interior-only code it always ran.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from swath.constants import Mode
from swath.errors import InvalidParameter
from swath.scoring import Scoring


class Scheme(NamedTuple):
    """A scheme's pieces: the ``(a, a)`` int32 matrix, the interior gap costs, and the
    terminal gaps' ``(open, extend)`` where they cost apart (:func:`end_costs`)."""

    matrix: np.ndarray
    gap_open: int
    gap_extend: int
    ends: tuple[int, int] | None


def end_costs(scoring: Scoring, mode: Mode) -> tuple[int, int] | None:
    """The terminal gaps' ``(open, extend)`` where they differ from the interior costs
    (global mode only), else None."""
    if scoring.end_gaps is None:
        return None
    if mode != "global":
        raise InvalidParameter(f"end gap costs {scoring.end_gaps} apply in global mode only, "
                               f"not {mode}")
    return scoring.end_gaps


def unpack(scoring: Scoring, mode: Mode) -> Scheme:
    """``scoring`` in ``mode`` as the launches take it.

    Examples
    --------
    >>> unpack(Scoring.vsearch(), "global")[1:]
    (18, 2, (1, 1))
    """
    return Scheme(scoring.matrix, scoring.gap_open, scoring.gap_extend,
                  end_costs(scoring, mode))


def interior(scoring: Scoring, where: str) -> tuple[np.ndarray, int, int]:
    """The matrix and gap costs of ``scoring`` for kernels (named by ``where``) that
    charge every gap alike: a scheme whose end gaps cost apart is refused.

    Examples
    --------
    >>> interior(Scoring.vsearch(), "a tile")
    Traceback (most recent call last):
    ...
    swath.errors.InvalidParameter: a tile charges every gap alike: it takes no end gap costs (1, 1)
    """
    if scoring.end_gaps is not None:
        raise InvalidParameter(f"{where} charges every gap alike: it takes no end gap costs "
                               f"{scoring.end_gaps}")
    return scoring.matrix, scoring.gap_open, scoring.gap_extend
