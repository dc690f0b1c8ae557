"""Scoring a Wordle game: pure functions of the task and the guesses played.

Final score (``Verdict.score``):

* solved: 1.0, or with ``scale_by_guesses`` ``1 - (n - 1) / max_guesses`` for a solve in n
  guesses (1.0 for a first-guess solve, ``1 / max_guesses`` for a last-guess solve);
* not solved: partial credit ``0.3 * greens + 0.2 * letters`` (at most 0.5, so an unsolved game
  never ties a solve), where ``greens`` is the fraction of the secret's positions revealed green
  by some guess and ``letters`` the fraction of the secret's distinct letters found (green or
  yellow). Both only grow with play, which makes them a sound dense-reward potential.

Parts: ``solved``, ``greens``, ``letters`` and ``efficiency`` (``1 - (n - 1) / max_guesses`` when
solved, else 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from textgyms.core import Verdict
from textgyms.envs.wordle.generate import WordleTask
from textgyms.envs.wordle.rules import feedback

GREEN_WEIGHT, LETTER_WEIGHT = 0.3, 0.2


History = Sequence[tuple[str, Sequence[int]]]
_first = itemgetter(0)  # a history entry's guess


def history_of(secret: str, guesses: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    """Each guess of the secret's length with its feedback (other strings are ignored)."""
    return [
        (g, feedback(g, secret)) for g in guesses if isinstance(g, str) and len(g) == len(secret)
    ]


def progress(secret: str, history: History) -> tuple[float, float]:
    """(greens, letters): fractions of the secret's positions and distinct letters revealed."""
    greens = {i for _, marks in history for i, m in enumerate(marks) if m == 2}
    found = {c for guess, marks in history for c, m in zip(guess, marks) if m}
    return len(greens) / len(secret), len(found) / len(set(secret))


def partial_credit(secret: str, history: History) -> float:
    """The unsolved-game score in [0, 0.5]; also the dense-reward potential."""
    greens, letters = progress(secret, history)
    return GREEN_WEIGHT * greens + LETTER_WEIGHT * letters


def verify(task: WordleTask, guesses: Sequence[str], *, scale_by_guesses: bool = False) -> Verdict:
    """Score the guesses of a game on ``task``. Total: never raises on a list of strings."""
    return score_history(task, history_of(task.secret, guesses), scale_by_guesses)


def score_history(
    task: WordleTask,
    history: History,
    scale_by_guesses: bool = False,
    revealed: tuple[float, float] | None = None,
) -> Verdict:
    """:func:`verify` for guesses whose feedback is already known (the env's own record);
    ``revealed`` is ``progress(task.secret, history)`` when the caller already has it."""
    secret, limit = task.secret, task.max_guesses
    if len(history) > limit:
        history = history[:limit]  # guesses past the limit never count
    greens, letters = revealed or progress(secret, history)
    guesses = list(map(_first, history))  # C-level passes: this runs at the end of every game
    n = guesses.index(secret) + 1 if secret in guesses else 0  # the solving guess, from 1
    if n:
        efficiency = 1 - (n - 1) / limit
        score = efficiency if scale_by_guesses else 1.0
        feedback_text = f"Solved in {n} guess{'es' * (n > 1)}: the word was {secret.upper()}."
    else:
        efficiency = 0.0
        score = GREEN_WEIGHT * greens + LETTER_WEIGHT * letters
        feedback_text = f"Not solved: the word was {secret.upper()}."
    parts = {
        "solved": float(n > 0),
        "greens": greens,
        "letters": letters,
        "efficiency": efficiency,
    }
    return Verdict(score, n > 0, feedback_text, parts)
