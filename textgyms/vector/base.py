"""The backend-independent part of the vector envs: ``Batch``, the per-env runner and ``VecEnv``.

``_EnvRunner`` and the ``_reset_runners``/``_step_runners`` helpers are shared by every backend:
the same code runs in-process (``serial``) and inside worker processes (``multiprocessing``).
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from textgyms.core import TextEnv
from textgyms.errors import BackendError, ConfigError, ResetNeeded, WorkerDiedError
from textgyms.mixture import Mixture, MixtureEnv, resolve_spec

if TYPE_CHECKING:
    from typing_extensions import Self

AUTORESET_MODES = ("same_step", "next_step", "disabled")
_SEED_BOUND = 2**31 - 1  # base seeds drawn for reset(seed=None) stay in int32 range

# What one env (or one worker's slice of envs) sends back:
# obs, rewards, terminated, truncated, infos.
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
    return Batch(
        obs,
        np.asarray(rewards, np.float32),
        np.asarray(term, np.bool_),
        np.asarray(trunc, np.bool_),
        infos,
        np.asarray(ids, np.int64),
    )


# ----------------------------------------------------------------------------------------------
# One env and its episode bookkeeping: the same code runs in-process and inside workers.


# Reset-ahead: a worker told to draw ahead first waits this long for a next command, so a
# driver that steps again at once (no model turn: a benchmark, a scripted policy) finds it
# waiting, not drawing on the cores the driver needs; a model's turn is far longer.
AHEAD_SETTLE_S = 0.003


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
        self.prepared: int | None = None  # the episode whose successor's task is drawn
        self.warmed: int | None = None  # ... and warmed (TextEnv.warm)

    def wants_prepare(self) -> bool:
        """Whether :meth:`prepare_next` has a task to draw."""
        return self.base_seed is not None and self.prepared != self.episode

    def wants_warm(self) -> bool:
        """Whether :meth:`warm_next` has a drawn task to warm."""
        return self.prepared == self.episode and self.warmed != self.episode

    def prepare_next(self) -> None:
        """Draw the task of this env's next episode now (:meth:`TextEnv.pregenerate`), so its
        reset only looks it up: a worker calls this while it waits for actions. Once per
        episode; nothing for an env without a seed schedule or without the hook. An error is
        left for the reset itself to raise (it draws the same task again)."""
        if self.wants_prepare():
            self.prepared = self.episode
            self._hook("pregenerate", self.base_seed + (self.episode + 1) * self.stride)

    def warm_next(self) -> None:
        """Warm the task :meth:`prepare_next` drew (:meth:`TextEnv.warm_pregenerated`: what the
        task alone fixes, into caches). Workers call it once every env's next task is drawn:
        drawing saves a step more than warming does. An error is left for the episode."""
        if self.wants_warm():
            self.warmed = self.episode
            self._hook("warm_pregenerated")

    def _hook(self, name: str, *args: Any) -> None:
        """The env's reset-ahead hook ``name`` (the mixture's own), if it has one; its errors
        are swallowed: the reset or the episode meets them again where they belong."""
        target = self.env if isinstance(self.env, MixtureEnv) else self.env.unwrapped
        hook = getattr(target, name, None)
        if hook is not None:
            with contextlib.suppress(Exception):
                hook(*args)

    def reset(self, seed: int | None, options: dict | None) -> tuple[str, dict]:
        """Start an episode; ``seed=None`` continues this env's schedule when it has one."""
        if seed is None and self.base_seed is not None:
            self.episode += 1
            seed = self.base_seed + self.episode * self.stride
        else:
            self.base_seed, self.episode, self.prepared, self.warmed = seed, 0, None, None
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


def _reset_runners(
    runners: Sequence[_EnvRunner],
    seeds: Sequence[int | None],
    options: dict | None,
    mask: Sequence[bool],
) -> _Result:
    """Reset the masked runners; the others report their last observation and an empty info."""
    obs: list[str] = []
    infos: list[dict] = []
    for runner, seed, chosen in zip(runners, seeds, mask):
        o, info = runner.reset(seed, options) if chosen else (runner.last_obs, {})
        obs.append(o)
        infos.append(info)
    n = len(runners)
    return obs, [0.0] * n, [False] * n, [False] * n, infos


_NO_PREFETCH = TextEnv.prefetch.__func__


def _prefetch(runners: Sequence[_EnvRunner], actions: Sequence[str]) -> None:
    """Let each env class with two or more envs about to step batch their slow lookups
    (``TextEnv.prefetch``); a runner that only resets this step is left out."""
    groups: dict[Any, tuple[list[gym.Env], list[str]]] = {}
    for runner, action in zip(runners, actions):
        env = runner.env.unwrapped
        hook = getattr(type(env), "prefetch", None)
        if getattr(hook, "__func__", None) is _NO_PREFETCH:  # the base class's: nothing to do
            continue
        if hook is not None and not runner.pending_reset:
            envs, acts = groups.setdefault(hook, ([], []))
            envs.append(env)
            acts.append(action)
    for hook, (envs, acts) in groups.items():
        if len(envs) > 1:
            hook(envs, acts)


