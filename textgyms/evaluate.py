"""Evaluation runs: ``results.jsonl`` (one episode per line) and ``metadata.json``.

Episode ``j`` of an env is always played on ``reset(seed=seed + j)``, so two runs with the same
seed see the same tasks, whatever the concurrency. A run directory can be resumed: episodes
already in ``results.jsonl`` are skipped. The file format is fixed (DESIGN.md §5):

results.jsonl
    ``env_id``, ``env_version``, ``episode``, ``seed``, ``task_id``, ``actions``,
    ``observations`` (the prompt first), ``rewards``, ``return``, ``score``, ``solved``,
    ``parts``, ``turns``, ``invalid``, ``truncated``, ``tokens`` (policy-reported, or null),
    ``action_chars``, ``wall_time`` (seconds).
metadata.json
    ``textgyms_version``, ``created``, ``policy`` (its spec incl. sampling parameters),
    ``split``, ``seed``, ``episodes``, ``concurrency``, ``env_kwargs``, ``envs`` (per id: version
    and data sha256), ``aggregates`` (per id: n, mean score with 95% CI, solve rate, turns, ...).
"""

from __future__ import annotations

import functools
import json
import math
import platform
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import textgyms
from textgyms.core import ERROR, PARTS, SCORE, SOLVED, TASK_ID, check_choice
from textgyms.errors import ConfigError
from textgyms.policies.base import Policy

RESULTS, METADATA = "results.jsonl", "metadata.json"


@dataclass
class _Slot:
    """One env of the run and the episode it is playing."""

    env: gym.Env
    episode: int = -1
    obs: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    t0: float = 0.0


def env_version(env_id: str) -> int:
    """The ``N`` of ``...-vN``."""
    m = re.search(r"-v(\d+)$", env_id)
    if m is None:
        raise ConfigError(f"env id {env_id!r} has no -vN version suffix")
    return int(m.group(1))


def resolve_envs(spec: str | Iterable[str]) -> list[str]:
    """``"all"`` or a comma-separated list of registered ids."""
    known = textgyms.env_ids()
    ids = (
        known
        if spec == "all"
        else ([s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec))
    )
    for env_id in ids:
        if env_id not in known:
            raise ConfigError(f"unknown env {env_id!r}; choose from: all, {', '.join(known)}")
    return ids


def load_results(out: Path) -> list[dict[str, Any]]:
    """The episodes recorded in ``out/results.jsonl`` (a torn last line is ignored)."""
    path = out / RESULTS
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # an interrupted write; that episode will be played again
    return rows


