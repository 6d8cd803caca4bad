"""Chunks of a Zarr string or bytes array written from a byte buffer, not from objects.

A variable-length string array (Zarr v3 ``data_type`` ``"string"``) stores a chunk as
the ``vlen-utf8`` codec's bytes (a little-endian uint32 count, then for each item a
uint32 length and its UTF-8 bytes), compressed by the array's ``zstd``; a variable-length
bytes array (``"variable_length_bytes"``: the CIGARs' packed operations) as the
``vlen-bytes`` codec's, framed the same way. Zarr encodes a
chunk from a numpy array of Python strings, an object an item under the GIL: for the
tens of millions of names and CIGARs of an all-pairs root that was most of its
gathering. Here the same bytes are built with numpy from the items' UTF-8 bytes one
after another and their lengths, compressed, and stored under the chunk's key: Zarr,
xarray and any Zarr v3 reader decode them as the strings (or bytes) themselves.

Only arrays made by :func:`create_string_array` or :func:`create_bytes_array` (whose
codecs this module encodes) are written so.
"""

from __future__ import annotations

from typing import Any

import numba
import numcodecs
import numpy as np
import zarr
from zarr.codecs import VLenBytesCodec, VLenUTF8Codec, ZstdCodec
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync

from swath.storage.common import create_field
from swath.storage.integrity import utf8_bytes

#: the zstd of the arrays made here (Zarr's default for strings): level, checksum
_LEVEL, _CHECKSUM = 0, False
_COUNT = 4          # bytes of an item's length, and of the chunk's count


def create_string_array(group: zarr.Group, name: str, shape: tuple[int, ...],
                        chunks: tuple[int, ...], **create: Any) -> zarr.Array:
    """A string array whose chunks :func:`write_string_chunk` can write (``create``:
    ``create_array``'s other arguments)."""
    return group.create_array(name, shape=shape, chunks=chunks, dtype=str,
                              serializer=VLenUTF8Codec(),
                              compressors=ZstdCodec(level=_LEVEL, checksum=_CHECKSUM), **create)


def create_bytes_array(group: zarr.Group, name: str, shape: tuple[int, ...],
                       chunks: tuple[int, ...], **create: Any) -> zarr.Array:
    """A variable-length bytes array whose chunks :func:`write_string_chunk` can write
    (``create``: ``create_array``'s other arguments)."""
    return create_field(group, name, bytes, shape=shape, chunks=chunks,
                        serializer=VLenBytesCodec(),
                        compressors=ZstdCodec(level=_LEVEL, checksum=_CHECKSUM), **create)


def encode_strings(text: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ``vlen-utf8`` bytes of the strings whose UTF-8 bytes are ``text`` (uint8, one
    item after another) and whose lengths in bytes are ``lengths``.

    Examples
    --------
    >>> raw = encode_strings(np.frombuffer("3=é".encode(), np.uint8), np.array([2, 2]))
    >>> bytes(raw) == bytes(numcodecs.VLenUTF8().encode(np.array(["3=", "é"], dtype=object)))
    True
    """
    sizes = np.ascontiguousarray(lengths, dtype=np.int64)
    out = np.empty(_COUNT + _COUNT * len(sizes) + len(text), dtype=np.uint8)
    _encode(np.ascontiguousarray(text, dtype=np.uint8), sizes, out)
    return out


@numba.njit(cache=True, nogil=True)
def _encode(text, sizes, out):
    count = sizes.shape[0]
    for b in range(_COUNT):
        out[b] = (count >> (8 * b)) & 255
    at, read = _COUNT, 0
    for k in range(count):
        size = sizes[k]
        for b in range(_COUNT):
            out[at + b] = (size >> (8 * b)) & 255
        at += _COUNT
        out[at:at + size] = text[read:read + size]
        at += size
        read += size


def write_string_chunk(array: zarr.Array, chunk: int, text: np.ndarray,
                       lengths: np.ndarray) -> None:
    """Chunk ``chunk`` of the 1-D string or bytes ``array`` (made by
    :func:`create_string_array` or :func:`create_bytes_array`) holding the items of
    ``text`` and ``lengths`` (:func:`encode_strings`'s), the chunk's items from its start;
    past the array's end the chunk is padded with empty items, as Zarr stores a last
    chunk."""
    size = array.chunks[0]
    if len(lengths) > size or chunk * size + len(lengths) > array.shape[0]:
        raise ValueError(f"{len(lengths)} items do not fit chunk {chunk} of {array.name}")
    padded = np.zeros(size, dtype=np.int64)
    padded[:len(lengths)] = lengths
    raw = numcodecs.Zstd(level=_LEVEL, checksum=_CHECKSUM).encode(encode_strings(text, padded))
    key = "/".join(part for part in (array.store_path.path,
                                     array.metadata.encode_chunk_key((chunk,))) if part)
    buffer = default_buffer_prototype().buffer.from_bytes(bytes(raw))
    sync(array.store_path.store.set(key, buffer))


def utf8_buffer(strings: Any) -> tuple[np.ndarray, np.ndarray]:
    """``strings`` as :func:`encode_strings` takes them: their UTF-8 bytes one after
    another (uint8) and the offsets of each (int64, one more than the strings).

    Examples
    --------
    >>> text, offsets = utf8_buffer(["ab", "é", ""])
    >>> bytes(text).decode(), offsets.tolist()
    ('abé', [0, 2, 4, 4])
    """
    data, lengths = utf8_bytes(strings)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(data, dtype=np.uint8), offsets
