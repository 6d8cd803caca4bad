"""Terminal gap costs as every backend's kernels take them.

A scheme's end costs (``Scoring.end_gaps``: ``(open, extend)``, a terminal gap of length
``k`` costing ``open + k * extend``) apply in global mode only: to the leading gaps (row
0 and column 0 of the DP) and the trailing ones (E along the last query row, F down the
last target column). A kernel compiles a specialisation with them, so a scheme without
them runs the interior-only code it always ran.
"""

from __future__ import annotations

from swath.errors import InvalidParameter


def end_costs(gap_open: int, gap_extend: int, mode: str,
              end_gaps: tuple[int, int] | None) -> tuple[int, int] | None:
    """The terminal gaps' ``(open, extend)`` where they differ from the interior costs
    (global mode only), else None."""
    if end_gaps is None or tuple(end_gaps) == (gap_open, gap_extend):
        return None
    if mode != "global":
        raise InvalidParameter(f"end gap costs {tuple(end_gaps)} apply in global mode only, "
                               f"not {mode}")
    return int(end_gaps[0]), int(end_gaps[1])
