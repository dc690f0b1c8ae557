"""``dataset="codeio"``: the CodeI/O problems shipped in the ``reasoning-gym`` package.

The agent sees the problem's description and its input/output specification and writes
``main_solution(**inputs)``; the reference code is never shown. Tests are made by running the
problem's seeded input generator (``generate_inputs(Random(seed))``) and the reference on its
inputs, in the sandbox (both are third-party code). Problems are filtered out once when the
generator or the reference is nondeterministic (two runs differ), an output is not plain JSON
or too large, the outputs hardly vary, the whole run is slow, or the reference, submitted as
an agent's code is, fails its own tests; the filtered index, with the tests, is cached
under :func:`~textgyms.envs.code.tasks.cache_dir` (see :class:`Index`).

Difficulty: the dataset's 1-10 rating, as easy (2-6: 530 items), medium (7: 393) and hard
(8-9: 2,079).
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from textgyms.envs.code import verify
from textgyms.envs.code.tasks import INDEX_VERSION, CodeTask, cache_dir, checked_sha256, in_split
from textgyms.errors import DataError
from textgyms.sandbox import Sandbox

N_PUBLIC, N_HIDDEN = 3, 10
MAX_VALUE_CHARS = 1500  # a test's input or output longer than this (as JSON) is filtered
ITEM_BUDGET = 1.0  # seconds for all of an item's runs (slower items are filtered out)
# Each reference runs twice per input, the global generators (``random``'s and numpy's, which
# a child inherits from its zygote, seeded at random) seeded differently for the two runs, but
# the same way on every machine: a reference that draws from them gives two outputs (and is
# filtered out), and the verdict on one whose output does not depend on the draws (rarely) is
# the same everywhere, so every machine's index holds the same items. (The module's own top
# level runs after :func:`_seeded`'s prologue, for the same reason.)
_HARNESS = """

import copy as _tg_copy


def _tg_pairs(seeds):
    out = []
    for s in seeds:
        a = generate_inputs(Random(s))
        b = generate_inputs(Random(s))
        _tg_seed(2 * s)
        first = main_solution(**_tg_copy.deepcopy(a))
        _tg_seed(2 * s + 1)
        second = main_solution(**_tg_copy.deepcopy(a))
        out.append([a, b, first, second])
    return out
"""


def data_path() -> Path:
    """The CodeI/O data file of the installed ``reasoning-gym`` package."""
    try:
        import reasoning_gym.data as rg_data
    except ImportError as exc:
        raise DataError(
            'dataset="codeio" needs the reasoning-gym package: pip install "textgyms[code]"'
        ) from exc
    return Path(rg_data.__file__).with_name("codeio.jsonl.gz")


@functools.cache
def problems() -> tuple[dict[str, Any], ...]:
    """The raw CodeI/O records, in file order."""
    with gzip.open(data_path(), "rt", encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


def difficulty_of(rating: int) -> str:
    """The 1-10 rating as easy, medium or hard (bands of similar use, see the docstring)."""
    return "easy" if rating <= 6 else "medium" if rating == 7 else "hard"


def _seeded(code: str, seed: int) -> str:
    """``code`` after a prologue that defines ``_tg_seed(s)``, which seeds the global
    generators with ``s`` (``random``'s, and numpy's where the code names numpy: the prologue
    names it only then, so that other code keeps its lean zygote), and calls it with
    ``seed``."""
    if "numpy" in code:
        head = ("import random as _tg_r, numpy as _tg_np\n"
                "def _tg_seed(s): _tg_r.seed(s); _tg_np.random.seed(s % 2**32)\n")
    else:
        head = "import random as _tg_r\ndef _tg_seed(s): _tg_r.seed(s)\n"
    return f"{head}_tg_seed({seed})\n{code}"


def item_tests(box: Sandbox, item: dict[str, Any]) -> list[list[str]] | None:
    """The item's tests as ``[inputs_json, output_json]`` pairs, or None if it is filtered."""
    code = _seeded("from random import Random\n\n" + item["code_sample"] + "\n\n" + item[
        "input_generator"
    ] + _HARNESS, 1)
    seeds = list(range(N_PUBLIC + N_HIDDEN))
    ex = box.call(code, "_tg_pairs", [[seeds]], test_timeout=ITEM_BUDGET, timeout=ITEM_BUDGET + 1)
    call = ex.calls[0]
    if call is None or not call.ok or not isinstance(call.value, list):
        return None
    tests = []
    for a, b, first, second in call.value:
        pair = [_plain_json(a), _plain_json(first)]
        if not isinstance(a, dict) or pair[0] != _plain_json(b) or pair[1] != _plain_json(second):
            return None  # not a kwargs dict, or nondeterministic (or not JSON)
        if pair[0] is None or pair[1] is None or max(map(len, pair)) > MAX_VALUE_CHARS:
            return None
        if "textgyms-sandbox-" in pair[0] + pair[1]:
            return None  # depends on the (random) working directory
        tests.append(pair)
    if len({t[1] for t in tests}) < 3:
        return None  # (almost) constant outputs: a constant would pass
    return tests if _reference_passes(box, item, tests) else None


