"""The remote backend: each env is a session of a ``textgyms serve`` server.

``make_vec(env_id, N, backend="remote", urls=[...], token=...)`` opens N sessions, env ``i`` on
``urls[i % len(urls)]``, each a :class:`textgyms.remote.RemoteEnv` (one WebSocket each), or,
with ``connections=C``, a :class:`textgyms.remote.MuxEnv` on one of C connections per server
(the server's ``/mux`` route: N envs over a few connections instead of N). The seed schedule and the
autoreset modes run here, in the same ``_EnvRunner`` the serial backend uses, so a remote vector
gives the very batches ``serial`` gives for the same seeds and actions. The N calls of a batch run
concurrently (one thread per env waiting on the shared client event loop), so a step costs about
one round trip plus the slowest env, not N round trips.
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import numpy as np

from textgyms.errors import BackendError, ConfigError, ServerError
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

MAX_THREADS = 256  # more envs than this share the threads (a batch then takes a few rounds)


def make_remote(
    env_id: str,
    num_envs: int,
    *,
    num_workers: int | None,
    context: str | None,
    env_kwargs: dict[str, Any],
    **common: Any,
) -> RemoteVecEnv:
    """``make_vec``'s factory: ``urls``, ``token`` and ``remote_timeout`` come in ``env_kwargs``."""
    if num_workers is not None or context is not None:
        raise ConfigError(
            "num_workers and context apply to backend='multiprocessing' (and 'ray'); "
            "backend='remote' runs every env as a session of the servers in urls"
        )
    env_kwargs = dict(env_kwargs)
    urls = env_kwargs.pop("urls", None)
    token = env_kwargs.pop("token", None)
    timeout = env_kwargs.pop("remote_timeout", 60.0)
    connections = env_kwargs.pop("connections", None)
    return RemoteVecEnv(
        env_id,
        num_envs,
        urls=urls,
        token=token,
        timeout=timeout,
        connections=connections,
        env_kwargs=env_kwargs,
        **common,
    )


