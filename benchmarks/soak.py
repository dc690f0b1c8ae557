"""Soak test: many random-policy episodes per env through the multiprocessing backend.

For every registered ``textgyms/*`` id, the script plays ``--episodes`` episodes with
``textgyms.make_vec(id, num_envs, backend="multiprocessing")`` and
``ScriptedPolicy("random")``, and samples about ``--samples`` times per env:

- resident memory (RSS) of the main process, of the vector workers (sum and max) and of the whole
  process tree (main + every descendant: workers, the fork server, sandbox servers);
- open file descriptors (``/proc/<pid>/fd``) of the main process, of the workers and of the tree;
- thread count of the main process and of the tree;
- episodes per second in the window since the previous sample.

Verdict per env, after a warm-up (the first ``--warmup`` fraction of the episodes):

- ``rss``: the tree's RSS grows by at most ``max(--rss-bound-mb, --rss-bound-frac * RSS)``
  between the first post-warm-up sample and the last one, and the largest post-warm-up sample
  is within the same bound;
- ``fds``: after the warm-up, the open fds of the main process and the workers take one value,
  and the tree's stay within ``--jitter`` of each other (Code's sandbox forks its next child
  asynchronously, so a sample may catch one in the middle; a leak leaves the band);
- ``threads``: the tree's thread count stays within ``--jitter`` after the warm-up;
- ``throughput``: the last window's episodes/s is at least the median window divided by
  ``--throughput-factor`` (the machine may be shared, so the factor is generous).

``benchmarks/results/soak.json`` is rewritten after every sample, so an interrupted run keeps
the data gathered so far. ``make soak`` runs it with the defaults (100,000 episodes per env, one
env after the other); ``--parallel`` runs one process per env at once, ``--envs`` a subset (the
other envs' records in the file are kept), ``--table`` prints the file as a Markdown table and
``--rejudge`` recomputes its verdicts with new bounds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from tqdm import tqdm

import textgyms
from textgyms.policies.scripted import ScriptedPolicy

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "soak.json"
MB = 1024 * 1024


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see ``--help``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=100_000, help="episodes per env")
    p.add_argument("--envs", default="all", help="comma-separated ids (or 'all': the registry)")
    p.add_argument("--num-envs", type=int, default=8, help="envs in the vector")
    p.add_argument("--num-workers", type=int, default=2, help="worker processes")
    p.add_argument("--samples", type=int, default=50, help="samples per env (about)")
    p.add_argument("--seed", type=int, default=0, help="reset seed and random-policy seed")
    p.add_argument("--warmup", type=float, default=0.10, help="warm-up fraction of episodes")
    p.add_argument("--rss-bound-mb", type=float, default=50.0, help="allowed RSS growth, MB")
    p.add_argument("--rss-bound-frac", type=float, default=0.10, help="or this fraction of RSS")
    p.add_argument("--jitter", type=int, default=4, help="allowed fd/thread jitter (tree)")
    p.add_argument("--throughput-factor", type=float, default=3.0, help="last vs median window")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--parallel", action="store_true", help="one process per env, all at once")
    p.add_argument("--table", action="store_true", help="print --out as a Markdown table; no run")
    p.add_argument(
        "--rejudge", action="store_true", help="recompute the verdicts in --out with the bounds "
        "given now, write them back and print the table; no run"
    )
    args = p.parse_args(argv)
    if args.episodes < 1 or args.samples < 2:
        p.error("--episodes must be >= 1 and --samples >= 2")
    return args


# ----------------------------------------------------------------------------------------------
# Sampling the process tree.


def _proc_stats(proc: psutil.Process) -> tuple[int, int, int]:
    """(rss bytes, open fds, threads) of one process; zeros if it has gone away meanwhile."""
    try:
        with proc.oneshot():
            return proc.memory_info().rss, proc.num_fds(), proc.num_threads()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return 0, 0, 0


def sample_tree(worker_pids: list[int]) -> dict[str, Any]:
    """RSS, fds and threads of this process, of the vector workers and of the whole tree."""
    me = psutil.Process()
    main = _proc_stats(me)
    workers = [_proc_stats(psutil.Process(pid)) for pid in worker_pids]
    try:
        others = me.children(recursive=True)
    except psutil.NoSuchProcess:
        others = []
    tree = [main] + [_proc_stats(p) for p in others]
    return {
        "rss_main_mb": round(main[0] / MB, 2),
        "rss_workers_sum_mb": round(sum(w[0] for w in workers) / MB, 2),
        "rss_workers_max_mb": round(max((w[0] for w in workers), default=0) / MB, 2),
        "rss_tree_mb": round(sum(t[0] for t in tree) / MB, 2),
        "fds_main": main[1],
        "fds_workers": sum(w[1] for w in workers),
        "fds_tree": sum(t[1] for t in tree),
        "threads_main": main[2],
        "threads_tree": sum(t[2] for t in tree),
        "processes_tree": len(tree),
    }


# ----------------------------------------------------------------------------------------------
# Playing one env.


def soak_env(env_id: str, args: argparse.Namespace, on_sample: Any) -> dict[str, Any]:
    """Play ``args.episodes`` episodes of ``env_id``; return its series and summary."""
    every = max(1, args.episodes // args.samples)
    series: list[dict[str, Any]] = []
    policy = ScriptedPolicy("random", seed=args.seed)
    episodes = steps = 0
    reward_sum = 0.0
    t0 = time.perf_counter()
    with textgyms.make_vec(
        env_id, args.num_envs, backend="multiprocessing", num_workers=args.num_workers
    ) as vec:
        obs, infos = vec.reset(seed=args.seed)
        series.append({"episodes": 0, "elapsed_s": 0.0, **sample_tree(vec.worker_pids)})
        bar = tqdm(total=args.episodes, desc=env_id, unit="ep", disable=args.no_progress)
        last_t, last_ep, next_mark = time.perf_counter(), 0, every
        while episodes < args.episodes:
            actions = policy.act(obs, infos, envs=vec)
            obs, rewards, terminated, truncated, infos = vec.step(actions)
            done = np.logical_or(terminated, truncated)
            steps += len(actions)
            finished = int(done.sum())
            reward_sum += float(np.asarray(rewards)[done].sum())
            episodes += finished
            bar.update(finished)
            if episodes >= next_mark or episodes >= args.episodes:
                now = time.perf_counter()
                point = {"episodes": episodes, "elapsed_s": round(now - t0, 2)}
                point["eps_per_s"] = round((episodes - last_ep) / max(now - last_t, 1e-9), 2)
                point.update(sample_tree(vec.worker_pids))
                series.append(point)
                last_t, last_ep = now, episodes
                next_mark = (episodes // every + 1) * every
                on_sample(_partial(env_id, series, steps, reward_sum, args))
        bar.close()
    wall = time.perf_counter() - t0
    result = _partial(env_id, series, steps, reward_sum, args)
    result.update(done=True, wall_s=round(wall, 1), eps_per_s=round(episodes / wall, 2))
    result["verdict"] = verdict(series, args)
    return result


def _partial(
    env_id: str, series: list[dict[str, Any]], steps: int, reward_sum: float, ns: Any
) -> dict[str, Any]:
    """The env's record so far (rewritten at every sample, so a killed run keeps its data)."""
    episodes = series[-1]["episodes"]
    return {
        "env_id": env_id,
        "episodes_target": ns.episodes,
        "episodes": episodes,
        "steps": steps,
        "mean_return": round(reward_sum / episodes, 4) if episodes else None,
        "done": False,
        "series": series,
    }


