"""The database store: round trips, layout on disk, errors, interrupted writes, the lock."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import pickle
import random
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import swath
import swath.sequences
from swath.engine import intake
from swath.engine.database import write_database
from swath.errors import (
    FormatVersionError,
    InputChanged,
    InputNotFound,
    InvalidInput,
    InvalidParameter,
    InvalidSequence,
    OutputExists,
    StoreDamaged,
    StoreIncomplete,
    StoreLocked,
    StoreNotFound,
)
from swath.scoring import Scoring
from swath.sequences import read_sequences, unique_names
from swath.sequences.pieces import PIECE_BYTES, cut, plan
from swath.storage.common import (
    ROOT_KEY,
    check_layout,
    is_local,
    mark_complete,
    open_group,
    write_attrs,
)
from swath.storage.database import (
    PAD,
    Database,
    database_lock_path,
    partition_bounds,
    partitions,
    writer,
)
from swath.storage.database.layout import partition_digest
from swath.storage.integrity import digest
from swath.storage.locking import acquire_lock, lock_path, release_lock, store_lock
from tests.helpers import write_fasta

PROTEIN = Scoring.protein().alphabet
DNA = Scoring.dna().alphabet
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def random_records(n: int = 150, seed: int = 1, max_len: int = 300) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        length = rng.choice([rng.randint(1, 10), rng.randint(1, max_len)])
        records.append((f"seq{i}", "".join(rng.choices(AMINO, k=length))))
    return records


@pytest.fixture
def records() -> list[tuple[str, str]]:
    return random_records()


@pytest.fixture
def fasta(tmp_path: Path, records: list[tuple[str, str]]) -> Path:
    return write_fasta(tmp_path / "db.fasta", records, width=60)


@pytest.fixture
def store(tmp_path: Path, fasta: Path) -> Path:
    path = tmp_path / "db.swdb"
    write_database(fasta, path, PROTEIN, partition_residues=1000)
    return path


def read_all(db: Database) -> dict[int, np.ndarray]:
    """Every record's codes, read through the partitions, by record index."""
    seen: dict[int, np.ndarray] = {}
    for p in range(db.partitions):
        residues, offsets, ids = db.partition(p)
        assert residues.dtype == np.uint8 and offsets.dtype == np.int64
        assert ids.dtype == np.int64
        assert len(offsets) == len(ids) + 1 and offsets[0] == 0
        assert offsets[-1] == len(residues) == db.partition_residues(p)
        for k, record in enumerate(ids.tolist()):
            assert record not in seen
            seen[record] = residues[offsets[k]:offsets[k + 1]]
    return seen


def source_identity(path: Path, piece_bytes: int = PIECE_BYTES) -> str:
    """What a database records as its source's ``sha256``: the SHA-256 of its text's
    pieces' spans and SHA-256s (of its text, gzip or not), computed here from the text."""
    raw = path.read_bytes()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    fmt = "fasta" if text.lstrip()[:1] == b">" else "fastq"
    found = hashlib.sha256()
    for start, data in cut(io.BytesIO(text), fmt, str(path), piece_bytes):
        found.update(np.array([start, start + len(data)], "<i8").tobytes()
                     + hashlib.sha256(data).digest())
    return found.hexdigest()


def whole_file_database(path: Path, alphabet: Any, size: int, *, rename: bool = False,
                        piece_bytes: int = PIECE_BYTES) -> tuple[dict[str, np.ndarray],
                                                                  dict[str, Any]]:
    """The root arrays and the attributes (but the creation's) of the database of
    ``path``, from the whole file read at once, as swath wrote it before its pieces were
    taken in on workers: the judge of a database built from pieces."""
    records = read_sequences(path, alphabet)
    names = unique_names(records.names, str(path), rename=rename)
    lengths = np.diff(records.offsets)
    parts = partitions.Partitioning.build(lengths, size)
    rows = np.full((parts.partitions, max(parts.width, 1)), PAD, dtype=np.uint8)
    marks = []
    for p in range(parts.partitions):
        targets = range(int(parts.bounds[p]), int(parts.bounds[p + 1]))
        for k in targets:
            record, start = int(parts.order[k]), int(parts.starts[k])
            rows[p, start:start + lengths[record]] = records[record]
        marks.append(partition_digest(rows[p, :parts.sizes[p]], parts.starts[targets],
                                      parts.order[targets]))
    arrays = {"residues": rows, "partition_bounds": parts.bounds,
              "partition_residues": parts.sizes, "starts": parts.starts,
              "lengths": lengths[parts.order].astype(np.int32), "order": parts.order,
              "rank": parts.rank, "names": np.array(names, dtype=object)}
    attrs = {"layout": "database", "version": 1, "alphabet": alphabet.letters,
             "alphabet_wildcard": alphabet.wildcard, "wildcard": False, "source": str(path),
             "sha256": source_identity(path, piece_bytes), "sequences": len(names),
             "residues": int(lengths.sum()), "partitions": parts.partitions,
             "width": parts.width, "partition_size": size, "created": True,
             "complete": True, "partition_digests": marks,
             "digests": {name: digest(arrays[name]) for name in
                         ("starts", "lengths", "order", "rank", "names")}}
    return arrays, attrs


