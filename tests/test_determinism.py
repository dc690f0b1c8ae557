"""Determinism across backends: the same seeds give byte-identical transcripts and rewards.

For every registered id, the oracle and the seeded random policy (``ScriptedPolicy``) play the
episodes of seeds ``0..N-1`` on a single env (the reference), through ``make_vec`` with the
``serial``, ``multiprocessing`` and ``ray`` backends, and on a single env pickled and unpickled
mid-episode. Every episode's final info (transcript ``messages``, score, parts, error) and its
rewards must serialize to the same JSON text in all of them. Conformance variants run on the
serial backend and after pickling; the process backends run each id on its defaults (worker and
actor start-up is what costs time there).
"""

from __future__ import annotations

import contextlib
import json
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from support import conformance_cases

import textgyms
from textgyms.policies import ScriptedPolicy

ENV_IDS = textgyms.env_ids()
SEEDS = list(range(3))
KINDS = ("oracle", "random")


CASES = conformance_cases()
CASE_IDS = [e + "".join(f"-{k}={v}" for k, v in sorted(kw.items())) for e, kw in CASES]


def episode_key(info: dict[str, Any], rewards: list[float]) -> str:
    """A finished episode as JSON text: its final info and its rewards as float32 (the vector
    backends' dtype), so equal keys mean byte-identical transcripts and rewards."""
    final = {k: v for k, v in info.items() if k not in ("final_obs", "final_info")}
    return json.dumps([final, [float(np.float32(r)) for r in rewards]], sort_keys=True)


def play_single(env: gym.Env, kind: str, seed: int, pickle_at: int | None = None) -> str:
    """One episode on one env; with ``pickle_at=k`` the env is pickled after k steps and the
    episode continues on the unpickled copy."""
    policy = ScriptedPolicy(kind, seed=0)
    obs, info = env.reset(seed=seed)
    rewards: list[float] = []
    done = False
    copy = None
    while not done:
        if len(rewards) == pickle_at:
            env = copy = pickle.loads(pickle.dumps(env))
        action = policy.act([obs], [info], envs=[env])[0]
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    if copy is not None:
        copy.close()  # a Code copy holds the process's sandbox server until closed
    return episode_key(info, rewards)


class _Slice:
    """Envs ``offset..`` of a VecEnv seen as envs ``0..``, for a policy acting on a slice."""

    def __init__(self, vec: Any, offset: int) -> None:
        self.vec, self.offset = vec, offset

    def call_env(self, i: int, method: str, *args: Any) -> Any:
        return self.vec.call_env(self.offset + i, method, *args)


def play_vec(vec: Any) -> list[str]:
    """The first episode of every env of ``vec``: envs ``0..N-1`` follow the oracle on seeds
    ``SEEDS``, envs ``N..2N-1`` the random policy on the same seeds (autoreset keeps stepping
    the envs that are done until every env has finished one episode)."""
    n = len(SEEDS)
    policies = [ScriptedPolicy(kind, seed=0) for kind in KINDS]
    obs, infos = vec.reset(seed=SEEDS * len(KINDS))
    rewards: list[list[float]] = [[] for _ in range(2 * n)]
    keys: list[str | None] = [None] * (2 * n)
    while any(k is None for k in keys):
        actions = []
        for j, policy in enumerate(policies):
            part = slice(j * n, (j + 1) * n)
            actions += policy.act(obs[part], infos[part], envs=_Slice(vec, j * n))
        batch = vec.step(actions)
        for i, info in enumerate(batch.infos):
            if keys[i] is not None:
                continue
            rewards[i].append(float(batch.rewards[i]))
            if batch.terminated[i] or batch.truncated[i]:
                keys[i] = episode_key(info["final_info"], rewards[i])
        obs, infos = batch.observations, batch.infos
    return keys


def reference(env_id: str, kwargs: dict[str, Any]) -> list[str]:
    """The episodes of ``play_vec``'s layout, played on one plain env."""
    with contextlib.closing(gym.make(env_id, **kwargs)) as env:
        return [play_single(env, kind, seed) for kind in KINDS for seed in SEEDS]


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=CASE_IDS)
def test_serial_and_pickle_agree(env_id: str, kwargs: dict[str, Any]) -> None:
    """Single env, the serial vector, and a single env pickled mid-episode: same bytes."""
    ref = reference(env_id, kwargs)
    assert len(set(ref)) > 1  # the seeds and policies really give different episodes
    with textgyms.make_vec(env_id, 2 * len(SEEDS), env_kwargs=kwargs) as vec:
        assert play_vec(vec) == ref
    with contextlib.closing(gym.make(env_id, **kwargs)) as env:
        for k, (kind, seed) in enumerate((kind, seed) for kind in KINDS for seed in SEEDS):
            assert play_single(env, kind, seed, pickle_at=1 + seed % 2) == ref[k], (kind, seed)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_multiprocessing_agrees_with_a_single_env(env_id: str) -> None:
    """Two worker processes (the batch is split between them) give the reference bytes."""
    with textgyms.make_vec(env_id, 2 * len(SEEDS), backend="multiprocessing", num_workers=2) as vec:
        assert play_vec(vec) == reference(env_id, {})


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_ray_agrees_with_a_single_env(env_id: str, ray_cluster: None) -> None:
    """The Ray backend gives the reference bytes too. Two actors (the batch is split) for the
    first id, one for the others: actors are slow to start on a busy 2-core machine."""
    workers = 2 if env_id == ENV_IDS[0] else 1
    with textgyms.make_vec(env_id, 2 * len(SEEDS), backend="ray", num_workers=workers) as vec:
        assert play_vec(vec) == reference(env_id, {})
