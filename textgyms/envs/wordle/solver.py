"""An entropy (information-gain) Wordle solver, vectorised with numpy.

For a (length, vocab) pair the solver builds once per process a *pattern matrix*
``M[g, a]`` = :func:`~textgyms.envs.wordle.rules.pattern_code` of guess ``g`` against
answer ``a`` (rows: :func:`~textgyms.envs.wordle.words.guess_list`, columns:
:func:`~textgyms.envs.wordle.words.answers`). Its dtype is ``uint8`` when every code
fits (``3**length <= 256``, lengths 4 and 5) and ``uint16`` otherwise.

Each turn the solver keeps the answers consistent with the feedback so far and plays
the valid guess whose feedback pattern has the highest Shannon entropy over them
(the expected information it gives), breaking ties in favour of guesses that could
still be the secret, then alphabetically, so play is deterministic. In hard mode only
guesses that keep every revealed hint are scored.

Randomness comes only from the ``numpy.random.Generator`` passed to
:func:`random_guess`; nothing here touches a global random state.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache

import numpy as np

from textgyms.envs.wordle import words
from textgyms.envs.wordle.rules import History, feedback, pattern_code, pattern_from_code
from textgyms.errors import ConfigError

# The pattern matrix is built this many (guess, answer) pairs at a time, which keeps
# the temporaries a few MB (cache-friendly) whatever the vocabulary size.
_BLOCK_PAIRS = 1 << 21
# Entropy histograms are counted this many bins at a time (rows x patterns), so
# length 7 (2,187 patterns) over 11k guesses does not allocate hundreds of MB.
_BLOCK_BINS = 1 << 22
# Entropies are compared after rounding: sums of the same counts in another order
# can differ in the last bits, and ties must break by the documented rules instead.
_DECIMALS = 9

HistoryKey = tuple[tuple[str, int], ...]


def encode(word_list: Sequence[str]) -> np.ndarray:
    """Words of equal length as a ``uint8[n, length]`` array of letter numbers 0-25."""
    if not word_list:
        return np.zeros((0, 0), dtype=np.uint8)
    raw = np.frombuffer("".join(word_list).encode("ascii"), dtype=np.uint8)
    return (raw.reshape(len(word_list), -1) - ord("a")).astype(np.uint8)


def _letter_counts(encoded: np.ndarray) -> np.ndarray:
    """``uint8[n, 26]``: how many times each letter occurs in each encoded word."""
    counts = np.zeros((encoded.shape[0], 26), dtype=np.uint8)
    rows = np.arange(encoded.shape[0])
    for i in range(encoded.shape[1]):
        np.add.at(counts, (rows, encoded[:, i]), 1)
    return counts


def _pattern_block(guess_enc: np.ndarray, answer_enc: np.ndarray) -> np.ndarray:
    """Pattern codes of every guess against every answer, ``uint16[guesses, answers]``.

    Vectorised two-pass rule: position i is yellow iff it is not green and the
    answer holds more copies of the letter than are claimed before it. Claimed copies
    are (a) earlier guess positions with the same letter, green or not (a green copy
    is matched, a non-green one consumed a copy first if any remained), plus (b)
    later positions where the same letter is green (greens are matched first).
    """
    length = guess_enc.shape[1]
    green = guess_enc[:, None, :] == answer_enc[None, :, :]
    answer_counts_t = _letter_counts(answer_enc).T  # [26, answers]
    same = guess_enc[:, :, None] == guess_enc[:, None, :]  # [guesses, i, j]
    codes = np.zeros(green.shape[:2], dtype=np.uint16)  # 3**7 - 1 fits
    for i in range(length):
        claimed = np.empty(green.shape[:2], dtype=np.uint8)
        claimed[:] = same[:, i, :i].sum(axis=1, dtype=np.uint8)[:, None]
        for j in range(i + 1, length):
            rows = np.flatnonzero(same[:, i, j])  # few guesses repeat a letter
            if rows.size:
                claimed[rows] += green[rows, :, j]
        available = answer_counts_t[guess_enc[:, i]]  # [guesses, answers]
        green_i = green[:, :, i]
        marks = (green_i.view(np.uint8) << 1) | (~green_i & (claimed < available)).view(np.uint8)
        codes *= 3
        codes += marks
    return codes


def patterns(guess_words: Sequence[str], answer_words: Sequence[str]) -> np.ndarray:
    """Pattern codes of each guess against each answer, as ``[len(guesses), len(answers)]``.

    ``uint8`` when ``3**length <= 256`` else ``uint16``; built block by block.
    """
    guess_enc, answer_enc = encode(guess_words), encode(answer_words)
    length = guess_enc.shape[1] if len(guess_words) else 0
    dtype = np.uint8 if 3**length <= 256 else np.uint16
    out = np.empty((len(guess_words), len(answer_words)), dtype=dtype)
    step = max(1, _BLOCK_PAIRS // max(1, len(answer_words)))
    for start in range(0, len(guess_words), step):
        block = _pattern_block(guess_enc[start : start + step], answer_enc)
        out[start : start + step] = block
    return out


@cache
def pattern_matrix(length: int = 5, vocab: str = "common") -> np.ndarray:
    """The cached, read-only pattern matrix of ``guess_list(length)`` x ``answers(...)``."""
    matrix = patterns(words.guess_list(length), words.answers(length, vocab))
    matrix.setflags(write=False)  # shared by every caller in the process
    return matrix


@cache
def _guess_tables(length: int) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """Index of each guess, its encoded letters and its letter counts."""
    guess_list = words.guess_list(length)
    encoded = encode(guess_list)
    return {w: i for i, w in enumerate(guess_list)}, encoded, _letter_counts(encoded)


@cache
def _answer_rows(length: int, vocab: str) -> np.ndarray:
    """For each answer (column), its row in the pattern matrix."""
    index = _guess_tables(length)[0]
    return np.array([index[w] for w in words.answers(length, vocab)], dtype=np.int64)


def _pattern_row(length: int, vocab: str, guess: str) -> np.ndarray:
    """Pattern codes of ``guess`` against every answer (computed if not a listed guess)."""
    row = _guess_tables(length)[0].get(guess)
    if row is not None:
        return pattern_matrix(length, vocab)[row]
    return _pattern_block(encode([guess]), encode(words.answers(length, vocab)))[0]


def _history_key(history: History, length: int) -> HistoryKey:
    """``history`` as a hashable key of (guess, pattern code), validated."""
    key = []
    for guess, fb in history:
        if len(guess) != length or len(fb) != length:
            raise ValueError(f"history entry {guess!r} does not have {length} letters")
        if not (guess.isascii() and guess.isalpha() and guess.islower()):
            raise ValueError(f"history guess {guess!r} must be lower-case letters a-z")
        key.append((guess, pattern_code(fb)))
    return tuple(key)


def _candidates(length: int, vocab: str, key: HistoryKey) -> np.ndarray:
    """Indices of the answers consistent with every (guess, code) in ``key``."""
    cand = np.arange(len(words.answers(length, vocab)))
    for guess, code in key:
        cand = cand[_pattern_row(length, vocab, guess)[cand] == code]
    return cand


def _hard_mode_mask(length: int, key: HistoryKey) -> np.ndarray:
    """``bool[num_guesses]``: the guesses that keep every hint in ``key`` (NYT hard mode)."""
    _, encoded, counts = _guess_tables(length)
    legal = np.ones(encoded.shape[0], dtype=bool)
    need: dict[int, int] = {}
    for guess, code in key:
        marks = pattern_from_code(code, length)
        shown: dict[int, int] = {}
        for i, (letter, mark) in enumerate(zip(guess, marks)):
            number = ord(letter) - ord("a")
            if mark == 2:
                legal &= encoded[:, i] == number
            if mark:
                shown[number] = shown.get(number, 0) + 1
        for number, count in shown.items():
            need[number] = max(need.get(number, 0), count)
    for number, count in need.items():
        legal &= counts[:, number] >= count
    return legal


def _entropies(matrix: np.ndarray, rows: np.ndarray, cand: np.ndarray, length: int) -> np.ndarray:
    """Entropy in bits of the feedback pattern of each guess in ``rows`` over ``cand``.

    Rounded to ``_DECIMALS`` so equal histograms compare equal. Many candidates:
    a histogram per row with ``bincount``; few: sort each row and count runs, which
    avoids touching all 3**length bins per guess when most are empty.
    """
    num_patterns = 3**length
    use_bins = cand.size >= num_patterns // 4
    # Bound both the histogram (rows x patterns) and the gathered codes (rows x cand).
    step = max(1, _BLOCK_BINS // max(num_patterns if use_bins else 1, cand.size))
    xlogx = np.zeros(cand.size + 1)
    xlogx[1:] = np.arange(1, cand.size + 1) * np.log2(np.arange(1, cand.size + 1))
    out = np.empty(rows.size)
    for start in range(0, rows.size, step):
        sub = matrix[np.ix_(rows[start : start + step], cand)]
        summed = (
            _sum_xlogx_bins(sub, num_patterns, xlogx) if use_bins else _sum_xlogx_runs(sub, xlogx)
        )
        out[start : start + step] = np.log2(cand.size) - summed / cand.size
    return np.round(out, _DECIMALS)


def _sum_xlogx_bins(sub: np.ndarray, num_patterns: int, xlogx: np.ndarray) -> np.ndarray:
    """Per row of pattern codes, the sum of c*log2(c) over pattern counts c (bincount)."""
    offsets = np.arange(sub.shape[0], dtype=np.int64)[:, None] * num_patterns
    hist = np.bincount((sub + offsets).ravel(), minlength=sub.shape[0] * num_patterns)
    return xlogx[hist].reshape(sub.shape[0], num_patterns).sum(axis=1)


def _sum_xlogx_runs(sub: np.ndarray, xlogx: np.ndarray) -> np.ndarray:
    """Per row of pattern codes, the sum of c*log2(c) over pattern counts c (sorting)."""
    rows, width = sub.shape
    ordered = np.sort(sub, axis=1)
    starts_mask = np.ones((rows, width), dtype=bool)
    starts_mask[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    starts = np.flatnonzero(starts_mask)  # every row starts a run, so runs never span rows
    run_lengths = np.diff(np.append(starts, rows * width))
    return np.bincount(starts // width, weights=xlogx[run_lengths], minlength=rows)


@lru_cache(maxsize=1 << 16)
def _choose(length: int, vocab: str, hard_mode: bool, key: HistoryKey) -> str:
    """The solver's guess after ``key``; cached because play is deterministic."""
    if not key:  # hard mode restricts nothing before the first hint
        return opening_guess(length, vocab)
    return _best_guess(length, vocab, hard_mode, key)


