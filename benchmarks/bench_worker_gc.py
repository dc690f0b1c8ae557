"""Garbage collection in the wait: does moving the cyclic collector out of a worker's commands
shorten a turn's env side? (results: results/worker_gc.json and results/worker_gc.md).

A multiprocessing worker runs Python's cyclic garbage collector after each reply, in the
model's turn, instead of wherever allocations trigger it (``TEXTGYMS_WORKER_GC=wait``, the
default; ``auto`` is CPython's automatic collection; see ``textgyms.vector.collector``).
For each case (N envs on W workers of a mixture of every NetConfig family and level, an
episode's entry picked by its seed) both ways run the same agent episodes: three
inspection tools (``netconfig_speed._tools``), then a wrong submission
(``netconfig_speed._wrong``: a line of the reference dropped), autoreset to the next task,
with reset-ahead on and ``gap`` ms of sleep before every step (the model's turn, when the
workers wait). The actions are planned once on a ``serial`` vector (untimed) and replayed.

Reported per way (auto and wait runs alternate): the median, mean and 90th percentile of the
pooled ``vec.step`` wall times (the env side of a turn as the trainer waits for it; the mean
sets the throughput), the workers' CPU per env step, wait included (from ``/proc``: all the
CPU the envs cost, wherever it lands) and their peak resident memory. Every run folds its
batches into a sha256 digest: both ways and the serial plan must agree (the script exits 1
if not).

    .venv/bin/python benchmarks/bench_worker_gc.py [--cases 16x1 64x1 256x1] [--gap 100] [--quick]
    .venv/bin/python benchmarks/bench_worker_gc.py --cases 256x1 --steps 60 --pairs 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reset_ahead import Digest, cpu_name  # noqa: E402
from netconfig_speed import _tools, _wrong  # noqa: E402

from textgyms.vector import make_vec  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
ENV_ID = "textgyms/NetConfig-v4"
WAYS = ("auto", "wait")
SEED = 11
TOOLS = 3  # inspection steps before the submission


def _mixture() -> list[dict[str, Any]]:
    """Every NetConfig family at every level, equally weighted."""
    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS

    return [{"id": ENV_ID, "kwargs": {"family": f, "difficulty": lvl}, "name": f"{f}-{lvl}"}
            for f in FAMILIES for lvl in LEVELS]


def _vec(n: int, workers: int, backend: str) -> Any:
    """N envs of the NetConfig mixture (each episode's family and level picked by its seed)."""
    return make_vec(_mixture(), n, backend=backend,
                    num_workers=None if backend == "serial" else workers)


def plan(n: int, steps: int) -> tuple[list[list[str]], str]:
    """The agent's actions for ``steps`` steps of ``n`` envs, played on a serial vector, and
    that run's digest."""
    vec = _vec(n, 1, "serial")
    digest, out = Digest(), []
    try:
        obs, infos = vec.reset(seed=SEED)
        digest.add(obs, infos)
        for _ in range(steps):
            actions = []
            for env, info in zip(vec.envs, infos):
                task = env.unwrapped.task
                turn = info["turn"]
                actions.append(_tools(task)[turn] if turn < TOOLS else _wrong(task))
            out.append(actions)
            obs, rewards, terminated, truncated, infos = vec.step(actions)
            digest.add(obs, infos, rewards, terminated, truncated)
    finally:
        vec.close()
    return out, digest.hexdigest()


def _cpu_s(pids: list[int]) -> float:
    """User and system CPU seconds of these processes so far (``/proc/PID/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


def _peak_rss_mb(pids: list[int]) -> float:
    """The largest peak resident memory of these processes, MB (``VmHWM``)."""
    peak = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]))
    return peak / 1024


def _worker_pids(vec: Any) -> list[int]:
    """The process ids of a vector's workers (multiprocessing) or actors (Ray, local)."""
    if hasattr(vec, "worker_pids"):
        return vec.worker_pids
    import ray

    return ray.get([actor.pid.remote() for actor in vec.actors])


def timed_run(way: str, workers: int, gap_s: float, actions: list[list[str]],
              backend: str = "multiprocessing") -> dict[str, Any]:
    """One run of ``actions`` with ``TEXTGYMS_WORKER_GC=way``: each step's wall seconds, the
    workers' CPU seconds over the steps (the waits included), their peak resident memory and
    the run's digest, and the 1-minute load average when it started (what else ran)."""
    load = os.getloadavg()[0]
    os.environ["TEXTGYMS_WORKER_GC"] = way
    vec = _vec(len(actions[0]), workers, backend)
    digest, times = Digest(), []
    try:
        pids = _worker_pids(vec)
        vec.reset(seed=SEED + 1)  # warm: workers started, imports and first uses paid
        obs, infos = vec.reset(seed=SEED)
        digest.add(obs, infos)
        cpu0 = _cpu_s(pids)
        for batch in actions:
            time.sleep(gap_s)
            t0 = time.perf_counter()
            obs, rewards, terminated, truncated, infos = vec.step(batch)
            times.append(time.perf_counter() - t0)
            digest.add(obs, infos, rewards, terminated, truncated)
        time.sleep(gap_s)  # the last reply's wait, as every other step had
        cpu = _cpu_s(pids) - cpu0
        rss = _peak_rss_mb(pids)
    finally:
        vec.close()
        os.environ.pop("TEXTGYMS_WORKER_GC", None)
    return {"times": times, "cpu_s": cpu, "peak_rss_mb": rss, "digest": digest.hexdigest(),
            "load_avg": load}


def measure(case: str, gap_ms: float, steps: int, pairs: int,
            backend: str = "multiprocessing") -> dict[str, Any]:
    """One case ("NxW": N envs on W workers): ``pairs`` alternating (auto, wait) runs."""
    n, workers = (int(x) for x in case.split("x"))
    actions, serial = plan(n, steps)
    runs: dict[str, list[dict]] = {w: [] for w in WAYS}
    for p in range(pairs):
        for way in (WAYS if p % 2 == 0 else WAYS[::-1]):
            print(f"{case} gap {gap_ms:g} ms: {way} run {p + 1} ...", file=sys.stderr, flush=True)
            runs[way].append(timed_run(way, workers, gap_ms / 1e3, actions, backend))
    row: dict[str, Any] = {"case": case, "backend": backend, "envs": n, "workers": workers,
                           "gap_ms": gap_ms,
                           "steps": steps, "pairs": pairs, "digest_serial": serial}
    for way, rs in runs.items():
        pooled = [t for r in rs for t in r["times"]]
        row[way] = {
            "step_ms": round(statistics.median(pooled) * 1e3, 2),
            "step_ms_mean": round(statistics.fmean(pooled) * 1e3, 2),
            "step_ms_p90": round(statistics.quantiles(pooled, n=10)[-1] * 1e3, 2),
            "cpu_ms_per_env_step": round(statistics.median(
                r["cpu_s"] / (n * steps) * 1e3 for r in rs), 3),
            "run_medians_ms": [round(statistics.median(r["times"]) * 1e3, 2) for r in rs],
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in rs), 1),
            "digests": sorted({r["digest"] for r in rs}),
            "load_avg_at_start": [round(r["load_avg"], 2) for r in rs],
        }
    row["step_ratio"] = round(row["auto"]["step_ms"] / row["wait"]["step_ms"], 3)
    row["mean_ratio"] = round(row["auto"]["step_ms_mean"] / row["wait"]["step_ms_mean"], 3)
    row["cpu_ratio"] = round(row["auto"]["cpu_ms_per_env_step"]
                             / row["wait"]["cpu_ms_per_env_step"], 3)
    row["same_results"] = row["auto"]["digests"] == row["wait"]["digests"] == [serial]
    return row


