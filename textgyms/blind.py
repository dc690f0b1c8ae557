"""The blind reference policy: the best *constant* action sequence of an env.

A blind policy plays the same actions on every task, whatever any observation says (the prompt
included): action ``t`` of the sequence at turn ``t``, and the last action again once the
sequence is spent. The best such sequence is the floor a policy reaches without reading
anything, so a trained agent that does not beat it has learned a constant, not the task; it
also measures a verifier (how much credit does an answer that ignores the task get?).

The sequence is *fitted* on the train split and *evaluated* like any policy on the test split:

1. ``tasks`` train-split tasks (seeds 0, 1, ...) are drawn;
2. the candidate actions are the oracle's actions on those tasks (most frequent first) plus a
   family's own extras (:data:`EXTRA_CANDIDATES`: Wordle adds the guesses that cover the
   letters most frequent in the train answers), cut to ``candidates``;
3. greedily, position by position, the candidate whose sequence (prefix + candidate, then
   repeated) scores best on the train tasks is appended, while it improves the mean score.

Every score comes from playing the real env, so the blind sequence is always measured by the
env's current verifier. Searching costs seconds to minutes (a Code candidate runs in the
sandbox), so plans are cached in ``$TEXTGYMS_CACHE_DIR/blind`` (default
``~/.cache/textgyms/blind``), keyed by the env id, its resolved kwargs, the env's data sha256,
the search settings and the textgyms version; nothing is ever written into the package. Refit
with ``python -m textgyms.blind --env ID --kwargs JSON --refresh``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

import textgyms
from textgyms.core import SCORE
from textgyms.errors import ConfigError
from textgyms.protocol import canonical, digest, env_protocol, resolved_kwargs

#: Bump when the search (candidates, greedy rule, defaults) changes: old cache entries are left.
BLIND_VERSION = 1
#: The search settings of ``--policy blind`` (module globals, so a test can make them small).
DEFAULT_TASKS = 100
DEFAULT_CANDIDATES = 64
MAX_LENGTH = 8  # positions searched at most (a constant policy gains little past a few)


@dataclass(frozen=True)
class BlindPlan:
    """A fitted blind sequence: ``actions``, its mean ``fit_score`` on ``tasks`` tasks of
    ``fit_split``, and how it was found."""

    env_id: str
    kwargs: dict[str, Any]
    actions: tuple[str, ...]
    fit_split: str
    fit_score: float
    tasks: int
    candidates: int
    key: str
    seconds: float


def cache_dir() -> Path:
    """``$TEXTGYMS_CACHE_DIR`` (default ``~/.cache/textgyms``) ``/blind``."""
    root = os.environ.get("TEXTGYMS_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "textgyms")
    return Path(root) / "blind"


def fit_split(env_id: str, kwargs: dict[str, Any]) -> str:
    """``train``, or the env's own split when it has no train split (HumanEval); the caller
    records it, since a sequence fitted on the evaluation split is an optimistic floor."""
    try:
        gym.make(env_id, **{**kwargs, "split": "train"}).close()
        return "train"
    except ConfigError:
        return str(resolved_kwargs(env_id, kwargs).get("split"))


def plan_key(env_id: str, kwargs: dict[str, Any], tasks: int, candidates: int) -> str:
    """The cache key: env id, resolved kwargs (split excluded), data sha256 and settings."""
    fit = {**kwargs, "split": fit_split(env_id, kwargs)}
    env = gym.make(env_id, **fit)
    try:
        data = env_protocol(env, env_id, fit, seed=0, episodes=tasks, samples=1)["data_sha256"]
    finally:
        env.close()
    full = {k: v for k, v in resolved_kwargs(env_id, fit).items() if k != "split"}
    return digest({"v": BLIND_VERSION, "textgyms": textgyms.__version__, "env": env_id,
                   "kwargs": full, "data": data, "tasks": tasks, "candidates": candidates}, 24)


def blind_plan(env_id: str, kwargs: dict[str, Any] | None = None, *, tasks: int = DEFAULT_TASKS,
               candidates: int = DEFAULT_CANDIDATES, refresh: bool = False,
               cache: bool = True) -> BlindPlan:
    """The blind plan of ``env_id`` with ``kwargs`` (any ``split`` is ignored: the plan is
    fitted on the train split), from the cache or searched now and cached."""
    kwargs = {k: v for k, v in (kwargs or {}).items() if k != "split"}
    if tasks < 1 or candidates < 1:
        raise ConfigError("blind: tasks and candidates must be positive integers")
    key = plan_key(env_id, kwargs, tasks, candidates)
    path = cache_dir() / f"{key}.json"
    if cache and not refresh and path.is_file():
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
        return BlindPlan(**{**raw, "actions": tuple(raw["actions"])})
    start = time.perf_counter()
    split = fit_split(env_id, kwargs)
    env = gym.make(env_id, **{**kwargs, "split": split})
    try:
        seeds = list(range(tasks))
        pool = candidate_actions(env, seeds, candidates)
        actions, score = greedy_sequence(env, seeds, pool)
    finally:
        env.close()
    plan = BlindPlan(env_id, kwargs, tuple(actions), split, score, tasks, len(pool), key,
                     round(time.perf_counter() - start, 1))
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(plan), indent=1))
        os.replace(tmp, path)
    return plan


@functools.lru_cache(maxsize=64)
def _cached_actions(env_id: str, kwargs_json: str, tasks: int, candidates: int
                    ) -> tuple[str, ...]:
    return blind_plan(env_id, json.loads(kwargs_json), tasks=tasks, candidates=candidates).actions


def blind_actions(env_id: str, kwargs: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The blind sequence of ``env_id`` made with ``kwargs`` (any ``split`` is ignored), fitted
    once per process and id + kwargs (then read from the cache)."""
    kwargs = {k: v for k, v in (kwargs or {}).items() if k != "split"}
    return _cached_actions(env_id, canonical(kwargs), DEFAULT_TASKS, DEFAULT_CANDIDATES)


