"""``dataset="toy"``: procedural function-writing tasks from templates (no data needed).

A template fixes the function to write and its difficulty; the generator draws the
template's parameters (a divisor, a character set, a shift, coin denominations ...) and the
test inputs from the env's ``rng``. The reference solution is the template's source with the
parameters filled in; expected outputs come from running it here, in the trusted parent (it
is textgyms' own code, not the agent's).
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from textgyms.envs.code.tasks import CodeTask, encode_test, in_split

N_PUBLIC, N_HIDDEN = 3, 10
DIFFICULTIES = ("easy", "medium", "hard")
Gen = np.random.Generator


@dataclass(frozen=True)
class Template:
    """A family of tasks: ``params(rng)`` fills ``describe`` and ``source``; ``inputs(rng,
    params)`` draws one argument list."""

    name: str
    difficulty: str
    describe: str
    source: str
    params: Callable[[Gen], dict[str, Any]]
    inputs: Callable[[Gen, dict[str, Any]], list[Any]]


def _ints(rng: Gen, lo: int, hi: int, n_lo: int = 0, n_hi: int = 12) -> list[int]:
    return [int(x) for x in rng.integers(lo, hi + 1, size=int(rng.integers(n_lo, n_hi + 1)))]


def _word(rng: Gen, letters: str, n_lo: int, n_hi: int) -> str:
    n = int(rng.integers(n_lo, n_hi + 1))
    return "".join(letters[int(i)] for i in rng.integers(0, len(letters), size=n))


def _letters(rng: Gen, k: int) -> str:
    return "".join(sorted(rng.choice(list(string.ascii_lowercase), size=k, replace=False)))


TEMPLATES: tuple[Template, ...] = (
    Template(
        "sum_multiples", "easy",
        "Return the sum of the elements of the integer list `nums` that are divisible by {k}.",
        "def sum_multiples(nums):\n    return sum(x for x in nums if x % {k} == 0)\n",
        lambda rng: {"k": int(rng.integers(2, 8))},
        lambda rng, p: [_ints(rng, -50, 50)],
    ),
    Template(
        "count_chars", "easy",
        "Return how many characters of the string `s` are one of the letters {chars!r}.",
        "def count_chars(s):\n    return sum(1 for c in s if c in {chars!r})\n",
        lambda rng: {"chars": _letters(rng, int(rng.integers(2, 6)))},
        lambda rng, p: [_word(rng, string.ascii_lowercase + " ", 0, 30)],
    ),
    Template(
        "shift_letters", "easy",
        "Return the string `s` with every lowercase letter a-z shifted forward by {k} places in "
        "the alphabet (wrapping from z to a); other characters are unchanged.",
        "def shift_letters(s):\n    return ''.join(chr((ord(c) - 97 + {k}) % 26 + 97) "
        "if 'a' <= c <= 'z' else c for c in s)\n",
        lambda rng: {"k": int(rng.integers(1, 26))},
        lambda rng, p: [_word(rng, string.ascii_lowercase + "XY .!", 0, 25)],
    ),
    Template(
        "clamp_all", "easy",
        "Return a new list with every element of the integer list `nums` clamped into the "
        "closed range [{lo}, {hi}].",
        "def clamp_all(nums):\n    return [min(max(x, {lo}), {hi}) for x in nums]\n",
        lambda rng: {"lo": int(rng.integers(-20, 0)), "hi": int(rng.integers(1, 20))},
        lambda rng, p: [_ints(rng, -40, 40)],
    ),
    Template(
        "rotate", "medium",
        "Return the list `nums` rotated {side} by `k` positions (k may exceed the length; an "
        "empty list stays empty).",
        "def rotate(nums, k):\n    if not nums:\n        return []\n    k %= len(nums)\n"
        "    k = {sign}k % len(nums)\n    return nums[k:] + nums[:k]\n",
        lambda rng: (
            {"side": "to the left", "sign": ""} if rng.integers(2)
            else {"side": "to the right", "sign": "-"}
        ),
        lambda rng, p: [_ints(rng, 0, 9), int(rng.integers(0, 15))],
    ),
    Template(
        "run_length", "medium",
        "Return the run-length encoding of the string `s`: each maximal run of one character "
        "becomes the character followed by the run's length, e.g. 'aaab' -> 'a3b1'.",
        "def run_length(s):\n    out, i = [], 0\n    while i < len(s):\n        j = i\n"
        "        while j < len(s) and s[j] == s[i]:\n            j += 1\n"
        "        out.append(s[i] + str(j - i))\n        i = j\n    return ''.join(out)\n",
        lambda rng: {},
        lambda rng, p: [_word(rng, _letters(rng, int(rng.integers(2, 4))), 0, 20)],
    ),
    Template(
        "kth_largest", "medium",
        "Return the {k}-th largest distinct value of the integer list `nums`, or None when it "
        "has fewer than {k} distinct values.",
        "def kth_largest(nums):\n    values = sorted(set(nums), reverse=True)\n"
        "    return values[{k} - 1] if len(values) >= {k} else None\n",
        lambda rng: {"k": int(rng.integers(1, 4))},
        lambda rng, p: [_ints(rng, -9, 9, 0, 8)],
    ),
    Template(
        "word_counts", "medium",
        "Return a dict mapping each distinct word of at least {m} letters in `text` (words are "
        "separated by spaces; compare them lower-cased) to its number of occurrences.",
        "def word_counts(text):\n    counts = {{}}\n    for w in text.lower().split():\n"
        "        if len(w) >= {m}:\n            counts[w] = counts.get(w, 0) + 1\n"
        "    return counts\n",
        lambda rng: {"m": int(rng.integers(1, 4))},
        lambda rng, p: [" ".join(_word(rng, "abAB", 1, 4) for _ in range(int(rng.integers(10))))],
    ),
    Template(
        "lis_length", "hard",
        "Return the length of the longest strictly increasing subsequence of `nums`.",
        "def lis_length(nums):\n    import bisect\n    tails = []\n    for x in nums:\n"
        "        i = bisect.bisect_left(tails, x)\n        tails[i:i + 1] = [x]\n"
        "    return len(tails)\n",
        lambda rng: {},
        lambda rng, p: [_ints(rng, 0, 30, 0, 25)],
    ),
    Template(
        "edit_distance", "hard",
        "Return the minimum cost to turn string `a` into string `b` with insertions and "
        "deletions costing 1 each and substitutions costing {c}.",
        "def edit_distance(a, b):\n    prev = list(range(len(b) + 1))\n"
        "    for i, ca in enumerate(a, 1):\n        cur = [i]\n"
        "        for j, cb in enumerate(b, 1):\n"
        "            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb) * {c}))\n"
        "        prev = cur\n    return prev[-1]\n",
        lambda rng: {"c": int(rng.integers(1, 3))},
        lambda rng, p: [_word(rng, "abc", 0, 9), _word(rng, "abc", 0, 9)],
    ),
    Template(
        "count_islands", "hard",
        "`grid` is a list of equal-length lists of 0/1. Return the number of islands: groups "
        "of 1-cells connected {adj}.",
        "def count_islands(grid):\n    seen, n = set(), 0\n    steps = {steps}\n"
        "    for r in range(len(grid)):\n        for c in range(len(grid[0]) if grid else 0):\n"
        "            if grid[r][c] == 1 and (r, c) not in seen:\n                n += 1\n"
        "                stack = [(r, c)]\n                seen.add((r, c))\n"
        "                while stack:\n                    y, x = stack.pop()\n"
        "                    for dy, dx in steps:\n                        q = (y + dy, x + dx)\n"
        "                        if 0 <= q[0] < len(grid) and 0 <= q[1] < len(grid[0]) and "
        "grid[q[0]][q[1]] == 1 and q not in seen:\n"
        "                            seen.add(q)\n                            stack.append(q)\n"
        "    return n\n",
        lambda rng: (
            {"adj": "horizontally or vertically", "steps": [(0, 1), (1, 0), (0, -1), (-1, 0)]}
            if rng.integers(2) else {"adj": "horizontally, vertically or diagonally",
                                     "steps": [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)
                                               if (a, b) != (0, 0)]}
        ),
        lambda rng, p: [_grid(rng)],
    ),
    Template(
        "min_coins", "hard",
        "Return the fewest coins with values {coins} (unlimited supply) that add up to "
        "`amount`, or -1 if it cannot be done.",
        "def min_coins(amount):\n    best = [0] + [-1] * amount\n"
        "    for v in range(1, amount + 1):\n"
        "        options = [best[v - c] for c in {coins} if c <= v and best[v - c] >= 0]\n"
        "        best[v] = min(options) + 1 if options else -1\n    return best[amount]\n",
        lambda rng: {"coins": sorted({int(c) for c in rng.integers(2, 13, size=3)})},
        lambda rng, p: [int(rng.integers(0, 60))],
    ),
)  # fmt: skip


def _grid(rng: Gen) -> list[list[int]]:
    rows, cols = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    return [[int(v) for v in rng.integers(0, 2, size=cols)] for _ in range(rows)]


def _compiled(source: str, name: str) -> Callable[..., Any]:
    """The reference solution as a function, compiled anew for every task.

    Not cached: a cache of compiled references (200,000 resets draw over 10,000 distinct
    ones) made a long-running worker's resident memory creep by about 1 MB per 10,000 resets
    once full, although it held a fixed number of objects: each miss freed code objects from
    among long-lived ones and fragmented the heap. Compiling costs about 50 µs, a tenth of a
    toy reset."""
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<toy:{name}>", "exec"), namespace)  # textgyms' own template code
    return namespace[name]


def generate(rng: Gen, difficulty: str, split: str) -> CodeTask:
    """A toy task of ``difficulty`` ("mixed" draws any) in ``split``, from ``rng`` only."""
    pool = [t for t in TEMPLATES if difficulty in ("mixed", t.difficulty)]
    while True:  # rejection on the split, which is fixed by the task's content
        template = pool[int(rng.integers(len(pool)))]
        params = template.params(rng)
        source = template.source.format(**params)
        fn = _compiled(source, template.name)
        tests = _tests(rng, template, params, fn)
        if in_split(source + repr(tests), split):
            break
    signature = source.splitlines()[0]
    return CodeTask(
        dataset="toy",
        source_id=f"toy/{template.name}",
        difficulty=template.difficulty,
        entry=template.name,
        by_name=False,
        description=template.describe.format(**params),
        signature=f"{signature}\n    ...",
        public=tuple(tests[:N_PUBLIC]),
        hidden=tuple(tests[N_PUBLIC:]),
        reference=source,
    )


def _tests(rng: Gen, template: Template, params: dict, fn: Callable) -> list[tuple[str, str]]:
    """Public and hidden tests with distinct inputs (a few draws are allowed to repeat when a
    template has few possible inputs)."""
    tests: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _ in range(20 * (N_PUBLIC + N_HIDDEN)):
        args = template.inputs(rng, params)
        test = encode_test(args, fn(*[_copy(a) for a in args]))
        if test[0] not in seen:
            seen.add(test[0])
            tests.append(test)
            if len(tests) == N_PUBLIC + N_HIDDEN:
                return tests
    raise AssertionError(f"template {template.name} cannot make distinct inputs")


def _copy(value: Any) -> Any:
    """Arguments are fresh for the reference, as they are for the agent's code."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
