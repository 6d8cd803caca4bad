"""CIGARs as stores keep them: BAM's packed operations, converted in numpy both ways."""

from __future__ import annotations

import re

import numpy as np
import pytest

from swath.alignment import (
    BAM_OPS,
    cigar_ops,
    ops_cigar,
    pack_cigars,
    packed_cigars,
    unpack_cigars,
    unpacked_cigars,
)


def reference_ops(cigar: str) -> list[int]:
    """BAM's packing of one CIGAR, run by run (the judge)."""
    return [int(n) << 4 | BAM_OPS.index(op) for n, op in re.findall(r"(\d+)(\D)", cigar)]


def random_cigars(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    cigars = []
    for _ in range(count):
        runs = rng.integers(0, 8)
        lengths = rng.choice([1, 9, 10, 99, 100, 65535, 65536, 1 << 20, (1 << 28) - 1], runs)
        cigars.append("".join(f"{n}{BAM_OPS[rng.integers(0, 9)]}" for n in lengths))
    return cigars


def buffer(cigars: list[str]) -> tuple[np.ndarray, np.ndarray]:
    return (np.frombuffer("".join(cigars).encode("ascii"), np.uint8),
            np.array([len(c) for c in cigars], dtype=np.int64))


@pytest.mark.parametrize("cigar", ["", "1M", "70000=", "3=1X2I1D", "".join(
    f"{k + 1}{op}" for k, op in enumerate(BAM_OPS)), f"{(1 << 28) - 1}X1=", "0="])
def test_one_cigar_round_trips_as_bams_ops(cigar):
    ops = cigar_ops(cigar)
    assert ops.dtype == np.uint32 and ops.tolist() == reference_ops(cigar)
    assert ops_cigar(ops) == cigar


def test_every_op_has_bams_code():
    assert [int(cigar_ops(f"1{op}")[0]) & 15 for op in BAM_OPS] == list(range(9))
    assert cigar_ops("1=1X1I1D").tolist() == [1 << 4 | 7, 1 << 4 | 8, 1 << 4 | 1, 1 << 4 | 2]


@pytest.mark.parametrize("seed", range(5))
def test_many_cigars_equal_the_reference_and_round_trip(seed):
    cigars = [*random_cigars(300, seed), "", ""]
    ops, counts = pack_cigars(*buffer(cigars))
    assert ops.tolist() == [op for c in cigars for op in reference_ops(c)]
    assert counts.tolist() == [len(reference_ops(c)) for c in cigars]
    text, lengths = unpack_cigars(ops, counts)
    assert text.tobytes().decode() == "".join(cigars)
    assert lengths.tolist() == [len(c) for c in cigars]


def test_no_cigars_and_only_empty_ones():
    for cigars in ([], ["", ""]):
        ops, counts = pack_cigars(*buffer(cigars))
        assert ops.tolist() == [] and counts.tolist() == [0] * len(cigars)
        text, lengths = unpack_cigars(ops, counts)
        assert text.tolist() == [] and lengths.tolist() == [0] * len(cigars)


def test_packed_values_are_little_endian_uint32_bytes_of_any_shape():
    cigars = np.array([["3=1X", ""], ["70000D", "2I"]], dtype=object)
    packed = packed_cigars(cigars)
    assert packed.shape == (2, 2) and packed[0, 1] == b""
    assert np.frombuffer(packed[1, 0], "<u4").tolist() == [70000 << 4 | 2]
    assert packed[0, 0] == np.array(reference_ops("3=1X"), "<u4").tobytes()
    assert unpacked_cigars(packed).tolist() == cigars.tolist()


@pytest.mark.parametrize("cigar", ["3Z", f"{1 << 28}="])
def test_what_bam_cannot_hold_is_refused(cigar):
    with pytest.raises(ValueError, match="not BAM's"):
        cigar_ops(cigar)
