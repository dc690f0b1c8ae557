"""The demo's results table: one row per policy of a demo env, from its eval runs.

    python baselines/demo_table.py runs/demo/eval --prefix search- --out runs/demo/search.md

Reads every run directory ``PREFIX*`` under the eval directory (``search-oracle``,
``search-grpo``, ...), and writes a Markdown table (score with its 95% interval, solve rate,
invalid actions per episode and the feedback-use metrics, best score first), whether the
required orderings hold (disjoint 95% intervals), and the transcript of one won test episode
of the ``grpo`` run (the first by episode index).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from textgyms.evaluate import load_results, run_dirs  # noqa: E402
from textgyms.stats import aggregate  # noqa: E402

LABELS = {"oracle": "oracle", "grpo": "SFT + GRPO", "sft": "SFT", "smollm2":
          "SmolLM2-135M-Instruct, untrained", "blind": "blind (best constant sequence)",
          "random": "random"}
#: (better, worse) pairs the demo must separate with disjoint 95% intervals.
ORDERINGS = (("grpo", "sft"), ("sft", "smollm2"), ("grpo", "blind"))


@dataclass
class Args:
    """The eval directory, the run prefix and where to write (see :func:`parse`)."""

    eval_dir: str
    prefix: str = "search-"
    out: str = ""


def parse(argv: list[str] | None = None) -> Args:
    """``EVAL_DIR [--prefix P] [--out FILE]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("eval_dir", help="the directory holding the demo's eval runs")
    p.add_argument("--prefix", default="search-",
                   help="run directories named PREFIX<policy> (oracle, random, blind, ...)")
    p.add_argument("--out", default="", help="write the Markdown here as well as to stdout")
    return Args(**vars(p.parse_args(argv)))


def rows_of(eval_dir: Path, prefix: str) -> dict[str, tuple[dict, list[dict]]]:
    """Per policy key (the directory name without the prefix): its aggregate and rows."""
    out = {}
    for d in run_dirs([eval_dir]):
        if not d.name.startswith(prefix):
            continue
        rows = load_results(d)
        agg = aggregate(rows)
        if len(agg) == 1:
            out[d.name[len(prefix):]] = (next(iter(agg.values())), rows)
    return out


def interval(a: dict) -> tuple[float, float]:
    """The 95% interval of the mean score."""
    return a["score"] - a["score_ci95"], a["score"] + a["score_ci95"]


def table(runs: dict[str, tuple[dict, list[dict]]]) -> str:
    """The Markdown table, best score first."""
    lines = ["| policy | episodes | score ± 95% CI | 95% interval | solved | invalid / episode | "
             "feedback use |", "|---|---|---|---|---|---|---|"]
    for key, (a, _) in sorted(runs.items(), key=lambda kv: -kv[1][0]["score"]):
        lo, hi = interval(a)
        use = ", ".join(f"{k} {v['mean']:.2f}" for k, v in a.get("use", {}).items()
                        if k != "repeats") or "—"
        lines.append(f"| {LABELS.get(key, key)} | {a['n']} | "
                     f"{a['score']:.3f} ± {a['score_ci95']:.3f} | "
                     f"[{lo:.3f}, {hi:.3f}] | {a['solve_rate']:.1%} | {a['invalid']:.2f} | "
                     f"{use} |")
    return "\n".join(lines)


def orderings(runs: dict[str, tuple[dict, list[dict]]]) -> list[str]:
    """One line per required ordering: holds (disjoint intervals) or not."""
    out = []
    for better, worse in ORDERINGS:
        if better not in runs or worse not in runs:
            out.append(f"- {better} > {worse}: not measured (run missing)")
            continue
        lo = interval(runs[better][0])[0]
        hi = interval(runs[worse][0])[1]
        verdict = "holds" if lo > hi else "does NOT hold"
        out.append(f"- {LABELS[better]} > {LABELS[worse]} with disjoint 95% intervals: "
                   f"{verdict} ({lo:.3f} vs {hi:.3f})")
    return out


def transcript(rows: list[dict]) -> str:
    """The first won episode as a fenced transcript (observations and actions in turn)."""
    won = sorted((r for r in rows if r.get("solved")), key=lambda r: r["episode"])
    if not won:
        return "(no won episode)"
    r = won[0]
    parts = [f"test episode {r['episode']} (seed {r['seed']}), score {r['score']:.2f}:", "",
             "```text", f"[env] {r['observations'][0].strip()}"]
    for action, obs in zip(r["actions"], r["observations"][1:]):
        parts += [f"[agent] {action.strip()}", f"[env] {str(obs).strip()}"]
    return "\n".join([*parts, "```"])


def main(args: Args) -> str:
    """Build and print (and with ``--out`` write) the table, orderings and transcript."""
    runs = rows_of(Path(args.eval_dir), args.prefix)
    text = "\n\n".join([table(runs), "\n".join(orderings(runs)),
                        transcript(runs["grpo"][1]) if "grpo" in runs else ""]).strip() + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main(parse())
