"""Reset-ahead: does drawing the next tasks during the model's turn shorten a turn's env side?
(results: results/reset_ahead.json and results/reset_ahead.md).

The multiprocessing (and Ray) backend's workers draw each env's next task while they wait for
actions (``make_vec(..., reset_ahead=True)``, the default), so an autoreset only looks its task
up (``--backend ray`` measures Ray actors instead of worker processes).
For every family of ``bench_rollout.py`` and its mixture, W workers (default
``min(16, usable cores)``) and 16 envs per worker run ``make_vec(id, envs,
backend="multiprocessing", num_workers=W, reset_ahead=off/on)``, with a *model-turn gap*
(``time.sleep(gap)``) before every step: the time the GPU spends on the model's turn, which is
the workers' idle time. Reported per family and gap: the median ``vec.step`` wall time (the
env side of a turn, same-step autoresets included) with reset-ahead off and on, and off / on.
Next to it, per family, one env's costs in this process (medians over new seeds): a
``reset(seed)`` that draws its task, ``pregenerate(seed)``, and a ``reset(seed)`` that finds its
task drawn, which bound what reset-ahead can move off a step.

The actions are the oracle's (``ScriptedPolicy("oracle")``): played once, untimed, on a
``serial`` vector with the same seed, and replayed by every timed run, so no planning call
gives the workers idle time that the gap does not account for (at gap 0 they have none).
Off and on runs alternate (off, on, off, on, ...) and the step times of each setting are
pooled before the median, because a shared machine's load drifts. Every run folds each step's
observations, rewards, terminated and truncated flags and task ids into a sha256 digest: the
off, on and serial digests must be equal (the "same results" evidence); the script exits 1 if
they are not.

    .venv/bin/python benchmarks/bench_reset_ahead.py [--gaps 0 50 200] [--steps 12] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rollout import FAMILIES, MIXTURE  # noqa: E402

from textgyms.core import TASK_ID  # noqa: E402
from textgyms.cpus import usable_cpus  # noqa: E402
from textgyms.policies import ScriptedPolicy  # noqa: E402
from textgyms.vector import make_vec  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 0
ENVS_PER_WORKER = 16


class Digest:
    """A sha256 over every batch a run sees (observations, rewards, flags, task ids)."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def add(self, obs: Any, infos: Any, rewards: Any = (), terminated: Any = (),
            truncated: Any = ()) -> None:
        """Fold one batch in (a reset has no rewards or flags)."""
        row = [list(obs), np.asarray(rewards, dtype=float).tolist(),
               np.asarray(terminated, dtype=bool).tolist(),
               np.asarray(truncated, dtype=bool).tolist(),
               [info.get(TASK_ID) for info in infos]]
        self._h.update(json.dumps(row).encode())

    def hexdigest(self) -> str:
        """The digest so far, in hex."""
        return self._h.hexdigest()


def oracle_script(env_id: str, envs: int, steps: int) -> tuple[list[list[str]], str]:
    """The oracle's actions for ``steps`` steps of ``envs`` envs from ``reset(seed=SEED)``,
    played on a serial vector (untimed), and that run's digest."""
    vec = make_vec(env_id, envs, backend="serial")
    policy, digest, plan = ScriptedPolicy("oracle"), Digest(), []
    try:
        obs, infos = vec.reset(seed=SEED)
        digest.add(obs, infos)
        for _ in range(steps):
            actions = policy.act(obs, infos, envs=vec)
            plan.append(actions)
            obs, rewards, terminated, truncated, infos = vec.step(actions)
            digest.add(obs, infos, rewards, terminated, truncated)
    finally:
        vec.close()
    return plan, digest.hexdigest()


def timed_run(env_id: str, workers: int, gap_s: float, plan: list[list[str]],
              ahead: bool, backend: str = "multiprocessing") -> tuple[list[float], str]:
    """Seconds of each ``vec.step`` of one run (``backend``: multiprocessing or ray) replaying
    ``plan`` with ``gap_s`` of sleep (the model's turn) before each step, and its digest."""
    vec = make_vec(env_id, len(plan[0]), backend=backend, num_workers=workers,
                   reset_ahead=ahead)
    digest, times = Digest(), []
    try:
        vec.reset(seed=SEED + 1)  # warm: workers started, imports and caches paid
        obs, infos = vec.reset(seed=SEED)
        digest.add(obs, infos)
        for actions in plan:
            time.sleep(gap_s)
            t0 = time.perf_counter()
            obs, rewards, terminated, truncated, infos = vec.step(actions)
            times.append(time.perf_counter() - t0)
            digest.add(obs, infos, rewards, terminated, truncated)
    finally:
        vec.close()
    return times, digest.hexdigest()


