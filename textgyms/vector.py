"""Vector environments: many text envs stepped as one batch (DESIGN.md §3).

``make_vec(env_id, num_envs, backend=...)`` returns a :class:`VecEnv`. Every backend implements
three private primitives -- ``_async_reset``, ``_send`` and ``_recv`` (plus ``_close``) -- and the
base class writes the public ``async_reset``/``send``/``recv`` (validation and bookkeeping) and
``reset``/``step`` once on top of them, in the shape PufferLib uses::

    vec = textgyms.make_vec("textgyms/Wordle-v0", 64, backend="multiprocessing", group_size=8)
    obs, infos = vec.reset(seed=0)
    obs, rewards, terminated, truncated, infos = vec.step(actions)

Seeding: ``reset(seed=s)`` seeds env ``i`` with ``s + g`` where ``g = i // group_size``; the
``k``-th episode (``k >= 1``) of env ``i`` is always reset with ``s + g + k * num_groups``. The
schedule lives next to each env (``_EnvRunner``), so groups stay aligned and the task sequence
does not depend on timing or on the backend.

Autoreset happens where the env lives (in-process or inside the worker), so a ``same_step``
reset costs no extra round trip and serial and multiprocessing produce the very same infos.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from textgyms.errors import BackendError, ConfigError, ResetNeeded, WorkerDiedError

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Batch", "MultiprocessingVecEnv", "SerialVecEnv", "VecEnv", "make_vec"]

AUTORESET_MODES = ("same_step", "next_step", "disabled")
_SEED_BOUND = 2**31 - 1  # base seeds drawn for reset(seed=None) stay in int32 range

# What one env (or one worker's slice of envs) sends back: obs, rewards, terminated, truncated, infos.
_Result = tuple[list[str], list[float], list[bool], list[bool], list[dict]]


@dataclass(eq=False)  # numpy fields make the generated __eq__ ambiguous
class Batch:
    """The envs' answer to one ``step`` (or ``reset``): one entry per env in ``env_ids``.

    Iterates as Gymnasium's 5-tuple, so ``obs, rewards, terminated, truncated, infos = batch``.
    """

    observations: list[str]
    rewards: np.ndarray  # float32
    terminated: np.ndarray  # bool
    truncated: np.ndarray  # bool
    infos: list[dict]
    env_ids: np.ndarray  # int64

    def __iter__(self) -> Iterator[Any]:
        """Yield ``observations, rewards, terminated, truncated, infos`` (not ``env_ids``)."""
        return iter((self.observations, self.rewards, self.terminated, self.truncated, self.infos))


def _make_batch(parts: Sequence[tuple[int, _Result]]) -> Batch:
    """Concatenate per-slice results (each tagged with its first env id) into one Batch."""
    columns: tuple[list, ...] = ([], [], [], [], [])  # obs, rewards, terminated, truncated, infos
    ids: list[int] = []
    for start, result in parts:
        for column, values in zip(columns, result):
            column += values
        ids += range(start, start + len(result[0]))
    obs, rewards, term, trunc, infos = columns
    return Batch(obs, np.asarray(rewards, np.float32), np.asarray(term, np.bool_),
                 np.asarray(trunc, np.bool_), infos, np.asarray(ids, np.int64))


# ----------------------------------------------------------------------------------------------
# One env and its episode bookkeeping: the same code runs in-process and inside workers.


class _EnvRunner:
    """Wraps one env: applies the autoreset mode and the deterministic seed schedule."""

    def __init__(self, env: gym.Env, autoreset: str, stride: int) -> None:
        self.env = env
        self.autoreset = autoreset
        self.stride = stride  # num_groups: the k-th episode uses base_seed + k * stride
        self.base_seed: int | None = None
        self.episode = 0
        self.pending_reset = False  # next_step: the coming step only resets
        self.last_obs = ""

    def reset(self, seed: int | None, options: dict | None) -> tuple[str, dict]:
        """Start an episode; ``seed=None`` continues this env's schedule when it has one."""
        if seed is None and self.base_seed is not None:
            self.episode += 1
            seed = self.base_seed + self.episode * self.stride
        else:
            self.base_seed, self.episode = seed, 0
        obs, info = self.env.reset(seed=seed, options=None if options is None else dict(options))
        self.pending_reset = False
        self.last_obs = obs
        return obs, dict(info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        """Step once, resetting according to the autoreset mode."""
        if self.pending_reset:  # Gymnasium's next_step: this call ignores the action
            obs, info = self.reset(None, None)
            return obs, 0.0, False, False, info
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        if terminated or truncated:
            if self.autoreset == "same_step":
                final_obs, final_info = obs, info
                obs, info = self.reset(None, None)
                info["final_obs"], info["final_info"] = final_obs, final_info
            elif self.autoreset == "next_step":
                self.pending_reset = True
            # disabled: VecEnv.send refuses to step this env again until it is reset
        self.last_obs = obs
        return obs, float(reward), bool(terminated), bool(truncated), info


def _reset_runners(runners: Sequence[_EnvRunner], seeds: Sequence[int | None],
                   options: dict | None, mask: Sequence[bool]) -> _Result:
    """Reset the masked runners; the others report their last observation and an empty info."""
    obs: list[str] = []
    infos: list[dict] = []
    for runner, seed, chosen in zip(runners, seeds, mask):
        o, info = runner.reset(seed, options) if chosen else (runner.last_obs, {})
        obs.append(o)
        infos.append(info)
    n = len(runners)
    return obs, [0.0] * n, [False] * n, [False] * n, infos


def _step_runners(runners: Sequence[_EnvRunner], actions: Sequence[str]) -> _Result:
    """Step every runner with its action."""
    out: _Result = ([], [], [], [], [])
    for runner, action in zip(runners, actions):
        for column, value in zip(out, runner.step(action)):
            column.append(value)
    return out


def _resolve_spec(env_id: str) -> EnvSpec:
    """Look up ``env_id`` (``"module:ns/Name-vN"`` imports the module first) in the registry.

    Workers receive the spec rather than the id, so envs registered at runtime in the parent
    (outside ``textgyms``) can still be built under the forkserver and spawn start methods.
    """
    if not isinstance(env_id, str):
        raise ConfigError(f"env_id must be a registered id string, got {env_id!r}")
    module, _, name = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    try:
        return gym.spec(name)
    except gym.error.Error as exc:
        raise ConfigError(f"unknown env id {env_id!r} ({exc}); did you `import textgyms`?") from exc


def _check_config(num_envs: int, group_size: int, autoreset: str, batch_size: int | None) -> int:
    """Validate the backend-independent settings; return the effective batch size."""
    for name, value in (("num_envs", num_envs), ("group_size", group_size)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be a positive int, got {value!r}")
    if num_envs % group_size:
        raise ConfigError(f"num_envs={num_envs} must be a multiple of group_size={group_size}")
    if autoreset not in AUTORESET_MODES:
        raise ConfigError(f"unknown autoreset {autoreset!r}; choose one of: "
                          + ", ".join(AUTORESET_MODES))
    if batch_size is None:
        return int(num_envs)
    if not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= num_envs:
        raise ConfigError(f"batch_size must be None or an int in [1, num_envs={num_envs}], "
                          f"got {batch_size!r}")
    if batch_size < num_envs and autoreset == "disabled":
        raise ConfigError("batch_size < num_envs needs an autoreset mode (same_step or next_step):"
                          " with autoreset='disabled' a finished env would never come back")
    return int(batch_size)


# ----------------------------------------------------------------------------------------------
# The base class: public API written once on top of the backend primitives.


class VecEnv(abc.ABC):
    """A batch of ``num_envs`` copies of one text env (see the module docstring).

    Attributes: ``num_envs``, ``group_size``, ``num_groups``, ``autoreset``, ``batch_size``,
    ``single_observation_space``, ``single_action_space``, ``env_ids`` (of the last batch).
    Use as a context manager or call :meth:`close`.
    """

    single_observation_space: gym.Space
    single_action_space: gym.Space

    def __init__(self, env_id: str, num_envs: int, *, group_size: int = 1,
                 autoreset: str = "same_step", batch_size: int | None = None,
                 env_kwargs: dict[str, Any] | None = None) -> None:
        self._closed = True  # until construction succeeds; keeps __del__/close safe
        self._broken: WorkerDiedError | None = None
        self.batch_size = _check_config(num_envs, group_size, autoreset, batch_size)
        self.env_id, self.spec = env_id, _resolve_spec(env_id)
        self.num_envs, self.group_size = int(num_envs), int(group_size)
        self.num_groups = self.num_envs // self.group_size
        self.autoreset = autoreset
        self.env_kwargs = dict(env_kwargs or {})
        self._rng = np.random.default_rng()  # the vector's own RNG; never the global one
        self._finished = np.zeros(self.num_envs, np.bool_)
        self._last_ids: np.ndarray | None = None

    # -- the three primitives each backend implements -------------------------------------
    @abc.abstractmethod
    def _async_reset(self, seeds: list[int | None], options: dict | None,
                     mask: np.ndarray) -> None:
        """Start resetting the masked envs (all envs are answered by the next ``_recv``)."""

    @abc.abstractmethod
    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        """Start stepping ``env_ids`` with ``actions``."""

    @abc.abstractmethod
    def _recv(self) -> Batch:
        """Return the next ``batch_size`` results."""

    @abc.abstractmethod
    def _close(self) -> None:
        """Release envs and workers (called once)."""

    @abc.abstractmethod
    def _call(self, env_id: int, method: str, args: tuple) -> Any:
        """Run ``env.unwrapped.<method>(*args)`` on one env and return its (picklable) result."""

    def call_env(self, env_id: int, method: str, *args: Any) -> Any:
        """Call a method of one env's unwrapped env, e.g. ``call_env(3, "oracle_actions")``.

        Scripted policies use it to reach the oracle and random moves of envs that live in
        worker processes. Only between a ``recv`` and the next ``send``/``async_reset``.
        """
        self._check_open()
        if not (isinstance(env_id, (int, np.integer)) and 0 <= env_id < self.num_envs):
            raise ConfigError(f"env_id must be in 0..{self.num_envs - 1}, got {env_id!r}")
        if not isinstance(method, str) or method.startswith("_"):
            raise ConfigError(f"method must be the name of a public env method, got {method!r}")
        return self._call(int(env_id), method, args)

    # -- public primitives ------------------------------------------------------------------
    def async_reset(self, seeds: Sequence[int | None] | None = None, options: dict | None = None,
                    mask: np.ndarray | None = None) -> None:
        """Start a reset; ``recv()`` returns the result.

        ``seeds`` has one entry per env (``None``: continue that env's seed schedule, or reset
        unseeded if it has none). ``mask`` (bool, one per env) limits the reset to chosen envs.
        """
        self._check_open()
        seeds = [None] * self.num_envs if seeds is None else list(seeds)
        if len(seeds) != self.num_envs:
            raise ConfigError(f"expected {self.num_envs} seeds (one per env), got {len(seeds)}")
        mask = np.ones(self.num_envs, np.bool_) if mask is None else self._check_mask(mask)
        self._finished[mask] = False
        self._async_reset(seeds, options, mask)

    def send(self, actions: Sequence[str], env_ids: Sequence[int] | np.ndarray | None = None) -> None:
        """Start stepping ``env_ids`` (default: those of the last batch) with ``actions``."""
        self._check_open()
        ids = self._default_ids() if env_ids is None else np.asarray(env_ids, np.int64).ravel()
        actions = list(actions)
        if len(actions) != len(ids):
            raise ConfigError(f"expected {len(ids)} actions (one per env id), got {len(actions)}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_envs):
            raise ConfigError(f"env_ids must be in [0, {self.num_envs}), got {ids.tolist()}")
        if self.autoreset == "disabled" and self._finished[ids].any():
            done = ids[self._finished[ids]].tolist()
            raise ResetNeeded(f"envs {done} finished their episode and autoreset='disabled'; "
                              "reset them with vec.reset(options={'reset_mask': mask}) first")
        self._send(actions, ids)

    def recv(self) -> Batch:
        """Wait for and return the next batch (``batch_size`` envs, see ``Batch.env_ids``)."""
        self._check_open()
        batch = self._recv()
        self._last_ids = batch.env_ids.copy()  # the caller may modify the batch
        if self.autoreset == "disabled":
            self._finished[batch.env_ids] |= batch.terminated | batch.truncated
        return batch

    # -- Gymnasium-style API ------------------------------------------------------------------
    def reset(self, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[list[str], list[dict]]:
        """Reset and return ``(observations, infos)``.

        ``seed``: an int ``s`` seeds env ``i`` with ``s + i // group_size``; a list gives one seed
        per env or per group; ``None`` draws a base seed from the vector's RNG (itself seeded by
        the last int seed). With ``batch_size < num_envs`` the first ``batch_size`` envs to
        finish are returned; their ids are in :attr:`env_ids`.
        ``options={"reset_mask": np.ndarray[bool]}`` resets only the chosen envs (the others
        report their last observation and ``{}``); without a seed they continue their schedule.
        """
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is not None and self.batch_size < self.num_envs:
            raise ConfigError("reset_mask needs batch_size == num_envs")
        mask = None if mask is None else self._check_mask(mask)
        self.async_reset(self._resolve_seeds(seed, partial=mask is not None), options or None, mask)
        batch = self.recv()
        return batch.observations, batch.infos

    def step(self, actions: Sequence[str]) -> Batch:
        """Step the envs of the last batch with ``actions`` and return the next batch."""
        self.send(actions)
        return self.recv()

    @property
    def env_ids(self) -> np.ndarray | None:
        """Env ids of the last batch returned by ``reset``/``step``/``recv``."""
        return self._last_ids

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (or construction failed)."""
        return self._closed

    def close(self) -> None:
        """Close every env and worker; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit modules may be gone
            self.close()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.env_id!r}, num_envs={self.num_envs}, "
                f"group_size={self.group_size}, autoreset={self.autoreset!r})")

    # -- helpers ------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._broken is not None:
            raise WorkerDiedError(str(self._broken))
        if self._closed:
            raise BackendError(f"{self!r} is closed")

    def _check_mask(self, mask: Any) -> np.ndarray:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
            raise ConfigError(f"reset_mask must be a bool array of shape ({self.num_envs},) with "
                              f"at least one True, got dtype {mask.dtype} shape {mask.shape}")
        return mask

    def _default_ids(self) -> np.ndarray:
        if self._last_ids is not None:
            return self._last_ids
        if self.batch_size < self.num_envs:
            raise ConfigError("pass env_ids to send() (from the batch returned by recv())")
        return np.arange(self.num_envs, dtype=np.int64)

    def _resolve_seeds(self, seed: Any, partial: bool) -> list[int | None]:
        """Turn ``reset``'s ``seed`` argument into one seed per env (see ``reset``)."""
        if seed is None and partial:  # a partial reset continues each chosen env's schedule
            return [None] * self.num_envs
        if seed is None or _is_seed(seed):
            if seed is not None:  # so that later unseeded resets are reproducible too
                self._rng = np.random.default_rng(int(seed))
            base = int(self._rng.integers(_SEED_BOUND)) if seed is None else int(seed)
            return [base + i // self.group_size for i in range(self.num_envs)]
        seeds = list(seed) if isinstance(seed, (Sequence, np.ndarray)) else []
        if len(seeds) not in (self.num_envs, self.num_groups) or not all(
                s is None or _is_seed(s) for s in seeds):
            raise ConfigError(f"seed must be None, an int >= 0, or a list of {self.num_envs} (per "
                              f"env) or {self.num_groups} (per group) ints >= 0 or None")
        seeds = [int(self._rng.integers(_SEED_BOUND)) if s is None else int(s) for s in seeds]
        if len(seeds) != self.num_envs:  # per group: every member plays the group's task
            seeds = [seeds[i // self.group_size] for i in range(self.num_envs)]
        return seeds


def _is_seed(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0


# ----------------------------------------------------------------------------------------------
# Serial backend.


class SerialVecEnv(VecEnv):
    """All envs in this process, stepped one after the other (``envs`` gives direct access)."""

    def __init__(self, env_id: str, num_envs: int, *, group_size: int = 1,
                 autoreset: str = "same_step", batch_size: int | None = None,
                 env_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__(env_id, num_envs, group_size=group_size, autoreset=autoreset,
                         batch_size=batch_size, env_kwargs=env_kwargs)
        if self.batch_size != self.num_envs:
            raise ConfigError("backend='serial' steps every env together: batch_size must be "
                              "None or num_envs; use backend='multiprocessing' for batch_size <"
                              " num_envs")
        self._runners: list[_EnvRunner] = []
        self._pending: _Result | None = None
        try:
            for _ in range(self.num_envs):
                env = gym.make(self.spec, **self.env_kwargs)
                self._runners.append(_EnvRunner(env, autoreset, self.num_groups))
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

    def _async_reset(self, seeds: list[int | None], options: dict | None,
                     mask: np.ndarray) -> None:
        self._pending = None  # a reset supersedes results nobody collected
        self._pending = _reset_runners(self._runners, seeds, options, mask.tolist())

    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        if not np.array_equal(env_ids, np.arange(self.num_envs)):
            raise ConfigError("backend='serial' steps every env together: env_ids must be "
                              f"0..{self.num_envs - 1} in order")
        if self._pending is not None:
            raise BackendError("the previous results were not received; call recv() first")
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


# ----------------------------------------------------------------------------------------------
# Multiprocessing backend.
#
# Protocol (one duplex pipe per worker, pickled tuples):
#   parent -> worker: ("step", [action, ...])           one message for all the worker's envs
#                     ("reset", (seeds, options, mask))  per-env seeds and mask for its slice
#                     ("call", (local env index, method, args))
#                     ("close", None)
#   worker -> parent: ("ok", payload) | ("err", (pickled exception type, summary, traceback))
# The first message a worker sends is ("ok", (observation_space, action_space)) or the
# error that building its envs raised (e.g. ConfigError from a bad kwarg).


def _pack_exception(exc: BaseException) -> tuple[bytes | None, str, str]:
    """Make an exception sendable: its type by reference plus its text and traceback."""
    try:
        cls_blob: bytes | None = pickle.dumps(type(exc))
    except Exception:  # noqa: BLE001  (a type the parent could not import anyway)
        cls_blob = None
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return cls_blob, f"{type(exc).__qualname__}: {exc}", tb


def _unpack_exception(packed: tuple[bytes | None, str, str], where: str) -> BaseException:
    """Rebuild a worker's exception with the same type and the traceback in its message."""
    cls_blob, summary, tb = packed
    message = f"{summary}\n(raised in {where}; worker traceback follows)\n{tb}"
    try:
        return pickle.loads(cls_blob)(message)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001  (unknown type, or a constructor wanting other args)
        return BackendError(message)


def _worker_main(conn: Connection, spec: EnvSpec, env_kwargs: dict[str, Any], count: int,
                 stride: int, autoreset: str, inherited: list[Connection]) -> None:
    """Entry point of a worker process: build ``count`` envs, then serve commands."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (it closes us)
    for other in inherited:  # fork only: parent ends of pipes must not keep each other alive
        other.close()
    runners: list[_EnvRunner] = []
    try:
        try:
            for _ in range(count):
                runners.append(_EnvRunner(gym.make(spec, **env_kwargs), autoreset, stride))
            env = runners[0].env
            conn.send(("ok", (env.observation_space, env.action_space)))
        except Exception as exc:  # noqa: BLE001  (any env error goes back to the caller)
            conn.send(("err", _pack_exception(exc)))
        # Serve even after a failed start (the parent only closes us then): exiting on our own
        # would look like a crash to the parent.
        _serve(conn, runners)
    finally:
        for runner in runners:
            with contextlib.suppress(Exception):  # exiting anyway; close the rest
                runner.env.close()
        conn.close()


def _serve(conn: Connection, runners: list[_EnvRunner]) -> None:
    """Answer commands until told to close or the parent goes away."""
    while True:
        try:
            command, payload = conn.recv()
        except (EOFError, OSError):  # the parent died or closed the pipe
            return
        if command == "close":
            return
        try:
            if command == "step":
                result = _step_runners(runners, payload)
            elif command == "call":
                index, method, args = payload
                result = getattr(runners[index].env.unwrapped, method)(*args)
            else:
                result = _reset_runners(runners, *payload)
            conn.send(("ok", result))  # inside the try: an unpicklable info is an error too
        except Exception as exc:  # noqa: BLE001  (any env error goes back to the caller)
            conn.send(("err", _pack_exception(exc)))


@dataclass(eq=False)
class _Worker:
    """Parent-side handle of one worker process."""

    index: int
    start: int  # first env id
    process: BaseProcess
    conn: Connection
    busy: bool = True  # a reply is expected; the first one is the startup reply
    seq: int = 0  # when the pending request was sent (oldest ready results go first)


def _start_method(context: str | None) -> mp.context.BaseContext:
    """The multiprocessing context; see the comment in ``MultiprocessingVecEnv``."""
    methods = mp.get_all_start_methods()
    if context is None:
        context = "forkserver" if "forkserver" in methods else "spawn"
    if context not in methods:
        raise ConfigError(f"unknown context {context!r}; choose one of: {', '.join(methods)}")
    ctx = mp.get_context(context)
    if context == "forkserver":
        # Preloaded in the server once, so each worker forks with textgyms, gymnasium and numpy
        # already imported. "__main__" is multiprocessing's own default preload.
        ctx.set_forkserver_preload(["__main__", "textgyms"])
    return ctx


def _choose_workers(num_envs: int, num_workers: int | None) -> int:
    """Validate ``num_workers``; the default is the largest divisor of num_envs <= CPU count."""
    if num_workers is None:
        cap = min(num_envs, os.cpu_count() or 1)
        return max(d for d in range(1, cap + 1) if num_envs % d == 0)
    if not isinstance(num_workers, (int, np.integer)) or isinstance(num_workers, bool) \
            or not 1 <= num_workers <= num_envs or num_envs % num_workers:
        raise ConfigError(f"num_workers must be a divisor of num_envs={num_envs} (each worker "
                          f"runs the same number of envs), got {num_workers!r}")
    return int(num_workers)


class MultiprocessingVecEnv(VecEnv):
    """Envs spread over ``num_workers`` processes, ``num_envs // num_workers`` envs each.

    With ``batch_size < num_envs`` (a multiple of the envs per worker), ``recv`` returns the
    first workers to answer, EnvPool-style; pass the batch's ``env_ids`` back to ``send``.

    Start method (``context``): the default is ``"forkserver"`` (``"spawn"`` where it does not
    exist). ``fork`` is the fastest but copies a parent that may already run threads (CUDA,
    tokenizers, vLLM, gRPC): a lock held by another thread at fork time deadlocks the child.
    A fork server is started once, single-threaded, with ``textgyms`` preloaded, so workers
    start almost as fast as with fork and safely. Pass ``context="fork"`` to trade safety for
    startup time, or ``"spawn"`` for the most isolated workers.
    """

    _join_timeout = 2.0  # seconds close() waits for workers before terminating them

    def __init__(self, env_id: str, num_envs: int, *, group_size: int = 1,
                 autoreset: str = "same_step", num_workers: int | None = None,
                 batch_size: int | None = None, context: str | None = None,
                 env_kwargs: dict[str, Any] | None = None) -> None:
        self._workers: list[_Worker] = []
        super().__init__(env_id, num_envs, group_size=group_size, autoreset=autoreset,
                         batch_size=batch_size, env_kwargs=env_kwargs)
        self.num_workers = _choose_workers(self.num_envs, num_workers)
        self.envs_per_worker = self.num_envs // self.num_workers
        if self.batch_size % self.envs_per_worker:
            raise ConfigError(f"batch_size={self.batch_size} must be a multiple of the envs per "
                              f"worker ({self.envs_per_worker} = num_envs / num_workers)")
        ctx = _start_method(context)
        self.context = ctx.get_start_method()
        self._seq = itertools.count()
        try:
            self._start_workers(ctx)
            replies, error = self._collect(None)
            if error is not None:
                raise error
        except BaseException:
            self._close()
            raise
        self.single_observation_space, self.single_action_space = replies[0][1]
        self._closed = False

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers, in worker order (worker ``w`` runs envs
        ``w * envs_per_worker`` to ``(w + 1) * envs_per_worker - 1``)."""
        return [w.process.pid for w in self._workers]

    def _start_workers(self, ctx: mp.context.BaseContext) -> None:
        fork = self.context == "fork"
        for index in range(self.num_workers):
            parent_conn, child_conn = ctx.Pipe()
            # Under fork the child inherits every parent end created so far; it closes them so
            # that each worker sees EOF when the parent dies.
            inherited = [w.conn for w in self._workers] + [parent_conn] if fork else []
            process = ctx.Process(
                target=_worker_main, name=f"textgyms-vec-worker-{index}", daemon=True,
                args=(child_conn, self.spec, self.env_kwargs, self.envs_per_worker,
                      self.num_groups, self.autoreset, inherited))
            process.start()
            child_conn.close()
            self._workers.append(_Worker(index, index * self.envs_per_worker, process,
                                         parent_conn))

    # -- primitives ---------------------------------------------------------------------------
    def _async_reset(self, seeds: list[int | None], options: dict | None,
                     mask: np.ndarray) -> None:
        self._drain()
        for w in self._workers:
            part = slice(w.start, w.start + self.envs_per_worker)
            self._post(w, ("reset", (seeds[part], options, mask[part].tolist())))

    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        messages = list(self._split(actions, env_ids))
        for w, _ in messages:  # check all first: nothing is sent if any worker is not ready
            if w.busy:
                raise BackendError(f"worker {w.index} has results not yet received; call recv()")
        for w, chunk in messages:
            self._post(w, ("step", chunk))

    def _recv(self) -> Batch:
        replies, error = self._collect(self.batch_size // self.envs_per_worker)
        if error is not None:
            raise error
        return _make_batch([(w.start, result) for w, result in replies])

    def _call(self, env_id: int, method: str, args: tuple) -> Any:
        w = self._workers[env_id // self.envs_per_worker]
        if w.busy:
            raise BackendError(f"env {env_id} has results not yet received; call recv() first")
        self._post(w, ("call", (env_id - w.start, method, args)))
        ok, value = self._read_when_ready(w)
        if not ok:
            raise value
        return value

    def _read_when_ready(self, w: _Worker) -> tuple[bool, Any]:
        """Wait for one worker's reply (or its death) and read it."""
        while not w.conn.poll():
            if w.process.sentinel in wait([w.conn, w.process.sentinel]) and not w.conn.poll():
                raise self._died(w)
        return self._read(w)

    def _close(self) -> None:
        for w in self._workers:
            with contextlib.suppress(OSError, ValueError):  # dead already: terminate() below
                w.conn.send(("close", None))
        for w in self._workers:
            w.process.join(self._join_timeout)
            if w.process.is_alive():
                w.process.terminate()
                w.process.join(1.0)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            w.conn.close()

    # -- pipe helpers ---------------------------------------------------------------------------
    def _split(self, actions: list[str], env_ids: np.ndarray) -> Iterator[tuple[_Worker, list]]:
        """Group actions by worker; ``env_ids`` must cover whole workers."""
        epw = self.envs_per_worker
        order = np.argsort(env_ids, kind="stable")
        blocks = env_ids[order].reshape(-1, epw) if env_ids.size % epw == 0 else None
        if blocks is None or not (np.all(blocks == blocks[:, :1] + np.arange(epw))
                                  and np.all(blocks[:, 0] % epw == 0)):
            raise ConfigError(f"env_ids must cover whole workers ({epw} consecutive envs each, "
                              f"as returned by recv()), got {env_ids.tolist()}")
        for row, block in enumerate(blocks):
            picked = order[row * epw:(row + 1) * epw]
            yield self._workers[block[0] // epw], [actions[j] for j in picked]

    def _post(self, w: _Worker, message: tuple) -> None:
        try:
            w.conn.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            raise self._died(w) from None
        w.busy, w.seq = True, next(self._seq)

    def _read(self, w: _Worker) -> tuple[bool, Any]:
        """Take the reply of a readable worker: ``(True, payload)`` or ``(False, its error)``."""
        try:
            status, payload = w.conn.recv()
        except (EOFError, OSError):
            raise self._died(w) from None
        w.busy = False
        if status == "ok":
            return True, payload
        where = f"worker {w.index} (envs {w.start}..{w.start + self.envs_per_worker - 1})"
        return False, _unpack_exception(payload, where)

    def _wait_ready(self) -> list[_Worker]:
        """Block until some busy worker has replied; return those, oldest request first.

        Process sentinels are waited on together with the pipes, so a worker that dies (even
        an idle one) wakes us up instead of leaving us blocked forever.
        """
        busy = [w for w in self._workers if w.busy]
        if not busy:
            raise BackendError("recv() without a pending send() or async_reset()")
        sentinels = {w.process.sentinel: w for w in self._workers}
        ready = wait([w.conn for w in busy] + list(sentinels))
        for item in ready:
            # A worker may exit right after its last reply (e.g. its envs failed to build):
            # that reply is still read; only a worker with nothing left to say has died.
            if isinstance(item, int) and item in sentinels:
                w = sentinels[item]
                if not (w.busy and w.conn.poll()):
                    raise self._died(w)
        return sorted((w for w in busy if w.conn.poll()), key=lambda w: w.seq)

    def _collect(self, need: int | None) -> tuple[list[tuple[_Worker, Any]], BaseException | None]:
        """Read ``need`` replies (``None``: every busy worker's), sorted by worker.

        Returns the successful payloads and the error of the lowest-numbered worker that
        failed, if any: all replies are read first, so the pipes stay in step and the error
        raised does not depend on which worker was quicker.
        """
        in_flight = sum(w.busy for w in self._workers)
        if need is not None and need > in_flight:  # would wait for replies that never come
            raise BackendError(f"recv() needs {need} workers' results but only {in_flight} have "
                               "requests in flight: send() the envs of the last batch first")
        need = in_flight if need is None else need
        replies: list[tuple[_Worker, Any]] = []
        errors: list[tuple[_Worker, BaseException]] = []
        while len(replies) + len(errors) < need:
            for w in self._wait_ready()[:need - len(replies) - len(errors)]:
                ok, value = self._read(w)
                (replies if ok else errors).append((w, value))
        replies.sort(key=lambda reply: reply[0].index)
        first_error = min(errors, key=lambda e: e[0].index)[1] if errors else None
        return replies, first_error

    def _drain(self) -> None:
        """Discard replies still in flight (e.g. after an error) so a reset starts clean."""
        self._collect(None)

    def _died(self, w: _Worker) -> WorkerDiedError:
        """Record and return the error for a worker that exited."""
        w.process.join(1.0)
        code = w.process.exitcode
        signalled = code is not None and code < 0 and -code in signal.valid_signals()
        how = f" (killed by {signal.Signals(-code).name})" if signalled else ""
        self._broken = WorkerDiedError(
            f"vector worker {w.index} (pid {w.process.pid}, envs {w.start}.."
            f"{w.start + self.envs_per_worker - 1}) died with exit code {code}{how}; "
            "the VecEnv cannot continue: close it and make a new one")
        return self._broken


# ----------------------------------------------------------------------------------------------
# Entry point.


def _make_serial(env_id: str, num_envs: int, *, num_workers: int | None, context: str | None,
                 **kwargs: Any) -> VecEnv:
    if num_workers not in (None, 1) or context is not None:
        raise ConfigError("num_workers and context apply to backend='multiprocessing' (and "
                          "'ray'); backend='serial' runs every env in this process")
    return SerialVecEnv(env_id, num_envs, **kwargs)


def _make_ray(env_id: str, num_envs: int, **kwargs: Any) -> VecEnv:
    raise BackendError("backend='ray' is not available yet in this version of textgyms; "
                       "it will need `pip install ray` (textgyms[ray]). Use backend="
                       "'multiprocessing' on one machine.")


# A backend is a factory taking make_vec's arguments; a new one only has to be listed here.
_BACKENDS: dict[str, Callable[..., VecEnv]] = {
    "serial": _make_serial,
    "multiprocessing": MultiprocessingVecEnv,
    "ray": _make_ray,
}


def make_vec(env_id: str, num_envs: int, *, backend: str = "serial", group_size: int = 1,
             autoreset: str = "same_step", num_workers: int | None = None,
             batch_size: int | None = None, context: str | None = None,
             **env_kwargs: Any) -> VecEnv:
    """Make a vector of ``num_envs`` envs ``gymnasium.make(env_id, **env_kwargs)``.

    ``backend``: ``"serial"`` (in-process), ``"multiprocessing"`` (worker processes; see
    :class:`MultiprocessingVecEnv` for ``num_workers``, ``batch_size`` and ``context``) or
    ``"ray"``. ``group_size=G``: the G consecutive envs of a group play the same tasks (GRPO).
    ``autoreset``: ``"same_step"`` (default), ``"next_step"`` or ``"disabled"``.
    Every other keyword goes to the env (so an env kwarg cannot share a name with the ones
    above). Bad settings raise :class:`~textgyms.errors.ConfigError` at once.
    """
    if backend not in _BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; choose one of: {', '.join(_BACKENDS)}")
    _check_config(num_envs, group_size, autoreset, batch_size)
    return _BACKENDS[backend](env_id, num_envs, group_size=group_size, autoreset=autoreset,
                              num_workers=num_workers, batch_size=batch_size, context=context,
                              env_kwargs=env_kwargs)
