"""``ChatHistory``: the observation becomes the whole chat transcript, for chat-template policies."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from textgyms.core import MESSAGES, TextSpace

Messages = list[dict[str, str]]


class ChatHistory(gym.ObservationWrapper):
    """Observations are ``[{"role": "user"|"assistant"|"system", "content": str}, ...]``.

    The list holds the prompt, every action (as ``assistant``) and every observation (as
    ``user``), ready for ``tokenizer.apply_chat_template``. ``system`` (optional) is prepended.
    The text observation of the step is still in ``info["text"]``.
    """

    def __init__(self, env: gym.Env, system: str | None = None) -> None:
        super().__init__(env)
        self.system = system
        content = env.observation_space
        max_chars = content.max_length if isinstance(content, TextSpace) else 1 << 20
        message = gym.spaces.Dict({"role": TextSpace(16), "content": TextSpace(max_chars)})
        self.observation_space = gym.spaces.Sequence(message, stack=False)
        self._info: dict[str, Any] = {}

    def reset(self, **kwargs: Any) -> tuple[Messages, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._info = info
        return self.observation(obs), self._with_text(info, obs)

    def step(self, action: str) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._info = info
        return self.observation(obs), reward, terminated, truncated, self._with_text(info, obs)

    def observation(self, observation: str) -> Messages:
        """The transcript from the latest info (the env keeps it, so nothing is re-built)."""
        messages = [dict(m) for m in self._info.get(MESSAGES, [{"role": "user", "content": observation}])]
        if self.system is not None:
            messages.insert(0, {"role": "system", "content": self.system})
        return messages

    @staticmethod
    def _with_text(info: dict[str, Any], obs: str) -> dict[str, Any]:
        return {**info, "text": obs}
