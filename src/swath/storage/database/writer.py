"""Writing a database store (``swath makedb``): :class:`DatabaseBuild`, the store while it
is built, whose units ``swath.engine.database`` runs as tasks.

# n: sequences, K: pieces of the source, p: partitions.

A database is built where it appears whole (:func:`swath.storage.creation.creating`): an
interrupted build never leaves a store at the target path that reads as finished. While
it is built its subgroup ``work`` holds the source as pieces of whole records
(:mod:`swath.storage.pieces`, side ``sequences``, each piece's records sorted by length),
each taken in by a task of its own; then one task indexes them (:meth:`DatabaseBuild.index`):
it sorts all targets by length and cuts the partitions, writes the root arrays but
``residues`` and ``names`` (:mod:`swath.storage.database.layout`), finds the names given
twice, and writes

    work/residue_cuts   (p + 1, K) int64: where, in each piece's residues (kept sorted by
                        length), the sorted targets before each partition bound end: the
                        targets of any run of sorted targets are a run of every piece's
    work/renamed        the records renamed (``rename_duplicates``), ascending (int64)
    work/renames        their new names (str)

Then a task a partition writes its row of ``residues`` from its run of each piece
(:meth:`DatabaseBuild.write_partition`) and a task a chunk of ``names`` writes it
(:meth:`DatabaseBuild.write_names`); once all are written, ``work`` goes and the store
is marked complete (:meth:`DatabaseBuild.finish`). No process holds all residues or all
names: the index holds a few int64 a sequence (its lengths, sorted order and the hashes of
its names), a partition's task its partition.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
import zarr

from swath.errors import OutputExists
from swath.scoring import Alphabet
from swath.storage.common import (
    ROOT_KEY,
    StorePath,
    display,
    mark_complete,
    missing,
    open_group,
    record_digest,
    swath_attrs,
    update_attrs,
    write_whole,
)
from swath.storage.creation import found_at
from swath.storage.database.layout import (
    LAYOUT,
    PAD,
    VERSION,
    partition_digest,
    stored_alphabet,
)
from swath.storage.database.partitions import Partitioning, fill_row
from swath.storage.integrity import digest_string_chunks, utf8_bytes
from swath.storage.pieces import PieceStore, piece_kind

__all__ = [
    "SIDE",
    "DatabaseBuild",
    "DatabaseInfo",
    "check_target",
    "database_lock_path",
]

logger = logging.getLogger(__name__)

#: the side of the pieces of a database's source (:mod:`swath.storage.pieces`)
SIDE = "sequences"

_TARGET_CHUNK = 1 << 16  # elements per chunk of the per-target arrays
_NAME_CHUNK = 1 << 16
# the chunks of a piece's residues, at least and at most (DatabaseBuild._piece_spec): a
# partition's run of a piece is 51 KiB at the defaults for 10 G residues
_RUN_CHUNKS = (1 << 16, 1 << 22)
_GZIP_RATIO = 4     # about the bytes of a gzip file's text, for each of its own

_B = TypeVar("_B", bound="DatabaseBuild")


@dataclass(frozen=True)
class DatabaseInfo:
    """What ``swath makedb`` wrote.

    Parameters
    ----------
    path : str
        The store.
    sequences : int
        Number of records.
    residues : int
        Total residues.
    partitions : int
        Number of partitions (chunks of ``residues``).
    width : int
        Residues of the largest partition (the row width of ``residues``).
    sha256 : str
        The source's identity: the hex SHA-256 of its pieces' byte spans and SHA-256s,
        in order (:meth:`~swath.storage.pieces.PieceStore.identity`).
    """

    path: str
    sequences: int
    residues: int
    partitions: int
    width: int
    sha256: str


def database_lock_path(store: StorePath) -> str:
    """The lock file a database writer holds: ``<store>.swath-lock``, beside the store.

    It lies beside the store, not inside, because the store itself appears only
    when it is complete (renamed into place).
    """
    return os.fspath(store).rstrip("/") + ".swath-lock"


def check_target(store: StorePath, overwrite: bool) -> bool:
    """Whether a database may be written at ``store``, in place of what is there (True) or
    where nothing is (False).

    Raises
    ------
    OutputExists
        ``store`` holds something other than a database, or a finished database and
        ``overwrite`` is false.
    """
    found = found_at(store)
    if found is not None and found.get("layout") != LAYOUT:
        raise OutputExists(f"{display(store)} exists and is not a swath database; swath will "
                           "not delete it (remove it yourself or choose another path)")
    interrupted = found is not None and found.get("created") is False
    if found is not None and not overwrite and not interrupted:
        raise OutputExists(f"{display(store)} already exists (use --overwrite, or "
                           "overwrite=True, to replace it)")
    return found is not None


class DatabaseBuild(PieceStore):
    """A database store while ``swath makedb`` builds it (see the module's docstring):
    opened by its tasks, which check its creation id, before its creation has ended."""

    LAYOUT = LAYOUT
    VERSION = VERSION
    SIDES = (SIDE,)
    SORTED = True
    MARKS: ClassVar[dict[str, str]] = {piece_kind(SIDE): f"work/{SIDE}_done"}
    INPUT_KINDS: ClassVar[frozenset[str]] = frozenset({piece_kind(SIDE)})

    @classmethod
    def open(cls: type[_B], path: StorePath, *, mode: str = "r", complete: bool = False
             ) -> _B:
        """The store being built at ``path`` (its ``created`` still false: a reader's
        :func:`~swath.storage.common.check_layout` refuses it)."""
        group = open_group(path, mode=mode)
        return cls(display(path), group, swath_attrs(group))

    @classmethod
    def start(cls, group: zarr.Group, path: str, file: dict[str, Any],
              planned: np.ndarray | None) -> DatabaseBuild:
        """The build in a new store's ``group`` (which its tasks open at ``path``), ready
        to take in the source (``file``: how its tasks read it, ``planned``: a plain
        file's pieces, :class:`~swath.engine.intake.Source`'s)."""
        cls.make_pieces(group, SIDE, 0 if planned is None else planned)
        update_attrs(group, sources={SIDE: file})
        return cls(path, group, swath_attrs(group))

    @property
    def alphabet(self) -> Alphabet:
        return stored_alphabet(self.attrs)

    def _piece_spec(self, name: str) -> tuple[Any, int, bool]:
        """A piece's residues in chunks of about the run of them that a partition takes
        (the piece's bytes times the partition's residues over the source's, a power of
        two from 64 KiB to 4 MiB): a partition's task reads little more than its runs,
        from few chunks."""
        if name != "residues":
            return super()._piece_spec(name)
        file = self.attrs["sources"][SIDE]
        residues = file["bytes"] * (_GZIP_RATIO if file["gzip"] else 1)
        run = file["piece_bytes"] * self.attrs["partition_size"] // max(residues, 1)
        chunk = min(max(1 << max(int(run).bit_length() - 1, 0), _RUN_CHUNKS[0]), _RUN_CHUNKS[1])
        return np.uint8, chunk, False

    def piece_order(self, k: int) -> np.ndarray:
        """Piece ``k``'s records in the order it keeps them (by length): their numbers in
        the piece."""
        return np.asarray(self.piece(SIDE, k, "order")[...], dtype=np.int64)

    # the index ----------------------------------------------------------------------

    def index(self, size: int, rename: bool) -> None:
        """Once every piece is in: refuse or rename the names given twice, sort the
        targets by length and cut them into partitions of about ``size`` residues, write
        the arrays of the root but ``residues`` and ``names`` (those two made), where each
        partition's targets lie in each piece, and the attributes ``sequences``,
        ``residues``, ``partitions`` and ``width``.

        Raises
        ------
        InvalidInput
            A name is given twice and ``rename`` is false.
        """
        self.index_pieces()
        self._write_renames(rename)
        parts = Partitioning.build(self.lengths(SIDE), size)
        self._write_targets(parts)
        self._write_cuts(parts)
        update_attrs(self.group, sequences=parts.sequences, residues=parts.residues,
                     partitions=parts.partitions, width=parts.width)

    def _write_renames(self, rename: bool) -> None:
        """The records renamed and their new names (:meth:`PieceStore.renames`)."""
        renames = sorted(self.renames(SIDE, rename, self.attrs["source"]).items())
        for name, values, dtype in (("renamed", [record for record, _ in renames], np.int64),
                                    ("renames", [new for _, new in renames], str)):
            array = self.group.create_array(f"work/{name}", shape=(len(renames),),
                                            dtype=dtype, chunks=(max(len(renames), 1),))
            if renames:
                array[...] = np.array(values, dtype=object if dtype is str else dtype)
        logger.debug("%s: %d records renamed", self.path, len(renames))

    def _write_targets(self, parts: Partitioning) -> None:
        """The per-target and per-record arrays with their digests, the partitions' bounds
        and sizes; ``residues`` and ``names`` made, to be written by their tasks."""
        n, count, width = parts.sequences, parts.partitions, max(parts.width, 1)
        chunk = max(1, min(n, _TARGET_CHUNK))

        def per_target(name: str, values: np.ndarray, dtype: str, dim: str, fill: int) -> None:
            write_whole(self.group, name, values.astype(dtype, copy=False), chunks=(chunk,),
                        fill_value=fill, dimension_names=(dim,))

        self.group.create_array("partition_bounds", shape=(count + 1,), dtype="int64",
                                chunks=(count + 1,), fill_value=-1,
                                dimension_names=("partition_bound",))[:] = parts.bounds
        self.group.create_array("partition_residues", shape=(count,), dtype="int64",
                                chunks=(max(count, 1),), fill_value=-1,
                                dimension_names=("partition",))[:] = parts.sizes
        per_target("starts", parts.starts, "int64", "target", -1)
        per_target("lengths", parts.lengths[parts.order], "int32", "target", 0)
        per_target("order", parts.order, "int64", "target", -1)
        per_target("rank", parts.rank, "int64", "record", -1)
        self.group.create_array("names", shape=(n,), dtype=str,
                                chunks=(max(1, min(n, _NAME_CHUNK)),),
                                dimension_names=("record",))
        self.group.create_array("residues", shape=(count, width), dtype="uint8",
                                chunks=(1, width), fill_value=PAD,
                                dimension_names=("partition", "position"))

    def _write_cuts(self, parts: Partitioning) -> None:
        """``work/residue_cuts``: each piece's sorted targets have ascending sorted
        positions (both orders are by length, then by record), so those before a partition
        bound are the first of the piece's."""
        first = self.piece_records(SIDE)
        cuts = np.empty((len(parts.bounds), len(first) - 1), dtype=np.int64)
        for k in range(len(first) - 1):
            positions = parts.rank[first[k] + self.piece_order(k)]
            cuts[:, k] = self.edges(SIDE, k)[np.searchsorted(positions, parts.bounds), 0]
        self.group.create_array("work/residue_cuts", data=cuts, chunks=(1, cuts.shape[1]))

    # the units ----------------------------------------------------------------------

    def write_partition(self, p: int) -> int:
        """Write partition ``p``'s row of ``residues`` from its run of each piece's; its
        digest (:func:`~swath.storage.database.layout.partition_digest`)."""
        b0, b1 = np.asarray(self.array("partition_bounds")[p:p + 2]).tolist()
        ids = np.asarray(self.array("order")[b0:b1], dtype=np.int64)
        lengths = np.asarray(self.array("lengths")[b0:b1], dtype=np.int64)
        cuts = np.asarray(self.array("work/residue_cuts")[p:p + 2], dtype=np.int64)
        starts, size = np.cumsum(lengths) - lengths, int(lengths.sum())
        # the runs one after another, piece after piece: a piece's targets come in its run
        # in their sorted order, which is the row's
        runs = np.zeros(cuts.shape[1] + 1, dtype=np.int64)
        np.cumsum(cuts[1] - cuts[0], out=runs[1:])
        residues = np.empty(size, dtype=np.uint8)
        for k in np.flatnonzero(cuts[1] > cuts[0]).tolist():
            residues[runs[k]:runs[k + 1]] = self.piece(SIDE, k, "residues")[cuts[0, k]:
                                                                            cuts[1, k]]
        piece = np.searchsorted(self.piece_records(SIDE), ids, side="right") - 1
        if runs[-1] != size or not np.array_equal(
                np.bincount(piece, lengths, minlength=cuts.shape[1]), cuts[1] - cuts[0]):
            raise missing(f"a run of the pieces of partition {p}", self.path)
        by_piece = np.argsort(piece, kind="stable")
        sources = np.empty(len(ids), dtype=np.int64)
        sources[by_piece] = np.cumsum(lengths[by_piece]) - lengths[by_piece]
        row = np.full(self.array("residues").shape[1], PAD, dtype=np.uint8)
        fill_row(row, residues, sources, lengths, starts)
        del residues
        self.array("residues")[p] = row
        logger.debug("partition %d: targets %d:%d, %d residues", p, b0, b1, size)
        return partition_digest(row[:size], starts, ids)

    def write_names(self, first: int, last: int) -> None:
        """Write the names of records ``first:last`` (a chunk of ``names``), renamed where
        ``work/renamed`` says."""
        names = self.names(SIDE, np.arange(first, last))
        renamed = np.asarray(self.array("work/renamed")[...], dtype=np.int64)
        lo, hi = np.searchsorted(renamed, [first, last])
        names[renamed[lo:hi] - first] = np.asarray(self.array("work/renames")[lo:hi])
        self.array("names")[first:last] = names

    def digest_names(self) -> None:
        """Record the digest of ``names`` (as written), read a chunk at a time."""
        names = self.array("names")
        step = names.chunks[0]
        value = digest_string_chunks(names.shape[0], lambda: (
            utf8_bytes(np.asarray(names[at:at + step])) for at in range(0, names.shape[0], step)))
        record_digest(self.group, "names", value)

    def finish(self, marks: list[int]) -> dict[str, Any]:
        """End the build (the store opened here must be the one its creation yielded:
        what :func:`~swath.storage.creation.creating` writes last, it writes from
        there): the attributes its tasks wrote, the source's identity (``sha256``) and
        the partitions' digests ``marks``, less what only the build needed; ``work``
        removed; the store marked complete. Its attributes."""
        built = type(self).open(self.path)
        attrs = dict(built.attrs, sha256=built.identity(SIDE), partition_digests=marks)
        for key in ("sources", "streamed"):
            attrs.pop(key, None)
        attrs["digests"] = {name: value for name, value in attrs["digests"].items()
                            if not name.startswith("work/")}
        self.group.attrs[ROOT_KEY] = attrs
        del self.group["work"]
        mark_complete(self.group)
        return attrs
