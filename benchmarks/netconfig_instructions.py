"""NetConfig resets and steps counted in machine instructions, old code against new.

CPU time on a shared machine moves by a third from round to round, and by more from day to
day (a full collection lands in whichever operation is allocating; a slower machine changes
the ratios of rows no commit touched). Instructions do not: each operation kind runs in its
own process under Valgrind's ``callgrind`` tool with ``PYTHONHASHSEED=0``, which counts the
instructions executed inside the measured operations only (collection is switched on and off
around each one by calling it through ``operator.call``, which nothing else in the measured
code calls), so a rerun gives the same count to within about 0.1 %. That makes a change of
a few percent measurable in one run, and the ratio of old to new a property of the code.

Each version (a ``git archive`` of the baseline commit, and this checkout) runs the same
operations on the same tasks as ``netconfig_speed.py`` (every family and level, the same
seeds, oracle and wrong submissions, tool and edit actions): resets of distinct seeds;
oracle and wrong submissions, each on a fresh task; an agent's first three tool steps;
its two edits; its look at the edited candidate. Reported per kind: instructions per
operation for each version, their ratio, and the share of them in the cyclic garbage
collector (``gc_collect_main``, from ``callgrind_annotate``).

Instructions are not time: a collector's pass over a large heap misses the caches on most
of its instructions, and the CPU-time ratios of ``netconfig_speed.py`` stay the target's
measure. This counts the work; the gap between the two is the memory's share.

Needs ``valgrind`` (Debian: ``apt-get install valgrind``); about 10 minutes on 2 cores.
Run: ``python benchmarks/netconfig_instructions.py [--rounds N] [--kinds reset,wrong]``.
Results go to ``benchmarks/results/netconfig_instructions.{json,md}``. With ``--by-family
--kinds KIND``, one kind is counted for each family in a process of its own (its memos hold
that family's tasks only), both versions, into ``netconfig_instructions_families.{json,md}``:
where the instructions of that kind are, and which families are furthest from the target.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import netconfig_speed as speed  # benchmarks/, next to this script

ROOT = speed.ROOT
RESULTS = ROOT / "benchmarks" / "results"
BASELINE, BASELINE_ID = speed.BASELINES[0]
KINDS = ("reset", "submit", "wrong", "tool", "edit", "after_edit")
NAMES = {"reset": "resets, distinct seeds", "submit": "oracle submission steps",
         "wrong": "wrong submission steps", "tool": "tool steps (the first three after a reset)",
         "edit": "edit steps (apply_config: two on the first device, after a look)",
         "after_edit": "looks after the edits (the edited candidate is compiled)"}
ROUNDS = 2  # rounds of fresh seeds over every family and level
# What every measured operation, and nothing inside one, is called through: operator.call
# (Python 3.11+), whose C function callgrind switches collection at.
MEASURE = getattr(operator, "call", None)
TOGGLE = "_operator_call"


def _plain(fn, *args, **kwargs):
    """A call that callgrind does not count (the warm-up's, in place of :data:`MEASURE`)."""
    return fn(*args, **kwargs)


def _edit_episode(env, seed: int, kind: str, measure) -> int:
    """An agent's look, two edits and the look again; measures the edits or the last look.
    How many operations it measured (none for the families graded on an answer)."""
    env.reset(seed=seed)
    edits = speed._edits(env.task)
    if not edits:
        return 0
    look = speed._tools(env.task)[0]
    env.step(look)
    for action in edits:
        if kind == "edit":
            measure(env.step, action)
        else:
            env.step(action)
    if kind == "after_edit":
        measure(env.step, look)
    return len(edits) if kind == "edit" else 1


def run_kind(env_id: str, kind: str, rounds: int, families: list[str] | None = None) -> dict:
    """Run ``kind``'s operations on every family and level (or ``families``), each measured
    one called through :data:`MEASURE`; how many it measured."""
    import gymnasium as gym

    import textgyms
    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS

    if MEASURE is None:
        raise RuntimeError("counting needs Python 3.11 or later (operator.call)")
    envs = [gym.make(env_id, family=f, difficulty=lvl).unwrapped
            for f in families or FAMILIES for lvl in LEVELS]
    # First uses (imports, regular expressions compiled when first needed) are no operation's
    # cost: each env plays one case of the kind uncounted first, on seeds no round uses. (A
    # reset alone left a step's first uses in the first measured step: a family counted in a
    # process of its own, diagnosis, came to 1.28M instructions a wrong submission over 2
    # rounds, against 0.28M over 20.)
    for k, env in enumerate(envs):
        _one_case(env, kind, 0, k, _plain)
    ops = 0
    for r in range(rounds):
        seed0 = 10_000 * (r + 1)
        for k, env in enumerate(envs):
            ops += _one_case(env, kind, seed0, k)
    return {"textgyms": textgyms.__file__, "kind": kind, "ops": ops, "cases": len(envs)}


def _one_case(env, kind: str, seed0: int, k: int, measure=None) -> int:
    """The measured operations of one case in one round, each called through ``measure``
    (:data:`MEASURE` by default); how many."""
    measure = MEASURE if measure is None else measure
    if kind == "reset":
        measure(env.reset, seed=seed0 + k)
        return 1
    if kind in ("submit", "wrong"):
        env.reset(seed=seed0 + k + (speed.WRONG_SEEDS if kind == "wrong" else 0))
        action = speed._wrong(env.task) if kind == "wrong" else env.solve(env.task)[-1]
        measure(env.step, action)
        return 1
    if kind == "tool":
        env.reset(seed=seed0 + speed.AGENT_SEEDS + k)
        actions = speed._tools(env.task)
        for action in actions:
            measure(env.step, action)
        return len(actions)
    return _edit_episode(env, seed0 + speed.EDIT_SEEDS + k, kind, measure)


def counted(tree: Path, env_id: str, kind: str, rounds: int, tmp: Path,
            families: list[str] | None = None) -> dict:
    """:func:`run_kind` on the ``textgyms`` under ``tree``, in a subprocess under callgrind:
    its result with the instructions measured (``ir``) and those in the collector (``gc_ir``)."""
    out = tmp / f"callgrind.{tree.name}.{kind}.{'-'.join(families or ['all'])}"
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={TOGGLE}",
           f"--callgrind-out-file={out}", sys.executable, str(Path(__file__).resolve()),
           "--worker", env_id, kind, "--rounds", str(rounds)]
    if families:
        cmd += ["--families", ",".join(families)]
    res, log = speed.run_in_tree(tree, cmd, {"PYTHONHASHSEED": "0"})
    res["ir"] = collected(log)
    res["gc_ir"] = collector_ir(out)
    out.unlink(missing_ok=True)
    return res


