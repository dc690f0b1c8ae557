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
from itertools import repeat

import numpy as np

from textgyms.actions import Param, ParseError, ToolSpec, parse
from textgyms.core import TextEnv, Turn, Verdict, check_choice
from textgyms.envs.wordle import solver, words
from textgyms.envs.wordle.generate import (
    SPLITS,
    WordleTask,
    answer_pool,
    draw_index,
    make_task,
)
from textgyms.envs.wordle.rules import GRAY, GREEN, YELLOW, hard_mode_violation
from textgyms.envs.wordle.verify import partial_credit, score_history
from textgyms.errors import ConfigError

GUESS = ToolSpec("guess", "Guess the secret word.", (Param("word", "string", "your guess"),))
EXAMPLE = {4: "lion", 5: "crane", 6: "planet", 7: "example"}
_new_tuple = tuple.__new__


class WordleState:
    """The task and the valid guesses played so far, with their feedback.

    The board text, the letters known absent and the green positions are kept up to date by
    :meth:`add`, so the observation after a guess costs one format instead of a pass over the
    whole game. (A slotted class with a plain ``__init__``: one is built on every reset.)

    A fact of the two-pass rule keeps the book-keeping small: a guessed letter that is in the
    secret is marked green or yellow at least once in that guess (if none of its copies is
    green, the secret's copies are all unmatched and the first one is yellow). So the letters
    marked gray and never green or yellow, which the board lists as absent, are exactly the
    guessed letters the secret lacks, and the letters found are the guessed letters it has.
    """

    __slots__ = ("task", "history", "board", "_others", "_seen", "_absent", "_absent_text",
                 "_greens")

    def __init__(self, task: WordleTask) -> None:
        self.task = task
        self.history: list[tuple[str, tuple[int, ...]]] = []
        self.board = ""  # the lines so far, each ending in a newline
        secret = task.secret
        # the letters the secret lacks, as bits (bit 0 = "a", ..., bit 25 = "z")
        self._others = _OTHERS.get(secret) or _others(secret)
        self._seen = 0  # the guessed letters, as bits
        self._absent = 0  # the guessed letters the secret lacks, as bits
        self._absent_text = "-"  # the board's text for them: sorted, upper case, spaced
        self._greens = 0  # bit i set: position i was marked G by some guess

    @property
    def guesses(self) -> list[str]:
        """The valid guesses played so far."""
        return [g for g, _ in self.history]

    @property
    def absent(self) -> set[str]:
        """The guessed letters the secret lacks (marked gray, never green or yellow)."""
        mask = self._absent
        return {chr(97 + i) for i in range(26) if mask >> i & 1}

    @property
    def found(self) -> set[str]:
        """The letters marked G or Y by some guess (the guessed letters the secret has)."""
        mask = self._seen & ~self._others
        return {chr(97 + i) for i in range(26) if mask >> i & 1}

    @property
    def greens(self) -> set[int]:
        """The positions marked G by some guess."""
        mask = self._greens
        return {i for i in range(self.task.length) if mask >> i & 1}

    def revealed(self) -> tuple[float, float]:
        """The fractions of the secret's positions found green and of its distinct letters
        found (``verify.progress`` of the history, from what :meth:`add` kept)."""
        secret = self.task.secret
        found = (self._seen & ~self._others).bit_count()
        return self._greens.bit_count() / len(secret), found / len(set(secret))

    def add(self, guess: str) -> str:
        """Record a valid guess (a listed word: lowercase ASCII letters); return the board
        (see :func:`render_board`)."""
        task = self.task
        secret = task.secret
        spaced, repeats, letters = _WORDS.get(guess) or _word(guess)
        # The marks as a string ("GY__G"): all that depends on them alone comes from the table
        # of patterns seen so far, so a guess costs one loop over its letters. (Not memoised
        # per (guess, secret): in play most pairs are new, and a miss in a cache of pairs
        # costs more than the loop saves on a hit.)
        if letters & self._others == letters:  # no letter of the guess is in the secret
            marks = "_" * len(guess)
        elif repeats:
            marks = _marks(guess, secret)
        else:  # a letter played once: no green or earlier yellow took its copies
            marks = ""
            for g, s in zip(guess, secret):
                if g == s:
                    marks += "G"
                elif g in secret:
                    marks += "Y"
                else:
                    marks += "_"
        fb, text, greens = _PATTERNS.get(marks) or _pattern(marks)
        history = self.history
        history.append((guess, fb))
        n = len(history)
        self.board = board = f"{self.board}{n}. {spaced}   {text}\n"
        if greens:
            self._greens |= greens
        seen = self._seen | letters
        if seen != self._seen:  # new letters, maybe absent ones
            self._seen = seen
            absent = seen & self._others
            if absent != self._absent:
                self._absent = absent
                # its text from the tables of the three parts of the bits (a-i, j-r, s-z)
                self._absent_text = (
                    _A_TO_I[absent & 511] + _J_TO_R[absent >> 9 & 511] + _S_TO_Z[absent >> 18]
                )[:-1]
        return f"{board}Letters not in the word: {self._absent_text}. Guesses left: " \
               f"{task.max_guesses - n}."


