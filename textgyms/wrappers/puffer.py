"""PufferLib vector envs over textgyms: ``make(env_id, num_envs, backend, tokenizer)``.

Each env is ``GymnasiumPufferEnv(PufferInfo(TokenizeText(gym.make(env_id))))``, vectorized by
``pufferlib.vector`` (from ``pufferlib-core``; the ``pufferlib`` 3.0.0 wheel pins gymnasium<=0.29
and numpy<2 and does not work here). Observations are int32 token ids, actions token ids::

    from textgyms.wrappers import puffer
    vec = puffer.make("textgyms/Wordle-v0", num_envs=8, backend="Multiprocessing",
                      num_workers=2, tokenizer="bytes", max_obs_tokens=256)
    obs, infos = vec.reset(seed=0)                  # obs: (8, 256) int32
    obs, rewards, terminals, truncations, infos = vec.step(vec.action_space.sample())

PufferLib's own conventions apply: an env that finished is reset on the *next* ``send`` (that
step's action is ignored) and continues its own RNG. ``reset(seed=s)`` seeds env ``i`` with
``s + i`` on every backend, so the envs play distinct task streams, the same ones whatever the
backend and worker count. (PufferLib alone seeds env ``j`` of worker ``w`` with ``s + w + j``
under Multiprocessing, so workers overlap, and with ``s + j`` under Ray, so every worker repeats
worker 0's seeds; :class:`SeedShift` corrects each env's seed.)

Infos are PufferLib-style episode summaries: one dict per finished episode
(``score``, ``solved``, ``turns``, ``invalid``, ``episode_return``), nothing on other steps,
so no transcript crosses a process boundary; pass ``infos="full"`` for every key of every step
(lists, such as the ``messages`` transcript, arrive as tuples: PufferLib averages lists).
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym

from textgyms.core import SCORE, SOLVED, TURN, invalid_after
from textgyms.errors import BackendError, ConfigError
from textgyms.vector.base import env_factory
from textgyms.wrappers.tokenize import TokenizeText

__all__ = ["BACKENDS", "ListsAsTuples", "PufferInfo", "SeedShift", "make", "make_env", "seed_shift"]

BACKENDS = ("Serial", "Multiprocessing", "Ray")
INFO_MODES = ("episode", "full")


class PufferInfo(gym.Wrapper):
    """Infos as PufferLib logs them: a summary dict when an episode ends, ``{}`` otherwise."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._return = 0.0
        self._invalid = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset; the info is dropped (PufferLib only collects non-empty infos)."""
        obs, _ = self.env.reset(**kwargs)
        self._return, self._invalid = 0.0, 0
        return obs, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step; on the last step of an episode the info is its summary."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        self._invalid = invalid_after(self._invalid, info, terminated or truncated)
        if not (terminated or truncated):
            return obs, reward, terminated, truncated, {}
        summary = {
            "score": float(info[SCORE]),
            "solved": float(info[SOLVED]),
            "turns": int(info[TURN]),
            "invalid": self._invalid,
            "episode_return": self._return,
        }
        return obs, reward, terminated, truncated, summary


class ListsAsTuples(gym.Wrapper):
    """Info values that are lists (``messages``, ``tools``) become tuples, at any depth.

    PufferLib's Serial vectors (which Multiprocessing and Ray workers run) average every list
    in an info with ``np.mean`` outside any error handling, which raises on a transcript; a
    tuple is kept as is. Used by ``infos="full"``.
    """

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset; the info with its lists as tuples."""
        obs, info = self.env.reset(**kwargs)
        return obs, _tuples(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step; the info with its lists as tuples."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, _tuples(info)


def _tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    return value


class SeedShift(gym.Wrapper):
    """Adds ``shift`` to every seed given to ``reset`` (an unseeded reset stays unseeded)."""

    def __init__(self, env: gym.Env, shift: int) -> None:
        super().__init__(env)
        self.shift = int(shift)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Reset with ``seed + shift``."""
        return self.env.reset(seed=None if seed is None else seed + self.shift, options=options)


def seed_shift(backend: str, index: int, envs_per_worker: int) -> int:
    """What env ``index`` adds to the seed PufferLib gives it so that it resets with ``s + index``.

    PufferLib's ``async_reset(s)`` resets env ``j`` of worker ``w`` with ``s + w + j`` under
    Multiprocessing (each worker's pipe carries ``s + w``) and ``s + j`` under Ray (every actor
    gets ``s``); Serial already uses ``s + index``.
    """
    worker = index // envs_per_worker
    if backend == "Multiprocessing":
        return worker * (envs_per_worker - 1)
    if backend == "Ray":
        return worker * envs_per_worker
    return 0


def make_env(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    tokenizer: Any = "bytes",
    max_obs_tokens: int = 256,
    max_action_tokens: int = 32,
    infos: str = "episode",
    history: bool = False,
    buf: Any = None,
    seed: int = 0,
    shift: int = 0,
) -> Any:
    """One ``GymnasiumPufferEnv`` over the tokenized env (the creator ``make`` vectorizes);
    ``shift``: see :func:`seed_shift`."""
    import pufferlib.emulation

    env = TokenizeText(
        env_factory(env_id, dict(env_kwargs or {}))(),
        tokenizer,
        max_obs_tokens,
        max_action_tokens,
        history=history,
    )
    env = PufferInfo(env) if infos == "episode" else ListsAsTuples(env)
    if shift:
        env = SeedShift(env, shift)
    return pufferlib.emulation.GymnasiumPufferEnv(env=env, buf=buf, seed=seed)


def make(
    env_id: str,
    num_envs: int,
    backend: str = "Serial",
    tokenizer: Any = "bytes",
    *,
    max_obs_tokens: int = 256,
    max_action_tokens: int = 32,
    env_kwargs: dict[str, Any] | None = None,
    infos: str = "episode",
    history: bool = False,
    seed: int = 0,
    **vec_kwargs: Any,
) -> Any:
    """A ``pufferlib.vector`` env of ``num_envs`` tokenized ``env_id`` envs.

    ``env_id`` may be a mixture spec (see :meth:`textgyms.mixture.Mixture.parse`): env ``i``
    then plays, each episode, the entry its seed picks (with ``infos="full"``, infos name it).

    ``backend``: ``"Serial"``, ``"Multiprocessing"`` or ``"Ray"`` (PufferLib's). ``tokenizer``:
    see :class:`TokenizeText` (use a string spec with Multiprocessing/Ray: it is pickled to the
    workers); ``history=True`` makes each observation the whole transcript so far.
    ``vec_kwargs`` go to ``pufferlib.vector.make`` (``num_workers``, ``batch_size``,
    ``zero_copy``, ``overwork``: PufferLib refuses more workers than physical cores unless
    ``overwork=True``).
    """
    check = {"backend": (backend, BACKENDS), "infos": (infos, INFO_MODES)}
    for name, (value, choices) in check.items():
        if value not in choices:
            raise ConfigError(f"unknown {name} {value!r}; choose one of: {', '.join(choices)}")
    try:
        import pufferlib.vector
    except ImportError as exc:
        raise BackendError(
            "textgyms.wrappers.puffer needs pufferlib-core: `pip install --no-deps "
            "pufferlib-core` after torch (then psutil, rich, rich-argparse if missing)"
        ) from exc
    probe = env_factory(env_id, dict(env_kwargs or {}))()  # checks the id or mixture and kwargs
    TokenizeText(probe, tokenizer, max_obs_tokens, 1)
    probe.close()
    workers = vec_kwargs.get("num_workers")
    per_worker = num_envs // workers if isinstance(workers, int) and workers > 0 else 1
    args = (env_id, dict(env_kwargs or {}), tokenizer, max_obs_tokens, max_action_tokens, infos)
    creators = [
        functools.partial(
            make_env, *args, history, shift=seed_shift(backend, i, max(per_worker, 1))
        )
        for i in range(num_envs)
    ]
    vec = pufferlib.vector.make(
        creators,
        env_args=[[]] * num_envs,
        env_kwargs=[{}] * num_envs,
        num_envs=num_envs,
        backend=getattr(pufferlib.vector, backend),
        seed=seed,
        **vec_kwargs,
    )
    if backend == "Ray":
        # PufferLib's Ray.close() calls ray.shutdown(), which would also drop the caller's
        # connection to their cluster; only this vector's actors are stopped instead.
        vec.close = functools.partial(_close_ray_actors, vec)
    return vec


def _close_ray_actors(vec: Any) -> None:
    """Close the envs of a PufferLib Ray vector and stop its actors, leaving Ray running."""
    import ray

    try:
        ray.get([actor.close.remote() for actor in vec.envs])
    finally:
        for actor in vec.envs:
            ray.kill(actor, no_restart=True)
        vec.driver_env.close()
