"""``textgyms export tasks``: RL task datasets, one row per episode to play, for any trainer.

An RL trainer needs no trajectories, only tasks: which env, how configured, which seed, and
the prompt the policy sees first. Every row holds

* ``prompt``: the env's first messages (``info["messages"]`` after ``reset``), as chat messages;
* ``env_id``, ``env_kwargs`` (JSON text, one Arrow type across envs), ``seed``, ``task_id`` and
  ``split``: the keys :class:`textgyms.integrations.episode.TaskRow` reads back;
* ``metric_keys``: the metric names every episode of the file reports (the union over its envs,
  :func:`textgyms.integrations.episode.metric_keys`), so a trainer that builds its metric arrays
  from one sample's keys (verl) gets the same keys from every env;
* ``extra_info``: the same keys again plus the row's ``index`` (verl and SkyRL hand this column
  to their plug-ins), and the columns the named trainer expects (``--for``):

  - ``verl``: ``data_source`` (the env id, so verl groups its metrics per env) and
    ``agent_name`` (``textgyms``, the agent loop that plays the row);
  - ``skyrl``: ``env_class`` (``textgyms``, the SkyRL env that plays the row),
    ``reward_spec`` (``{"method": "env"}``: the env computes the reward itself) and
    ``data_source`` (the env id, so SkyRL's evaluation reports each env on its own);
  - ``generic``: nothing more.

Tasks come from the requested split only (``--split train`` for training files, ``test`` for
evaluation files; the split is the env's own hash partition of task ids, so no test task can
reach a train file), deduplicated by task id. Mixture specs and weights work as in
``textgyms export sft``.

    textgyms export tasks --envs 'textgyms/Wordle-v0*2,textgyms/Code-v0' --split train \\
        --episodes 1000 --for verl --out data/train.parquet
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from textgyms.errors import ConfigError
from textgyms.export_sources import SEEDS_PER_EPISODE, ExportSource, parse_sources, shares
from textgyms.integrations.episode import TaskRow, metric_keys

__all__ = ["AGENT_NAME", "ENV_CLASS", "SPLITS", "TRAINERS", "add_parser", "export_tasks",
           "run", "task_rows", "trainer_columns"]

TRAINERS = ("generic", "verl", "skyrl")
SPLITS = ("train", "test")
AGENT_NAME = "textgyms"  # verl: the agent loop registered by textgyms.integrations.verl
ENV_CLASS = "textgyms"  # SkyRL: the env class registered by textgyms.integrations.skyrl


def task_rows(source: ExportSource, first_seed: int = 0) -> Iterator[dict[str, Any]]:
    """Endless rows of ``source``'s split, seeds ``first_seed``, ``first_seed + 1``, ...
    (repeated tasks included; :func:`export_tasks` drops them)."""
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the envs)

    kwargs = {**source.kwargs, "split": source.split}
    env = gym.make(source.env_id, **kwargs)
    try:
        seed = first_seed
        while True:
            _, info = env.reset(seed=seed)
            task_id = str(info.get("task_id", env.unwrapped.task.task_id))
            row = TaskRow(source.env_id, kwargs, seed, source.split, task_id)
            yield {"prompt": [dict(m) for m in info["messages"]], **row.columns()}
            seed += 1
    finally:
        env.close()


def trainer_columns(row: dict[str, Any], trainer: str, index: int) -> dict[str, Any]:
    """``row`` with ``extra_info`` and the columns ``trainer`` expects (module docstring)."""
    if trainer not in TRAINERS:
        raise ConfigError(f"unknown trainer {trainer!r}; choose one of: {', '.join(TRAINERS)}")
    keys = ("env_id", "env_kwargs", "seed", "split", "task_id", "metric_keys")
    extra = {k: row[k] for k in keys if k in row}
    out = {**row, "extra_info": {**extra, "index": index}}
    if trainer == "verl":
        out.update(data_source=row["env_id"], agent_name=AGENT_NAME)
    elif trainer == "skyrl":
        out.update(env_class=ENV_CLASS, reward_spec={"method": "env"}, data_source=row["env_id"])
    return out


def _write(rows: list[dict[str, Any]], out: Path) -> None:
    """Write ``rows`` as Parquet or JSON lines, by the file's suffix."""
    if out.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ConfigError("writing .parquet needs pyarrow: pip install pyarrow "
                              "(or write .jsonl)") from exc
        pq.write_table(pa.Table.from_pylist(rows), out)
        return
    with open(out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def export_tasks(
    sources: Sequence[ExportSource],
    episodes: int,
    out: str | Path,
    trainer: str = "generic",
    seed: int = 0,
) -> dict[str, int]:
    """Write ``episodes`` distinct tasks per source (scaled by weight, as in ``export sft``)
    to ``out`` (``.parquet`` or ``.jsonl``); return how many each source got (fewer when its
    split runs out within ``SEEDS_PER_EPISODE`` seeds per task: a warning says so)."""
    out = Path(out)
    if out.suffix not in (".parquet", ".jsonl", ".json"):
        raise ConfigError(f"--out must end in .parquet or .jsonl, got {out.name!r}")
    if episodes < 1:
        raise ConfigError("--episodes must be >= 1")
    if trainer not in TRAINERS:  # before any env is made
        raise ConfigError(f"unknown trainer {trainer!r}; choose one of: {', '.join(TRAINERS)}")
    rows: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    keys = list(metric_keys([source.env_id for source in sources]))
    for source, wanted in zip(sources, shares(sources, episodes)):
        seen: set[str] = set()
        gen = task_rows(source, seed)
        for _ in range(wanted * SEEDS_PER_EPISODE):
            row = next(gen)
            if row["task_id"] in seen:
                continue
            seen.add(row["task_id"])
            rows.append(trainer_columns({**row, "metric_keys": keys}, trainer, len(rows)))
            if len(seen) == wanted:
                break
        gen.close()
        label = source.name or source.env_id
        counts[label] = len(seen)
        if len(seen) < wanted:
            print(f"textgyms export tasks: {label} has only {len(seen)} distinct "
                  f"{source.split}-split tasks in {wanted * SEEDS_PER_EPISODE} seeds",
                  file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    _write(rows, out)
    return counts


def add_parser(kinds: Any) -> None:
    """Register ``tasks`` on the ``textgyms export`` subparsers."""
    p = kinds.add_parser("tasks", help="RL task rows (prompt, env id, kwargs, seed) for "
                         "verl, SkyRL or any trainer, as Parquet or JSONL")
    p.add_argument("--envs", required=True, help="env ids or a mixture: 'ID*WEIGHT,ID' or "
                   "JSON entries with their own kwargs (see docs/vectors.md)")
    p.add_argument("--kwargs", default="{}", help="env kwargs as JSON: one object for every "
                   "env, or an object keyed by env id")
    p.add_argument("--split", choices=SPLITS, default="train",
                   help="the env split the tasks come from (test tasks never reach a train file)")
    p.add_argument("--episodes", type=int, default=100,
                   help="distinct tasks per env (times weight / mean weight in a mixture)")
    p.add_argument("--for", dest="trainer", choices=TRAINERS, default="generic",
                   help="add the columns this trainer reads (verl: data_source, agent_name; "
                   "skyrl: env_class, reward_spec, data_source)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first task")
    p.add_argument("--out", required=True, help="the .parquet or .jsonl file to write")


def run(args: argparse.Namespace) -> int:
    """Handle ``textgyms export tasks``."""
    sources = parse_sources(args.envs, args.kwargs, args.split)
    counts = export_tasks(sources, args.episodes, args.out, args.trainer, args.seed)
    for label, n in counts.items():
        print(f"{label}: {n} {args.split}-split tasks")
    print(f"wrote {args.out}")
    return 0
