"""NetConfig's memos sized for the tasks in flight: a worker of N envs with reset-ahead, its
memos at their fixed base sizes against memos that grow with the distinct tasks its envs
have in flight (``make bench``; results: results/netconfig_memos.json and .md).

A vector's worker holds N NetConfig envs (the families and levels in turn) in GRPO groups of
G envs that play one seed (G = 1: a fresh seed per env and episode, no two envs share a
task) and plays agent episodes in lockstep, as its steps arrive: every env takes its first
look (``show ip route`` on its first device), then,
in the wait for the model's next turn, the worker draws every env's next task and warms it
(``pregenerate`` for each env, then ``warm_pregenerated`` for each, as the multiprocessing
backend's idle worker does), every env takes its two other tool steps
(``netconfig_speed._tools``), submits a wrong answer (``netconfig_speed._wrong``) and
resets to the task drawn for it. The memos must keep each warmed network and baseline until
its env's first look; at their base sizes they serve 64 distinct tasks in flight, the current
and next tasks of 32 envs (``bounded.TASKS_AT_BASE``).

Per case (N, G), each way runs in its own fresh subprocess ("fixed": the base sizes whatever
the tasks, as before ``bounded.MemoShare``; "grown": this checkout), the two alternated in
pairs.
Reported per way (medians over pairs): agent episodes per CPU-second on the critical path
(reset, three tool steps, the submission; the wait apart) and with the wait (all the env CPU
an episode takes; where a full collection of the cyclic garbage collector lands, in a step or
in the wait, moves CPU between the two), first looks per CPU-second, the
wait's CPU per env, the first looks that compiled their network again (the warmed one was
evicted), the collector's share of CPU, the objects it tracks after the run and the process's
peak resident memory. One untimed round first (its resets draw their own tasks).

    .venv/bin/python benchmarks/bench_netconfig_memos.py [--cases 32x1 64x1 256x8] [--quick]
    .venv/bin/python benchmarks/bench_netconfig_memos.py --worker 256 1 grown --collector off
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from netconfig_speed import ROOT, _CollectorClock, _tools, _wrong, in_subprocess  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
ENV_ID = "textgyms/NetConfig-v4"
WAYS = ("fixed", "grown")
CASES = ("32x1", "64x1", "128x1", "256x1", "64x8", "256x8")  # N envs x G envs per seed
SEEDS = 7_000_000
KINDS = ("agent", "first_tool", "wait")


def _round(envs: list, r: int, group: int, out: dict[str, float] | None,
           compiles: list[int]) -> tuple[int, int]:
    """One lockstep episode of every env (see the module docstring); adds the CPU seconds of
    each kind to ``out`` (None: untimed). Returns the first looks that compiled again and the
    networks memo's size in the wait (when every env holds two tasks)."""
    from textgyms.envs.netconfig import memo

    cpu = time.process_time
    spent = dict.fromkeys(KINDS, 0.0)
    again = 0
    actions = [_tools(env.task) for env in envs]
    for env, acts in zip(envs, actions):
        compiles[0] = 0
        t0 = cpu()
        env.step(acts[0])
        spent["first_tool"] += cpu() - t0
        again += compiles[0] > 0
    t0 = cpu()
    seeds = [SEEDS + 100_000 * (r + 1) + i // group for i in range(len(envs))]
    for env, seed in zip(envs, seeds):
        env.pregenerate(seed)
    for env in envs:
        env.warm_pregenerated()
    spent["wait"] += cpu() - t0
    size = memo.NETWORKS.size
    t0 = cpu()
    for env, acts in zip(envs, actions):
        env.step(acts[1])
        env.step(acts[2])
    for env in envs:
        _obs, _r, term, _tr, _info = env.step(_wrong(env.task))
        assert term
    for env, seed in zip(envs, seeds):
        env.reset(seed=seed)
    spent["agent"] += cpu() - t0 + spent["first_tool"]
    if out is not None:
        for kind, s in spent.items():
            out[kind] += s
    return again, size


def worker(n_envs: int, group: int, way: str, rounds: int, collector: str = "on") -> dict:
    """One way's worker of ``n_envs`` envs in groups of ``group`` (run in a fresh subprocess):
    ``rounds`` timed lockstep episodes after an untimed one. ``collector``: "off" disables the
    cyclic garbage collector after the untimed round, "freeze" calls ``gc.freeze()`` after
    every round (what the collector costs, as bounds: neither is safe to run for long)."""
    import textgyms
    from textgyms.envs.netconfig import bounded, memo

    compile_, collecting = memo._compile, gc.isenabled()
    # fixed: every memo stays at its base size whatever the tasks in flight
    base = bounded.set_tasks_at_base(10**9 if way == "fixed" else bounded.TASKS_AT_BASE)
    compiles = [0]

    def counting(*args, **kwargs):
        compiles[0] += 1
        return compile_(*args, **kwargs)

    memo._compile = counting
    try:
        res = _play(n_envs, group, rounds, collector, compiles)
    finally:  # (as it was: a test runs workers in its own process)
        bounded.set_tasks_at_base(base)
        memo._compile = compile_
        if collecting:
            gc.enable()
    return {"textgyms": textgyms.__file__, "envs": n_envs, "group": group, "way": way,
            "rounds": rounds, "collector": collector, **res}


def _play(n_envs: int, group: int, rounds: int, collector: str, compiles: list[int]) -> dict:
    """:func:`worker`'s envs and rounds, with ``compiles`` counting network compiles."""
    import gymnasium as gym

    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS

    cases = [(f, lvl) for f in FAMILIES for lvl in LEVELS]
    envs = [gym.make(ENV_ID, family=cases[i // group % len(cases)][0],
                     difficulty=cases[i // group % len(cases)][1]).unwrapped
            for i in range(n_envs)]
    for i, env in enumerate(envs):
        env.reset(seed=SEEDS + i // group)
    _round(envs, 0, group, None, compiles)
    if collector == "off":
        gc.disable()
    spent, again = dict.fromkeys(KINDS, 0.0), 0
    clock = _CollectorClock()
    t0 = time.process_time()
    for r in range(1, rounds + 1):
        n_again, size = _round(envs, r, group, spent, compiles)
        again += n_again
        if collector == "freeze":
            gc.freeze()
    share = clock.cpu / (time.process_time() - t0)
    clock.stop()
    episodes = n_envs * rounds
    return {"agent_per_cpu_s": episodes / spent["agent"],
            "all_in_per_cpu_s": episodes / (spent["agent"] + spent["wait"]),
            "first_tool_per_cpu_s": episodes / spent["first_tool"],
            "wait_ms_per_env": spent["wait"] * 1e3 / episodes,
            "compiled_again": again, "first_looks": episodes, "gc_share": share,
            "tracked": len(gc.get_objects()), "memo_size": size,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(cases: list[str], pairs: int, rounds: int) -> dict:
    """Every case ("NxG": N envs, G per seed), (fixed, grown) pairs of fresh subprocesses;
    medians per way."""
    res: dict = {"python": platform.python_version(), "machine": platform.machine(),
                 "pairs": pairs, "rounds": rounds, "cases": {}}
    for case in cases:
        n, group = (int(x) for x in case.split("x"))
        runs: dict[str, list[dict]] = {w: [] for w in WAYS}
        for p in range(pairs):
            for way in (WAYS if p % 2 == 0 else WAYS[::-1]):
                runs[way].append(in_subprocess(ROOT, __file__, [
                    "--worker", str(n), str(group), way, "--rounds", str(rounds)]))
        res["cases"][case] = {way: _summary(rs) for way, rs in runs.items()}
        print(f"{case}: " + json.dumps({w: {k: v for k, v in s.items() if k != "runs"}
                                        for w, s in res["cases"][case].items()}),
              file=sys.stderr)
    return res


def _summary(runs: list[dict]) -> dict:
    med = {k: statistics.median(r[k] for r in runs) for k in (
        "agent_per_cpu_s", "all_in_per_cpu_s", "first_tool_per_cpu_s", "wait_ms_per_env",
        "gc_share", "tracked", "peak_rss_mb")}
    return {**med, "compiled_again": sum(r["compiled_again"] for r in runs),
            "first_looks": sum(r["first_looks"] for r in runs), "memo_size": runs[0]["memo_size"],
            "runs": runs}


def render(res: dict) -> str:
    """The results table: one row per case and way, with grown / fixed ratios."""
    rows = [f"A worker of N NetConfig envs in groups of G per seed with reset-ahead, memos at "
            f"fixed base sizes against memos grown for the tasks in flight (medians of "
            f"{res['pairs']} fresh processes per way, {res['rounds']} lockstep episodes per env "
            f"each; Python {res['python']}, {res['machine']}):", "",
            "| envs x group | memos | networks memo size in the wait | first looks compiled "
            "again | agent episodes per CPU-s, critical path | with the wait | first looks "
            "per CPU-s | wait per env | collector share | tracked objects | peak RSS |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, ways in res["cases"].items():
        for way in WAYS:
            w = ways[way]
            rows.append(
                f"| {n} | {way} | {w['memo_size']:,} | {w['compiled_again']} of "
                f"{w['first_looks']} | {w['agent_per_cpu_s']:,.0f} | "
                f"{w['all_in_per_cpu_s']:,.0f} | {w['first_tool_per_cpu_s']:,.0f} | "
                f"{w['wait_ms_per_env']:.2f} ms | "
                f"{w['gc_share']:.0%} | {w['tracked']:,.0f} | {w['peak_rss_mb']:.0f} MB |")
        fixed, mine = ways["fixed"], ways["grown"]
        rows.append(
            f"| {n} | grown / fixed | | | "
            f"{mine['agent_per_cpu_s'] / fixed['agent_per_cpu_s']:.2f}x | "
            f"{mine['all_in_per_cpu_s'] / fixed['all_in_per_cpu_s']:.2f}x | "
            f"{mine['first_tool_per_cpu_s'] / fixed['first_tool_per_cpu_s']:.2f}x | | | | "
            f"{mine['peak_rss_mb'] / fixed['peak_rss_mb']:.2f}x |")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=list(CASES),
                    help="NxG: N envs per worker process, G envs per seed (default: "
                         f"{' '.join(CASES)})")
    ap.add_argument("--pairs", type=int, default=3, help="(fixed, grown) pairs per case")
    ap.add_argument("--rounds", type=int, default=6, help="timed lockstep episodes per env")
    ap.add_argument("--quick", action="store_true", help="one pair, one round, 64x1 and 64x8")
    ap.add_argument("--worker", nargs=3, metavar=("ENVS", "GROUP", "WAY"),
                    help="run one worker here (WAY: fixed or grown) and print its JSON")
    ap.add_argument("--collector", choices=("on", "off", "freeze"), default="on",
                    help="with --worker: the collector off, or gc.freeze() after every round")
    args = ap.parse_args()
    if args.worker:
        n, group, way = args.worker
        print(json.dumps(worker(int(n), int(group), way, args.rounds, args.collector)))
        return
    if args.quick:
        args.cases, args.pairs, args.rounds = ["64x1", "64x8"], 1, 1
    res = {"quick": args.quick, **measure(args.cases, args.pairs, args.rounds)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "netconfig_memos.json").write_text(json.dumps(res, indent=2) + "\n")
    (RESULTS / "netconfig_memos.md").write_text(render(res))
    print(render(res))


if __name__ == "__main__":
    main()
