"""``textgyms view RUN [RUN...] [--out FILE] [--open]``: the runs as one HTML page."""

from __future__ import annotations

import argparse
import webbrowser
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the ``view`` subcommand on the ``textgyms`` parser's subparsers."""
    p = sub.add_parser(
        "view",
        help="render eval runs as one self-contained HTML page (episodes, transcripts, diffs)",
        description="Render eval run directories as one self-contained HTML page: a sortable, "
        "filterable table of episodes, each episode's transcript, and for two runs of the same "
        "protocol a per-task diff. The page needs no network; open it from disk.",
    )
    p.add_argument("runs", nargs="+", help="run directories, or directories holding runs")
    p.add_argument(
        "--out", default=None, help="the HTML file (default: view.html in the first run directory)"
    )
    p.add_argument("--title", default=None, help="the page title (default: the run names)")
    p.add_argument("--open", action="store_true", help="open the page in a web browser")


def run(args: argparse.Namespace) -> int:
    """Write the page; print its path."""
    from textgyms.view.page import write_page  # the CLI starts without the viewer's imports

    paths = [Path(p) for p in args.runs]
    out = Path(args.out) if args.out else paths[0] / "view.html"
    page = write_page(paths, out, args.title)
    print(f"wrote {page}")
    if args.open:
        webbrowser.open(page.resolve().as_uri())
    return 0
