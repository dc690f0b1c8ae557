"""``textgyms/Wordle-v0``: the real game of Wordle as a text environment.

The agent guesses a secret word of ``length`` letters (4-7, default 5) in at most
``max_guesses`` (default 6) guesses, with ``<guess>crane</guess>`` or the JSON tool call
``{"name": "guess", "arguments": {"word": "crane"}}``. After each guess it sees, for every
letter, G (right letter, right place), Y (in the word, elsewhere) or _ (not in the word, or no
more copies of it), computed with the two-pass rule for repeated letters.

A guess that is not in the word list, has the wrong length, or (with ``hard_mode=True``) ignores
a revealed hint is an invalid move: it is not counted as a guess, the agent is told why, and
after ``max_invalid`` (default 3) invalid actions the episode ends.

Kwargs: ``length`` (4-7), ``max_guesses`` (1-12), ``hard_mode``, ``vocab`` ("common", "easy",
"full"), ``split`` ("train" default, "test" held out for evaluation, "all"),
``scale_by_guesses`` (a solve in n guesses scores ``1 - (n - 1) / max_guesses``),
``reward_mode`` ("sparse" default, "dense": the growth of the partial-credit potential of
:mod:`textgyms.envs.wordle.verify` each guess, topped up to the final score at the end),
``max_invalid``, ``invalid_penalty``, ``max_turns`` (default ``max_guesses + max_invalid``).

Family info keys: ``guesses`` (valid guesses made so far) and ``guesses_left``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from textgyms.actions import Param, ParseError, ToolSpec, parse
from textgyms.core import TextEnv, Turn, Verdict, check_choice
from textgyms.envs.wordle import solver, words
from textgyms.envs.wordle.generate import (
    SPLITS,
    WordleTask,
    answer_pool,
    draw_secret,
    make_task,
)
from textgyms.envs.wordle.rules import GRAY, GREEN, YELLOW, hard_mode_violation
from textgyms.envs.wordle.verify import partial_credit, score_history

GUESS = ToolSpec("guess", "Guess the secret word.", (Param("word", "string", "your guess"),))
EXAMPLE = {4: "lion", 5: "crane", 6: "planet", 7: "example"}
_new_tuple = tuple.__new__


class WordleState:
    """The task and the valid guesses played so far, with their feedback.

    The board text and the letter sets are kept up to date by :meth:`add`, so rendering the
    board after a guess costs one format instead of a pass over the whole game. (A slotted
    class with a plain ``__init__``: one is built on every reset.)
    """

    __slots__ = ("task", "history", "grays", "found", "greens", "board", "_absent")

    def __init__(self, task: WordleTask) -> None:
        self.task = task
        self.history: list[tuple[str, tuple[int, ...]]] = []
        self.grays: set[str] = set()
        self.found: set[str] = set()  # letters marked G or Y by some guess
        self.greens: set[int] = set()  # positions marked G by some guess
        self.board = ""  # the lines so far, each ending in a newline
        # (len(grays), len(found)) and the absent letters' text for them: the sets only
        # grow, so equal sizes mean equal sets and the sorted text can be reused
        self._absent = (0, 0, "-")

    @property
    def guesses(self) -> list[str]:
        """The valid guesses played so far."""
        return [g for g, _ in self.history]

    def add(self, guess: str) -> str:
        """Record a valid guess; return the board (see :func:`render_board`)."""
        task = self.task
        fb, line, found, grays, greens = scored_line(guess, task.secret)
        history = self.history
        history.append((guess, fb))
        self.board = board = f"{self.board}{len(history)}. {line}\n"
        found_set, gray_set = self.found, self.grays
        found_set.update(found)
        if grays:
            gray_set.update(grays)
        if greens:
            self.greens.update(greens)
        # render_board, inlined: this runs on every valid guess
        n_gray, n_found, absent = self._absent
        if n_gray != len(gray_set) or n_found != len(found_set):
            absent = " ".join(sorted(gray_set - found_set)).upper() or "-"
            self._absent = (len(gray_set), len(found_set), absent)
        return f"{board}Letters not in the word: {absent}. Guesses left: " \
               f"{task.max_guesses - len(history)}."


def scored_line(guess: str, secret: str) -> tuple[tuple[int, ...], str, str, str, tuple[int, ...]]:
    """The feedback of a guess, its board line (without its number), its found letters, its
    gray letters and its green positions, in one pass (the two-pass rule of
    :func:`rules.feedback`, fused with the rendering because an env step needs all of them).

    The marks are built as a string ("GY__G"), and everything that depends on the marks
    alone comes from a table of the patterns seen so far (at most 3**7), so a step spends one
    loop over the letters. Not memoised per (guess, secret): in play most pairs are new, and
    a miss in a cache of pairs costs more than this loop saves on a hit.
    """
    spaced, repeats = _WORDS.get(guess) or _word(guess)
    spare = None  # the secret's letters left for yellows, listed once a letter may need them
    marks = found = grays = ""
    for g, s in zip(guess, secret):
        if g == s:
            marks += "G"
            found += g
        elif g not in secret:
            marks += "_"
            grays += g
        elif not repeats:  # a letter played once: no green or earlier yellow took its copies
            marks += "Y"
            found += g
        else:
            if spare is None:
                spare = [b for a, b in zip(guess, secret) if a != b]
            if g in spare:
                marks += "Y"
                found += g
                spare.remove(g)
            else:
                marks += "_"
                grays += g
    fb, text, greens = _PATTERNS.get(marks) or _pattern(marks)
    return fb, f"{spaced}   {text}", found, grays, greens


# marks ("GY__G") -> (feedback tuple, board text "G Y _ _ G", green positions)
_PATTERNS: dict[str, tuple[tuple[int, ...], str, tuple[int, ...]]] = {}
_MARK_VALUES = {"G": GREEN, "Y": YELLOW, "_": GRAY}


# guess -> (its letters upper-cased and spaced, "C R A N E"; whether a letter repeats);
# guesses come from the word list
_WORDS: dict[str, tuple[str, bool]] = {}


def _word(guess: str) -> tuple[str, bool]:
    if len(_WORDS) >= 1 << 16:  # more than any word list holds: bound it all the same
        _WORDS.clear()
    entry = _WORDS[guess] = (" ".join(guess.upper()), len(set(guess)) < len(guess))
    return entry


def _pattern(marks: str) -> tuple[tuple[int, ...], str, tuple[int, ...]]:
    greens = tuple(i for i, m in enumerate(marks) if m == "G")
    entry = (tuple(_MARK_VALUES[m] for m in marks), " ".join(marks), greens)
    _PATTERNS[marks] = entry
    return entry


class WordleEnv(TextEnv):
    """Wordle; see the module docstring for the rules, kwargs and info keys."""

    metric_parts = ("greens", "letters", "efficiency")

    tools = (GUESS,)
    conformance_variants = ({}, {"hard_mode": True, "length": 6})

    def __init__(
        self,
        *,
        length: int = 5,
        max_guesses: int = 6,
        hard_mode: bool = False,
        vocab: str = "common",
        split: str = "train",
        scale_by_guesses: bool = False,
        max_invalid: int = 3,
        max_turns: int | None = None,
        **kwargs,
    ) -> None:
        self.length = check_choice("length", length, words.LENGTHS)
        self.max_guesses = check_choice("max_guesses", max_guesses, range(1, 13))
        self.hard_mode = check_choice("hard_mode", hard_mode, (False, True))
        self.vocab = check_choice("vocab", vocab, words.VOCABS)
        self.split = check_choice("split", split, SPLITS)
        self.scale_by_guesses = check_choice("scale_by_guesses", scale_by_guesses, (False, True))
        turns = max_guesses + max_invalid if max_turns is None else max_turns
        super().__init__(max_turns=turns, max_invalid=max_invalid, max_obs_chars=4096, **kwargs)
        self._valid = words.guesses(length)  # looked up on every step
        self._pool = answer_pool(length, vocab, split)  # drawn from on every reset

    def generate(self, rng: np.random.Generator) -> WordleTask:
        """A secret drawn uniformly from the variant's answer pool (as :func:`generate` draws,
        with the pool looked up once per env rather than once per reset)."""
        secret = draw_secret(rng, self._pool)
        return make_task(secret, self.length, self.max_guesses, self.hard_mode, self.vocab)

    def prompt(self, task: WordleTask) -> str:
        """The rules of the variant and the action format."""
        return _prompt(task.length, task.max_guesses, task.hard_mode)

    def init_state(self, task: WordleTask) -> WordleState:
        return WordleState(task)

    def respond(self, state: WordleState, action: str) -> Turn:
        """Validate the guess, score it with the two-pass rule and report the board."""
        task = state.task
        # What policies nearly always send, "<guess>word</guess>" with a listed word, needs no
        # parse: a listed word is lowercase letters only, so parse() would return that very
        # word. Anything else (and every hard-mode guess) takes the full path. (One slice and
        # one comparison: cheaper than comparing the two ends.)
        word = action[7:-8]
        if action != f"<guess>{word}</guess>" or word not in self._valid or task.hard_mode:
            word = self._checked_guess(state, action)
            if type(word) is not str:
                return word
        if self.reward_mode == "dense":  # the potential is only worth computing then
            before = partial_credit(task.secret, state.history)
            obs = state.add(word)
            shaping = partial_credit(task.secret, state.history) - before
        else:
            obs, shaping = state.add(word), 0.0
        used = len(state.history)
        verdict = None
        if word == task.secret or used >= task.max_guesses:
            verdict = self.final_verdict(state)
            obs += f"\n{verdict.feedback}"
        extra = {"guesses": used, "guesses_left": task.max_guesses - used}
        # Turn's fields in order, without its Python-level __new__ (one is built every step)
        return _new_tuple(Turn, (obs, shaping, verdict is not None, verdict, None, "tool", extra,
                                 0.0))

    def respond_quick(self, state: WordleState, action: str) -> tuple[str, dict] | None:
        """:meth:`respond` for the common move, a listed guess in normal mode with sparse
        rewards that does not end the game: the board and the info keys; else None."""
        task = state.task
        # The action is exactly "<guess>" + word + "</guess>" (never true of one shorter than
        # the two tags, whose slice is then "" or a piece of a tag).
        word = action[7:-8]
        if (
            action != f"<guess>{word}</guess>"
            or word not in self._valid
            or task.hard_mode
            or self.reward_mode == "dense"
            or word == task.secret
            or len(state.history) + 1 >= task.max_guesses
        ):
            return None
        obs = state.add(word)
        used = len(state.history)
        return obs, {"guesses": used, "guesses_left": task.max_guesses - used}

    def _checked_guess(self, state: WordleState, action: str) -> str | Turn:
        """The guess ``action`` makes if it is a legal one, else the Turn that refuses it."""
        call = parse(action, self.tools)
        if type(call) is ParseError:
            return Turn(call.message, 0.0, False, None, call.error, "feedback", self._extra(state))
        word = call.args["word"]
        word = (word if type(word) is str else str(word)).strip().lower()
        # The common case (a listed word in normal mode) is decided here without a call.
        if word not in self._valid or state.task.hard_mode:
            problem = self._invalid(state, word)
            if problem:
                return Turn(
                    f"Invalid guess: {problem} It does not count as a guess.",
                    0.0,
                    False,
                    None,
                    "invalid",
                    "feedback",
                    self._extra(state),
                )
        return word

    def final_verdict(self, state: WordleState) -> Verdict:
        secret = state.task.secret
        # The state already knows what was revealed: no second pass over the game.
        revealed = (len(state.greens) / len(secret), len(state.found) / len(set(secret)))
        return score_history(state.task, state.history, self.scale_by_guesses, revealed)

    def solve(self, task: WordleTask) -> list[str]:
        """The entropy solver's guesses for ``task``, as actions."""
        plan = solver.solve(
            task.secret,
            length=task.length,
            vocab=task.vocab,
            hard_mode=task.hard_mode,
            max_guesses=task.max_guesses,
        )
        return [f"<guess>{w}</guess>" for w in plan]

    def sample_action(self, rng: np.random.Generator) -> str:
        """A uniformly random valid guess (hard-mode legal when playing hard mode)."""
        state: WordleState = self.state
        word = solver.random_guess(
            rng, state.history, length=state.task.length, hard_mode=state.task.hard_mode
        )
        return f"<guess>{word}</guess>"

    def data_sha256(self) -> dict[str, str]:
        return words.data_sha256()

    def _invalid(self, state: WordleState, word: str) -> str | None:
        """Why ``word`` is not a legal guess now, or None."""
        n = state.task.length
        shown = word[:40] + ("..." if len(word) > 40 else "")
        if len(word) != n or not word.isascii() or not word.isalpha():
            return f"{shown!r} is not a {n}-letter word (letters a-z only)."
        if word not in self._valid:
            return f"{word!r} is not in the word list."
        if state.task.hard_mode:
            return hard_mode_violation(word, state.history)
        return None

    def _extra(self, state: WordleState) -> dict[str, int]:
        used = len(state.history)
        return {"guesses": used, "guesses_left": state.task.max_guesses - used}


