"""What a trainer pays per agent turn on the env side, end to end (results: results/rollout.json).

For each family and for a mixture, 256 envs through ``textgyms.make_vec`` (serial,
multiprocessing and, for single ids, ``remote`` against a local ``textgyms serve``), played by
an instant scripted policy (the seed-0 oracle's actions, cycled by turn, so the policy costs
nothing and every backend sees the same actions). Each batch then goes through the trainer-side
harness: the chat transcript as ``ChatHistory`` builds it and the new observation's token ids as
``TokenizeText`` encodes them, with SmolLM2-135M's tokenizer.

Reported per family and backend: env-side µs per agent turn (median over steps), the per-phase
breakdown of the serial run from cProfile (parse, rules/verify/render in the family's
``respond``, core bookkeeping, vector bookkeeping, chat transcript, tokenize) and IPC (the
multiprocessing or remote turn minus the serial one), and the ratio of the env-side time to one
SmolLM2-135M forward pass over the same new tokens on this CPU (the floor a trainer pays anyway).

    .venv/bin/python benchmarks/bench_rollout.py [--envs 256] [--steps 6] [--quick]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import textgyms  # noqa: F401  (registers the ids)
from textgyms.vector import make_vec
from textgyms.wrappers.tokenize import get_tokenizer

RESULTS = Path(__file__).resolve().parent / "results"
FAMILIES = {
    "Wordle": "textgyms/Wordle-v0",
    "Search": "textgyms/Search-v1",
    "Code": "textgyms/Code-v0",
    "NetConfig": "textgyms/NetConfig-v4",
    "ISO20022": "textgyms/ISO20022-MT103-v4",
}
MIXTURE = "textgyms/Wordle-v0*2,textgyms/Search-v1,textgyms/NetConfig-v4,textgyms/ISO20022-MT103-v4"


def script(env_id: str) -> list[str]:
    """The seed-0 oracle's actions of ``env_id``: real, well-formed tool calls."""
    env = gym.make(env_id)
    env.reset(seed=0)
    actions = env.unwrapped.solve(env.unwrapped.task)
    env.close()
    return actions


class InstantPolicy:
    """Plays ``plans[env_id][turn % len]``: no model, no per-episode planning."""

    def __init__(self, env_ids: list[str]) -> None:
        self.plans = {e: script(e) for e in env_ids}
        self.default = next(iter(self.plans.values()))

    def act(self, infos: list[dict[str, Any]]) -> list[str]:
        """One action per env from its info (``env_id`` names the mixture entry)."""
        out = []
        for info in infos:
            plan = self.plans.get(info.get("env_id", ""), self.default)
            out.append(plan[int(info.get("turn", 0)) % len(plan)])
        return out


class Harness:
    """The trainer-side wrappers' work per batch: ChatHistory's transcript, TokenizeText's ids."""

    def __init__(self, tokenizer: Any) -> None:
        self.tok = get_tokenizer(tokenizer)
        self.chat_s = 0.0
        self.tok_s = 0.0
        self.tokens = 0

    def __call__(self, observations: list[str], infos: list[dict[str, Any]]) -> None:
        t0 = time.perf_counter()
        chats = [[dict(m) for m in info.get("messages", ())] for info in infos]
        t1 = time.perf_counter()
        for obs in observations:
            self.tokens += int(self.tok.encode(obs).size)
        t2 = time.perf_counter()
        self.chat_s += t1 - t0
        self.tok_s += t2 - t1
        del chats


def play(vec: Any, policy: InstantPolicy, harness: Harness, steps: int) -> list[float]:
    """Seconds of ``vec.step`` per step (the policy and the harness are timed apart)."""
    obs, infos = vec.reset(seed=0)
    harness(obs, infos)
    times = []
    for _ in range(steps):
        actions = policy.act(infos)
        t0 = time.perf_counter()
        obs, _, _, _, infos = vec.step(actions)
        times.append(time.perf_counter() - t0)
        harness(obs, infos)
    return times


