"""The envs of an export: ids, kwargs, weights and split, parsed from a mixture spec.

Shared by ``textgyms export sft`` (:mod:`textgyms.export`) and ``textgyms export tasks``
(:mod:`textgyms.export_tasks`), so both read ``--envs`` and ``--kwargs`` the same way and give
each env its share of the episodes by weight.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textgyms.errors import ConfigError

__all__ = ["SEEDS_PER_EPISODE", "ExportSource", "parse_sources", "shares"]

SEEDS_PER_EPISODE = 20  # give up on an env after this many seeds per wanted record


@dataclass(frozen=True)
class ExportSource:
    """One env of the export: its id, kwargs, the weight of its share of the episodes, its
    label (default: the env id) and its split (``train`` for SFT data; ``export tasks`` also
    writes ``test`` files)."""

    env_id: str
    kwargs: dict[str, Any]
    weight: float = 1.0
    name: str = ""
    split: str = "train"

    def __post_init__(self) -> None:
        split = self.kwargs.get("split", self.split)
        if split != self.split:
            raise ConfigError(
                f"{self.env_id}: this export writes {self.split}-split tasks only (got "
                f"split={split!r}); drop the split kwarg (export tasks takes it as --split)"
            )


def parse_sources(envs: str, kwargs: str | dict[str, Any] = "{}",
                  split: str = "train") -> list[ExportSource]:
    """``envs``: a mixture spec (:meth:`textgyms.mixture.Mixture.parse`: comma-separated ids
    with optional ``*weight``, or JSON entries with their own kwargs); ``kwargs``: a JSON object
    applied to every env, or an object keyed by env id (``{"textgyms/Wordle-v0": {...}}``);
    an entry's own kwargs win. ``split``: the split every source must be of."""
    from textgyms.mixture import Mixture

    entries = Mixture.parse(envs).entries
    ids = [e.env_id for e in entries]
    raw = json.loads(kwargs) if isinstance(kwargs, str) else kwargs
    if not isinstance(raw, dict):
        raise ConfigError(f"--kwargs must be a JSON object, got {kwargs!r}")
    per_env = bool(raw) and all(k in ids for k in raw)
    return [ExportSource(e.env_id, {**(raw.get(e.env_id, {}) if per_env else raw), **e.kwargs},
                         float(e.weight), e.name, split) for e in entries]


def shares(sources: Sequence[ExportSource], episodes: int) -> list[int]:
    """Episodes per source: ``episodes`` times its weight over the mean weight (so equal
    weights give every env ``episodes``), at least 1."""
    mean = sum(s.weight for s in sources) / len(sources)
    return [max(1, round(episodes * s.weight / mean)) for s in sources]
