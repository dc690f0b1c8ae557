"""Task generation for ``textgyms/Code-v0``: one entry point over the three datasets."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from textgyms.envs.code import codeio, humaneval, toy
from textgyms.envs.code.tasks import CodeTask
from textgyms.errors import ConfigError
from textgyms.sandbox import Sandbox

DATASETS = ("toy", "humaneval", "codeio")
DIFFICULTIES = ("mixed", "easy", "medium", "hard")
# HumanEval is an evaluation set: its only split is the whole of it (the leaderboard split).
SPLITS = {"toy": ("train", "test", "all"), "humaneval": ("test", "all"),
          "codeio": ("train", "test", "all")}  # fmt: skip
DEFAULT_SPLIT = {"toy": "train", "humaneval": "test", "codeio": "train"}


def check_options(dataset: str, split: str, difficulty: str) -> None:
    """Raise ConfigError for a combination that has no tasks."""
    if split not in SPLITS[dataset]:
        raise ConfigError(
            f"unknown split {split!r} for dataset {dataset!r}; choose one of: "
            + ", ".join(SPLITS[dataset])
        )
    if dataset == "humaneval" and difficulty != "mixed":
        raise ConfigError(
            f"dataset 'humaneval' has no difficulty levels (got {difficulty!r}); choose one "
            "of: mixed"
        )


def generate(
    rng: np.random.Generator,
    dataset: str,
    split: str,
    difficulty: str,
    sandbox: Callable[[], Sandbox],
) -> CodeTask:
    """Draw a task with ``rng`` only; ``sandbox()`` gives the sandbox for datasets whose tests
    come from running third-party code (built once and cached)."""
    if dataset == "toy":
        return toy.generate(rng, difficulty, split)
    if dataset == "humaneval":
        pool = humaneval.tasks(sandbox())
        return pool[int(rng.integers(len(pool)))]
    return codeio.generate(rng, sandbox(), difficulty, split)
