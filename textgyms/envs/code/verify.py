"""Scoring and feedback for ``textgyms/Code-v0``: pure functions of a task and what the
sandbox returned. Expected outputs live here, in the trusted parent, and are compared with
the plain values that crossed the sandbox boundary as JSON (type checks, float tolerance)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textgyms.core import Verdict
from textgyms.envs.code.tasks import CodeTask, Test
from textgyms.sandbox import Execution, values_equal

SCORINGS = ("fraction", "binary")
_STREAM_SHOWN = 1500  # characters of head and of tail shown per stream
_VALUE_SHOWN = 200


@dataclass(frozen=True)
class Outcome:
    """One test: ``passed``, and what was got (or the error) against what was expected."""

    passed: bool
    got: Any = None
    error: str | None = None


def outcomes(task: CodeTask, tests: tuple[Test, ...], ex: Execution) -> list[Outcome]:
    """Compare each call's value with the test's expected output; a call that never reported
    (the process died, timed out or overflowed first) fails."""
    result = []
    for test, call in zip(tests, ex.calls):
        if call is None:
            why = {"timeout": "time limit exceeded", "output_limit": "output limit exceeded",
                   "disk_limit": "disk limit exceeded (the work dir is full)",
                   "memory_limit": "memory limit exceeded"}
            result.append(Outcome(False, error=why.get(ex.status, "no result (the process "
                                                                   "exited or was killed)")))
        elif not call.ok:
            result.append(Outcome(False, error=call.error))
        else:
            result.append(Outcome(values_equal(call.value, task.expected(test)), call.value))
    return result


def submit_verdict(
    task: CodeTask, ex: Execution, scoring: str, turn_cost: float, turns_before: int,
    results: list[Outcome] | None = None,
) -> Verdict:
    """The final verdict of a submission on the hidden tests; ``results``: their
    :func:`outcomes`, when the caller has them already (each compares every output again)."""
    if results is None:
        results = outcomes(task, task.hidden, ex)
    passed, total = sum(r.passed for r in results), len(task.hidden)
    fraction = passed / total
    base = fraction if scoring == "fraction" else float(passed == total)
    cost = min(base, turn_cost * turns_before)
    score = base - cost
    feedback = f"Submitted: {passed}/{total} hidden tests passed."
    if ex.missing_entry:
        feedback += f" Your code does not define a function named `{task.entry}`."
    elif ex.status not in ("ok", "error"):
        feedback += f" The run ended with: {ex.status.replace('_', ' ')}."
    feedback += f" Score: {score:.2f}."
    error = None if passed == total else "wrong" if ex.status in ("ok", "error") else ex.status
    return Verdict(
        score=score,
        solved=passed == total,
        feedback=feedback,
        parts={"tests": fraction, "all_passed": float(passed == total), "turn_cost": cost},
        error=error,
    )


def call_text(task: CodeTask, args: Any) -> str:
    """How a test's call reads: ``f(1, [2])`` or ``main_solution(a=1)``."""
    if task.by_name and isinstance(args, dict):
        inner = ", ".join(f"{k}={short(v)}" for k, v in args.items())
    else:
        inner = ", ".join(short(v) for v in args)
    return f"{task.entry}({inner})"


def test_report(task: CodeTask, ex: Execution) -> str:
    """Per-example pass/fail with got/expected (public examples only)."""
    if ex.missing_entry:
        return f"Your code does not define a function named `{task.entry}`.\n" + _streams(ex)
    lines, results = [], outcomes(task, task.public, ex)
    for k, (test, res) in enumerate(zip(task.public, results), 1):
        call = call_text(task, task.args(test))
        expected = short(task.expected(test))
        if res.passed:
            lines.append(f"Example {k}: PASS  {call} -> {expected}")
        elif res.error is not None:
            lines.append(f"Example {k}: ERROR {call}: {res.error}")
        else:
            lines.append(f"Example {k}: FAIL  {call}: expected {expected}, got {short(res.got)}")
    passed = sum(r.passed for r in results)
    head = f"{passed}/{len(results)} examples passed."
    return "\n".join([head, *lines]) + ("\n" + _streams(ex) if ex.stdout or ex.stderr else "")


def run_report(ex: Execution) -> str:
    """Exit status and the (head and tail of the) output of a scratch run."""
    status = {
        "ok": "exit code 0",
        "error": f"exit code {ex.exit_code}",
        "timeout": "stopped: time limit exceeded",
        "killed": f"killed by signal {-ex.exit_code}",
        "output_limit": "stopped: output limit exceeded",
        "disk_limit": "disk limit exceeded (the work dir is full)",
        "memory_limit": "stopped: memory limit exceeded (MemoryError)",
    }.get(ex.status, ex.status)
    return f"Run finished: {status}.\n" + (_streams(ex) or "(no output)")


def _streams(ex: Execution) -> str:
    parts = []
    for name, text in (("stdout", ex.stdout), ("stderr", ex.stderr)):
        if text:
            parts.append(f"--- {name} ---\n{_head_tail(text)}")
    return "\n".join(parts)


def _head_tail(text: str) -> str:
    if len(text) <= 2 * _STREAM_SHOWN:
        return text.rstrip("\n")
    cut = len(text) - 2 * _STREAM_SHOWN
    return f"{text[:_STREAM_SHOWN]}\n[... {cut:,} characters cut ...]\n{text[-_STREAM_SHOWN:]}"


def short(value: Any) -> str:
    """``repr(value)``, cut to 200 characters."""
    text = repr(value)
    return text if len(text) <= _VALUE_SHOWN else text[: _VALUE_SHOWN - 3] + "..."