def _repair(out: Path) -> list[dict[str, Any]]:
    """Drop a torn last line left by an interrupted run, so appending starts on a clean line."""
    rows = load_results(out)
    path = out / RESULTS
    if path.exists():
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def aggregate(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per env id: n, mean score with its 95% CI half-width, solve rate, turns, invalid."""
    out: dict[str, dict[str, float]] = {}
    for env_id in sorted({r["env_id"] for r in rows}):
        mine = [r for r in rows if r["env_id"] == env_id]
        scores = np.array([r["score"] for r in mine], dtype=float)
        sem = scores.std(ddof=1) / math.sqrt(len(scores)) if len(scores) > 1 else 0.0
        out[env_id] = {
            "n": len(mine),
            "score": float(scores.mean()),
            "score_ci95": float(1.96 * sem),
            "solve_rate": float(np.mean([r["solved"] for r in mine])),
            "turns": float(np.mean([r["turns"] for r in mine])),
            "invalid": float(np.mean([r["invalid"] for r in mine])),
            "wall_time": float(np.mean([r["wall_time"] for r in mine])),
        }
    return out


def evaluate(
    policy: Policy,
    env_ids: list[str],
    *,
    episodes: int,
    out: Path,
    split: str = "test",
    seed: int = 0,
    concurrency: int = 8,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
    backend: str | None = None,
) -> dict[str, dict[str, float]]:
    """Play ``episodes`` episodes of each env with ``policy``; write and return the aggregates.

    ``backend``: ``None`` (default) steps ``concurrency`` envs in this process; ``"serial"``,
    ``"multiprocessing"`` or ``"ray"`` steps them as a ``textgyms.make_vec`` vector on that
    backend (``"ray"`` spreads them over the connected Ray cluster). The results are the same.
    """
    if episodes < 1 or concurrency < 1:
        raise ConfigError("episodes and concurrency must be positive integers")
    if backend is not None:
        from textgyms.vector import _BACKENDS

        check_choice("backend", backend, (None, *_BACKENDS))
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = {"split": split, **(env_kwargs or {})}
    meta = _start_metadata(out, policy, env_ids, episodes, split, seed, concurrency, env_kwargs)
    meta["backend"] = backend or "in-process"
    play = _play if backend is None else functools.partial(_play_vec, backend=backend)
    done = {(r["env_id"], r["episode"]) for r in _repair(out)}
    bar = _progress(len(env_ids) * episodes, len(done), progress)
    with (out / RESULTS).open("a") as sink:
        for env_id in env_ids:
            todo = [j for j in range(episodes) if (env_id, j) not in done]
            for record in play(policy, env_id, todo, seed, concurrency, env_kwargs, meta):
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                bar.update(1)
    bar.close()
    rows = [r for r in load_results(out) if r["env_id"] in env_ids and r["episode"] < episodes]
    meta["aggregates"] = aggregate(rows)
    (out / METADATA).write_text(json.dumps(meta, indent=2))
    return meta["aggregates"]


def _play(
    policy: Policy,
    env_id: str,
    todo: list[int],
    seed: int,
    concurrency: int,
    env_kwargs: dict[str, Any],
    meta: dict[str, Any],
) -> Iterator[dict[str, Any]]:
    """Yield one record per finished episode, keeping ``concurrency`` episodes in flight."""
    if not todo:
        return
    queue = list(reversed(todo))
    slots = [_Slot(gym.make(env_id, **env_kwargs)) for _ in range(min(concurrency, len(todo)))]
    meta["envs"][env_id] = {
        "version": env_version(env_id),
        "data_sha256": slots[0].env.unwrapped.data_sha256(),
    }
    active = [s for s in slots if _begin(s, queue, env_id, seed)]
    while active:
        actions = policy.act(
            [s.obs for s in active], [s.info for s in active], envs=[s.env for s in active]
        )
        _count_tokens(policy, [s.record for s in active])
        for slot, action in zip(active, actions):
            if _advance(slot, action):
                yield slot.record
                if not _begin(slot, queue, env_id, seed):
                    slot.env.close()
        active = [s for s in active if s.episode >= 0]


def _count_tokens(policy: Policy, records: list[dict[str, Any]]) -> None:
    """Add the token usage of the policy's last batch to the episodes' records (model-backed
    policies keep one ``Generation`` per observation in ``policy.last``; scripted ones none)."""
    for rec, gen in zip(records, getattr(policy, "last", None) or ()):
        usage = getattr(gen, "usage", None)
        if not usage:
            continue
        tokens = rec["tokens"] or {"prompt": 0, "completion": 0}
        tokens["prompt"] += int(usage.get("prompt_tokens", 0))
        tokens["completion"] += int(usage.get("completion_tokens", 0))
        rec["tokens"] = tokens


class _VecSubset:
    """Chosen envs of a vector env, so a policy's ``envs[k]`` is the k-th observation's env."""

    def __init__(self, vec: Any, ids: list[int]) -> None:
        self.vec, self.ids = vec, ids

    def call_env(self, k: int, method: str, *args: Any) -> Any:
        """``call_env`` on the vector env that produced observation ``k``."""
        return self.vec.call_env(self.ids[k], method, *args)


def _play_vec(
    policy: Policy,
    env_id: str,
    todo: list[int],
    seed: int,
    concurrency: int,
    env_kwargs: dict[str, Any],
    meta: dict[str, Any],
    *,
    backend: str,
) -> Iterator[dict[str, Any]]:
    """:func:`_play` with the envs in a ``make_vec`` vector on ``backend``."""
    if not todo:
        return
    from textgyms.vector import make_vec

    n = min(concurrency, len(todo))
    with make_vec(env_id, n, backend=backend, autoreset="disabled", env_kwargs=env_kwargs) as vec:
        meta["envs"][env_id] = {
            "version": env_version(env_id),
            "data_sha256": vec.call_env(0, "data_sha256"),
        }
        yield from _VecRun(vec, env_id, list(reversed(todo)), seed).run(policy)


class _VecRun:
    """The episodes of one env id played on a vector env (autoreset off).

    Each env is reset on exactly the seed of its next queued episode. Envs with nothing left to
    play are reset unseeded and fed empty actions (their episodes are not recorded and cost no
    policy call), because a vector steps all of its envs together.
    """

    def __init__(self, vec: Any, env_id: str, queue: list[int], seed: int) -> None:
        self.vec, self.env_id, self.queue, self.seed = vec, env_id, queue, seed
        n = vec.num_envs
        self.episodes = [queue.pop() for _ in range(n)]
        obs, infos = vec.reset(seed=[seed + j for j in self.episodes])
        self.obs, self.infos = list(obs), list(infos)
        self.records = [
            _new_record(env_id, j, seed, o, i) for j, o, i in zip(self.episodes, obs, infos)
        ]
        self.t0 = [time.perf_counter()] * n

    def run(self, policy: Policy) -> Iterator[dict[str, Any]]:
        """Step until every queued episode is recorded; yield each record as it completes."""
        while any(j >= 0 for j in self.episodes):
            live = [i for i, j in enumerate(self.episodes) if j >= 0]
            actions = [""] * self.vec.num_envs
            chosen = policy.act(
                [self.obs[i] for i in live],
                [self.infos[i] for i in live],
                envs=_VecSubset(self.vec, live),
            )
            _count_tokens(policy, [self.records[i] for i in live])
            for i, action in zip(live, chosen):
                actions[i] = action
            obs, rewards, terminated, truncated, infos = self.vec.step(actions)
            self.obs, self.infos = list(obs), list(infos)
            for i in live:
                rec = self.records[i]
                step = (obs[i], rewards[i], terminated[i], truncated[i], infos[i])
                if _record_step(rec, self.t0[i], actions[i], *step):
                    yield rec
            done = terminated | truncated
            if done.any():
                self._refill(done)

    def _refill(self, done: np.ndarray) -> None:
        """Start each finished env's next queued episode, or park it on an unseeded one."""
        seeds: list[int | None] = [None] * self.vec.num_envs
        for i in np.flatnonzero(done):
            self.episodes[i] = self.queue.pop() if self.queue else -1
            seeds[i] = self.seed + self.episodes[i] if self.episodes[i] >= 0 else None
        obs, infos = self.vec.reset(seed=seeds, options={"reset_mask": done})
        for i in np.flatnonzero(done):
            self.obs[i], self.infos[i], self.t0[i] = obs[i], infos[i], time.perf_counter()
            if self.episodes[i] >= 0:
                self.records[i] = _new_record(
                    self.env_id, self.episodes[i], self.seed, obs[i], infos[i]
                )


def _begin(slot: _Slot, queue: list[int], env_id: str, seed: int) -> bool:
    """Start the next queued episode in ``slot``; False when the queue is empty."""
    if not queue:
        slot.episode = -1
        return False
    slot.episode = queue.pop()
    slot.obs, slot.info = slot.env.reset(seed=seed + slot.episode)
    slot.t0 = time.perf_counter()
    slot.record = _new_record(env_id, slot.episode, seed, slot.obs, slot.info)
    return True


def _new_record(env_id: str, episode: int, seed: int, obs: Any, info: dict) -> dict[str, Any]:
    """The record of an episode that just started with observation ``obs``."""
    return {
        "env_id": env_id,
        "env_version": env_version(env_id),
        "episode": episode,
        "seed": seed + episode,
        "task_id": info[TASK_ID],
        "actions": [],
        "observations": [obs],
        "rewards": [],
        "invalid": 0,
        "tokens": None,
    }


def _advance(slot: _Slot, action: str) -> bool:
    """Step ``slot`` with ``action``; True when its episode just ended (record complete)."""
    obs, reward, terminated, truncated, info = slot.env.step(action)
    slot.obs, slot.info = obs, info
    return _record_step(slot.record, slot.t0, action, obs, reward, terminated, truncated, info)


def _record_step(
    rec: dict[str, Any],
    t0: float,
    action: str,
    obs: Any,
    reward: float,
    terminated: bool,
    truncated: bool,
    info: dict[str, Any],
) -> bool:
    """Add one step to an episode record; True when the episode ended (record complete)."""
    rec["actions"].append(action)
    rec["observations"].append(obs)
    rec["rewards"].append(float(reward))
    rec["invalid"] += info.get(ERROR) is not None
    if not (terminated or truncated):
        return False
    rec.update(
        {
            "return": float(sum(rec["rewards"])),
            "score": float(info[SCORE]),
            "solved": bool(info[SOLVED]),
            "parts": info.get(PARTS, {}),
            "turns": len(rec["actions"]),
            "truncated": bool(truncated),
            "action_chars": sum(len(a) for a in rec["actions"]),
            "wall_time": time.perf_counter() - t0,
        }
    )
    return True


def _start_metadata(
    out: Path,
    policy: Policy,
    env_ids: list[str],
    episodes: int,
    split: str,
    seed: int,
    concurrency: int,
    env_kwargs: dict[str, Any],
) -> dict[str, Any]:
    """Fresh metadata, or the previous run's after checking that resuming it is sound."""
    previous = out / METADATA
    meta = {
        "textgyms_version": textgyms.__version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "policy": policy.spec(),
        "split": split,
        "seed": seed,
        "episodes": episodes,
        "concurrency": concurrency,
        "env_kwargs": env_kwargs,
        "envs": {},
        "aggregates": {},
    }
    if previous.exists():
        old = json.loads(previous.read_text())
        for key in ("policy", "split", "seed", "env_kwargs"):
            if old.get(key) != meta[key]:
                raise ConfigError(
                    f"{out} holds a run with a different {key} ({old.get(key)!r}); "
                    "choose another --out directory to start a new run"
                )
        meta["created"], meta["envs"] = old["created"], old.get("envs", {})
    previous.write_text(json.dumps(meta, indent=2))
    return meta


def _progress(total: int, initial: int, enabled: bool) -> Any:
    """A tqdm bar when tqdm is installed and enabled, else a silent stand-in."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        enabled = False
    if not enabled:
        return _NoBar()
    return tqdm(total=total, initial=initial, unit="ep", desc="eval", dynamic_ncols=True)


class _NoBar:
    def update(self, n: int) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""
