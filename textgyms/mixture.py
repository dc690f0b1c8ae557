"""Env mixtures: several env ids, each with its kwargs and a sampling weight, played as one env.

A :class:`Mixture` is the spec; :class:`MixtureEnv` is a ``gymnasium.Env`` that plays, on each
``reset(seed=s)``, the entry ``Mixture.pick(s)`` reset with that same seed. The entry is a pure
function of the seed, so every member of a GRPO group (same seed) plays the same task of the same
env, in any process and under any vector backend. ``textgyms.make_vec`` takes a mixture wherever
it takes an env id::

    vec = textgyms.make_vec("textgyms/Wordle-v0*3,textgyms/ISO20022-MT103-v4", 8, group_size=4)

Infos of a mixture carry ``env_id``, ``env_name`` (the entry's unique label) and ``level`` (its
curriculum level, see :mod:`textgyms.curriculum`), so trainers can log per-env curves.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from textgyms.core import TextSpace
from textgyms.errors import ConfigError, ResetNeeded

__all__ = ["ENV_ID", "ENV_NAME", "LEVEL", "Mixture", "MixtureEntry", "MixtureEnv", "resolve_spec"]

# Info keys a mixture adds to every info it returns.
ENV_ID, ENV_NAME, LEVEL = "env_id", "env_name", "level"
_PICK_SALT = 0x6D697874  # keeps the entry draw independent of the task the env draws from seed
_SEED_BOUND = 2**31 - 1


def resolve_spec(env_id: str) -> EnvSpec:
    """Look up ``env_id`` (``"module:ns/Name-vN"`` imports the module first) in the registry."""
    if not isinstance(env_id, str):
        raise ConfigError(f"env_id must be a registered id string, got {env_id!r}")
    module, _, name = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    try:
        return gym.spec(name)
    except gym.error.Error as exc:
        raise ConfigError(f"unknown env id {env_id!r} ({exc}); did you `import textgyms`?") from exc


@dataclass(frozen=True)
class MixtureEntry:
    """One env of a mixture: ``gym.make(env_id, **kwargs)`` drawn with probability
    ``weight / sum(weights)``; ``name`` labels it in infos and curricula (default: ``env_id``)."""

    env_id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    name: str = ""


@dataclass(frozen=True)
class Mixture:
    """Weighted env entries (see :meth:`parse` for every accepted form)."""

    entries: tuple[MixtureEntry, ...]

    def __post_init__(self) -> None:
        if not self.entries:
            raise ConfigError("a mixture needs at least one env id")
        for e in self.entries:
            resolve_spec(e.env_id)
            if not isinstance(e.kwargs, Mapping) or not all(isinstance(k, str) for k in e.kwargs):
                raise ConfigError(f"kwargs of {e.env_id} must be a dict with str keys")
            w = e.weight
            number = isinstance(w, (int, float)) and not isinstance(w, bool)
            if not (number and math.isfinite(w) and w > 0):
                raise ConfigError(f"weight of {e.env_id} must be a finite number > 0")
        names = self.names
        if len(set(names)) != len(names):
            raise ConfigError(
                f"mixture entries need unique names, got {names}; give repeated env ids a "
                '"name" (e.g. {"id": "textgyms/Wordle-v0", "kwargs": {...}, "name": "wordle-hard"})'
            )

    @property
    def names(self) -> list[str]:
        """Each entry's label: its ``name``, or its env id."""
        return [e.name or e.env_id for e in self.entries]

    @property
    def probabilities(self) -> np.ndarray:
        """Each entry's sampling probability (weights normalised to sum 1)."""
        weights = np.array([e.weight for e in self.entries], np.float64)
        return weights / weights.sum()

    def pick(self, seed: int) -> int:
        """The entry played by the episode of seed ``seed``: a pure function of the seed."""
        u = np.random.default_rng([int(seed), _PICK_SALT]).random()
        cdf = np.cumsum(self.probabilities)
        return int(min(np.searchsorted(cdf, u, side="right"), len(cdf) - 1))

    def __str__(self) -> str:
        """The CLI form when no entry has kwargs or a name, else JSON."""
        if any(e.kwargs or e.name for e in self.entries):
            items = [
                {"id": e.env_id, "kwargs": dict(e.kwargs), "weight": e.weight}
                | ({"name": e.name} if e.name else {})
                for e in self.entries
            ]
            return json.dumps(items)
        items = [e.env_id if e.weight == 1 else f"{e.env_id}*{e.weight!r}" for e in self.entries]
        return ",".join(items)

    @classmethod
    def parse(cls, spec: Any) -> Mixture:
        """Build a mixture from any of these forms:

        - a :class:`Mixture` (returned as is);
        - a CLI string ``"textgyms/Wordle-v0*2,textgyms/Code-v0"`` (``*w``: weight, default 1);
        - a JSON string: a list of the items below, or one dict;
        - a list of items, each an env id, a dict ``{"id", "kwargs", "weight", "name"}`` (only
          ``id`` required) or a tuple ``(id, kwargs)`` / ``(id, kwargs, weight)``.
        """
        if isinstance(spec, Mixture):
            return spec
        if isinstance(spec, str):
            text = spec.strip()
            if text[:1] in ("[", "{"):
                try:
                    spec = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"mixture spec is not valid JSON: {exc}") from exc
                spec = [spec] if isinstance(spec, dict) else spec
            else:
                spec = [_parse_cli_item(item) for item in text.split(",")]
        if isinstance(spec, Mapping) or not isinstance(spec, Sequence) or isinstance(spec, str):
            raise ConfigError(f"a mixture spec must be a string or a list, got {spec!r}")
        return cls(tuple(_parse_item(item) for item in spec))