def _marks(guess: str, secret: str) -> str:
    """The marks ("GY__G") of ``guess`` by the two-pass rule of :func:`rules.feedback`."""
    spare = [s for g, s in zip(guess, secret) if g != s]  # the copies left for yellows
    marks = ""
    for g, s in zip(guess, secret):
        if g == s:
            marks += "G"
        elif g in spare:
            marks += "Y"
            spare.remove(g)
        else:
            marks += "_"
    return marks


# marks ("GY__G") -> (feedback tuple, board text "G Y _ _ G", green positions as bits), for
# the patterns seen so far (at most 3**7)
_PATTERNS: dict[str, tuple[tuple[int, ...], str, int]] = {}
_MARK_VALUES = {"G": GREEN, "Y": YELLOW, "_": GRAY}


def _pattern(marks: str) -> tuple[tuple[int, ...], str, int]:
    greens = sum(1 << i for i, m in enumerate(marks) if m == "G")
    entry = (tuple(_MARK_VALUES[m] for m in marks), " ".join(marks), greens)
    _PATTERNS[marks] = entry
    return entry


# guess -> (its letters upper-cased and spaced, "C R A N E"; whether a letter repeats; its
# letters a-z as bits); guesses come from the word list
_WORDS: dict[str, tuple[str, bool, int]] = {}


def _word(word: str) -> tuple[str, bool, int]:
    if len(_WORDS) >= 1 << 16:  # more than any word list holds: bound it all the same
        _WORDS.clear()
    letters = set(word)
    bits = sum(map(_BITS.get, letters, _ZEROS))
    entry = _WORDS[word] = (" ".join(word.upper()), len(letters) < len(word), bits)
    return entry


_BITS = {chr(97 + i): 1 << i for i in range(26)}  # a letter a-z -> its bit
_ZEROS = repeat(0)  # the bit of any other character
# secret -> the letters it lacks, as bits (negative, so never 0: the ~ of bits); looked up
# on every reset, filled for a whole answer pool when an env on it is made (see _learn_pool):
# computed at a reset on a new secret, they would cost a tenth of the reset
_OTHERS: dict[str, int] = {}


def _others(secret: str) -> int:
    if len(_OTHERS) >= 1 << 17:  # more than all the answer pools together: bound it all the same
        _OTHERS.clear()
    bits = _OTHERS[secret] = ~sum(map(_BITS.get, set(secret), _ZEROS))
    return bits


@lru_cache(maxsize=64)
def _learn_pool(pool: tuple[str, ...]) -> None:
    """Compute the missing letters of every secret of ``pool``, once per process and pool (a
    few milliseconds, at the first make of a variant)."""
    for secret in pool:
        if secret not in _OTHERS:
            _others(secret)


@lru_cache(maxsize=64)
def _task_table(
    length: int, max_guesses: int, hard_mode: bool, vocab: str, split: str
) -> tuple[WordleTask, ...]:
    """The task of each word of a variant's answer pool, with its ``task_id`` computed: built
    once per process and variant, at the first make of an env on it (a few milliseconds, like
    :func:`_learn_pool`), and shared by the envs of the variant (tasks are immutable).

    A reset is then a list lookup. Built at the reset that first draws a secret, the task and
    its id would cost about as much as the rest of that reset, and a run of a few hundred games
    draws mostly secrets not drawn before.
    """
    tasks = tuple(make_task(secret, length, max_guesses, hard_mode, vocab)
                  for secret in answer_pool(length, vocab, split))
    for task in tasks:
        task.task_id  # noqa: B018  (computed now and cached on the task)
    return tasks


