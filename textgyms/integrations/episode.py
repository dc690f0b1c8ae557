"""The pieces every trainer adapter shares: a task row and an episode played turn by turn.

A **task row** names one episode: ``env_id``, ``env_kwargs`` (a JSON object, or its text as
Arrow stores it), ``seed`` and ``split`` (the env's own ``split`` kwarg), plus ``task_id`` for
reference. ``textgyms export tasks`` writes these keys as top-level columns and repeats them in
``extra_info`` (the column verl and SkyRL hand to their plug-ins), so :meth:`TaskRow.from_row`
reads either place.

An :class:`Episode` is the env side of one rollout, the same for every adapter: reset on the
row's seed, step with the model's raw completion, add the rewards up, and report the metrics
trainers log (score, solved, turns, return).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import gymnasium as gym

from textgyms.core import ERROR, MESSAGES, SCORE, SOLVED, TOOLS, TURN
from textgyms.errors import ConfigError

__all__ = ["ROW_KEYS", "Episode", "StepResult", "TaskRow"]

ROW_KEYS = ("env_id", "env_kwargs", "seed", "split", "task_id")


def _as_mapping(value: Any, what: str) -> dict[str, Any]:
    """A dict from a dict or its JSON text (Arrow and parquet store kwargs as strings)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{what} is not valid JSON: {exc}") from exc
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what} must be a JSON object, got {type(value).__name__}")
    return dict(value)


@dataclass(frozen=True)
class TaskRow:
    """One episode to play: which env, how configured, which seed."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    split: str = "train"
    task_id: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TaskRow:
        """Read a row of any adapter: the keys at top level, or inside ``extra_info``.

        A row's ``split`` becomes the env's ``split`` kwarg when the kwargs do not set it; a
        row whose two splits disagree is refused (it would train on test tasks).
        """
        extra = _as_mapping(row.get("extra_info"), "extra_info")
        merged = {**extra, **{k: row[k] for k in ROW_KEYS if row.get(k) is not None}}
        if not merged.get("env_id"):
            raise ConfigError(
                f"task row has no env_id (keys: {', '.join(sorted(row))}); write rows with "
                "`textgyms export tasks`"
            )
        kwargs = _as_mapping(merged.get("env_kwargs"), "env_kwargs")
        split = str(merged.get("split") or kwargs.get("split") or "train")
        if kwargs.setdefault("split", split) != split:
            raise ConfigError(
                f"task row split {split!r} disagrees with env_kwargs split {kwargs['split']!r}"
            )
        return cls(str(merged["env_id"]), kwargs, int(merged.get("seed") or 0), split,
                   str(merged.get("task_id") or ""))

    def columns(self) -> dict[str, Any]:
        """The row's keys as dataset columns (kwargs as JSON text, one Arrow type for all)."""
        return {"env_id": self.env_id, "env_kwargs": json.dumps(self.env_kwargs, sort_keys=True),
                "seed": self.seed, "split": self.split, "task_id": self.task_id}

    def make(self) -> gym.Env:
        """A new env for this row (``ConfigError`` names a bad id or kwarg at once)."""
        import textgyms  # noqa: F401  (registers the ids)

        return gym.make(self.env_id, **self.env_kwargs)


class StepResult(NamedTuple):
    """What one agent turn gave: the env's answer and whether the episode is over."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        """The episode ended (solved, failed or cut at the env's turn limit)."""
        return self.terminated or self.truncated


class Episode:
    """One episode of a task row, played by an adapter with the model's raw completions."""

    def __init__(self, row: TaskRow, env: gym.Env | None = None) -> None:
        self.row = row
        self.env = env if env is not None else row.make()
        self.prompt, self.info = self.env.reset(seed=row.seed)
        self.total_reward = 0.0
        self.penalties = 0.0
        self.done = False

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The env's tools in OpenAI function format (from the reset info)."""
        return list(self.info.get(TOOLS) or [])

    @property
    def messages(self) -> list[dict[str, str]]:
        """The transcript so far as chat messages (prompt first)."""
        return [dict(m) for m in self.info.get(MESSAGES, [])]

    def step(self, completion: str) -> StepResult:
        """Play one completion; raises ``ResetNeeded`` after the episode ended."""
        obs, reward, terminated, truncated, self.info = self.env.step(completion)
        self.total_reward += float(reward)
        if self.info.get(ERROR) is not None:
            self.penalties += self.env.unwrapped.invalid_penalty
        self.done = bool(terminated or truncated)
        return StepResult(obs, float(reward), bool(terminated), bool(truncated), self.info)

    def score(self) -> float:
        """The final score; for an episode the trainer cut short (its own turn or length
        limit), the score the env gives as things stand, as at the env's turn limit."""
        if self.done:
            return float(self.info.get(SCORE, 0.0))
        env = self.env.unwrapped
        return float(env.final_verdict(env.state).score)

    def reward(self) -> float:
        """The episode's return: the rewards summed, or for an episode cut short the score as
        things stand less any invalid-action penalties (what the env's last step would pay)."""
        if self.done:
            return self.total_reward
        return self.score() - self.penalties

    def metrics(self) -> dict[str, float]:
        """Numbers trainers log per episode: score, solved, turns, return, finished."""
        solved = bool(self.info.get(SOLVED, False)) if self.done else False
        return {"score": self.score(), "solved": float(solved),
                "turns": float(self.info.get(TURN, 0)), "return": self.reward(),
                "finished": float(self.done)}

    def close(self) -> None:
        """Close the env (sandboxes, index handles)."""
        self.env.close()