def _cum(stats: pstats.Stats, module: str, names: tuple[str, ...], outer: bool = False) -> float:
    """Cumulative seconds of the functions ``names`` defined in files whose path contains
    ``module``; ``outer``: only the largest one (the outermost of nested same-name methods)."""
    found = [
        row[3]
        for (file, _, name), row in stats.stats.items()  # type: ignore[attr-defined]
        if name in names and module in file
    ]
    return (max(found, default=0.0) if outer else sum(found))


def phases(env_id: str, num_envs: int, steps: int, policy: InstantPolicy) -> dict[str, float]:
    """Fractions of the serial ``vec.step`` time per phase, from a cProfile run."""
    vec = make_vec(env_id, num_envs, backend="serial")
    harness = Harness("bytes")
    prof = cProfile.Profile()
    obs, infos = vec.reset(seed=0)
    for _ in range(steps):
        actions = policy.act(infos)
        prof.enable()
        obs, _, _, _, infos = vec.step(actions)
        prof.disable()
    vec.close()
    del obs, harness
    st = pstats.Stats(prof)
    total = _cum(st, "textgyms/vector/base.py", ("step",), outer=True)
    env_step = _cum(st, "textgyms/core.py", ("step",))
    parse = _cum(st, "textgyms/actions.py", ("parse",))  # the envs' one entry point
    respond = _cum(st, "textgyms/envs/", ("respond", "final_verdict"))
    resets = _cum(st, "textgyms/core.py", ("reset",))
    parts = {
        "parse": parse,
        "rules_verify_render": max(respond - parse, 0.0),
        "core_bookkeeping": max(env_step - respond, 0.0),
        "autoreset": resets,
        "vector_bookkeeping": max(total - env_step - resets, 0.0),
    }
    return {k: round(v / total, 3) for k, v in parts.items()} if total else parts


def forward_us_per_token(tokens_per_seq: int) -> dict[str, Any]:
    """Median µs per token of one SmolLM2-135M forward pass (batch 8) on this CPU."""
    import torch

    from textgyms.models import load_model

    model, tok = load_model("smollm2-135m")
    model.eval()
    n = max(8, min(tokens_per_seq, 2048))
    ids = torch.randint(0, tok.vocab_size, (8, n), generator=torch.Generator().manual_seed(0))
    times = []
    with torch.inference_mode():
        for _ in range(3):
            t0 = time.perf_counter()
            model(input_ids=ids)
            times.append(time.perf_counter() - t0)
    return {"us_per_token": statistics.median(times) / ids.numel() * 1e6, "seq_len": n,
            "batch": 8, "torch_threads": torch.get_num_threads()}


def measure(name: str, env_id: str, backend: str, args: argparse.Namespace, tokenizer: Any,
            policy: InstantPolicy, extra: dict[str, Any]) -> dict[str, Any]:
    """One family x backend: median µs per turn, transcript and tokenize µs per turn."""
    vec = make_vec(env_id, args.envs, backend=backend, **extra)
    harness = Harness(tokenizer)
    try:
        times = play(vec, policy, harness, args.steps)
    finally:
        vec.close()
    turns = args.envs * (args.steps + 1)
    return {
        "family": name, "backend": backend,
        "env_us_per_turn": round(statistics.median(times) / args.envs * 1e6, 1),
        "chat_us_per_turn": round(harness.chat_s / turns * 1e6, 2),
        "tokenize_us_per_turn": round(harness.tok_s / turns * 1e6, 2),
        "new_tokens_per_turn": round(harness.tokens / turns, 1),
    }


