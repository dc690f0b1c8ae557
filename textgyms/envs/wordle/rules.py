"""The rules of Wordle as pure functions: feedback, pattern codes, consistency, hard mode.

Feedback is a tuple with one mark per letter: 2 = green (right letter, right place),
1 = yellow (in the word, elsewhere), 0 = gray (not in the word, or no copies left).
Repeated letters follow the official two-pass rule: greens are marked first, then
yellows are handed out left to right while unmatched copies of the letter remain in
the secret. So guess "speed" against secret "abide" marks only the first E yellow.

A *history* is a sequence of ``(guess, feedback)`` pairs, oldest first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

GRAY, YELLOW, GREEN = 0, 1, 2

Feedback = tuple[int, ...]
History = Sequence[tuple[str, Sequence[int]]]


@lru_cache(maxsize=1 << 16)
def feedback(guess: str, secret: str) -> Feedback:
    """The marks for ``guess`` against ``secret`` (two-pass rule for repeated letters).

    Raises ValueError if the words differ in length. Cached: in RL the same pairs recur
    constantly (a GRPO group shares its secret; openers like "crane" are played everywhere).
    """
    if len(guess) != len(secret):
        raise ValueError(f"guess {guess!r} and secret {secret!r} differ in length")
    if guess == secret:
        return (GREEN,) * len(guess)
    # One pass over plain lists (no Counter): this runs on every env step. ``unmatched`` holds
    # the secret letters not used up by a green; yellows consume them left to right.
    unmatched = [s for g, s in zip(guess, secret) if g != s]
    marks = []
    for g, s in zip(guess, secret):
        if g == s:
            marks.append(GREEN)
        elif g in unmatched:
            marks.append(YELLOW)
            unmatched.remove(g)
        else:
            marks.append(GRAY)
    return tuple(marks)


def pattern_code(fb: Sequence[int]) -> int:
    """``fb`` as a base-3 integer, first letter most significant (all gray = 0).

    All green is ``3**len(fb) - 1``. Raises ValueError on a mark outside 0..2.
    """
    code = 0
    for mark in fb:
        if mark not in (GRAY, YELLOW, GREEN):
            raise ValueError(f"feedback marks must be 0, 1 or 2, got {mark!r}")
        code = code * 3 + mark
    return code


def pattern_from_code(code: int, length: int) -> Feedback:
    """The feedback of ``length`` marks whose :func:`pattern_code` is ``code``."""
    if not 0 <= code < 3**length:
        raise ValueError(f"pattern code {code} out of range for length {length}")
    marks = []
    for _ in range(length):
        code, mark = divmod(code, 3)
        marks.append(mark)
    return tuple(reversed(marks))


def is_consistent(word: str, history: History) -> bool:
    """True if ``word`` could be the secret given every ``(guess, feedback)`` seen."""
    return all(
        len(guess) == len(word) and feedback(guess, word) == tuple(fb) for guess, fb in history
    )


def required_letters(history: History) -> dict[str, int]:
    """Letter -> how many copies every later guess must contain in hard mode.

    A guess that marked a letter green or yellow k times proves the secret has at least
    k copies, so hard mode demands k; the maximum over the history is what counts.
    """
    need: dict[str, int] = {}
    for guess, fb in history:
        shown = Counter(c for c, m in zip(guess, fb) if m != GRAY)
        for letter, count in shown.items():
            need[letter] = max(need.get(letter, 0), count)
    return need


def hard_mode_violation(guess: str, history: History) -> str | None:
    """Why ``guess`` breaks NYT hard mode after ``history``, or None if it is legal.

    Hard mode: every revealed green must stay in its place, and every revealed green
    or yellow letter must be reused, as many times as it was revealed. Greens are
    checked first, in position order, then letter counts in order of first reveal.
    Messages look like "hard mode: letter 4 must be E" (positions count from 1) and
    "hard mode: guess must contain R".
    """
    greens = {i: c for past, fb in history for i, (c, m) in enumerate(zip(past, fb)) if m == GREEN}
    for i in sorted(greens):
        if i >= len(guess) or guess[i] != greens[i]:
            return f"hard mode: letter {i + 1} must be {greens[i].upper()}"
    have = Counter(guess)
    for letter, count in required_letters(history).items():
        if have[letter] < count:
            times = f" at least {count} times" if count > 1 else ""
            return f"hard mode: guess must contain {letter.upper()}{times}"
    return None
