"""Evaluation runs under a versioned protocol: ``results.jsonl`` and ``metadata.json``.

Sample ``s`` of task ``j`` of an env is always played on ``reset(seed=seed + j)``, so two runs
with the same seed see the same tasks, whatever the concurrency or backend. A run directory can
be resumed (episodes already in ``results.jsonl`` are skipped) but only under the same protocol.
The file format (docs/architecture.md, "Policies, evaluation and the leaderboard"):

results.jsonl
    one finished episode per line: ``env_id``, ``env_version``, ``episode`` (task index),
    ``sample``, ``seed``, ``task_id``, ``actions``, ``observations`` (the prompt first),
    ``rewards``, ``return``, ``score``, ``solved``, ``parts``, ``turns``, ``invalid``,
    ``truncated``, ``tokens`` (policy-reported ``{"prompt", "completion"}``, or null),
    ``action_chars``, ``wall_time`` (seconds), ``feedback`` and ``error`` (the final verdict's
    explanation and agent-error name) and ``use`` (the episode's feedback-use metrics,
    :mod:`textgyms.feedback_use`). Each line is written with one ``write`` call
    while SIGINT is held back, so Ctrl-C never leaves a torn line; a torn line left by a crash
    is dropped on resume.
metadata.json
    ``protocol_version``, ``protocol`` (``version``; ``envs``, per env id the record of
    :func:`env_protocol`: version, resolved kwargs, split, seed, episodes, samples, turn budget,
    data sha256; ``sampling``, the policy's spec with its sampling parameters) and
    ``protocol_id`` (see :func:`protocol_id`), ``policy`` (the same spec), ``textgyms_version``,
    ``created``, ``split``, ``seed``, ``episodes``, ``samples``, ``concurrency``, ``backend``,
    ``envs`` (per id: version and data sha256, a summary of the protocol), ``aggregates``
    (see :func:`aggregate`) and where the last invocation ran: ``device`` (the policy's:
    ``"cpu"``, ``"cuda:0"``, or null for a model behind a server), ``gpu_name`` (null off
    CUDA), ``wall_time_s`` and ``peak_gpu_mem_gb`` (null when the process used no GPU).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import textgyms
from textgyms.core import ERROR, PARTS, SCORE, SOLVED, TASK_ID, check_choice, invalid_after
from textgyms.devices import device_info, peak_gpu_mem_gb, reset_peak_memory
from textgyms.errors import ConfigError
from textgyms.feedback_use import episode_use
from textgyms.policies.base import Policy
from textgyms.protocol import (
    PROTOCOL_VERSION,
    RESUMABLE_CHANGES,
    canonical,
    env_protocol,
    env_version,
    protocol_diff,
    protocol_id,
)
from textgyms.stats import aggregate

RESULTS, METADATA = "results.jsonl", "metadata.json"
Key = tuple[str, int, int]  # (env_id, episode, sample)


@dataclass
class _Slot:
    """One env of the run and the episode it is playing."""

    env: gym.Env
    key: Key | None = None
    obs: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    t0: float = 0.0


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


def record_key(row: dict[str, Any]) -> Key:
    """``(env_id, episode, sample)``; runs written before ``--samples`` have sample 0."""
    return row["env_id"], int(row["episode"]), int(row.get("sample", 0))


def load_results(out: Path) -> list[dict[str, Any]]:
    """The episodes recorded in ``out/results.jsonl`` (a torn line is ignored)."""
    path = out / RESULTS
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a crash mid-write; that episode will be played again
    return rows


def run_dirs(paths: Iterable[Path]) -> list[Path]:
    """Each path that holds ``metadata.json``, or every run directory below it (sorted)."""
    paths = list(paths)
    dirs: list[Path] = []
    for p in paths:
        if (p / METADATA).is_file():
            dirs.append(p)
        elif p.is_dir():
            dirs += sorted(m.parent for m in p.rglob(METADATA))
        else:
            raise ConfigError(f"{p} is not a run directory nor a directory holding runs")
    if not dirs:
        raise ConfigError(
            f"no run directories (with {METADATA}) under {', '.join(map(str, paths))}"
        )
    return list(dict.fromkeys(dirs))


def _repair(out: Path) -> list[dict[str, Any]]:
    """Drop a torn line left by a crashed run, so appending starts on a clean line."""
    rows = load_results(out)
    path = out / RESULTS
    if path.exists():
        _atomic_write(path, "".join(json.dumps(r) + "\n" for r in rows))
    return rows


def _atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` so that readers (and a SIGINT) see the old or new file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# --- running ---------------------------------------------------------------------------------


def evaluate(
    policy: Policy,
    env_ids: list[str],
    *,
    episodes: int,
    out: Path,
    split: str = "test",
    seed: int = 0,
    samples: int = 1,
    concurrency: int = 8,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
    backend: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Play ``samples`` episodes of each of ``episodes`` tasks of each env; return aggregates.

    ``backend``: ``None`` (default) steps ``concurrency`` envs in this process; ``"serial"``,
    ``"multiprocessing"`` or ``"ray"`` steps them as a ``textgyms.make_vec`` vector on that
    backend (``"ray"`` spreads them over the connected Ray cluster). The results are the same.
    A SIGINT stops the run with ``KeyboardInterrupt`` between two episode writes, leaving a
    valid ``results.jsonl`` that the same call resumes.
    """
    if min(episodes, concurrency, samples) < 1:
        raise ConfigError("episodes, samples and concurrency must be positive integers")
    if not env_ids:
        raise ConfigError("no envs to evaluate")
    if backend is not None:
        from textgyms.vector import _BACKENDS

        check_choice("backend", backend, (None, *_BACKENDS))
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = {"split": split, **(env_kwargs or {})}
    records = {
        env_id: _probe(env_id, env_kwargs, seed=seed, episodes=episodes, samples=samples)
        for env_id in env_ids
    }
    meta = _start_metadata(out, policy, records, split, seed, concurrency, env_kwargs)
    meta["backend"] = backend or "in-process"
    where = getattr(policy, "device", "cpu")  # scripted policies run on this CPU
    meta.update(device_info(where))
    reset_peak_memory(where)
    started = time.perf_counter()
    play = _play if backend is None else functools.partial(_play_vec, backend=backend)
    done = {record_key(r) for r in _repair(out)}
    todo = {
        env_id: [k for k in _keys(env_id, episodes, samples) if k not in done] for env_id in env_ids
    }
    bar = _progress(
        len(env_ids) * episodes * samples,
        len(env_ids) * episodes * samples - sum(map(len, todo.values())),
        progress,
    )
    with _SigintGuard() as guard, _Sink(out / RESULTS) as sink:
        try:
            for env_id in env_ids:
                for record in play(policy, env_id, todo[env_id], seed, concurrency, env_kwargs):
                    with guard.held():
                        sink.write(record)
                    bar.update(1)
        finally:
            bar.close()
    meta["aggregates"] = aggregate(protocol_rows(load_results(out), meta["protocol"]["envs"]))
    meta["wall_time_s"] = round(time.perf_counter() - started, 2)
    meta["peak_gpu_mem_gb"] = peak_gpu_mem_gb(where)
    _atomic_write(out / METADATA, json.dumps(meta, indent=2))
    return meta["aggregates"]


