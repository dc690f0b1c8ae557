#!/usr/bin/env python3
"""Run the index corruption and live-replacement checks many times in a row.

Each round, for tantivy and FTS5: build an index, corrupt a copy and check that opening it
raises ``IndexCorruptError`` (``corrupt_a_copy``); then keep the index open in a second
process, corrupt and repair it from this one several times, and check that the reader kept
getting its original answers and reopens the repaired index to the same answers
(``replace_under_live_reader``). Any SIGBUS kills the process that took it: this script or
the reader, and either fails the round. Exit 0 only if every round passed.

    python scripts/index_replace_stress.py               # 200 rounds
    python scripts/index_replace_stress.py --rounds 20 --repairs 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run from a checkout; the checks live in tests/

from index_replace import corrupt_a_copy, replace_under_live_reader  # noqa: E402


def one_round(repairs: int) -> list[str]:
    """Both checks on both backends in fresh directories; the failures' descriptions."""
    failures = []
    for name in ("tantivy", "fts5"):
        with tempfile.TemporaryDirectory() as tmp:
            if "copy" not in corrupt_a_copy(name, Path(tmp)):
                failures.append(f"{name}: the corrupt copy's error does not name it")
        with tempfile.TemporaryDirectory() as tmp:
            replies = replace_under_live_reader(name, Path(tmp), repairs)
            if not all(r.startswith("ok ") for r in replies[:-1]) or replies[-1] != "exit 0":
                failures.append(f"{name}: reader replies {replies}")
    return failures


def main() -> int:
    """Run the rounds; print a summary line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=200, help="rounds in a row")
    p.add_argument("--repairs", type=int, default=3, help="repairs under the reader per round")
    args = p.parse_args()
    failed = 0
    for i in tqdm(range(args.rounds), desc="rounds", unit="round"):
        failures = one_round(args.repairs)
        failed += bool(failures)
        for failure in failures:
            tqdm.write(f"round {i}: {failure}")
    print(f"{args.rounds - failed} passed, {failed} failed "
          f"({args.rounds} rounds x 2 backends x (corrupt copy + {args.repairs} live repairs))")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