def _best_guess(length: int, vocab: str, hard_mode: bool, key: HistoryKey) -> str:
    """The highest-entropy guess after ``key``, with the documented tie-breaks."""
    answer_words = words.answers(length, vocab)
    cand = _candidates(length, vocab, key)
    if cand.size == 0:
        raise ValueError(f"no {vocab!r} answer of length {length} fits the feedback {key}")
    if cand.size <= 2:  # a candidate gives the maximal 1 bit (or wins): the tie-break
        return min(answer_words[i] for i in cand)
    matrix = pattern_matrix(length, vocab)
    rows = np.arange(matrix.shape[0])
    if hard_mode:
        rows = rows[_hard_mode_mask(length, key)]
    scores = _entropies(matrix, rows, cand, length)
    is_cand = np.zeros(matrix.shape[0], dtype=bool)
    is_cand[_answer_rows(length, vocab)[cand]] = True
    tied = rows[scores == scores.max()]
    preferred = tied[is_cand[tied]]
    # guess_list is sorted, so the smallest row is the alphabetically first word.
    best = int(preferred.min() if preferred.size else tied.min())
    return words.guess_list(length)[best]


@cache
def opening_guess(length: int = 5, vocab: str = "common") -> str:
    """The solver's first guess for ``length`` and ``vocab`` (computed once, then cached).

    Scoring every guess against every answer takes about a second for "common"
    and a few seconds for "full", once per process.
    """
    return _best_guess(words.check_length(length), words.check_vocab(vocab), False, ())


