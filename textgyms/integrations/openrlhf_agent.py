"""OpenRLHF agent function for textgyms envs: give this file to ``--train.agent_func_path``.

``textgyms integrations path openrlhf`` prints its installed path. OpenRLHF (0.11) loads the file,
builds ``AgentExecutor()`` with no arguments and, for every prompt, plays one
:class:`AgentInstance` with its ``MultiTurnAgentExecutor`` loop: the model continues the token
sequence, ``step`` plays the completion in the env, and the env's answer is appended as the
next user turn rendered with the model's own chat template (the shared token rule,
:func:`textgyms.tokens.observation_turn`: any template, including ones that are not prefix
preserving such as Qwen3's and gpt-oss', and ones that trim content).

Which env a prompt plays is named by its **label** (``--data.label_key``): a task row, i.e. a
mapping with ``env_id``, ``env_kwargs``, ``seed`` and ``split`` (at top level or in
``extra_info``), or its JSON text. Rows written by ``textgyms export tasks`` carry these keys;
use ``--data.label_key extra_info``. The prompt (``--data.input_key prompt
--data.apply_chat_template``) must hold the env's prompt for that seed; ``reset`` checks it,
so rows made for another env version fail at once instead of training on a different task.

Rewards: each step returns the env's reward (OpenRLHF sums them into the return) and the score
as things stand (OpenRLHF keeps the last). When OpenRLHF's length budget (``max_len``) would
end the episode before the env does, the last step pays what the env's last step would (the
score as things stand less penalties), so the return equals ``Episode.reward()`` either way,
and the metric ``context_cut`` is 1. An env answer longer than ``$TEXTGYMS_MAX_OBS_TOKENS``
tokens is cut with a marker. The env is built, stepped and closed on textgyms' env threads,
never on OpenRLHF's event loop (which also serves the vLLM engine's other requests).
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Mapping
from typing import Any

import torch
from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

from textgyms.errors import ConfigError
from textgyms.integrations.episode import (
    COMMON_METRICS,
    Episode,
    TaskRow,
    cut_observation,
    obs_token_limit,
)
from textgyms.tokens import observation_turn

__all__ = ["AgentExecutor", "AgentInstance", "feedback_template"]


class _Rollout:
    """What the executor knows and the instance needs: the tokenizer, the last generation."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.action_ids: list[int] = []


# One per executed prompt: set by AgentExecutor.execute, read by the instance it creates.
_ROLLOUT: contextvars.ContextVar[_Rollout] = contextvars.ContextVar("textgyms_openrlhf")


class _RecordingEngine:
    """The trainer's engine, keeping the token ids of the last completion for the instance."""

    def __init__(self, engine: Any, rollout: _Rollout) -> None:
        self.engine, self.rollout = engine, rollout

    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        output = await self.engine.generate(*args, **kwargs)
        self.rollout.action_ids = list(output.outputs[0].token_ids)
        return output


def feedback_template(tokenizer: Any, observation: str, ended_turn: bool) -> str:
    """The text that follows a completion: the end of the assistant turn (left out when the
    model ended its turn itself), the observation as a user turn, and the next assistant
    header, as the tokenizer's chat template renders them (:func:`textgyms.tokens.observation_turn`,
    the rule every token-level adapter shares). OpenRLHF tokenises this text again; it starts
    at a special token, so the ids are the rendered ones."""
    turn = observation_turn(tokenizer, [{"role": "user", "content": observation}])
    ids = list(turn.body) if ended_turn else [*turn.close, *turn.body]
    return tokenizer.decode(ids, skip_special_tokens=False)


def _shows(prompt: str, observation: str) -> bool:
    """Whether the rendered ``observation`` holds the env's ``prompt``, whitespace aside
    (templates such as Llama 3.1's and Gemma 3's trim message content)."""
    return " ".join(prompt.split()) in " ".join(observation.split())


