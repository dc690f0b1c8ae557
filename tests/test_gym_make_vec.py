"""``gymnasium.make_vec`` with textgyms' Text spaces, including a known Gymnasium bug."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import textgyms  # noqa: F401  (registers the ids)

ENV = "textgyms/Wordle-v0"
ACTIONS = ["<guess>crane</guess>", "no tool call", "<guess>moist</guess>"]


def reference(num_envs: int, seed: int, steps: int) -> list[tuple]:
    """Observations and rewards of lone envs; Gymnasium seeds env i with ``seed + i``."""
    envs = [gym.make(ENV) for _ in range(num_envs)]
    out = [tuple(env.reset(seed=seed + i)[0] for i, env in enumerate(envs))]
    for action in ACTIONS[:steps]:
        results = [env.step(action) for env in envs]
        out.append((tuple(r[0] for r in results), [r[1] for r in results]))
    return out


def rollout(vec: gym.vector.VectorEnv, seed: int, steps: int) -> list[tuple]:
    """The same rollout through a Gymnasium vector env."""
    obs, _ = vec.reset(seed=seed)
    out = [tuple(obs)]
    for action in ACTIONS[:steps]:
        obs, rewards, *_ = vec.step((action,) * vec.num_envs)
        out.append((tuple(obs), np.asarray(rewards).tolist()))
    return out


@pytest.mark.parametrize(
    ("mode", "vector_kwargs"),
    [("sync", {}), ("async", {"shared_memory": False})],  # the documented configurations
)
def test_gymnasium_make_vec_gives_the_true_observations(mode: str, vector_kwargs: dict) -> None:
    vec = gym.make_vec(ENV, 3, vectorization_mode=mode, vector_kwargs=vector_kwargs)
    try:
        assert vec.single_observation_space == gym.make(ENV).observation_space
        assert rollout(vec, seed=4, steps=3) == reference(3, seed=4, steps=3)
    finally:
        vec.close()


def test_gymnasium_bug_shared_memory_text_observations_are_stale() -> None:
    """KNOWN GYMNASIUM BUG (gymnasium 1.4): this test asserts the bug is still there.

    With ``AsyncVectorEnv(shared_memory=True)`` (the default of ``vectorization_mode="async"``),
    Gymnasium decodes the shared ``Text`` buffer into a tuple of ``str`` once, when the vector
    env is built. Strings are immutable, so the workers' later writes to the buffer are never
    seen: every ``reset`` and ``step`` returns that first decoding -- the all-zero buffer read
    as ``character_list[0] * max_length`` ("000...0", 4096 characters for Wordle) -- instead of
    the observation. (A character outside the space's sampling charset would also make the
    worker's write fail.) Hence ``vector_kwargs={"shared_memory": False}``, or textgyms' own
    ``make_vec``.

    When this test fails, Gymnasium has fixed the bug: delete this test and the advice.
    """
    vec = gym.make_vec(ENV, 2, vectorization_mode="async")
    try:
        space = vec.single_observation_space
        stale = (space.character_list[0] * space.max_length,) * 2
        obs, _ = vec.reset(seed=4)
        assert obs == stale
        obs, *_ = vec.step((ACTIONS[0],) * 2)
        assert obs == stale
        assert reference(2, seed=4, steps=0)[0] != stale  # the true observations differ
    finally:
        vec.close()
