"""``EpisodeStats``: per-episode statistics in ``info["episode"]`` and running aggregates."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np

from textgyms.core import PARTS, SCORE, SOLVED, invalid_after


class EpisodeStats(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Adds ``info["episode"] = {return, length, score, solved, invalid, seconds, parts}`` on the
    last step of each episode, and keeps the last ``window`` episodes for :meth:`summary`."""

    def __init__(self, env: gym.Env, window: int = 1000) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, window=window)
        gym.Wrapper.__init__(self, env)
        self.episodes: deque[dict[str, Any]] = deque(maxlen=window)
        self._ret, self._len, self._invalid, self._t0 = 0.0, 0, 0, time.perf_counter()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._ret, self._len, self._invalid, self._t0 = 0.0, 0, 0, time.perf_counter()
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._ret += float(reward)
        self._len += 1
        self._invalid = invalid_after(self._invalid, info, terminated or truncated)
        if terminated or truncated:
            episode = {
                "return": self._ret,
                "length": self._len,
                "score": info.get(SCORE, 0.0),
                "solved": bool(info.get(SOLVED, False)),
                "invalid": self._invalid,
                "truncated": bool(truncated),
                "seconds": time.perf_counter() - self._t0,
                "parts": dict(info.get(PARTS, {})),
            }
            self.episodes.append(episode)
            info = {**info, "episode": episode}
        return obs, reward, terminated, truncated, info

    def summary(self) -> dict[str, float]:
        """Means over the recorded episodes (empty dict if there are none)."""
        if not self.episodes:
            return {}
        keys = ("return", "length", "score", "solved", "invalid", "truncated", "seconds")
        out = {k: float(np.mean([e[k] for e in self.episodes])) for k in keys}
        out["episodes"] = float(len(self.episodes))
        return out
