"""The ``textgyms`` command: ``list``, ``play``, ``eval``, ``leaderboard`` and ``index``.

textgyms list                                   # ids, descriptions and kwargs
textgyms play textgyms/Wordle-v0 --seed 3       # play in the terminal
textgyms eval --policy oracle --envs all --episodes 50 --split test --out runs/oracle
textgyms leaderboard runs/ --out runs/           # leaderboard.md + leaderboard.html
textgyms index build fictionweb --pages 100000  # build a Search index ahead of training
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import textgyms
from textgyms.envs.search import cli as search_cli
from textgyms.errors import TextgymsError
from textgyms.policies.base import POLICY_SPECS


def env_class(env_id: str) -> type:
    """The class behind a registered id, without constructing it."""
    spec = gym.spec(env_id)
    return gym.envs.registration.load_env_creator(spec.entry_point)


def env_kwargs_doc(env_id: str) -> str:
    """``name=default`` for each keyword of the env's constructor."""
    params = inspect.signature(env_class(env_id).__init__).parameters.values()
    return ", ".join(
        f"{p.name}={p.default!r}"
        for p in params
        if p.kind is p.KEYWORD_ONLY and p.default is not p.empty
    )


def env_summary(env_id: str) -> str:
    """The first line of the env module's docstring, without a leading ``id``: prefix."""
    doc = (inspect.getdoc(inspect.getmodule(env_class(env_id))) or "").splitlines()
    first = doc[0] if doc else ""
    prefix = f"``{env_id}``:"
    return first[len(prefix) :].strip() if first.startswith(prefix) else first


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A rich table when rich is installed, else aligned plain text."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(str(x)) for x in col) for col in zip(columns, *rows)]
        print(title)
        for row in [columns, *rows]:
            print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
        return
    table = Table(title=title)
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in rows:
        table.add_row(*(str(x) for x in row))
    Console().print(table)


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered env."""
    rows = []
    for env_id in textgyms.env_ids():
        rows.append((env_id, env_summary(env_id), env_kwargs_doc(env_id)))
    print_table("textgyms environments", ("id", "description", "kwargs"), rows)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    """Play an env in the terminal. A bare word is sent as a call of the env's first tool."""
    env = gym.make(args.env_id, **json.loads(args.kwargs))
    obs, info = env.reset(seed=args.seed)
    tool = env.unwrapped.tools[0].name if env.unwrapped.tools else None
    print(obs)
    while True:
        try:
            text = input("\n> ")
        except (EOFError, KeyboardInterrupt):
            print("\nbye")
            return 0
        if tool and "<" not in text and "{" not in text:
            text = f"<{tool}>{text}</{tool}>"
        obs, reward, terminated, truncated, info = env.step(text)
        print(obs)
        if terminated or truncated:
            print(f"\nscore {info['score']:.3f}  solved {info['solved']}  turns {info['turn']}")
            return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a policy over envs and write a run directory.

    Ctrl-C stops it between two episode writes (exit status 130); the same command resumes.
    """
    from textgyms.evaluate import RESULTS, evaluate, load_results, resolve_envs
    from textgyms.policies import make_policy

    policy = make_policy(args.policy, seed=args.seed)
    try:
        agg = evaluate(
            policy,
            resolve_envs(args.envs),
            episodes=args.episodes,
            out=Path(args.out),
            split=args.split,
            seed=args.seed,
            samples=args.samples,
            concurrency=args.concurrency,
            env_kwargs=json.loads(args.kwargs),
            progress=not args.quiet,
            backend=args.backend,
        )
    except KeyboardInterrupt:
        saved = len(load_results(Path(args.out)))
        print(
            f"\ntextgyms eval: interrupted; {saved} episodes are saved in "
            f"{Path(args.out) / RESULTS}; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    rows = [
        (
            env_id,
            f"{a['score']:.3f} ± {a['score_ci95']:.3f}",
            f"{a['solve_rate']:.1%}",
            " ".join(f"@{k}:{v:.2f}" for k, v in a["pass_at_k"].items()),
            f"{a['turns']:.2f}",
            f"{a['invalid']:.2f}",
            int(a["n"]),
        )
        for env_id, a in agg.items()
    ]
    print_table(
        f"policy {args.policy} -> {args.out}",
        ("env", "score (95% CI)", "solved", "pass@k", "turns", "invalid/ep", "episodes"),
        rows,
    )
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """Rank runs by normalised score; write leaderboard.md and leaderboard.html."""
    from textgyms.leaderboard import build, find_runs, write

    board = build(find_runs([Path(p) for p in args.runs]))
    md_path, html_path = write(board, Path(args.out))
    print(md_path.read_text())
    print(f"wrote {md_path}\nwrote {html_path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``textgyms`` command."""
    p = argparse.ArgumentParser(
        prog="textgyms", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list environments, their descriptions and kwargs")
    play = sub.add_parser("play", help="play an environment in the terminal")
    play.add_argument("env_id", help="e.g. textgyms/Wordle-v0")
    play.add_argument("--seed", type=int, default=None, help="fix the task (default: random)")
    play.add_argument(
        "--kwargs", default="{}", help="env kwargs as JSON, e.g. '{\"hard_mode\": true}'"
    )
    ev = sub.add_parser("eval", help="evaluate a policy; writes results.jsonl + metadata.json")
    ev.add_argument("--policy", required=True, help=f"one of: {', '.join(POLICY_SPECS)}")
    ev.add_argument("--envs", default="all", help="'all' or comma-separated ids")
    ev.add_argument(
        "--episodes", type=int, default=20, help="episodes per env (seeds seed..seed+N-1)"
    )
    ev.add_argument("--split", default="test", help="task split (default: test)")
    ev.add_argument("--seed", type=int, default=0, help="seed of episode 0")
    ev.add_argument(
        "--samples", type=int, default=1, help="plays per task, for pass@k with k <= samples"
    )
    ev.add_argument("--concurrency", type=int, default=8, help="episodes in flight per env")
    ev.add_argument("--kwargs", default="{}", help="env kwargs as JSON, applied to every env")
    ev.add_argument(
        "--backend",
        choices=("serial", "multiprocessing", "ray"),
        default=None,
        help="step the envs as a textgyms.make_vec vector on this backend (default: in-process "
        "envs); 'ray' uses the Ray cluster named by RAY_ADDRESS, else a local one",
    )
    ev.add_argument("--out", required=True, help="run directory (resumed if it exists)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    lb = sub.add_parser(
        "leaderboard", help="rank run directories; writes leaderboard.md + leaderboard.html"
    )
    lb.add_argument("runs", nargs="+", help="run directories, or directories holding runs")
    lb.add_argument("--out", default=".", help="where to write the two files (default: .)")
    search_cli.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; configuration errors are printed without a traceback."""
    args = build_parser().parse_args(argv)
    commands = {
        "list": cmd_list,
        "play": cmd_play,
        "eval": cmd_eval,
        "leaderboard": cmd_leaderboard,
        "index": search_cli.run,
    }
    try:
        return commands[args.command](args)
    except (TextgymsError, json.JSONDecodeError, gym.error.Error) as exc:
        print(f"textgyms {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
