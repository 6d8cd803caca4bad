"""The public functions: align one pair (or score it), score many against many, search,
all pairs, databases, and any result store by its layout (open, resume, report, verify)."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from swath.alignment import Alignment
from swath.constants import MODES, Mode, is_mode
from swath.engine.cluster import Cluster
from swath.errors import InvalidParameter
from swath.kernels import get_backend
from swath.progress import Progress
from swath.results.alignments import PrintOptions, tabular_format
from swath.scoring import Scoring
from swath.sequences import (
    SequenceLike,
    SequenceSet,
    duplicate_name,
    encode_sequence,
    read_sequences,
    sequence_set,
)
from swath.workloads import registered

if TYPE_CHECKING:
    from swath.results.allpairs import AllPairsResult
    from swath.results.longpair import PairScore
    from swath.results.pairs import PairsResult
    from swath.results.search import SearchResult
    from swath.workloads.search import DatabaseInfo

logger = logging.getLogger(__name__)

SequencesLike = str | os.PathLike[str] | Sequence[SequenceLike] | SequenceSet

TILED_ABOVE = 1 << 30   # bytes of direction codes (m * n / 2) above which align() tiles
# a job without a store of at most this many cells runs in this process, without Dask
# (about a second of two CPU cores), from files of at most this many bytes
IN_PROCESS_CELLS = 1 << 30
IN_PROCESS_BYTES = 1 << 24
IN_PROCESS_PAIRS = 1 << 16      # at most a chunk of the engine's
# a search's cells (query residues times database residues) cost about an eighth of a
# traceback's: a search without a store of at most this many runs in this process
IN_PROCESS_SEARCH_CELLS = 1 << 33
# sequences per block of an all-pairs job: a task's memory is about 40 bytes a pair of its
# tile (160 MiB), whatever the number of sequences (engine.allpairs.prepare); on A1, blocks
# of 2,048 measured quicker than of 1,024 (benchmarks/RESULTS.md)
ALLPAIRS_BLOCK = 2048
#: the e-value cutoff of a search where hits have e-values: blastp's (``-evalue 10``)
BLAST_MAX_EVALUE = 10.0
_NO_EVALUES_SAID: set[str] = set()     # the modes a search said once have no e-values
#: what each workload's printers print (``report``), in the order the command line offers
FORMATS: dict[str, tuple[str, ...]] = {w.name: w.formats for w in registered()}


def _scoring(scoring: Scoring | None) -> Scoring:
    if scoring is None:
        return Scoring.protein("BLOSUM62", gap_open=11, gap_extend=1)
    if not isinstance(scoring, Scoring):
        raise InvalidParameter(
            f"scoring must be a swath.Scoring, got {type(scoring).__name__} "
            "(build one with Scoring.protein(...) or Scoring.dna(...))")
    return scoring


def _mode(mode: str) -> Mode:
    if not is_mode(mode):
        raise InvalidParameter(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def _end_gaps(scoring: Scoring, mode: str, refused_by: str | None = None) -> None:
    """Refuse a scheme with end costs of its own outside global mode, or in a workload
    (``refused_by``) whose kernels do not take them."""
    if scoring.end_gaps is None:
        return
    if mode != "global":
        raise InvalidParameter(f"end gap costs {scoring.end_gaps} (open, extend) apply in "
                               f"global mode only, not {mode}: use mode='global'")
    if refused_by is not None:
        raise InvalidParameter(f"{refused_by} takes no end gap costs {scoring.end_gaps}: "
                               "allpairs, scores and align (untiled) take them")


def _sequences(value: SequencesLike, scoring: Scoring, wildcard: bool, what: str
               ) -> SequenceSet:
    if isinstance(value, SequenceSet):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read_sequences(value, scoring.alphabet, wildcard=wildcard)
    if isinstance(value, (bytes, np.ndarray)):
        raise InvalidParameter(f"{what} must be a FASTA path or a list of sequences, "
                               f"got a single {type(value).__name__}")
    names = [f"{what}[{i}]" for i in range(len(value))]
    if not names:
        raise InvalidParameter(f"{what} is empty")
    return sequence_set(list(value), scoring.alphabet, wildcard=wildcard, names=names)


def align(query: SequenceLike, target: SequenceLike, scoring: Scoring | None = None,
          mode: str = "local", device: str = "auto", *, wildcard: bool = False,
          store: str | None = None, tile_size: int | None = None, strip: int | None = None,
          client: Any = None, names: tuple[str, str] = ("query", "target"),
          progress: Progress | None = None, overwrite: bool = False) -> Alignment:
    """Align one query against one target exactly, with traceback.

    Parameters
    ----------
    query, target : str, bytes or numpy.ndarray
        Residues as text (either case) or as ``uint8`` codes of ``scoring.alphabet``.
    scoring : Scoring, optional
        Matrix and gap costs; a gap of length k costs ``gap_open + k * gap_extend``.
        Default: BLOSUM62, gap 11 + 1 per residue.
    mode : {"local", "global", "semiglobal"}
        Smith-Waterman, Needleman-Wunsch, or the whole query against any part of
        the target (end gaps in the target are free).
    device : {"auto", "cpu", "gpu"}
        Where to compute; "auto" picks the GPU when one is usable.
    wildcard : bool
        Map residues outside the alphabet to its wildcard (X or N) instead of failing.
    store : str, optional
        Align through the tiled long-pair engine and keep its Zarr store here (resumable
        with ``swath resume``; ``swath inspect`` reads it).
    tile_size : int, optional
        Tiles of ``tile_size x tile_size`` cells for the tiled engine. Pairs whose
        direction codes would exceed ``TILED_ABOVE`` bytes take the tiled engine even
        without ``store`` or ``tile_size`` (default tile on the CPU: ``DEFAULT_TILE``, or
        ``SCORES_TILE`` for a local pair of a match/mismatch matrix, whose path is walked
        back through its tiles;
        on the GPU, whose tile kernel runs phase 1 there without origins, slabs of up to
        ``GPU_TILE_ROWS`` rows, and the path is found by splits: an optimal alignment,
        which among equally scoring ones may differ from the CPU's).
    strip : int, optional
        Strip width inside a tile (default ``DEFAULT_STRIP``).
    client : distributed.Client or Cluster, optional
        The Dask cluster of the tiled engine, or a :class:`Cluster` to reach or start
        for it; default: this process on the CPU or one GPU (no cluster is started), a
        local dask-cuda cluster on several GPUs.
    names : (str, str)
        The sequences' names, kept in the store.
    progress : callable, optional
        ``progress(phase, done, total, cells)`` as the tiled engine's tiles (phase
        ``"tiles"``), the path's splits (``"splits"``, GPU) and segments
        (``"segments"``) finish.
    overwrite : bool
        Replace a swath store at ``store`` that holds another job (a path holding
        anything else is refused whatever this says: swath deletes only its own stores).

    Returns
    -------
    Alignment
        Score, 0-based end-exclusive coordinates and an extended CIGAR.

    Examples
    --------
    >>> import swath
    >>> sc = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> aln = swath.align("ACGTTGCA", "TTACGTTGCATT", scoring=sc, mode="semiglobal")
    >>> aln.score, aln.target_start, aln.target_end, aln.cigar
    (16, 2, 10, '8=')
    """
    scoring = _scoring(scoring)
    mode = _mode(mode)
    _end_gaps(scoring, mode)
    backend = get_backend(device)
    q = encode_sequence(query, scoring.alphabet, wildcard=wildcard, name="query")
    t = encode_sequence(target, scoring.alphabet, wildcard=wildcard, name="target")
    if store is not None or tile_size is not None or len(q) * len(t) // 2 > TILED_ABOVE:
        _end_gaps(scoring, mode, "a tiled alignment (a store, a tile size or a long pair)")
        aln = _align_tiled(q, t, scoring, mode, device, store, tile_size, strip, client,
                           names, progress, overwrite, traceback=True)
        assert isinstance(aln, Alignment)
        return aln
    scores, coords, cigar, _ = backend.align_batch(
        q, np.array([0, len(q)]), t, np.array([0, len(t)]), scoring, mode)
    q_start, q_end, t_start, t_end = (int(x) for x in coords[0])
    return Alignment(int(scores[0]), q_start, q_end, t_start, t_end, cigar.tobytes().decode(),
                     mode)


def _align_tiled(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: Mode, device: str,
                 store: str | None, tile_size: int | None, strip: int | None, client: Any,
                 names: tuple[str, str], progress: Progress | None, overwrite: bool, *,
                 traceback: bool) -> Alignment | PairScore:
    """One pair through the tiled long-pair engine (Dask tiles, Zarr boundaries)."""
    from swath.workloads import longpair as workload

    for name, value in (("tile_size", tile_size), ("strip", strip)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise InvalidParameter(f"{name} must be a positive integer, got {value!r}")
    return workload.align(store, q, t, scoring, mode=mode, device=device, tile_size=tile_size,
                          strip=strip, client=client, names=names, traceback=traceback,
                          progress=progress, overwrite=overwrite)


def score(query: SequenceLike, target: SequenceLike, scoring: Scoring | None = None,
          mode: str = "local", device: str = "auto", *, wildcard: bool = False,
          store: str | None = None, tile_size: int | None = None, strip: int | None = None,
          client: Any = None, names: tuple[str, str] = ("query", "target"),
          progress: Progress | None = None, overwrite: bool = False) -> PairScore:
    """The optimal score of one pair and the cell where it ends, without traceback.

    The pair runs through the tiled long-pair engine as a scores-only job (StripedScore):
    its memory is the tiles' boundaries, whatever the sequences' lengths, and its store
    (``store``) is resumable like :func:`align`'s. A local pair of at most
    ``IN_PROCESS_CELLS`` cells on the CPU, without ``store``, ``tile_size`` or a
    cluster (``client``), runs as one tile in this process (no store: memory linear in its
    lengths; a DNA pair in the tier lanes, one core).

    Parameters
    ----------
    query, target, scoring, mode, device, wildcard, names, overwrite
        As in :func:`align`.
    store : str, optional
        Keep the job's Zarr store here (resumable with :func:`resume`; :func:`open`
        returns its :class:`PairScore`); default: a scratch store removed afterwards.
    tile_size : int, optional
        Tiles of ``tile_size x tile_size`` cells, of any size (default: ``SCORES_TILE``
        on the CPU; on the GPU, slabs of up to ``GPU_TILE_ROWS`` rows of the whole
        target).
    strip, client
        As in :func:`align`.
    progress : callable, optional
        ``progress("tiles", done, total, cells)`` as tiles finish.

    Returns
    -------
    PairScore
        The score, ``query_end`` and ``target_end`` (exclusive ends of the alignment's
        last cell) and the mode.

    Examples
    --------
    >>> import swath
    >>> sc = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> swath.score("ACGTTGCA", "TTACGTTGCATT", scoring=sc, mode="semiglobal", device="cpu")
    PairScore(score=16, query_end=8, target_end=10, mode='semiglobal')
    """
    scoring = _scoring(scoring)
    mode = _mode(mode)
    _end_gaps(scoring, mode, "score (the tiled long-pair engine)")
    q = encode_sequence(query, scoring.alphabet, wildcard=wildcard, name="query")
    t = encode_sequence(target, scoring.alphabet, wildcard=wildcard, name="target")
    backend = get_backend(device)
    here = client is None or (isinstance(client, Cluster) and client.one_process)
    if (here and store is None and tile_size is None and mode == "local"
            and backend.name == "cpu" and len(q) * len(t) <= IN_PROCESS_CELLS):
        return _score_in_process(backend, q, t, scoring, progress)
    result = _align_tiled(q, t, scoring, mode, device, store, tile_size, strip, client, names,
                          progress, overwrite, traceback=False)
    assert not isinstance(result, Alignment)
    return result


def _score_in_process(backend: Any, q: np.ndarray, t: np.ndarray, scoring: Scoring,
                      progress: Progress | None) -> PairScore:
    """A local pair's score and end as one tile of ``backend`` (its input boundary: 0)."""
    from swath.constants import MINUS_INFINITY
    from swath.engine.longpair import DEFAULT_STRIP, check_range
    from swath.results.longpair import PairScore

    check_range(len(q), len(t), scoring)
    cells = len(q) * len(t)
    if progress:
        progress("tiles", 0, 1, 0)
    top = (np.zeros(len(t) + 1, dtype=np.int64), np.full(len(t) + 1, MINUS_INFINITY))
    left = (np.zeros(len(q), dtype=np.int64), np.full(len(q), MINUS_INFINITY))
    *_, (score, i, j) = backend.tile_scores(q, t, scoring, "local", DEFAULT_STRIP, top, left)
    if progress:
        progress("tiles", 1, 1, cells)
    return PairScore(int(score), max(int(i), 0), max(int(j), 0), "local")


