"""The blind baseline per env and level: fit on the train split, score on the test split.

    python scripts/blind_table.py --episodes 30 --out runs/blind-table

For every registered id and each of its levels (:data:`LEVELS`, the other kwargs at their
defaults), fits the blind sequence (:mod:`textgyms.blind`, cached) and evaluates it with
``textgyms eval --policy blind`` on ``--episodes`` test-split tasks (seeds 0..N-1, the
leaderboard protocol). Prints a Markdown table (env, level, blind score on train and on test with
its 95% CI, the sequence's first action) and writes it to ``OUT/blind-table.md``. The verifiers
decide the scores, so rerun it after a verifier changes (docs/training.md quotes its output).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import textgyms
from textgyms.blind import blind_plan
from textgyms.evaluate import evaluate
from textgyms.policies.scripted import ScriptedPolicy

#: Per env family, the kwarg that sets its level and the levels listed.
LEVELS: dict[str, tuple[str, tuple]] = {
    "Wordle": ("vocab", ("easy", "common", "full")),
    "Search": ("difficulty", ("lookup", "easy", "medium", "hard")),
    "Code": ("difficulty", ("easy", "medium", "hard")),
    "NetConfig": ("difficulty", ("easy", "medium", "hard")),
    "ISO20022-MT103": ("difficulty", (1, 2, 3, 4)),
    "MT103ToISO20022": ("difficulty", (1, 2, 3, 4)),
}


def family(env_id: str) -> str:
    """``Search`` for ``textgyms/Search-v1``."""
    return env_id.split("/")[-1].rsplit("-v", 1)[0]


def row(env_id: str, key: str, level: object, episodes: int, out: Path) -> str:
    """One table row: fit (or read) the plan, evaluate it on the test split."""
    kwargs = {key: level}
    plan = blind_plan(env_id, kwargs)
    run = out / f"{family(env_id)}-{level}"
    agg = evaluate(ScriptedPolicy("blind"), [env_id], episodes=episodes, out=run,
                   env_kwargs=kwargs, progress=False)[env_id]
    first = plan.actions[0].replace("\n", " ")
    first = first if len(first) <= 40 else first[:37] + "..."
    return (f"| {env_id} | {key}={json.dumps(level)} | {plan.fit_score:.3f} ({plan.fit_split}) | "
            f"{agg['score']:.3f} ± {agg['score_ci95']:.3f} | {len(plan.actions)} | "
            f"`{first.replace('|', '/')}` |")


def main(argv: list[str] | None = None) -> int:
    """Build the table for every id (or ``--envs``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--episodes", type=int, default=30)
    p.add_argument("--envs", default="all")
    p.add_argument("--out", default="runs/blind-table")
    args = p.parse_args(argv)
    out = Path(args.out)
    ids = textgyms.env_ids() if args.envs == "all" else args.envs.split(",")
    lines = ["| env | level | blind, fit (split) | blind, test ± 95% CI | actions | first action |",
             "|---|---|---|---|---|---|"]
    for env_id in ids:
        key, levels = LEVELS[family(env_id)]
        for level in levels:
            lines.append(row(env_id, key, level, args.episodes, out))
            print(lines[-1], flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "blind-table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
