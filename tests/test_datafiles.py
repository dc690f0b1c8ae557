"""textgyms.datafiles: a data file is read only when its sha256 matches the one recorded in
the SHA256SUMS beside it, and every way that can fail says which file and what to do."""

from __future__ import annotations

import hashlib

import pytest

from textgyms.datafiles import SUMS_FILE, checked_bytes, checked_digest, recorded_sums
from textgyms.envs.code import tasks as code_tasks
from textgyms.envs.search import corpora
from textgyms.envs.wordle import words
from textgyms.errors import DataError


def _folder(tmp_path, data: bytes, recorded: bytes | None = None):
    (tmp_path / "f.txt").write_bytes(data)
    digest = hashlib.sha256(data if recorded is None else recorded).hexdigest()
    (tmp_path / SUMS_FILE).write_text(f"{digest}  f.txt\n")
    return tmp_path


def test_a_matching_file_is_read(tmp_path):
    assert checked_bytes(_folder(tmp_path, b"abc"), "f.txt", "test data") == b"abc"
    assert checked_digest(b"abc", tmp_path, "f.txt", "x") == hashlib.sha256(b"abc").hexdigest()


def test_an_edited_file_raises_and_says_how_to_rebuild(tmp_path):
    folder = _folder(tmp_path, b"abd", recorded=b"abc")
    with pytest.raises(DataError, match=r"f.txt does not match .*expected ba7816bf.*; run make"):
        checked_bytes(folder, "f.txt", "test data", "run make-it")


def test_a_file_missing_or_not_listed_raises(tmp_path):
    folder = _folder(tmp_path, b"abc")
    with pytest.raises(DataError, match="cannot read the test data g.txt"):
        checked_bytes(folder, "g.txt", "test data")
    (folder / "g.txt").write_bytes(b"abc")  # present, but SHA256SUMS has no line for it
    with pytest.raises(DataError, match="test data g.txt is not listed in .*SHA256SUMS"):
        checked_bytes(folder, "g.txt", "test data")


def test_sums_are_read_strictly(tmp_path):
    folder = _folder(tmp_path, b"abc")
    assert recorded_sums(folder) == {"f.txt": hashlib.sha256(b"abc").hexdigest()}
    (folder / SUMS_FILE).write_text("abc f.txt\n")  # not a sha256, one space
    with pytest.raises(DataError, match="malformed line .*abc f.txt"):
        recorded_sums(folder)
    (folder / SUMS_FILE).unlink()
    with pytest.raises(DataError, match=f"cannot read the checksum file .*{SUMS_FILE}"):
        checked_bytes(folder, "f.txt", "test data")


@pytest.mark.parametrize("family", ["wordle", "search", "code"])
def test_every_family_checks_through_it(family, tmp_path, monkeypatch):
    """Wordle's lists, Search's pages and Code's pinned upstream files all go through this
    one check: an edited file under each family's own data folder raises."""
    folder = _folder(tmp_path, b"edited", recorded=b"shipped")
    with pytest.raises(DataError, match="f.txt does not match its recorded sha256"):
        if family == "wordle":
            monkeypatch.setattr(words, "_data_dir", lambda: folder)
            words.clear_cache()
            try:
                words._verified_bytes("f.txt")
            finally:
                monkeypatch.undo()
                words.clear_cache()
        elif family == "search":
            monkeypatch.setattr(corpora, "DATA", folder)
            corpora.check_data.cache_clear()
            try:
                corpora.check_data()
            finally:
                monkeypatch.undo()
                corpora.check_data.cache_clear()
        else:
            monkeypatch.setattr(code_tasks, "DATA_DIR", folder)
            code_tasks.checked_sha256(folder / "f.txt", "f.txt")