@lru_cache(maxsize=64)
def _prompt(length: int, max_guesses: int, hard_mode: bool) -> str:
    """The first observation: the rules of the variant and the action format."""
    hard = (
        "Hard mode: every revealed hint must be used in later guesses (G letters stay in "
        "place, Y letters must appear).\n"
        if hard_mode
        else ""
    )
    return (
        f"Let's play Wordle. Guess the secret {length}-letter English word in at most "
        f"{max_guesses} guesses. Each guess must be a valid {length}-letter word.\n"
        "After each guess you get one mark per letter: G = right letter in the right place, "
        "Y = the letter is in the word but elsewhere, _ = not in the word (or no more copies "
        f"of it).\n{hard}Reply with your guess inside tags, e.g. <guess>{EXAMPLE[length]}</guess>,"
        ' or as a tool call {"name": "guess", "arguments": {"word": "..."}}. '
        "You may think before answering; only the last guess in your reply counts."
    )


def render_board(state: WordleState) -> str:
    """The board so far: one line per guess with its marks, and the guesses left."""
    left = state.task.max_guesses - len(state.history)
    # A gray letter that is also green/yellow elsewhere is a repeated letter, not an absent one.
    absent = " ".join(sorted(state.grays - state.found)).upper() or "-"
    return f"{state.board}Letters not in the word: {absent}. Guesses left: {left}."


__all__ = ["WordleEnv", "WordleState", "render_board", "answer_pool"]
