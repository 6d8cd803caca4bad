"""The all-pairs store: sorted sequences, tiles, their writes and done marks, finalize's
gathering of the kept pairs (and the score matrix) in input order, and what xarray and
pandas read of it."""

from __future__ import annotations

import itertools
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import swath
from swath.engine.allpairs import forest
from swath.sequences import sequence_set
from swath.sequences.pieces import Parsed
from swath.storage.allpairs import (
    COUNTERS,
    KEPT_FIELDS,
    NO_SCORE,
    TILE_FIELDS,
    AllPairsStore,
    empty_kept,
    tile_blocks,
)
from tests.helpers import DNA, assert_refused_as_older

SEQS = ["ACGTACGT", "A", "ACG", "ACGTA", "AC", "ACGTAC", "ACGT"]   # lengths 8 1 3 5 2 6 4


def create(tmp_path, seqs=SEQS, block=3, scores=True, clusters=True, cuts=(3,)):
    """A store of ``seqs`` taken in as pieces cut before the records ``cuts``, indexed."""
    sequences = sequence_set(seqs, DNA.alphabet, names=[f"s{i}" for i in range(len(seqs))])
    edges = [0, *cuts, len(seqs)]

    def fill(store):
        for k, (first, last) in enumerate(itertools.pairwise(edges)):
            part = sequences.offsets[first:last + 1]
            store.write_piece("sequence", k, Parsed.of(
                sequences.names[first:last], sequences.residues[part[0]:part[-1]],
                part - part[0]), (k, k + 1), bytes(32))

    store = AllPairsStore.create(str(tmp_path / "a.zarr"), len(edges) - 1, fill, block=block,
                                 scores=scores, clusters=clusters, inputs={"clusters": clusters},
                                 sources={"sequence": {"display": "seqs"}})
    assert not store.indexed
    store.index(rename=False)
    assert store.indexed
    return store


def counters(pairs=0, kept=0):
    return dict.fromkeys(COUNTERS, 0) | {"pairs": pairs, "kept": kept}


def write_tile(store, t, kept, counted, chunks):
    """``store.write_tile`` as the engine calls it: with the tile's forest."""
    store.write_tile(t, kept, counted, chunks, forest(kept["query"], kept["target"]))


def tile_kept(pairs, cigars, **fields):
    """A tile's kept pairs as the engine hands them to ``write_tile`` (zeros but for
    ``fields``): (query, target) ``pairs``, their CIGARs (strings) one buffer."""
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    kept = {name: np.zeros(len(pairs), dtype) for name, dtype in TILE_FIELDS.items()}
    kept |= {"query": pairs[:, 0], "target": pairs[:, 1], **fields}
    kept["cigar_length"] = np.array([len(c) for c in cigars], dtype=np.int32)
    kept["cigar_text"] = np.frombuffer("".join(cigars).encode(), np.uint8)
    return kept


def test_tiles_are_the_upper_triangle_row_by_row():
    assert tile_blocks(1).tolist() == [[0, 0]]
    blocks = tile_blocks(4)
    assert len(blocks) == 10
    assert all(bi <= bj for bi, bj in blocks.tolist())
    assert blocks.tolist() == sorted(blocks.tolist())


def test_sequences_are_kept_sorted_by_length_and_read_by_block(tmp_path):
    store = create(tmp_path)
    assert store.order().tolist() == [1, 4, 2, 6, 3, 5, 0]
    assert store.block_order(1).tolist() == [6, 3, 5]
    assert store.sequence_names().tolist() == [f"s{i}" for i in range(7)]        # input order
    assert store.sequence_lengths().tolist() == [len(s) for s in SEQS]
    assert (store.tiles, store.block_range(2)) == (6, (6, 7))
    residues, offsets = store.block_sequences(1)
    assert offsets.tolist() == [0, 4, 9, 15]
    assert DNA.alphabet.decode(residues) == "ACGTACGTAACGTAC"


