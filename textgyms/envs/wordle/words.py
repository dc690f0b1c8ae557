"""The Wordle word lists: lazily loaded, sha256-verified, cached per process.

The lists live in ``data/`` next to this module (built by ``scripts/build_wordlists.py``;
sources and licences in ``data/PROVENANCE.md``). Every file is checked against
``data/SHA256SUMS`` the first time it is read, so a corrupted or hand-edited list fails
loudly with :class:`textgyms.errors.DataError` instead of silently changing the game.

Vocabularies (the possible secrets):

* ``"easy"``: the 500 most frequent answers;
* ``"common"``: every curated answer (ordered by descending frequency);
* ``"full"``: every valid guess is also a possible secret.
"""

from __future__ import annotations

import hashlib
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from textgyms.datafiles import checked_bytes, recorded_sums
from textgyms.errors import ConfigError, DataError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

VOCABS: tuple[str, ...] = ("common", "easy", "full")
LENGTHS: tuple[int, ...] = (4, 5, 6, 7)
EASY_SIZE = 500


def _data_dir() -> Traversable:
    """The directory holding the word lists (a seam the tests redirect)."""
    return resources.files(__package__) / "data"


def check_length(length: int) -> int:
    """Return ``length`` if it is a supported word length, else raise ConfigError."""
    # bool is an int subclass; True must not silently mean length 1.
    if isinstance(length, bool) or length not in LENGTHS:
        raise ConfigError(f"length must be one of {LENGTHS}, got {length!r}")
    return length


def check_vocab(vocab: str) -> str:
    """Return ``vocab`` if it is a known vocabulary name, else raise ConfigError."""
    if vocab not in VOCABS:
        raise ConfigError(f"vocab must be one of {VOCABS}, got {vocab!r}")
    return vocab


@lru_cache(maxsize=1)
def _expected_sums() -> dict[str, str]:
    """File name -> sha256 hex digest, as recorded in SHA256SUMS."""
    return recorded_sums(_data_dir())


@cache
def _verified_bytes(name: str) -> bytes:
    """The contents of data file ``name`` after checking its sha256."""
    return checked_bytes(_data_dir(), name, "Wordle data file", "reinstall textgyms")


def _read_words(name: str, length: int) -> tuple[str, ...]:
    """The words of a verified list, in file order, checked for shape."""
    found = tuple(_verified_bytes(name).decode("ascii").split())
    bad = [
        w for w in found if len(w) != length or not (w.isascii() and w.isalpha() and w.islower())
    ]
    if bad:  # a checksum only proves the file is the shipped one, not that it is sane
        raise DataError(f"Wordle data file {name} has malformed words, e.g. {bad[0]!r}")
    return found


@cache
def _common(length: int) -> tuple[str, ...]:
    """All curated answers of ``length``, most frequent first."""
    return _read_words(f"answers-{length}.txt", length)


@cache
def guess_list(length: int = 5) -> tuple[str, ...]:
    """Every valid guess of ``length`` letters, sorted (a stable order for indexing)."""
    check_length(length)
    return tuple(sorted(_read_words(f"guesses-{length}.txt", length)))


@cache
def guesses(length: int = 5) -> frozenset[str]:
    """The set of valid guesses of ``length`` letters (includes every answer)."""
    return frozenset(guess_list(length))


def answers(length: int = 5, vocab: str = "common") -> tuple[str, ...]:
    """The possible secrets for ``length`` and ``vocab`` (see the module docstring).

    "common" and "easy" are ordered by descending word frequency; "full" is sorted.
    """
    check_length(length)
    check_vocab(vocab)
    if vocab == "full":
        return guess_list(length)
    common = _common(length)
    return common[:EASY_SIZE] if vocab == "easy" else common


def data_sha256() -> dict[str, str]:
    """sha256 of every shipped Wordle data file, by file name (each one verified)."""
    return {name: hashlib.sha256(_verified_bytes(name)).hexdigest() for name in _expected_sums()}


def clear_cache() -> None:
    """Forget every loaded list, so the next call re-reads and re-verifies the files."""
    for cached in (_expected_sums, _verified_bytes, _common, guess_list, guesses):
        cached.cache_clear()