def scores(queries: SequencesLike, targets: SequencesLike, scoring: Scoring | None = None,
           mode: str = "global", device: str = "auto", *, wildcard: bool = False
           ) -> np.ndarray:
    """Optimal scores of every query against every target, without traceback.

    Parameters
    ----------
    queries, targets : FASTA path, list of sequences, or SequenceSet
        Sequences as text or ``uint8`` codes, or a FASTA/FASTQ file (plain or gzip).
    scoring, mode, device, wildcard
        As in :func:`align`.

    Returns
    -------
    numpy.ndarray
        ``int32`` array of shape ``(len(queries), len(targets))``.

    Examples
    --------
    >>> import swath
    >>> swath.scores(["HEAGAWGHEE", "PAW"], ["PAWHEAE", "HEAGAWGHEE"], mode="local")
    array([[17, 62],
           [22, 15]], dtype=int32)
    """
    scoring = _scoring(scoring)
    mode = _mode(mode)
    _end_gaps(scoring, mode)
    backend = get_backend(device)
    qs = _sequences(queries, scoring, wildcard, "queries")
    ts = _sequences(targets, scoring, wildcard, "targets")
    return backend.score_many(qs.residues, qs.offsets, ts.residues, ts.offsets, scoring, mode)


def search(queries: SequencesLike, database: SequencesLike, scoring: Scoring | None = None,
           top_k: int = 10, client: Any = None, store: str | None = None, *,
           mode: str = "local", device: str = "auto", max_evalue: float | None = None,
           statistics: dict[str, float] | None = None, query_block: int = 32,
           wildcard: bool = False, progress: Progress | None = None,
           overwrite: bool = False, max_hsps: int = 1) -> SearchResult:
    """Search queries against a database: the top hits of each query, fully aligned.

    Parameters
    ----------
    queries : FASTA path, list of sequences, or SequenceSet
        The query sequences.
    database : database store path (``swath makedb``), FASTA path, or list of sequences
        A FASTA file or a list is made into a temporary database store first.
    scoring : Scoring, optional
        Default: BLOSUM62, gap 11 + 1 per residue.
    top_k : int
        Hits kept per query: the least e-values first, then the highest scores, then
        the lowest database indices, as blastp orders them (the highest scores first
        where hits have no e-values); more than the database holds keeps them all.
    client : distributed.Client or Cluster, optional
        The Dask cluster to run on, or a :class:`Cluster` to reach or start for this
        call; default: this process on the CPU or one GPU (no cluster is started;
        database partitions stay on the GPU for the next search of the process), a local
        dask-cuda cluster for this call on several GPUs.
    store : str, optional
        Path or fsspec URL of the result store (Zarr). Running the same search into an
        existing store finishes what is missing. Without one, a search of at most
        ``IN_PROCESS_SEARCH_CELLS`` cells (query residues times database residues) runs
        in this process and is held in memory (without ``client``); a larger one runs on
        the engine into a temporary store, removed with the result (when it is collected
        or the process ends).
    mode, device, wildcard
        As in :func:`align`.
    max_evalue : float, optional
        Drop hits with a larger e-value: local mode, with statistics (refused otherwise).
        None, as ``swath search``: blastp's 10 where hits have e-values, no cutoff where
        they have none (:func:`blast_max_evalue`); ``math.inf`` keeps every hit.
    statistics : dict, optional
        Karlin-Altschul ``lambda_``, ``K``, ``H`` (and optionally ``alpha``, ``beta``) for
        matrix and gap combinations without published parameters; without either, local
        hits have no e-values or bit scores (a warning says so). Global and semiglobal
        hits have none. E-values are computed as BLAST+ computes them
        (:func:`swath.statistics.search_evalue`): with Spouge's finite-size correction for
        BLAST's protein tables (as blastp), length-adjusted for its DNA tables (as
        blastn) and for parameters given here.
    query_block : int
        Queries per work unit (the unit of resumption).
    progress : callable, optional
        ``progress("search", cells done, cells, cells done)`` as each work unit's score
        task of a database partition finishes (cells: query residues times database
        residues; units done before count whole) (the
        signature of every job's progress: see :func:`resume`).
    overwrite : bool
        Replace a swath store at ``store`` that holds another job (a path holding
        anything else is refused whatever this says: swath deletes only its own stores).
    max_hsps : int
        Alignments kept a subject (blastp's ``-max_hsps``; local mode): its optimal one,
        then each the best local alignment through none of the matrix cells of those
        before it (Waterman-Eggert), while they score above 0 (and pass ``max_evalue``).
        Default 1: a subject gives one hit.

    Returns
    -------
    SearchResult
        ``hits(query_index)`` and ``to_table()``.

    Examples
    --------
    >>> import swath
    >>> res = swath.search(["MKTAYIAKQR"], ["GGGGGGG", "PPMKTAYIAKQRPP"], top_k=1)
    >>> hit = res.hits(0)[0]
    >>> hit.target_id, hit.target_name, hit.score, hit.alignment.target_start
    (1, 'database[1]', 49, 2)
    """
    from swath.workloads import search as workload

    scoring = _scoring(scoring)
    mode = _mode(mode)
    _end_gaps(scoring, mode, "search")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
        raise InvalidParameter(f"top_k must be a positive integer, got {top_k!r}")
    if not isinstance(query_block, int) or query_block < 1:
        raise InvalidParameter(f"query_block must be a positive integer, got {query_block!r}")
    if not isinstance(max_hsps, int) or isinstance(max_hsps, bool) or max_hsps < 1:
        raise InvalidParameter(f"max_hsps must be a positive integer, got {max_hsps!r}")
    if max_hsps > 1 and mode != "local":
        raise InvalidParameter(f"max_hsps {max_hsps}: several alignments a subject are local "
                               f"ones; a {mode} search aligns each subject once")
    qs = _sequences(queries, scoring, wildcard, "queries")
    twice = duplicate_name(qs.names)
    if twice is not None:
        logger.warning("%s: query name %r is given twice (records %d and %d); its hits are "
                       "told apart by the query's index only", qs.source or "queries",
                       twice[0], twice[1] + 1, twice[2] + 1)
    if not isinstance(database, (str, os.PathLike)):
        database = _sequences(database, scoring, wildcard, "database")
    db_path, db = workload.database(database, scoring, wildcard)
    if max_evalue is None:
        max_evalue = blast_max_evalue(scoring, mode, statistics)
    options = {"top_k": top_k, "max_hsps": max_hsps, "mode": mode, "device": device,
               "max_evalue": max_evalue,
               "statistics": _statistics(scoring, mode, statistics, max_evalue)}
    cells = int(qs.offsets[-1]) * db.residues
    if store is None and client is None and cells <= IN_PROCESS_SEARCH_CELLS:
        if progress:
            progress("search", 0, cells, 0)
        result = workload.held(qs, db_path, scoring, query_block=query_block, **options)
        if progress:
            progress("search", cells, cells, cells)
        return result
    return workload.search(store, qs, db_path, scoring, client=client, progress=progress,
                           query_block=query_block, overwrite=overwrite, **options)


