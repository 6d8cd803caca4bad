"""The batched-pairs store: inputs taken in piece by piece and kept, indexed, chunks of
pairs written and marked, damage found (and recomputed, or refused), the store read by
xarray, a store of the version before refused."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest
import zarr

import swath
from swath.sequences import read_sequences
from swath.sequences.pieces import Parsed
from swath.storage import pairs as layout
from swath.storage.pairs import PAIR_FIELDS, PairsStore
from tests.helpers import DNA, write_fasta

ROWS = np.array([3, 0, 7, 3, 5, 1, 0, 0, 6, 2, 2, 7, 4, 3, 1, 0, 5, 6, 7, 2, 2, 4, 0])
COLS = np.array([1, 0, 5, 3, 3, 0, 1, 2, 4, 1, 2, 5, 0, 0, 1, 5, 3, 4, 4, 2, 1, 2, 0])


@pytest.fixture
def files(tmp_path):
    """40 queries and 30 targets of 1 to 60 residues, in FASTA files."""
    rng = np.random.default_rng(4)

    def fasta(name, prefix, count):
        seqs = [DNA.alphabet.decode(rng.integers(0, 4, int(n)).astype(np.uint8))
                for n in rng.integers(1, 61, count)]
        return str(write_fasta(tmp_path / name, [(f"{prefix}{i} record {i}", s)
                                                 for i, s in enumerate(seqs)], width=17))

    return fasta("q.fa", "q", 40), fasta("t.fa", "t", 30)


def taken_in(path, files, pairs, chunk, **fields):
    """A store whose inputs are the files' records in pieces of 7 records (the last
    fewer, one empty piece among them), indexed with ``pairs`` (None: by position)."""
    sets = [read_sequences(file, DNA.alphabet) for file in files]
    cuts = [[*range(0, len(records), 7), len(records), len(records)] for records in sets]

    def fill(store):
        for side, records, at in zip(layout.SIDES, sets, cuts, strict=True):
            for k, (first, last) in enumerate(itertools.pairwise(at)):
                edges = records.offsets[first:last + 1]
                store.write_piece(side, k, Parsed.of(records.names[first:last],
                                                     records.residues[edges[0]:edges[-1]],
                                                     edges - edges[0]),
                                  (first, last), hashlib.sha256(b"%d" % k).digest())

    store = PairsStore.create(path, {side: len(at) - 1 for side, at in
                                     zip(layout.SIDES, cuts, strict=True)}, fill, **fields)
    assert not store.indexed
    store.index(lambda _: pairs, lambda count, cells: chunk)
    return store, sets


def test_inputs_are_taken_in_piece_by_piece_and_kept(files, tmp_path, monkeypatch):
    """Pieces in arrays of small chunks: records longer than a residue chunk, read back
    by their number in their side, in runs and scattered, across pieces."""
    monkeypatch.setattr(layout, "INDEX_CHUNK", 8)
    for name, size in {"residues": 32, "names": 16, "edges": 4}.items():
        dtype, _, compressed = layout.PairsStore.PIECE_ARRAYS[name]
        monkeypatch.setitem(layout.PairsStore.PIECE_ARRAYS, name, (dtype, size, compressed))
    rows, cols = np.r_[ROWS, 39], np.r_[COLS, 29]
    store, sets = taken_in(str(tmp_path / "p.zarr"), files, (rows, cols), 5, paired="index")
    assert store.indexed
    for side, want in zip(layout.SIDES, sets, strict=True):
        assert store.count(side) == len(want)
        assert store.names(side).tolist() == list(want.names)
        assert store.lengths(side).tolist() == want.lengths.tolist()
        assert store.piece(side, 0, "residues").chunks == (32,)
        assert store.piece(side, 0, "edges").chunks == (4, 2)
        for which in (np.arange(len(want)), np.array([0, 1, 2, 9, 10, 17, len(want) - 1]),
                      np.array([5]), np.arange(3, 11)):
            residues, offsets = store.records(side, which)
            assert offsets.tolist() == [0, *np.cumsum(want.lengths[which]).tolist()]
            assert np.array_equal(residues, np.concatenate([want[i] for i in which]))
        scattered = np.array([9, 2, 2, 27, 0])
        assert store.lengths(side, scattered).tolist() == want.lengths[scattered].tolist()
        assert store.names(side, scattered).tolist() == [want.names[i] for i in scattered]
    assert [r.tolist() for r in store.pair_records(3, 11)] == [rows[3:11].tolist(),
                                                               cols[3:11].tolist()]
    assert (store.pairs, store.units, store.unit_pairs(4)) == (24, 5, (20, 24))
    assert set(store.attrs["digests"]) == {"pair_query", "pair_target", "work/query_records",
                                           "work/target_records"}
    assert store.damaged() == {"chunk": [], "query piece": [], "target piece": [],
                              "array": []}
    spans = np.array([[first, last] for first, last in itertools.pairwise(
        [*range(0, 40, 7), 40, 40])], dtype="<i8")
    shas = [hashlib.sha256(b"%d" % k).digest() for k in range(len(spans))]
    assert store.attrs["input_sha256"]["query"] == hashlib.sha256(b"".join(
        span.tobytes() + sha for span, sha in zip(spans, shas, strict=True))).hexdigest()


def test_chunks_are_written_marked_finalized_and_read_by_xarray(files, tmp_path):
    import xarray

    store, _ = taken_in(str(tmp_path / "p.zarr"), (files[1], files[1]), None, 7,
                        paired="position")
    assert store.by_position and store.pair_records(28, 30)[1].tolist() == [28, 29]
    assert store.fields(0, 2)["cigar"].tolist() == ["", ""]
    assert np.isnan(store.fields(0, 2)["identity"]).all()
    for unit in range(store.units):
        first, last = store.unit_pairs(unit)
        values = {name: np.arange(first, last).astype(dtype) for name, (dtype, _)
                  in PAIR_FIELDS.items() if dtype is not bytes}
        store.write_unit(unit, values | {"cigar": np.array([f"{k}=" for k in range(first, last)],
                                                           dtype=object)})
        if unit < store.units - 1:
            with pytest.raises(swath.StoreIncomplete, match="chunks of pairs are not done"):
                store.finalize()
    marks = store.array("work/query_done")
    mark, marks[1] = marks[1], 0
    with pytest.raises(swath.StoreIncomplete, match="1 of 6 pieces of the queries are not"):
        store.finalize()
    marks[1] = mark
    store.finalize()
    done = PairsStore.open(store.path)
    assert done.fields()["score"].tolist() == list(range(30))
    assert done.fields(28)["cigar"].tolist() == ["28=", "29="]
    assert done.done().tolist() == [True] * 5
    data = xarray.open_zarr(store.path, consolidated=False)       # a dataset along pairs
    assert dict(data.sizes) == {"pair": 30}           # the job's own arrays are in work
    assert xarray.open_zarr(store.path, group="work", consolidated=False).sizes["chunk"] == 5
    for name in PAIR_FIELDS:
        assert data[name].dims == ("pair",), name
    # the CIGARs as BAM's packed operations: run length << 4 | op (= is 7)
    assert [np.frombuffer(v, "<u4").tolist() for v in data["cigar"].values] == [
        [k << 4 | 7] for k in range(30)]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_store_of_an_older_version_is_refused_in_one_line(tmp_path, version):
    path = str(tmp_path / "old.zarr")
    zarr.open_group(path, mode="w", zarr_format=3).attrs["swath"] = {
        "layout": "pairs", "version": version, "created": True, "complete": True}
    for action in (lambda: swath.open(path), lambda: swath.verify(path)):
        with pytest.raises(swath.FormatVersionError) as refused:
            action()
        assert str(refused.value) == (f"{path} is a 'pairs' store version {version}, this "
                                      "swath reads 'pairs' version 4 (it was written by an "
                                      "older swath: write it again with this one)")


def test_fastq_pieces_keep_their_qualities_and_fasta_pieces_none(tmp_path):
    """A FASTQ query piece keeps its records' qualities beside its residues (in its done
    mark: damage to them is found), read back by record number across pieces; the
    targets' are not kept (SAM's reads are the queries), nor a FASTA side's, nor any by
    a layout that keeps none (a database's)."""
    from swath.storage.database.writer import DatabaseBuild

    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 30, 12)
    quals = [bytes(rng.integers(33, 127, int(n)).astype(np.uint8)) for n in lengths]
    codes = [rng.integers(0, 4, int(n)).astype(np.uint8) for n in lengths]
    edges = np.concatenate([[0], np.cumsum(lengths)])

    def piece(first, last, qualities=True):
        return Parsed.of([f"r{i}" for i in range(first, last)],
                         np.concatenate(codes[first:last]), edges[first:last + 1] - edges[first],
                         np.frombuffer(b"".join(quals[first:last]), np.uint8) if qualities
                         else None)

    def fill(store):
        for k, (first, last) in enumerate([(0, 5), (5, 9), (9, 12)]):
            store.write_piece("query", k, piece(first, last), (first, last), bytes(32))
        store.write_piece("target", 0, piece(0, 12), (0, 12), bytes(32))    # not kept

    store = PairsStore.create(str(tmp_path / "p.zarr"), {"query": 3, "target": 1}, fill)
    store.index(lambda _: None, lambda count, cells: 4)
    assert store.has_qualities("query") and not store.has_qualities("target")
    assert store.qualities("target", np.arange(3)) is None
    for which in (np.arange(12), np.array([1, 4, 5, 11]), np.array([7])):
        values, offsets = store.qualities("query", which)
        assert offsets.tolist() == store.records("query", which)[1].tolist()
        assert values.tobytes() == b"".join(quals[i] for i in which)
    assert not any(store.damaged().values())
    (tmp_path / "p.zarr" / "work" / "query_pieces" / "1" / "qualities" / "c" / "0").unlink()
    assert store.damaged()["query piece"] == [1]

    class Kept(PairsStore):     # a layout that keeps none, as a database's
        QUALITIES = frozenset()

    assert not DatabaseBuild.QUALITIES
    Kept(store.path, store.group, {}).write_piece("query", 1, piece(5, 9), (5, 9), bytes(32))
    store.write_piece("query", 2, piece(9, 12, False), (9, 12), bytes(32))    # FASTA's
    again = PairsStore.open(store.path, complete=False)
    for k in (1, 2):
        assert not again.piece("query", k, "residues").attrs.get("qualities")
        assert len(again.piece_values("query", k)) == 5  # residues, names, edges; span, sha


