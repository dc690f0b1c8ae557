"""NetConfig resets and submission steps, old code against new, side by side in one run.

Each code version runs in its own subprocess with ``PYTHONPATH`` pointing at that version's
``textgyms`` (a ``git archive`` of the baseline commit in a temporary folder, or this
checkout), on the same tasks: every family and level, the same seeds, the same oracle and
wrong submissions. Measured in CPU time (``time.process_time``), per round of fresh seeds:

* resets of distinct seeds, each followed by one submission step (timed apart): the oracle's
  on one task, a wrong one (the reference with one line dropped) on another, so that each
  submission is the first its task sees, as an agent's is (a wrong answer submitted after
  the oracle's would find the reference already parsed and compiled);
* GRPO groups: ``G`` resets of one seed in a row;
* tool steps: on a third task, the first three an agent would take (``show ip route`` and
  ``show ip interface brief`` on its first device, a ping from there to a host), then a wrong
  submission: that whole agent episode (reset, tools, submission) is timed too. The first
  tool step is also reported apart: both versions compile the starting network in it;
* edit steps: on a fourth task (every family graded on configs), an agent's fix: a look
  (``show ip route``), two ``apply_config`` steps on its first device (a description, then
  the last section of its reference), the same look at the edited candidate (which no memo
  serves: it is compiled), then a wrong submission; the edits, the look after them and that
  whole episode are timed;
* whole episodes: a distinct-seed reset plus its oracle submission, and a distinct-seed reset
  plus its wrong submission (no cost moved between a reset and a step can change these
  rates; the task memo saves a step nothing, so work moved from the reset to the step shows);
* GRPO groups of agent episodes, as a GRPO run plays them: ``G`` agent episodes in a row on
  one fresh seed (reset, the same three tool steps, then the reference with a different
  line dropped in each member: no two members submit the same text, and where the dropped
  line does not matter, a ``!`` or a description, the member still solves the task, about
  a third of them, as some members of a real group do): their tool steps, their
  submissions and whole episodes, on a third of the cases.

Then, on this checkout alone (``--ahead-worker``), the same agent episodes with each task drawn
ahead by ``pregenerate`` and warmed by ``warm_pregenerated`` (a vector's reset-ahead; warming
compiles and checks the starting network: ``NetConfigEnv.warm``) against resets that draw it:
the steps' CPU per way, and the drawing and warming in the wait apart.

Each rate is the median over rounds of (operations / CPU seconds of that round); a round
runs every version once, each in a fresh subprocess, the versions' order rotated per round.
Beside the ratio of two versions' medians, the ratio paired by round (new's rate over the
baseline's in the same round, so that drift between rounds cancels) with a distribution-free
95% interval for its median (from 6 rounds; a full run has 9), and the load average at the
start and end.
Beside the rates: each version's share of CPU time in the cyclic garbage collector (median
of rounds) and the objects it tracks after a round (what the memos hold, the collector's
work at every full collection).
Run alone: ``python benchmarks/netconfig_speed.py [--quick]``; ``bench_netconfig.py`` runs it
as its ``speed`` section.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = (("3ab7aa0", "textgyms/NetConfig-v3"), ("9311458", "textgyms/NetConfig-v4"))
NEW_ID = "textgyms/NetConfig-v4"
GROUP = 8  # resets of one seed in a GRPO group
TARGET = 4.0
ROUNDS = 9  # rounds of every version in a full run (a round: every case once, fresh seeds)
KINDS = ("reset", "submit", "wrong", "tool", "first_tool", "later_tool", "edit", "after_edit",
         "group", "episode", "wrong_episode", "agent", "edit_agent", "group_tool",
         "group_submit", "group_agent")
# what the target asks to be TARGET x cheaper: resets and every kind of step
STEPS = ("reset", "submit", "wrong", "tool", "edit", "after_edit")
WRONG_SEEDS = 500_000  # the wrong submissions' tasks: seeds this far from the oracle's
AGENT_SEEDS = 1_000_000  # the agent episodes' tasks
GROUP_AGENT_SEEDS = 2_000_000  # the tasks of the GRPO groups of agent episodes
EDIT_SEEDS = 4_000_000  # the tasks of the agent episodes with edits


def _wrong(task, k: int = 0) -> str:
    """A wrong answer: the reference with the ``k``-th line from the end of its first device
    dropped (the last one by default; counted round: a dropped ``!`` or description leaves
    it right), or a wrong JSON answer for diagnosis and analysis (its component names
    ``k``)."""
    if task.family in ("diagnosis", "analysis"):
        part = f"x{k}" if k else "x"
        return '<submit>{"device": "R9", "component": "' + part + '", "cause": "y"}</submit>'
    (first, text), *rest = task.reference
    lines = text.splitlines() or [""]
    drop = len(lines) - 1 - k % len(lines)
    sections = [(first, "\n".join(lines[:drop] + lines[drop + 1:])), *rest]
    return "<submit>\n" + "\n".join(f"! device {d}\n{t}" for d, t in sections) + "\n</submit>"


def _tools(task) -> list[str]:
    """An agent's first looks at its network: the routing table and interfaces of its first
    device and a ping from there to a host (the first address a fixed device has)."""
    dev = task.start[0][0] if task.start else task.devices[0][0]
    words = next((ln.split() for _d, text in task.fixed for ln in text.splitlines()
                  if ln.startswith(" ip address ")), [])
    target = words[2] if len(words) > 2 else "10.0.0.1"
    return [f'<show_ip_route device="{dev}"/>', f'<show_ip_int_brief device="{dev}"/>',
            f'<ping device="{dev}" target="{target}"/>']


def _edits(task) -> list[str]:
    """An agent's two edits of its first device: a description on its first interface, then
    the last section of that device's reference (its header and lines), as a fix is typed;
    none for the families graded on an answer."""
    if task.family in ("diagnosis", "analysis") or not task.start:
        return []
    dev = task.start[0][0]
    lines = dict(task.reference)[dev].splitlines()
    iface = next(ln.split()[1] for ln in lines if ln.startswith("interface "))
    head = max(i for i, ln in enumerate(lines)
               if ln.strip() and ln[0] not in " !" and ln.strip() != "end")
    last = "\n".join(ln for ln in lines[head:] if ln.strip() not in ("", "!", "end"))
    return [f'<apply_config device="{dev}">interface {iface}\n description edited</apply_config>',
            f'<apply_config device="{dev}">{last}</apply_config>']


def _edit_agent(env, seed: int, out: dict[str, list[float]]) -> None:
    """An agent episode with edits: reset, a look (``show ip route``), the two :func:`_edits`,
    the same look at the edited candidate, a wrong submission (:func:`_wrong`)."""
    cpu = time.process_time
    t0 = cpu()
    env.reset(seed=seed)
    edits = _edits(env.task)
    if not edits:
        return
    look = _tools(env.task)[0]
    for kind, action in [(None, look)] + [("edit", e) for e in edits] + [("after_edit", look)]:
        t1 = cpu()
        obs, _r, term, _tr, info = env.step(action)
        if kind is not None:
            out[kind].append(cpu() - t1)
        # (an edit may have a line refused, as an agent's may: a step all the same)
        assert not term and (kind == "edit" or info["error"] is None), (action, obs)
    _obs, _r, term, _tr, _info = env.step(_wrong(env.task))
    assert term
    out["edit_agent"].append(cpu() - t0)


def _agent(env, seed: int, out: dict[str, list[float]], member: int | None = None) -> None:
    """An agent episode: reset, three tool steps, a submission (:func:`_wrong`). ``member``:
    the episode is that member of a GRPO group (its times go to the ``group_*`` kinds, its
    submission drops its own line); None: a fresh task's lone episode."""
    cpu = time.process_time
    t0 = cpu()
    env.reset(seed=seed)
    for k, action in enumerate(_tools(env.task)):
        t1 = cpu()
        _obs, _r, term, _tr, info = env.step(action)
        if member is None:
            out["tool"].append(cpu() - t1)
            out["first_tool" if k == 0 else "later_tool"].append(out["tool"][-1])
        else:
            out["group_tool"].append(cpu() - t1)
        assert not term and info["error"] is None, (action, _obs)
    t1 = cpu()
    _obs, _r, term, _tr, _info = env.step(_wrong(env.task, member or 0))
    t2 = cpu()
    assert term
    if member is None:
        out["agent"].append(t2 - t0)
    else:
        out["group_submit"].append(t2 - t1)
        out["group_agent"].append(t2 - t0)