def _parse_cli_item(item: str) -> MixtureEntry:
    env_id, star, weight = item.strip().rpartition("*")
    if not star:
        return MixtureEntry(weight.strip())
    try:
        return MixtureEntry(env_id.strip(), {}, float(weight))
    except ValueError:
        raise ConfigError(f"bad weight in mixture item {item!r}; write ID*WEIGHT") from None


def _parse_item(item: Any) -> MixtureEntry:
    if isinstance(item, MixtureEntry):
        return item
    if isinstance(item, str):
        return MixtureEntry(item)
    if isinstance(item, Mapping):
        unknown = set(item) - {"id", "kwargs", "weight", "name"}
        if unknown or "id" not in item:
            raise ConfigError(
                f'a mixture dict needs "id" and may have "kwargs", "weight", "name"; got {item!r}'
            )
        kwargs = dict(item.get("kwargs") or {})
        return MixtureEntry(item["id"], kwargs, item.get("weight", 1.0), item.get("name", ""))
    if isinstance(item, tuple) and len(item) in (2, 3):
        return MixtureEntry(item[0], dict(item[1] or {}), *item[2:])
    raise ConfigError(
        f"bad mixture item {item!r}: use an env id, a dict with an 'id', or (id, kwargs[, weight])"
    )


def _union_space(spaces: Sequence[gym.Space], what: str) -> gym.Space:
    """One space holding every entry's: the largest ``TextSpace``, or the shared space."""
    if all(isinstance(s, TextSpace) for s in spaces):
        return TextSpace(max(s.max_length for s in spaces))
    if all(s == spaces[0] for s in spaces):
        return spaces[0]
    raise ConfigError(f"mixture entries have incompatible {what} spaces: {list(spaces)}")


