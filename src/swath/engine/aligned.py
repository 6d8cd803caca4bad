"""What every workload keeps of a batch of alignments: the per-alignment fields, computed
from the batched kernel's output at once (no object a pair)."""

from __future__ import annotations

import itertools

import numpy as np

from swath.kernels import get_backend

__all__ = ["ALIGNMENT_FIELDS", "alignment_fields"]

#: the fields :func:`alignment_fields` gives, each one value an alignment
ALIGNMENT_FIELDS = ("score", "query_start", "query_end", "target_start", "target_end",
                    "length", "matches", "mismatches", "gap_opens", "identity", "cigar")


def alignment_fields(device: str, scores: np.ndarray, coords: np.ndarray, text: np.ndarray,
                     text_at: np.ndarray) -> dict[str, np.ndarray]:
    """The fields (:data:`ALIGNMENT_FIELDS`) of alignments as ``align_batch`` returns
    them on ``device``: scores, coordinates ``(k, 4)`` (query start, end, target start,
    end), and the CIGARs' text and offsets. ``length``: alignment columns; ``identity``:
    matches over columns (0.0 for an empty alignment); ``cigar``: str objects."""
    counts = get_backend(device).cigar_counts((text, text_at))
    columns = counts["columns"]
    cigars = text.tobytes().decode("ascii")
    fields = {"score": scores, "length": columns, "matches": counts["matches"],
              "mismatches": counts["mismatches"], "gap_opens": counts["gap_opens"],
              "identity": np.divide(counts["matches"], columns, out=np.zeros(len(columns)),
                                    where=columns > 0),
              "cigar": np.array([cigars[a:b] for a, b in itertools.pairwise(text_at.tolist())],
                                dtype=object)}
    for k, name in enumerate(("query_start", "query_end", "target_start", "target_end")):
        fields[name] = coords[:, k]
    return fields