def _keys(env_id: str, episodes: int, samples: int) -> list[Key]:
    """Every episode key of one env, task-major."""
    return [(env_id, j, s) for j in range(episodes) for s in range(samples)]


def protocol_rows(rows: list[dict[str, Any]], envs: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows each env's protocol record covers (a run resumed with fewer tasks keeps the
    extra episodes in its file, but they are not part of its results)."""
    keep = []
    for r in rows:
        env_id, j, s = record_key(r)
        rec = envs.get(env_id)
        if rec is not None and j < rec["episodes"] and s < rec["samples"]:
            keep.append(r)
    return keep


def _probe(env_id: str, kwargs: dict[str, Any], **fields: int) -> dict[str, Any]:
    """Build the env once to read its protocol record (turn budget, data digests)."""
    env = gym.make(env_id, **kwargs)
    try:
        return env_protocol(env, env_id, kwargs, **fields)
    finally:
        env.close()


class _Sink:
    """Appends one JSON line per record with a single ``os.write`` on an ``O_APPEND`` fd, so a
    line is never interleaved or half-buffered when the process is stopped between writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> _Sink:
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line."""
        data = (json.dumps(record) + "\n").encode()
        while data:  # a regular file takes it in one go; the loop covers short writes
            data = data[os.write(self.fd, data) :]

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class _SigintGuard:
    """While active (main thread only), SIGINT raises ``KeyboardInterrupt`` at once, except
    inside :meth:`held` blocks, where it is remembered and raised when the block ends."""

    def __init__(self) -> None:
        self.busy = self.pending = False
        self.previous: Any = None

    def __enter__(self) -> _SigintGuard:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.busy:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A block that a SIGINT does not cut short."""
        self.busy = True
        try:
            yield
        finally:
            self.busy = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _play(
    policy: Policy,
    env_id: str,
    todo: list[Key],
    seed: int,
    concurrency: int,
    env_kwargs: dict[str, Any],
) -> Iterator[dict[str, Any]]:
    """Yield one record per finished episode, keeping ``concurrency`` episodes in flight."""
    if not todo:
        return
    queue = list(reversed(todo))
    slots = [_Slot(gym.make(env_id, **env_kwargs)) for _ in range(min(concurrency, len(todo)))]
    try:
        active = [s for s in slots if _begin(s, queue, seed)]
        while active:
            actions = policy.act(
                [s.obs for s in active], [s.info for s in active], envs=[s.env for s in active]
            )
            _count_tokens(policy, [s.record for s in active])
            for slot, action in zip(active, actions):
                if _advance(slot, action):
                    yield slot.record
                    _begin(slot, queue, seed)
            active = [s for s in active if s.key is not None]
    finally:
        for slot in slots:
            slot.env.close()


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
    todo: list[Key],
    seed: int,
    concurrency: int,
    env_kwargs: dict[str, Any],
    *,
    backend: str,
) -> Iterator[dict[str, Any]]:
    """:func:`_play` with the envs in a ``make_vec`` vector on ``backend``."""
    if not todo:
        return
    from textgyms.vector import make_vec

    n = min(concurrency, len(todo))
    with make_vec(env_id, n, backend=backend, autoreset="disabled", env_kwargs=env_kwargs) as vec:
        yield from _VecRun(vec, list(reversed(todo)), seed).run(policy)


