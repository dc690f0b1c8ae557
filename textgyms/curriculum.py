"""A success-rate curriculum: each env of a mixture moves up or down a ladder of difficulty levels.

A :class:`Curriculum` holds, per env (a mixture entry's name, by default its id), a ladder of
kwargs overlays, easiest first, and a window of that env's latest episode outcomes. When the
window is full and its success rate reaches ``promote`` the env moves one level up; at or below
``demote`` it moves one level down; either way the window starts afresh. Moves depend only on
the order of the recorded outcomes, so a run is deterministic given its seed and its actions.

Two ways to use it:

- ``textgyms.make_vec(spec, n, curriculum=cur)`` returns a :class:`CurriculumVecEnv`: it records
  every finished episode, and resets finished envs itself (``same_step`` autoreset) so that the
  members of a GRPO group always play the same task at the same level.
- Any loop: make the vector with ``curriculum=Curriculum(..., record="manual")`` and call
  :meth:`Curriculum.record` with the episodes you count (e.g. only the first episode of each
  env in a GRPO rollout); every ``reset`` starts its episodes at the current levels.

``cur.metrics()`` gives ``curriculum/<name>/level`` and ``curriculum/<name>/success`` to log.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from textgyms.core import SOLVED
from textgyms.errors import ConfigError
from textgyms.mixture import ENV_NAME

__all__ = ["Curriculum", "CurriculumVecEnv"]

RECORD_MODES = ("auto", "manual")


class Curriculum:
    """Per-env difficulty ladders moved by the windowed success rate (see the module docstring).

    ``ladders``: env name -> list of kwargs overlays (level 0 first), e.g.
    ``{"textgyms/NetConfig-v4": [{"difficulty": "easy"}, {"difficulty": "medium"}]}``; a list of
    plain values is shorthand for ``{"difficulty": value}`` overlays. ``window``: outcomes per
    decision. ``start``: initial levels (default 0). ``record``: ``"auto"`` (a curriculum vector
    records every finished episode) or ``"manual"`` (you call :meth:`record`).
    """

    def __init__(
        self,
        ladders: Mapping[str, Sequence[Any]],
        *,
        window: int = 32,
        promote: float = 0.8,
        demote: float = 0.2,
        start: Mapping[str, int] | None = None,
        record: str = "auto",
    ) -> None:
        if not isinstance(ladders, Mapping) or not ladders:
            raise ConfigError("ladders must be a non-empty dict: env name -> list of levels")
        self.ladders = {str(k): _ladder(k, v) for k, v in ladders.items()}
        if not (isinstance(window, int) and window >= 1):
            raise ConfigError(f"window must be an int >= 1, got {window!r}")
        if not 0.0 <= demote < promote <= 1.0:
            raise ConfigError(f"need 0 <= demote < promote <= 1, got {demote=} {promote=}")
        if record not in RECORD_MODES:
            raise ConfigError(f"unknown record {record!r}; choose one of: auto, manual")
        self.window, self.promote, self.demote, self.mode = window, promote, demote, record
        self.levels = {name: 0 for name in self.ladders}
        for name, level in (start or {}).items():
            self._check_level(name, level)
            self.levels[name] = int(level)
        self._outcomes = {name: deque(maxlen=window) for name in self.ladders}
        self.moves: list[tuple[int, str, int]] = []  # (episodes recorded, name, new level)
        self.episodes = 0

    @classmethod
    def parse(cls, spec: Any) -> Curriculum:
        """A curriculum from itself, a dict or a JSON string: ``{"ladders": {...}, "window": 32,
        "promote": 0.8, "demote": 0.2, "start": {...}, "record": "auto"}``."""
        if isinstance(spec, Curriculum):
            return spec
        if isinstance(spec, str):
            try:
                spec = json.loads(spec)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"curriculum spec is not valid JSON: {exc}") from exc
        if not isinstance(spec, Mapping) or "ladders" not in spec:
            raise ConfigError('a curriculum spec is a dict with "ladders" (and options)')
        return cls(spec["ladders"], **{k: v for k, v in spec.items() if k != "ladders"})

    def _check_level(self, name: str, level: Any) -> None:
        if name not in self.ladders:
            raise ConfigError(
                f"unknown curriculum env {name!r}; choose one of: {list(self.ladders)}"
            )
        top = len(self.ladders[name]) - 1
        if not (isinstance(level, (int, np.integer)) and 0 <= level <= top):
            raise ConfigError(f"level of {name} must be an int in 0..{top}, got {level!r}")

    def record(self, name: str, solved: bool) -> int | None:
        """Record one finished episode of env ``name``; return its new level if it moved."""
        if name not in self.ladders:
            return None  # an env of the mixture without a ladder
        self.episodes += 1
        window = self._outcomes[name]
        window.append(bool(solved))
        if len(window) < self.window:
            return None
        rate, level = sum(window) / len(window), self.levels[name]
        step = 1 if rate >= self.promote else -1 if rate <= self.demote else 0
        if step == 0 or not 0 <= level + step < len(self.ladders[name]):
            return None
        self.levels[name] = level + step
        window.clear()
        self.moves.append((self.episodes, name, level + step))
        return level + step

    def record_info(self, info: Mapping[str, Any]) -> int | None:
        """Record the final info of an episode of a mixture (its ``env_name`` and ``solved``)."""
        return self.record(str(info[ENV_NAME]), bool(info.get(SOLVED)))

    def success_rate(self, name: str) -> float:
        """The success rate over the current window of ``name`` (NaN when empty)."""
        window = self._outcomes[name]
        return sum(window) / len(window) if window else float("nan")

    def metrics(self) -> dict[str, float]:
        """``curriculum/<name>/level`` and ``curriculum/<name>/success`` for every env."""
        out: dict[str, float] = {}
        for name in self.ladders:
            out[f"curriculum/{name}/level"] = float(self.levels[name])
            out[f"curriculum/{name}/success"] = self.success_rate(name)
        return out

    def __repr__(self) -> str:
        return f"Curriculum(levels={self.levels}, window={self.window})"


def _ladder(name: Any, levels: Any) -> tuple[dict[str, Any], ...]:
    """Normalise a ladder: a non-empty list of kwargs dicts (plain values mean difficulty)."""
    if isinstance(levels, (str, Mapping)) or not isinstance(levels, Sequence) or not levels:
        raise ConfigError(f"the ladder of {name} must be a non-empty list of levels")
    return tuple(dict(x) if isinstance(x, Mapping) else {"difficulty": x} for x in levels)


class CurriculumVecEnv:
    """A vector whose envs start each episode at their env's current curriculum level.

    Built by ``make_vec(..., curriculum=cur)`` around a vector with ``autoreset="disabled"``;
    it emulates ``same_step`` autoreset itself (finished envs are reset before ``step``
    returns, the terminal observation and info kept in ``final_obs``/``final_info``), fixing
    the levels of group ``g``'s ``k``-th episode when its first member starts it, so that the
    other members, however late they finish, play the same task at the same level. Every other
    attribute (``num_envs``, ``call_env``, ...) is the inner vector's.
    """

    def __init__(self, vec: Any, curriculum: Curriculum, autoreset: str) -> None:
        if autoreset not in ("same_step", "disabled"):
            raise ConfigError("a curriculum vector supports autoreset='same_step' or 'disabled'")
        if vec.batch_size != vec.num_envs:
            raise ConfigError("a curriculum vector needs batch_size == num_envs")
        self.vec, self.curriculum, self.autoreset = vec, curriculum, autoreset
        self._episode = np.zeros(vec.num_envs, np.int64)  # each env's episode index k
        self._fixed: dict[tuple[int, int], tuple[dict[str, int], int]] = {}  # (g, k) -> levels

    def __getattr__(self, name: str) -> Any:
        if name == "vec":  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.vec, name)

    def reset(self, seed: Any = None, options: dict | None = None) -> tuple[list[str], list[dict]]:
        """Reset every env (or ``options["reset_mask"]``'s) at the current levels."""
        options = dict(options or {})
        self._start_over(options.get("reset_mask"))
        options["levels"] = dict(self.curriculum.levels)
        return self.vec.reset(seed=seed, options=options)

    def async_reset(
        self,
        seeds: Sequence[int | None] | None = None,
        options: dict | None = None,
        mask: np.ndarray | None = None,
    ) -> None:
        """The inner ``async_reset``, at the current levels."""
        self._start_over(mask)
        options = {**(options or {}), "levels": dict(self.curriculum.levels)}
        self.vec.async_reset(seeds, options, mask)

    def _start_over(self, mask: Any) -> None:
        """The reset envs (``mask``; None: all) start a new run of episodes at ``k = 0``."""
        chosen = np.ones(self.vec.num_envs, bool) if mask is None else np.asarray(mask, bool)
        self._episode[chosen] = 0
        self._fixed.clear()

    def step(self, actions: Sequence[str]) -> Any:
        """Step; record finished episodes; (same_step) start their next episode."""
        self.vec.send(actions)
        return self.recv()

    def recv(self) -> Any:
        """The inner ``recv``; record finished episodes; (same_step) start their next one."""
        batch = self.vec.recv()
        done = np.flatnonzero(batch.terminated | batch.truncated)
        if self.curriculum.mode == "auto":
            for i in done:  # env order: the curriculum's moves do not depend on timing
                self.curriculum.record_info(batch.infos[i])
        if self.autoreset == "same_step" and done.size:
            self._restart(batch, done)
        return batch

    def _restart(self, batch: Any, done: np.ndarray) -> None:
        """Reset the finished envs, each group's ``k``-th episode at the levels fixed for it."""
        by_levels: dict[str, list[int]] = {}
        for i in done:
            self._episode[i] += 1
            key = (int(i) // self.vec.group_size, int(self._episode[i]))
            levels, started = self._fixed.get(key, (dict(self.curriculum.levels), 0))
            if started + 1 == self.vec.group_size:
                self._fixed.pop(key, None)  # every member has started it
            else:
                self._fixed[key] = (levels, started + 1)
            by_levels.setdefault(json.dumps(levels, sort_keys=True), []).append(int(i))
        for levels_json, envs in by_levels.items():
            mask = np.zeros(self.vec.num_envs, bool)
            mask[envs] = True
            options = {"reset_mask": mask, "levels": json.loads(levels_json)}
            obs, infos = self.vec.reset(options=options)
            for i in envs:
                final_obs, final_info = batch.observations[i], batch.infos[i]
                batch.observations[i] = obs[i]
                batch.infos[i] = {**infos[i], "final_obs": final_obs, "final_info": final_info}

    def close(self) -> None:
        """Close the inner vector."""
        self.vec.close()

    def __enter__(self) -> CurriculumVecEnv:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CurriculumVecEnv({self.vec!r}, {self.curriculum!r})"
