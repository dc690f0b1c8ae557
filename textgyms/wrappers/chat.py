"""``ChatHistory``: the observation becomes the whole chat transcript (for chat templates)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from textgyms.core import MESSAGES, TextSpace

Messages = list[dict[str, str]]


class MessagesSpace(gym.spaces.Space):
    """Lists of ``{"role", "content"}`` dicts whose contents fit ``max_chars``.

    Gymnasium's ``Sequence(Dict(...))`` only contains tuples, while chat templates and every
    chat API take lists; this space contains lists.
    """

    ROLES = ("system", "user", "assistant", "tool")

    def __init__(self, max_chars: int, seed: int | None = None) -> None:
        super().__init__(None, None, seed)
        self.content = TextSpace(max_chars)

    def contains(self, x: Any) -> bool:
        """True for a list of messages with known roles and contents inside the space."""
        return isinstance(x, list) and all(
            isinstance(m, dict)
            and m.keys() == {"role", "content"}
            and m["role"] in self.ROLES
            and self.content.contains(m["content"])
            for m in x
        )

    def sample(self, mask: Any = None, probability: Any = None) -> Messages:
        """A short random conversation (for checkers and random agents)."""
        n = int(self.np_random.integers(1, 4))
        return [
            {"role": "user" if i % 2 == 0 else "assistant", "content": self.content.sample()}
            for i in range(n)
        ]

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MessagesSpace) and other.content == self.content


class ChatHistory(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Observations are ``[{"role": "user"|"assistant"|"system", "content": str}, ...]``.

    The list holds the prompt, every action (as ``assistant``) and every observation (as
    ``user``), ready for ``tokenizer.apply_chat_template``. ``system`` (optional) is prepended.
    The text observation of the step is still in ``info["text"]``.
    """

    def __init__(self, env: gym.Env, system: str | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, system=system)
        gym.ObservationWrapper.__init__(self, env)
        self.system = system
        # A message is an observation or an action, so it fits the larger of the two spaces.
        spaces = (env.observation_space, env.action_space)
        max_chars = max(s.max_length if isinstance(s, TextSpace) else 1 << 20 for s in spaces)
        self.observation_space = MessagesSpace(max_chars)
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
        messages = [
            dict(m) for m in self._info.get(MESSAGES, [{"role": "user", "content": observation}])
        ]
        if self.system is not None:
            messages.insert(0, {"role": "system", "content": self.system})
        return messages

    @staticmethod
    def _with_text(info: dict[str, Any], obs: str) -> dict[str, Any]:
        return {**info, "text": obs}
