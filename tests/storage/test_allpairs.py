"""The all-pairs store: sorted sequences, tiles, their writes and done marks, finalize."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import xarray

import swath
from swath.sequences import sequence_set
from swath.storage.allpairs import (
    COUNTERS,
    KEPT_FIELDS,
    NO_SCORE,
    AllPairsStore,
    empty_kept,
    tile_blocks,
)
from tests.helpers import DNA

SEQS = ["ACGTACGT", "A", "ACG", "ACGTA", "AC", "ACGTAC", "ACGT"]   # lengths 8 1 3 5 2 6 4


def create(tmp_path, seqs=SEQS, block=3, scores=True, clusters=True):
    sequences = sequence_set(seqs, DNA.alphabet, names=[f"s{i}" for i in range(len(seqs))])
    return AllPairsStore.create(str(tmp_path / "a.zarr"), sequences, block=block,
                                scores=scores, clusters=clusters, inputs={"clusters": clusters})


def counters(pairs=0, kept=0):
    return dict.fromkeys(COUNTERS, 0) | {"pairs": pairs, "kept": kept}


def test_tiles_are_the_upper_triangle_row_by_row():
    assert tile_blocks(1).tolist() == [[0, 0]]
    blocks = tile_blocks(4)
    assert len(blocks) == 10
    assert all(bi <= bj for bi, bj in blocks.tolist())
    assert blocks.tolist() == sorted(blocks.tolist())


def test_sequences_are_kept_sorted_by_length_and_read_by_block(tmp_path):
    store = create(tmp_path)
    assert store.order().tolist() == [1, 4, 2, 6, 3, 5, 0]
    assert store.names().tolist() == ["s1", "s4", "s2", "s6", "s3", "s5", "s0"]
    assert (store.tiles, store.block_range(2)) == (6, (6, 7))
    residues, offsets = store.block_sequences(1)
    assert offsets.tolist() == [0, 4, 9, 15]
    assert DNA.alphabet.decode(residues) == "ACGTACGTAACGTAC"


def test_equal_lengths_keep_their_input_order(tmp_path):
    store = create(tmp_path, seqs=["CC", "A", "GG", "T", "AA"])
    assert store.order().tolist() == [1, 3, 0, 2, 4]


def test_a_tile_round_trips_and_only_finalize_completes_the_store(tmp_path):
    store = create(tmp_path)
    kept = {name: np.zeros(2, dtype) for name, dtype in KEPT_FIELDS.items() if dtype is not str}
    kept |= {"i": np.array([0, 1]), "j": np.array([3, 4]), "score": np.array([5, 7]),
             "cigar": np.array(["2=", "1=1X"], dtype=object)}
    chunk = np.arange(9, dtype=np.int32).reshape(3, 3)
    store.write_tile(1, kept, counters(9, 2), [chunk, chunk.T])
    assert store.done().tolist() == [False, True, False, False, False, False]
    got = store.kept(1)
    assert got.keys() == KEPT_FIELDS.keys()
    assert got["i"].tolist() == [0, 1] and got["cigar"].tolist() == ["2=", "1=1X"]
    assert got["j"].tolist() == [3, 4] and got["score"].tolist() == [5, 7]
    tile = xarray.open_zarr(store.path, group="kept/1", consolidated=False)
    assert dict(tile.sizes) == {"pair": 2, "member": 2, "field": 9}
    assert tile["values"].attrs["fields"][0] == "score"
    assert store.counters()[1].tolist() == [9, 0, 0, 0, 2]
    scores = store.scores()
    assert np.array_equal(scores[0:3, 3:6], chunk) and np.array_equal(scores[3:6, 0:3], chunk.T)
    assert scores[0, 0] == NO_SCORE
    with pytest.raises(swath.StoreIncomplete, match="5 of 6 tiles are not done"):
        store.finalize()
    with pytest.raises(swath.StoreIncomplete, match="not finished"):
        AllPairsStore.open(store.path)


def test_tiles_written_side_by_side_leave_no_chunk_missing(tmp_path):
    store = create(tmp_path, block=1)
    blocks = tile_blocks(7).tolist()

    def write(t):
        bi, bj = blocks[t]
        chunks = [np.full((1, 1), t, np.int32)] * (1 + (bi != bj))
        store.write_tile(t, empty_kept(), counters(int(bi != bj)), chunks)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(store.tiles)))
    with pytest.raises(swath.StoreIncomplete, match="cluster"):
        store.finalize()
    store.write_clusters(np.zeros(7, np.int64))
    store.finalize()
    done = AllPairsStore.open(store.path)
    assert done.counters()[:, 0].sum() == 21
    assert all(len(done.kept(t)["i"]) == 0 for t in range(done.tiles))
    assert np.array_equal(done.scores(), done.scores().T)
    assert not any(done.damaged().values())


def test_damaged_tiles_are_named_and_repaired(tmp_path):
    # a deleted chunk of the score matrix, altered kept pairs, a lost cluster array: each
    # names its tile (or array); repair clears exactly those marks
    store = create(tmp_path, block=1)
    blocks = tile_blocks(7).tolist()
    for t, (bi, bj) in enumerate(blocks):
        chunks = [np.full((1, 1), t + 1, np.int32)] * (1 + (bi != bj))
        store.write_tile(t, empty_kept(), counters(int(bi != bj)), chunks)
    store.write_clusters(np.arange(7, dtype=np.int64))
    store.finalize()
    root = tmp_path / "a.zarr"
    (root / "score" / "c" / "2" / "5").unlink()              # tile (2, 5)
    (root / "kept" / "0" / "cigar" / "zarr.json").write_text("{}")   # tile 0, unreadable
    (root / "cluster" / "c" / "0").write_bytes(b"garbage")
    opened = AllPairsStore.open(root, mode="r+")
    damage = opened.damaged()
    assert damage == {"tile": [0, blocks.index([2, 5])], "array": ["cluster"]}
    with pytest.raises(swath.StoreDamaged, match=r"damaged: 2 tiles \(0, 16\); array cluster"):
        opened.check_sound()
    opened.repair(damage)
    assert opened.done().sum() == len(blocks) - 2 and opened.attrs["complete"] is False
    assert "cluster" not in opened.attrs["digests"]


def test_a_job_without_scores_or_clusters_says_so(tmp_path):
    store = create(tmp_path, scores=False, clusters=False)
    with pytest.raises(swath.StoreIncomplete, match="no score matrix"):
        store.scores()
    with pytest.raises(swath.StoreIncomplete, match="no clusters"):
        store.clusters()
    with pytest.raises(swath.StoreIncomplete, match="kept pairs of tile 0"):
        store.kept(0)
