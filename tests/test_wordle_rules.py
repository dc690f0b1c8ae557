"""Tests for textgyms.envs.wordle.rules: feedback, pattern codes, consistency, hard mode."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from textgyms.envs.wordle.rules import (
    feedback,
    hard_mode_violation,
    is_consistent,
    pattern_code,
    pattern_from_code,
    required_letters,
)

# Hand-checked against the official two-pass rule (greens first, then yellows left to right).
KNOWN = [
    ("crane", "crane", (2, 2, 2, 2, 2)),
    ("speed", "abide", (0, 0, 1, 0, 1)),  # only the first E is yellow: abide has one E
    ("eerie", "sweet", (1, 1, 0, 0, 0)),  # two Es in sweet: the first two Es take them
    ("llama", "hello", (1, 1, 0, 0, 0)),
    ("hello", "llama", (0, 0, 1, 1, 0)),
    ("sassy", "bless", (1, 0, 0, 2, 0)),  # the green S is matched before any yellow S
    ("geese", "these", (0, 0, 2, 2, 2)),  # all of these's Es are green: the first E is gray
    ("abbey", "babes", (1, 1, 2, 2, 0)),
    ("robot", "broth", (1, 1, 1, 0, 1)),  # the second O finds no copy left
    ("array", "rarer", (1, 1, 2, 0, 0)),  # rarer: the green R at 3 is matched first
    ("mamma", "maxim", (2, 2, 1, 0, 0)),
    ("zzzz", "abcd", (0, 0, 0, 0)),
    ("fluffy", "buffet", (1, 0, 1, 2, 0, 0)),
    ("letters", "settler", (1, 2, 2, 2, 1, 1, 1)),
]

word5 = st.text(alphabet="abcde", min_size=5, max_size=5)  # few letters: many repeats


@pytest.mark.parametrize("guess, secret, expected", KNOWN)
def test_known_feedback(guess: str, secret: str, expected: tuple[int, ...]) -> None:
    assert feedback(guess, secret) == expected


def test_feedback_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError, match="length"):
        feedback("cranes", "crane")


@given(
    st.integers(min_value=1, max_value=8).flatmap(
        lambda n: st.tuples(*(st.text(alphabet="abcxyz", min_size=n, max_size=n),) * 2)
    )
)
def test_feedback_length_and_marks(pair: tuple[str, str]) -> None:
    guess, secret = pair
    fb = feedback(guess, secret)
    assert len(fb) == len(guess)
    assert set(fb) <= {0, 1, 2}


@given(word5, word5)
def test_all_green_iff_equal(guess: str, secret: str) -> None:
    assert (feedback(guess, secret) == (2,) * 5) == (guess == secret)


@given(word5, word5)
def test_greens_exactly_where_letters_match(guess: str, secret: str) -> None:
    fb = feedback(guess, secret)
    assert [m == 2 for m in fb] == [g == s for g, s in zip(guess, secret)]


@given(word5, word5)
def test_letter_marks_never_exceed_copies_in_secret(guess: str, secret: str) -> None:
    fb = feedback(guess, secret)
    marked = Counter(c for c, m in zip(guess, fb) if m)
    for letter in set(guess):
        assert marked[letter] <= Counter(secret)[letter]
        # The two-pass rule marks exactly as many copies as both words share.
        assert marked[letter] == min(Counter(guess)[letter], Counter(secret)[letter])


@given(word5, word5)
def test_yellows_go_to_the_leftmost_copies(guess: str, secret: str) -> None:
    fb = feedback(guess, secret)
    for letter in set(guess):
        non_green = [m for c, m in zip(guess, fb) if c == letter and m != 2]
        assert non_green == sorted(non_green, reverse=True)  # yellows (1) before grays (0)


@given(st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=8))
def test_pattern_code_round_trips(fb: list[int]) -> None:
    code = pattern_code(fb)
    assert 0 <= code < 3 ** len(fb)
    assert pattern_from_code(code, len(fb)) == tuple(fb)


def test_pattern_code_order_and_errors() -> None:
    assert pattern_code((0, 0, 0, 0, 0)) == 0
    assert pattern_code((2, 2, 2, 2, 2)) == 242
    assert pattern_code((1, 0, 0, 0, 0)) == 81  # first letter is the most significant digit
    with pytest.raises(ValueError):
        pattern_code((0, 3, 0))
    with pytest.raises(ValueError):
        pattern_from_code(243, 5)


@given(word5, word5, word5)
def test_secret_is_consistent_with_its_own_feedback(secret: str, g1: str, g2: str) -> None:
    history = [(g1, feedback(g1, secret)), (g2, feedback(g2, secret))]
    assert is_consistent(secret, history)


def test_is_consistent_rejects_words_with_other_feedback() -> None:
    history = [("crane", feedback("crane", "stare"))]
    assert is_consistent("stare", history)
    assert is_consistent("share", history)  # crane marks share exactly as it marks stare
    assert not is_consistent("slate", history)  # crane would show R gray for slate
    assert not is_consistent("crane", history)
    assert is_consistent("crane", [])


def test_hard_mode_greens_and_yellows() -> None:
    history = [("crane", feedback("crane", "stare"))]  # C_ R? A! N_ E!
    assert history[0][1] == (0, 1, 2, 0, 2)
    assert hard_mode_violation("stare", history) is None
    assert hard_mode_violation("scare", history) is None  # gray letters may be reused
    assert hard_mode_violation("slate", history) == "hard mode: guess must contain R"
    assert hard_mode_violation("stole", history) == "hard mode: letter 3 must be A"
    assert hard_mode_violation("xxxxx", history) == "hard mode: letter 3 must be A"
    assert hard_mode_violation("anything", []) is None


def test_hard_mode_counts_repeated_letters() -> None:
    history = [("eerie", feedback("eerie", "sweet"))]  # two yellow Es: the secret has 2+
    assert required_letters(history) == {"e": 2}
    assert hard_mode_violation("theme", history) is None
    assert (
        hard_mode_violation("those", history) == "hard mode: guess must contain E at least 2 times"
    )


def test_hard_mode_reports_first_green_position_across_history() -> None:
    history = [
        ("stare", feedback("stare", "spine")),  # S green at 1, E green at 5
        ("spike", feedback("spike", "spine")),  # P green at 2, I green at 3
    ]
    assert hard_mode_violation("spine", history) is None
    assert hard_mode_violation("snipe", history) == "hard mode: letter 2 must be P"
    assert hard_mode_violation("spiny", history) == "hard mode: letter 5 must be E"


@given(word5, st.lists(word5, max_size=4))
def test_the_secret_always_keeps_hard_mode(secret: str, guesses: list[str]) -> None:
    history = [(g, feedback(g, secret)) for g in guesses]
    assert hard_mode_violation(secret, history) is None
