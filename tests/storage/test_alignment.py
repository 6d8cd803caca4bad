"""The long pair's alignment store: tiles and segments marked done, damage found, finished."""

from __future__ import annotations

import numpy as np
import pytest

import swath
from swath.storage.longpair import AlignmentStore
from tests.helpers import assert_refused_as_older

QUERY = np.array([0, 1, 2, 3, 0, 1], dtype=np.uint8)               # m = 6
TARGET = np.array([0, 1, 2, 3, 3, 0, 1], dtype=np.uint8)           # n = 7


def create(tmp_path, origins=True):
    return AlignmentStore.create(str(tmp_path / "a.zarr"), QUERY, TARGET, tile=(4, 4),
                                 origins=origins, names=["q", "t"],
                                 inputs={"mode": "global", "traceback": True})


def write_tile(store, ti, tj, value):
    """Tile (ti, tj) of 4 x 4 cells with every boundary value ``value``."""
    columns = min(4 * tj + 4, len(TARGET)) - 4 * tj
    rows = min(4 * ti + 4, len(QUERY)) - 4 * ti
    fields = 4 if store.origins else 2
    store.write_tile(ti, tj, np.full((fields, columns), value), np.full((fields, rows), value),
                     (value, ti, tj, -1))


def test_a_new_store_opens_unfinished_with_no_tile_done(tmp_path):
    import xarray

    store = create(tmp_path)
    assert (store.tiles, store.tile, store.origins, store.names) == ((2, 2), (4, 4), True,
                                                                    ("q", "t"))
    assert not store.tiles_done().any() and store.segments() is None
    np.testing.assert_array_equal(store.sequences()[1], TARGET)
    done = xarray.open_zarr(store.path, group="work", consolidated=False)["tile_done"]
    assert done.dims == ("tile_row", "tile_column") and done.dtype == np.uint64
    with pytest.raises(swath.StoreIncomplete, match="not finished"):
        AlignmentStore.open(store.path)
    with pytest.raises(swath.StoreIncomplete, match="4 of 4 tiles are not done"):
        store.check_done()


def test_tiles_are_marked_and_a_damaged_one_is_found_and_repaired(tmp_path):
    store = create(tmp_path)
    for ti, tj in np.ndindex(2, 2):
        write_tile(store, ti, tj, 10 * ti + tj + 1)
    assert store.tiles_done().all() and not any(store.damaged().values())
    np.testing.assert_array_equal(store.bottom(1, 4, 7), np.full((4, 3), 12))
    (tmp_path / "a.zarr" / "work" / "right" / "c" / "1" / "0" / "0").unlink()   # (0, 1)
    assert store.damaged() == {"tile": [(0, 1)], "segment": [], "array": []}
    with pytest.raises(swath.StoreDamaged, match=r"damaged: tile 0,1; `swath resume"):
        store.check_sound()
    store.repair(store.damaged())
    assert store.tiles_done().tolist() == [[True, False], [True, True]]
    assert store.attrs["complete"] is False


def test_segments_pieces_and_the_alignment_finish_the_store(tmp_path):
    store = create(tmp_path)
    for ti, tj in np.ndindex(2, 2):
        write_tile(store, ti, tj, 1)
    store.write_segments(np.array([[1, 1, 0, 0], [0, 0, 0, 0]]), {"row": 6, "column": 7},
                         per_chunk=1)
    assert not store.segments_done().any()
    store.write_pieces(0, ["3="])
    store.write_pieces(1, ["2=1D1="])
    assert store.segments_done().all() and store.pieces() == ["3=", "2=1D1="]
    store.finish({"score": 9, "query_start": 0, "query_end": 6, "target_start": 0,
                  "target_end": 7}, "2=1D1=3=")
    finished = AlignmentStore.open(store.path)
    assert finished.alignment().cigar == "2=1D1=3=" and finished.end() == (9, 6, 7)
    # arrays written whole: the sequences, the segments, and the result's 6 variables
    assert finished.verify() == {"tile": 4, "segment": 2, "array": 9}
    import xarray

    root = xarray.open_zarr(store.path, consolidated=False)     # the result, and only it
    assert {name: root[name].values.tolist() for name in root.data_vars} == {
        "score": [9], "query_start": [0], "query_end": [6], "target_start": [0],
        "target_end": [7], "cigar": [np.array([39, 18, 23, 55], "<u4").tobytes()]}
    # BAM's packed operations: run length << 4 | op (= is 7, D 2), as the pieces are
    pieces = xarray.open_zarr(store.path, group="work", consolidated=False)["segment_cigar"]
    assert [np.frombuffer(v, "<u4").tolist() for v in pieces.values] == [[55], [39, 18, 23]]
    assert root["score"].dims == ("alignment",)


@pytest.mark.parametrize("origins", [True, False], ids=["traceback", "scores-only"])
def test_every_array_opens_in_xarray(tmp_path, origins):
    """The boundaries (2 fields without origins), the tiles' best cells (4) and the
    segments name their fields' dimensions apart: xarray opens the whole store."""
    import xarray

    store = create(tmp_path, origins=origins)
    data = xarray.open_zarr(store.path, group="work", consolidated=False)
    assert data["bottom"].sizes["boundary_field"] == (4 if origins else 2)
    assert data["tile_best"].sizes["best_field"] == 4


def test_a_store_of_an_older_version_is_refused_in_one_line(tmp_path):
    store = create(tmp_path)
    assert_refused_as_older(str(store.path),
                            lambda path: AlignmentStore.open(path, complete=False), 3)
