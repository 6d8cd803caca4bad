"""Targets resident on the GPU: uploaded once, scored against query after query there,
only the top hits brought back (the ``resident`` capability of the GPU backend).

# Q: queries, N: targets, k: hits kept; scores int32, keys int64.

A search keeps each database partition on its worker's GPU this way: the scores of a
block of queries never leave the GPU; their top-k keys are made and sorted there, and
the first k of each row come back.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import cupy as cp
import numpy as np

from swath.constants import Mode
from swath.kernels.backend import TargetSet
from swath.kernels.gpu import scores as search
from swath.kernels.gpu.errors import translate_errors
from swath.kernels.top_hits import top_of_keys
from swath.scoring import Scoring


@dataclass(frozen=True)
class ResidentSet:
    """Targets on the GPU sorted by length (``search.DeviceTargets``), with their record
    ids in that order (device int64)."""

    targets: search.DeviceTargets
    ids: cp.ndarray

    def __len__(self) -> int:
        return len(self.targets)


def _ours(targets: TargetSet) -> ResidentSet:
    if not isinstance(targets, ResidentSet):
        raise TypeError(f"targets the GPU backend did not upload: {type(targets).__name__}")
    return targets


@translate_errors
def upload(t_res: np.ndarray, t_off: np.ndarray, ids: np.ndarray) -> ResidentSet:
    """Copy targets (residues and offsets) and their record ids to the GPU."""
    targets = search.DeviceTargets.upload(t_res, t_off)
    return ResidentSet(targets, cp.asarray(ids[targets.order].astype(np.int64)))


@translate_errors
def score_queries(targets: TargetSet, queries: Sequence[np.ndarray], scoring: Scoring,
                  mode: Mode) -> cp.ndarray:
    """Optimal scores of every query against every target, ``(Q, N)`` device int32 in
    the targets' device order (``search.score_queries``)."""
    return search.score_queries(_ours(targets).targets, list(queries), scoring, mode)


@functools.cache
def _top_key_kernel() -> cp.ElementwiseKernel:
    return cp.ElementwiseKernel(
        "T score, int64 id", "int64 key",
        "key = -(long long)score * 4294967296LL + (id < 0 ? 4294967295LL : id)",
        "swath_top_key")


def top_key(scores: cp.ndarray, ids: cp.ndarray) -> cp.ndarray:
    """``swath.kernels.top_hits.keys`` on the GPU: one elementwise kernel, not CuPy's
    operators on Python numbers (the first of those in a process imports cupyx)."""
    return _top_key_kernel()(scores, ids)


@translate_errors
def top_hits(scores: cp.ndarray, targets: TargetSet, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best hits of each row of ``scores`` (``score_queries``'): ``(scores,
    ids)`` on the host, ``swath.kernels.top_hits.top``'s. The keys are made and sorted
    on the GPU (sorting the keys alone needs no gather), the first k of each row brought
    back."""
    ids = _ours(targets).ids
    key = top_key(scores, cp.broadcast_to(ids, scores.shape))
    return top_of_keys(cp.sort(key, axis=1)[:, :k].get(), k)