def _texts(first: int, count: int) -> list[str]:
    """The text of every set of the ``count`` letters from ``first`` on, indexed by its bits:
    the letters in order, upper case, each followed by a space."""
    texts = [""]
    for i in range(count):  # the sets with letter i are those without it, plus it (last)
        texts += [f"{text}{chr(first + i)} " for text in texts]
    return texts


# the absent letters' texts by the three parts of their bits (3 * 512 texts in all, where one
# table for all 26 letters would hold 2**26, and sorting the set at every step costs more)
_A_TO_I, _J_TO_R, _S_TO_Z = _texts(65, 9), _texts(74, 9), _texts(83, 8)


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
        _learn_pool(self._pool)
        self._tasks = _task_table(length, max_guesses, hard_mode, vocab, split)
        self._prompt_text = _prompt(length, max_guesses, hard_mode)

    def generate(self, rng: np.random.Generator) -> WordleTask:
        """A secret drawn uniformly from the variant's answer pool (as :func:`generate` draws,
        with the pool's tasks built once per process and variant rather than per reset)."""
        tasks = self._tasks
        return tasks[draw_index(rng, len(tasks))]

    def prompt(self, task: WordleTask) -> str:
        """The rules of the variant and the action format."""
        # A drawn task is of this env's variant: its prompt is kept rather than looked up in
        # _prompt's cache (which hashes the three fields) on every reset.
        if (task.length == self.length and task.max_guesses == self.max_guesses
                and task.hard_mode == self.hard_mode):
            return self._prompt_text
        return _prompt(task.length, task.max_guesses, task.hard_mode)

    def init_state(self, task: WordleTask) -> WordleState:
        # A replayed task (reset options) must fit this env: its guesses are checked against
        # the env's word list, and the board is scored position by position.
        if task.length != self.length or len(task.secret) != task.length:
            raise ConfigError(
                f"task secret {task.secret!r} (length={task.length}) does not fit this env "
                f"(length={self.length}): make the env with length={len(task.secret)} and "
                f"give the task that length")
        return WordleState(task)

    def respond(self, state: WordleState, action: str) -> Turn:
        """Validate the guess, score it with the two-pass rule and report the board."""
        # What policies nearly always send, "<guess>word</guess>" with a listed word, needs no
        # parse: a listed word is lowercase letters only, so parse() would return that very
        # word. Anything else (and every hard-mode guess) takes the full path. (One slice and
        # one comparison: cheaper than comparing the two ends.)
        word = action[7:-8]
        if action != f"<guess>{word}</guess>" or word not in self._valid or state.task.hard_mode:
            word = self._checked_guess(state, action)
            if type(word) is not str:
                return word
        return self._played(state, word)

    def respond_quick(self, state: WordleState, action: str) -> tuple[str, dict] | Turn | None:
        """:meth:`respond` for a plain ``<guess>word</guess>`` with a listed word in normal
        mode: the board and the info keys for a sparse-reward guess that does not end the
        game, the Turn for any other; None for every other action."""
        task = state.task
        # The action is exactly "<guess>" + word + "</guess>" (never true of one shorter than
        # the two tags, whose slice is then "" or a piece of a tag).
        word = action[7:-8]
        if action != f"<guess>{word}</guess>" or word not in self._valid or task.hard_mode:
            return None
        used = len(state.history) + 1  # the number of this guess
        if word == task.secret or used >= task.max_guesses or self.reward_mode == "dense":
            return self._played(state, word)
        return state.add(word), {"guesses": used, "guesses_left": task.max_guesses - used}

    def _played(self, state: WordleState, word: str) -> Turn:
        """Play the legal guess ``word``: its Turn."""
        task = state.task
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
        return score_history(state.task, state.history, self.scale_by_guesses, state.revealed())

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
    absent = " ".join(sorted(state.absent)).upper() or "-"
    return f"{state.board}Letters not in the word: {absent}. Guesses left: {left}."


__all__ = ["WordleEnv", "WordleState", "render_board", "answer_pool"]