class _VecRun:
    """The episodes of one env id played on a vector env (autoreset off).

    Each env is reset on exactly the seed of its next queued episode. Envs with nothing left to
    play are reset unseeded and fed empty actions (their episodes are not recorded and cost no
    policy call), because a vector steps all of its envs together.
    """

    def __init__(self, vec: Any, queue: list[Key], seed: int) -> None:
        self.vec, self.queue, self.seed = vec, queue, seed
        n = vec.num_envs
        self.keys: list[Key | None] = [queue.pop() for _ in range(n)]
        obs, infos = vec.reset(seed=[seed + k[1] for k in self.keys])
        self.obs, self.infos = list(obs), list(infos)
        self.records = [_new_record(k, seed, o, i) for k, o, i in zip(self.keys, obs, infos)]
        self.t0 = [time.perf_counter()] * n

    def run(self, policy: Policy) -> Iterator[dict[str, Any]]:
        """Step until every queued episode is recorded; yield each record as it completes."""
        while any(k is not None for k in self.keys):
            live = [i for i, k in enumerate(self.keys) if k is not None]
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
            key = self.keys[i] = self.queue.pop() if self.queue else None
            seeds[i] = self.seed + key[1] if key is not None else None
        obs, infos = self.vec.reset(seed=seeds, options={"reset_mask": done})
        for i in np.flatnonzero(done):
            self.obs[i], self.infos[i], self.t0[i] = obs[i], infos[i], time.perf_counter()
            key = self.keys[i]
            if key is not None:
                self.records[i] = _new_record(key, self.seed, obs[i], infos[i])