# ----------------------------------------------------------------------------------------------
# Verdict.


def verdict(series: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """Check the documented bounds on the post-warm-up samples (see the module docstring)."""
    target = series[-1]["episodes"]
    post = [s for s in series[1:] if s["episodes"] >= args.warmup * target]
    if len(post) < 2:
        return {"ok": False, "reason": "fewer than 2 samples after the warm-up"}
    base, last = post[0]["rss_tree_mb"], post[-1]["rss_tree_mb"]
    bound = max(args.rss_bound_mb, args.rss_bound_frac * base)
    growth = last - base
    peak_growth = max(s["rss_tree_mb"] for s in post) - base
    ours = sorted({s["fds_main"] + s["fds_workers"] for s in post})
    fds = [s["fds_tree"] for s in post]
    threads = [s["threads_tree"] for s in post]
    rates = [s["eps_per_s"] for s in post]
    median = statistics.median(rates)
    checks = {
        "rss": growth <= bound and peak_growth <= bound,
        "fds": len(ours) == 1 and _steady(fds, args.jitter),
        "threads": _steady(threads, args.jitter),
        "throughput": rates[-1] >= median / args.throughput_factor,
    }
    return {
        "ok": all(checks.values()),
        "checks": checks,
        "rss_tree_after_warmup_mb": base,
        "rss_tree_end_mb": last,
        "rss_growth_mb": round(growth, 2),
        "rss_peak_growth_mb": round(peak_growth, 2),
        "rss_bound_mb": round(bound, 2),
        "fds_main_and_workers_after_warmup": ours,
        "fds_after_warmup": sorted(set(fds)),
        "threads_after_warmup": sorted(set(threads)),
        "eps_per_s_median": median,
        "eps_per_s_last": rates[-1],
        "eps_per_s_min": min(rates),
        "eps_per_s_max": max(rates),
    }


def _steady(values: list[int], jitter: int) -> bool:
    """No drift: all values within ``jitter`` of each other. Processes the envs start on
    their own (Code's sandbox forks its next child ahead, asynchronously) can be caught
    mid-fork by a sample; a leak instead grows without bound and leaves the band."""
    return max(values) - min(values) <= jitter


# ----------------------------------------------------------------------------------------------
# Output.


def machine_info() -> dict[str, Any]:
    """Where the run happened: the numbers mean little without it."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "memory_total_mb": round(psutil.virtual_memory().total / MB),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "textgyms": textgyms.__version__,
    }


def merge_json(path: Path, top: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    """Merge ``top`` and one env's ``record`` into the results file, under a lock.

    Several soak processes (``--parallel``) share one file, and a run over a subset of the ids
    keeps the other envs' earlier records. The write is atomic: a reader never sees half a file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(path.parent, os.O_RDONLY)  # the directory is the lock: no stray lock file
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            doc = json.loads(path.read_text()) if path.exists() else {}
        except json.JSONDecodeError:
            doc = {}
        doc.update(top)
        doc.setdefault("envs", {})
        if record is not None:
            doc["envs"][record["env_id"]] = record
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        os.replace(tmp, path)
    finally:
        os.close(lock)  # closing releases the lock
    return doc


def markdown_table(doc: dict[str, Any], args: argparse.Namespace) -> str:
    """One row per env of a results file; an unfinished env is judged on its samples so far."""
    rows = [
        "| env | episodes | episodes/s | RSS after warm-up -> end (MB) | growth (bound) "
        "| fds | threads | verdict |",
        "|---|---:|---:|---|---|---:|---:|---|",
    ]
    for env_id, rec in sorted(doc.get("envs", {}).items()):
        series = rec["series"]
        v = verdict(series, args)  # judged again: the bounds are the ones given now
        if "checks" not in v:
            rows.append(f"| {env_id} | {rec['episodes']:,} | | | | | | {v['reason']} |")
            continue
        rate = rec.get("eps_per_s") or round(rec["episodes"] / max(series[-1]["elapsed_s"], 1), 2)
        status = "ok" if v["ok"] else "FAIL: " + ", ".join(k for k, ok in v["checks"].items()
                                                          if not ok)
        done = "" if rec.get("done") else f" of {rec['episodes_target']:,} (running)"
        rows.append(
            f"| {env_id} | {rec['episodes']:,}{done} | {rate} "
            f"| {v['rss_tree_after_warmup_mb']} -> {v['rss_tree_end_mb']} "
            f"| {v['rss_growth_mb']:+} ({v['rss_bound_mb']}) "
            f"| {'/'.join(map(str, v['fds_after_warmup']))} "
            f"| {'/'.join(map(str, v['threads_after_warmup']))} | {status} |"
        )
    return "\n".join(rows)


def _drop_option(argv: list[str], name: str) -> list[str]:
    """``argv`` without ``name VALUE`` / ``name=VALUE``."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == name:
            skip = True
        elif not a.startswith(name + "="):
            out.append(a)
    return out


def run_parallel(ids: list[str], argv: list[str]) -> int:
    """One soak process per env, all at once: the runs are mostly waiting on pipes, so envs
    overlap well even on few cores, and every env has data early in a long run."""
    rest = [a for a in argv if a != "--parallel"]
    procs = [
        subprocess.Popen([sys.executable, __file__, *rest, "--envs", env_id, "--no-progress"])
        for env_id in ids
    ]
    return max(p.wait() for p in procs)


def main(argv: list[str] | None = None) -> int:
    """Soak every selected env in turn; exit status 1 if any verdict fails."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    ids = textgyms.env_ids() if args.envs == "all" else args.envs.split(",")
    if args.rejudge:
        doc = json.loads(args.out.read_text())
        for record in doc.get("envs", {}).values():
            if record.get("done"):
                merge_json(args.out, {}, {**record, "verdict": verdict(record["series"], args)})
    if args.table or args.rejudge:
        print(markdown_table(json.loads(args.out.read_text()), args))
        return 0
    if args.parallel and len(ids) > 1:
        return run_parallel(ids, _drop_option(argv, "--envs"))
    top = {"machine": machine_info()}
    config = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    failed = False
    for env_id in ids:
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

        def on_sample(record: dict[str, Any], started: str = started) -> None:
            merge_json(args.out, top, {**record, "started": started, "config": config})

        record = soak_env(env_id, args, on_sample)
        record["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        on_sample(record)
        v = record["verdict"]
        failed |= not v["ok"]
        print(f"{env_id}: {'ok' if v['ok'] else 'FAIL'} {json.dumps(v)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
