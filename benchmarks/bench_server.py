"""Load and overhead benchmark of ``textgyms serve`` (results: benchmarks/results/server.json, .md).

Load: for Wordle and for Search, one server (``--workers`` processes on one port) and N
concurrent WebSocket sessions (default 1,024; stock OpenEnv client, asyncio, one process), each
playing whole episodes with a scripted policy (the oracle's actions, with an invalid action
first in every other episode) for at least ``--seconds``; then Code with ``--code-sessions``
sessions (each Code run forks a sandboxed child, so the sandbox pool, not the socket count,
sets its size). Reported: p50/p99 step latency as the client sees it, steps/s, the RSS of the
server's whole process tree (workers and sandbox servers included) before and after, and the
episode audit: every transcript (observation text, info, reward, done and the
terminated/truncated flags of every step) is replayed on a local env with the same seed and
actions and must be byte-equal as JSON; lost (error or missing), duplicated or mismatched
episodes are counted.

Overhead: ``make_vec(backend="remote")`` against ``backend="serial"`` on this host, the same
seeds and actions, as the ratio of time per step.

    .venv/bin/python benchmarks/bench_server.py [--sessions 1024] [--seconds 60] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import textgyms  # noqa: F401  (registers the ids)
from textgyms.server import load_openenv
from textgyms.server.process import ServerProcess
from textgyms.vector import make_vec

RESULTS = Path(__file__).resolve().parent / "results"
ENVS = ("textgyms/Wordle-v0", "textgyms/Search-v1")
CODE = "textgyms/Code-v0"
JUNK = "I think the answer needs more thought."  # no tool call: an invalid turn


def plan(env: gym.Env, seed: int) -> list[str]:
    """The scripted policy, an invalid action first on odd seeds. Search: the oracle's actions.
    Wordle: "crane", then the secret (the Wordle oracle runs a solver, 30-130 ms a task, which
    would make the client's planning, not the server, the bottleneck of the load run)."""
    env.reset(seed=seed)
    task = env.unwrapped.task
    if hasattr(task, "secret"):
        actions = ["<guess>crane</guess>", f"<guess>{task.secret}</guess>"]
    else:
        actions = list(env.unwrapped.oracle_actions())
    return [JUNK, *actions] if seed % 2 else actions


def rss_kib(pid: int) -> int:
    """Resident set size of a process and all its descendants (VmRSS, KiB)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                kids = Path(f"/proc/{p}/task/{task}/children").read_text().split()
                todo += [int(c) for c in kids]
        except OSError:
            continue  # exited meanwhile
    return total


async def session(url: str, index: int, stride: int, out: dict) -> None:
    """One WebSocket session: open and warm up (its env's first reset), wait for every other
    session, then play whole episodes until the deadline."""
    from openenv.core.generic_client import GenericEnvClient

    planner = out["planner"]  # one local env per run: planning never awaits, so it is safe
    client = GenericEnvClient(base_url=url, connect_timeout_s=120, message_timeout_s=300)
    try:
        async with out["opening"]:  # a few handshakes at a time, as a trainer's pool would
            await client.connect()
            await client.reset(seed=stride * 1_000_000 + index)  # not a measured episode
        out["ready"] += 1
        await out["go"].wait()
        k = 0
        while time.monotonic() < out["deadline"]:
            seed = index + k * stride
            actions = plan(planner, seed)
            first = await client.reset(seed=seed)
            steps = [[first.observation, first.reward, first.done, first.metadata]]
            for action in actions:
                start = time.perf_counter()
                r = await client.step({"text": action})
                out["latencies"].append(time.perf_counter() - start)
                steps.append([r.observation, r.reward, r.done, r.metadata])
                if r.done:
                    break
            out["episodes"].append((seed, actions[: len(steps) - 1], json.dumps(steps)))
            k += 1
            await asyncio.sleep(0)  # let the other sessions in
    except Exception as exc:  # counted as a lost episode, never hidden
        out["errors"].append(f"session {index}: {type(exc).__name__}: {exc}")
    finally:
        await client.close()


def replay(env_id: str, episodes: list[tuple[int, list[str], str]]) -> int:
    """How many transcripts differ from a local serial replay of their seed and actions."""
    env, bad = gym.make(env_id), 0
    for seed, actions, transcript in episodes:
        obs, info = env.reset(seed=seed)
        meta = {"terminated": False, "truncated": False}
        # OpenEnv's observation dict: its own fields first (metadata), then ours (text, info).
        steps: list[Any] = [[{"metadata": meta, "text": obs, "info": info}, None, False, meta]]
        for action in actions:
            obs, reward, term, trunc, info = env.step(action)
            meta = {"terminated": term, "truncated": trunc}
            obs_dict = {"metadata": meta, "text": obs, "info": info}
            steps.append([obs_dict, reward, term or trunc, meta])
        bad += json.dumps(steps) != transcript
    env.close()
    return bad


def load(env_id: str, sessions: int, seconds: float, workers: int) -> dict[str, Any]:
    """The load run of one env id against one server (``workers`` processes)."""
    # Each worker may hold every session: the kernel's spread over workers is not exact.
    args = ["--max-sessions", str(sessions), "--workers", str(workers), "--idle-timeout", "3600"]
    with ServerProcess(env_id, args=args) as server:
        rss_before = rss_kib(server.pid)
        out: dict[str, Any] = {"latencies": [], "episodes": [], "errors": []}
        out["planner"] = gym.make(env_id)

        async def run() -> tuple[float, float]:
            out["ready"], out["go"], opened = 0, asyncio.Event(), time.monotonic()
            out["opening"] = asyncio.Semaphore(16)
            tasks = [
                asyncio.create_task(session(server.url, i, sessions, out))
                for i in range(sessions)
            ]
            while out["ready"] + len(out["errors"]) < sessions:
                await asyncio.sleep(0.05)
            start = time.monotonic()
            out["deadline"] = start + seconds
            out["go"].set()
            await asyncio.gather(*tasks)
            return start - opened, time.monotonic() - start

        open_s, wall = asyncio.run(run())
        rss_after = rss_kib(server.pid)
        out["planner"].close()
    seeds = [seed for seed, _, _ in out["episodes"]]
    lat = sorted(out["latencies"]) or [float("nan")]
    for error in out["errors"][:5]:
        print(f"{env_id}: {error}", file=sys.stderr)
    return {
        "env_id": env_id,
        "sessions": sessions,
        "workers": workers,
        "open_and_warm_up_s": round(open_s, 1),
        "wall_s": round(wall, 1),
        "episodes": len(seeds),
        "steps": len(lat),
        "steps_per_s": round(len(lat) / wall, 1),
        "p50_ms": round(1000 * lat[len(lat) // 2], 1),
        "p99_ms": round(1000 * lat[int(len(lat) * 0.99)], 1),
        "server_rss_mib_before": round(rss_before / 1024, 1),
        "server_rss_mib_after": round(rss_after / 1024, 1),
        "lost": len(out["errors"]),
        "duplicated": len(seeds) - len(set(seeds)),
        "mismatched": replay(env_id, out["episodes"]),
        "errors": out["errors"][:5],
    }


def overhead(num_envs: int = 16, steps: int = 200) -> dict[str, Any]:
    """Time per step of backend='remote' over 'serial' (Wordle, same seeds and actions)."""
    env_id, times = ENVS[0], {}
    actions = ["<guess>crane</guess>", "<guess>slate</guess>", JUNK]
    with ServerProcess(env_id) as server:
        for backend, extra in (("serial", {}), ("remote", {"urls": [server.url]})):
            with make_vec(env_id, num_envs, backend=backend, **extra) as vec:
                vec.reset(seed=0)
                start = time.perf_counter()
                for t in range(steps):
                    vec.step([actions[(t + i) % 3] for i in range(num_envs)])
                times[backend] = (time.perf_counter() - start) / steps
    return {
        "env_id": env_id,
        "num_envs": num_envs,
        "steps": steps,
        "serial_ms_per_step": round(1000 * times["serial"], 2),
        "remote_ms_per_step": round(1000 * times["remote"], 2),
        "remote_over_serial": round(times["remote"] / times["serial"], 1),
    }


def markdown(result: dict[str, Any]) -> str:
    head = (
        "| env | sessions | workers | wall s | episodes | steps | steps/s | p50 ms | p99 ms "
        "| RSS MiB before → after | lost | duplicated | mismatched |\n" + "|---" * 13 + "|\n"
    )
    rows = "".join(
        f"| {r['env_id']} | {r['sessions']} | {r['workers']} | {r['wall_s']} | {r['episodes']} "
        f"| {r['steps']} "
        f"| {r['steps_per_s']} | {r['p50_ms']} | {r['p99_ms']} | {r['server_rss_mib_before']} → "
        f"{r['server_rss_mib_after']} | {r['lost']} | {r['duplicated']} | {r['mismatched']} |\n"
        for r in result["load"]
    )
    o = result["overhead"]
    return (
        f"{head}{rows}\nRemote vector overhead ({o['env_id']}, {o['num_envs']} envs, "
        f"{o['steps']} steps): serial {o['serial_ms_per_step']} ms/step, remote "
        f"{o['remote_ms_per_step']} ms/step, ratio {o['remote_over_serial']}x.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="server processes (the cores)")
    parser.add_argument("--code-sessions", type=int, default=64, help="Code sessions (0: skip)")
    parser.add_argument("--envs", default=",".join(ENVS), help="comma-separated ids")
    args = parser.parse_args(argv)
    load_openenv()
    _raise_fd_limit()  # one socket per session on this side too
    runs = [(env_id, args.sessions) for env_id in args.envs.split(",")]
    runs += [(CODE, args.code_sessions)] if args.code_sessions > 0 else []
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "command": "python benchmarks/bench_server.py " + " ".join(argv or sys.argv[1:]),
        "load": [load(env_id, n, args.seconds, args.workers) for env_id, n in runs],
        "overhead": overhead(),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "server.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "server.md").write_text(markdown(result))
    print(markdown(result))
    bad = sum(r["lost"] + r["duplicated"] + r["mismatched"] for r in result["load"])
    return 1 if bad else 0


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else 65536
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


if __name__ == "__main__":
    sys.exit(main())