def assert_database_is(store: Path | str, expected: tuple[dict[str, np.ndarray],
                                                          dict[str, Any]]) -> None:
    """The database at ``store`` holds ``expected`` (:func:`whole_file_database`): every
    root array (values, dtype, chunks, dimensions) and attribute but its creation's,
    nothing else, and it is sound."""
    arrays, attrs = expected
    group = zarr.open_group(str(store), mode="r")
    assert sorted(group.array_keys()) == sorted(arrays) and not list(group.group_keys())
    n, count = attrs["sequences"], attrs["partitions"]
    chunks = {"residues": (1, max(attrs["width"], 1)), "partition_bounds": (count + 1,),
              "partition_residues": (count,)}
    for name, values in arrays.items():
        found = group[name]
        assert isinstance(found, zarr.Array)
        assert found.chunks == chunks.get(name, (min(n, 1 << 16),)), name
        assert found.dtype == values.dtype or name == "names", name
        np.testing.assert_array_equal(np.asarray(found[...]), values, err_msg=name)
    got = dict(group.attrs["swath"])            # type: ignore[arg-type]
    assert got.pop("id") and str(got.pop("created_by")).startswith("swath ")
    assert got == attrs and list(got)[-1] == "complete"
    assert group.attrs["coordinates"] == "names"
    Database.open(store).check_sound()


# ---------------------------------------------------------------------------------
# Round trips


def test_round_trip_through_partitions(store: Path, fasta: Path) -> None:
    expected = read_sequences(fasta, PROTEIN)
    db = Database.open(store)
    assert db.sequences == len(expected) and len(db) == len(expected)
    assert db.residues == len(expected.residues)
    seen = read_all(db)
    assert sorted(seen) == list(range(len(expected)))
    for i, codes in seen.items():
        np.testing.assert_array_equal(codes, expected[i])
    assert db.names(range(len(expected))) == list(expected.names)


def test_round_trip_through_sequence(store: Path, fasta: Path) -> None:
    expected = read_sequences(fasta, PROTEIN)
    db = Database.open(store)
    for i in range(len(expected)):
        np.testing.assert_array_equal(db.sequence(i), expected[i])
    np.testing.assert_array_equal(db.sequence(-1), expected[len(expected) - 1])
    np.testing.assert_array_equal(db.lengths_by_id(), expected.lengths)


def test_names_in_any_order(store: Path, records: list[tuple[str, str]]) -> None:
    db = Database.open(store)
    ids = np.array([5, 0, 5, 149, 2])
    assert db.names(ids) == [records[i][0] for i in ids]
    assert db.names([]) == []
    part_ids = db.partition(db.partitions - 1)[2]
    assert db.names(part_ids) == [records[i][0] for i in part_ids]


def test_attributes(store: Path, fasta: Path, records: list[tuple[str, str]]) -> None:
    db = Database.open(store)
    assert db.alphabet == PROTEIN
    assert db.source == str(fasta)
    assert db.sha256 == source_identity(fasta)
    assert db.wildcard is False
    attrs = zarr.open_group(str(store), mode="r").attrs["swath"]
    assert isinstance(attrs, dict)
    assert attrs["layout"] == "database" and attrs["version"] == 1
    assert attrs["alphabet"] == PROTEIN.letters
    assert attrs["sequences"] == len(records)
    assert attrs["residues"] == sum(len(seq) for _, seq in records)
    assert attrs["partitions"] == db.partitions
    assert attrs["complete"] is True
    assert list(attrs)[-1] == "complete"  # written last
    assert str(attrs["created_by"]).startswith("swath ")


def test_sorted_by_length_stable(store: Path, records: list[tuple[str, str]]) -> None:
    db = Database.open(store)
    lengths = np.array([len(seq) for _, seq in records])
    expected_order = np.argsort(lengths, kind="stable")
    group = zarr.open_group(str(store), mode="r")
    np.testing.assert_array_equal(group["order"][:], expected_order)
    np.testing.assert_array_equal(group["lengths"][:], lengths[expected_order])
    assert group["lengths"].dtype == np.int32
    ids = np.concatenate([db.partition(p)[2] for p in range(db.partitions)])
    np.testing.assert_array_equal(ids, expected_order)
    offsets = [np.diff(db.partition(p)[1]) for p in range(db.partitions)]
    assert np.all(np.diff(np.concatenate(offsets)) >= 0)
    rank = group["rank"][:]
    np.testing.assert_array_equal(expected_order[rank], np.arange(len(records)))