def test_fastq_qualities_are_kept_sorted_with_their_records_and_read_by_input(tmp_path):
    """Each piece's qualities sorted as its records are; read back in input order, by
    input index, across the pieces."""
    sequences = sequence_set(SEQS, DNA.alphabet, names=[f"s{i}" for i in range(len(SEQS))])
    quals = [chr(34 + i) * len(s) for i, s in enumerate(SEQS)]      # one character a record
    text = np.frombuffer("".join(quals).encode(), np.uint8)

    def fill(store):
        for k, (first, last) in enumerate([(0, 3), (3, 7)]):
            part = sequences.offsets[first:last + 1]
            store.write_piece("sequence", k, Parsed.of(
                sequences.names[first:last], sequences.residues[part[0]:part[-1]],
                part - part[0], text[part[0]:part[-1]]), (k, k + 1), bytes(32))

    store = AllPairsStore.create(str(tmp_path / "a.zarr"), 2, fill, block=3, scores=False,
                                 clusters=False, inputs={},
                                 sources={"sequence": {"display": "seqs"}})
    store.index(rename=False)
    sorted_ = store.piece("sequence", 0, "qualities")[...].tobytes()     # by length
    assert sorted_ == b"#$$$" + b'"' * 8
    for which in (np.arange(7), np.array([0, 2, 3, 6]), np.array([5])):
        values, offsets = store.qualities("sequence", which)
        assert [values[a:b].tobytes().decode() for a, b in itertools.pairwise(offsets)] == [
            quals[i] for i in which]
    assert create(tmp_path / "fasta").qualities("sequence", np.arange(7)) is None


def test_equal_lengths_keep_their_input_order(tmp_path):
    store = create(tmp_path, seqs=["CC", "A", "GG", "T", "AA"])
    assert store.order().tolist() == [1, 3, 0, 2, 4]


def test_a_tile_round_trips_and_only_finalize_completes_the_store(tmp_path):
    import xarray

    store = create(tmp_path)
    kept = tile_kept([(1, 6), (2, 4)], ["2=", "1=1X"], score=np.array([5, 7]))
    chunk = np.arange(9, dtype=np.int32).reshape(3, 3)
    write_tile(store, 1, kept, counters(9, 2), [chunk, chunk.T])
    assert store.done().tolist() == [False, True, False, False, False, False]
    got = store.kept(1)
    assert got.keys() == KEPT_FIELDS.keys()
    assert got["query"].tolist() == [1, 2] and got["cigar"].tolist() == ["2=", "1=1X"]
    assert got["target"].tolist() == [6, 4] and got["score"].tolist() == [5, 7]
    tile = xarray.open_zarr(store.path, group="work/kept/1", consolidated=False)
    assert dict(tile.sizes) == {"pair": 2, "member": 2, "field": 9, "cigar_character": 6,
                                "edge": 2}
    assert tile["forest"].values.tolist() == [[2, 4], [1, 6]]
    assert tile["values"].attrs["fields"][0] == "score"
    assert store.counters()[1].tolist() == [9, 0, 0, 0, 2]
    scores = np.asarray(store.array("work/score")[:])       # sorted order, as tiles write
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
        write_tile(store, t, empty_kept(), counters(int(bi != bj)), chunks)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(store.tiles)))
    with pytest.raises(swath.StoreIncomplete, match="cluster"):
        store.finalize()
    store.write_clusters(np.zeros(7, np.int64))
    store.finalize()
    done = AllPairsStore.open(store.path)
    assert done.counters()[:, 0].sum() == 21
    assert all(len(done.kept(t)["query"]) == 0 for t in range(done.tiles))
    assert len(done.pairs()["query"]) == 0
    assert np.array_equal(done.scores(), done.scores().T)
    assert not any(done.damaged().values())