def _begin(slot: _Slot, queue: list[Key], seed: int) -> bool:
    """Start the next queued episode in ``slot``; False when the queue is empty."""
    if not queue:
        slot.key = None
        return False
    slot.key = queue.pop()
    slot.obs, slot.info = slot.env.reset(seed=seed + slot.key[1])
    slot.t0 = time.perf_counter()
    slot.record = _new_record(slot.key, seed, slot.obs, slot.info)
    return True


def _new_record(key: Key, seed: int, obs: Any, info: dict) -> dict[str, Any]:
    """The record of episode ``key`` that just started with observation ``obs``."""
    env_id, episode, sample = key
    return {
        "env_id": env_id,
        "env_version": env_version(env_id),
        "episode": episode,
        "sample": sample,
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
    rec["invalid"] = invalid_after(rec["invalid"], info, terminated or truncated)
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
            # The verdict's explanation and error, for readers of the run (textgyms view).
            "feedback": str(info.get("feedback") or ""),
            "error": info.get(ERROR),
        }
    )
    rec["use"] = episode_use(rec)  # did the policy act on what it saw (textgyms.feedback_use)
    return True


def _start_metadata(
    out: Path,
    policy: Policy,
    records: dict[str, dict[str, Any]],
    split: str,
    seed: int,
    concurrency: int,
    env_kwargs: dict[str, Any],
) -> dict[str, Any]:
    """Fresh metadata, or the previous run's after checking that resuming it is sound."""
    meta: dict[str, Any] = {
        "protocol_version": PROTOCOL_VERSION,
        "protocol_id": "",
        "protocol": {
            "version": PROTOCOL_VERSION,
            "envs": dict(records),
            "sampling": json.loads(canonical(policy.spec())),
        },
        "textgyms_version": textgyms.__version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "policy": json.loads(canonical(policy.spec())),
        "split": split,
        "seed": seed,
        "episodes": next(iter(records.values()))["episodes"],
        "samples": next(iter(records.values()))["samples"],
        "concurrency": concurrency,
        "env_kwargs": env_kwargs,
        "aggregates": {},
    }
    previous = out / METADATA
    if previous.exists():
        _check_resume(out, json.loads(previous.read_text()), meta)
    meta["protocol_id"] = protocol_id(meta["protocol"])
    envs = meta["protocol"]["envs"]
    # The short per-env summary of earlier metadata versions, kept for readers of those keys.
    meta["envs"] = {
        k: {"version": r["env_version"], "data_sha256": r["data_sha256"]} for k, r in envs.items()
    }
    _atomic_write(previous, json.dumps(meta, indent=2))
    return meta


def _check_resume(out: Path, old: dict[str, Any], meta: dict[str, Any]) -> None:
    """Refuse to resume ``old`` under a different protocol or policy; merge its env records."""
    hint = "; choose another --out directory to start a new run"
    if old.get("protocol_version") != PROTOCOL_VERSION:
        raise ConfigError(
            f"{out} holds a run of protocol version {old.get('protocol_version')!r}, "
            f"this is version {PROTOCOL_VERSION!r}{hint}"
        )
    envs = meta["protocol"]["envs"]
    for env_id, rec in old["protocol"]["envs"].items():
        if env_id not in envs:
            envs[env_id] = rec  # an env of an earlier invocation that this one does not play
            continue
        diff = protocol_diff(rec, envs[env_id], ignore=RESUMABLE_CHANGES)
        if diff:
            raise ConfigError(
                f"{out} holds a run with a different protocol for {env_id} "
                f"({'; '.join(diff)}){hint}"
            )
    if old.get("policy") != meta["policy"]:
        diff = _policy_diff(old.get("policy"), meta["policy"])
        raise ConfigError(f"{out} holds a run with a different policy ({diff}){hint}")
    meta["created"] = old["created"]


def _policy_diff(old: Any, new: Any) -> str:
    """What differs between two policy specs, field by field (a spec holds the model path and
    every sampling parameter: printing both whole buries the one that changed)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return "; ".join(protocol_diff(old, new))
    return f"{old!r} != {new!r}"


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