def _statistics(scoring: Scoring, mode: str, given: dict[str, float] | None,
                max_evalue: float | None) -> dict[str, Any] | None:
    """The Karlin-Altschul parameters a search computes e-values with (local mode:
    published or ``given``), or None: hits without e-values, with a warning where a local
    search has no parameters.

    Raises
    ------
    InvalidParameter
        ``max_evalue`` where hits have no e-values (global and semiglobal mode).
    UnknownStatistics
        ``max_evalue`` where no parameters are published for the scoring nor given.
    """
    from swath.errors import UnknownStatistics
    from swath.statistics import gapped_parameters

    if mode != "local":
        if max_evalue is not None:
            raise InvalidParameter(f"max_evalue applies to local searches: {mode} hits have no "
                                   "e-values (Karlin-Altschul statistics are for local "
                                   "alignments)")
        if mode not in _NO_EVALUES_SAID:
            _NO_EVALUES_SAID.add(mode)
            logger.warning("%s hits have no e-values or bit scores (Karlin-Altschul "
                           "statistics are for local alignments): their columns are left "
                           "empty", mode)
        return None
    try:
        return dataclasses.asdict(gapped_parameters(scoring, **(given or {})))
    except UnknownStatistics as exc:
        if max_evalue is not None:
            raise UnknownStatistics(f"{exc}; max_evalue needs e-values") from None
        logger.warning("%s: the hits have no e-values or bit scores", exc)
        return None