def next_guess(
    history: History, *, length: int = 5, vocab: str = "common", hard_mode: bool = False
) -> str:
    """The guess maximising expected information over the answers still possible.

    ``history`` is a sequence of ``(guess, feedback)``. Ties go to guesses that could
    still be the secret, then to the alphabetically first. In hard mode the guess
    keeps every revealed hint. Raises ValueError if no answer of ``vocab`` fits.
    """
    words.check_length(length)
    words.check_vocab(vocab)
    return _choose(length, vocab, bool(hard_mode), _history_key(history, length))


def solve(
    secret: str,
    *,
    length: int = 5,
    vocab: str = "common",
    hard_mode: bool = False,
    max_guesses: int = 6,
    oracle: bool = True,
) -> list[str]:
    """Play a game against ``secret`` from feedback alone; return the guesses made.

    The solver sees only the feedback of its guesses, except for one oracle step:
    when ``oracle`` is true and a single guess is left while more than one answer is
    still possible, it guesses ``secret`` itself, so the game is always won. In normal
    mode with the "common" and "easy" vocabularies and 6 guesses this never triggers
    (every answer of every length is solved honestly, see ``scripts/solver_stats.py``);
    it matters in hard mode, with the "full" vocabulary, or with fewer guesses. With
    ``oracle=False`` the returned list may end without the secret.
    """
    words.check_length(length)
    if secret not in words.answers(length, vocab):
        raise ConfigError(f"{secret!r} is not a {length}-letter answer of vocab {vocab!r}")
    if max_guesses < 1:
        raise ConfigError(f"max_guesses must be at least 1, got {max_guesses}")
    history: list[tuple[str, tuple[int, ...]]] = []
    for turn in range(max_guesses):
        guess = next_guess(history, length=length, vocab=vocab, hard_mode=hard_mode)
        if oracle and turn == max_guesses - 1 and guess != secret:
            guess = secret  # the documented oracle step: last guess, still ambiguous
        history.append((guess, feedback(guess, secret)))
        if guess == secret:
            break
    return [guess for guess, _ in history]


def random_guess(
    rng: np.random.Generator, history: History, *, length: int = 5, hard_mode: bool = False
) -> str:
    """A uniformly random valid guess drawn with ``rng`` (hard-mode legal if ``hard_mode``).

    Raises ValueError if hard mode leaves no legal guess (only possible when the
    history is inconsistent with every word).
    """
    words.check_length(length)
    guess_list = words.guess_list(length)
    if not hard_mode:
        return guess_list[int(rng.integers(len(guess_list)))]
    legal = np.flatnonzero(_hard_mode_mask(length, _history_key(history, length)))
    if legal.size == 0:
        raise ValueError("no valid guess keeps every hint of this history")
    return guess_list[int(legal[rng.integers(legal.size)])]