def _round(envs: dict, seed0: int) -> dict[str, list[float]]:
    """One round's CPU seconds per operation kind (fresh seeds from ``seed0``)."""
    cpu = time.process_time
    out: dict[str, list[float]] = {k: [] for k in KINDS}
    for k, env in enumerate(envs.values()):
        t0 = cpu()
        env.reset(seed=seed0 + k)
        t1 = cpu()
        _obs, _r, term, _tr, info = env.step(env.solve(env.task)[-1])
        t2 = cpu()
        assert term and info["score"] == 1.0, info.get("feedback")
        env.reset(seed=seed0 + WRONG_SEEDS + k)
        t3 = cpu()
        _obs, _r, term, _tr, _info = env.step(_wrong(env.task))
        t4 = cpu()
        assert term
        out["reset"] += [t1 - t0, t3 - t2]
        out["submit"].append(t2 - t1)
        out["wrong"].append(t4 - t3)
        out["episode"].append(t2 - t0)
        out["wrong_episode"].append(t4 - t2)
        _agent(env, seed0 + AGENT_SEEDS + k, out)
        _edit_agent(env, seed0 + EDIT_SEEDS + k, out)
    for k, env in enumerate(list(envs.values())[1::3]):  # a third of the cases, levels mixed
        t0 = cpu()
        for _ in range(GROUP):
            env.reset(seed=seed0 + 500 + k)
        out["group"].append((cpu() - t0) / GROUP)
        for m in range(GROUP):
            _agent(env, seed0 + GROUP_AGENT_SEEDS + k, out, member=m)
    return out