def test_partitions_hold_about_equal_residues(tmp_path: Path) -> None:
    records = random_records(n=600, seed=3, max_len=200)
    fasta = write_fasta(tmp_path / "big.fasta", records, width=60)
    size = 3000
    db_path = tmp_path / "big.swdb"
    info = write_database(fasta, db_path, PROTEIN, partition_residues=size)
    db = Database.open(db_path)
    total = sum(len(seq) for _, seq in records)
    assert info.partitions == db.partitions == -(-total // size)
    sizes = [db.partition_residues(p) for p in range(db.partitions)]
    assert sum(sizes) == total
    longest = max(len(seq) for _, seq in records)
    share = total / db.partitions
    assert all(abs(s - share) <= longest for s in sizes), (sizes, share)
    assert all(s <= size + longest for s in sizes)
    np.testing.assert_array_equal(db.partition_sizes, sizes)


def test_partitions_are_whole_chunks(store: Path) -> None:
    db = Database.open(store)
    group = zarr.open_group(str(store), mode="r")
    residues = group["residues"]
    width = max(db.partition_residues(p) for p in range(db.partitions))
    assert residues.shape == (db.partitions, width)
    assert residues.chunks == (1, width)
    assert residues.dtype == np.uint8
    assert residues.fill_value == PAD
    assert residues.nchunks == residues.nchunks_initialized == db.partitions
    for p in range(db.partitions):
        assert (store / "residues" / "c" / str(p) / "0").is_file()
        row = residues[p]
        count = db.partition_residues(p)
        assert np.all(row[count:] == PAD) and not np.any(row[:count] == PAD)
    bounds = group["partition_bounds"][:]
    assert bounds[0] == 0 and bounds[-1] == db.sequences and np.all(np.diff(bounds) > 0)
    np.testing.assert_array_equal(db.partition_bounds, bounds)


def test_dimension_names(store: Path) -> None:
    group = zarr.open_group(str(store), mode="r")
    expected = {
        "residues": ("partition", "position"),
        "partition_bounds": ("partition_bound",),
        "partition_residues": ("partition",),
        "starts": ("target",),
        "lengths": ("target",),
        "order": ("target",),
        "rank": ("record",),
        "names": ("record",),
    }
    assert sorted(group.array_keys()) == sorted(expected)
    for name, dims in expected.items():
        array = group[name]
        assert isinstance(array, zarr.Array)
        assert array.metadata.dimension_names == dims, name


def test_checksum(store: Path, fasta: Path, tmp_path: Path) -> None:
    """The source's identity is its pieces' (spans and SHA-256s): another text, another
    identity."""
    assert Database.open(store).sha256 == source_identity(fasta)
    other = tmp_path / "other.fasta"
    other.write_bytes(fasta.read_bytes().replace(b"A", b"C", 1))
    assert write_database(other, tmp_path / "other.swdb", PROTEIN).sha256 not in (
        Database.open(store).sha256, hashlib.sha256(other.read_bytes()).hexdigest())


def test_gzip_input(tmp_path: Path, fasta: Path, store: Path) -> None:
    gz = tmp_path / "db.fasta.gz"
    gz.write_bytes(gzip.compress(fasta.read_bytes()))
    info = write_database(gz, tmp_path / "gz.swdb", PROTEIN, partition_residues=1000)
    assert info.sha256 == source_identity(gz)
    plain, packed = Database.open(store), Database.open(tmp_path / "gz.swdb")
    assert packed.sha256 == plain.sha256        # the identity of the text, gzip or not
    assert read_all(plain).keys() == read_all(packed).keys()
    for i in range(plain.sequences):
        np.testing.assert_array_equal(plain.sequence(i), packed.sequence(i))
    assert plain.names(range(plain.sequences)) == packed.names(range(packed.sequences))


def test_fastq_and_dna_wildcard(tmp_path: Path) -> None:
    fastq = tmp_path / "reads.fq"
    fastq.write_text("@r1\nACGTRY\n+\nIIIIII\n@r2\nGG\n+\nII\n")
    with pytest.raises(InvalidSequence, match=r"reads\.fq line 2: residue 'R' is not in the DNA"):
        write_database(fastq, tmp_path / "reads.swdb", DNA)
    assert not (tmp_path / "reads.swdb").exists()
    write_database(fastq, tmp_path / "reads.swdb", DNA, wildcard=True)
    db = Database.open(tmp_path / "reads.swdb")
    assert db.alphabet == DNA and db.wildcard is True
    assert DNA.decode(db.sequence(0)) == "ACGTNN"
    assert db.names([1, 0]) == ["r2", "r1"]


def test_file_url(tmp_path: Path, fasta: Path) -> None:
    url = (tmp_path / "url.swdb").as_uri()
    assert url.startswith("file://") and is_local(url)
    info = write_database(fasta, url, PROTEIN, partition_residues=1000)
    assert info.path == url
    assert (tmp_path / "url.swdb" / "zarr.json").is_file()
    expected = read_sequences(fasta, PROTEIN)
    for db in (Database.open(url), Database.open(tmp_path / "url.swdb")):
        for i, codes in read_all(db).items():
            np.testing.assert_array_equal(codes, expected[i])


def test_memory_url(fasta: Path) -> None:
    url = f"memory://swath-test-{uuid.uuid4().hex}/db.swdb"
    assert not is_local(url)
    write_database(fasta, url, PROTEIN, partition_residues=1000)
    db = Database.open(url)
    expected = read_sequences(fasta, PROTEIN)
    for i, codes in read_all(db).items():
        np.testing.assert_array_equal(codes, expected[i])
    assert db.names([0, 1]) == list(expected.names[:2])
    with pytest.raises(InvalidParameter, match="already exists"):
        write_database(fasta, url, PROTEIN)
    write_database(fasta, url, PROTEIN, partition_residues=10**9, overwrite=True)
    assert Database.open(url).partitions == 1


def test_a_damaged_partition_is_refused(tmp_path: Path, fasta: Path) -> None:
    store = tmp_path / "db.swdb"
    write_database(fasta, store, PROTEIN, partition_residues=1000)
    db = Database.open(store)
    assert swath.verify(str(store)) == {"partition": db.partitions, "array": 5}
    chunk = store / "residues" / "c" / "1" / "0"
    good = chunk.read_bytes()
    chunk.write_bytes(b"\x00" * len(good))                 # undecodable
    with pytest.raises(StoreDamaged, match="partition 1 cannot be read"):
        Database.open(store).partition(1)
    residues = db.partition(2)[0]
    altered = residues.copy()
    altered[5] = (altered[5] + 1) % 20                       # a residue changed, decodable
    row = np.full(db.attrs["width"], PAD, np.uint8)
    row[:len(altered)] = altered
    zarr.open_array(str(store / "residues"), mode="r+")[2] = row
    with pytest.raises(StoreDamaged, match="partition 2 no longer matches its digest"):
        Database.open(store).partition(2)
    zarr.open_array(str(store / "names"), mode="r+")[0] = "renamed"
    with pytest.raises(StoreDamaged, match=r"damaged: 2 partitions \(1, 2\); array names"):
        swath.verify(str(store))


def test_verify_goes_through_the_layout_store(store: Path) -> None:
    db = Database.open(store)
    assert db.verify() == {"partition": db.partitions, "array": 5}
    assert db.damaged() == {"partition": [], "array": []}
    (store / "residues" / "c" / "1" / "0").unlink()      # a partition's chunk deleted
    (store / "rank" / "c" / "0").write_bytes(b"garbage")
    with pytest.raises(StoreDamaged, match=r"damaged: partition 1; array rank; rebuild it "
                                           r"with swath makedb --overwrite"):
        Database.open(store).check_sound()


def test_a_store_written_before_partition_digests_still_reads(store: Path) -> None:
    group = open_group(store, mode="r+")
    attrs = dict(group.attrs[ROOT_KEY])
    del attrs["partition_digests"], attrs["digests"]
    group.attrs[ROOT_KEY] = attrs
    db = Database.open(store)
    counts = [len(db.partition(p)[2]) for p in range(db.partitions)]
    assert counts == np.diff(db.partition_bounds).tolist()
    assert db.verify() == {"array": 0}
    (store / "residues" / "c" / "2" / "0").unlink()      # unreadable whole: still found
    assert Database.open(store).damaged() == {"partition": [2], "array": []}


def test_pickle_reopens(store: Path) -> None:
    db = Database.open(store)
    copy = pickle.loads(pickle.dumps(db))
    assert repr(copy) == repr(db)
    np.testing.assert_array_equal(copy.partition(0)[0], db.partition(0)[0])


def test_one_partition_per_target_and_one_for_all(tmp_path: Path, fasta: Path,
                                                 records: list[tuple[str, str]]) -> None:
    one = write_database(fasta, tmp_path / "one.swdb", PROTEIN, partition_residues=1)
    assert one.partitions == len(records)
    db = Database.open(tmp_path / "one.swdb")
    assert all(len(db.partition(p)[2]) == 1 for p in range(db.partitions))
    whole = write_database(fasta, tmp_path / "whole.swdb", PROTEIN, partition_residues=10**9)
    assert whole.partitions == 1 and whole.width == whole.residues


@pytest.mark.parametrize(("lengths", "size", "bounds"), [
    ([1, 1, 2, 2, 4], 5, [0, 3, 5]),
    ([3, 3, 3, 3], 6, [0, 2, 4]),
    ([1, 1, 1, 100], 10, [0, 3, 4]),  # one long target: fewer, not empty, partitions
    ([5], 1, [0, 1]),
    ([1] * 6, 1, [0, 1, 2, 3, 4, 5, 6]),
    ([1, 2, 3, 50, 60], 1, [0, 1, 2, 3, 4, 5]),
    ([2, 2, 2], 100, [0, 3]),
])
def test_partition_bounds(lengths: list[int], size: int, bounds: list[int]) -> None:
    assert partition_bounds(np.array(lengths), size).tolist() == bounds


def test_long_and_short_targets_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small thresholds, so that gathering in pieces and slice copies both run.
    monkeypatch.setattr(partitions, "_SLICE_LENGTH", 50)
    monkeypatch.setattr(partitions, "_GATHER_RESIDUES", 37)
    records = random_records(n=80, seed=9, max_len=120)
    fasta = write_fasta(tmp_path / "mixed.fasta", records, width=60)
    write_database(fasta, tmp_path / "mixed.swdb", PROTEIN, partition_residues=700)
    db = Database.open(tmp_path / "mixed.swdb")
    for i, codes in read_all(db).items():
        assert PROTEIN.decode(codes) == records[i][1]


def test_progress_callback(tmp_path: Path, fasta: Path, monkeypatch: pytest.MonkeyPatch
                           ) -> None:
    monkeypatch.setattr(intake, "PIECE_BYTES", 1000)
    calls: list[tuple[str, int, int | None, int]] = []
    info = write_database(fasta, tmp_path / "p.swdb", PROTEIN, partition_residues=1000,
                          progress=lambda *args: calls.append(args))
    pieces = len(plan(fasta, "fasta", 1000)) - 1
    assert [c for c in calls if c[0] == "pieces"] == [("pieces", k, pieces, 0)
                                                      for k in range(pieces + 1)]
    writes = [c for c in calls if c[0] == "write"]
    assert writes == [("write", p, info.partitions, 0) for p in range(info.partitions + 1)]


# ---------------------------------------------------------------------------------
# Built from pieces taken in on workers


def fastq_crlf(path: Path, records: list[tuple[str, str]]) -> Path:
    path.write_bytes("".join(f"@{name}\r\n{seq}\r\n+\r\n{'I' * len(seq)}\r\n"
                             for name, seq in records).encode())
    return path


def gzipped(path: Path, records: list[tuple[str, str]]) -> Path:
    text = write_fasta(path.with_suffix(".txt"), records, width=60).read_bytes()
    path.write_bytes(gzip.compress(text))
    return path


def without_final_newline(path: Path, records: list[tuple[str, str]]) -> Path:
    path.write_bytes(write_fasta(path, records, width=50).read_bytes().rstrip(b"\n"))
    return path


INPUTS = {"fasta": lambda path, records: write_fasta(path, records, width=60),
          "gzip": gzipped, "fastq_crlf": fastq_crlf, "no_final_newline": without_final_newline}


@pytest.mark.parametrize("kind", INPUTS)
def test_built_from_pieces_as_from_the_whole_file(kind: str, tmp_path: Path,
                                                  records: list[tuple[str, str]],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of about 1,000 bytes (records straddle most cuts; a gzip file's cut from its
    stream), partitions of about 1,000 residues: the store the whole file made."""
    monkeypatch.setattr(intake, "PIECE_BYTES", 1000)
    path = INPUTS[kind](tmp_path / f"db.{kind}", records)
    write_database(path, tmp_path / "db.swdb", PROTEIN, partition_residues=1000)
    assert_database_is(tmp_path / "db.swdb",
                       whole_file_database(path, PROTEIN, 1000, piece_bytes=1000))
    assert len(list(cut(io.BytesIO(read_text(path)), "fasta" if "fastq" not in kind
                        else "fastq", "", 1000))) > 10


def read_text(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


NAMES = ["a", "x", "x", "a_2", "a", "y", "a", "x_2", "a_3_2", "a_3", "z", "a", "x"]


@pytest.mark.parametrize("kind", ["fasta", "gzip"])
def test_names_given_twice_across_pieces(kind: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Names given twice in other pieces: refused as the first name given again (``x``,
    records 2 and 3, not ``a``, records 1 and 5), or renamed exactly as
    :func:`~swath.sequences.unique_names` renames them (``a_2`` and ``a_3`` are names of
    the file: the renamed ``a`` skip them)."""
    monkeypatch.setattr(intake, "PIECE_BYTES", 48)
    rng = random.Random(4)
    records = [(name, "".join(rng.choices(AMINO, k=rng.randint(5, 40)))) for name in NAMES]
    path = INPUTS[kind](tmp_path / f"d.{kind}", records)
    with pytest.raises(InvalidInput, match=rf"^{path}: sequence name 'x' is given twice "
                                           r"\(records 2 and 3\): names must be unique"):
        write_database(path, tmp_path / "d.swdb", PROTEIN)
    assert not (tmp_path / "d.swdb").exists()
    write_database(path, tmp_path / "d.swdb", PROTEIN, partition_residues=60,
                   rename_duplicates=True)
    expected = whole_file_database(path, PROTEIN, 60, rename=True, piece_bytes=48)
    assert_database_is(tmp_path / "d.swdb", expected)
    assert expected[0]["names"].tolist() == [
        "a", "x", "x_3", "a_2", "a_4", "y", "a_5", "x_2", "a_3_2", "a_3", "z", "a_6", "x_4"]


def test_rename_collision_and_alike_hashes(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``a, a, a_2`` is renamed ``a, a_3, a_2``, also where every name hashes alike (the
    names are read to tell them apart): no name is taken for another."""
    monkeypatch.setattr(intake, "PIECE_BYTES", 16)
    path = write_fasta(tmp_path / "c.fa", [("a", "MKV"), ("a", "WW"), ("a_2", "MKVL"),
                                           ("b", "KKK")])
    write_database(path, tmp_path / "c.swdb", PROTEIN, rename_duplicates=True)
    assert Database.open(tmp_path / "c.swdb").names([0, 1, 2, 3]) == ["a", "a_3", "a_2", "b"]
    monkeypatch.setattr(swath.sequences, "name_hashes", lambda text, offsets: np.zeros(
        len(offsets) - 1, dtype=np.uint64))
    write_database(path, tmp_path / "c2.swdb", PROTEIN, rename_duplicates=True)
    assert Database.open(tmp_path / "c2.swdb").names([0, 1, 2, 3]) == ["a", "a_3", "a_2", "b"]
    unique = write_fasta(tmp_path / "u.fa", [("a", "MKV"), ("b", "WW"), ("a_2", "MKVL")])
    write_database(unique, tmp_path / "u.swdb", PROTEIN)         # alike, not given twice
    assert Database.open(tmp_path / "u.swdb").names([0, 1, 2]) == ["a", "b", "a_2"]


@pytest.mark.parametrize("kind", ["fasta", "gzip"])
def test_a_malformed_piece_is_refused_with_its_line(kind: str, tmp_path: Path,
                                                   records: list[tuple[str, str]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad residue in a piece far into the file: the file and its line named, no store
    (nor anything else) left beside the file."""
    monkeypatch.setattr(intake, "PIECE_BYTES", 1000)
    bad = [*records[:100], ("bad", "MKV1LA"), *records[100:]]
    path = INPUTS[kind](tmp_path / f"bad.{kind}", bad)
    line = read_text(path).decode().splitlines().index("MKV1LA") + 1
    left = sorted(os.listdir(tmp_path))
    with pytest.raises(InvalidInput, match=rf"^{path} line {line}: character '1' is not a "
                                           "residue"):
        write_database(path, tmp_path / "bad.swdb", PROTEIN)
    assert sorted(os.listdir(tmp_path)) == left


def test_an_input_changed_while_it_is_read_is_refused(tmp_path: Path, fasta: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The file changed once its pieces are planned (here as the first is taken in): the
    build is refused, and leaves nothing."""
    monkeypatch.setattr(intake, "PIECE_BYTES", 1000)

    def change(stage: str, done: int, total: int | None, work: int) -> None:
        if stage == "pieces" and done == 0:
            fasta.write_bytes(fasta.read_bytes().replace(b"A", b"C", 1))
            stat = fasta.stat()
            os.utime(fasta, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))

    with pytest.raises(InputChanged, match=r"db\.fasta has changed \(or is gone\) since this "
                                           "job started taking it in"):
        write_database(fasta, tmp_path / "db.swdb", PROTEIN, progress=change)
    assert sorted(os.listdir(tmp_path)) == ["db.fasta"]


def test_built_on_a_dask_cluster(tmp_path: Path, fasta: Path, client: Any,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a ``distributed.Client`` (swath.makedb's ``client``): the same store."""
    monkeypatch.setattr(intake, "PIECE_BYTES", 1000)
    info = swath.makedb(fasta, str(tmp_path / "db.swdb"), partition_residues=1000,
                        client=client)
    assert info.sequences == 150 and info.sha256 == source_identity(fasta, 1000)
    assert_database_is(tmp_path / "db.swdb",
                       whole_file_database(fasta, PROTEIN, 1000, piece_bytes=1000))


ARENAS = {"MALLOC_ARENA_MAX": "2"}
PEAK_MEMORY = """
import os
import sys
os.environ["NUMBA_NUM_THREADS"] = "2"   # tasks at once, whatever the machine's cores
import swath.engine.intake
from swath.engine.database import write_database
from swath.scoring import Scoring

def peak():     # the process's own (ru_maxrss keeps its parent's across exec)
    return next(int(line.split()[1]) for line in open("/proc/self/status")
                if line.startswith("VmHWM"))

swath.engine.intake.PIECE_BYTES = 1 << 20
source, store = sys.argv[1:3]
before = peak()
write_database(source, store, Scoring.protein().alphabet, partition_residues=1 << 20)
print(before, peak())
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_builds_memory_is_bounded_by_its_pieces_and_partitions(tmp_path: Path) -> None:
    """Eight times the sequences (5 to 40 MB of residues, pieces of 1 MiB, partitions of
    1 M residues, in a process of its own, two tasks at a time): the build's peak memory
    grows by less than 16 MB (its index holds under 100 bytes a sequence), not by the 35
    MB of residues more (which the build that read the whole file grew by, and more).
    glibc's malloc arenas, one per thread up to 8 a core, are capped (``ARENAS``): with
    Zarr's pool of a thread a core, on 16 cores they alone added 15 to 23 MB between the
    two builds (memory reserved by threads, not held by the build)."""
    script = tmp_path / "peak.py"
    script.write_text(PEAK_MEMORY)
    rng = np.random.default_rng(6)
    grown = []
    for count in (5_000, 40_000):
        codes = np.frombuffer(AMINO.encode(), np.uint8)[rng.integers(0, 20, (count, 1000))]
        path = tmp_path / f"db{count}.fa"
        path.write_bytes(b"".join(b">s%d\n%s\n" % (i, row.tobytes())
                                  for i, row in enumerate(codes)))
        del codes
        done = subprocess.run([sys.executable, str(script), str(path),
                               str(tmp_path / f"db{count}.swdb")], capture_output=True,
                              text=True, timeout=600, env=os.environ | ARENAS)
        assert done.returncode == 0, done.stderr
        before, peak = map(int, done.stdout.split())
        grown.append(peak - before)          # kilobytes the build added to the peak
        assert Database.open(tmp_path / f"db{count}.swdb").sequences == count
    assert grown[1] - grown[0] < 16 * 1024, grown


# ---------------------------------------------------------------------------------
# Errors on open


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFound, match=r"nothing\.swdb: no swath store here \(the path does "
                                            "not exist"):
        Database.open(tmp_path / "nothing.swdb")
    with pytest.raises(StoreNotFound, match="no swath store here"):
        Database.open(f"memory://swath-test-{uuid.uuid4().hex}/nothing.swdb")


def test_directory_that_is_not_a_store(tmp_path: Path, fasta: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("hello")
    with pytest.raises(StoreNotFound, match=r"plain: no swath store here \(no Zarr v3 group\)"):
        Database.open(tmp_path / "plain")
    with pytest.raises(StoreNotFound, match="no swath store here"):
        Database.open(fasta)
    zarr.create_array(str(tmp_path / "array.zarr"), shape=(2,), dtype="int8")
    with pytest.raises(StoreNotFound, match="holds a Zarr array, not a group"):
        Database.open(tmp_path / "array.zarr")
    zarr.open_group(str(tmp_path / "group.zarr"), mode="w")
    with pytest.raises(StoreNotFound, match=r"group\.zarr: no swath store here \(a Zarr group "
                                            "without 'swath' attributes"):
        Database.open(tmp_path / "group.zarr")


def test_other_layout_or_version(tmp_path: Path) -> None:
    path = tmp_path / "result.zarr"
    group = open_group(path, mode="w")
    write_attrs(group, "search", 2)
    mark_complete(group)
    with pytest.raises(FormatVersionError, match=r"result\.zarr is a 'search' store version 2, "
                                                 r"this swath reads 'database' version 1$"):
        Database.open(path)
    write_attrs(group, "database", 2)
    mark_complete(group)
    with pytest.raises(FormatVersionError, match=r"is a 'database' store version 2, this swath "
                                                 r"reads 'database' version 1 \(.*newer swath"):
        Database.open(path)
    with pytest.raises(FormatVersionError, match="older swath"):
        check_layout(group, path, "database", 3)


def test_not_complete(store: Path) -> None:
    group = zarr.open_group(str(store), mode="r+")
    attrs: Any = dict(group.attrs["swath"])  # type: ignore[arg-type]
    attrs["complete"] = False
    group.attrs["swath"] = attrs
    with pytest.raises(StoreIncomplete, match=r"db\.swdb: the store was not finished \("):
        Database.open(store)
    del attrs["complete"]
    group.attrs["swath"] = attrs
    with pytest.raises(StoreIncomplete, match="the store was not finished"):
        Database.open(store)
    # A layout without a complete mark reads it anyway when asked to.
    assert check_layout(group, store, "database", 1, complete=False)["sequences"] == 150


def test_missing_array(store: Path) -> None:
    shutil.rmtree(store / "names")
    with pytest.raises(StoreIncomplete, match=r"db\.swdb: .*\(array 'names' is missing\)"):
        Database.open(store)


def test_missing_residues_chunk(store: Path) -> None:
    db = Database.open(store)
    assert db.partitions >= 3
    (store / "residues" / "c" / "1" / "0").unlink()
    db = Database.open(store)
    db.partition(0)
    with pytest.raises(StoreIncomplete, match=r"chunk 1 of array 'residues' is missing"):
        db.partition(1)
    record = int(db.partition(2)[2][0])
    db.sequence(record)
    b0 = int(db.partition_bounds[1])
    order = zarr.open_group(str(store), mode="r")["order"][:]
    with pytest.raises(StoreIncomplete, match=r"chunk 1 of array 'residues' is missing"):
        db.sequence(int(order[b0]))


def test_missing_target_chunks(store: Path) -> None:
    (store / "starts" / "c" / "0").unlink()
    db = Database.open(store)
    with pytest.raises(StoreIncomplete, match=r"a chunk of array 'starts' or 'lengths'"):
        db.partition(0)
    (store / "names" / "c" / "0").unlink()
    with pytest.raises(StoreIncomplete, match=r"a chunk of array 'names' is missing"):
        db.names([0])
    (store / "partition_bounds" / "c" / "0").unlink()
    with pytest.raises(StoreIncomplete, match=r"a chunk of array 'partition_bounds'"):
        Database.open(store)


def test_bad_indices(store: Path) -> None:
    db = Database.open(store)
    with pytest.raises(IndexError, match=f"partition {db.partitions} is out of range"):
        db.partition(db.partitions)
    with pytest.raises(IndexError, match="record 150 is out of range for a database of 150"):
        db.sequence(150)
    with pytest.raises(IndexError, match="record -1 is out of range"):
        db.names([0, -1])
    with pytest.raises(TypeError, match="partition must be an integer"):
        db.partition("0")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------
# Errors on write


def test_existing_output(tmp_path: Path, fasta: Path, store: Path) -> None:
    with pytest.raises(OutputExists, match=r"db\.swdb already exists \(use --overwrite"):
        write_database(fasta, store, PROTEIN)
    other = write_fasta(tmp_path / "other.fasta", [("only", "MKV")], width=60)
    info = write_database(other, store, PROTEIN, overwrite=True)
    assert info.sequences == 1
    db = Database.open(store)
    assert db.names([0]) == ["only"] and db.source == str(other)
    assert sorted(os.listdir(tmp_path)) == ["db.fasta", "db.swdb", "other.fasta"]


def test_overwrite_never_deletes_other_things(tmp_path: Path, fasta: Path) -> None:
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "data.txt").write_text("keep me")
    with pytest.raises(OutputExists, match="is not a swath database; swath will not delete"):
        write_database(fasta, keep, PROTEIN, overwrite=True)
    assert (keep / "data.txt").read_text() == "keep me"
    with pytest.raises(OutputExists, match="is not a swath database"):
        write_database(fasta, fasta, PROTEIN, overwrite=True)
    (tmp_path / "empty").mkdir()
    write_database(fasta, tmp_path / "empty", PROTEIN, overwrite=True)
    Database.open(tmp_path / "empty")


@pytest.mark.parametrize("size", [0, -5, 2.5, True])
def test_bad_partition_residues(tmp_path: Path, fasta: Path, size: Any) -> None:
    with pytest.raises(InvalidParameter, match="partition_residues must be a positive integer"):
        write_database(fasta, tmp_path / "x.swdb", PROTEIN, partition_residues=size)


def test_bad_input_leaves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fasta"
    bad.write_text(">a\nMKV\n>b\nMK1V\n")
    with pytest.raises(InvalidInput, match=r"bad\.fasta line 4: character '1' is not a residue"):
        write_database(bad, tmp_path / "bad.swdb", PROTEIN)
    with pytest.raises(InputNotFound, match=r"missing\.fasta: no such file"):
        write_database(tmp_path / "missing.fasta", tmp_path / "bad.swdb", PROTEIN)
    assert sorted(os.listdir(tmp_path)) == ["bad.fasta"]


def test_interrupted_write_leaves_no_store(tmp_path: Path, fasta: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = writer.fill_row

    def fail_midway(*args: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(writer, "fill_row", fail_midway)
    target = tmp_path / "db.swdb"
    with pytest.raises(KeyboardInterrupt):
        write_database(fasta, target, PROTEIN, partition_residues=1000)
    assert len(calls) >= 2          # the other partitions' tasks ran to their end
    assert not target.exists()
    assert sorted(os.listdir(tmp_path)) == ["db.fasta"]  # no temporary directory, no lock
    with pytest.raises(StoreNotFound):
        Database.open(target)


def test_a_killed_writers_leftover_is_removed(tmp_path: Path, fasta: Path) -> None:
    # what a process killed while building db.swdb leaves beside it (its pid is gone)
    left = tmp_path / f".db.swdb.swath-new-{dead_pid()}-0123abcd@{socket.gethostname()}"
    left.mkdir()
    (left / "zarr.json").write_text("{}")
    elsewhere = tmp_path / f".db.swdb.swath-new-{dead_pid()}-0123abcd@another.host"
    elsewhere.mkdir()              # another host's: its process may live
    write_database(fasta, tmp_path / "db.swdb", PROTEIN)
    assert sorted(os.listdir(tmp_path)) == [elsewhere.name, "db.fasta", "db.swdb"]


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_interrupted_overwrite_keeps_the_old_store(store: Path, tmp_path: Path, fasta: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "mark_complete", _raise_oserror)
    with pytest.raises(OSError, match="disk full"):
        write_database(fasta, store, PROTEIN, partition_residues=10**9, overwrite=True)
    assert Database.open(store).partitions > 1  # the old one, untouched
    assert sorted(os.listdir(tmp_path)) == ["db.fasta", "db.swdb"]


def _raise_oserror(group: Any) -> None:
    raise OSError("disk full")


def test_unfinished_remote_store_is_refused(fasta: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In place (no rename) the complete mark is what tells readers: a writer killed
    # before it leaves a store that Database.open refuses.
    url = f"memory://swath-test-{uuid.uuid4().hex}/db.swdb"
    monkeypatch.setattr(writer, "mark_complete", lambda group: None)
    write_database(fasta, url, PROTEIN)
    with pytest.raises(StoreIncomplete, match="the store was not finished"):
        Database.open(url)
    # An interrupted remote write removes what it wrote.
    url2 = f"memory://swath-test-{uuid.uuid4().hex}/db.swdb"
    monkeypatch.setattr(writer, "mark_complete", _raise_oserror)
    with pytest.raises(OSError, match="disk full"):
        write_database(fasta, url2, PROTEIN)
    with pytest.raises(StoreNotFound):
        Database.open(url2)


# ---------------------------------------------------------------------------------
# The writer lock


def test_second_writer_is_refused(tmp_path: Path, fasta: Path) -> None:
    target = tmp_path / "db.swdb"
    refused: list[BaseException] = []

    def second_writer(stage: str, done: int, total: int | None, work: int) -> None:
        if stage == "write" and not refused:
            assert Path(database_lock_path(target)).is_file()
            with pytest.raises(StoreLocked) as caught:
                write_database(fasta, target, PROTEIN, overwrite=True)
            refused.append(caught.value)

    write_database(fasta, target, PROTEIN, progress=second_writer)
    assert str(refused[0]).startswith(f"{target} is being written by this process")
    assert not Path(database_lock_path(target)).exists()  # released
    Database.open(target)


def test_store_lock_in_place(tmp_path: Path) -> None:
    path = tmp_path / "result.zarr"
    with store_lock(path) as lock:
        assert lock == lock_path(path) == f"{path}/.swath-lock"
        owner = json.loads(Path(lock).read_text())
        assert owner["pid"] == os.getpid() and owner["host"] == socket.gethostname()
        with pytest.raises(StoreLocked, match=r"result\.zarr is being written by this process"):
            acquire_lock(path)
    assert not Path(lock).exists()
    release_lock(path)  # already released: fine


def test_store_lock_through_fsspec() -> None:
    url = f"memory://swath-test-{uuid.uuid4().hex}/result.zarr"
    with store_lock(url), pytest.raises(StoreLocked, match="is being written by pid"):
        acquire_lock(url)
    acquire_lock(url)
    release_lock(url)


HOLD = """
import sys, time
from swath.storage.locking import acquire_lock
acquire_lock(sys.argv[1], lockfile=sys.argv[2])
print("held", flush=True)
time.sleep(600)
"""


def test_lock_of_a_live_process_holds_until_it_dies(tmp_path: Path, fasta: Path) -> None:
    # The kernel keeps the lock while its holder lives and drops it when the holder is
    # killed: the file it leaves behind (with the dead pid) takes no takeover.
    target = tmp_path / "db.swdb"
    lock = database_lock_path(target)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(target), lock],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked, match=rf"is being written by pid {holder.pid} on "):
            write_database(fasta, target, PROTEIN)
        assert not target.exists()
    finally:
        holder.kill()
        holder.wait()
    assert Path(lock).exists()     # left by the killed holder, but not locked
    write_database(fasta, target, PROTEIN)
    assert not Path(lock).exists()
    Database.open(target)


def test_duplicate_names_refused_or_renamed(tmp_path: Path) -> None:
    fasta = write_fasta(tmp_path / "d.fasta", [("x", "MKV"), ("y", "WW"), ("x", "MKVL")], width=60)
    with pytest.raises(InvalidInput, match="sequence name 'x' is given twice"):
        write_database(fasta, tmp_path / "d.swdb", PROTEIN)
    assert sorted(os.listdir(tmp_path)) == ["d.fasta"]
    write_database(fasta, tmp_path / "d.swdb", PROTEIN, rename_duplicates=True)
    assert Database.open(tmp_path / "d.swdb").names([0, 1, 2]) == ["x", "y", "x_2"]


def test_a_users_file_at_the_lock_path_is_never_overwritten(tmp_path: Path, fasta: Path) -> None:
    notes = Path(database_lock_path(tmp_path / "out.swdb"))
    notes.write_text("my notes")
    with pytest.raises(OutputExists, match="is not a swath lock file"):
        write_database(fasta, tmp_path / "out.swdb", PROTEIN)
    assert notes.read_text() == "my notes" and not (tmp_path / "out.swdb").exists()


def test_release_leaves_a_lock_file_that_is_not_its_own(tmp_path: Path) -> None:
    # the holder's store was renamed away (replaced); a new store's lock at the path is
    # another job's and stays
    path = tmp_path / "r.zarr"
    lock = acquire_lock(path)
    os.rename(path, tmp_path / "old.zarr")
    path.mkdir()
    Path(lock).write_text(json.dumps({"pid": 1, "host": "elsewhere"}))
    release_lock(path)
    assert Path(lock).exists()
