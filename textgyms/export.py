"""``textgyms export sft``: oracle trajectories of any env as supervised fine-tuning data.

Every env solves its own tasks (``env.unwrapped.solve(task)``), so SFT data is a loop: reset a
**train-split** env (a test-split task never reaches the file), play the oracle's actions, and
write the transcript as one JSON line. Two formats:

* ``chat``: ``{"messages": [{"role", "content"}, ...]}``, the transcript exactly as the env's
  ``info["messages"]`` holds it (the env's answers are ``user`` turns, the oracle's actions are
  ``assistant`` turns in the env's own tag form, e.g. ``<guess>crane</guess>``). This is what
  ``baselines/sft.py --data`` and TRL's ``SFTTrainer`` read as a conversational dataset.
* ``tools``: the tool-calling form of TRL's ``GRPOTrainer`` / ``SFTTrainer`` and of chat
  templates with tools: each action is an assistant turn with ``tool_calls``
  (``{"type": "function", "function": {"name", "arguments": {...}}}``), each env answer a
  ``{"role": "tool", "name", "content"}`` turn, and ``tools`` holds the env's JSON schemas as a
  JSON string (Arrow needs one column type across envs; TRL's ``SFTTrainer`` accepts the string).

Every record also carries ``env_id``, ``env_kwargs`` (JSON string), ``seed``, ``task_id`` and the
oracle's ``score``. Records are deduplicated (two seeds that give the same transcript are written
once), so ``--episodes N`` means N distinct episodes per env when the train split has them.

    textgyms export sft --envs textgyms/Wordle-v0 --kwargs '{"vocab": "easy"}' \\
        --episodes 500 --format chat --out data/wordle-sft.jsonl

The file loads with ``datasets.load_dataset("json", data_files="data/wordle-sft.jsonl")``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from textgyms import export_tasks
from textgyms.errors import ConfigError
from textgyms.export_sources import SEEDS_PER_EPISODE, ExportSource, parse_sources, shares

__all__ = ["FORMATS", "ExportSource", "add_parser", "export_sft", "oracle_records",
           "parse_sources", "run", "shares"]

FORMATS = ("chat", "tools")


def tool_messages(messages: Sequence[dict[str, Any]], tools: Sequence[Any]) -> list[dict]:
    """The transcript with every assistant action as a native tool call and every env answer
    after the first prompt as a ``tool`` message (the action's text is parsed with the env's
    own parser, so a call the env accepted is the call written)."""
    from textgyms.actions import ParseError, parse

    out: list[dict[str, Any]] = []
    name = ""
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            call = parse(m["content"], tools)
            if isinstance(call, ParseError):
                raise RuntimeError(f"the oracle's action {m['content'][:80]!r} does not parse: "
                                   f"{call.message}")
            name = call.name
            fn = {"name": call.name, "arguments": dict(call.args)}
            out.append({"role": "assistant", "content": "",
                        "tool_calls": [{"type": "function", "function": fn}]})
        elif m["role"] == "user" and i > 0 and name:
            out.append({"role": "tool", "name": name, "content": m["content"]})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def play_oracle(env: Any, seed: int) -> tuple[list[dict], dict[str, Any], float]:
    """Play the oracle's episode of ``seed`` in ``env`` to its end: the tool schemas the reset
    announced, the last info and the last reward. Raises if the oracle leaves it unfinished."""
    _, info = env.reset(seed=seed)
    schemas, reward, done = info.get("tools") or [], 0.0, False
    for action in env.unwrapped.solve(env.unwrapped.task):
        _, reward, term, trunc, info = env.step(action)
        if done := term or trunc:
            break
    if not done:
        raise RuntimeError(f"{env.spec.id}: the oracle left seed {seed} unfinished")
    return schemas, info, float(reward)


def oracle_records(
    source: ExportSource, fmt: Literal["chat", "tools"], first_seed: int = 0
) -> Iterator[dict[str, Any]]:
    """Endless oracle records of ``source``, seeds ``first_seed``, ``first_seed + 1``, ...
    (duplicates included; :func:`export_sft` drops them)."""
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the envs)

    env = gym.make(source.env_id, **{**source.kwargs, "split": "train"})
    try:
        tools = env.unwrapped.tools
        seed = first_seed
        while True:
            schemas, info, reward = play_oracle(env, seed)
            messages = list(info["messages"])
            while messages and messages[-1]["role"] != "assistant":
                messages.pop()  # the env's last answer has nothing to teach
            record: dict[str, Any] = {"messages": messages}
            if fmt == "tools":
                record = {"messages": tool_messages(messages, tools),
                          "tools": json.dumps(schemas)}
            yield {**record, "env_id": source.env_id,
                   "env_kwargs": json.dumps(source.kwargs, sort_keys=True), "seed": seed,
                   "task_id": str(info.get("task_id", env.unwrapped.task.task_id)),
                   "score": float(info.get("score", reward))}
            seed += 1
    finally:
        env.close()


def record_key(record: dict[str, Any]) -> str:
    """What makes two records duplicates: the env, its kwargs and the conversation."""
    body = json.dumps([record["env_id"], record["env_kwargs"], record["messages"],
                       record.get("tools")], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def export_sft(
    sources: Sequence[ExportSource],
    episodes: int,
    out: str | Path,
    fmt: Literal["chat", "tools"] = "chat",
    seed: int = 0,
    progress: bool = True,
) -> dict[str, int]:
    """Write ``episodes`` distinct oracle records per source (scaled by weight, see
    :func:`shares`) to ``out`` (JSONL); return how many each source got (fewer when its train
    split runs out within ``SEEDS_PER_EPISODE`` seeds per record: a warning says so)."""
    from tqdm.auto import tqdm

    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if episodes < 1:
        raise ConfigError("--episodes must be >= 1")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    wanted = shares(sources, episodes)
    with open(out, "w", encoding="utf-8") as f, tqdm(
        total=sum(wanted), desc="export sft", disable=not progress
    ) as bar:
        for source, episodes in zip(sources, wanted):
            seen: set[str] = set()
            records = oracle_records(source, fmt, seed)
            for _ in range(episodes * SEEDS_PER_EPISODE):
                record = next(records)
                if (key := record_key(record)) in seen:
                    continue
                seen.add(key)
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
                bar.update()
                if len(seen) == episodes:
                    break
            records.close()
            label = source.name or source.env_id
            counts[label] = len(seen)
            if len(seen) < episodes:
                print(f"textgyms export sft: {label} has only {len(seen)} distinct train-split "
                      f"episodes in {episodes * SEEDS_PER_EPISODE} seeds", file=sys.stderr)
    return counts


def add_parser(sub: Any) -> None:
    """Register ``export sft`` on the ``textgyms`` subcommand parser."""
    export = sub.add_parser("export", help="export training data: oracle trajectories (sft) "
                            "or RL task rows (tasks)")
    kinds = export.add_subparsers(dest="export_kind", required=True)
    sft = kinds.add_parser("sft", help="oracle episodes as SFT JSONL (chat or tool-call format)")
    sft.add_argument("--envs", required=True, help="env ids or a mixture: 'ID*WEIGHT,ID' or "
                     "JSON entries with their own kwargs (see docs/vectors.md)")
    sft.add_argument("--kwargs", default="{}", help="env kwargs as JSON: one object for every "
                     "env, or an object keyed by env id")
    sft.add_argument("--episodes", type=int, default=100,
                     help="distinct episodes per env (times weight / mean weight in a mixture)")
    sft.add_argument("--format", choices=FORMATS, default="chat",
                     help="chat: messages with tag actions; tools: native tool calls (TRL)")
    sft.add_argument("--seed", type=int, default=0, help="seed of the first episode")
    sft.add_argument("--out", required=True, help="the JSONL file to write")
    sft.add_argument("--quiet", action="store_true", help="no progress bar")
    export_tasks.add_parser(kinds)  # its own module: RL task rows for trainers


def run(args: argparse.Namespace) -> int:
    """Handle ``textgyms export sft`` (and hand ``export tasks`` to its module)."""
    if args.export_kind == "tasks":
        return export_tasks.run(args)
    counts = export_sft(parse_sources(args.envs, args.kwargs), args.episodes, args.out,
                        args.format, args.seed, progress=not args.quiet)
    for env_id, n in counts.items():
        print(f"{env_id}: {n} episodes")
    print(f"wrote {args.out}")
    return 0
