"""The textgyms command; `textgyms COMMAND --help` shows each command's options and defaults.

textgyms list                                   # ids, descriptions, kwargs, missing extras
textgyms play textgyms/Wordle-v0 --seed 3       # play in the terminal
textgyms eval --policy oracle --envs all --episodes 50 --split test --out runs/oracle
textgyms leaderboard runs/ --out runs/           # leaderboard.md + leaderboard.html
textgyms index build fictionweb --pages 100000  # build a Search index ahead of training
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import textgyms
from textgyms import export, extras
from textgyms.envs.search import cli as search_cli
from textgyms.errors import ConfigError, TextgymsError
from textgyms.integrations import cli as integrations_cli
from textgyms.policies.spec import POLICY_SPECS
from textgyms.protocol import resolved_kwargs
from textgyms.server import cli as serve_cli
from textgyms.view import cli as view_cli

#: Tools that end the episode: ``play`` never sends stray text to them (they need explicit tags).
FINAL_TOOLS = ("answer", "submit")


def env_class(env_id: str) -> type:
    """The class behind a registered id, without constructing it."""
    spec = gym.spec(env_id)
    return gym.envs.registration.load_env_creator(spec.entry_point)


def env_kwargs_doc(env_id: str) -> str:
    """``name=default`` for every constructor kwarg: the family's own first, then the ones
    every textgyms env takes (``max_turns``, ``reward_mode``, ...)."""
    params = inspect.signature(env_class(env_id).__init__).parameters.values()
    own = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is not p.empty]
    every = resolved_kwargs(env_id, {})
    order = own + sorted(k for k in every if k not in own)
    return ", ".join(f"{k}={every[k]!r}" for k in order if k in every)


def env_summary(env_id: str) -> str:
    """The first line of the docstring that introduces ``env_id``: its class's when that one
    starts with the id in double backquotes and a colon, else its module's. Read from the
    source file (not imported), so it works when the env's extra is not installed."""
    module, _, name = gym.spec(env_id).entry_point.partition(":")
    rel = Path(*module.split(".")[1:]).with_suffix(".py")  # the path inside the package
    tree = ast.parse((Path(textgyms.__file__).parent / rel).read_text())
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    docs = [ast.get_docstring(n) or "" for n in (*classes, tree)]
    firsts = [d.splitlines()[0] if d else "" for d in docs]
    first = next((f for f in firsts if f.startswith(f"``{env_id}``:")), firsts[-1])
    return re.sub(r"^``[^`]+``:\s*", "", first)  # without the leading "``id``:"


def env_needs(env_id: str) -> str:
    """What this install still lacks for ``env_id``: per extra, the pip command and its uses."""
    uses: dict[str, list[str]] = {}
    for need in extras.missing(env_id):
        uses.setdefault(need.extra, []).append(need.purpose)
    return "; ".join(f"{extras.install_hint(e)} {' and '.join(p)}" for e, p in uses.items())


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A rich table on a terminal; aligned plain text, never wrapped, in logs and pipes (or
    without rich)."""
    from textgyms.leaderboard import text_table

    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Table = None
    if Table is None or not sys.stdout.isatty():
        print(text_table(title, columns, rows))
        return
    table = Table(title=title)
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in rows:
        table.add_row(*(str(x) for x in row))
    Console().print(table)


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered env, its kwargs and the extras this install still lacks."""
    for env_id in textgyms.env_ids():
        try:
            kwargs = env_kwargs_doc(env_id)
        except ImportError:  # the env's extra is missing: its module cannot be imported
            kwargs = "(listed once the extra below is installed)"
        print(f"{env_id}: {env_summary(env_id)}")
        print(textwrap.fill(kwargs, 100, initial_indent="  kwargs: ", subsequent_indent=" " * 4))
        needs = env_needs(env_id)
        print(f"  needs:  {needs or 'nothing more (every option works on this install)'}\n")
    return 0


def parse_kwargs(text: str) -> dict[str, Any]:
    """The JSON object given to ``--kwargs``; a ConfigError naming ``--kwargs`` otherwise."""
    example = """e.g. --kwargs '{"hard_mode": true}'"""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--kwargs is not valid JSON ({exc}); {example}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--kwargs must be a JSON object, got {text!r}; {example}")
    return value


