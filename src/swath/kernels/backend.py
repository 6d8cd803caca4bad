"""The kernel contract: what every backend computes, and what only one of them can.

# nq, nt: queries, targets; N: pairs; h x w: a tile; residues: uint8 codes.

:class:`Backend` is what :func:`swath.kernels.get_backend` returns: the CPU backend
(``swath.kernels.cpu``, numba) and the GPU backend (``swath.kernels.gpu``, CuPy) are
modules that satisfy it, the same functions with the same arguments and results. A
capability only one backend has is an attribute that is ``None`` on the other:

- ``resident`` (GPU): targets kept in device memory, queries scored against them
  there, only the top hits brought back (:class:`ResidentTargets`: a search's
  database partitions);
- ``slabs`` (GPU): a long pair's tile rows on several devices, each launch reading
  the row above as the launch of the tile above computes it (:class:`SlabStreaming`);
- ``codes`` (CPU): a tile's direction codes and the walk through them, the traceback
  of a long pair's segments (:class:`TileCodes`);
- ``hsps`` (CPU): a pair's further local alignments, none through the cells of those
  before it (:class:`FurtherAlignments`: several HSPs a subject in a search; GPU jobs
  find them on their worker's CPU);
- ``surplus`` (CPU): cheap lower bounds of global scores for the surplus filter of all
  against all (:class:`SurplusFloors`): where the backend rules pairs out by their
  identity surplus (``--iddef 2``: a score phase whose terminal gaps cost apart) rather
  than tracing every pair.

Kernels import neither Dask nor Zarr, do no I/O and log nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Literal, Protocol, TypeVar

import numpy as np

from swath.constants import Mode
from swath.kernels.tile_origins import Best
from swath.scoring import Scoring

Boundary = tuple[np.ndarray, np.ndarray]
BatchTile = tuple[np.ndarray, np.ndarray, Boundary, Boundary]      # q, t, top, left
TileBest = tuple[int, int, int]                                     # score, row, column
Alignments = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
Item = TypeVar("Item")
Result = TypeVar("Result")


class TargetSet(Protocol):
    """Targets a backend holds in device memory (what :meth:`ResidentTargets.upload`
    returns; only the backend that made it reads it)."""

    def __len__(self) -> int: ...


class DeviceScores(Protocol):
    """Scores left in device memory, ``(queries, targets)`` in the device's order of the
    targets (only the backend that made them reads them)."""

    @property
    def shape(self) -> tuple[int, ...]: ...


class ResidentTargets(Hashable, Protocol):
    """Targets uploaded once, then scored against query after query where they are
    (hashable: a worker caches what it uploaded by it)."""

    def upload(self, t_res: np.ndarray, t_off: np.ndarray, ids: np.ndarray) -> TargetSet:
        """Copy the targets (residues and ``(nt + 1,)`` offsets) and their record ``ids``
        (``(nt,)``, below ``2**32 - 1``) to the device."""
        ...

    def score_queries(self, targets: TargetSet, queries: Sequence[np.ndarray],
                      scoring: Scoring, mode: Mode) -> DeviceScores:
        """Optimal scores of every query against every target, left on the device."""
        ...

    def top_hits(self, scores: DeviceScores, targets: TargetSet, k: int
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best hits of each query: ``(scores, ids)``, ``(queries, k)`` int64
        on the host, as :func:`swath.kernels.top_hits.top` orders and pads them."""
        ...


class RowStream(Protocol):
    """A tile's last row, published column by column as its launch computes it, for the
    launch of the tile below (what :meth:`SlabStreaming.row_stream` returns)."""

    def give_up(self) -> None:
        """Let whatever waits on this stream go on (its writer failed; what the reader
        then computes is meaningless)."""
        ...


class SlabStreaming(Protocol):
    """A long pair's tile column in slabs of rows, one launch each, that stream into each
    other on several devices of this host."""

    def row_stream(self, w: int) -> RowStream:
        """An empty stream of a ``w``-column row. Allocate every stream before launching
        anything that waits on one."""
        ...

    def tile_scores(self, q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode,
                    strip: int, top: Boundary, left: Boundary,
                    *, stream_in: RowStream | None, stream_out: RowStream | None
                    ) -> tuple[np.ndarray, np.ndarray, TileBest]:
        """:meth:`Backend.tile_scores` in one launch whose row above comes from
        ``stream_in`` as another launch computes it (of ``top`` only the corner is read),
        and whose last row goes to ``stream_out`` as it is computed."""
        ...

    def on_device(self, device: int) -> AbstractContextManager[object]:
        """A context in which this thread's launches run on device ``device``."""
        ...


