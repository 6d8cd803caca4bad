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
        The arrays (any dtype and layout); they must not change until :meth:`wait`
        returns.
    """

    def __init__(self, hosts: Sequence[np.ndarray]) -> None:
        self._device = cp.cuda.Device()
        self._stream = cp.cuda.Stream(non_blocking=True)
        self.arrays: list[cp.ndarray] = []
        chunks: list[tuple[np.ndarray, int]] = []     # (host bytes, device address)
        for host in hosts:
            host = np.require(host, requirements="C")
            device = cp.empty(host.shape, dtype=host.dtype)
            self.arrays.append(device)
            if host.nbytes < STAGED:
                device.set(host)
                continue
            flat = host.reshape(-1).view(np.uint8)
            chunks += [(flat[at:at + CHUNK], device.data.ptr + at)
                       for at in range(0, host.nbytes, CHUNK)]
        # the arrays' memory may have been freed by kernels still running on the caller's
        # stream: the copies wait for what it has queued
        self._stream.wait_event(cp.cuda.get_current_stream().record())
        self._copied = [cp.cuda.Event(block=False, disable_timing=True) for _ in chunks]
        self._issued = [threading.Event() for _ in chunks]
        self._tasks: list[Future] = []
        self._ring = None          # kept until every copy out of it has finished
        if chunks:
            slots = min(1 << (len(chunks) - 1).bit_length(), SLOTS)
            self._ring = ring = cp.cuda.alloc_pinned_memory(slots * CHUNK)
            self._tasks = [_threads().submit(self._copy, ring, slots, k, host, address)
                           for k, (host, address) in enumerate(chunks)]

    def _copy(self, ring: cp.cuda.PinnedMemoryPointer, slots: int, k: int, host: np.ndarray,
              address: int) -> None:
        """Chunk k: into its slot of ``ring`` (once the chunk before it there has left),
        then out to the GPU."""
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

    def wait(self) -> list[cp.ndarray]:
        """The arrays on the GPU, once every copy has finished (a failed one raises)."""
        self._finish()
        for task in self._tasks:
            task.result()
        return self.arrays

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