def _step_runners(runners: Sequence[_EnvRunner], actions: Sequence[str]) -> _Result:
    """Step every runner with its action (after the envs' batched prefetch)."""
    if len(runners) > 1:
        _prefetch(runners, actions)
    out: _Result = ([], [], [], [], [])
    for runner, action in zip(runners, actions):
        for column, value in zip(out, runner.step(action)):
            column.append(value)
    return out


@dataclass(frozen=True)
class EnvFactory:
    """Makes one env of a vector; picklable, so workers and actors build their envs with it.

    A plain id makes ``gym.make(spec, **kwargs)``. Workers receive the spec rather than the id,
    so envs registered at runtime in the parent (outside ``textgyms``) can still be built under
    the forkserver and spawn start methods. A mixture makes a :class:`MixtureEnv` (``kwargs``
    are then already folded into its entries).
    """

    spec: EnvSpec | None
    kwargs: dict[str, Any]
    mixture: Mixture | None = None
    ladders: dict[str, tuple[dict[str, Any], ...]] | None = None

    def __call__(self) -> gym.Env:
        """A new env."""
        if self.mixture is not None:
            return MixtureEnv(self.mixture, self.ladders)
        assert self.spec is not None
        return gym.make(self.spec, **self.kwargs)


def is_mixture_spec(env_id: Any) -> bool:
    """Whether ``make_vec``'s first argument names a mixture rather than one registered id."""
    if isinstance(env_id, str):
        return env_id.lstrip()[:1] in ("[", "{") or "," in env_id or "*" in env_id
    return env_id is not None


def env_factory(
    env_id: Any, env_kwargs: dict[str, Any], ladders: Mapping[str, Any] | None = None
) -> EnvFactory:
    """The factory for ``make_vec(env_id, **env_kwargs)``; ``env_kwargs`` are every mixture
    entry's defaults (an entry's own kwargs win). ``ladders`` (a curriculum's levels) turn a
    plain id into a one-entry mixture."""
    if not is_mixture_spec(env_id) and ladders is None:
        return EnvFactory(resolve_spec(env_id), dict(env_kwargs))
    mixture = Mixture.parse(env_id)
    unknown = set(ladders or ()) - set(mixture.names)
    if unknown:
        raise ConfigError(
            f"curriculum envs {sorted(unknown)} are not in the mixture; choose from "
            f"{mixture.names}"
        )
    entries = tuple(replace(e, kwargs={**env_kwargs, **e.kwargs}) for e in mixture.entries)
    lad = None if ladders is None else {k: tuple(map(dict, v)) for k, v in ladders.items()}
    return EnvFactory(None, {}, Mixture(entries), lad)