def worker(env_id: str, rounds: int, first: int = 0) -> dict:
    """Measure the ``textgyms`` on ``sys.path`` (run in a subprocess): rounds ``first`` to
    ``first + rounds - 1``, each round's rate per kind and every operation's time."""
    import gymnasium as gym

    import textgyms
    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS

    envs = {(f, lvl): gym.make(env_id, family=f, difficulty=lvl).unwrapped
            for f in FAMILIES for lvl in LEVELS}
    for env in envs.values():  # first uses (imports, regular expressions): no reset's cost
        env.reset(seed=1)
    collector = _CollectorClock()
    per_round, shares = [], []
    for r in range(first, first + rounds):
        t0, g0 = time.process_time(), collector.cpu
        per_round.append(_round(envs, 10_000 * (r + 1)))
        shares.append((collector.cpu - g0) / (time.process_time() - t0))
    collector.stop()
    gc.collect()  # (after every timed operation: what the memos and envs still hold)
    res: dict = {"textgyms": textgyms.__file__, "cases": len(envs), "rounds": rounds,
                 "gc_share": shares, "tracked": len(gc.get_objects())}
    for kind in KINDS:
        res[kind] = {"rates": [len(r[kind]) / sum(r[kind]) for r in per_round],
                     "times_ms": [t * 1e3 for r in per_round for t in r[kind]]}
    return res


AHEAD_KINDS = ("first_tool", "tool", "submit", "agent", "wait")
AHEAD_SEEDS = 3_000_000  # the reset-ahead comparison's tasks