def backends(env_id: str, name: str, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """(backend, make_vec extras, context manager) for the runs of one id."""
    yield "serial", {}
    yield "multiprocessing", {"num_workers": 2}
    if name != "mixture" and not args.no_remote:
        from textgyms.server.process import ServerProcess

        with ServerProcess(env_id, args=["--max-sessions", str(args.envs)]) as server:
            yield "remote", {"urls": [server.url]}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every family and the mixture through every backend, then the model's forward cost."""
    from textgyms.models import load_model

    _, hf_tok = load_model("smollm2-135m")
    ids = {**FAMILIES, "mixture": MIXTURE}
    if args.only:
        ids = {k: v for k, v in ids.items() if k in args.only}
    policy = InstantPolicy(list(FAMILIES.values()))
    rows: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    profile = {}
    for name, env_id in ids.items():
        profile[name] = phases(env_id, args.envs, args.steps, policy)
        for backend, extra in backends(env_id, name, args):
            print(f"{name} {backend} ...", file=sys.stderr, flush=True)
            try:
                rows.append(measure(name, env_id, backend, args, hf_tok, policy, extra))
            except Exception as exc:  # a failing backend is recorded; the others still run
                failed.append({"family": name, "backend": backend, "error": repr(exc)[:300]})
    serial = {r["family"]: r["env_us_per_turn"] for r in rows if r["backend"] == "serial"}
    mean_tokens = statistics.median(r["new_tokens_per_turn"] for r in rows)
    fwd = forward_us_per_token(int(mean_tokens) or 64)
    for r in rows:
        r["ipc_us_per_turn"] = round(r["env_us_per_turn"] - serial[r["family"]], 1)
        harness_us = r["env_us_per_turn"] + r["chat_us_per_turn"] + r["tokenize_us_per_turn"]
        model_us = fwd["us_per_token"] * max(r["new_tokens_per_turn"], 1.0)
        r["model_forward_us_same_tokens"] = round(model_us, 1)
        r["env_over_forward"] = round(harness_us / model_us, 3)
    return {"rows": rows, "failed": failed, "phases_serial": profile, "forward": fwd}


def markdown(result: dict[str, Any]) -> str:
    """The tables of results/rollout.md."""
    fwd, meta = result["forward"], result["meta"]
    lines = [
        "| family | backend | env µs / turn | IPC µs / turn | chat + tokenize µs / turn "
        "| new tokens / turn | SmolLM2-135M forward µs, same tokens | harness / forward |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['family']} | {r['backend']} | {r['env_us_per_turn']:,.0f} "
            f"| {r['ipc_us_per_turn']:,.0f} "
            f"| {r['chat_us_per_turn'] + r['tokenize_us_per_turn']:,.0f} "
            f"| {r['new_tokens_per_turn']:,.0f} | {r['model_forward_us_same_tokens']:,.0f} "
            f"| {r['env_over_forward']:.3f} |"
        )
    names = list(next(iter(result["phases_serial"].values())))
    lines += ["", "| serial step, share of time (cProfile) | " + " | ".join(names) + " |",
              "|---|" + "---:|" * len(names)]
    for fam, ph in result["phases_serial"].items():
        lines.append(f"| {fam} | " + " | ".join(f"{ph[n]:.0%}" for n in names) + " |")
    lines += ["", f"{meta['envs']} envs, {meta['steps']} steps after a reset, medians over steps; "
              f"forward pass: batch {fwd['batch']} x {fwd['seq_len']} tokens, "
              f"{fwd['us_per_token']:.0f} µs per token, {fwd['torch_threads']} torch threads. "
              f"{meta['cpus']} CPUs, load average at the end {meta['load_avg'][0]:.1f}."]
    for f in result["failed"]:
        lines += ["", f"Failed: {f['family']} / {f['backend']}: {f['error']}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write results/rollout.json."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--quick", action="store_true", help="32 envs, 3 steps")
    p.add_argument("--no-remote", action="store_true")
    p.add_argument("--only", nargs="*", help="family names (and/or 'mixture')")
    args = p.parse_args(argv)
    if args.quick:
        args.envs, args.steps = 32, 3
    result = run(args)
    result["meta"] = {
        "envs": args.envs, "steps": args.steps, "python": platform.python_version(),
        "cpus": os.cpu_count(), "load_avg": os.getloadavg(), "date": time.strftime("%F %T %Z"),
        "policy": "seed-0 oracle actions cycled by turn (instant)", "tokenizer": "smollm2-135m",
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "rollout.json").write_text(json.dumps(result, indent=1) + "\n")
    (RESULTS / "rollout.md").write_text(markdown(result))
    for r in result["rows"]:
        print(f"{r['family']:10} {r['backend']:16} {r['env_us_per_turn']:>10} µs/turn  "
              f"x forward {r['env_over_forward']}")
    print(json.dumps(result["phases_serial"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
