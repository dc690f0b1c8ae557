"""Helpers shared by test modules (imported as ``support``: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym

import textgyms


def conformance_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every registered id, once per variant its env class declares in
    ``conformance_variants`` (each corpus, dataset, family or level)."""
    cases = []
    for env_id in textgyms.env_ids():
        cls = gym.spec(env_id).entry_point
        if isinstance(cls, str):
            module, _, name = cls.partition(":")
            cls = getattr(importlib.import_module(module), name)
        cases += [(env_id, dict(kw)) for kw in cls.conformance_variants]
    return cases