def _ahead_episode(env, seed: int, ahead: bool, out: dict[str, list[float]]) -> None:
    """An agent episode (reset, :func:`_tools`, :func:`_wrong`) on a fresh task, its task drawn
    and warmed first (``pregenerate``, ``warm_pregenerated``) when ``ahead``, as a vector's
    worker does in the wait for the model's turn (timed apart, as ``wait``). ``agent`` is the
    episode without that wait."""
    cpu = time.process_time
    t0 = cpu()
    if ahead:
        env.pregenerate(seed)
        env.warm_pregenerated()
    t1 = cpu()
    env.reset(seed=seed)
    for k, action in enumerate(_tools(env.task)):
        t2 = cpu()
        env.step(action)
        out["tool"].append(cpu() - t2)
        if k == 0:
            out["first_tool"].append(out["tool"][-1])
    t3 = cpu()
    _obs, _r, term, _tr, _info = env.step(_wrong(env.task))
    t4 = cpu()
    assert term
    out["submit"].append(t4 - t3)
    out["agent"].append(t4 - t1)
    if ahead:
        out["wait"].append(t1 - t0)


def ahead_worker(rounds: int, first: int = 0) -> dict:
    """This checkout's agent episodes with resets that draw their task against resets that
    find it drawn ahead (run in a subprocess): per kind and way, each round's rate."""
    import gymnasium as gym

    import textgyms
    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS

    envs = [gym.make(NEW_ID, family=f, difficulty=lvl).unwrapped
            for f in FAMILIES for lvl in LEVELS]
    for env in envs:
        env.reset(seed=1)
    rates: dict[str, dict[str, list[float]]] = {"cold": {}, "ahead": {}}
    for r in range(first, first + rounds):
        got: dict[str, dict[str, list[float]]] = {w: {k: [] for k in AHEAD_KINDS} for w in rates}
        for k, env in enumerate(envs):
            seed = AHEAD_SEEDS + 10_000 * (r + 1) + 2 * k
            _ahead_episode(env, seed, False, got["cold"])
            _ahead_episode(env, seed + 1, True, got["ahead"])
        for way, kinds in got.items():
            for kind, times in kinds.items():
                if times:
                    rates[way].setdefault(kind, []).append(len(times) / sum(times))
    return {"textgyms": textgyms.__file__, "cases": len(envs), "rounds": rounds,
            "rates": rates}


def reset_ahead(rounds: int) -> dict:
    """:func:`ahead_worker` on this checkout, one fresh subprocess per round; medians."""
    parts = [in_subprocess(ROOT, __file__, ["--ahead-worker", "--rounds", "1", "--first",
                                            str(r)]) for r in range(rounds)]
    out: dict = {"cases": parts[0]["cases"], "rounds": rounds}
    for way in ("cold", "ahead"):
        out[way] = {k: statistics.median(x for p in parts for x in p["rates"][way][k])
                    for k in parts[0]["rates"][way]}
    return out


def render_ahead(res: dict) -> str:
    """The table of :func:`reset_ahead`."""
    cold, ahead = res["cold"], res["ahead"]
    names = {"first_tool": "first tool steps", "tool": "tool steps (the first three)",
             "submit": "wrong submissions (after the tools)",
             "agent": "agent episodes, without the wait (reset, three tool steps, a wrong "
                      "submission)"}
    rows = ["| per CPU-second (median of rounds) | reset draws its task | task drawn ahead "
            "| ahead / drawing |", "|---|---:|---:|---:|"]
    for k, name in names.items():
        rows.append(f"| {name} | {cold[k]:,.0f} | {ahead[k]:,.0f} | {ahead[k] / cold[k]:.1f}x |")
    rows.append(f"| drawing and warming in the wait, per CPU-second | | "
                f"{ahead['wait']:,.0f} | |")
    return "\n".join(rows) + "\n"


