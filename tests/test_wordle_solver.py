"""Tests for textgyms.envs.wordle.solver: pattern matrix, entropy play, random guesses."""

from __future__ import annotations

import random

import numpy as np
import pytest

from textgyms.envs.wordle import solver, words
from textgyms.envs.wordle.rules import feedback, hard_mode_violation, is_consistent, pattern_code

TRICKY = [
    "speed",
    "abide",
    "eerie",
    "sweet",
    "llama",
    "hello",
    "sassy",
    "bless",
    "geese",
    "these",
    "mamma",
    "maxim",
    "array",
    "rarer",
    "robot",
    "broth",
    "crane",
    "aaaaa",
]


def _sample(length: int, n: int, seed: int) -> list[str]:
    """A seeded sample of ``n`` common answers."""
    pool = words.answers(length)
    rng = np.random.default_rng(seed)
    return [pool[i] for i in rng.choice(len(pool), size=n, replace=False)]


def test_patterns_match_rules_on_tricky_words() -> None:
    matrix = solver.patterns(TRICKY, TRICKY)
    for i, guess in enumerate(TRICKY):
        for j, secret in enumerate(TRICKY):
            assert matrix[i, j] == pattern_code(feedback(guess, secret)), (guess, secret)


@pytest.mark.parametrize("length", words.LENGTHS)
def test_pattern_matrix_rows_match_rules(length: int) -> None:
    matrix = solver.pattern_matrix(length, "common")
    guess_list, answers = words.guess_list(length), words.answers(length)
    assert matrix.shape == (len(guess_list), len(answers))
    assert matrix.dtype == (np.uint8 if length <= 5 else np.uint16)
    assert not matrix.flags.writeable  # shared cache: nobody may modify it
    rng = np.random.default_rng(length)
    # Whole rows for guesses with repeated letters (the hard part) and for random ones.
    repeats = [i for i, w in enumerate(guess_list) if len(set(w)) < length]
    rows = list(rng.choice(repeats, 8, replace=False)) + list(rng.choice(len(guess_list), 8))
    for row in rows:
        expected = [pattern_code(feedback(guess_list[row], a)) for a in answers]
        assert matrix[row].tolist() == expected, guess_list[row]


def test_pattern_matrix_is_cached() -> None:
    assert solver.pattern_matrix(5, "common") is solver.pattern_matrix(5, "common")


def test_full_common_vocabulary_is_solved_honestly() -> None:
    """Every length-5 answer within 6 guesses from feedback alone; mean <= 3.7."""
    counts = []
    guesses = words.guesses(5)
    for secret in words.answers(5, "common"):
        plan = solver.solve(secret, oracle=False)
        assert plan[-1] == secret and len(plan) <= 6, (secret, plan)
        assert set(plan) <= guesses
        counts.append(len(plan))
    assert np.mean(counts) <= 3.7


def test_solve_plays_from_feedback_only() -> None:
    # Each guess but the oracle step is the solver's choice for the history so far.
    for secret in _sample(5, 20, seed=1):
        plan = solver.solve(secret)
        history = []
        for guess in plan:
            assert guess == solver.next_guess(history)
            history.append((guess, feedback(guess, secret)))


@pytest.mark.parametrize("length", words.LENGTHS)
@pytest.mark.parametrize("hard_mode", [False, True])
def test_sampled_games_are_won_within_six_and_legal(length: int, hard_mode: bool) -> None:
    for secret in _sample(length, 120, seed=length):
        plan = solver.solve(secret, length=length, hard_mode=hard_mode)
        assert plan[-1] == secret and len(plan) <= 6
        history: list[tuple[str, tuple[int, ...]]] = []
        for guess in plan:
            assert guess in words.guesses(length)
            if hard_mode:
                assert hard_mode_violation(guess, history) is None, (secret, plan)
            history.append((guess, feedback(guess, secret)))