def test_damaged_tiles_are_named_and_repaired(tmp_path):
    # a deleted chunk of the score matrix, altered kept pairs, a lost cluster array: each
    # names its tile (or array); repair clears exactly those marks
    store = create(tmp_path, block=1)
    blocks = tile_blocks(7).tolist()
    for t, (bi, bj) in enumerate(blocks):
        chunks = [np.full((1, 1), t + 1, np.int32)] * (1 + (bi != bj))
        write_tile(store, t, empty_kept(), counters(int(bi != bj)), chunks)
    store.write_clusters(np.arange(7, dtype=np.int64))
    store.finalize()
    root = tmp_path / "a.zarr"
    (root / "work" / "score" / "c" / "2" / "5").unlink()              # tile (2, 5)
    (root / "work" / "kept" / "0" / "cigar" / "zarr.json").write_text("{}")   # tile 0
    (root / "cluster" / "c" / "0").write_bytes(b"garbage")
    opened = AllPairsStore.open(root, mode="r+")
    damage = opened.damaged()
    assert damage == {"tile": [0, blocks.index([2, 5])], "sequence piece": [],
                      "array": ["cluster"]}
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


def finished(tmp_path, kept_by_tile, block=3, scores=True, finalize=True):
    """A store of SEQS whose tiles keep ``kept_by_tile[t]`` ((query, target) input
    indices; score: 10 query + target), each tile writing its chunks of the score
    matrix: 100 row + column of the sorted indices; finalized (or not)."""
    store = create(tmp_path, block=block, scores=scores)
    sorted_scores = np.add.outer(100 * np.arange(7), np.arange(7)).astype(np.int32)
    np.fill_diagonal(sorted_scores, NO_SCORE)
    for t in range(store.tiles):
        pairs = np.array(kept_by_tile.get(t, []), dtype=np.int64).reshape(-1, 2)
        kept = tile_kept(pairs, [f"{q}={t}X" for q, t in pairs],
                         score=10 * pairs[:, 0] + pairs[:, 1])
        chunks = [sorted_scores[r, c] for r, c in store._score_ranges(t)] if scores else []
        write_tile(store, t, kept, counters(kept=len(pairs)), chunks)
    store.write_clusters(np.arange(7, dtype=np.int64))
    if not finalize:
        return store, sorted_scores
    store.finalize()
    return AllPairsStore.open(store.path), sorted_scores


def test_finalize_gathers_the_kept_pairs_tile_after_tile_each_tiles_in_input_order(
        tmp_path):
    tiles = {0: [(2, 4), (1, 4)], 2: [(0, 1)], 5: [(0, 3), (0, 2)], 4: [(3, 5), (2, 6)]}
    store, _ = finished(tmp_path, tiles)
    got = store.pairs()
    want = [pair for t in sorted(tiles) for pair in sorted(tiles[t])]
    assert list(zip(got["query"].tolist(), got["target"].tolist(), strict=True)) == want
    assert got["score"].tolist() == [10 * q + t for q, t in want]
    assert got["cigar"].tolist() == [f"{q}={t}X" for q, t in want]
    assert store.pairs(1, 3)["target"].tolist() == [4, 1]
    # 2 pieces; 7 arrays of the index and inputs, 14 gathered, cluster
    assert store.verify() == {"tile": 6, "sequence piece": 2, "array": 22}


def test_the_score_matrix_is_gathered_in_input_order(tmp_path):
    store, sorted_scores = finished(tmp_path, {})
    order = store.order()
    want = np.empty_like(sorted_scores)
    want[np.ix_(order, order)] = sorted_scores
    assert np.array_equal(store.scores(), want)
    assert store.array("score_matrix").chunks == (3, 3)
    assert "transposed" not in store.group["work"]         # the pass between, deleted


