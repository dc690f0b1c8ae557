"""Tests for textgyms.envs.wordle.words: the shipped lists, their shape and integrity."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from textgyms.datafiles import SUMS_FILE
from textgyms.envs.wordle import words
from textgyms.errors import DataError

DATA_FILES = [f"{kind}-{n}.txt" for kind in ("answers", "guesses") for n in words.LENGTHS]


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """Make the test read the files anew, and leave no poisoned cache behind."""
    words.clear_cache()
    yield
    words.clear_cache()


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> Path:
    """A private copy of the data directory that ``words`` reads instead of the real one."""
    copy = tmp_path / "data"
    shutil.copytree(Path(str(words._data_dir())), copy)
    monkeypatch.setattr(words, "_data_dir", lambda: copy)
    return copy


@pytest.mark.parametrize(
    "length, min_answers, min_guesses",
    [(4, 1000, 4000), (5, 2000, 10000), (6, 1000, 8000), (7, 1000, 8000)],
)
def test_sizes(length: int, min_answers: int, min_guesses: int) -> None:
    assert len(words.answers(length)) >= min_answers
    assert len(words.guesses(length)) >= min_guesses
    assert len(words.answers(length, "easy")) == words.EASY_SIZE


@pytest.mark.parametrize("length", words.LENGTHS)
def test_shape_of_every_word(length: int) -> None:
    pattern = re.compile(rf"[a-z]{{{length}}}")
    for word in words.guess_list(length):
        assert pattern.fullmatch(word), word
    common = words.answers(length)
    assert len(set(common)) == len(common)  # no duplicates
    assert set(common) <= words.guesses(length)


@pytest.mark.parametrize("length", words.LENGTHS)
def test_vocab_presets(length: int) -> None:
    common = words.answers(length, "common")
    assert words.answers(length) == common  # "common" is the default
    assert words.answers(length, "easy") == common[:500]
    assert words.answers(length, "full") == words.guess_list(length)
    assert list(words.guess_list(length)) == sorted(words.guesses(length))
    assert isinstance(words.guesses(length), frozenset)


def test_answers_are_frequency_ordered_common_words() -> None:
    easy = words.answers(5, "easy")
    # Everyday words open the list; rare dictionary words do not make the easy cut.
    assert {"about", "world", "house", "money"} <= set(easy[:200])
    assert not {"aahed", "xylyl", "zymic"} & set(easy)


def test_answers_avoid_plain_plurals_and_past_tenses() -> None:
    # An answer is never another answer plus "s", "es", "d" (bake-d) or "ed".
    for length in (5, 6, 7):
        shorter = set(words.answers(length - 1))
        assert not [w for w in words.answers(length) if w[:-1] in shorter and w[-1] == "s"]
        assert not [w for w in words.answers(length) if w[:-1] in shorter and w[-2:] == "ed"]
    for length in (6, 7):
        shorter = set(words.answers(length - 2))
        assert not [
            w for w in words.answers(length) if w[:-2] in shorter and w[-2:] in ("ed", "es")
        ]


def test_guesses_accept_obscure_real_words() -> None:
    assert {"aahed", "crane", "color", "xylem"} <= words.guesses(5)
    assert {"colour", "colors"} <= words.guesses(6)  # British spellings and plurals are valid
    assert not {"qzxjv", "abcde", "crane"[::-1]} & words.guesses(5)


@pytest.mark.parametrize("bad_length", [3, 8, 0, True, "5"])
def test_invalid_length_names_choices(bad_length: object) -> None:
    with pytest.raises(ValueError, match=r"\(4, 5, 6, 7\)"):
        words.answers(bad_length)  # type: ignore[arg-type]


def test_invalid_vocab_names_choices() -> None:
    with pytest.raises(ValueError, match="common.*easy.*full"):
        words.answers(5, "hard")


def test_data_sha256_matches_files() -> None:
    sums = words.data_sha256()
    assert set(DATA_FILES) <= set(sums)
    data_dir = Path(str(words._data_dir()))
    for name, digest in sums.items():
        assert hashlib.sha256((data_dir / name).read_bytes()).hexdigest() == digest


def test_corrupt_file_raises_data_error(data_copy: Path) -> None:
    path = data_copy / "answers-5.txt"
    path.write_text(path.read_text().replace("about", "abort", 1))
    with pytest.raises(DataError, match="answers-5.txt"):
        words.answers(5)
    assert len(words.answers(4)) >= 1000  # untouched files still load
    with pytest.raises(DataError):
        words.data_sha256()


def test_missing_file_or_checksums_raise_data_error(data_copy: Path) -> None:
    (data_copy / "guesses-6.txt").unlink()
    with pytest.raises(DataError, match="guesses-6.txt"):
        words.guesses(6)
    (data_copy / SUMS_FILE).unlink()
    words.clear_cache()
    with pytest.raises(DataError, match=SUMS_FILE):
        words.answers(5)


def test_well_formed_copy_loads_like_the_original(data_copy: Path) -> None:
    assert words.answers(5)[:3] == ("about", "their", "there")
    assert words._data_dir() == data_copy
