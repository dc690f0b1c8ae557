"""The serial backend: every env in this process, stepped one after the other."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from textgyms.errors import BackendError, ConfigError
from textgyms.vector.base import (
    Batch,
    VecEnv,
    _EnvRunner,
    _make_batch,
    _reset_runners,
    _Result,
    _step_runners,
    check_whole_step,
)

# ----------------------------------------------------------------------------------------------
# Serial backend.


class SerialVecEnv(VecEnv):
    """All envs in this process, stepped one after the other (``envs`` gives direct access)."""

    def __init__(self, env_id: Any, num_envs: int, **common: Any) -> None:
        """``common``: the :class:`VecEnv` options (group_size, autoreset, batch_size,
        env_kwargs, ladders)."""
        super().__init__(env_id, num_envs, **common)
        if self.batch_size != self.num_envs:
            raise ConfigError(
                "backend='serial' steps every env together: batch_size must be "
                "None or num_envs; use backend='multiprocessing' for batch_size <"
                " num_envs"
            )
        self._runners: list[_EnvRunner] = []
        self._pending: _Result | None = None
        try:
            for _ in range(self.num_envs):
                env = self.make_env()
                self._runners.append(_EnvRunner(env, self.autoreset, self.num_groups))
        except BaseException:
            self._close()
            raise
        self.single_observation_space = self._runners[0].env.observation_space
        self.single_action_space = self._runners[0].env.action_space
        self._closed = False

    @property
    def envs(self) -> list[gym.Env]:
        """The underlying envs, in env-id order."""
        return [runner.env for runner in self._runners]

    def _async_reset(self, seeds: list[int | None], options: dict | None, mask: np.ndarray) -> None:
        self._pending = None  # a reset supersedes results nobody collected
        self._pending = _reset_runners(self._runners, seeds, options, mask.tolist())

    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        check_whole_step("serial", env_ids, self.num_envs, self._pending)
        self._pending = _step_runners(self._runners, actions)

    def _recv(self) -> Batch:
        if self._pending is None:
            raise BackendError("recv() without a pending send() or async_reset()")
        result, self._pending = self._pending, None
        return _make_batch([(0, result)])

    def _call(self, env_id: int, method: str, args: tuple) -> Any:
        return getattr(self._runners[env_id].env.unwrapped, method)(*args)

    def _close(self) -> None:
        for runner in getattr(self, "_runners", []):
            runner.env.close()