class _CollectorClock:
    """CPU time spent in the cyclic garbage collector's collections (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self._start = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, _info: dict) -> None:
        now = time.process_time()
        if phase == "start":
            self._start = now
        else:
            self.cpu += now - self._start

    def stop(self) -> None:
        gc.callbacks.remove(self._tick)


def _summary(parts: list[dict]) -> dict:
    """Per kind, over a version's rounds: the median round's rate and operation's time."""
    out: dict = {"textgyms": parts[0]["textgyms"], "cases": parts[0]["cases"],
                 "rounds": sum(p["rounds"] for p in parts)}
    for kind in KINDS:
        out[kind] = {"per_cpu_s": statistics.median(x for p in parts for x in p[kind]["rates"]),
                     "median_ms": statistics.median(
                         x for p in parts for x in p[kind]["times_ms"])}
    out["gc_share"] = statistics.median(x for p in parts for x in p["gc_share"])
    out["tracked"] = statistics.median(p["tracked"] for p in parts)
    return out


def export(commit: str, dest: Path) -> Path:
    """``textgyms/`` as it was at ``commit``, unpacked under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    tar = dest / "src.tar"
    with tar.open("wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit, "textgyms"], stdout=fh,
                       check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    return dest


def in_subprocess(tree: Path, script: str, args: list[str]) -> dict:
    """Run ``script``'s worker with ``args`` on the ``textgyms`` under ``tree``; its last
    stdout line, a JSON object naming the ``textgyms`` it imported, is returned."""
    return run_in_tree(tree, [sys.executable, str(Path(script).resolve()), *args])[0]


def run_in_tree(tree: Path, cmd: list[str], env: dict[str, str] | None = None) -> tuple[dict, str]:
    """Run the worker command ``cmd`` with ``PYTHONPATH`` on ``tree`` (and ``env`` added):
    its last stdout line, a JSON object naming the ``textgyms`` it imported, and its stderr."""
    env = {**os.environ, "PYTHONPATH": str(tree), **(env or {})}
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"worker for {tree} failed:\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if not res["textgyms"].startswith(str(tree)):
        raise RuntimeError(f"measured {res['textgyms']}, not the code under {tree}")
    return res, out.stderr


def side_by_side(rounds: int) -> dict:
    """Every baseline and this checkout, the same tasks, in one run; with the ratios. Each
    round runs every version once, in its own subprocess, in an order rotated per round, so
    that the machine's drift during the run falls on all of them alike."""
    res: dict = {"group_size": GROUP, "target_ratio": TARGET, "versions": {}, "ratios": {},
                 "paired": {}, "load_avg_start": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="netconfig-old-") as tmp:
        trees = [(c, export(c, Path(tmp) / c), env_id) for c, env_id in BASELINES]
        trees.append(("new", ROOT, NEW_ID))
        parts: dict[str, list[dict]] = {name: [] for name, _t, _i in trees}
        for r in range(rounds):
            k = r % len(trees)
            for name, tree, env_id in trees[k:] + trees[:k]:
                parts[name].append(in_subprocess(tree, __file__, [
                    "--worker", env_id, "--rounds", "1", "--first", str(r)]))
        for name, _t, env_id in trees:
            res["versions"][name] = {"id": env_id, **_summary(parts[name])}
    res["load_avg_end"] = list(os.getloadavg())
    new = res["versions"]["new"]
    for commit, _id in BASELINES:
        old = res["versions"][commit]
        ratio = {k: new[k]["per_cpu_s"] / old[k]["per_cpu_s"] for k in KINDS}
        ratio["pass"] = all(ratio[k] >= TARGET for k in STEPS)
        res["ratios"][commit] = ratio
        res["paired"][commit] = paired_ratios(parts["new"], parts[commit])
    return res