def test_xarray_and_pandas_read_named_variables_in_input_order(tmp_path):
    import xarray

    pytest.importorskip("pandas")
    store, _ = finished(tmp_path, {1: [(1, 6), (2, 5)], 3: [(0, 3)]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = xarray.open_zarr(store.path)
    assert set(data.data_vars) == {*KEPT_FIELDS, "sequence_length", "cluster", "score_matrix"}
    assert set(data.coords) == {"name", "query_sequence", "target_sequence"}
    assert data["score"].dims == ("pair",) and data["cluster"].dims == ("sequence",)
    assert data["name"].values.tolist() == [f"s{i}" for i in range(7)]
    assert data["sequence_length"].values.tolist() == [len(s) for s in SEQS]
    frame = data[list(KEPT_FIELDS)].to_dataframe()
    assert frame[["query", "target"]].values.tolist() == [[1, 6], [2, 5], [0, 3]]
    # a pair's names: indices into the names, not copies a pair
    assert data["name"][data["query"]].values.tolist() == ["s1", "s2", "s0"]
    assert data["name"][data["target"]].values.tolist() == ["s6", "s5", "s3"]
    # the CIGARs as BAM's packed operations: run length << 4 | op (= is 7, X 8)
    assert [np.frombuffer(v, "<u4").tolist() for v in data["cigar"].values] == [
        [q << 4 | 7, t << 4 | 8] for q, t in ((1, 6), (2, 5), (0, 3))]
    cell = data["score_matrix"].sel(query_sequence="s6", target_sequence="s0")
    assert int(cell) == int(store.scores()[6, 0])


def test_a_damaged_gathered_variable_is_named_and_gathered_again(tmp_path):
    finished(tmp_path, {0: [(1, 4)], 5: [(0, 3)]})
    root = tmp_path / "a.zarr"
    (root / "cigar" / "c" / "0").write_bytes(b"garbage")
    (root / "score_matrix" / "c" / "1" / "2").unlink()
    opened = AllPairsStore.open(root, mode="r+")
    damage = opened.damaged()
    assert damage == {"tile": [], "sequence piece": [], "array": ["cigar", "score_matrix"]}
    opened.repair(damage)              # both written again by a run: no tile to recompute
    assert opened.done().all() and opened.attrs["complete"] is False
    opened.finalize()
    again = AllPairsStore.open(root)
    assert again.pairs()["cigar"].tolist() == ["1=4X", "0=3X"]
    assert not any(again.damaged().values())


def test_a_store_of_an_older_version_is_refused_in_one_line(tmp_path):
    store, _ = finished(tmp_path, {})
    assert_refused_as_older(str(store.path), swath.open, 8)      # before base qualities


def test_gathers_of_a_few_chunks_each_in_any_order_make_the_root_finalize_makes(
        tmp_path, monkeypatch):
    """The gathers a job runs as tasks (``create_pairs``, then each on its own, here in
    reverse order) write the same root, chunk for chunk, as finalize's own gathering, and
    their chunk digests make digests that ``verify`` holds and a damaged chunk fails."""
    import swath.storage.allpairs as layout

    monkeypatch.setattr(layout, "PAIR_CHUNK", 2)        # 7 kept pairs: 4 chunks
    monkeypatch.setattr(layout, "GATHER_CHUNKS", 1)
    tiles = {0: [(1, 4), (2, 4)], 2: [(0, 1)], 5: [(0, 3), (0, 2)], 4: [(3, 5), (2, 6)]}
    whole, _ = finished(tmp_path / "whole", tiles)
    store, _ = finished(tmp_path / "parts", tiles, finalize=False)
    gathers = store.create_pairs()
    assert [(kind, list(chunks)) for kind, chunks in gathers] == [
        (kind, [c]) for kind in ("index", "cigar", "values", "identity") for c in range(4)]
    starts, digests = store.tile_starts(), {}
    assert starts.tolist() == [0, 2, 2, 3, 3, 5, 7]
    for kind, chunks in reversed(gathers):
        layout.merge_digests(digests, store.gather_pairs(kind, chunks, starts))
    store.finalize(digests)
    done = AllPairsStore.open(store.path)
    for name, values in whole.pairs().items():
        assert done.pairs()[name].tolist() == values.tolist(), name
    assert done.array("cigar").chunks == (2,)
    assert done.attrs["digests"] == whole.attrs["digests"]
    assert done.verify()["array"] == 22
    chunk = tmp_path / "parts" / "a.zarr" / "cigar" / "c" / "1"
    chunk.write_bytes(b"garbage")
    assert AllPairsStore.open(store.path).damaged()["array"] == ["cigar"]


def test_a_gather_reads_only_the_tiles_whose_kept_pairs_its_chunks_hold(tmp_path,
                                                                        monkeypatch):
    """No task reads the whole result: a gather of one chunk (2 pairs) reads the tiles
    that chunk's pairs come from (their starts a prefix sum of the tiles' counts)."""
    import swath.storage.allpairs as layout

    monkeypatch.setattr(layout, "PAIR_CHUNK", 2)
    tiles = {0: [(2, 4), (1, 4)], 2: [(0, 1)], 5: [(0, 3), (0, 2)], 4: [(3, 5), (2, 6)]}
    store, _ = finished(tmp_path, tiles, finalize=False)
    store.create_pairs()
    starts = store.tile_starts()
    read = []
    tile_arrays = AllPairsStore._tile_arrays
    monkeypatch.setattr(AllPairsStore, "_tile_arrays",
                        lambda self, t, names: read.append(t) or tile_arrays(self, t, names))
    # pairs by chunk: tile 0's two; tile 2's one and tile 4's first; tile 4's second and
    # tile 5's first; tile 5's second
    for chunk, tiles_read in enumerate([[0], [2, 4], [4, 5], [5]]):
        read.clear()
        store.gather_pairs("values", range(chunk, chunk + 1), starts)
        assert read == tiles_read, chunk


def test_finalize_refuses_digests_of_a_variable_not_gathered_whole(tmp_path):
    store, _ = finished(tmp_path, {0: [(1, 4)]}, finalize=False)
    store.create_pairs()
    starts, digests = store.tile_starts(), {}
    for kind in ("index", "values", "identity"):
        digests |= store.gather_pairs(kind, range(1), starts)
    with pytest.raises(ValueError, match="cigar was not gathered whole"):
        store.finalize(digests)


FINALIZE_PEAK = """
import resource, sys
import numpy as np
import swath.storage.allpairs as layout
from swath.scoring import Scoring
from swath.sequences import sequence_set
from swath.sequences.pieces import Parsed

layout.PAIR_CHUNK = 1 << 14
path, blocks, kept = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(blocks)
n = 64 * blocks
seqs = sequence_set(["ACGT" * 10] * n, Scoring.dna().alphabet, names=[f"s{i}" for i in range(n)])
store = layout.AllPairsStore.create(
    path, 1, lambda store: store.write_piece("sequence", 0, Parsed.of(
        seqs.names, seqs.residues, seqs.offsets), (0, 0), bytes(32)),
    block=64, scores=False, clusters=False, sources={"sequence": {"display": "seqs"}})
store.index(rename=False)
store = layout.AllPairsStore.open(path, mode="r+", complete=False)
for t in range(store.tiles):
    query = rng.integers(0, n - 1, kept)
    pairs = {name: np.zeros(kept, dtype) for name, dtype in layout.TILE_FIELDS.items()}
    pairs |= {"query": query, "target": query + 1, "cigar_length": np.full(kept, 4, np.int32),
              layout.CIGAR_TEXT: np.frombuffer(b"3=1X" * kept, np.uint8)}
    store.write_tile(t, pairs, dict.fromkeys(layout.COUNTERS, 0) | {"kept": kept}, [])
store = layout.AllPairsStore.open(path, mode="r+", complete=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
store.finalize()
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.slow
def test_finalize_memory_is_bounded_by_its_chunks_not_the_kept_pairs(tmp_path):
    """Eight times the kept pairs (36 tiles of 4,000 and of 32,000, chunks of 16,384, in a
    process of its own): gathering them into the root adds less than 4 MB more to the
    process's peak (a gather holds its chunks and the tiles at their ends, no process
    every kept pair: with one task ordering them all, 1,152,000 took 81 MB more)."""
    import subprocess
    import sys

    script = tmp_path / "peak.py"
    script.write_text(FINALIZE_PEAK)
    grown = []
    for kept in (4000, 32000):
        path = tmp_path / f"a{kept}.zarr"
        done = subprocess.run([sys.executable, str(script), str(path), "8", str(kept)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        before, peak = map(int, done.stdout.split())
        grown.append(peak - before)          # kilobytes finalize added to the process's peak
        assert len(AllPairsStore.open(path).pairs()["query"]) == 36 * kept
    assert grown[1] - grown[0] < 4 * 1024, grown