def collected(log: str) -> int:
    """The instructions callgrind collected, from its summary on stderr."""
    found = re.search(r"Collected\s*:\s*([\d,]+)", log)
    if found is None:
        raise RuntimeError(f"no callgrind summary in the worker's stderr:\n{log[-2000:]}")
    return int(found.group(1).replace(",", ""))


def collector_ir(path: Path) -> int:
    """Instructions inside the cyclic garbage collector (``gc_collect_main``, inclusive) in a
    callgrind output file; 0 when it never ran."""
    done = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(path)],
                          capture_output=True, text=True, check=True)
    found = re.search(r"^\s*([\d,]+) .*:gc_collect_main(?: |$)", done.stdout, re.M)
    return int(found.group(1).replace(",", "")) if found else 0


def _pairs(rounds: int, cases: list[tuple[str, str, list[str] | None]], jobs: int) -> dict:
    """:func:`counted` of each case (label, kind, families or None for all) on the baseline and
    this checkout, the two of a case at once: per label, both results and old / new."""
    with tempfile.TemporaryDirectory(prefix="netconfig-ir-") as name:
        tmp = Path(name)
        old = speed.export(BASELINE, tmp / BASELINE)
        tasks = [(case, tag, tree, env_id) for case in cases
                 for tag, tree, env_id in (("old", old, BASELINE_ID), ("new", ROOT, speed.NEW_ID))]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            done = list(pool.map(
                lambda t: counted(t[2], t[3], t[0][1], rounds, tmp, t[0][2]), tasks))
    out: dict = {}
    for ((label, _kind, _fams), tag, _tree, _id), got in zip(tasks, done):
        out.setdefault(label, {})[tag] = got
    for label, pair in out.items():
        if pair["old"]["ops"] != pair["new"]["ops"]:
            raise RuntimeError(f"{label}: {pair['old']['ops']} operations on the baseline, "
                               f"{pair['new']['ops']} on this checkout: not the same tasks")
        pair["ratio"] = pair["old"]["ir"] / pair["new"]["ir"]
    return out