def job(files, tmp_path, name="p.zarr"):
    return swath.align_pairs(*files, DNA, "semiglobal", "cpu", pairs=(ROWS, COLS), chunk=5,
                             store=str(tmp_path / name))


def columns(result):
    return {name: result.column(name).tolist() for name in ("score", "query_start",
                                                             "target_end", "cigar",
                                                             "identity", "query_name")}


def test_a_damaged_chunk_is_found_and_recomputed(files, tmp_path):
    want = columns(job(files, tmp_path))
    root = tmp_path / "p.zarr"
    (root / "score" / "c" / "1").unlink()                              # pairs 5-9
    (root / "cigar" / "c" / "3").write_bytes(b"\x28\xb5\x2f\xfd broken")  # pairs 15-19
    store = PairsStore.open(root)
    assert store.damaged() == {"chunk": [1, 3], "query piece": [], "target piece": [],
                              "array": []}
    message = f"{root}: damaged: 2 chunks (1, 3); `swath resume {root}` recomputes what it can"
    for check in (store.check_sound, lambda: swath.verify(str(root)),
                  lambda: swath.open(str(root))):
        with pytest.raises(swath.StoreDamaged) as refused:
            check()
        assert str(refused.value) == message
    calls = []
    resumed = swath.resume(str(root), device="cpu", progress=lambda *a: calls.append(a))
    assert calls[0] == ("pairs", 13, 23, 0) and len(calls) == 3
    assert columns(resumed) == want
    assert swath.verify(str(root)) == {"chunk": 5, "query piece": 1,
                                        "target piece": 1, "array": 6}


def test_damaged_inputs_are_refused_as_beyond_repair(files, tmp_path):
    job(files, tmp_path)
    root = tmp_path / "p.zarr"
    for chunk in ("work/query_pieces/0/residues/c/0", "work/query_pieces/0/names/c/0",
                  "work/target_pieces/0/edges/c/0/0", "pair_target/c/0"):
        (root / chunk).write_bytes(b"\x00" * 9)
    assert PairsStore.open(root).damaged() == {"chunk": [], "query piece": [0],
                                               "target piece": [0], "array": ["pair_target"]}
    for action in (lambda: swath.resume(str(root), device="cpu"),
                   lambda: job(files, tmp_path)):
        with pytest.raises(swath.StoreDamaged,
                           match="damaged beyond repair: query piece 0, target piece 0, "
                                 "pair_target "):
            action()