def _check_config(num_envs: int, group_size: int, autoreset: str, batch_size: int | None) -> int:
    """Validate the backend-independent settings; return the effective batch size."""
    for name, value in (("num_envs", num_envs), ("group_size", group_size)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be a positive int, got {value!r}")
    if num_envs % group_size:
        raise ConfigError(f"num_envs={num_envs} must be a multiple of group_size={group_size}")
    if autoreset not in AUTORESET_MODES:
        raise ConfigError(
            f"unknown autoreset {autoreset!r}; choose one of: " + ", ".join(AUTORESET_MODES)
        )
    if batch_size is None:
        return int(num_envs)
    if not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= num_envs:
        raise ConfigError(
            f"batch_size must be None or an int in [1, num_envs={num_envs}], got {batch_size!r}"
        )
    if batch_size < num_envs and autoreset == "disabled":
        raise ConfigError(
            "batch_size < num_envs needs an autoreset mode (same_step or next_step):"
            " with autoreset='disabled' a finished env would never come back"
        )
    return int(batch_size)


# ----------------------------------------------------------------------------------------------
# The base class: public API written once on top of the backend primitives.


class VecEnv(abc.ABC):
    """A batch of ``num_envs`` copies of one text env, or of a mixture (see the package
    docstring).

    Attributes: ``num_envs``, ``group_size``, ``num_groups``, ``autoreset``, ``batch_size``,
    ``single_observation_space``, ``single_action_space``, ``env_ids`` (of the last batch),
    ``mixture`` (a :class:`~textgyms.mixture.Mixture`, or None for one id) and ``make_env`` (the
    picklable factory backends build every env with). Use as a context manager or call
    :meth:`close`.
    """

    single_observation_space: gym.Space
    single_action_space: gym.Space

    def __init__(
        self,
        env_id: Any,
        num_envs: int,
        *,
        group_size: int = 1,
        autoreset: str = "same_step",
        batch_size: int | None = None,
        env_kwargs: dict[str, Any] | None = None,
        ladders: Mapping[str, Any] | None = None,
    ) -> None:
        self._closed = True  # until construction succeeds; keeps __del__/close safe
        self._broken: WorkerDiedError | None = None
        self.batch_size = _check_config(num_envs, group_size, autoreset, batch_size)
        self.make_env = env_factory(env_id, dict(env_kwargs or {}), ladders)
        self.mixture = self.make_env.mixture  # None for a plain id
        self.env_id = env_id if self.mixture is None else str(self.mixture)
        self.spec = self.make_env.spec  # None for a mixture
        self.num_envs, self.group_size = int(num_envs), int(group_size)
        self.num_groups = self.num_envs // self.group_size
        self.autoreset = autoreset
        self.env_kwargs = dict(env_kwargs or {})
        self._rng = np.random.default_rng()  # the vector's own RNG; never the global one
        self._finished = np.zeros(self.num_envs, np.bool_)
        self._last_ids: np.ndarray | None = None

    # -- the three primitives each backend implements -------------------------------------
    @abc.abstractmethod
    def _async_reset(self, seeds: list[int | None], options: dict | None, mask: np.ndarray) -> None:
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
    def async_reset(
        self,
        seeds: Sequence[int | None] | None = None,
        options: dict | None = None,
        mask: np.ndarray | None = None,
    ) -> None:
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

    def send(
        self, actions: Sequence[str], env_ids: Sequence[int] | np.ndarray | None = None
    ) -> None:
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
            raise ResetNeeded(
                f"envs {done} finished their episode and autoreset='disabled'; "
                "reset them with vec.reset(options={'reset_mask': mask}) first"
            )
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
    def reset(
        self, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[list[str], list[dict]]:
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
        return (
            f"{type(self).__name__}({self.env_id!r}, num_envs={self.num_envs}, "
            f"group_size={self.group_size}, autoreset={self.autoreset!r})"
        )

    # -- helpers ------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._broken is not None:
            raise WorkerDiedError(str(self._broken))
        if self._closed:
            raise BackendError(f"{self!r} is closed")

    def _check_mask(self, mask: Any) -> np.ndarray:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
            raise ConfigError(
                f"reset_mask must be a bool array of shape ({self.num_envs},) with "
                f"at least one True, got dtype {mask.dtype} shape {mask.shape}"
            )
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
            s is None or _is_seed(s) for s in seeds
        ):
            raise ConfigError(
                f"seed must be None, an int >= 0, or a list of {self.num_envs} (per "
                f"env) or {self.num_groups} (per group) ints >= 0 or None"
            )
        seeds = [int(self._rng.integers(_SEED_BOUND)) if s is None else int(s) for s in seeds]
        if len(seeds) != self.num_envs:  # per group: every member plays the group's task
            seeds = [seeds[i // self.group_size] for i in range(self.num_envs)]
        return seeds


def _is_seed(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0


def choose_workers(num_envs: int, num_workers: int | None, cpus: int) -> int:
    """Validate ``num_workers``: a divisor of ``num_envs`` (every worker runs as many envs).
    The default is the largest divisor of ``num_envs`` that is at most ``cpus``."""
    if num_workers is None:
        cap = max(1, min(num_envs, cpus))
        return max(d for d in range(1, cap + 1) if num_envs % d == 0)
    if (
        not isinstance(num_workers, (int, np.integer))
        or isinstance(num_workers, bool)
        or not 1 <= num_workers <= num_envs
        or num_envs % num_workers
    ):
        raise ConfigError(
            f"num_workers must be a divisor of num_envs={num_envs} (each worker "
            f"runs the same number of envs), got {num_workers!r}"
        )
    return int(num_workers)


def split_by_worker(
    actions: Sequence[str], env_ids: np.ndarray, envs_per_worker: int
) -> list[tuple[int, list[str]]]:
    """Group ``actions`` (one per id in ``env_ids``) by worker, as ``(worker, actions)`` pairs
    in env order. ``env_ids`` must cover whole workers, as ``recv`` returns them."""
    epw = envs_per_worker
    order = np.argsort(env_ids, kind="stable")
    blocks = env_ids[order].reshape(-1, epw) if env_ids.size % epw == 0 else None
    if blocks is None or not (
        np.all(blocks == blocks[:, :1] + np.arange(epw)) and np.all(blocks[:, 0] % epw == 0)
    ):
        raise ConfigError(
            f"env_ids must cover whole workers ({epw} consecutive envs each, "
            f"as returned by recv()), got {env_ids.tolist()}"
        )
    return [
        (int(block[0]) // epw, [actions[j] for j in order[row * epw : (row + 1) * epw]])
        for row, block in enumerate(blocks)
    ]


def check_whole_step(backend: str, env_ids: np.ndarray, num_envs: int, pending: object) -> None:
    """Refuse a send to a backend that steps every env together unless it names every env in
    order and the previous results were received (serial and remote share this rule)."""
    if not np.array_equal(env_ids, np.arange(num_envs)):
        raise ConfigError(
            f"backend={backend!r} steps every env together: env_ids must be "
            f"0..{num_envs - 1} in order"
        )
    if pending is not None:
        raise BackendError("the previous results were not received; call recv() first")
