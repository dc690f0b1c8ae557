"""The policy interface and what model-backed policies return (the ``--policy SPEC`` parser,
which builds every kind of policy, is :mod:`textgyms.policies.spec`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from textgyms.core import MESSAGES, TASK_ID, TOOLS
from textgyms.errors import TextgymsError

Messages = list[dict[str, Any]]


class InferenceError(TextgymsError):
    """An inference server or model failed (after retries); the message names the cause."""


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


@dataclass
class Generation:
    """One completion of a model-backed policy (``policy.last`` holds those of the last batch).

    ``prompt_ids``/``completion_ids``/``logprobs`` are filled by policies that see tokens
    (``HFPolicy``/``VLLMPolicy`` with ``return_tokens=True``); ``usage`` has the server's or
    the tokenizer's ``prompt_tokens`` and ``completion_tokens``.
    """

    text: str
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None


class ToolCache:
    """The env's tool schemas per episode: ``info["tools"]`` comes with the reset info only,
    so it is remembered by task id for the later steps of the same episode."""

    def __init__(self, limit: int = 4096) -> None:
        self._by_task: dict[str, list[dict[str, Any]]] = {}
        self._limit = limit

    def get(self, info: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The tools of the episode ``info`` belongs to (None if never seen)."""
        task_id = info.get(TASK_ID)
        tools = info.get(TOOLS)
        if tools is not None and task_id is not None:
            if len(self._by_task) >= self._limit:  # bounded: drop the oldest episode
                self._by_task.pop(next(iter(self._by_task)))
            self._by_task[task_id] = tools
        return tools if tools is not None else self._by_task.get(task_id)


def chat_messages(observation: Any, info: Mapping[str, Any], system: str | None = None) -> Messages:
    """The conversation to send to a chat model for one env.

    A ``ChatHistory`` observation is already the message list; otherwise the env's transcript
    ``info["messages"]`` is used, or the observation as a single user message.
    """
    if isinstance(observation, list):
        messages = [dict(m) for m in observation]
    elif info.get(MESSAGES):
        messages = [dict(m) for m in info[MESSAGES]]
    else:
        messages = [{"role": "user", "content": str(observation)}]
    if system is not None and (not messages or messages[0]["role"] != "system"):
        messages.insert(0, {"role": "system", "content": system})
    return messages
