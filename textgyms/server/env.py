"""One textgyms env as an OpenEnv ``Environment``: the wire types and the per-session adapter.

The wire contract (what the stock OpenEnv client sees):

- action ``{"text": completion}``;
- observation ``{"text": str, "info": dict}`` plus OpenEnv's ``reward``, ``done`` (terminated or
  truncated) and ``metadata`` (``{"terminated": bool, "truncated": bool}``, told apart);
- state ``{"episode_id", "step_count", "env_id", "kwargs", "observation_max_chars",
  "action_max_chars"}``; ``RemoteEnv`` reads the last four to rebuild the local spaces.

Errors the env raises on API misuse (a step after the episode ended, bad reset options) reach
the client as OpenEnv error replies whose message starts with the textgyms class name, e.g.
``"ResetNeeded: ..."``, so that :class:`textgyms.remote.RemoteEnv` raises the same class.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from openenv.core.env_server import Action, Environment, Observation, State
from pydantic import Field

from textgyms.errors import ConfigError, TextgymsError
from textgyms.server.sessions import Slots

MAX_SEED = 2**128  # seeds at or above are refused (a local env would accept any int >= 0)


class TextAction(Action):
    """The agent's raw completion."""

    text: str = Field(description="the model's completion (tool calls as tags or JSON)")


class TextObservation(Observation):
    """What the env returned: the observation text and its info dict (JSON-safe)."""

    text: str = Field(default="", description="the observation, exactly as the local env")
    info: dict[str, Any] = Field(default_factory=dict, description="the env's info dict")


class TextState(State):
    """Episode id and step count (OpenEnv's), plus what a client needs to mirror the env."""

    env_id: str = ""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    observation_max_chars: int = 0
    action_max_chars: int = 0


class ServedError(RuntimeError):
    """An env error carried to the client as ``"<textgyms class>: <message>"``."""


def _carry(exc: Exception) -> ServedError:
    """Name the textgyms (or Gymnasium) error class in the message the client will see."""
    return ServedError(f"{type(exc).__name__}: {exc}")


class TextgymsEnvironment(Environment[TextAction, TextObservation, TextState]):
    """One session's env: ``gymnasium.make(env_id, **kwargs)``, closed with the session.

    Every session has its own env instance and OpenEnv runs each session's calls on that
    session's own thread, so sessions share nothing but the process (and what the families
    share per process by design, e.g. the Code sandbox server).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        env_id: str,
        kwargs: dict[str, Any],
        on_close: Callable[[TextgymsEnvironment], None] | None = None,
    ) -> None:
        super().__init__()
        self.env_id, self.kwargs, self._on_close = env_id, dict(kwargs), on_close
        self.env = gym.make(env_id, **self.kwargs)
        self._state = TextState(
            env_id=env_id,
            kwargs=self.kwargs,
            observation_max_chars=_max_chars(self.env.observation_space),
            action_max_chars=_max_chars(self.env.action_space),
        )

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> TextObservation:
        """``env.reset(seed=seed, options=options)``; a new episode id unless one is given."""
        try:
            check_reset(seed, episode_id, options)
            obs, info = self.env.reset(seed=seed, options=options)
        except (TextgymsError, gym.error.Error, TypeError, ValueError) as exc:
            raise _carry(exc) from exc
        self._state.episode_id = episode_id or str(uuid.uuid4())
        self._state.step_count = 0
        return TextObservation(text=obs, info=info, metadata=_ends(False, False))

    def step(
        self, action: TextAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TextObservation:
        """``env.step(action.text)``; ``done`` is terminated or truncated."""
        try:
            obs, reward, terminated, truncated, info = self.env.step(action.text)
        except (TextgymsError, gym.error.Error) as exc:  # API misuse, e.g. step after the end
            raise _carry(exc) from exc
        self._state.step_count += 1
        return TextObservation(
            text=obs,
            info=info,
            reward=float(reward),
            done=bool(terminated or truncated),
            metadata=_ends(bool(terminated), bool(truncated)),
        )

    @property
    def state(self) -> TextState:
        """The session's state (a copy: the caller serialises it on another thread)."""
        return self._state.model_copy()

    def close(self) -> None:
        """Close the env (releases sandbox processes, index handles, ...); idempotent."""
        try:
            self.env.close()
        finally:
            if self._on_close is not None:
                self._on_close(self)


class EnvFactory:
    """The env factory (ours and OpenEnv's): one env per session, each holding a slot.

    Every env it builds, for a session or for one HTTP call, takes one of ``slots`` until it
    is closed, so nothing the server builds escapes ``--max-sessions``. The record of open
    envs lets the server close every env at shutdown, whatever state its session is in.
    """

    def __init__(self, env_id: str, kwargs: dict[str, Any], slots: Slots | None = None) -> None:
        self.env_id, self.kwargs = env_id, dict(kwargs)
        self.slots = slots if slots is not None else Slots(1 << 30)
        self._live: set[TextgymsEnvironment] = set()
        self._lock = threading.Lock()  # sessions are created and closed on many threads

    def __call__(self) -> TextgymsEnvironment:
        self.slots.take()  # raises CapacityError when every slot is in use
        try:
            env = TextgymsEnvironment(self.env_id, self.kwargs, on_close=self._closed)
        except BaseException:
            self.slots.give()
            raise
        with self._lock:
            self._live.add(env)
        return env

    def _closed(self, env: TextgymsEnvironment) -> None:
        with self._lock:
            if env not in self._live:
                return  # closed before: the slot was given back then
            self._live.discard(env)
        self.slots.give()

    @property
    def live(self) -> int:
        """How many envs are open."""
        with self._lock:
            return len(self._live)

    def close_all(self) -> None:
        """Close every env still open."""
        with self._lock:
            envs = list(self._live)
        for env in envs:
            env.close()


def check_reset(seed: Any, episode_id: Any, options: Any) -> None:
    """Refuse reset arguments of the wrong type at once, naming what to send instead."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(f"seed must be an integer or null, got {type(seed).__name__}")
    if seed is not None and not 0 <= seed < MAX_SEED:
        raise ConfigError(f"seed must be in [0, 2**128), got a {len(str(abs(seed)))}-digit value")
    if episode_id is not None and not isinstance(episode_id, str):
        raise ConfigError(f"episode_id must be a string, got {type(episode_id).__name__}")
    if options is not None and not isinstance(options, dict):
        raise ConfigError(
            f"options must be a JSON object or null, got a JSON "
            f"{_json_kind(options)}"
        )


def _json_kind(value: Any) -> str:
    kinds = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return kinds.get(type(value), type(value).__name__)


def _ends(terminated: bool, truncated: bool) -> dict[str, bool]:
    return {"terminated": terminated, "truncated": truncated}


def _max_chars(space: gym.Space) -> int:
    """The ``max_length`` of a Text space (every textgyms env uses ``TextSpace``)."""
    return int(getattr(space, "max_length", 0))
