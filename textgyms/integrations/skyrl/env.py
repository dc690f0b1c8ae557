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
* ``get_metrics()``: :meth:`Episode.metrics` under the dataset's fixed keys (score, solved,
  turns, return, finished, invalid actions, ``<env>/...`` keys with the verdict's parts; other
  envs' keys NaN), and :meth:`TextgymsEnv.aggregate_metrics` averages each key over the
  episodes that report it, so ``<env>/score`` is that env's mean even in a mixture.
* budget (``env_config``, SkyRL's ``environment.skyrl_gym.textgyms`` section):
  ``max_obs_tokens`` cuts env answers to that many UTF-8 bytes (an upper bound on tokens) with
  a marker (default ``$TEXTGYMS_MAX_OBS_TOKENS``); ``max_context_tokens`` (set it to
  ``generator.max_input_length``) ends an episode whose transcript could outgrow it, paid the
  score as things stand (``context_cut`` 1), where SkyRL's own length stop would pay nothing.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from textgyms.errors import ConfigError
from textgyms.integrations.episode import Episode, TaskRow, cut_observation, obs_token_limit

__all__ = ["TextgymsEnv"]


class TextgymsEnv(BaseTextEnv):
    """A textgyms env as a SkyRL text env (module docstring)."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        row = TaskRow.from_row(extras)
        # SkyRL passes its config section for the env class: an empty dict when it has none, a
        # dataclass under SkyRL 0.4's typed config (skyrl.main.config_class), a mapping in 0.3
        config = (env_config if isinstance(env_config, Mapping) else
                  vars(env_config) if dataclasses.is_dataclass(env_config) else {})
        defaults = dict(config.get("env_kwargs") or {})
        self.row = TaskRow(row.env_id, {**defaults, **row.env_kwargs}, row.seed, row.split,
                           row.task_id, row.metric_keys)
        self.max_obs_tokens = obs_token_limit(config.get("max_obs_tokens"))
        self.max_context = config.get("max_context_tokens")  # None: SkyRL's own limit only
        self.context = 0  # an upper bound on the transcript's tokens so far
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
            self.context = _size(env_messages)
            return env_messages, self._identity()
        messages = [{"role": m["role"], "content": m["content"]} for m in prompt]
        if [m for m in messages if m["role"] != "system"] != [
            m for m in env_messages if m["role"] != "system"
        ]:
            raise ConfigError(
                f"the row's prompt is not what {self.row.env_id} (seed {self.row.seed}) shows; "
                "re-export the dataset with `textgyms export tasks --for skyrl`")
        self.context = _size(messages)
        return messages, self._identity()

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One turn: the env's answer as a user message, the step's reward, done."""
        if self.episode is None:
            raise ConfigError("TextgymsEnv.step before init(prompt): SkyRL calls init first")
        result = self.episode.step(action)
        self.turns += 1
        observation = cut_observation(result.observation, self.max_obs_tokens)
        self.context += _size([{"role": "assistant", "content": action},
                               {"role": "user", "content": observation}])
        over = self.max_context is not None and self.context > int(self.max_context)
        self.episode.context_cut = over and not result.done
        cut = (bool(self.max_turns) and self.turns >= self.max_turns or over) and not result.done
        done = result.done or cut
        reward = self.episode.reward() - self.paid if done else result.reward
        self.paid += reward
        observations = [] if done else [{"role": "user", "content": observation}]
        metadata = {"observation": result.observation, "terminated": result.terminated,
                    "truncated": result.truncated, "cut": cut}
        return BaseTextEnvStepOutput(observations=observations, reward=reward, done=done,
                                     metadata=metadata, postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """The episode's numbers under the dataset's fixed keys (other envs' keys NaN)."""
        if self.episode is None:
            return dict(self.last_metrics)
        return self.episode.metrics(fill=math.nan)

    @staticmethod
    def aggregate_metrics(metrics: list[dict[str, Any]]) -> dict[str, Any]:
        """Each numeric key's mean over the episodes that report a number for it (SkyRL calls
        this per env class; every textgyms id shares the one class)."""
        sums: dict[str, list[float]] = {}
        for m in metrics:
            for key, value in m.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) \
                        and not math.isnan(value):
                    sums.setdefault(key, []).append(float(value))
        return {key: sum(v) / len(v) for key, v in sums.items()}

    def close(self) -> None:
        """Close the episode's env (sandboxes, index handles)."""
        if self.episode is not None:
            self.last_metrics = self.get_metrics()  # SkyRL may ask after closing
            self.episode.close()
            self.episode = None

    def _identity(self) -> dict[str, Any]:
        """What the episode is, for SkyRL's logs."""
        return {"env_id": self.row.env_id, "seed": self.row.seed, "task_id": self.row.task_id}


def _size(messages: list[dict[str, Any]]) -> int:
    """An upper bound on the tokens of ``messages``: their UTF-8 bytes plus 8 per message for
    the template's headers (a byte-level tokenizer never needs more tokens than bytes)."""
    return sum(len(json.dumps(m["content"], ensure_ascii=False).encode()) + 8 for m in messages)