def _reference_passes(box: Sandbox, item: dict[str, Any], tests: list[list[str]]) -> bool:
    """Whether the reference, submitted as an agent's code is (a fresh child that gets only
    the inputs, graded by :func:`verify.outcomes`), passes every test. One that read a file
    its input generator wrote, or drew a module-level random number, fails its own tests:
    no solution could pass them."""
    task = _task(item, -1, tests)
    pairs = (*task.public, *task.hidden)
    # Seeded otherwise than the runs that made the tests, the same on every machine (so the
    # verdict is too): a module-level draw gives other outputs here.
    ex = box.call(_seeded(item["code_sample"], 2), task.entry, [task.args(t) for t in pairs],
                  by_name=True, test_timeout=ITEM_BUDGET, timeout=ITEM_BUDGET + 1)
    return all(r.passed for r in verify.outcomes(task, pairs, ex))


def _plain_json(value: Any) -> str | None:
    """Canonical JSON of a plain JSON value (no tuples, no non-string keys, finite)."""
    try:
        text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == value else None


class Index:
    """The filter verdicts and tests of the items evaluated so far, backed by an append-only
    JSON-lines cache file shared by every process (one line per item, appended atomically).

    Items are evaluated lazily, the first time one is drawn, so a fresh machine pays for the
    items it uses (about 50 ms each) instead of filtering all 3,002 at once;
    ``scripts/code_build_codeio.py`` fills the whole cache ahead of time."""

    def __init__(self) -> None:
        sha = checked_sha256(data_path(), "reasoning-gym/codeio.jsonl.gz")
        self.path = cache_dir() / f"codeio-v{INDEX_VERSION}-{sha[:16]}.jsonl"
        self.known: dict[int, list[list[str]] | None] = {}
        self._read()

    def _read(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        for line in lines:
            try:
                row = json.loads(line)
                # The first verdict written wins: two processes that evaluated the same item
                # at once (and might disagree on a borderline timeout) then agree.
                self.known.setdefault(int(row["index"]), row["tests"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn line from a crashed writer: re-evaluated when needed

    def tests(self, box: Sandbox, i: int) -> list[list[str]] | None:
        """Item ``i``'s tests (None: filtered out), evaluating and caching it if new."""
        if i not in self.known:
            self._read()  # another process may have evaluated it meanwhile
        if i not in self.known:
            tests = item_tests(box, problems()[i])
            line = json.dumps({"index": i, "tests": tests}, separators=(",", ":")) + "\n"
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, line.encode())  # one O_APPEND write: lines never interleave
                finally:
                    os.close(fd)
            except OSError as exc:
                warnings.warn(f"cannot write the CodeI/O cache {self.path}: {exc}",
                              RuntimeWarning, 2)  # fmt: skip
            self._read()
            self.known.setdefault(i, tests)
        return self.known[i]


@functools.cache
def index() -> Index:
    """The process's view of the cached filtered index."""
    return Index()


@functools.cache
def candidates(split: str, difficulty: str) -> tuple[int, ...]:
    """Source indices in ``split`` (fixed by id) and ``difficulty`` ("mixed": all)."""
    rows = problems()
    return tuple(
        i for i, row in enumerate(rows)
        if in_split(f"codeio/{i}", split)
        and difficulty in ("mixed", difficulty_of(int(row.get("difficulty", 5))))
    )  # fmt: skip


def generate(rng: np.random.Generator, box: Sandbox, difficulty: str, split: str) -> CodeTask:
    """A kept item drawn uniformly from ``split`` and ``difficulty`` with ``rng`` only."""
    pool = candidates(split, difficulty)
    for _ in range(500):
        i = pool[int(rng.integers(len(pool)))]
        tests = index().tests(box, i)
        if tests is not None:
            return _task(problems()[i], i, tests)
    raise DataError(f"no usable CodeI/O item found in 500 draws ({split}, {difficulty})")


def _task(item: dict[str, Any], index: int, tests: list[list[str]]) -> CodeTask:
    pairs = [(t[0], t[1]) for t in tests]
    return CodeTask(
        dataset="codeio",
        source_id=f"codeio/{index}",
        difficulty=difficulty_of(int(item.get("difficulty", 5))),
        entry="main_solution",
        by_name=True,
        description=item["task_description"].strip()
        + "\n\n"
        + item["input_output_spec"].strip()
        + "\n\nWrite a function `main_solution` that takes the inputs above as keyword "
        "arguments and returns the output (JSON-serializable values only).",
        signature="def main_solution(**inputs):\n    ...",
        public=tuple(pairs[:N_PUBLIC]),
        hidden=tuple(pairs[N_PUBLIC:]),
        reference=item["code_sample"],
    )