def blast_max_evalue(scoring: Scoring, mode: str,
                     statistics: dict[str, float] | None = None) -> float | None:
    """blastp's default e-value cutoff (:data:`BLAST_MAX_EVALUE`) where a search's hits
    have e-values (local mode, with published or given statistics), else None: the
    ``max_evalue`` that ``swath search`` passes to :func:`search` when given none.

    Raises
    ------
    InvalidParameter
        ``statistics`` are incomplete or out of range (as :func:`search` says).

    Examples
    --------
    >>> blast_max_evalue(Scoring.protein("BLOSUM62", 11, 1), "local")
    10.0
    >>> blast_max_evalue(Scoring.protein("BLOSUM62", 11, 1), "global") is None
    True
    >>> blast_max_evalue(Scoring.protein("BLOSUM62", 12, 3), "local") is None
    True
    """
    from swath.errors import UnknownStatistics
    from swath.statistics import gapped_parameters

    if _mode(mode) != "local":
        return None
    try:
        gapped_parameters(scoring, **(statistics or {}))
    except UnknownStatistics:
        return None
    return BLAST_MAX_EVALUE


def allpairs(sequences: SequencesLike, scoring: Scoring | None = None, *, mode: str = "global",
             min_identity: float = 0.97, iddef: str | int = "pident", store: str | None = None,
             client: Any = None, device: str = "auto", scores: bool = False,
             clusters: bool = False, block: int | None = None, wildcard: bool = False,
             progress: Progress | None = None, overwrite: bool = False,
             rename_duplicates: bool = False) -> AllPairsResult:
    """Align every unordered pair of sequences (none with itself); keep the close ones.

    Every pair is scored; a pair is aligned with traceback only if its lengths and score
    allow ``min_identity`` (filters that never drop a pair that passes), and kept if its
    optimal alignment reaches it. The query of a pair is its earlier sequence in the input
    (as in vsearch). The job runs as a Dask graph, one task per tile of ``block`` x
    ``block`` sequences (sorted by length), and its store is resumable;
    ``xarray.open_zarr(store)`` reads the kept pairs as named variables in input order.

    Parameters
    ----------
    sequences : FASTA path, list of sequences, or SequenceSet
        At least one sequence.
    scoring : Scoring, optional
        Default: BLOSUM62, gap 11 + 1 per residue.
    mode : {"global", "semiglobal", "local"}
        As in :func:`align`; semiglobal: the query (the earlier sequence) whole against
        any part of the target.
    min_identity : float
        Keep the pairs whose identity is at least this, in (0, 1].
    iddef : "pident" or int
        Identity definition (``swath.identity``): "pident", matches over alignment
        columns (BLAST's), or vsearch's ``--iddef`` 0 to 4.
    store : str, optional
        Path or fsspec URL of the result store (Zarr); default: a temporary directory,
        removed with the result (when it is collected or the process ends). Running the
        same job into an existing store finishes what is missing.
    client : distributed.Client or Cluster, optional
        The Dask cluster to run on, or a :class:`Cluster` to reach or start for this
        call; default: this process on the CPU or one GPU.
    device, wildcard
        As in :func:`align`.
    scores : bool
        Also keep the dense n x n score matrix (int32, 4 n^2 bytes) in the store.
    clusters : bool
        Also compute single-linkage clusters of the kept pairs.
    block : int, optional
        Sequences per block (default ``ALLPAIRS_BLOCK``, 2,048); a task's
        memory grows with ``block ** 2``, never with the number of sequences.
    progress : callable, optional
        ``progress("allpairs", tiles done, tiles, pairs done)`` as the job advances.
    rename_duplicates : bool
        Rename the second, third, ... sequence of a name ``NAME_2``, ``NAME_3``, ...;
        otherwise a name given twice is refused (``InvalidInput``: pairs would be
        ambiguous).
    overwrite : bool
        Replace a swath store at ``store`` that holds another job (a path holding
        anything else is refused whatever this says: swath deletes only its own stores).

    Returns
    -------
    AllPairsResult
        ``to_table()`` and ``to_pandas()`` (``ALLPAIRS_COLUMNS``, the columns of
        ``PAIRS_COLUMNS``), ``scores()``, ``clusters()``, ``filtered`` (pairs each filter
        removed), ``lines(format)``.

    Examples
    --------
    >>> import swath
    >>> dna = swath.Scoring.dna(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    >>> res = swath.allpairs(["ACGTACGTAC", "ACGTACGTAA", "TTTTGGGG"], scoring=dna,
    ...                      min_identity=0.8, device="cpu")
    >>> row = dict(zip(swath.ALLPAIRS_COLUMNS, res.to_table()[0]))
    >>> row["query_name"], row["target_name"], row["score"], row["identity"]
    ('sequences[0]', 'sequences[1]', 15, 0.9)
    >>> res.filtered
    {'pairs': 3, 'length_filtered': 0, 'score_filtered': 2, 'traced': 1, 'kept': 1}
    """
    from swath.identity import DEFINITIONS
    from swath.kernels import DEVICES
    from swath.workloads import allpairs as workload

    scoring = _scoring(scoring)
    mode = _mode(mode)
    _end_gaps(scoring, mode)
    if isinstance(min_identity, bool) or not isinstance(min_identity, (int, float)) \
            or not 0 < min_identity <= 1:
        raise InvalidParameter(f"min_identity must be a number in (0, 1], got {min_identity!r}")
    if iddef not in DEFINITIONS or isinstance(iddef, bool):
        raise InvalidParameter(f"iddef must be 'pident' or one of vsearch's 0, 1, 2, 3, 4, "
                               f"got {iddef!r}")
    block = ALLPAIRS_BLOCK if block is None else block
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise InvalidParameter(f"block must be a positive integer, got {block!r}")
    if device not in DEVICES:
        raise InvalidParameter(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    seqs = _job_input(sequences, scoring, wildcard, "sequences")
    if isinstance(seqs, SequenceSet) and not len(seqs):
        raise InvalidParameter("sequences is empty: give at least one sequence")
    return workload.allpairs(store, seqs, scoring, client=client, progress=progress,
                             wildcard=wildcard, mode=mode, min_identity=float(min_identity),
                             iddef=iddef, block=block, scores=scores, clusters=clusters,
                             device=device, rename_duplicates=rename_duplicates,
                             overwrite=overwrite)


def align_pairs(queries: SequencesLike, targets: SequencesLike,
                scoring: Scoring | None = None, mode: str = "local", device: str = "auto", *,
                pairs: Any = None, store: str | None = None, client: Any = None,
                chunk: int | None = None, wildcard: bool = False,
                progress: Progress | None = None, overwrite: bool = False) -> PairsResult:
    """Align many given pairs, one full alignment (with traceback) each.

    Parameters
    ----------
    queries, targets : FASTA/FASTQ path (plain or gzip), list of sequences, or SequenceSet
        The records. Files are taken into the store batch by batch: inputs larger than
        memory are fine (pairs by name keep the records' names in memory while the
        store is made).
    scoring : Scoring, optional
        Default: BLOSUM62, gap 11 + 1 per residue.
    mode, device, wildcard
        As in :func:`align`.
    pairs : optional
        Which query goes with which target: None pairs them by position (query i with
        target i: equal counts), two integer arrays pair record ``pairs[0][k]`` with
        record ``pairs[1][k]``, two lists of names pair records by name (names unique in
        each input), and a path reads a pairs file (two name columns, query then target:
        ``swath pairs --pairs``).
    store : str, optional
        Path or fsspec URL of the result store (Zarr). Running the same job into an
        existing store finishes what is missing. Without one, a job of at most
        ``IN_PROCESS_PAIRS`` pairs and ``IN_PROCESS_CELLS`` cells (query times target
        residues, summed over the pairs) from files of at most ``IN_PROCESS_BYTES`` runs
        in this process and is held in memory (without ``client`` and ``chunk``); a larger
        one runs on the engine into a temporary store, removed with the result (when it
        is collected or the process ends).
    client : distributed.Client or Cluster, optional
        As in :func:`search`.
    chunk : int, optional
        Pairs per chunk, the unit of work and of resumption; default: 65,536, fewer for
        long pairs (about 8.6e9 cells a chunk).
    progress : callable, optional
        ``progress("pairs", pairs done, pairs, cells)`` as chunks finish (the signature
        of every job's progress: see :func:`resume`).
    overwrite : bool
        As in :func:`search`.

    Returns
    -------
    PairsResult
        One alignment a pair, as numpy columns (``score``, ``cigar``, ``identity``,
        coordinates, names, indices), ``to_pandas()``, and ``lines(format)`` (tsv, sam,
        paf, json, text).

    Raises
    ------
    InvalidInput
        Unequal counts for pairs by position, a pair naming no record (with the pairs
        file's line), a name given twice where pairs are by name, a pairs file line
        with one column.
    InvalidSequence, InputNotFound
        As :func:`read_sequences`.

    Examples
    --------
    >>> import swath
    >>> res = swath.align_pairs(["ACGTAC", "GGGT"], ["TACGTACT", "GGAT"], device="cpu",
    ...                         scoring=swath.Scoring.dna(), mode="semiglobal")
    >>> res.score.tolist(), res.target_start.tolist(), res.cigar.tolist()
    ([12, 3], [1, 0], ['6=', '2=1X1='])
    >>> res = swath.align_pairs(["ACGTAC", "GGGT"], ["TACGTACT", "GGAT"], device="cpu",
    ...                         scoring=swath.Scoring.dna(), pairs=([0, 1, 1], [0, 0, 1]))
    >>> res.query_name.tolist(), res.score.tolist()
    (['queries[0]', 'queries[1]', 'queries[1]'], [12, 4, 4])
    """
    from swath.workloads import pairs as workload

    scoring = _scoring(scoring)
    mode = _mode(mode)
    _end_gaps(scoring, mode, "align_pairs")
    if chunk is not None and (not isinstance(chunk, int) or isinstance(chunk, bool)
                              or chunk < 1):
        raise InvalidParameter(f"chunk must be a positive integer, got {chunk!r}")
    asked = _pairing(pairs)
    sides = [_job_input(value, scoring, wildcard, what)
             for value, what in ((queries, "queries"), (targets, "targets"))]
    if store is None and client is None and chunk is None and all(map(_small, sides)):
        records = [_sequences(side, scoring, wildcard, what)     # read once, here
                   for side, what in zip(sides, ("queries", "targets"), strict=True)]
        if progress:
            progress("pairs", 0, None, 0)
        held = workload.held(records[0], records[1], asked, scoring, mode=mode, device=device,
                             max_cells=IN_PROCESS_CELLS, max_pairs=IN_PROCESS_PAIRS)
        if held is not None:
            if progress:
                progress("pairs", len(held), len(held), held.cells)
            return held
        sides = list(records)           # a job for the engine: the records as they were read
    return workload.align_pairs(store, sides[0], sides[1], asked, scoring, client=client,
                                wildcard=wildcard, progress=progress,
                                mode=mode, device=device, chunk=chunk, overwrite=overwrite)


def _job_input(value: SequencesLike, scoring: Scoring, wildcard: bool, what: str
                ) -> str | SequenceSet:
    """An input of a job: a file's path (read where the job runs), or its records
    (standard input: read once, here)."""
    from swath.sequences.parsers import STDIN

    if isinstance(value, (str, os.PathLike)) and os.fspath(value) != STDIN:
        return os.fspath(value)
    return _sequences(value, scoring, wildcard, what)


def _small(side: str | SequenceSet) -> bool:
    """Whether one side of a job may be read whole for a job in this process: records in
    memory, or a file of at most ``IN_PROCESS_BYTES`` (a gzip file's own size counted four
    times; a file that cannot be read: its error comes when it is read)."""
    if not isinstance(side, str):
        return True
    try:
        size = os.stat(side).st_size
    except OSError:
        return True
    return size * (4 if side.endswith(".gz") else 1) <= IN_PROCESS_BYTES


def _pairing(pairs: Any) -> Any:
    """``align_pairs``' ``pairs`` as the engine takes them: None, two index arrays, or
    named pairs (from lists or a pairs file)."""
    from swath.sequences.pairing import NamedPairs, read_pairs

    if pairs is None:
        return None
    if isinstance(pairs, (str, os.PathLike)):
        return read_pairs(pairs)
    if not isinstance(pairs, (tuple, list)) or len(pairs) != 2:
        raise InvalidParameter("pairs must be None, two index arrays, two lists of names, or "
                               f"a pairs file, got {type(pairs).__name__}")
    first, second = pairs
    if all(isinstance(side, (list, tuple)) and all(isinstance(v, str) for v in side)
           for side in pairs) and len(first) and len(second):
        if len(first) != len(second):
            raise InvalidParameter(f"pairs must be two lists of one length, got {len(first)} "
                                   f"and {len(second)} names")
        return NamedPairs(list(first), list(second))
    return np.asarray(first), np.asarray(second)


def makedb(fasta: str | os.PathLike[str], path: str, scoring: Scoring | None = None, *,
           wildcard: bool = False, partition_residues: int | None = None,
           overwrite: bool = False, rename_duplicates: bool = False,
           progress: Progress | None = None, client: Any = None) -> DatabaseInfo:
    """Prepare a database store (Zarr) for searches: encoded, sorted by length, and cut
    into partitions of about equal residues.

    The file is cut into pieces of whole records, each parsed, encoded and written by a
    task of its own, then each partition by a task (a gzip file is read once, streaming,
    its pieces handed out as they come): no process holds all residues or all names. The
    store appears at ``path`` only once finished.

    Parameters
    ----------
    fasta : str or os.PathLike
        The sequences: FASTA or FASTQ, plain or gzip (a local file; on a cluster, one
        the workers read at the same path).
    path : str
        Where to write the store: a local path or an fsspec URL.
    scoring : Scoring, optional
        Its alphabet is the database's; searches must score the same alphabet. Default:
        BLOSUM62's (protein).
    wildcard : bool
        Map residues outside the alphabet to its wildcard (X or N) instead of failing.
    partition_residues : int, optional
        About how many residues each partition holds (a partition is one chunk and one
        unit of search work); default ``storage.database.DEFAULT_PARTITION_RESIDUES``.
    overwrite : bool
        Replace an existing database store at ``path`` (anything else there is never
        deleted).
    rename_duplicates : bool
        Rename the second, third, ... record of a name ``NAME_2``, ``NAME_3``, ...;
        otherwise a name given twice is refused (hits would be ambiguous).
    progress : callable, optional
        ``progress("pieces", pieces taken in, pieces (None while a gzip file is read),
        0)``, then ``progress("write", partitions written, partitions, 0)``.
    client : distributed.Client or Cluster, optional
        The Dask cluster to run on, or a :class:`Cluster` to reach or start for this
        call; default: this process, its pieces and partitions on a thread a core.

    Returns
    -------
    DatabaseInfo
        ``path``, ``sequences``, ``residues``, ``partitions`` and the source's identity
        ``sha256`` (the SHA-256 of its pieces' spans and SHA-256s).

    Raises
    ------
    InputNotFound, InvalidInput, InvalidSequence
        The source cannot be read or is malformed (file and line named).
    InputChanged
        The source changed while it was read.
    InvalidParameter
        ``path`` holds a store and ``overwrite`` is not set, or something other than a
        database.

    Examples
    --------
    >>> import pathlib, tempfile, swath
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "db.fasta").write_text(">a\\nMKVLA\\n>b\\nWW\\n>c\\nMKV\\n")
    >>> info = swath.makedb(tmp / "db.fasta", str(tmp / "db.swdb"), partition_residues=5)
    >>> info.sequences, info.residues, info.partitions
    (3, 10, 2)
    """
    from swath.workloads.search import make_database

    return make_database(fasta, path, _scoring(scoring), progress=progress, client=client,
                         partition_residues=partition_residues, wildcard=wildcard,
                         overwrite=overwrite, rename_duplicates=rename_duplicates)


def open(store: str) -> SearchResult | AllPairsResult | PairsResult | Alignment | PairScore:
    """The result of a finished job, from its store, whatever its workload.

    Parameters
    ----------
    store : str
        Path or fsspec URL of a result store: a search's, an all-pairs job's, a
        batched-pairs job's or a long pair's.

    Returns
    -------
    SearchResult, AllPairsResult, PairsResult, Alignment or PairScore
        A search's hits, an all-pairs job's kept pairs, a batched-pairs job's alignments,
        a long pair's alignment, or the score of a scores-only long pair (:func:`score`).

    Raises
    ------
    StoreNotFound
        No swath store is at ``store``.
    InvalidParameter
        The store is not a result store (a database).
    StoreIncomplete
        Its job has not finished (:func:`resume` finishes it).
    StoreDamaged
        Some of its data no longer match their digests (:func:`resume` recomputes them).

    Examples
    --------
    >>> import os, tempfile, swath
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.zarr")
    >>> _ = swath.allpairs(["ACGTACGT", "ACGTACGA"], scoring=swath.Scoring.dna(),
    ...                    min_identity=0.8, device="cpu", store=path)
    >>> swath.open(path).to_table()[0][:5]
    (0, 1, 'sequences[0]', 'sequences[1]', 11)
    """
    from swath.workloads import check_finished, lookup

    workload, opened = lookup(store)
    check_finished(opened)
    result: SearchResult | AllPairsResult | PairsResult | Alignment | PairScore = \
        workload.result(store)
    return result


def resume(store: str, *, device: str = "auto", client: Any = None,
           progress: Progress | None = None
           ) -> SearchResult | AllPairsResult | PairsResult | Alignment | PairScore:
    """Finish an interrupted job from its store, whatever its workload: run only the work
    not marked done, and again the work whose data no longer match their digests. A
    finished, sound store is left as it is.

    Parameters
    ----------
    store : str
        Path or fsspec URL of a result store (a search's, an all-pairs job's, a
        batched-pairs job's or a long pair's, in any phase).
    device : {"auto", "cpu", "gpu"}
        Where to compute.
    client : distributed.Client or Cluster, optional
        As in :func:`search`.
    progress : callable, optional
        ``progress(phase, done, total, work)``, the one signature of every job's
        progress: ``done`` of ``total`` steps of ``phase`` (counting those done before),
        and ``work``, the pairs (``"allpairs"``) or cells (``"search"``, ``"pairs"``,
        ``"tiles"``) computed so far, else 0. Phases: ``"search"``, ``"allpairs"``,
        ``"pairs"``, and a long pair's ``"tiles"``, ``"splits"`` and ``"segments"``.

    Returns
    -------
    SearchResult, AllPairsResult, PairsResult, Alignment or PairScore
        As :func:`open`.

    Raises
    ------
    StoreNotFound, InvalidParameter
        As :func:`open`.
    InputChanged
        An input the job reads from outside its store (a search's database) changed.
    StoreLocked
        Another job is writing the store.

    Examples
    --------
    >>> import os, tempfile, swath
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.zarr")
    >>> _ = swath.allpairs(["ACGTACGT", "ACGTACGA"], scoring=swath.Scoring.dna(),
    ...                    min_identity=0.8, device="cpu", store=path)
    >>> len(swath.resume(path, device="cpu"))     # finished already: nothing runs
    1
    """
    from swath.workloads import is_finished, lookup

    workload, opened = lookup(store)
    if not is_finished(opened):
        workload.resume(store, device, client, progress)
    result: SearchResult | AllPairsResult | PairsResult | Alignment | PairScore = \
        workload.result(store)
    return result


def report(store: str, format: str | None = None, *, plot: str | None = None,
           cigar_m: bool = False, command: str | None = None) -> Iterator[str]:
    """A finished result store as text, as ``swath inspect`` prints it.

    Parameters
    ----------
    store : str
        Path or fsspec URL of a result store.
    format : str, optional
        One of its workload's formats (:data:`FORMATS`): search and all-pairs stores
        ``"tsv"`` (the default), ``"json"``, ``"text"``, ``"sam"`` or ``"paf"``; long
        pairs' ``"json"`` (the default), ``"tsv"`` or ``"text"``.
    plot : str, optional
        Also draw a long pair's alignment path over its matrix (a dot plot) to this image
        file, before the text is returned (needs matplotlib).
    cigar_m : bool
        SAM's and PAF's CIGARs with ``M`` for runs of ``=`` and ``X``.
    command : str, optional
        The command line to name in SAM's header (``@PG CL:``).

    Returns
    -------
    iterator of str
        The text in pieces, each ending with a newline.

    Raises
    ------
    StoreNotFound, InvalidParameter, StoreIncomplete, StoreDamaged
        As :func:`open`; ``InvalidParameter`` also for a format the store's workload does
        not print, and a plot of a store that holds no alignment path.

    Examples
    --------
    >>> import os, tempfile, swath
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.zarr")
    >>> _ = swath.allpairs(["ACGTACGT", "ACGTACGA"], scoring=swath.Scoring.dna(),
    ...                    min_identity=0.8, device="cpu", store=path)
    >>> next(swath.report(path)).split()[:4]     # tsv: vsearch's --blast6out columns
    ['sequences[0]', 'sequences[1]', '87.5', '8']
    """
    from swath.workloads import check_finished, lookup

    workload, opened = lookup(store)
    if plot and workload.plot is None:
        layout = opened.LAYOUT
        raise InvalidParameter(
            f"--plot draws the path of a long pair's alignment store (swath align -o); "
            f"{store} is {'an' if layout[0] in 'aeiou' else 'a'} {layout} store (--format "
            f"text shows its {workload.items}' alignments)")
    check_finished(opened)
    format = format or workload.default_format
    if tabular_format(format)[0] not in workload.formats:
        raise InvalidParameter(f"format must be one of {', '.join(workload.formats)} for "
                               f"{store}, got {format!r}")
    if plot and workload.plot is not None:
        workload.plot(store, plot)
    return workload.lines(store, format, PrintOptions(cigar_m=cigar_m, command=command))


def format_alignment(result: Alignment | PairScore, format: str = "text", *,
                     query: SequenceLike | None = None, target: SequenceLike | None = None,
                     scoring: Scoring | None = None,
                     names: tuple[str, str] = ("query", "target")) -> str:
    """One pair's result as ``swath align`` prints it.

    Parameters
    ----------
    result : Alignment or PairScore
        What :func:`align` or :func:`score` returned.
    format : {"text", "json", "tsv"}
        text: a header and the pairwise view (like EMBOSS water/needle); json: one
        object; tsv: a header line and one row (json and tsv coordinates 0-based, end
        exclusive). A :class:`PairScore` prints its score and end cell.
    query, target : str, bytes or numpy.ndarray, optional
        The aligned sequences (as :func:`align` takes them): the text view of an
        :class:`Alignment` needs them.
    scoring : Scoring, optional
        The scoring the alignment was computed with (default as in :func:`align`).
    names : (str, str)
        The query's and target's ids.

    Returns
    -------
    str
        The lines, each ending with a newline.

    Raises
    ------
    InvalidParameter
        An unknown format, or the text view of an alignment without its sequences.

    Examples
    --------
    >>> import swath
    >>> aln = swath.Alignment(16, 0, 8, 2, 10, "8=", "semiglobal")
    >>> swath.format_alignment(aln, "tsv", names=("a", "b")).splitlines()[1].split()
    ['a', 'b', '16', '0', '8', '2', '10', '8=', '1.0', 'semiglobal']
    """
    from swath.results.longpair import alignment_lines, score_lines

    if not isinstance(result, Alignment):
        return "".join(score_lines(result, names, format))
    scoring = _scoring(scoring)
    codes = [None if seq is None else encode_sequence(seq, scoring.alphabet, name=what)
             for seq, what in ((query, "query"), (target, "target"))]
    return "".join(alignment_lines(result, names, format, query=codes[0], target=codes[1],
                                   scoring=scoring))


def use_threads(threads: int) -> None:
    """Let this process's CPU kernels use ``threads`` cores (and share them among the
    workers of a local cluster it starts), instead of every core; from their next call.

    Parameters
    ----------
    threads : int
        1 to the machine's cores.

    Raises
    ------
    InvalidParameter
        ``threads`` is out of range.

    Examples
    --------
    >>> import swath
    >>> swath.use_threads(1)    # doctest: +SKIP
    """
    from swath.kernels.cores import THREADS_VARIABLE

    most = os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= most:
        raise InvalidParameter(f"threads must be 1 to {most} (this machine's cores), got "
                               f"{threads!r}")
    os.environ[THREADS_VARIABLE] = str(threads)


def warm_up(device: str = "auto", *, client: Any = None, job: str | None = None,
            scoring: Scoring | None = None, mode: str = "local") -> None:
    """Start readying ``device`` in the background while the caller reads its inputs: the
    GPU probe (CuPy's import, a CUDA context) and, for a ``job`` that runs in this
    process, the loading of the CUDA kernels it runs; on the CPU, for a search with
    ``scoring`` and ``mode``, the compiling of its traceback kernels in a process of their
    own, where numba's cache lacks them (a search's first run on a machine), on a second
    core while this process compiles its score kernel. The first computation waits for
    what is under way. Nothing happens where the job runs on a cluster (a
    ``distributed.Client``, or a :class:`Cluster` with a scheduler or several workers:
    its workers load their own).

    Parameters
    ----------
    device : {"auto", "cpu", "gpu"}
        Where the job computes.
    client : distributed.Client or Cluster, optional
        Where the job runs, as the job's function takes it.
    job : {"search", "allpairs", "longpair"}, optional
        The workload whose kernels to load; default: the probe only.
    scoring : Scoring, optional
        A search's scheme (with ``mode``): its CPU traceback kernels compile ahead.
    mode : {"local", "global", "semiglobal"}
        A search's mode.

    Examples
    --------
    >>> import swath
    >>> swath.warm_up("cpu", job="search")     # without a scheme: nothing ahead
    """
    from swath.kernels import DEVICES
    from swath.workloads import load_kernels, named

    if device not in DEVICES:
        raise InvalidParameter(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    sources = named(job).cuda_sources if job is not None else ()
    traced = (scoring, _mode(mode)) if job == "search" and scoring is not None else None
    load_kernels(sources, client, device, traced)


def verify(store: str) -> dict[str, int]:
    """Check a store's data against the digests written with it.

    Every done unit of a result store (search units, all-pairs tiles, long-pair tiles
    and segments) and every array written whole is read back and digested again; every
    partition of a database store too.

    Parameters
    ----------
    store : str
        Path or fsspec URL of a swath store (a result store or a database).

    Returns
    -------
    dict
        How many units of each kind (``"array"``: arrays written whole, ``"partition"``:
        database partitions) were checked; all of them are sound.

    Raises
    ------
    StoreDamaged
        Some are not: the message names them (``swath resume`` recomputes a result
        store's damaged units).
    StoreNotFound
        No swath store is at ``store``.
    """
    from swath.workloads import verify_store

    return verify_store(store)