def _row(label: Any) -> TaskRow:
    """The task row a label names (a mapping or its JSON text)."""
    if isinstance(label, str):
        try:
            label = json.loads(label)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"label is not a task row (JSON): {exc}; write rows with `textgyms "
                              "export tasks` and pass --data.label_key extra_info") from exc
    if not isinstance(label, Mapping):
        raise ConfigError(f"label must be a task row, got {type(label).__name__}")
    return TaskRow.from_row(label)


class AgentInstance(AgentInstanceBase):
    """One textgyms episode, played by OpenRLHF's multi-turn loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.episode: Episode | None = None
        self.rollout = _Rollout(None)  # the executor's, once reset runs inside it
        self.paid = 0.0  # rewards handed to OpenRLHF so far

    async def reset(self, states: dict, **kwargs: Any) -> dict:
        """Make the label's env on its seed; check the prompt is that env's prompt."""
        self.rollout = _ROLLOUT.get(self.rollout)
        # Env work runs off the loop: inside the vLLM actor it serves every other request.
        self.episode = await Episode.aopen(_row(states["label"]))
        if not _shows(self.episode.prompt, states["observation"]):
            await self.episode.aclose()
            row = self.episode.row
            raise ConfigError(f"the prompt is not the prompt of {row.env_id} at seed {row.seed} "
                              "(rows made for other kwargs or another version?)")
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs: Any) -> dict:
        """Play the completion; the feedback is the observation as the next user turn."""
        episode = self.episode
        if episode is None:
            raise ConfigError("AgentInstance.step before reset")
        result = await episode.astep(states["action_text"])
        feedback = "" if result.done else self._feedback(result.observation)
        done = result.done or self._out_of_budget(states.get("sampling_params"), feedback)
        episode.context_cut = done and not result.done
        reward = result.reward if not done else episode.reward() - self.paid
        self.paid += reward
        # OpenRLHF stacks extra_logs per key over the batch and logs the means: the dataset's
        # fixed keys, other envs' filled with 0.0 (``<env>/episodes`` is each env's share).
        metrics = episode.metrics(episode.row.metric_keys or COMMON_METRICS, fill=0.0)
        if done:
            await episode.aclose()
        return {"rewards": torch.tensor(reward), "scores": metrics["score"],
                "environment_feedback": feedback, "done": done,
                "sampling_params": states.get("sampling_params"), "extra_logs": metrics}

    def _feedback(self, observation: str) -> str:
        tokenizer = self.rollout.tokenizer
        observation = cut_observation(observation, obs_token_limit(), tokenizer)
        if tokenizer is None:  # no executor context (a bare instance): plain text turns
            return f"\n{observation}\n"
        turn = observation_turn(tokenizer, [{"role": "user", "content": observation}])
        ids = turn.ids_after(self.rollout.action_ids)
        return tokenizer.decode(ids, skip_special_tokens=False)

    def _out_of_budget(self, sampling_params: Any, feedback: str) -> bool:
        """Whether OpenRLHF will stop after this step: its next budget is the current one
        less this completion and the feedback (the loop breaks at a budget <= 0)."""
        budget = getattr(sampling_params, "max_tokens", None)
        tokenizer = self.rollout.tokenizer
        if budget is None or tokenizer is None:
            return False
        used = len(self.rollout.action_ids)
        used += len(tokenizer(text=feedback, add_special_tokens=False)["input_ids"])
        return budget - used <= 0


class AgentExecutor(MultiTurnAgentExecutor):
    """OpenRLHF's multi-turn executor over :class:`AgentInstance` (built with no arguments)."""

    def __init__(self) -> None:
        super().__init__(AgentInstance)

    async def execute(self, prompt: Any, label: Any, sampling_params: Any, max_length: int,
                      hf_tokenizer: Any, llm_engine: Any, images: Any = None) -> dict:
        """Run OpenRLHF's loop with the tokenizer and token ids visible to the instance."""
        rollout = _Rollout(hf_tokenizer)
        token = _ROLLOUT.set(rollout)
        try:
            return await super().execute(prompt, label, sampling_params, max_length,
                                         hf_tokenizer, _RecordingEngine(llm_engine, rollout),
                                         images)
        finally:
            _ROLLOUT.reset(token)
