"""The policy interface and the ``--policy SPEC`` parser of the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from textgyms.errors import ConfigError


@runtime_checkable
class Policy(Protocol):
    """Maps a batch of observations to a batch of actions (the model's raw completions)."""

    def act(
        self, observations: Sequence[Any], infos: Sequence[dict[str, Any]], envs: Any = None
    ) -> list[str]:
        """One action per observation. ``envs`` gives scripted policies access to the envs."""
        ...

    def spec(self) -> dict[str, Any]:
        """A JSON-able description (name, model, sampling parameters) for run metadata."""
        ...


POLICY_SPECS = ("oracle", "random")


def make_policy(spec: str, seed: int = 0) -> Policy:
    """Build a policy from a CLI spec: ``oracle`` or ``random``."""
    from textgyms.policies.scripted import ScriptedPolicy

    if spec in ("oracle", "random"):
        return ScriptedPolicy(spec, seed=seed)
    raise ConfigError(f"unknown policy {spec!r}; choose one of: {', '.join(POLICY_SPECS)}")
