"""Chunks of a string array written from a byte buffer read back, by Zarr, as the strings."""

from __future__ import annotations

import itertools

import numcodecs
import numpy as np
import pytest
import zarr

from swath.sequences import take_concatenated
from swath.storage.string_chunks import (
    create_bytes_array,
    create_string_array,
    encode_strings,
    utf8_buffer,
    write_string_chunk,
)


def _strings(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    letters = [*"ACGT=XIDé;size", ""]
    return ["".join(rng.choice(letters, rng.integers(0, 12))) for _ in range(count)]


@pytest.mark.parametrize("count", [1, 7, 10, 23])
def test_chunks_read_back_as_the_strings(tmp_path, count):
    """Every chunk, the last one short of the chunk size, empty and non-ASCII strings."""
    strings = _strings(count, count)
    group = zarr.open_group(str(tmp_path / "s.zarr"), mode="w")
    array = create_string_array(group, "s", shape=(count,), chunks=(5,))
    text, offsets = utf8_buffer(strings)
    for chunk, start in enumerate(range(0, count, 5)):
        ends = offsets[start:start + 6]
        write_string_chunk(array, chunk, text[ends[0]:ends[-1]], np.diff(ends))
    again = zarr.open_group(str(tmp_path / "s.zarr"), mode="r")["s"]
    assert again[:].tolist() == strings
    assert again[3:count].tolist() == strings[3:]


def test_a_chunk_past_the_array_is_refused(tmp_path):
    group = zarr.open_group(str(tmp_path / "s.zarr"), mode="w")
    array = create_string_array(group, "s", shape=(7,), chunks=(5,))
    text, offsets = utf8_buffer(["a", "b", "c"])
    with pytest.raises(ValueError, match="do not fit"):
        write_string_chunk(array, 1, text, np.diff(offsets))


def test_taken_strings_encode_as_zarr_encodes_them():
    """Strings taken by index (repeats, empty and non-ASCII ones) give the bytes of those
    strings, and their chunk the bytes Zarr's own vlen-utf8 codec makes of them."""
    numcodecs = pytest.importorskip("numcodecs")
    strings = _strings(200, 7)
    index = np.random.default_rng(8).integers(0, len(strings), 500)
    text, offsets = take_concatenated(*utf8_buffer(strings), index)
    want = [strings[i] for i in index]
    assert [bytes(text[a:b]).decode() for a, b in itertools.pairwise(offsets)] == want
    assert bytes(encode_strings(text, np.diff(offsets))) == bytes(
        numcodecs.VLenUTF8().encode(np.array(want, dtype=object)))


@pytest.mark.parametrize("count", [1, 7, 10])
def test_bytes_chunks_are_zarrs_own_and_read_back_as_the_bytes(tmp_path, count):
    """A bytes array's chunks (the CIGARs' packed operations) written from a buffer are
    byte for byte the chunks Zarr writes itself from the bytes objects."""
    rng = np.random.default_rng(count)
    values = [rng.integers(0, 256, 4 * int(rng.integers(0, 5)), dtype=np.uint8).tobytes()
              for _ in range(count)]
    ours = create_bytes_array(zarr.open_group(str(tmp_path / "a.zarr"), mode="w"), "b",
                              shape=(count,), chunks=(5,))
    theirs = create_bytes_array(zarr.open_group(str(tmp_path / "b.zarr"), mode="w"), "b",
                                shape=(count,), chunks=(5,))
    theirs[:] = np.array(values, dtype=object)
    data = np.frombuffer(b"".join(values), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])])
    for chunk, start in enumerate(range(0, count, 5)):
        ends = offsets[start:start + 6]
        write_string_chunk(ours, chunk, data[ends[0]:ends[-1]], np.diff(ends))
        key = f"c/{chunk}"
        assert (tmp_path / "a.zarr" / "b" / key).read_bytes() == \
            (tmp_path / "b.zarr" / "b" / key).read_bytes()
    assert zarr.open_group(str(tmp_path / "a.zarr"), mode="r")["b"][:].tolist() == values
    assert bytes(encode_strings(data, np.diff(offsets))) == bytes(
        numcodecs.VLenBytes().encode(np.array(values, dtype=object)))
