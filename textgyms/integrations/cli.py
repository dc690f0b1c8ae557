"""``textgyms integrations``: where the files shipped for trainers live.

Some trainers take a plug-in as a file path in their config (verl's agent-loop YAML,
OpenRLHF's agent-function file); ``textgyms integrations path NAME`` prints that path, so a
config can say ``$(textgyms integrations path verl)``. ``NAME-path`` is the same command.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import Any

from textgyms.errors import ConfigError

__all__ = ["SHIPPED", "add_parser", "run", "shipped_path"]

# trainer -> the file shipped for it, relative to this package; one entry per shipped file.
SHIPPED: dict[str, str] = {
    "verl": "verl_agent_loop.yaml",
    "openrlhf": "openrlhf_agent.py",
}


def shipped_path(name: str) -> Path:
    """The installed path of the file shipped for trainer ``name``."""
    if name not in SHIPPED:
        choices = ", ".join(sorted(SHIPPED)) or "(none)"
        raise ConfigError(f"no file is shipped for {name!r}; choose one of: {choices}")
    path = Path(str(resources.files("textgyms.integrations").joinpath(SHIPPED[name])))
    if not path.is_file():
        raise ConfigError(f"{path} is missing from the installed package; reinstall textgyms")
    return path


def add_parser(sub: Any) -> None:
    """Register ``integrations`` on the ``textgyms`` parser's subparsers."""
    p = sub.add_parser(
        "integrations",
        help="print the path of a file shipped for a trainer (verl YAML, OpenRLHF agent file)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("what", metavar="path NAME | NAME-path", nargs="+",
                   help=f"trainer names: {', '.join(sorted(SHIPPED)) or '(none yet)'}")


def run(args: argparse.Namespace) -> int:
    """Print the shipped file's path."""
    words = list(args.what)
    if words[0] == "path" and len(words) == 2:
        name = words[1]
    elif len(words) == 1 and words[0].endswith("-path"):
        name = words[0].removesuffix("-path")
    else:
        raise ConfigError("usage: textgyms integrations path NAME (or NAME-path)")
    print(shipped_path(name))
    return 0
