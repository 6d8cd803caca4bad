"""The narrow lane passes of the CPU score kernel: saturation is flagged, never returned."""

from __future__ import annotations

import numpy as np
import pytest

from swath.kernels.bounds import score_bounds
from swath.kernels.cpu._jit import readonly
from swath.kernels.cpu.lanes import (
    BLOCK_COLUMNS,
    LANES,
    lane_kernel,
    pack_lanes,
    padded_matrix,
    query_chunks,
)
from tests.helpers import PROTEIN


def run_narrow(mode: str, query: np.ndarray, targets: list[np.ndarray], dtype=np.int16):
    narrow = np.dtype(dtype)
    res = np.concatenate(targets)
    off = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    order = np.argsort(np.diff(off), kind="stable")
    cols, col_off, lens = pack_lanes(res, off, order, LANES[narrow], pad=PROTEIN.matrix.shape[0],
                                     multiple=BLOCK_COLUMNS)
    groups = len(col_off) - 1
    out = np.zeros((1, groups, LANES[narrow]), dtype=narrow)
    flags = np.zeros((1, groups, LANES[narrow]), dtype=np.uint8)
    # read-only query arrays, as score_many passes them: the kernel it compiled
    lane_kernel(mode, narrow)(readonly(query), readonly(np.array([0, len(query)])),
                              np.array([0, 1]), cols, col_off,
                              lens, np.zeros((1, groups), dtype=bool),
                              padded_matrix(PROTEIN.matrix, narrow), 11, 1, 11, 1, out, flags,
                              0, 1)
    return out.reshape(-1)[np.argsort(order)], flags.reshape(-1)[np.argsort(order)]


def test_local_saturation_is_flagged():
    w = PROTEIN.alphabet.encode("W" * 3100)
    small = PROTEIN.alphabet.encode("WWWWWHHH")
    out, flags = run_narrow("local", w, [small, w, w[:2900], small])
    assert flags.tolist() == [0, 1, 0, 0]
    assert out[0] == out[3] == 55
    assert out[2] == 2900 * 11


def test_local_8_bit_saturation_is_flagged():
    w = PROTEIN.alphabet.encode("W" * 12)
    out, flags = run_narrow("local", w, [w[:10], w, PROTEIN.alphabet.encode("AW")], np.int8)
    assert flags.tolist() == [0, 1, 0]
    assert (out[0], out[2]) == (110, 11)


@pytest.mark.parametrize("mode", ["global", "semiglobal"])
def test_bounds_route_long_pairs_to_32_bits(mode):
    low, high = score_bounds(np.array([300, 300, 30000]), np.array([300, 40000, 30000]),
                             PROTEIN.matrix, 11, 1, mode)
    fits = (low > np.iinfo(np.int16).min + 3) & (high < np.iinfo(np.int16).max)
    assert fits.tolist() == [True, False, False]


def test_pack_lanes_pads_past_each_end():
    targets = [np.array([1, 2, 3], np.uint8), np.array([4], np.uint8)]
    cols, col_off, lens = pack_lanes(np.concatenate(targets), np.array([0, 3, 4]),
                                     np.array([1, 0]), 4, pad=9)
    assert col_off.tolist() == [0, 3]
    assert lens.tolist() == [[1, 3, 0, 0]]
    assert cols.tolist() == [[4, 1, 9, 9], [9, 2, 9, 9], [9, 3, 9, 9]]


def test_pack_lanes_rounds_group_widths_up():
    targets = [np.array([1, 2, 3], np.uint8), np.array([4], np.uint8)]
    cols, col_off, lens = pack_lanes(np.concatenate(targets), np.array([0, 3, 4]),
                                     np.array([1, 0]), 4, pad=9, multiple=8)
    assert col_off.tolist() == [0, 8]
    assert lens.tolist() == [[1, 3, 0, 0]]
    assert cols[:3].tolist() == [[4, 1, 9, 9], [9, 2, 9, 9], [9, 3, 9, 9]]
    assert (cols[3:] == 9).all()


def test_query_chunks_hold_at_most_the_cap_unless_one_query_is_longer():
    q_off = np.cumsum([0, 5, 5, 5, 20, 1, 1])
    assert query_chunks(q_off, 10).tolist() == [0, 2, 3, 4, 6]
    assert query_chunks(q_off, 100).tolist() == [0, 6]
    assert query_chunks(np.array([0, 3]), 1).tolist() == [0, 1]
