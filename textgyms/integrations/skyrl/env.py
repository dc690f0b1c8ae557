"""The SkyRL env: one textgyms episode behind ``skyrl_gym``'s ``BaseTextEnv`` contract.

* ``__init__(env_config, extras)``: the episode's row from ``extras`` (the dataset row's
  columns; env id, kwargs and seed at top level or in ``extra_info``, see
  :class:`~textgyms.integrations.episode.TaskRow`). ``extras["max_turns"]`` (set by SkyRL's
  generator from ``generator.max_turns``) is the trainer's turn limit; ``env_config`` may give
  ``env_kwargs`` that every row's env gets unless the row sets them (deployment settings such
  as Search's ``es_url``; kwargs that change the prompt make ``init`` refuse the row).
* ``init(prompt)``: resets the env on the row's seed and returns the prompt (checked against
  the env's own first messages; a system message the dataset added is kept).
* ``step(completion)``: steps the env with the model's raw completion; the observation is the
  env's answer as one ``user`` message (none once done), ``done`` is terminated or truncated or
  the trainer's turn limit reached. The rewards of an episode add up to its return
  (:meth:`Episode.reward`): each step pays the env's reward, and a step at which the trainer
  cuts the episode short pays what the env's last step would (the score as things stand less
  invalid-action penalties, minus what was already paid).
* ``get_metrics()``: score, solved, turns, return and finished, which SkyRL averages per
  env class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from textgyms.errors import ConfigError
from textgyms.integrations.episode import Episode, TaskRow

__all__ = ["TextgymsEnv"]


class TextgymsEnv(BaseTextEnv):
    """A textgyms env as a SkyRL text env (module docstring)."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        row = TaskRow.from_row(extras)
        # SkyRL passes its config section for the env class: an empty dict when it has none, a
        # dataclass under SkyRL 0.4's typed config (skyrl.main.config_class), a mapping in 0.3
        defaults = dict((env_config.get("env_kwargs") if isinstance(env_config, Mapping)
                         else getattr(env_config, "env_kwargs", None)) or {})
        self.row = TaskRow(row.env_id, {**defaults, **row.env_kwargs}, row.seed, row.split,
                           row.task_id)
        self.max_turns = int(extras.get("max_turns") or 0)  # 0: the env's own limit only
        self.episode: Episode | None = None
        self.paid = 0.0
        self.last_metrics: dict[str, Any] = {}

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset on the row's seed; return the prompt messages and the task's identity."""
        self.close()
        self.episode = Episode(self.row)
        self.turns, self.paid = 0, 0.0
        env_messages = self.episode.messages
        if not prompt:
            return env_messages, self._identity()
        messages = [{"role": m["role"], "content": m["content"]} for m in prompt]
        if [m for m in messages if m["role"] != "system"] != [
            m for m in env_messages if m["role"] != "system"
        ]:
            raise ConfigError(
                f"the row's prompt is not what {self.row.env_id} (seed {self.row.seed}) shows; "
                "re-export the dataset with `textgyms export tasks --for skyrl`")
        return messages, self._identity()

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One turn: the env's answer as a user message, the step's reward, done."""
        if self.episode is None:
            raise ConfigError("TextgymsEnv.step before init(prompt): SkyRL calls init first")
        result = self.episode.step(action)
        self.turns += 1
        cut = bool(self.max_turns) and self.turns >= self.max_turns and not result.done
        done = result.done or cut
        reward = self.episode.reward() - self.paid if done else result.reward
        self.paid += reward
        observations = [] if done else [{"role": "user", "content": result.observation}]
        metadata = {"observation": result.observation, "terminated": result.terminated,
                    "truncated": result.truncated, "cut": cut}
        return BaseTextEnvStepOutput(observations=observations, reward=reward, done=done,
                                     metadata=metadata, postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """The episode's numbers: score, solved, turns, return, finished."""
        return self.episode.metrics() if self.episode is not None else dict(self.last_metrics)

    def close(self) -> None:
        """Close the episode's env (sandboxes, index handles)."""
        if self.episode is not None:
            self.last_metrics = self.episode.metrics()  # SkyRL may ask after closing
            self.episode.close()
            self.episode = None

    def _identity(self) -> dict[str, Any]:
        """What the episode is, for SkyRL's logs."""
        return {"env_id": self.row.env_id, "seed": self.row.seed, "task_id": self.row.task_id}
