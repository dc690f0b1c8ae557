"""Scripted policies: the oracle (each family's ``solve``), a seeded random baseline and the
blind baseline (the env's best constant action sequence, :mod:`textgyms.blind`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from textgyms.core import TASK_ID, TURN, check_choice

KINDS = ("oracle", "random", "blind")


class ScriptedPolicy:
    """``kind="oracle"`` replays ``solve(task)``; ``kind="random"`` plays ``sample_action``;
    ``kind="blind"`` plays the env's blind sequence, action ``t`` at turn ``t`` and its last
    action once the sequence is spent, whatever the observations and the task.

    The random policy draws from a generator seeded by ``(seed, task_id, turn)``, so its moves do
    not depend on batching, backend or the order in which envs are stepped.
    """

    def __init__(self, kind: Literal["oracle", "random", "blind"] = "oracle", seed: int = 0
                 ) -> None:
        self.kind = check_choice("scripted policy", kind, KINDS)
        self.seed = seed
        self._plans: dict[int, tuple[str, list[str]]] = {}

    def spec(self) -> dict[str, Any]:
        """Run metadata."""
        spec: dict[str, Any] = {"name": self.kind, "type": "scripted", "seed": self.seed}
        if self.kind == "blind":
            from textgyms.blind import BLIND_VERSION

            spec["blind_version"] = BLIND_VERSION
        return spec

    def act(
        self, observations: Sequence[Any], infos: Sequence[dict[str, Any]], envs: Any = None
    ) -> list[str]:
        """One action per env; ``envs`` is a list of Gymnasium envs or a textgyms VecEnv."""
        if envs is None:
            raise TypeError("ScriptedPolicy.act needs envs= (a list of envs or a VecEnv)")
        return [self._act_one(i, info, envs) for i, info in enumerate(infos)]

    def _act_one(self, i: int, info: dict[str, Any], envs: Any) -> str:
        task_id, turn = info[TASK_ID], int(info[TURN])
        if self.kind == "random":
            digest = int(task_id, 16) % (1 << 62)
            rng = np.random.default_rng([self.seed, digest, turn])
            return _call(envs, i, "sample_action", rng)
        cached = self._plans.get(i)
        if cached is None or cached[0] != task_id or turn == 0:
            cached = (task_id, self._plan(envs, i))
            self._plans[i] = cached
        plan = cached[1]
        if self.kind == "blind":  # a constant policy: its last action again once it is spent
            return plan[min(turn, len(plan) - 1)]
        # Past the end of the plan the oracle has nothing left to say; an empty action is
        # an invalid move, which only happens if the env disagrees with its own oracle.
        return plan[turn] if turn < len(plan) else ""

    def _plan(self, envs: Any, i: int) -> list[str]:
        """The oracle's actions for env ``i``'s task, or the blind sequence of its id and
        kwargs (fitted here, in the caller's process: it does not depend on the task)."""
        if self.kind == "oracle":
            return list(_call(envs, i, "oracle_actions"))
        from textgyms.blind import blind_actions

        return list(blind_actions(*_call(envs, i, "made_as")))


def _call(envs: Any, i: int, method: str, *args: Any) -> Any:
    """Call ``method`` on env ``i`` of a list of envs or of a VecEnv."""
    if hasattr(envs, "call_env"):
        return envs.call_env(i, method, *args)
    return getattr(envs[i].unwrapped, method)(*args)
