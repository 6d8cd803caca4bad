"""The database store on disk: a FASTA/FASTQ file encoded, sorted by length, partitioned.

Layout ``"database"``, version 1. A Zarr v3 group (n: sequences, p: partitions,
w: residues of the largest partition)::

    residues            (partition, position)  uint8  (p, w), chunks (1, w), padded with 255
    partition_bounds    (partition_bound,)     int64  (p + 1,): first sorted target of each
                                                      partition, then n
    partition_residues  (partition,)           int64  (p,): residues of each partition
    starts              (target,)              int64  (n,): offset of sorted target k in
                                                      its partition's row
    lengths             (target,)              int32  (n,): length of sorted target k
    order               (target,)              int64  (n,): record index (in the source
                                                      file) of sorted target k
    rank                (record,)              int64  (n,): sorted position of record i
                                                      (the inverse of ``order``)
    names               (record,)              str    (n,): record names, in file order

The ``target`` dimension runs over the targets sorted by length (stable,
ascending); ``record`` runs over the records in the order of the source file; a
record's index in the file is its id everywhere in swath. Each partition is a
contiguous run of sorted targets holding about ``partition_residues`` residues and
is exactly one chunk of ``residues``, so a search task reads one chunk. The root
attributes::

    {"swath": {"layout": "database", "version": 1, "alphabet": "ARND...", "alphabet_wildcard": "X",
               "wildcard": false, "source": "db.fasta", "sha256": "...", "sequences": n,
               "residues": total, "partitions": p, "width": w, "partition_size": requested,
               "created_by": "swath 0.1.0", "complete": true}}

``wildcard`` says whether letters outside the alphabet were mapped to the
alphabet's wildcard letter ``alphabet_wildcard`` when the store was written. ``sha256``
is the source's identity: the SHA-256 of its pieces' byte spans (of its decompressed
text) and their SHA-256s, in order (the pieces it was built from,
:meth:`~swath.storage.pieces.PieceStore.identity`); a store written before that holds the
SHA-256 of the source file's bytes. A search records it, and refuses a database rebuilt
from another source.

While it is built (``swath makedb``, :mod:`swath.storage.database.writer`) the store holds
a subgroup ``work`` too, removed before the store is marked complete.

The digest of each partition (:func:`partition_digest`: its residues, where its targets
start and their record ids) is in the attribute ``partition_digests``, one a partition,
in the order of the partitions: a partition's done mark, which every read checks. The
digests of the per-target and per-record arrays are in ``digests``, by array name
(:func:`~swath.storage.common.write_whole`). A store written before partitions carried
digests reads without the check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from swath.scoring import Alphabet
from swath.storage.integrity import digest

__all__ = [
    "ARRAYS",
    "DEFAULT_PARTITION_RESIDUES",
    "LAYOUT",
    "PAD",
    "VERSION",
    "partition_digest",
    "stored_alphabet",
]

LAYOUT = "database"
VERSION = 1
# 67 M residues a partition: on the GPU a few large partitions search no slower than many
# small ones (benchmarks/RESULTS.md); the CPU kernels parallelize inside a partition
DEFAULT_PARTITION_RESIDUES = 1 << 26
PAD = 255  # residues past the end of a partition's targets; never a residue code

#: every array of the store
ARRAYS = ("residues", "partition_bounds", "partition_residues", "starts", "lengths", "order",
          "rank", "names")


def partition_digest(residues: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> int:
    """A partition's done mark: the digest of its residues (uint8), where its targets
    start (int64) and their record ids (int64)."""
    return digest(residues.astype(np.uint8, copy=False), starts.astype(np.int64, copy=False),
                  ids.astype(np.int64, copy=False))


def stored_alphabet(attrs: dict[str, Any]) -> Alphabet:
    """The alphabet a store's residues are encoded in, from its ``"swath"`` attributes."""
    return Alphabet(attrs["alphabet"], attrs.get("alphabet_wildcard"))