def paired_ratios(new: list[dict], old: list[dict]) -> dict[str, list]:
    """Per kind, new's rate over old's in each round (the two ran one after the other, on
    the same tasks): ``[median, low, high]`` over rounds, with a distribution-free 95%
    interval for the median (:func:`textgyms.stats.median_ci`; None below 6 rounds).
    Paired by round, the machine's drift between rounds cancels out of each ratio."""
    from textgyms.stats import median_ci

    return {k: list(median_ci(n[k]["rates"][0] / o[k]["rates"][0] for n, o in zip(new, old)))
            for k in KINDS}


def render(res: dict) -> str:
    """The markdown table of :func:`side_by_side`'s result."""
    names = {"reset": "resets, distinct seeds", "submit": "oracle submission steps",
             "wrong": "wrong submission steps",
             "tool": "tool steps (the first three after a reset)",
             "first_tool": "first tool steps (both versions compile the starting network)",
             "later_tool": "second and third tool steps",
             "edit": "edit steps (apply_config: two on the first device, after a look)",
             "after_edit": "looks after the edits (the edited candidate is compiled)",
             "group": f"resets in GRPO groups of {GROUP}",
             "episode": "episodes (a reset and the oracle's submission)",
             "wrong_episode": "episodes (a reset and a wrong submission)",
             "agent": "agent episodes (a reset, three tool steps, a wrong submission)",
             "edit_agent": "agent episodes with edits (a reset, a look, two edits, a look, "
                           "a wrong submission)",
             "group_tool": f"tool steps in GRPO groups of {GROUP} agent episodes",
             "group_submit": f"submissions in GRPO groups of {GROUP} (each drops its own line)",
             "group_agent": f"agent episodes in GRPO groups of {GROUP}"}
    vers = res["versions"]
    head = " | ".join(f"{c} ({vers[c]['id'].split('/')[-1]})" for c in vers)
    first = BASELINES[0][0]
    rows = [f"| per CPU-second (median of rounds) | {head} | new / 3ab7aa0 | new / 9311458 "
            f"| new / {first}, paired by round (95% CI) |",
            "|---" * (4 + len(vers)) + "|"]
    paired = res.get("paired", {}).get(first, {})
    for k, name in names.items():
        cells = " | ".join(f"{vers[c][k]['per_cpu_s']:,.0f}" for c in vers)
        r = " | ".join(f"{res['ratios'][c][k]:.1f}x" for c, _i in BASELINES)
        rows.append(f"| {name} | {cells} | {r} | {_interval(paired.get(k))} |")
    cells = " | ".join(f"{vers[c]['gc_share']:.0%}" for c in vers)
    rows.append(f"| share of the CPU time in the cyclic garbage collector | {cells} |"
                + " |" * (len(BASELINES) + 1))
    cells = " | ".join(f"{vers[c]['tracked']:,.0f}" for c in vers)
    rows.append(f"| objects the collector tracks after a round | {cells} |"
                + " |" * (len(BASELINES) + 1))
    verdict = " | ".join("PASS" if res["ratios"][c]["pass"] else "FAIL" for c, _i in BASELINES)
    rows.append(f"| target >= {TARGET:g}x (resets and every kind of step) |"
                + " |" * len(vers) + f" {verdict} | |")
    return "\n".join(rows) + "\n"


def _interval(cell: list | None) -> str:
    """``3.6x (3.1-4.2x)``: a paired median and its interval (the median alone below 6
    rounds, nothing without pairs)."""
    if not cell:
        return ""
    median, low, high = cell
    return f"{median:.1f}x" + ("" if low is None else f" ({low:.1f}-{high:.1f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--worker", metavar="ENV_ID", help=argparse.SUPPRESS)
    ap.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--ahead-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else ROUNDS)
    if args.worker:
        print(json.dumps(worker(args.worker, rounds, args.first)))
        return
    if args.ahead_worker:
        print(json.dumps(ahead_worker(rounds, args.first)))
        return
    res = side_by_side(rounds)
    res["reset_ahead"] = reset_ahead(rounds)
    print(json.dumps(res, indent=2))
    print(render(res))
    print(render_ahead(res["reset_ahead"]))


if __name__ == "__main__":
    main()
