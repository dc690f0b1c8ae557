"""NetConfig's ``warm``: drawing a task ahead (``pregenerate``, a vector's reset-ahead) also
compiles and checks its starting network, so an agent's first tool step and a wrong
submission's baseline find them done, and every result is what it is without it."""

from __future__ import annotations

import gymnasium as gym
import pytest

from textgyms.envs.netconfig import checks, memo, verify
from textgyms.envs.netconfig import env as netconfig_env
from textgyms.envs.netconfig.generate import FAMILIES

ENV_ID = "textgyms/NetConfig-v4"
ANSWERED = ("diagnosis", "analysis")  # graded on a JSON answer, not on checks
FAULTED = ("repair", "diagnosis")  # generation compiles the faulted starting network


def _clear() -> None:
    """Forget every compiled network and check result (a cold process, as far as a step sees)."""
    for cache in (memo.NETWORKS, memo.DERIVED, verify._RESULTS, verify._TASK_VALUES,
                  netconfig_env._TASKS):
        cache.clear()
    verify._values_of_equal.cache_clear()  # a task's derived values (its baseline among them)


def _wrong(task) -> str:
    """The reference with its first device's config cut to its first line, or a wrong answer."""
    if task.family in ANSWERED:
        return '<submit>{"device": "R9", "component": "x", "cause": "y"}</submit>'
    (first, text), *rest = task.reference
    sections = [(first, text.splitlines()[0]), *rest]
    return "<submit>\n" + "\n".join(f"! device {d}\n{t}" for d, t in sections) + "\n</submit>"


def _episode(env, seed: int, counts: dict[str, int]) -> tuple[list, list[dict[str, int]]]:
    """Reset, one tool step, a wrong submission: everything each returns, and the compiles
    and check runs (``counts``) of the tool step and of the submission."""
    out, seen = [env.reset(seed=seed)], []
    first = env.unwrapped.task.start[0][0]
    for action in (f'<show_ip_route device="{first}"/>', _wrong(env.unwrapped.task)):
        counts.clear()
        out.append(env.step(action))
        seen.append(dict(counts))
    return out, seen


@pytest.mark.parametrize("family", FAMILIES)
def test_a_task_drawn_ahead_is_compiled_and_checked_ahead_with_the_same_results(
        family, monkeypatch):
    counts: dict[str, int] = {}
    compile_, run = memo._compile, checks.run

    def counting_compile(*args, **kwargs):
        counts["compiles"] = counts.get("compiles", 0) + 1
        return compile_(*args, **kwargs)

    def counting_run(*args, **kwargs):
        counts["checks"] = counts.get("checks", 0) + 1
        return run(*args, **kwargs)

    monkeypatch.setattr(memo, "_compile", counting_compile)
    monkeypatch.setattr(checks, "run", counting_run)
    seed = 23
    _clear()
    expected, cold = _episode(gym.make(ENV_ID, family=family, difficulty="hard"), seed, counts)
    _clear()
    ahead = gym.make(ENV_ID, family=family, difficulty="hard")
    ahead.unwrapped.pregenerate(seed)
    got, warm = _episode(ahead, seed, counts)
    assert got == expected
    # Cold, the first tool step compiles the starting network (unless generating a fault
    # did); drawn ahead, it was ready.
    assert cold[0] == ({} if family in FAULTED else {"compiles": 1}) and warm[0] == {}
    if family not in ANSWERED:
        assert expected[-1][-2] < 1.0  # a wrong answer (an answer that needs the baseline)
        # Cold, the submission checks the candidate and the starting network (its baseline);
        # drawn ahead, the candidate only.
        assert (cold[1], warm[1]) == ({"compiles": 1, "checks": 2}, {"compiles": 1, "checks": 1})