def measure(name: str, env_id: str, plan: list[list[str]], serial_digest: str, workers: int,
            gap_ms: float, pairs: int, backend: str = "multiprocessing") -> dict[str, Any]:
    """One family at one gap: ``pairs`` alternating (off, on) runs, medians of pooled steps."""
    times: dict[bool, list[float]] = {False: [], True: []}
    runs: dict[bool, list[float]] = {False: [], True: []}
    digests: dict[bool, set[str]] = {False: set(), True: set()}
    for _ in range(pairs):
        for ahead in (False, True):
            t, d = timed_run(env_id, workers, gap_ms / 1e3, plan, ahead, backend)
            times[ahead] += t
            runs[ahead].append(round(statistics.median(t) * 1e3, 3))
            digests[ahead].add(d)
    off, on = statistics.median(times[False]), statistics.median(times[True])
    equal = digests[False] == digests[True] == {serial_digest}
    return {
        "family": name, "env_id": env_id, "gap_ms": gap_ms, "envs": len(plan[0]),
        "workers": workers, "steps": len(plan), "pairs": pairs,
        "step_ms_off": round(off * 1e3, 3), "step_ms_on": round(on * 1e3, 3),
        "ratio_off_on": round(off / on, 3) if on > 0 else None,
        "run_medians_ms_off": runs[False], "run_medians_ms_on": runs[True],
        "digest_off": sorted(digests[False]), "digest_on": sorted(digests[True]),
        "digest_serial": serial_digest, "digests_equal": equal,
    }


COSTS = ("reset_us", "pregenerate_us", "reset_with_task_drawn_us", "first_step_us",
         "first_step_drawn_us")


def reset_costs(env_id: str, n: int) -> dict[str, float]:
    """Median µs, in this process, of one env's ``reset(seed)`` drawing its task, of
    ``pregenerate(seed)`` with ``warm_pregenerated()`` and of a ``reset(seed)`` that finds its
    task drawn: what reset-ahead moves off the step (the first minus the last) and what it
    spends while the worker waits.
    Also the first step after each of the two resets (a ``sample_action``, for NetConfig an
    inspection, drawn by the same generator for both): what a family's ``warm`` moves off it."""
    env = gym.make(env_id).unwrapped
    times: dict[str, list[float]] = {k: [] for k in COSTS}
    clock = time.perf_counter
    try:
        env.reset(seed=SEED)  # warm: first-use caches paid
        for i in range(n):
            for ahead in (False, True):
                seed = (2_000_000 if ahead else 1_000_000) + i
                t0 = clock()
                if ahead:
                    env.pregenerate(seed)
                    env.warm_pregenerated()
                t1 = clock()
                env.reset(seed=seed)
                t2 = clock()
                action = env.sample_action(np.random.default_rng([SEED, i]))
                t3 = clock()
                env.step(action)
                t4 = clock()
                if ahead:
                    times["pregenerate_us"].append(t1 - t0)
                times["reset_with_task_drawn_us" if ahead else "reset_us"].append(t2 - t1)
                times["first_step_drawn_us" if ahead else "first_step_us"].append(t4 - t3)
    finally:
        env.close()
    return {**{k: round(statistics.median(v) * 1e6, 1) for k, v in times.items()}, "n": n}


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every selected family and the mixture at every gap; each family's reset costs."""
    ids = {**FAMILIES, "mixture": MIXTURE}
    if args.only:
        ids = {k: v for k, v in ids.items() if k in args.only}
    rows, costs = [], {}
    for name, env_id in ids.items():
        if name in FAMILIES:  # the mixture's resets are its entries' resets
            costs[name] = reset_costs(env_id, args.resets)
        plan, serial_digest = oracle_script(env_id, args.envs, args.steps)
        for gap in args.gaps:
            print(f"{name} gap {gap:g} ms ...", file=sys.stderr, flush=True)
            rows.append(measure(name, env_id, plan, serial_digest, args.workers, gap,
                                args.pairs, args.backend))
    return rows, costs