def test_oracle_only_on_the_last_guess() -> None:
    opening = solver.opening_guess(5)
    secret = next(w for w in words.answers(5) if w != opening)
    assert solver.solve(secret, max_guesses=1) == [secret]  # oracle step
    assert solver.solve(secret, max_guesses=1, oracle=False) == [opening]
    # Common length-5 games are won honestly, so the oracle never changes them.
    assert solver.solve(secret) == solver.solve(secret, oracle=False)


def test_next_guess_is_deterministic_and_prefers_candidates() -> None:
    opening = solver.opening_guess(5)
    assert solver.next_guess([]) == opening
    assert solver.next_guess([], hard_mode=True) == opening
    solver._choose.cache_clear()  # recomputing must give the same answers
    assert solver.opening_guess(5) == opening
    history = [("crane", feedback("crane", "grade"))]
    candidates = sorted(w for w in words.answers(5) if is_consistent(w, history))
    guess = solver.next_guess(history)
    assert guess == solver.next_guess(list(history))
    if len(candidates) <= 2:
        assert guess == candidates[0]
    two = [("irate", feedback("irate", "grate")), ("crate", feedback("crate", "grate"))]
    left = sorted(w for w in words.answers(5) if is_consistent(w, two))
    assert len(left) <= 2 and solver.next_guess(two) == left[0]


def test_next_guess_with_inconsistent_history_raises() -> None:
    with pytest.raises(ValueError):
        solver.next_guess([("crane", (2, 2, 2, 2, 1))])


def test_solve_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        solver.solve("zzzzz")  # not an answer
    with pytest.raises(ValueError):
        solver.solve("crane", length=8)
    with pytest.raises(ValueError):
        solver.next_guess([], vocab="nope")


def test_full_vocab_secret_outside_common_is_solved() -> None:
    secret = next(w for w in words.guess_list(4) if w not in set(words.answers(4)))
    plan = solver.solve(secret, length=4, vocab="full")
    assert plan[-1] == secret and len(plan) <= 6


def test_random_guess_is_valid_and_seeded() -> None:
    def draws(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [solver.random_guess(rng, [], length=5) for _ in range(50)]

    first = draws(7)
    assert first == draws(7)
    assert first != draws(8)
    assert set(first) <= words.guesses(5)
    assert len(set(first)) > 40  # spread over the list, not stuck on a few words


def test_random_guess_hard_mode_is_legal() -> None:
    rng = np.random.default_rng(3)
    history = [("crane", feedback("crane", "stare"))]
    picks = {solver.random_guess(rng, history, length=5, hard_mode=True) for _ in range(100)}
    assert all(hard_mode_violation(w, history) is None for w in picks)
    assert all(w in words.guesses(5) for w in picks)
    assert len(picks) > 10


def test_no_global_random_state_is_touched() -> None:
    np_state, py_state = np.random.get_state(), random.getstate()
    rng = np.random.default_rng(0)
    solver.random_guess(rng, [], length=6)
    solver.random_guess(rng, [("planet", feedback("planet", "plenty"))], length=6, hard_mode=True)
    solver.solve(words.answers(6)[10], length=6, hard_mode=True)
    after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(np_state, after))
    assert random.getstate() == py_state


def test_next_guess_accepts_unlisted_guesses_and_rejects_bad_ones() -> None:
    history = [("zzzzz", (0, 0, 0, 0, 0))]  # not a word, but its feedback still informs
    guess = solver.next_guess(history)
    assert guess in words.guesses(5)
    # Only "abuzz" and "frizz" end in two Zs: the alphabetically first candidate wins.
    assert solver.next_guess([("zzzzz", (0, 0, 0, 2, 2))]) == "abuzz"
    with pytest.raises(ValueError):
        solver.next_guess([("CRANE", (0, 0, 0, 0, 0))])
    with pytest.raises(ValueError):
        solver.next_guess([("crane", (0, 0, 0))])
