"""Host-GPU copies of large arrays through page-locked memory.

An upload runs in the background: host threads copy the array, chunk by chunk, into a
small ring of page-locked slots, and each full slot goes to the GPU on a stream of its
own while the next ones fill. The caller meanwhile plans its kernels, and waits only
before the first kernel that reads the array. (Page-locking the caller's array in place
costs about as much as the copy again, to lock and to unlock, and cannot overlap.)

A download lands in page-locked memory from CuPy's pinned pool, which the returned array
keeps: no page faults on fresh memory, no second copy; the pool takes it back when
the array goes. The pool reuses a block only for an allocation of its own size, so a
ring's slots and a download's bytes are rounded up to a power of two: what stays locked
is bounded (the rings' five sizes, twice the largest download), however many batches run.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import cupy as cp
import numpy as np

CHUNK = 4 << 20          # bytes a slot (and a host thread's copy)
SLOTS = 16               # slots of the ring: 64 MiB page-locked, reused through CuPy's pool
STAGED = 4 << 20         # bytes from which an array goes through the ring
_TO_DEVICE = 1           # cudaMemcpyHostToDevice


@functools.cache
def _threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(min(8, os.cpu_count() or 1), thread_name_prefix="swath-upload")


class Upload:
    """Host arrays on their way to the GPU; a context manager whose exit waits for every
    copy (so that nothing writes into the ring, or reads the arrays, after it).

    Parameters
    ----------
    hosts
        The arrays (any dtype and layout); they must not change until the upload's exit.
    cuts
        For each array, the element offsets that cut it into parts, the same number of
        parts each (``[0, ..., host.size]``): the copies go part by part, part 0 of every
        array first, and a kernel can wait for one part (:meth:`ready`). One part by
        default.
    early
        How many parts start copying now (all by default); the others start at
        :meth:`resume`, so that the caller's host work meanwhile does not share the host's
        memory bandwidth with them.
    """

    def __init__(self, hosts: Sequence[np.ndarray],
                 cuts: Sequence[Sequence[int]] | None = None, early: int | None = None) -> None:
        self._device = cp.cuda.Device()
        self._stream = cp.cuda.Stream(non_blocking=True)
        self.arrays: list[cp.ndarray] = []
        flats = []
        for host in hosts:
            host = np.require(host, requirements="C")
            self.arrays.append(cp.empty(host.shape, dtype=host.dtype))
            flats.append(host.reshape(-1))
        cuts = [[0, flat.size] for flat in flats] if cuts is None else cuts
        # the arrays' memory may have been freed by kernels still running on the caller's
        # stream: the copies wait for what it has queued
        self._stream.wait_event(cp.cuda.get_current_stream().record())
        # the chunks, part by part: (host bytes, device address), and those of each part
        chunks: list[tuple[np.ndarray, int]] = []
        self._parts: list[range] = []
        for part in range(len(cuts[0]) - 1) if hosts else ():
            first = len(chunks)
            for flat, device, at in zip(flats, self.arrays, cuts, strict=True):
                piece = flat[at[part]:at[part + 1]]
                if flat.nbytes < STAGED:
                    device.reshape(-1)[at[part]:at[part + 1]].set(piece)
                    continue
                address = device.data.ptr + at[part] * flat.itemsize
                piece = piece.view(np.uint8)
                chunks += [(piece[x:x + CHUNK], address + x)
                           for x in range(0, piece.nbytes, CHUNK)]
            self._parts.append(range(first, len(chunks)))
        self._copied = [cp.cuda.Event(block=False, disable_timing=True) for _ in chunks]
        self._issued = [threading.Event() for _ in chunks]
        self._chunks = chunks
        self._tasks: list[Future] = []     # chunk k's copy, once started
        self._slots = min(1 << (len(chunks) - 1).bit_length(), SLOTS) if chunks else 0
        # kept until every copy out of it has finished
        self._ring = cp.cuda.alloc_pinned_memory(self._slots * CHUNK) if chunks else None
        self._start(len(self._parts) if early is None else early)

    def _start(self, parts: int) -> None:
        """Start the copies of the first ``parts`` parts (in chunk order, as the ring's
        slots are reused in that order)."""
        end = self._parts[parts].start if parts < len(self._parts) else len(self._chunks)
        self._tasks += [_threads().submit(self._copy, k) for k in range(len(self._tasks), end)]

    def resume(self) -> None:
        """Start the copies of every part."""
        self._start(len(self._parts))

    def _copy(self, k: int) -> None:
        """Chunk k: into its slot of the ring (once the chunk before it there has left),
        then out to the GPU."""
        ring, slots = self._ring, self._slots
        assert ring is not None, "an upload with chunks has a ring"
        host, address = self._chunks[k]
        try:
            if k >= slots:
                self._issued[k - slots].wait()
                self._copied[k - slots].synchronize()
            offset = (k % slots) * CHUNK
            np.copyto(np.frombuffer(ring, dtype=np.uint8, count=host.nbytes, offset=offset),
                      host)
            with self._device:
                cp.cuda.runtime.memcpyAsync(address, ring.ptr + offset, host.nbytes,
                                            _TO_DEVICE, self._stream.ptr)
                self._copied[k].record(self._stream)
        finally:
            self._issued[k].set()

    def ready(self, part: int | None = None) -> None:
        """Make the current stream wait for the copies of ``part`` (all by default),
        starting them if they wait for :meth:`resume`: blocks until they are issued; a
        copy that failed raises."""
        self._start(len(self._parts) if part is None else part + 1)
        stream = cp.cuda.get_current_stream()
        for chunks in self._parts if part is None else [self._parts[part]]:
            for k in chunks:
                if self._tasks[k].exception() is not None:
                    self._finish()      # nothing writes into the ring once it raises
                    self._tasks[k].result()
                stream.wait_event(self._copied[k])

    def _finish(self) -> None:
        for task in self._tasks:
            task.exception()
        self._stream.synchronize()

    def __enter__(self) -> Upload:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._finish()


def download(device: cp.ndarray) -> np.ndarray:
    """``device`` copied into page-locked host memory (the returned array keeps it)."""
    memory = cp.cuda.alloc_pinned_memory(1 << max(16, (device.nbytes - 1).bit_length()))
    host = np.frombuffer(memory, dtype=device.dtype, count=device.size).reshape(device.shape)
    device.get(out=host)
    return host
