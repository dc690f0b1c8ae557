"""NetConfig in a trainer's vector: N envs in one process, GRPO groups of G envs on one seed,
playing agent episodes in lockstep (every env resets, then every env takes each of the same
three tool steps, then every env submits the reference with its own line dropped), as a
serial vector of a GRPO run plays them. Per env and operation, ms of CPU
(``time.process_time``), the mean over rounds of fresh seeds.

``netconfig_speed.py`` measures lone episodes on fresh seeds, where no memo entry is ever
reused across seeds; this measures the reuse a vector relies on (a group's starting network,
task values and baseline asked for again by each member, a vector step after the entry was
stored). A change to the memos should be measured by both. To compare two versions, run
this from each version's own folder with ``PYTHONPATH`` on it, alternated (a
``multiprocessing`` forkserver would import ``textgyms`` from the working folder first).

    python benchmarks/netconfig_lockstep.py [--envs 256] [--group 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from netconfig_speed import _tools, _wrong  # noqa: E402  (the same tool steps and answers)

ENV_ID = "textgyms/NetConfig-v4"


def measure(n_envs: int, group: int, rounds: int) -> dict:
    """ms of CPU per env for its reset, its three tool steps together and its submission; the
    groups cycle through every family and level."""
    import gymnasium as gym

    import textgyms
    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS

    cases = [(f, lvl) for f in FAMILIES for lvl in LEVELS]
    envs = [gym.make(ENV_ID, family=cases[i // group % len(cases)][0],
                     difficulty=cases[i // group % len(cases)][1]).unwrapped
            for i in range(n_envs)]
    for env in envs:  # first uses (imports, regular expressions) outside the timings
        env.reset(seed=1)
    cpu = time.process_time
    spent = {"reset": 0.0, "tool": 0.0, "submit": 0.0}
    for r in range(rounds):
        t0 = cpu()
        for i, env in enumerate(envs):
            env.reset(seed=100_000 * (r + 1) + i // group)
        spent["reset"] += cpu() - t0
        actions = [_tools(env.task) for env in envs]
        t0 = cpu()
        for k in range(3):
            for env, acts in zip(envs, actions):
                env.step(acts[k])
        spent["tool"] += cpu() - t0
        t0 = cpu()
        for i, env in enumerate(envs):
            env.step(_wrong(env.task, i % group))
        spent["submit"] += cpu() - t0
    ms = {k: v * 1e3 / rounds / n_envs for k, v in spent.items()}
    return {"textgyms": textgyms.__file__, "envs": n_envs, "group": group, "rounds": rounds,
            "ms_per_env": ms, "tracked": len(gc.get_objects())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=256, help="envs in the vector (default 256)")
    ap.add_argument("--group", type=int, default=8, help="envs per GRPO group (default 8)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of fresh seeds (default 3)")
    args = ap.parse_args()
    print(json.dumps(measure(args.envs, args.group, args.rounds)))


if __name__ == "__main__":
    main()