class RemoteVecEnv(VecEnv):
    """``num_envs`` sessions spread round-robin over ``urls`` (see the module docstring).

    The env kwargs must be the ones each server was started with (``textgyms serve --kwargs``):
    the vector checks them, since other kwargs would give other episodes than ``serial``.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        urls: Any,
        token: str | None = None,
        timeout: float = 60.0,
        connections: int | None = None,
        **common: Any,
    ) -> None:
        super().__init__(env_id, num_envs, **common)
        if connections is not None and (
            isinstance(connections, bool) or not isinstance(connections, int) or connections < 1
        ):
            raise ConfigError(f"connections must be an integer >= 1 or None, got {connections!r}")
        if connections is not None and self.mixture is not None:
            raise ConfigError("connections= applies to one env id; a mixture opens one session "
                              "per entry (leave connections=None)")
        if self.make_env.ladders is not None:
            raise ConfigError(
                "backend='remote' cannot follow a curriculum (each server serves fixed kwargs); "
                "use another backend for a curriculum"
            )
        if self.batch_size != self.num_envs:
            raise ConfigError(
                "backend='remote' steps every env together: batch_size must be None or num_envs"
            )
        self.urls = _check_urls(urls) if self.mixture is None else _mixture_urls(urls, self.mixture)
        self._muxes: list[Any] = []
        if connections is not None:
            from textgyms.remote import MuxConnection

            per_url = min(connections, -(-num_envs // len(self.urls)))
            self._muxes = [MuxConnection(u, token, timeout=timeout) for u in self.urls
                           for _ in range(per_url)]  # fmt: skip
        self._pool = ThreadPoolExecutor(min(self.num_envs, MAX_THREADS), "textgyms-remote-vec")
        self._runners: list[_EnvRunner] = []
        self._pending: list[Future[_Result]] | None = None
        opening = [self._pool.submit(self._connect, i, token, timeout) for i in range(num_envs)]
        try:
            envs = self._wait(opening)
        except BaseException:
            for future in opening:  # close the sessions that did open
                if future.exception() is None:
                    future.result().close()
            self._close()
            raise
        self._runners = [_EnvRunner(env, self.autoreset, self.num_groups) for env in envs]
        self.single_observation_space = envs[0].observation_space
        self.single_action_space = envs[0].action_space
        self._closed = False

    @property
    def envs(self) -> list[Any]:
        """The :class:`~textgyms.remote.RemoteEnv` of each env, in env-id order."""
        return [runner.env for runner in self._runners]

    def _connect(self, i: int, token: str | None, timeout: float) -> Any:
        if self._muxes:  # env i: server i % U, then that server's connections in turn
            from textgyms.remote import MuxEnv

            per_url = len(self._muxes) // len(self.urls)
            mux = self._muxes[(i % len(self.urls)) * per_url + (i // len(self.urls)) % per_url]
            return _checked(MuxEnv(mux), mux.url, self.spec.id, self.env_kwargs)
        if self.mixture is None:
            url = self.urls[i % len(self.urls)]
            return self._open(url, self.spec.id, self.env_kwargs, token, timeout)
        from textgyms.mixture import MixtureEnv

        def entry(index: int, kwargs: dict[str, Any]) -> Any:
            urls = self.urls[self.mixture.names[index]]
            env_id = self.mixture.entries[index].env_id
            return self._open(urls[i % len(urls)], env_id, kwargs, token, timeout)

        return MixtureEnv(self.mixture, make_entry=entry)  # one session per entry

    @staticmethod
    def _open(url: str, env_id: str, kwargs: dict, token: str | None, timeout: float) -> Any:
        """A session of the server at ``url``, checked to serve ``env_id`` with ``kwargs``."""
        from textgyms.remote import RemoteEnv

        return _checked(RemoteEnv(url, token, timeout=timeout), url, env_id, kwargs)

    def _async_reset(self, seeds: list[int | None], options: dict | None, mask: np.ndarray) -> None:
        self._drain()  # a reset supersedes results nobody collected
        self._pending = [
            self._pool.submit(_reset_runners, [runner], [seed], options, [bool(chosen)])
            for runner, seed, chosen in zip(self._runners, seeds, mask)
        ]

    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        check_whole_step("remote", env_ids, self.num_envs, self._pending)
        self._pending = [
            self._pool.submit(_step_runners, [runner], [action])
            for runner, action in zip(self._runners, actions)
        ]

    def _recv(self) -> Batch:
        if self._pending is None:
            raise BackendError("recv() without a pending send() or async_reset()")
        pending, self._pending = self._pending, None
        try:
            results = self._wait(pending)
        except ServerError as exc:
            self._broken = exc  # the vector cannot go on without that env
            raise
        return _make_batch(list(enumerate(results)))

    def _call(self, env_id: int, method: str, args: tuple) -> Any:
        raise BackendError(
            f"backend='remote' cannot call {method}() of an env that runs on a server; "
            "compute it from a local env reset with the same seed"
        )

    def _close(self) -> None:
        self._drain()
        pool = getattr(self, "_pool", None)
        if pool is None:
            return
        for future in [pool.submit(runner.env.close) for runner in self._runners]:
            future.exception()  # close() swallows a dead server; wait for every session
        pool.shutdown(wait=True)
        for mux in self._muxes:
            mux.close()

    def _drain(self) -> None:
        """Wait out calls whose results nobody will collect (their errors included)."""
        pending, self._pending = self._pending, None
        for future in pending or ():
            future.exception()

    @staticmethod
    def _wait(futures: list[Future[Any]]) -> list[Any]:
        """Every result in order; the first error (a ``ServerError`` first) once all are done."""
        errors = [exc for exc in (f.exception() for f in futures) if exc is not None]
        if errors:
            raise next((e for e in errors if isinstance(e, ServerError)), errors[0])
        return [f.result() for f in futures]


def _checked(env: Any, url: str, env_id: str, kwargs: dict[str, Any]) -> Any:
    """``env`` (a session at ``url``), checked to serve ``env_id`` with ``kwargs``."""
    same_kwargs = _canonical(env.kwargs) == _canonical(kwargs)
    if _registered_id(env.env_id) != _registered_id(env_id) or not same_kwargs:
        env.close()
        raise ConfigError(
            f"the server at {url} serves {env.env_id} with kwargs {env.kwargs}, but this "
            f"vector is {env_id} with kwargs {kwargs}; start the server with "
            "those (textgyms serve ID --kwargs JSON) or make the vector with the server's"
        )
    return env


def _check_urls(urls: Any) -> list[str]:
    if isinstance(urls, str):
        urls = [urls]
    if not urls or not all(isinstance(u, str) and u for u in urls):
        raise ConfigError(
            "backend='remote' needs urls=['http://HOST:PORT', ...]: the servers started with "
            "`textgyms serve ENV_ID`"
        )
    return list(urls)


def _mixture_urls(urls: Any, mixture: Any) -> dict[str, list[str]]:
    """A mixture's servers: ``{entry name: url or [urls]}``, every entry named."""
    names = mixture.names
    if not isinstance(urls, dict) or set(urls) != set(names):
        raise ConfigError(
            f"backend='remote' with a mixture needs urls={{name: url or [urls]}} for the "
            f"entries {names} (each server serves one entry: textgyms serve ID --kwargs JSON)"
        )
    return {name: _check_urls(urls[name]) for name in names}


def _canonical(kwargs: dict[str, Any]) -> str:
    """Kwargs as the server received them (through JSON), for comparison."""
    return json.dumps(json.loads(json.dumps(kwargs, default=str)), sort_keys=True)


def _registered_id(env_id: str) -> str | None:
    """The registry id a server's ``env_id`` names (``"module:ns/Name-vN"`` accepted)."""
    try:
        return gym.spec(env_id.rpartition(":")[2]).id
    except gym.error.Error:
        return None