class TileCodes(Protocol):
    """A tile's direction codes and the walk back through them (phase 3 of a long pair:
    the traceback of the segments its path crosses)."""

    def tile_codes(self, q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode,
                   strip: int, top: Boundary, left: Boundary) -> np.ndarray:
        """The tile's direction codes from its input boundary, as :meth:`walk_tile` reads
        them (the CPU's: ``(h, ceil(w / 2))`` uint8, two 4-bit codes a byte, or the tier
        lanes' layout; ``traceback.code_at``)."""
        ...

    def walks(self, scoring: Scoring, mode: Mode, query: np.ndarray, target: np.ndarray
              ) -> bool:
        """Whether a traceback of this pair in tiles on this backend runs them without
        origins and walks its path back through their direction codes (tiles it computes
        much faster without origins)."""
        ...

    def walk_tile(self, dirs: np.ndarray, exit_i: int, exit_j: int, state: int
                  ) -> tuple[np.ndarray, int, int, int]:
        """Walk a tile's codes back from tile cell ``(exit_i, exit_j)`` in ``state``: the
        ops (0 diagonal, 1 ``I``, 2 ``D``) from where the walk stopped to the exit, and
        ``(i, j, state)`` where it stopped (on row or column 0, in that state, or inside
        the tile where a local alignment starts)."""
        ...

    def on_every_core(self, function: Callable[[Item], Result], items: Iterable[Item]
                      ) -> list[Result]:
        """``[function(item) for item in items]``, in a thread a core (the kernels release
        the GIL)."""
        ...


class FurtherAlignments(Protocol):
    """A pair's further local alignments after its optimal one (several HSPs a subject)."""

    def further_alignments(self, q: np.ndarray, t: np.ndarray, scoring: Scoring,
                           first: tuple[int, int, str], count: int
                           ) -> list[tuple[int, int, int, int, int, str]]:
        """Up to ``count`` local alignments after the one starting at ``first = (query
        start, target start, CIGAR)``, each the best through no cell of those before it,
        best first, while they score above 0: ``(score, query start, end, target start,
        end, CIGAR)``, 0-based, end exclusive."""
        ...


class SurplusFloors(Protocol):
    """Lower bounds of optimal global scores, cheap: what the surplus filter compares a
    pair's surplus score with (``swath.identity.surplus``)."""

    def gapless_scores(self, q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                       t_off: np.ndarray, scoring: Scoring) -> np.ndarray:
        """The better score of two gapless global alignments (residues side by side from
        the starts, and from the ends; the length difference one terminal gap, at the
        scheme's end costs) of every query against every target, ``(nq, nt)`` int32."""
        ...