class MixtureEnv(gym.Env[str, str]):
    """Plays, on each reset, the mixture entry picked by the seed (see the module docstring).

    ``ladders`` maps an entry's name to its curriculum levels (kwargs overlays, easiest first);
    ``reset(options={"levels": {name: level}})`` picks the level of the episode, and
    :attr:`levels` holds the levels used when an episode's options name none. One env per
    (entry, level) is made on first use and kept. ``unwrapped`` is the current entry's env, so
    oracle and ``call_env`` helpers reach the env that is playing. ``make_entry(index, kwargs)``
    makes an entry's env (default ``gym.make(entry.env_id, **kwargs)``; the remote backend opens
    a server session instead).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        mixture: Any,
        ladders: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        render_mode: str | None = None,
        make_entry: Callable[[int, dict[str, Any]], gym.Env] | None = None,
    ) -> None:
        self.mixture = Mixture.parse(mixture)
        self._make_entry = make_entry
        self.render_mode = render_mode
        names = self.mixture.names
        self.ladders = {n: tuple(dict(x) for x in (ladders or {}).get(n, ({},))) for n in names}
        unknown = set(ladders or ()) - set(names)
        if unknown:
            raise ConfigError(f"curriculum names {sorted(unknown)} are not in the mixture {names}")
        self.levels = dict.fromkeys(names, 0)
        self._last_levels = self.levels  # those of the latest reset (a curriculum's, say)
        self._envs: dict[tuple[int, int], gym.Env] = {}
        self._current: tuple[int, int] | None = None
        try:
            first = [self._env(i, 0) for i in range(len(names))]  # validates every entry's kwargs
        except BaseException:
            self.close()  # the entries already made (e.g. open server sessions)
            raise
        self.observation_space = _union_space([e.observation_space for e in first], "observation")
        self.action_space = _union_space([e.action_space for e in first], "action")

    def _env(self, index: int, level: int) -> gym.Env:
        key = (index, level)
        if key not in self._envs:
            entry = self.mixture.entries[index]
            kwargs = {**entry.kwargs, **self.ladders[self.mixture.names[index]][level]}
            if self.render_mode is not None:
                kwargs["render_mode"] = self.render_mode
            if self._make_entry is not None:
                self._envs[key] = self._make_entry(index, kwargs)
            else:
                self._envs[key] = gym.make(resolve_spec(entry.env_id), **kwargs)
        return self._envs[key]

    @property
    def unwrapped(self) -> gym.Env:  # type: ignore[override]
        """The unwrapped env of the entry playing now (of the first entry before any reset;
        this env itself once closed)."""
        env = self._envs.get(self._current or (0, 0))
        return self if env is None else env.unwrapped

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Reset the entry ``mixture.pick(seed)`` with ``seed`` (unseeded: a seed drawn from
        this env's RNG, so a seeded first reset fixes every later one)."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(_SEED_BOUND))
        options = dict(options or {})
        levels = {**self.levels, **options.pop("levels", {})}
        self._last_levels = levels
        index = self.mixture.pick(seed)
        level = self._level(index, levels)
        self._current = (index, level)
        obs, info = self._env(index, level).reset(seed=seed, options=options or None)
        return obs, self._tag(info)

    def _level(self, index: int, levels: Mapping[str, Any]) -> int:
        """Entry ``index``'s level in ``levels``, checked against its ladder."""
        name = self.mixture.names[index]
        level = levels[name]
        if not (isinstance(level, (int, np.integer)) and 0 <= level < len(self.ladders[name])):
            raise ConfigError(f"level of {name} must be in 0..{len(self.ladders[name]) - 1}")
        return int(level)

    def pregenerate(self, seed: int) -> None:
        """:meth:`~textgyms.core.TextEnv.pregenerate` on the env that ``reset(seed=seed)``
        will play if it uses the levels of the latest reset (a curriculum passes them with
        every reset and changes them rarely); nothing for an entry without the hook."""
        index = self.mixture.pick(seed)
        env = self._env(index, self._level(index, self._last_levels)).unwrapped
        hook = getattr(env, "pregenerate", None)
        if hook is not None:
            hook(seed)

    def warm_pregenerated(self) -> bool:
        """:meth:`~textgyms.core.TextEnv.warm_pregenerated` on every entry's env (the one that
        :meth:`pregenerate` drew for keeps the task); whether any warmed one."""
        hooks = [getattr(env.unwrapped, "warm_pregenerated", None) for env in self._envs.values()]
        return any([hook() for hook in hooks if hook is not None])

    def forget_pregenerated(self) -> bool:
        """Drop the task every entry's env keeps from :meth:`pregenerate`; whether any did."""
        hooks = [getattr(env.unwrapped, "forget_pregenerated", None) for env in self._envs.values()]
        return any([hook() for hook in hooks if hook is not None])

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the entry playing now."""
        if self._current is None:
            raise ResetNeeded("call reset() before step() on a MixtureEnv")
        obs, reward, terminated, truncated, info = self._envs[self._current].step(action)
        return obs, reward, terminated, truncated, self._tag(info)

    def _tag(self, info: dict[str, Any]) -> dict[str, Any]:
        assert self._current is not None
        index, level = self._current
        entry = self.mixture.entries[index]
        return {**info, ENV_ID: entry.env_id, ENV_NAME: self.mixture.names[index], LEVEL: level}

    def render(self) -> Any:
        """The playing entry's render (``"ansi"``: its transcript)."""
        return None if self._current is None else self._envs[self._current].render()

    def close(self) -> None:
        """Close every env made so far."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()
        self._current = None
