"""Fill the CodeI/O filtered-index cache for every item ahead of time (optional: the env
evaluates items lazily the first time one is drawn).

Usage: .venv/bin/python scripts/code_build_codeio.py [--limit N]
"""

from __future__ import annotations

import argparse
import time

from textgyms.envs.code import codeio
from textgyms.sandbox import Sandbox


def main() -> None:
    """Evaluate every item not in the cache yet and print how many were kept."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    args = parser.parse_args()
    n = len(codeio.problems()) if args.limit is None else args.limit
    box, index, start = Sandbox(), codeio.index(), time.monotonic()
    try:
        kept = sum(index.tests(box, i) is not None for i in range(n))
    finally:
        box.close()
    print(f"{kept}/{n} items kept in {time.monotonic() - start:.0f} s; cache: {index.path}")


if __name__ == "__main__":
    main()
