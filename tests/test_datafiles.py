"""textgyms.datafiles.checked_bytes: a shipped file is read only when its sha256 matches."""

from __future__ import annotations

import hashlib

import pytest

from textgyms.datafiles import SUMS_FILE, checked_bytes
from textgyms.errors import DataError


def _folder(tmp_path, data: bytes, recorded: bytes | None = None):
    (tmp_path / "f.txt").write_bytes(data)
    digest = hashlib.sha256(data if recorded is None else recorded).hexdigest()
    (tmp_path / SUMS_FILE).write_text(f"{digest}  f.txt\n")
    return tmp_path


def test_a_matching_file_is_read(tmp_path):
    assert checked_bytes(_folder(tmp_path, b"abc"), "f.txt", "test data") == b"abc"


def test_an_edited_file_raises_and_says_how_to_rebuild(tmp_path):
    folder = _folder(tmp_path, b"abd", recorded=b"abc")
    with pytest.raises(DataError, match=r"f.txt does not match .*; run make-it"):
        checked_bytes(folder, "f.txt", "test data", "run make-it")


def test_a_file_missing_or_not_listed_raises(tmp_path):
    folder = _folder(tmp_path, b"abc")
    with pytest.raises(DataError, match="cannot read the test data g.txt"):
        checked_bytes(folder, "g.txt", "test data")
    (folder / "g.txt").write_bytes(b"abc")  # present, but SHA256SUMS has no line for it
    with pytest.raises(DataError, match="g.txt does not match"):
        checked_bytes(folder, "g.txt", "test data")