class Backend(Protocol):
    """The kernels of one device: pure compute on arrays (sequences as residues and
    ``(n + 1,)`` int64 offsets)."""

    @property
    def name(self) -> Literal["cpu", "gpu"]:
        """Where the kernels run."""
        ...

    @property
    def band_worth(self) -> float:
        """The banded phase (:meth:`band_scores`) replaces the full score phase where its
        cells are at most this share of the full score phase's."""
        ...

    @property
    def split_boxes(self) -> bool:
        """Whether a score phase over scattered pairs gains from covering them with
        boxes that hug them (its cost is its cells), rather than one bounding box (its
        cost is a launch per query)."""
        ...

    @property
    def trace_residues(self) -> int:
        """How many residues (query and target lengths summed over the pairs, with a
        charge a pair for its fixed-size results) one :meth:`align_batch` call should
        take at most, where a caller splits many pairs into batches (all against all):
        the call's working memory grows with them (gathered residues, CIGAR scratch and
        runs, device CIGAR slots), while its direction codes are bounded inside it."""
        ...

    @property
    def resident(self) -> ResidentTargets | None:
        """Targets resident in device memory; ``None`` where every call uploads."""
        ...

    @property
    def slabs(self) -> SlabStreaming | None:
        """Tile rows streaming into each other on several devices; ``None`` without."""
        ...

    @property
    def codes(self) -> TileCodes | None:
        """Tiles with direction codes; ``None`` where the CPU backend's trace."""
        ...

    @property
    def hsps(self) -> FurtherAlignments | None:
        """A pair's further local alignments; ``None`` where the CPU backend's serve."""
        ...

    @property
    def surplus(self) -> SurplusFloors | None:
        """The surplus filter's lower bounds; ``None`` where all against all traces every
        pair that no score bound rules out."""
        ...

    def score_many(self, q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                   t_off: np.ndarray, scoring: Scoring, mode: Mode) -> np.ndarray:
        """Optimal scores of every query against every target, ``(nq, nt)`` int32; where
        the scheme's end gaps cost apart (``Scoring.end_gaps``, global mode), a terminal
        gap at its end costs (``swath.kernels.scheme``)."""
        ...

    def align_batch(self, q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                    t_off: np.ndarray, scoring: Scoring, mode: Mode,
                    pairs: tuple[np.ndarray, np.ndarray] | None = None) -> Alignments:
        """One optimal alignment of query k against target k, for every k; with
        ``pairs`` (two index arrays), of query ``pairs[0][k]`` against target
        ``pairs[1][k]``, the sets passed whole; terminal gaps as :meth:`score_many`
        charges them.

        Returns scores ``(N,)``, coordinates ``(N, 4)`` (query start and end, target
        start and end; 0-based, end exclusive) and the extended CIGARs as one uint8 text
        buffer with ``(N + 1,)`` offsets.
        """
        ...

    def band_scores(self, q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                    t_off: np.ndarray, lo: np.ndarray, hi: np.ndarray, scoring: Scoring
                    ) -> np.ndarray:
        """Global scores of every query against every target over the paths within each
        pair's band of diagonals ``lo .. hi`` (``(nq, nt)`` arrays; ``i - j`` is the
        diagonal of cell (i, j)), ``(nq, nt)`` int32, ``SKIPPED`` where the band holds
        no path: the first phase of all against all (``swath.identity.band_limits``). The
        band charges every gap alike: a scheme whose end gaps cost apart is refused."""
        ...

    def cigar_counts(self, cigars: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
        """The matches, mismatches, columns, gap openings and terminal gap columns of
        each CIGAR of a text buffer and its offsets, as
        :func:`swath.identity.cigar_counts` counts them: what identities are computed
        from."""
        ...

    def score_ends(self, q_res: np.ndarray, q_off: np.ndarray, t_res: np.ndarray,
                   t_off: np.ndarray, scoring: Scoring, mode: Mode
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The score and end cell of query k against target k, ``(scores, query_end,
        target_end)`` (ends exclusive), without traceback: what ranks and re-aligns
        hits."""
        ...

    def tile_forward(self, q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode,
                     corner: tuple[int, int], n: int, strip: int, top: Boundary,
                     left: Boundary) -> tuple[np.ndarray, np.ndarray, Best]:
        """Phase 1 of a long pair on one tile, ``corner`` ``(i0, j0)`` in a matrix of
        ``n`` columns, from its input boundary ``top`` (H and F, ``w + 1`` each, index 0
        the corner) and ``left`` (H and E, ``h`` each): its last row ``(4, w)`` and last
        column ``(4, h)`` int64 (H, F or E, the origin of H, the origin of F or E; origins
        matrix-wide) and, in local mode, its first best cell ``(score, i, j, origin)``
        in row-major order (``i = -1`` when no cell scores above 0). A tile charges
        every gap alike (a scheme whose end gaps cost apart is refused), and a semiglobal
        one is a global one (the caller reads the free end gaps off the last row)."""
        ...

    def tile_scores(self, q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode,
                    strip: int, top: Boundary, left: Boundary
                    ) -> tuple[np.ndarray, np.ndarray, TileBest]:
        """The same tile, scores only: its last row ``(2, w)`` and column ``(2, h)`` and,
        in local mode, the tile-local ``(score, i, j)`` of its first best cell
        (``(0, -1, -1)`` when none scores above 0, and in global modes). In local mode a
        gap value (F, E) of at most 0 may come out as any value of at most 0: no cell's
        H depends on it, nor an extension on an optimal path."""
        ...

    def tile_batch(self, tiles: Sequence[BatchTile], scoring: Scoring) -> list[np.ndarray]:
        """The last rows (H and F, ``(2, w)``) of many independent global-mode tiles
        ``(q, t, top, left)``, scores only, run side by side (the halves of a level of
        a long pair's path splits)."""
        ...


def missing(backend: object) -> list[str]:
    """The members of :class:`Backend` that ``backend`` lacks (none: it is one)."""
    members = [name for name in vars(Backend) if not name.startswith("_")]
    return [name for name in members if not hasattr(backend, name)]
