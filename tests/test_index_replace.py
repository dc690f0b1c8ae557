"""Search indexes are immutable once built: readers never follow the disk, and a corrupt index
is replaced by renaming a new one into place, never by rewriting files a reader maps.

(A tantivy reader used to watch ``meta.json`` and reload memory-mapped segments rewritten in
place, which killed the process with SIGBUS, and with it a pytest worker.) The 200-round loop of
the same checks is ``scripts/index_replace_stress.py``.
"""

from __future__ import annotations

import time

import pytest
from index_replace import (
    answers,
    corrupt_a_copy,
    corrupt_by_rename,
    docs,
    replace_under_live_reader,
)

from textgyms.envs.search.backends import Doc, index_path, open_backend, replace_atomic
from textgyms.errors import IndexCorruptError

BACKENDS = ["tantivy", "fts5"]


@pytest.mark.parametrize("name", BACKENDS)
def test_a_corrupt_copy_raises_a_named_error_that_says_how_to_recover(tmp_path, name):
    message = corrupt_a_copy(name, tmp_path)
    assert str(tmp_path / "copy") in message
    assert "--repair" in message and "remove" in message


@pytest.mark.parametrize("name", BACKENDS)
def test_a_live_reader_survives_repairs_by_another_process(tmp_path, name):
    replies = replace_under_live_reader(name, tmp_path, rounds=3)
    assert replies[:4] == [r for r in replies[:4] if r.startswith("ok ")], replies
    assert replies[-1] == "exit 0", replies


@pytest.mark.parametrize("name", BACKENDS)
def test_repair_swaps_in_a_sound_index_and_leaves_a_sound_one_alone(tmp_path, name):
    path = index_path(tmp_path, "k", name)
    first = open_backend(name, docs(), path)
    expected = answers(first)
    first.close()
    inode = (path / "COMPLETE").stat().st_ino
    open_backend(name, docs(), path, repair=True).close()
    assert (path / "COMPLETE").stat().st_ino == inode  # sound: not rebuilt
    corrupt_by_rename(name, path)
    with pytest.raises(IndexCorruptError, match="--repair"):
        open_backend(name, docs(), path)
    repaired = open_backend(name, docs(), path, repair=True)
    assert answers(repaired) == expected
    assert (path / "COMPLETE").stat().st_ino != inode
    # nothing left beside the index: no temporary or set-aside directories
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_failed_rebuild_keeps_the_old_index_and_leaves_nothing_behind(tmp_path):
    path = index_path(tmp_path, "k", "fts5")
    open_backend("fts5", docs(), path).close()
    corrupt_by_rename("fts5", path)

    def broken_build(tmp):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_atomic(path, broken_build, lambda: False)
    assert (path / "COMPLETE").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_tantivy_reader_does_not_follow_its_directory(tmp_path):
    """A reader keeps the index it opened even when a different one replaces it on disk: it
    no longer watches meta.json (the watcher polls about twice a second, hence the wait)."""
    path = index_path(tmp_path, "k", "tantivy")
    reader = open_backend("tantivy", docs(), path)
    before = answers(reader)
    other = [Doc(i, "wiki.example", f"U{i}", f"word{299 - i} topic{i % 5}") for i in range(300)]
    replace_atomic(path, lambda tmp: type(reader).build(tmp, other), lambda: False)
    time.sleep(1.5)
    assert answers(reader) == before
    assert answers(open_backend("tantivy", None, path)) != before
