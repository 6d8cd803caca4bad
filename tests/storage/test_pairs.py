"""The batched-pairs store: inputs taken in batch by batch and kept, chunks of pairs
written and marked, damage found (and recomputed, or refused), the store read by xarray."""

from __future__ import annotations

import numpy as np
import pytest

import swath
from swath.sequences import read_sequences
from swath.sequences.batches import read_batches
from swath.storage import pairs as layout
from swath.storage.pairs import PAIR_FIELDS, PairsStore, ingest, write_index
from tests.helpers import DNA, write_fasta

ROWS = np.array([3, 0, 7, 3, 5, 1, 0, 0, 6, 2, 2, 7, 4, 3, 1, 0, 5, 6, 7, 2, 2, 4, 0])
COLS = np.array([1, 0, 5, 3, 3, 0, 1, 2, 4, 1, 2, 5, 0, 0, 1, 5, 3, 4, 4, 2, 1, 2, 0])


@pytest.fixture
def files(tmp_path):
    """40 queries and 30 targets of 1 to 60 residues, in FASTA files (one gzip)."""
    rng = np.random.default_rng(4)

    def fasta(name, prefix, count):
        seqs = [DNA.alphabet.decode(rng.integers(0, 4, int(n)).astype(np.uint8))
                for n in rng.integers(1, 61, count)]
        return str(write_fasta(tmp_path / name, [(f"{prefix}{i} record {i}", s)
                                                 for i, s in enumerate(seqs)], width=17))

    return fasta("q.fa", "q", 40), fasta("t.fa", "t", 30)


def test_inputs_are_taken_in_batch_by_batch_and_kept(files, tmp_path, monkeypatch):
    """Batches of about 50 residues into arrays of small chunks: pieces that straddle
    chunks, records longer than a residue chunk, each array's digest taken chunk by chunk
    as the damage check reads it, records read back in runs and scattered."""
    for name, size in {"RESIDUE_CHUNK": 32, "OFFSET_CHUNK": 8, "NAME_CHUNK": 4,
                       "INDEX_CHUNK": 8}.items():
        monkeypatch.setattr(layout, name, size)
    rows, cols = np.r_[ROWS, 39], np.r_[COLS, 29]

    def fill(group):
        for side, path in zip(("query", "target"), files, strict=True):
            taken = ingest(group, side, read_batches(path, DNA.alphabet, batch_residues=50),
                           keep_names=side == "query")
            assert taken.count == len(read_sequences(path, DNA.alphabet))
        assert taken.names is None
        write_index(group, (rows, cols))
        return len(rows), 5, 0

    store = PairsStore.create(str(tmp_path / "p.zarr"), fill, paired="index")
    for side, path in zip(("query", "target"), files, strict=True):
        want = read_sequences(path, DNA.alphabet)
        assert store.count(side) == len(want)
        assert store.names(side).tolist() == list(want.names)
        assert store.lengths(side).tolist() == want.lengths.tolist()
        assert store.array(f"{side}_residues").chunks == (32,)
        for which in (np.arange(len(want)), np.array([0, 1, 2, 9, 10, 17, len(want) - 1]),
                      np.array([5]), np.arange(3, 11)):
            residues, offsets = store.records(side, which)
            assert offsets.tolist() == [0, *np.cumsum(want.lengths[which]).tolist()]
            assert np.array_equal(residues, np.concatenate([want[i] for i in which]))
        assert store.lengths(side, np.array([4, 2])).tolist() == want.lengths[[4, 2]].tolist()
    assert [r.tolist() for r in store.pair_records(3, 11)] == [rows[3:11].tolist(),
                                                               cols[3:11].tolist()]
    assert (store.pairs, store.units, store.unit_pairs(4)) == (24, 5, (20, 24))
    assert set(store.attrs["digests"]) == {"pair_query", "pair_target"} | {
        f"{side}_{name}" for side in ("query", "target") for name in ("residues", "offsets",
                                                                        "name")}
    assert store.damaged() == {"chunk": [], "array": []}


def test_chunks_are_written_marked_finalized_and_read_by_xarray(files, tmp_path):
    import xarray

    def fill(group):
        for side, path in zip(("query", "target"), files, strict=True):
            ingest(group, side, read_batches(path, DNA.alphabet))
        return 30, 7, 0

    store = PairsStore.create(str(tmp_path / "p.zarr"), fill, paired="position")
    assert store.by_position and store.pair_records(28, 30)[1].tolist() == [28, 29]
    assert store.fields(0, 2)["cigar"].tolist() == ["", ""]
    assert np.isnan(store.fields(0, 2)["identity"]).all()
    for unit in range(store.units):
        first, last = store.unit_pairs(unit)
        values = {name: np.arange(first, last).astype(dtype) for name, (dtype, _)
                  in PAIR_FIELDS.items() if dtype is not str}
        store.write_unit(unit, values | {"cigar": np.array([f"{k}=" for k in range(first, last)],
                                                           dtype=object)})
        if unit < store.units - 1:
            with pytest.raises(swath.StoreIncomplete, match="not done"):
                store.finalize()
    store.finalize()
    done = PairsStore.open(store.path)
    assert done.fields()["score"].tolist() == list(range(30))
    assert done.fields(28)["cigar"].tolist() == ["28=", "29="]
    assert done.done().tolist() == [True] * 5
    data = xarray.open_zarr(store.path, consolidated=False)       # a dataset along pairs
    assert {"pair": 30, "query": 40, "target": 30, "chunk": 5}.items() <= \
        dict(data.sizes).items()
    for name in PAIR_FIELDS:
        assert data[name].dims == ("pair",), name
    assert data["query_name"].dims == ("query",)
    assert data["cigar"].values.tolist() == [f"{k}=" for k in range(30)]
    assert data["target_name"].values.tolist() == done.names("target").tolist()


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
    assert store.damaged() == {"chunk": [1, 3], "array": []}
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
    assert swath.verify(str(root)) == {"chunk": 5, "array": 8}


def test_damaged_inputs_are_refused_as_beyond_repair(files, tmp_path):
    job(files, tmp_path)
    root = tmp_path / "p.zarr"
    damaged = ["query_residues", "query_name", "target_offsets", "pair_target"]   # as stored
    for name in damaged:
        (root / name / "c" / "0").write_bytes(b"\x00" * 9)
    assert PairsStore.open(root).damaged() == {"chunk": [], "array": damaged}
    for action in (lambda: swath.resume(str(root), device="cpu"),
                   lambda: job(files, tmp_path)):
        with pytest.raises(swath.StoreDamaged,
                           match=f"damaged beyond repair: {', '.join(damaged)} "):
            action()