def split_kwargs(kwargs: dict[str, Any], env_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each env's kwargs: keys that are env ids hold that env's own kwargs (an object); every
    other key applies to every env. ``{"max_invalid": 1, "textgyms/Wordle-v0": {"length": 4}}``
    """
    shared = {k: v for k, v in kwargs.items() if "/" not in k}
    own = {k: v for k, v in kwargs.items() if "/" in k}
    for env_id, value in own.items():
        if env_id not in env_ids:
            raise ConfigError(f"--kwargs names {env_id!r}, which is not among --envs: {env_ids}")
        if not isinstance(value, dict):
            raise ConfigError(f"--kwargs: the value of {env_id!r} must be a JSON object")
    return {env_id: {**shared, **own.get(env_id, {})} for env_id in env_ids}


def read_action(read: Callable[[str], str] | None = None) -> str | None:
    """One action typed (or pasted) in the terminal; None at end of input.

    Empty lines are skipped. An action goes on over several lines while a tag is open
    (``<answer>`` or ``<apply_config device="R1">`` before its closing tag), a brace is open
    (a JSON call, an MT103's ``{4:`` block before ``-}``) or inside a block that starts and
    ends with a line ``\"\"\"``.
    """
    read = read or input
    lines: list[str] = []
    while True:
        try:
            line = read("\n> " if not lines else "... ")
        except (EOFError, KeyboardInterrupt):
            return None
        if not lines and not line.strip():
            continue
        if line.strip() == '"""':
            if lines and lines[0].strip() == '"""':
                return "\n".join(lines[1:])
            if not lines:
                lines.append(line)
                continue
        lines.append(line)
        text = "\n".join(lines)
        if lines[0].strip() != '"""' and not unfinished(text):
            return text


def unfinished(text: str) -> bool:
    """True while ``text`` has a tag or a brace that is opened and not yet closed."""
    opened = re.findall(r"<([A-Za-z_]\w*)(?:\s[^<>]*)?(?<!/)>", text)  # attributes allowed
    if opened:  # a tagged call: braces inside it (code, JSON) are its content's business
        return any(f"</{tag}>" not in text for tag in opened)
    return text.count("{") > text.count("}")


def as_call(text: str, tools: Sequence[Any]) -> str:
    """A bare word (no tag, no JSON) becomes a call of the env's first tool, so ``crane``
    plays ``<guess>crane</guess>``; anything else, and any text for a tool that ends the
    episode, is sent as typed (stray text then gets the env's format feedback)."""
    word = re.fullmatch(r"\s*([\w'.-]+)\s*", text)
    if not tools or tools[0].name in FINAL_TOOLS or word is None:
        return text
    return f"<{tools[0].name}>{word.group(1)}</{tools[0].name}>"


def cmd_play(args: argparse.Namespace) -> int:
    """Play an env in the terminal (see :func:`read_action` and :func:`as_call`)."""
    env = gym.make(args.env_id, **parse_kwargs(args.kwargs))
    obs, info = env.reset(seed=args.seed)
    print(obs)
    print('\n(multi-line answers: open a tag or a block with a line """; Ctrl-D quits)')
    while True:
        text = read_action()
        if text is None:
            print("\nbye")
            return 0
        obs, reward, terminated, truncated, info = env.step(as_call(text, env.unwrapped.tools))
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
    env_ids = resolve_envs(args.envs)
    per_env = split_kwargs(parse_kwargs(args.kwargs), env_ids)
    groups: dict[str, list[str]] = {}  # envs with the same kwargs run in one evaluate call
    for env_id in env_ids:
        groups.setdefault(json.dumps(per_env[env_id], sort_keys=True), []).append(env_id)
    try:
        for ids in groups.values():  # each call adds its envs to the run's metadata
            agg = evaluate(
                policy,
                ids,
                episodes=args.episodes,
                out=Path(args.out),
                split=args.split,
                seed=args.seed,
                samples=args.samples,
                concurrency=args.concurrency,
                env_kwargs=per_env[ids[0]],
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
    if args.format == "json":
        print(json.dumps({"run": args.out, "aggregates": agg}, indent=2))
        return 0
    print_aggregates(f"policy {args.policy} -> {args.out}", agg)
    return 0


def print_aggregates(title: str, agg: dict[str, dict[str, Any]]) -> None:
    """The per-env results table that ``eval`` prints."""
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
    columns = ("env", "score (95% CI)", "solved", "pass@k", "turns", "invalid/ep", "episodes")
    print_table(title, columns, rows)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """Rank runs by normalised score; write leaderboard.md and leaderboard.html."""
    from textgyms.leaderboard import board_json, build, find_runs, view_links, write

    board = build(find_runs([Path(p) for p in args.runs]))
    md_path, html_path = write(board, Path(args.out))
    if args.format == "json":
        print(json.dumps(board_json(board, view_links(board)), indent=2))
        return 0
    print(md_path.read_text())
    print(f"wrote {md_path}\nwrote {html_path}")
    return 0


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's line breaks and shows each option's default (when it has one)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.required or action.default in (None, False, argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)" if "%(default)" not in text else text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``textgyms`` command."""
    p = argparse.ArgumentParser(prog="textgyms", description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--version", action="version", version=f"textgyms {textgyms.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="list environments, their kwargs and the extras they need")
    play = sub.add_parser(
        "play", help="play an environment in the terminal", formatter_class=HelpFormatter
    )
    play.add_argument("env_id", help="e.g. textgyms/Wordle-v0")
    play.add_argument("--seed", type=int, default=None, help="fix the task (None: random)")
    play.add_argument(
        "--kwargs", default="{}", help="env kwargs as JSON, e.g. '{\"hard_mode\": true}'"
    )
    ev = sub.add_parser(
        "eval",
        help="evaluate a policy; writes results.jsonl + metadata.json",
        formatter_class=HelpFormatter,
    )
    ev.add_argument("--policy", required=True, help=f"one of: {', '.join(POLICY_SPECS)}")
    ev.add_argument("--envs", default="all", help="'all' or comma-separated ids")
    ev.add_argument(
        "--episodes", type=int, default=20, help="episodes per env (seeds seed..seed+N-1)"
    )
    ev.add_argument("--split", default="test", help="task split (test: the leaderboard's)")
    ev.add_argument("--seed", type=int, default=0, help="seed of episode 0")
    ev.add_argument(
        "--samples", type=int, default=1, help="plays per task, for pass@k with k <= samples"
    )
    ev.add_argument("--concurrency", type=int, default=8, help="episodes in flight per env")
    ev.add_argument(
        "--kwargs",
        default="{}",
        help="env kwargs as a JSON object, applied to every env; a key that is an env id holds "
        'that env\'s own kwargs, e.g. \'{"max_invalid": 1, "textgyms/Wordle-v0": {"length": 4}}\'',
    )
    ev.add_argument(
        "--backend",
        choices=("serial", "multiprocessing", "ray"),
        default=None,
        help="step the envs as a textgyms.make_vec vector on this backend (None: in-process "
        "envs); 'ray' uses the Ray cluster named by RAY_ADDRESS, else a local one",
    )
    ev.add_argument("--out", required=True, help="run directory (resumed if it exists)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.add_argument("--format", choices=("table", "json"), default="table",
                    help="the results on stdout: a table, or JSON for scripts")
    lb = sub.add_parser(
        "leaderboard",
        help="rank run directories; writes leaderboard.md + leaderboard.html",
        formatter_class=HelpFormatter,
    )
    lb.add_argument("runs", nargs="+", help="run directories, or directories holding runs")
    lb.add_argument("--out", default=".", help="where to write the two files")
    lb.add_argument("--format", choices=("markdown", "json"), default="markdown",
                    help="the ranking on stdout: Markdown, or JSON for scripts")
    search_cli.add_parser(sub)
    export.add_parser(sub)
    view_cli.add_parser(sub)
    serve_cli.add_parser(sub)
    integrations_cli.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; configuration errors are printed without a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `textgyms`: show what there is to run
        parser.print_help()
        return 0
    commands = {
        "list": cmd_list,
        "play": cmd_play,
        "eval": cmd_eval,
        "leaderboard": cmd_leaderboard,
        "index": search_cli.run,
        "export": export.run,
        "serve": serve_cli.run,
        "view": view_cli.run,
        "integrations": integrations_cli.run,
    }
    try:
        return commands[args.command](args)
    except (TextgymsError, gym.error.Error) as exc:
        print(f"textgyms {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left early (`textgyms list | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
