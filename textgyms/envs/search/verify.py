"""The Search verifier: pure functions, total on agent text.

Rules (each has a test): the answer is normalised (Unicode NFKC, accents stripped, case folded,
punctuation dropped, English articles dropped, number words mapped to digits) and must equal the
normalised gold answer or one of its aliases exactly; token F1 against the best alias is logged as
a part but earns no credit (no containment credit). An empty answer, an answer that lists several
candidates ("A or B", "A, B and C", "A/B") and an answer over the length cap score 0. With the
grounding gate on, a correct answer that never appeared in what the world served this episode
scores 0 (it was guessed or leaked, not found); the env passes as ``seen`` only the world's text
(result rows, page lines shown, lines found, documents), never the agent's own query, URL or
pattern echoed back (see ``Browser.evidence``). An answer no page states (a count) cannot be
checked that way: the env then requires a support page to have been opened (or, in Search-R1
mode, returned as a document) and passes ``seen=""`` when none was, which scores 0. "unknown"
scores 0 with ``error="unknown"``; the env's ``wrong_penalty`` (see ``answer_penalty``) charges
every other failed answer on the reward, outside the score, so guessing costs more than
abstaining. Citation credit logs a ``cited`` part when a cited URL is a support page.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from textgyms.core import Verdict

__all__ = [
    "normalize",
    "f1",
    "is_multi_candidate",
    "grade",
    "answer_penalty",
    "MAX_ANSWER_CHARS",
    "UNKNOWN",
]

MAX_ANSWER_CHARS = 200
UNKNOWN = "unknown"
_ARTICLES = {"a", "an", "the"}
_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
# Separators that turn one answer into a list of candidates.
_MULTI = re.compile(r"(?:\bor\b|\band/or\b|;|/|\|)|,(?!\d{3}\b)|\n", re.IGNORECASE)
_AND_LIST = re.compile(r",.*\band\b", re.IGNORECASE)


def fold_accents(text: str) -> str:
    """``text`` in compatibility form (NFKC, then NFKD) with its combining marks dropped.

    ASCII text is returned as it is (every normal form leaves ASCII unchanged and no ASCII
    character combines), and text without combining marks skips the loop over its characters.
    (Task generation normalises whole results pages, and that loop was a quarter of a Search
    reset.)
    """
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    if any(unicodedata.combining(c) for c in set(text)):  # distinct characters: a few dozen
        return "".join(c for c in text if not unicodedata.combining(c))
    return text


def normalize(text: str) -> str:
    """Unicode-, case-, accent-, punctuation-, article- and number-insensitive form of ``text``."""
    text = fold_accents(text).casefold()
    text = re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", text)  # 1,234 -> 1234
    text = _PUNCT.sub(" ", text.replace("'", ""))
    words = [_NUMBERS.get(w, w) for w in text.split() if w not in _ARTICLES]
    return " ".join(words)


def f1(prediction: str, gold: str) -> float:
    """Token F1 of the normalised strings (SQuAD style)."""
    p, g = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if not p or not g or common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def is_multi_candidate(answer: str, golds: Sequence[str]) -> bool:
    """True when ``answer`` lists several candidates ("A or B", "A, B, C", "A/B").

    A separator that is part of a gold answer itself ("Bosnia and Herzegovina", "Guinea-Bissau",
    "Washington, D.C.") does not count.
    """
    norm_golds = {normalize(g) for g in golds}
    if normalize(answer) in norm_golds:
        return False
    return bool(_MULTI.search(answer) or _AND_LIST.search(answer))


def grade(
    answer: str,
    golds: Sequence[str],
    *,
    seen: str | None = None,
    urls: Sequence[str] = (),
    support: Sequence[str] = (),
    cite_credit: bool = False,
) -> Verdict:
    """Score one final ``answer`` against ``golds`` (gold answer first, then aliases).

    ``seen`` is the normalised text of what the world served this episode (``None``
    turns the grounding gate off). The gold answer is never quoted in the feedback.
    """
    answer = answer if isinstance(answer, str) else str(answer)
    norm = normalize(answer)
    best_f1 = max((f1(answer, g) for g in golds), default=0.0)
    parts = {"em": 0.0, "f1": best_f1, "grounded": 0.0, "cited": 0.0}
    if not norm:
        return Verdict(0.0, False, "Empty answer: score 0.", parts, "empty_answer")
    if len(answer) > MAX_ANSWER_CHARS:
        msg = f"Answer longer than {MAX_ANSWER_CHARS} characters: score 0."
        return Verdict(0.0, False, msg, parts, "too_long_answer")
    if norm == UNKNOWN:
        return Verdict(0.0, False, "You answered 'unknown'.", parts, "unknown")
    if is_multi_candidate(answer, golds):
        msg = "The answer lists several candidates; give exactly one: score 0."
        return Verdict(0.0, False, msg, parts, "multiple_answers")
    correct = norm in {normalize(g) for g in golds}
    if not correct:
        return Verdict(0.0, False, "Wrong answer: score 0.", parts, "wrong_answer")
    parts["em"] = 1.0
    grounded = seen is None or f" {norm} " in seen
    parts["grounded"] = float(grounded)
    if not grounded:
        msg = (
            "The answer is not supported by anything you saw (it never appeared, or the page "
            "it is counted on was never opened): score 0."
        )
        return Verdict(0.0, False, msg, parts, "ungrounded")
    if cite_credit:
        canon = {u.rstrip("/") for u in support}
        parts["cited"] = float(any(str(u).rstrip("/") in canon for u in urls))
    return Verdict(1.0, True, "Correct.", parts)


def answer_penalty(verdict: Verdict, wrong_penalty: float) -> float:
    """The reward cost of a final answer: ``wrong_penalty`` for any failed answer except an
    explicit "unknown" (abstaining is free, guessing wrong is not)."""
    if verdict.solved or verdict.error == "unknown":
        return 0.0
    return wrong_penalty
