"""The exceptions swath raises, and how an OS error names a path.

Every error is a :class:`SwathError`; each specific one also subclasses the builtin
a caller would naturally catch, so ``except ValueError`` keeps working.
"""

from __future__ import annotations


class SwathError(Exception):
    """Base class of every error swath raises on purpose."""


class InvalidParameter(SwathError, ValueError):
    """An argument or option has a value swath cannot use (the message names it)."""


class InvalidSequence(SwathError, ValueError):
    """A sequence is empty or holds a residue outside the alphabet."""


class InvalidInput(SwathError, ValueError):
    """An input file is not FASTA/FASTQ, is empty, or is malformed (file and line named)."""


class InputNotFound(SwathError, FileNotFoundError):
    """An input file does not exist or cannot be read."""


class BackendUnavailable(SwathError, ImportError):
    """The requested compute backend cannot run here (says what to install)."""


class GpuUnavailable(BackendUnavailable):
    """CuPy is installed but the GPU path cannot start: no CUDA device, a driver too old
    for CuPy's CUDA, CuPy built for another CUDA major, or an NVRTC that cannot compile."""


class KernelCompileError(SwathError, RuntimeError):
    """One of swath's CUDA sources failed to compile (a bug: the message names the source)."""


class GpuOutOfMemory(SwathError, MemoryError):
    """The GPU could not allocate what a kernel function asked for (the message says how
    much, and suggests ``device="cpu"`` or smaller inputs)."""


class StoreNotFound(SwathError, FileNotFoundError):
    """A store path holds no swath store."""


class FormatVersionError(SwathError, ValueError):
    """A store is of another layout or version than the one asked for."""


class StoreIncomplete(SwathError, ValueError):
    """A store was not finished (a job was interrupted) or lacks data it should have."""


class StoreDamaged(SwathError, ValueError):
    """A store's chunks no longer match the digests written with them (deleted, truncated
    or altered): the message names the damaged units; ``resume`` recomputes them."""


class OutputExists(InvalidParameter):
    """An output path holds something swath did not write (or another swath store):
    swath will not delete it."""


class InputChanged(SwathError, ValueError):
    """An input of a job (its database) differs from the one the store was started with."""


class StoreLocked(SwathError, RuntimeError):
    """Another job is writing the store."""


class ClusterNotStarted(SwathError, RuntimeError):
    """The local Dask cluster a job starts did not start, twice (a worker died as it
    started): nothing ran; the command can be run again."""


class UnguardedMain(SwathError, RuntimeError):
    """A script starts worker processes from its top level, outside
    ``if __name__ == "__main__":`` (each new process would run it again)."""


class UnknownStatistics(SwathError, ValueError):
    """No published Karlin-Altschul parameters for this matrix and gap combination."""


def naming(error: OSError, hidden: str, path: str) -> OSError:
    """``error`` naming ``path`` (the user's) where it names ``hidden``, the sibling swath
    writes before it puts it in place, or a path in it (a message names what the user
    asked for, not swath's hidden files)."""
    if error.filename is not None and str(error.filename).startswith(hidden):
        return type(error)(error.errno, error.strerror, path)
    return error
