"""Where a store may be created, and how it appears: whole, or not at all."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
import pytest
import zarr

from swath.errors import InputChanged, OutputExists, StoreIncomplete, StoreLocked
from swath.sequences import sequence_set
from swath.storage.common import ROOT_KEY
from swath.storage.creation import creating, found_at, reopen_or_create
from swath.storage.results import LAYOUT, VERSION, SearchStore
from tests.helpers import PROTEIN

QUERIES = sequence_set(["MKTAYIAK", "WWKK"], PROTEIN.alphabet)


def create(path: str, inputs: dict, overwrite: bool = False) -> None:
    reopen_or_create(path, LAYOUT, VERSION, inputs, lambda replace: SearchStore.create(
        path, QUERIES, top_k=2, query_block=1, replace=replace, inputs=inputs),
        what="search", differs="other inputs", overwrite=overwrite)


def test_nothing_or_an_empty_directory_is_written(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for name in ("new.zarr", "empty"):
        create(str(tmp_path / name), {"a": 1})
        assert SearchStore.open(tmp_path / name, complete=False).attrs["created"] is True
    assert sorted(os.listdir(tmp_path)) == ["empty", "new.zarr"]


def test_the_same_job_is_reopened_and_another_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "r.zarr")
    create(path, {"a": 1})
    SearchStore.open(path, mode="r+", complete=False).write_unit(0, _hits())
    create(path, {"a": 1})                                   # reopened: the unit stays
    assert SearchStore.open(path, complete=False).done().tolist() == [True, False]
    with pytest.raises(OutputExists, match="holds another search"):
        create(path, {"a": 2})
    create(path, {"a": 2}, overwrite=True)                   # a swath store: replaced
    assert SearchStore.open(path, complete=False).done().tolist() == [False, False]
    assert sorted(os.listdir(tmp_path)) == ["r.zarr"]


def _hits() -> dict[str, np.ndarray]:
    from swath.storage.results import empty_hits

    return empty_hits(1, 2)


def test_anything_else_is_refused_even_with_overwrite(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("keep")
    (tmp_path / "file.txt").write_text("keep")
    zarr.open_group(str(tmp_path / "foreign.zarr"), mode="w", zarr_format=3)
    for name in ("notes", "file.txt", "foreign.zarr"):
        for overwrite in (False, True):
            with pytest.raises(OutputExists, match="is not a swath store; swath will not"):
                create(str(tmp_path / name), {"a": 1}, overwrite=overwrite)
    monkeypatch.chdir(tmp_path / "notes")
    with pytest.raises(OutputExists, match="is the current directory"):
        create(".", {"a": 1})
    with pytest.raises(OutputExists, match="is the current directory"):
        create(str(tmp_path), {"a": 1})
    assert (tmp_path / "notes" / "a.txt").read_text() == "keep"
    assert (tmp_path / "file.txt").read_text() == "keep"


def test_a_failed_creation_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "r.zarr"
    with pytest.raises(KeyboardInterrupt), creating(path, LAYOUT, VERSION, {}) as group:
        group.create_array("x", shape=(2,), dtype=np.int8)
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []
    assert found_at(path) is None


def test_a_store_whose_creation_was_interrupted_in_place_is_created_again() -> None:
    # through fsspec a store is built in place: one killed while being created keeps
    # "created": false, which readers refuse and the next run replaces
    url = f"memory://swath-test-{uuid.uuid4().hex}/r.zarr"
    zarr.open_group(url, mode="w", zarr_format=3, attributes={ROOT_KEY: {
        "layout": LAYOUT, "version": VERSION, "created": False, "complete": False}})
    with pytest.raises(StoreIncomplete, match="creation was interrupted"):
        SearchStore.open(url, complete=False)
    create(url, {"a": 1})
    assert SearchStore.open(url, complete=False).attrs["inputs"] == {"a": 1}


def test_a_file_that_appears_while_building_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "r.zarr"
    with pytest.raises(OutputExists, match="appeared while swath created a store there"), \
            creating(path, LAYOUT, VERSION, {}):
        path.write_text("the user's")
    assert path.read_text() == "the user's" and os.listdir(tmp_path) == ["r.zarr"]


def test_an_in_place_creation_holds_the_lock() -> None:
    # through fsspec a second job must not take a store being built for one in progress
    url = f"memory://swath-test-{uuid.uuid4().hex}/r.zarr"
    with creating(url, LAYOUT, VERSION, {"inputs": {"a": 1}}), \
            pytest.raises(StoreLocked, match="is being written by pid"):
        create(url, {"a": 1})
    create(url, {"a": 1})      # the first one finished: reopened, not replaced


def test_a_store_replaced_under_a_job_is_not_written(tmp_path: Path) -> None:
    path = str(tmp_path / "r.zarr")
    create(path, {"a": 1})
    first = SearchStore.open(path, complete=False)
    create(path, {"a": 2}, overwrite=True)          # another job replaces it
    with pytest.raises(InputChanged, match="was replaced by another job"):
        SearchStore.open(path, mode="r+", complete=False).check_id(first.attrs["id"])


def test_a_refused_jobs_store_is_discarded_only_while_it_is_still_that_jobs(tmp_path):
    """``discard`` removes the store its job made, never what stands at the path by the
    time it runs: another store, or anything that is no swath store."""
    from swath.storage.creation import discard

    path = tmp_path / "r.zarr"
    zarr.open_group(str(path), mode="w", zarr_format=3).attrs["swath"] = {"id": "other"}
    discard(str(path), "mine")
    assert path.exists()
    (tmp_path / "file.txt").write_text("a user's file")
    discard(str(tmp_path / "file.txt"), "mine")
    assert (tmp_path / "file.txt").read_text() == "a user's file"
    discard(str(path), "other")
    assert not path.exists()


def test_a_database_is_replaced_only_by_a_database(tmp_path: Path) -> None:
    """``--overwrite`` replaces a result store by another job's, never a database by a
    result (the database is the user's input to searches: one line names it); the
    message names the store kind with its article."""
    import swath

    fasta = tmp_path / "db.fa"
    fasta.write_text(">a\nMKVLA\n>b\nMKVLW\n")
    swath.makedb(str(fasta), str(tmp_path / "db.swdb"))
    with pytest.raises(OutputExists, match=r"db.swdb is a swath database, which only a "
                                           r"database replaces, not an allpairs store"):
        swath.allpairs(str(fasta), store=str(tmp_path / "db.swdb"), overwrite=True,
                       device="cpu")
    assert found_at(tmp_path / "db.swdb")["layout"] == "database"
    swath.align("MKV", "MKV", store=str(tmp_path / "a.zarr"), device="cpu")
    with pytest.raises(OutputExists, match=r"a.zarr is a swath 'alignment' store, not an "
                                           r"allpairs store \(choose another"):
        swath.allpairs(str(fasta), store=str(tmp_path / "a.zarr"), device="cpu")


def test_an_error_names_the_users_path_not_the_hidden_sibling(tmp_path: Path,
                                                              monkeypatch) -> None:
    """A directory swath may not write into (here the error a read-only one raises, for
    root is let write anywhere): the error names the store's path, not the hidden sibling
    swath builds it in, and nothing is left."""
    def refused(store, **_):
        raise PermissionError(13, "Permission denied", os.path.join(str(store), "zarr.json"))

    monkeypatch.setattr(zarr, "open_group", refused)
    with pytest.raises(PermissionError) as raised, creating(str(tmp_path / "x.zarr"),
                                                            LAYOUT, VERSION, {}):
        pass
    assert raised.value.filename == str(tmp_path / "x.zarr")
    assert os.listdir(tmp_path) == []
