"""Sequences in: FASTA/FASTQ files and in-memory sequences, encoded into ``uint8`` codes.

- :mod:`~swath.sequences.readers`: FASTA/FASTQ files (plain or gzip) read record by
  record (:func:`iter_records`) or whole (:func:`read_sequences`), parsed by
  :mod:`~swath.sequences.parsers`;
- :mod:`~swath.sequences.sets`: :class:`SequenceSet` (many sequences, concatenated),
  :func:`sequence_set` from memory, record names (:func:`unique_names`);
- :mod:`~swath.sequences.encoding`: residue letters to codes (:func:`encode_sequence`) and
  the concatenated layout's helpers (:func:`take_concatenated`, :func:`slice_concatenated`).
"""

from swath.sequences.encoding import (
    SequenceLike,
    encode_sequence,
    slice_concatenated,
    take_concatenated,
)
from swath.sequences.readers import Record, iter_records, read_sequences
from swath.sequences.sets import (
    SequenceSet,
    duplicate_error,
    duplicate_name,
    name_hashes,
    sequence_set,
    suffixed,
    unique_names,
)

__all__ = [
    "Record",
    "SequenceLike",
    "SequenceSet",
    "duplicate_error",
    "duplicate_name",
    "encode_sequence",
    "iter_records",
    "name_hashes",
    "read_sequences",
    "sequence_set",
    "slice_concatenated",
    "suffixed",
    "take_concatenated",
    "unique_names",
]