def play(env: gym.Env, seed: int, actions: Sequence[str], horizon: int | None = None
         ) -> tuple[float, bool]:
    """``(score, ended)`` of playing ``actions`` on ``reset(seed)``, the last action repeated
    until the episode ends (the turn limit ends every episode). With ``horizon``, an episode
    still running after that many turns stops there, scored as things stand (the env's
    ``final_verdict``, what a cut-short episode gets) and ``ended`` False."""
    env.reset(seed=seed)
    u = env.unwrapped
    for turn in range(10**6):
        if horizon is not None and turn >= horizon:
            return float(u.final_verdict(u.state).score), False
        _, _, terminated, truncated, info = env.step(actions[min(turn, len(actions) - 1)])
        if terminated or truncated:
            return float(info[SCORE]), True
    raise AssertionError("unreachable: the turn limit ends every episode")


def greedy_sequence(env: gym.Env, seeds: Sequence[int], pool: Sequence[str]
                    ) -> tuple[list[str], float]:
    """Append, position by position, the candidate that most raises the mean score over
    ``seeds`` (ties: the earlier candidate), while one raises it; return the sequence and its
    exact mean score (every episode played to its end).

    A candidate at position ``t`` is scored as the episodes stand right after it (``play``'s
    horizon): repeating an action to the turn limit (50 turns in Search) for every candidate
    would cost far more, and the exact score of the chosen sequence is measured at the end.
    """
    best: list[str] = []
    best_score = -1.0
    limit = min(int(getattr(env.unwrapped, "max_turns", MAX_LENGTH)), MAX_LENGTH)
    alive = list(seeds)  # the tasks whose episode outlasts the current prefix
    done_total = 0.0  # the summed scores of the others (no later action changes them)
    while len(best) < limit and alive:
        scored = [(sum(play(env, s, [*best, c], len(best) + 1)[0] for s in alive), -i, c)
                  for i, c in enumerate(pool)]
        total, _, choice = max(scored)
        score = (done_total + total) / len(seeds)
        if score <= best_score + 1e-9:
            break
        best, best_score = [*best, choice], score
        still = []
        for s in alive:
            final, ended = play(env, s, best, len(best))
            if ended:
                done_total += final
            else:
                still.append(s)
        alive = still
    exact = sum(play(env, s, best)[0] for s in seeds) / len(seeds) if best else 0.0
    return best, exact


def candidate_actions(env: gym.Env, seeds: Sequence[int], limit: int) -> list[str]:
    """The oracle's actions on ``seeds``, most frequent first, then the family's extras, then
    an empty action; at most ``limit``, without repeats."""
    counts: Counter[str] = Counter()
    tasks = []
    u = env.unwrapped
    for s in seeds:
        env.reset(seed=s)
        tasks.append(u.task)
        counts.update(dict.fromkeys(u.solve(u.task), 1))  # once per task: how many tasks use it
    ranked = [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    extra = EXTRA_CANDIDATES.get(type(u).__module__.rpartition(".")[0])
    extras = extra(u, tasks, limit) if extra else []
    # A quarter of the room for the oracle's most used moves, then the extras, then the rest.
    head = ranked[: max(1, limit // 4)] if extras else ranked
    merged = list(dict.fromkeys([*head, *extras, *ranked, ""]))
    return merged[:limit]


def wordle_extras(env: Any, tasks: Sequence[Any], limit: int) -> list[str]:
    """Valid guesses ranked by how many train answers contain each of their distinct letters
    (a constant sequence earns by revealing letters, so coverage is what it needs)."""
    from textgyms.envs.wordle import words

    secrets = [t.secret for t in tasks]
    share = Counter(c for s in secrets for c in set(s))
    place = Counter((i, c) for s in secrets for i, c in enumerate(s))

    def value(w: str) -> tuple[float, str]:
        return (-(sum(share[c] for c in set(w)) + 0.5 * sum(place[(i, c)] for i, c in
                                                             enumerate(w))), w)

    ranked = sorted(words.guess_list(env.length), key=value)
    return [f"<guess>{w}</guess>" for w in ranked[:limit]]


#: Per family package, extra candidate actions: ``f(unwrapped_env, train_tasks, limit)``.
EXTRA_CANDIDATES: dict[str, Callable[[Any, Sequence[Any], int], list[str]]] = {
    "textgyms.envs.wordle": wordle_extras,
}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m textgyms.blind --env ID [--kwargs JSON] [--refresh]``: fit (or read) and
    print a blind plan."""
    p = argparse.ArgumentParser(prog="python -m textgyms.blind", description=__doc__.split("\n")[0])
    p.add_argument("--envs", default="all", help="all, or comma-separated env ids")
    p.add_argument("--kwargs", default="{}", help="env kwargs as one JSON object")
    p.add_argument("--tasks", type=int, default=DEFAULT_TASKS)
    p.add_argument("--candidates", type=int, default=DEFAULT_CANDIDATES)
    p.add_argument("--refresh", action="store_true", help="search again, replacing the cache")
    args = p.parse_args(argv)
    from textgyms.evaluate import resolve_envs

    kwargs = json.loads(args.kwargs)
    for env_id in resolve_envs(args.envs):
        plan = blind_plan(env_id, kwargs, tasks=args.tasks, candidates=args.candidates,
                          refresh=args.refresh)
        print(json.dumps({"env": env_id, "actions": plan.actions, "fit_split": plan.fit_split,
                          "fit_score": round(plan.fit_score, 4), "seconds": plan.seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