def markdown(result: dict[str, Any]) -> str:
    """The table of results/reset_ahead.md."""
    m, s = result["machine"], result["settings"]
    lines = ["| family | model-turn gap, ms | vec.step ms, reset-ahead off | on | off / on "
             "| same results |", "|---|---:|---:|---:|---:|---|"]
    for r in result["rows"]:
        ratio = "n/a" if r["ratio_off_on"] is None else f"{r['ratio_off_on']:.2f}×"
        lines.append(f"| {r['family']} | {r['gap_ms']:g} | {r['step_ms_off']:,.1f} "
                     f"| {r['step_ms_on']:,.1f} | {ratio} "
                     f"| {'yes' if r['digests_equal'] else 'NO'} |")
    backend = s.get("backend", "multiprocessing")
    lines += ["", f"{s['envs']} envs, {s['workers']} workers (`{backend}`), the oracle's "
              f"actions replayed, {s['steps']} steps per run, {s['pairs']} (off, on) pairs of "
              f"runs, median of the pooled `vec.step` times; same results: the sha256 of every "
              f"batch equal off, on and on a `serial` vector. {m['cpu']}, {m['cores']} cores "
              f"({m['usable_cpus']} usable), Python {m['python']}, load average "
              f"{m['load_avg_start'][0]:.1f} at the start, {m['load_avg_end'][0]:.1f} at the "
              f"end, {m['date']}."]
    if result["reset_costs"]:
        lines += ["", "| family | reset, µs | pregenerate and warm, µs "
                  "| reset with its task drawn, µs | first step after a reset, µs "
                  "| after a reset with its task drawn, µs |",
                  "|---|---:|---:|---:|---:|---:|"]
        for fam, c in result["reset_costs"].items():
            lines.append("| " + " | ".join([fam, *(f"{c[k]:,.1f}" for k in COSTS)]) + " |")
        lines += ["", f"One env in this process, medians of {s['resets']} resets with new seeds "
                  "each way; the first step is a `sample_action` (NetConfig: an inspection "
                  "tool), drawn by the same generator after either reset."]
    return "\n".join(lines) + "\n"


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, with the defaults that depend on this machine's cores filled in."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, help="default: min(16, usable cores)")
    p.add_argument("--envs", type=int, help=f"default: {ENVS_PER_WORKER} per worker")
    p.add_argument("--gaps", type=float, nargs="+", default=[0.0, 50.0, 200.0],
                   help="model-turn gaps in ms (default: 0 50 200)")
    p.add_argument("--steps", type=int, default=12, help="timed vec.steps per run")
    p.add_argument("--pairs", type=int, default=2, help="(off, on) pairs of runs per point")
    p.add_argument("--resets", type=int, default=50,
                   help="in-process resets per family for the reset costs")
    p.add_argument("--only", nargs="*", help="family names (and/or 'mixture')")
    p.add_argument("--backend", choices=["multiprocessing", "ray"], default="multiprocessing",
                   help="ray: actors of a local Ray instance (or the cluster RAY_ADDRESS names)")
    p.add_argument("--quick", action="store_true",
                   help="smoke: 4 envs per worker, 3 steps, gaps 0 and 100 ms, one pair, "
                        "10 resets")
    p.add_argument("--out", type=Path, default=RESULTS / "reset_ahead.json",
                   help="the JSON (the Markdown goes next to it as .md)")
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.gaps, args.pairs, args.resets = 3, [0.0, 100.0], 1, 10
    if args.workers is None:
        args.workers = min(16, usable_cpus())
    if args.envs is None:
        args.envs = (4 if args.quick else ENVS_PER_WORKER) * args.workers
    if min(args.workers, args.envs, args.steps, args.pairs, args.resets) < 1:
        p.error("--workers, --envs, --steps, --pairs and --resets must be >= 1")
    if min(args.gaps) < 0:
        p.error("--gaps must be >= 0 ms")
    unknown = sorted(set(args.only or ()) - {*FAMILIES, "mixture"})
    if unknown:
        p.error(f"--only: unknown {unknown}; choose from {[*FAMILIES, 'mixture']}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, write the JSON and the Markdown, print the table; 1 if any run's
    results differed between reset-ahead off and on."""
    args = parse_args(argv)
    load_start = list(os.getloadavg())
    rows, costs = run(args)
    result = {
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(), "usable_cpus": usable_cpus(),
                    "python": platform.python_version(), "load_avg_start": load_start,
                    "load_avg_end": list(os.getloadavg()), "date": time.strftime("%F %T %Z")},
        "settings": {"envs": args.envs, "workers": args.workers, "gaps_ms": args.gaps,
                     "backend": args.backend,
                     "steps": args.steps, "pairs": args.pairs, "resets": args.resets,
                     "seed": SEED, "quick": args.quick,
                     "policy": "ScriptedPolicy('oracle') on a serial vector, replayed (untimed)"},
        "rows": rows, "reset_costs": costs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    table = markdown(result)
    args.out.with_suffix(".md").write_text(table)
    print(table)
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    if not all(r["digests_equal"] for r in rows):
        print("RESULTS DIFFER between reset-ahead off and on (see the digests)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
