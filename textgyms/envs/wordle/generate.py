"""Wordle tasks: the secret word and the rules of the game, drawn from a seeded generator."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from textgyms.core import Task, check_choice
from textgyms.envs.wordle import words

SPLITS = ("train", "test", "all")
TEST_FRACTION = 5  # one answer in 5 is held out for evaluation


@dataclass(frozen=True)
class WordleTask(Task):
    """One game: the secret word and the variant being played."""

    secret: str
    length: int = 5
    max_guesses: int = 6
    hard_mode: bool = False
    vocab: str = "common"


def in_test_split(word: str) -> bool:
    """True if ``word`` belongs to the held-out test split.

    The split depends on the word alone (a hash), so it is the same for every vocab preset,
    process and version of the word lists that contains the word.
    """
    return int(hashlib.sha256(word.encode()).hexdigest(), 16) % TEST_FRACTION == 0


@lru_cache(maxsize=64)
def answer_pool(length: int, vocab: str, split: str) -> tuple[str, ...]:
    """The possible secrets of a variant and split, in the word list's order."""
    check_choice("split", split, SPLITS)
    pool = words.answers(length, vocab)
    if split == "all":
        return pool
    want_test = split == "test"
    return tuple(w for w in pool if in_test_split(w) == want_test)


def generate(
    rng: np.random.Generator,
    *,
    length: int = 5,
    vocab: str = "common",
    split: str = "train",
    max_guesses: int = 6,
    hard_mode: bool = False,
) -> WordleTask:
    """Draw a secret uniformly from the variant's answer pool using only ``rng``."""
    pool = answer_pool(length, vocab, split)  # positional: an lru_cache with kwargs is slower
    return make_task(draw_secret(rng, pool), length, max_guesses, hard_mode, vocab)


def draw_secret(rng: np.random.Generator, pool: tuple[str, ...]) -> str:
    """A word of ``pool`` drawn uniformly with one number of ``rng``."""
    return pool[draw_index(rng, len(pool))]


def draw_index(rng: np.random.Generator, n: int) -> int:
    """An index in ``range(n)`` drawn uniformly with one ``rng.random()``: ``floor(U * n)``.

    A 53-bit uniform U is uniform to within 2**-40 for these pool sizes, and three times
    cheaper than ``rng.integers``, which matters in a reset of a few microseconds. On numpy's
    PCG64 (what every reset seeds), U is computed from the bit generator's next 64-bit word as
    numpy's ``random()`` does, at half the cost of the Generator call; :data:`RAW_UNIFORM` says
    whether that was checked to give the same numbers and leave the same state here.
    """
    if RAW_UNIFORM and type(rng) is _GENERATOR:
        bits = rng.bit_generator
        if type(bits) is _PCG64:
            return int((bits.random_raw() >> 11) * _TO_UNIT * n)
    return int(rng.random() * n)


_GENERATOR, _PCG64 = np.random.Generator, np.random.PCG64
_TO_UNIT = 1.0 / (1 << 53)


def _raw_uniform_matches() -> bool:
    """Whether ``(PCG64.random_raw() >> 11) * 2**-53`` is ``Generator.random()`` in this numpy
    (its PCG64 double is the top 53 bits of the next word): the same numbers and the same
    state afterwards, over a few seeds and draws, checked once at import."""
    try:
        for seed in (0, 1, 2026, 2**64 + 12345):
            ref, raw = _GENERATOR(_PCG64(seed)), _PCG64(seed)
            for _ in range(16):
                if ref.random() != (raw.random_raw() >> 11) * _TO_UNIT:
                    return False
            if ref.bit_generator.state != raw.state:
                return False
    except Exception:  # a numpy without random_raw: use Generator.random
        return False
    return True


#: True where :func:`draw_index` may draw from PCG64's raw words (see there).
RAW_UNIFORM = _raw_uniform_matches()


@lru_cache(maxsize=1 << 15)
def make_task(
    secret: str, length: int, max_guesses: int, hard_mode: bool, vocab: str
) -> WordleTask:
    """The task object for these fields, shared between resets: tasks are immutable, and a
    shared one keeps its cached ``task_id``, so a reset on a secret seen before builds nothing."""
    # What the frozen dataclass's __init__ does (it sets each field through
    # object.__setattr__, twice the cost), in the fields' order, which task_id hashes;
    # tests/test_wordle_draw.py checks the two agree.
    task = _new(WordleTask)
    task.__dict__.update(
        secret=secret, length=length, max_guesses=max_guesses, hard_mode=hard_mode, vocab=vocab)
    return task


_new = object.__new__
