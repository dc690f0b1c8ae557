"""Vector environments: many text envs stepped as one batch (docs/architecture.md, "Vectors").

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

Mixtures: ``env_id`` may name several envs with kwargs and weights (see
:mod:`textgyms.mixture`); each episode plays the entry its seed picks, so groups stay whole and
every backend gives the same batches. ``curriculum=`` wraps the vector in a
:class:`~textgyms.curriculum.CurriculumVecEnv`.

Autoreset happens where the env lives (in-process or inside the worker), so a ``same_step``
reset costs no extra round trip and serial and multiprocessing produce the very same infos.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from textgyms.errors import BackendError, ConfigError
from textgyms.vector.base import (
    AUTORESET_MODES,  # noqa: F401  (re-exported: the valid modes)
    Batch,
    VecEnv,
    _check_config,
)
from textgyms.vector.multiprocessing import MultiprocessingVecEnv
from textgyms.vector.remote import make_remote
from textgyms.vector.serial import SerialVecEnv

__all__ = ["Batch", "MultiprocessingVecEnv", "SerialVecEnv", "VecEnv", "make_vec"]

# ----------------------------------------------------------------------------------------------
# Entry point.


def _make_serial(
    env_id: Any, num_envs: int, *, num_workers: int | None, context: str | None, **kwargs: Any
) -> VecEnv:
    if num_workers not in (None, 1) or context is not None:
        raise ConfigError(
            "num_workers and context apply to backend='multiprocessing' (and "
            "'ray'); backend='serial' runs every env in this process"
        )
    return SerialVecEnv(env_id, num_envs, **kwargs)


def _make_ray(env_id: Any, num_envs: int, *, context: str | None, **kwargs: Any) -> VecEnv:
    if context is not None:
        raise ConfigError(
            "context applies to backend='multiprocessing'; backend='ray' runs envs in Ray actors"
        )
    try:  # imported here: ray is an optional dependency (textgyms[ray]) and slow to import
        from textgyms.vector.ray import RayVecEnv
    except ImportError as exc:
        raise BackendError("backend='ray' needs `pip install ray` (textgyms[ray])") from exc
    return RayVecEnv(env_id, num_envs, **kwargs)


# A backend is a factory taking make_vec's arguments; a new one only has to be listed here.
_BACKENDS: dict[str, Callable[..., VecEnv]] = {
    "serial": _make_serial,
    "multiprocessing": MultiprocessingVecEnv,
    "ray": _make_ray,
    "remote": make_remote,  # sessions of `textgyms serve` servers: urls=[...], token=...
}


def make_vec(
    env_id: Any,
    num_envs: int,
    *,
    backend: str = "serial",
    group_size: int = 1,
    autoreset: str = "same_step",
    num_workers: int | None = None,
    batch_size: int | None = None,
    context: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    curriculum: Any = None,
    actor_options: Mapping[str, Any] | None = None,
    reset_ahead: bool | None = None,
    **more_env_kwargs: Any,
) -> VecEnv:
    """Make a vector of ``num_envs`` envs ``gymnasium.make(env_id, **env_kwargs)``.

    ``env_id`` may also be a mixture (see :meth:`textgyms.mixture.Mixture.parse`: a
    ``"ID*W,ID"`` string, JSON, or a list of ids / dicts / tuples): each episode plays the entry
    picked by its seed, with ``env_kwargs`` as every entry's defaults, and infos carry
    ``env_id``, ``env_name`` and ``level``. ``curriculum`` (a
    :class:`~textgyms.curriculum.Curriculum`, dict or JSON) returns a
    :class:`~textgyms.curriculum.CurriculumVecEnv` whose envs start each episode at their
    current difficulty level (``autoreset`` ``"same_step"`` or ``"disabled"``, full batches).

    ``backend``: ``"serial"`` (in-process), ``"multiprocessing"`` (worker processes; see
    :class:`MultiprocessingVecEnv` for ``num_workers``, ``batch_size`` and ``context``) or
    ``"ray"`` (``actor_options={...}`` go to each Ray actor's ``.options()``, e.g.
    ``{"num_cpus": 1}`` or ``{"resources": {"env_node": 1}}`` to place the actors on the
    nodes offering that resource). ``reset_ahead`` (multiprocessing and Ray, on by default):
    workers draw their envs' next tasks while they wait for actions (see
    :class:`MultiprocessingVecEnv`). ``group_size=G``: the G consecutive envs of a group play
    the same tasks (GRPO).
    ``autoreset``: ``"same_step"`` (default), ``"next_step"`` or ``"disabled"``.
    Every other keyword goes to the env; ``env_kwargs={...}`` passes env kwargs whose names
    clash with the ones above (e.g. Search's ``backend="fts5"``). Bad settings raise
    :class:`~textgyms.errors.ConfigError` at once.
    """
    clash = set(env_kwargs or ()) & set(more_env_kwargs)
    if clash:
        raise ConfigError(f"env kwarg(s) {', '.join(sorted(clash))} given twice")
    env_kwargs = {**(env_kwargs or {}), **more_env_kwargs}
    if backend not in _BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; choose one of: {', '.join(_BACKENDS)}")
    _check_config(num_envs, group_size, autoreset, batch_size)
    common = {"num_workers": num_workers, "batch_size": batch_size, "context": context}
    if actor_options is not None:
        if backend != "ray":
            raise ConfigError(
                f"actor_options apply to backend='ray' (Ray actor options), not {backend!r}"
            )
        common["actor_options"] = actor_options  # checked by the Ray backend before it starts
    if reset_ahead is not None:
        if backend not in ("multiprocessing", "ray"):
            raise ConfigError(
                f"reset_ahead applies to backend='multiprocessing' and 'ray' (their workers "
                f"draw the next tasks while they wait), not {backend!r}"
            )
        common["reset_ahead"] = reset_ahead
    if curriculum is None:
        return _BACKENDS[backend](
            env_id,
            num_envs,
            group_size=group_size,
            autoreset=autoreset,
            env_kwargs=env_kwargs,
            **common,
        )
    from textgyms.curriculum import Curriculum, CurriculumVecEnv

    cur = Curriculum.parse(curriculum)
    if autoreset not in ("same_step", "disabled") or batch_size not in (None, num_envs):
        raise ConfigError(
            "a curriculum needs autoreset='same_step' or 'disabled' and full batches "
            "(batch_size=None): it decides each episode's level from the results in env order"
        )
    inner = _BACKENDS[backend](
        env_id,
        num_envs,
        group_size=group_size,
        autoreset="disabled",
        env_kwargs=env_kwargs,
        ladders=cur.ladders,
        **common,
    )
    return CurriculumVecEnv(inner, cur, autoreset)  # type: ignore[return-value]