def side_by_side(rounds: int, kinds: list[str], jobs: int) -> dict:
    """Every kind on the baseline and this checkout, over every family and level."""
    res: dict = {"baseline": BASELINE, "rounds": rounds, "python": platform.python_version(),
                 "machine": platform.machine()}
    res["kinds"] = _pairs(rounds, [(kind, kind, None) for kind in kinds], jobs)
    return res


def by_family(rounds: int, kind: str, jobs: int) -> dict:
    """``kind`` on the baseline and this checkout, each family counted in a process of its own
    (its three levels; the process holds that family's memos only)."""
    from textgyms.envs.netconfig.generate import FAMILIES

    res: dict = {"baseline": BASELINE, "rounds": rounds, "kind": kind,
                 "python": platform.python_version(), "machine": platform.machine()}
    res["families"] = _pairs(rounds, [(f, kind, [f]) for f in FAMILIES], jobs)
    return res


def render(res: dict) -> str:
    """The markdown table of :func:`side_by_side`'s result."""
    rows = [f"| instructions per operation (rounds: {res['rounds']}, every family and level) "
            f"| {res['baseline']} | new | {res['baseline']} / new "
            f"| in the collector: {res['baseline']} | new |", "|---|---:|---:|---:|---:|---:|"]
    for kind, pair in res["kinds"].items():
        old, new = pair["old"], pair["new"]
        rows.append(f"| {NAMES[kind]} | {old['ir'] / old['ops']:,.0f} "
                    f"| {new['ir'] / new['ops']:,.0f} | {pair['ratio']:.2f}x "
                    f"| {old['gc_ir'] / old['ir']:.1%} | {new['gc_ir'] / new['ir']:.1%} |")
    return "\n".join(rows) + "\n"


def render_families(res: dict) -> str:
    """The markdown table of :func:`by_family`'s result: families by this checkout's
    instructions per operation, most first, each with its share of their sum."""
    fams = res["families"]
    per = {f: (p["old"]["ir"] / p["old"]["ops"], p["new"]["ir"] / p["new"]["ops"], p["ratio"])
           for f, p in fams.items()}
    total_old, total_new = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    rows = [f"| {NAMES[res['kind']]}, instructions per operation (rounds: {res['rounds']}, "
            f"each family alone) | {res['baseline']} | new | {res['baseline']} / new "
            "| share of new |", "|---|---:|---:|---:|---:|"]
    for f, (old, new, ratio) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        rows.append(f"| `{f}` | {old:,.0f} | {new:,.0f} | {ratio:.2f}x "
                    f"| {new / total_new:.0%} |")
    rows.append(f"| every family (sums) | {total_old:,.0f} | {total_new:,.0f} "
                f"| {total_old / total_new:.2f}x | 100% |")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=ROUNDS,
                    help=f"rounds of fresh seeds per kind (default {ROUNDS})")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help=f"comma-separated, of: {', '.join(KINDS)}")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="workers under valgrind at once (default: 2, or 1 on one core)")
    ap.add_argument("--by-family", action="store_true",
                    help="count the one kind --kinds names for each family in a process of "
                         "its own (writes netconfig_instructions_families.{json,md})")
    ap.add_argument("--worker", nargs=2, metavar=("ENV_ID", "KIND"), help=argparse.SUPPRESS)
    ap.add_argument("--families", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        fams = [f for f in args.families.split(",") if f] or None
        print(json.dumps(run_kind(*args.worker, args.rounds, fams)))
        return
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = sorted(set(kinds) - set(KINDS))
    if bad:
        ap.error(f"unknown kinds {', '.join(bad)}; choose from {', '.join(KINDS)}")
    if args.by_family and len(kinds) != 1:
        ap.error("--by-family counts one kind: name it with --kinds (for example --kinds wrong)")
    missing = [t for t in ("valgrind", "callgrind_annotate") if shutil.which(t) is None]
    if missing:
        sys.exit(f"{' and '.join(missing)} not found: install valgrind "
                 "(Debian: apt-get install valgrind)")
    if args.by_family:
        res = by_family(args.rounds, kinds[0], args.jobs)
        name, table = "netconfig_instructions_families", render_families(res)
    else:
        res = side_by_side(args.rounds, kinds, args.jobs)
        name, table = "netconfig_instructions", render(res)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