def markdown(res: dict[str, Any]) -> str:
    """The table of results/worker_gc.md."""
    lines = ["| envs x workers | gap, ms | vec.step ms, median, auto | wait | mean, auto | wait "
             "| auto / wait (mean) | p90, auto | wait | worker CPU ms per env step, auto | wait "
             "| auto / wait | peak RSS MB, auto | wait | same results |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in res["rows"]:
        a, w = r["auto"], r["wait"]
        lines.append(f"| {r['envs']} x {r['workers']} | {r['gap_ms']:g} | {a['step_ms']:,.1f} "
                     f"| {w['step_ms']:,.1f} | {a['step_ms_mean']:,.1f} | {w['step_ms_mean']:,.1f} "
                     f"| {r['mean_ratio']:.2f}x | {a['step_ms_p90']:,.1f} "
                     f"| {w['step_ms_p90']:,.1f} | {a['cpu_ms_per_env_step']:.3f} "
                     f"| {w['cpu_ms_per_env_step']:.3f} | {r['cpu_ratio']:.2f}x "
                     f"| {a['peak_rss_mb']:,.0f} | {w['peak_rss_mb']:,.0f} "
                     f"| {'yes' if r['same_results'] else 'NO'} |")
    m = res["machine"]
    loads = [x for r in res["rows"] for w in WAYS for x in r[w].get("load_avg_at_start", [])]
    load = f"; 1-minute load average at the runs' start {min(loads):.1f}-{max(loads):.1f}" \
        if loads else ""
    hosts = "Ray actors" if res.get("backend") == "ray" else "`multiprocessing` workers"
    lines += ["", f"NetConfig agent episodes on {hosts} (three inspection tools, a wrong "
              f"submission, autoreset; a mixture of every family and level), reset-ahead on, "
              f"the model's turn a sleep of the gap before each step; {res['steps']} steps per "
              f"run, {res['pairs']} (auto, wait) pairs of runs. vec.step: median, mean (which sets "
              f"the throughput) and 90th percentile of the pooled step times; worker CPU: the "
              f"median of the runs' CPU per env step, the wait included; peak RSS: the largest "
              f"worker's over the runs. {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
              f"{m['date']}{load}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write the results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=["16x1", "64x1", "256x1"],
                    help="NxW: N envs on W workers (default: 16x1 64x1 256x1)")
    ap.add_argument("--gap", type=float, default=100.0,
                    help="the model's turn before each step, ms (default 100)")
    ap.add_argument("--steps", type=int, default=48, help="timed steps per run (default 48)")
    ap.add_argument("--pairs", type=int, default=2, help="(auto, wait) pairs (default 2)")
    ap.add_argument("--backend", choices=("multiprocessing", "ray"), default="multiprocessing",
                    help="worker processes or Ray actors (a local Ray instance; default "
                         "multiprocessing)")
    ap.add_argument("--out", type=Path, default=RESULTS / "worker_gc.json",
                    help="the JSON to write; the table goes next to it as .md "
                         "(default: results/worker_gc.json)")
    ap.add_argument("--quick", action="store_true", help="16x1, 8 steps, 1 pair; no files")
    args = ap.parse_args(argv)
    if args.quick:
        args.cases, args.steps, args.pairs = ["16x1"], 8, 1
    rows = [measure(c, args.gap, args.steps, args.pairs, args.backend) for c in args.cases]
    res = {"rows": rows, "backend": args.backend, "steps": args.steps, "pairs": args.pairs,
           "machine": {"cpu": cpu_name(), "cores": os.cpu_count(),
                       "python": platform.python_version(),
                       "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}}
    table = markdown(res)
    print(table)
    if not args.quick:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=1) + "\n")
        args.out.with_suffix(".md").write_text(table)
    return 0 if all(r["same_results"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
