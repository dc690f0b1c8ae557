#!/usr/bin/env python3
"""Print how the Wordle entropy solver does on every length, vocabulary and mode.

For each (length, vocab, normal/hard mode) it plays every possible secret (or a seeded
sample with ``--sample N``) honestly, i.e. without the solver's last-guess oracle, and
prints a table: games, mean and worst guess count over the games solved, how many took
1..max guesses, and how many were not solved within ``--max-guesses`` ("fail"; with the
oracle those would be won on the last guess).

    python scripts/solver_stats.py                  # everything (the "full" rows take minutes)
    python scripts/solver_stats.py --lengths 5 --vocabs common easy
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from textgyms.envs.wordle import solver, words


def play_all(
    length: int, vocab: str, hard: bool, secrets: list[str], max_guesses: int
) -> list[int]:
    """Guess counts of honest games; ``max_guesses + 1`` marks a game not solved."""
    counts = []
    desc = f"{length} {vocab:6} {'hard' if hard else 'normal'}"
    for secret in tqdm(secrets, desc=desc, leave=False, mininterval=1.0):
        plan = solver.solve(
            secret,
            length=length,
            vocab=vocab,
            hard_mode=hard,
            max_guesses=max_guesses,
            oracle=False,
        )
        counts.append(len(plan) if plan[-1] == secret else max_guesses + 1)
    return counts


def table_row(length: int, vocab: str, hard: bool, counts: list[int], max_guesses: int) -> str:
    """One markdown table row summarising ``counts``."""
    arr = np.array(counts)
    solved = arr[arr <= max_guesses]
    dist = np.bincount(arr, minlength=max_guesses + 2)[1:]
    mean = f"{solved.mean():.3f}" if solved.size else "-"
    worst = str(solved.max()) if solved.size else "-"
    cells = [str(length), vocab, "hard" if hard else "normal", str(arr.size), mean, worst]
    return "| " + " | ".join(cells + [str(n) for n in dist]) + " |"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(words.LENGTHS))
    parser.add_argument("--vocabs", nargs="+", default=list(words.VOCABS))
    parser.add_argument(
        "--modes", nargs="+", choices=("normal", "hard"), default=["normal", "hard"]
    )
    parser.add_argument("--sample", type=int, default=0, help="play N seeded secrets per row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-guesses", type=int, default=6)
    args = parser.parse_args(argv)

    header = ["len", "vocab", "mode", "games", "mean", "worst"]
    header += [str(n) for n in range(1, args.max_guesses + 1)] + ["fail"]
    rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    started = time.perf_counter()
    for length in args.lengths:
        for vocab in args.vocabs:
            secrets = list(words.answers(length, vocab))
            if args.sample and args.sample < len(secrets):
                rng = np.random.default_rng(args.seed)
                secrets = [
                    secrets[i] for i in sorted(rng.choice(len(secrets), args.sample, replace=False))
                ]
            for mode in args.modes:
                counts = play_all(length, vocab, mode == "hard", secrets, args.max_guesses)
                rows.append(table_row(length, vocab, mode == "hard", counts, args.max_guesses))
                tqdm.write(rows[-1], file=sys.stderr)
            # Free the (possibly several hundred MB) matrices before the next vocabulary.
            solver.pattern_matrix.cache_clear()
            solver._choose.cache_clear()
    print("\n".join(rows))
    print(
        f"\n({time.perf_counter() - started:.0f} s; openings: "
        + ", ".join(f"{n}={solver.opening_guess(n)}" for n in args.lengths)
        + ")"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
