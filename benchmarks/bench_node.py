"""Can one node's CPUs keep its GPU fed? Env side of a turn vs the GPU's turn (results/node*.json).

For every family and a mixture, 256 and 1,024 envs through ``textgyms.make_vec`` with 1, 4 and
16 workers (``serial`` for 1, ``multiprocessing`` otherwise; capped at the cores present, the
cap recorded), every env played by its own task's oracle (``ScriptedPolicy("oracle")``,
planned outside the timed steps, so Code's submissions really run): resets per second (one
``vec.reset`` of every env) and steps per second (the median ``vec.step``, which includes the
same-step resets of episodes that ended), and the env side of one turn (that median, in ms).

When CUDA is present, next to it the GPU's time for the same turn: random-weight models of
real shapes built from their configs only (SmolLM2-135M, Qwen2.5-1.5B, Qwen2.5-7B; no
download; each built once, directly on the GPU, and timed at every batch and prefill),
bfloat16, batch = envs, a prefill of the turn's new tokens then 32 greedy decode steps; and
the physical-limit turn time: 32 reads of the weights at the GPU's memory bandwidth plus the
prefill's FLOPs at its bf16 peak (from a table of known GPUs, or the bandwidth of a large
device-to-device copy when the GPU is not in it).

The headline is the env side's share of a turn at the physical limit (env ms / GPU ms, 256
envs, the most workers measured): the targets are <= 5 % of a 7B turn and <= 25 % of a 1.5B
turn. It is given twice: with the steps back to back and reset-ahead off (no idle time: the
upper bound), and with reset-ahead on and a sleep of that model's physical-limit turn before
each step (capped at twice the back-to-back step, which is all the drawing can use), as in
training, where the workers draw the next episodes' tasks during the model's turn. Without
CUDA the GPU part is recorded as skipped and the share is computed against the physical limit
of an H200 (stated in the JSON).

    .venv/bin/python benchmarks/bench_node.py [--quick] [--out PATH]
    .venv/bin/python benchmarks/bench_node.py --derive results/node-nvidia-h200.json

Last, the CPU cores one GPU needs per family at its physical limit (``cores_per_gpu``: to keep
up, and to keep the share at the target); ``--derive`` recomputes that table from an earlier
result's rows, measuring nothing.

The JSON is written as the run goes (after the env side, each model and each reset-ahead
row, with ``"complete": false`` until the end), so a run stopped by a time limit keeps what it
measured. The default output is ``results/node-<machine>.json`` (the machine's GPU name, or
``cpu-<N>c`` with N cores), so a CPU run is never mistaken for the GPU node's figures.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rollout import FAMILIES, MIXTURE  # noqa: E402

from textgyms.policies import ScriptedPolicy  # noqa: E402
from textgyms.vector import make_vec  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DECODE_TOKENS = 32
PREFILL_CHUNK = 128
CHARS_PER_TOKEN = 3.5  # a BPE tokenizer on this English/code/config text (bench_rollout)
TARGETS = {"qwen2.5-7b": 0.05, "qwen2.5-1.5b": 0.25}

#: Known GPUs: (memory bandwidth bytes/s, dense bf16 peak FLOP/s), from the vendors' data sheets.
GPUS = {
    "H200": (4.8e12, 989e12),
    "H100 80GB HBM3": (3.35e12, 989e12),
    "H100 PCIe": (2.0e12, 756e12),
    "A100-SXM4-80GB": (2.039e12, 312e12),
    "A100-SXM4-40GB": (1.555e12, 312e12),
    "L40S": (0.864e12, 362e12),
}

#: Real model shapes (transformers config dicts, as the models' config.json give them).
MODELS: dict[str, dict[str, Any]] = {
    "smollm2-135m": {
        "model_type": "llama", "hidden_size": 576, "intermediate_size": 1536,
        "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
        "vocab_size": 49152, "max_position_embeddings": 8192, "rope_theta": 100000.0,
        "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "hidden_act": "silu",
    },
    "qwen2.5-1.5b": {
        "model_type": "qwen2", "hidden_size": 1536, "intermediate_size": 8960,
        "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2,
        "vocab_size": 151936, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "hidden_act": "silu",
    },
    "qwen2.5-7b": {
        "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
        "vocab_size": 152064, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "hidden_act": "silu",
    },
}


def param_count(cfg: dict[str, Any]) -> int:
    """Parameters of a llama/qwen2-shaped decoder from its config (qwen2 has q/k/v biases)."""
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    kv = h // cfg["num_attention_heads"] * cfg["num_key_value_heads"]
    attn = h * h * 2 + h * kv * 2 + (h + 2 * kv if cfg["model_type"] == "qwen2" else 0)
    per_layer = attn + 3 * h * inter + 2 * h
    emb = cfg["vocab_size"] * h * (1 if cfg["tie_word_embeddings"] else 2)
    return layers * per_layer + emb + h


def physical_limit_s(cfg: dict[str, Any], batch: int, prefill: int, bw: float,
                     flops: float) -> float:
    """Seconds of one turn at the GPU's limit: the weights (bf16) read once per decode step,
    plus the prefill's 2 * params FLOPs per new token at the bf16 peak."""
    n = param_count(cfg)
    return DECODE_TOKENS * 2 * n / bw + 2 * n * batch * prefill / flops


# A mixture makes each entry's env in a worker the first time that worker draws it (imports,
# registries, indexes: up to a second), so one warm reset can leave a worker's first draw of
# an entry to a timed step, and each worker to a different one: a step lasts as long as its
# slowest worker, so these first draws could spread over several of the few timed steps. Four
# resets of fresh seeds draw 4 x 16 entries per worker at 256 envs and 16 workers: a worker
# misses an entry of weight 1/5 with probability 0.8**64, about 6e-7.
MIXTURE_WARM_RESETS = 4


def warm_resets(env_id: str) -> int:
    """Untimed resets before a point's timed ones: one for an env, enough for every worker of
    a mixture to have made each entry's env (:data:`MIXTURE_WARM_RESETS`)."""
    from textgyms.mixture import Mixture

    return MIXTURE_WARM_RESETS if len(Mixture.parse(env_id).entries) > 1 else 1


def env_point(env_id: str, envs: int, workers: int, steps: int,
              gap_s: float = 0.0) -> dict[str, Any]:
    """Resets/s, steps/s and the median ``vec.step`` of one vector, every env played by its
    own task's oracle (planned between the timed steps), so Code's submissions run. Before
    the timed reset, :func:`warm_resets` untimed ones.

    ``gap_s == 0``: steps back to back with reset-ahead off, the env side with no idle time
    (the upper bound). ``gap_s > 0`` (multiprocessing): a sleep of the model's turn before
    each step, with reset-ahead on, as in training: the workers draw the next tasks then."""
    backend = "serial" if workers == 1 else "multiprocessing"
    extra = {} if workers == 1 else {"num_workers": workers, "reset_ahead": gap_s > 0}
    vec = make_vec(env_id, envs, backend=backend, **extra)
    policy = ScriptedPolicy("oracle")
    try:
        for k in range(warm_resets(env_id)):  # warm: workers started, imports and caches paid
            vec.reset(seed=1 + k * envs)
        t0 = time.perf_counter()
        obs, infos = vec.reset(seed=0)
        reset_s = time.perf_counter() - t0
        times, chars = [], []
        for _ in range(steps):
            actions = policy.act(obs, infos, envs=vec)
            time.sleep(gap_s)
            t0 = time.perf_counter()
            obs, _, _, _, infos = vec.step(actions)
            times.append(time.perf_counter() - t0)
            chars.append(statistics.mean(len(o) for o in obs))
    finally:
        vec.close()
    step_s = statistics.median(times)
    return {"envs": envs, "workers": workers, "backend": backend,
            "resets_per_s": round(envs / reset_s, 1), "steps_per_s": round(envs / step_s, 1),
            "env_turn_ms": round(step_s * 1e3, 3),
            "obs_chars_per_turn": round(statistics.mean(chars), 1)}


def build_model(cfg: dict[str, Any], device: str = "cuda", dtype: str = "bfloat16") -> Any:
    """A random-weight model of ``cfg``'s shape, allocated and initialised on ``device``.

    Built there directly, not on the CPU then moved: initialising a 7B model's weights on the
    CPU takes minutes (a 1.5B one 34 s on 2 cores), a GPU does it in a fraction of a second.
    Built once per model and timed at every batch and prefill (see :func:`gpu_side`)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg),
                                                 dtype=getattr(torch, dtype))
    return model.eval()


def gpu_turn_s(model: Any, batch: int, prefill: int, device: str = "cuda", reps: int = 2,
               warm: int = 1) -> float:
    """Median seconds of one turn of ``model`` (on ``device``): a prefill of ``prefill`` new
    tokens per sequence, then DECODE_TOKENS greedy steps with the KV cache; ``reps`` timed
    turns after ``warm`` untimed ones (kernels and the allocator; 0.0 when ``reps`` is 0)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    ids = torch.randint(0, model.config.vocab_size, (batch, prefill), generator=gen).to(device)
    # transformers 5 renamed ``past_key_values`` to ``cache``; accept either release
    kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    times = []
    with torch.inference_mode():
        for _ in range(warm + reps):
            _sync(device)
            t0 = time.perf_counter()
            cache = None
            for i in range(0, prefill, PREFILL_CHUNK):  # chunked: bounded activations
                out = model(input_ids=ids[:, i:i + PREFILL_CHUNK], use_cache=True,
                            logits_to_keep=1, **{kw: cache})
                cache = out.past_key_values
            nxt = out.logits[:, -1:].argmax(-1)
            for _ in range(DECODE_TOKENS):
                out = model(input_ids=nxt, use_cache=True, logits_to_keep=1, **{kw: cache})
                cache, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
            _sync(device)
            times.append(time.perf_counter() - t0)
            del out, cache
    return statistics.median(times[warm:]) if reps else 0.0  # reps=0: a warm-up only


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def measured_bandwidth() -> float:
    """Bytes/s of a 4 GiB device-to-device copy (read + write counted)."""
    import torch

    a = torch.empty(1 << 31, dtype=torch.float16, device="cuda")
    b = torch.empty_like(a)
    b.copy_(a)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        b.copy_(a)
    torch.cuda.synchronize()
    secs = (time.perf_counter() - t0) / 5
    del a, b
    return 2 * (1 << 32) / secs


def gpu_info() -> dict[str, Any]:
    """The GPU's name, bandwidth and bf16 peak (table or measured), or why it is skipped."""
    try:
        import torch
    except ImportError:
        return {"skipped": "torch is not installed"}
    if not torch.cuda.is_available():
        return {"skipped": "no CUDA device on this machine"}
    name = torch.cuda.get_device_name(0)
    known = next((v for k, v in GPUS.items() if k.lower() in name.lower()), None)
    bw_meas = measured_bandwidth()
    return {"name": name, "bandwidth_measured": bw_meas,
            "bandwidth": known[0] if known else bw_meas,
            "bf16_flops": known[1] if known else None,
            "source": "table" if known else "measured copy (no bf16 peak known)"}


def machine_name(gpu: dict[str, Any]) -> str:
    """A file-name-safe name of this machine: its GPU, or its core count."""
    if "name" in gpu:
        return re.sub(r"[^A-Za-z0-9]+", "-", gpu["name"]).strip("-").lower()
    return f"cpu-{os.cpu_count()}c"


def prefill_tokens(chars: float) -> int:
    """New tokens of a turn's observation, estimated from its characters, rounded up to a
    multiple of 64 so that families of similar size share one GPU measurement."""
    return max(64, -(-int(chars / CHARS_PER_TOKEN) // 64) * 64)


def env_ids(args: argparse.Namespace) -> dict[str, str]:
    """The families (and the mixture) to measure, in the order ``--only`` names them (all of
    them by default): name -> env id."""
    ids = {**FAMILIES, "mixture": MIXTURE}
    return {k: ids[k] for k in dict.fromkeys(args.only)} if args.only else ids


def unavailable(env_id: str) -> str | None:
    """Why ``env_id`` (an env or a mixture: every entry is made) cannot be made here (a
    missing optional dependency: its extra is not installed on this machine), or None. A
    family that cannot run is recorded as skipped, so one missing wheel does not end the run
    before the families after it."""
    import gymnasium as gym

    from textgyms.mixture import Mixture, resolve_spec

    for entry in Mixture.parse(env_id).entries:
        try:
            gym.make(resolve_spec(entry.env_id), **entry.kwargs).close()
        except ImportError as e:
            return f"{entry.env_id}: {type(e).__name__}: {e}"
    return None


def env_side(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every family and the mixture at every (envs, workers) point; the ``cap`` dict also
    names the families skipped for a missing dependency (``skipped``: name -> why)."""
    cores = os.cpu_count() or 1
    workers = sorted({min(w, cores) for w in args.workers})
    ids = env_ids(args)
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for name, env_id in ids.items():
        why = unavailable(env_id)
        if why is not None:
            print(f"{name}: skipped ({why})", file=sys.stderr, flush=True)
            skipped[name] = why
            continue
        for envs in args.envs:
            for w in workers:
                print(f"{name} {envs} envs {w} workers ...", file=sys.stderr, flush=True)
                rows.append({"family": name, **env_point(env_id, envs, w, args.steps)})
    cap = {"requested": list(args.workers), "measured": workers, "cores": cores,
           "skipped": skipped}
    return rows, cap


def gpu_side(rows: list[dict[str, Any]], gpu: dict[str, Any], args: argparse.Namespace,
             save: Callable[[dict[str, Any]], None] = lambda _: None) -> dict[str, Any]:
    """Physical-limit turn times for every model x batch x prefill, and measured ones on CUDA.
    Without a GPU the limits are an H200's (the node the issue is about), flagged as such.
    ``save`` gets the figures so far: every model's limits before any is measured, then
    after each model (a run cut short keeps them)."""
    bw, flops = (gpu["bandwidth"], gpu["bf16_flops"]) if "name" in gpu else GPUS["H200"]
    flops = flops or GPUS["H200"][1]  # an unknown GPU: its bandwidth, an H200's bf16 peak
    prefills = sorted({prefill_tokens(r["obs_chars_per_turn"]) for r in rows})
    keys = [(batch, p, f"{batch}x{p}") for batch in args.envs for p in prefills]
    out: dict[str, Any] = {"limit_assumes": gpu.get("name", "H200 (no GPU here)"),
                           "bandwidth": bw, "bf16_flops": flops, "models": {}}
    for name in args.models:
        cfg = MODELS[name]
        out["models"][name] = {
            "params": param_count(cfg), "measured_ms": {},
            "limit_ms": {k: round(physical_limit_s(cfg, b, p, bw, flops) * 1e3, 3)
                         for b, p, k in keys}}
    save(out)
    if "name" in gpu:
        for name in args.models:
            out["models"][name]["measured_ms"] = _measure_model(name, MODELS[name], keys)
            save(out)
    return out


def _measure_model(name: str, cfg: dict[str, Any], keys: list[tuple[int, int, str]],
                   device: str = "cuda") -> dict[str, float | None]:
    """Measured ms of one turn of model ``name`` at every (batch, prefill, key), the model
    built once for all of them; None where the turn does not fit in the GPU's memory (a 7B's
    KV cache for 1,024 sequences of about 1,950 tokens is about 114 GB, its weights 15 GB
    more: more than an H200 holds, for any engine)."""
    import torch

    def turn_ms(model: Any, batch: int, p: int, **kw: int) -> float | None:
        try:
            return round(gpu_turn_s(model, batch, p, device, **kw) * 1e3, 2)
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            return None

    print(f"GPU {name}: building ...", file=sys.stderr, flush=True)
    model = build_model(cfg, device)
    # One untimed turn at the largest batch and prefill warms kernels and the allocator for
    # every key (a warm turn per key cost a third of the GPU side's time).
    turn_ms(model, *max(k[:2] for k in keys), reps=0)
    measured = {}
    for batch, p, key in keys:
        print(f"GPU {name} {key} ...", file=sys.stderr, flush=True)
        measured[key] = turn_ms(model, batch, p, warm=0)
        if measured[key] is None:
            print(f"GPU {name} {key}: out of GPU memory", file=sys.stderr, flush=True)
    del model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return measured


def headline(rows: list[dict[str, Any]], gpu_turn: dict[str, Any]) -> list[dict[str, Any]]:
    """Per family, the env side's share of a turn (env ms / physical-limit GPU ms) at 256
    envs and the most workers measured, with the steps back to back (``share``), against
    the 7B and 1.5B targets."""
    out = []
    for fam in dict.fromkeys(r["family"] for r in rows):
        mine = [r for r in rows if r["family"] == fam]
        envs = min(r["envs"] for r in mine)
        r = max((r for r in mine if r["envs"] == envs), key=lambda r: r["workers"])
        key = f"{envs}x{prefill_tokens(r['obs_chars_per_turn'])}"
        for model, target in TARGETS.items():
            if model not in gpu_turn["models"]:
                continue
            gpu_ms = gpu_turn["models"][model]["limit_ms"][key]
            share = r["env_turn_ms"] / gpu_ms
            out.append({"family": fam, "model": model, "envs": envs, "workers": r["workers"],
                        "env_turn_ms": r["env_turn_ms"], "gpu_limit_ms": gpu_ms,
                        # 4 significant digits: a small share (Wordle's ~1%) keeps its precision
                        "share": float(f"{share:.4g}"), "target": target,
                        "met": share <= target})
    return out


def cores_per_gpu(heads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per headline row, the CPU cores one GPU needs for that family at that model's
    physical-limit turn rate. A core runs ``envs / (workers * t)`` env steps a second (``t``:
    the env side of one step at that worker count, its scaling losses included) and the GPU
    finishes ``envs / T`` turns (``T``: the physical-limit turn), so keeping up with the GPU
    (env steps overlapped with its turn) takes ``workers * t / T`` cores (``keep_up``), and
    keeping the env side's share of a turn at the target without overlap takes that over
    the target (``for_target``)."""
    out = []
    for h in heads:
        per_core = h["envs"] / (h["workers"] * h["env_turn_ms"] / 1e3)
        turns = h["envs"] / (h["gpu_limit_ms"] / 1e3)
        out.append({"family": h["family"], "model": h["model"], "target": h["target"],
                    "steps_per_core_s": round(per_core, 1), "gpu_turns_per_s": round(turns, 1),
                    # 4 significant digits: a fraction of a core keeps its precision
                    "keep_up": float(f"{turns / per_core:.4g}"),
                    "for_target": float(f"{turns / (per_core * h['target']):.4g}")})
    return out


def derive(path: Path) -> dict[str, Any]:
    """Add :func:`cores_per_gpu` to a node JSON written by an earlier run (its headline
    rows), write it back and return it: no measuring."""
    result = json.loads(path.read_text())
    if "headline" not in result:
        raise SystemExit(f"{path} has no headline (a run cut short before the GPU side)")
    result["cores_per_gpu"] = cores_per_gpu(result["headline"])
    path.write_text(json.dumps(result, indent=1) + "\n")
    return result


def add_ahead(heads: list[dict[str, Any]], env_ids: dict[str, str], steps: int,
              save: Callable[[], None] = lambda: None) -> None:
    """Measure each headline row again with reset-ahead on and a gap of that model's
    physical-limit turn before each step, as in training (``share_ahead``; multiprocessing
    rows only); ``save`` after each row.

    The gap is capped at twice the back-to-back step (``gap_ms``): what a worker draws in the
    gap is at most the reset work of its share of a step, so a longer sleep changes nothing
    the step measures (and a 7B turn at 256 envs would sleep seconds per step)."""
    for h in heads:
        if h["workers"] < 2:
            continue
        print(f"{h['family']} reset-ahead, {h['model']} turn gap ...", file=sys.stderr,
              flush=True)
        gpu_ms = h["gpu_limit_ms"]
        gap_ms = min(gpu_ms, 2 * h["env_turn_ms"])
        ahead = env_point(env_ids[h["family"]], h["envs"], h["workers"], steps, gap_ms / 1e3)
        share = ahead["env_turn_ms"] / gpu_ms
        h.update(gap_ms=round(gap_ms, 3), env_turn_ahead_ms=ahead["env_turn_ms"],
                 share_ahead=float(f"{share:.4g}"), met_ahead=share <= h["target"])
        save()


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, nargs="+", default=[256, 1024])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--steps", type=int, default=6, help="timed vec.steps per point")
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--only", nargs="*",
                   help="family names (and/or 'mixture'), measured in this order")
    p.add_argument("--quick", action="store_true",
                   help="smoke: 16 and 32 envs, 1 and 2 workers, 2 steps, no GPU runs")
    p.add_argument("--out", type=Path, help="default: results/node-<machine>.json")
    p.add_argument("--derive", type=Path, metavar="JSON",
                   help="measure nothing: add the cores-per-GPU table to this earlier result")
    args = p.parse_args(argv)
    unknown = [n for n in args.only or () if n not in FAMILIES and n != "mixture"]
    if unknown:  # (a typo would otherwise measure nothing and say nothing)
        p.error(f"--only: unknown {', '.join(unknown)}; choose from "
                f"{', '.join([*FAMILIES, 'mixture'])}")
    if args.quick:
        args.envs, args.workers, args.steps = [16, 32], [1, 2], 2
    return args


def _print_summary(result: dict[str, Any]) -> None:
    for name, why in result["settings"]["workers"].get("skipped", {}).items():
        print(f"{name}: not measured ({why})")
    print(f"{'family':10} {'envs':>5} {'wk':>3} {'resets/s':>10} {'steps/s':>10} {'turn ms':>9}")
    for r in result["env"]:
        print(f"{r['family']:10} {r['envs']:>5} {r['workers']:>3} {r['resets_per_s']:>10,.0f} "
              f"{r['steps_per_s']:>10,.0f} {r['env_turn_ms']:>9.2f}")
    print(f"\nEnv side's share of a turn at the physical limit "
          f"({result['gpu_turn']['limit_assumes']}):")
    for h in result["headline"]:
        ahead = (f"; with reset-ahead {h['share_ahead']:.1%} "
                 f"({'met' if h['met_ahead'] else 'NOT met'})" if "share_ahead" in h else "")
        print(f"{h['family']:10} vs {h['model']:13} {h['share']:8.1%} (target <= "
              f"{h['target']:.0%}: {'met' if h['met'] else 'NOT met'}){ahead}")


def _print_cores(result: dict[str, Any]) -> None:
    print(f"\nCPU cores per GPU at its physical limit ({result['gpu_turn']['limit_assumes']}):")
    print(f"{'family':10} {'model':13} {'steps/s/core':>12} {'turns/s':>9} {'keep up':>8} "
          f"{'for target':>10}")
    for c in result["cores_per_gpu"]:
        print(f"{c['family']:10} {c['model']:13} {c['steps_per_core_s']:>12,.0f} "
              f"{c['gpu_turns_per_s']:>9,.0f} {c['keep_up']:>8.1f} {c['for_target']:>10.1f} "
              f"(<= {c['target']:.0%})")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, write the JSON and print the headline. The JSON is written after
    the env side and after each model's GPU turns too (``"complete": false`` until the
    end), so a run stopped by a time limit keeps what it measured."""
    args = _args(argv)
    if args.derive:
        _print_cores(derive(args.derive))
        return 0
    gpu = {"skipped": "--quick"} if args.quick else gpu_info()
    name = machine_name(gpu)
    out = args.out or RESULTS / f"node-{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "complete": False,
        "machine": {"name": name, "cpu": platform.processor() or platform.machine(),
                    "cores": os.cpu_count(), "python": platform.python_version(),
                    "load_avg": list(os.getloadavg()), "date": time.strftime("%F %T %Z"),
                    "gpu": gpu},
        "settings": {"envs": args.envs, "steps": args.steps,
                     "decode_tokens": DECODE_TOKENS, "chars_per_token": CHARS_PER_TOKEN,
                     "policy": "each task's oracle (ScriptedPolicy), untimed",
                     "quick": args.quick},
    }

    def save(gpu_turn: dict[str, Any] | None = None) -> None:
        if gpu_turn is not None:
            # The headline needs only the physical limits, known before any model is
            # measured: a run cut short during the (slow) measured turns still has it.
            result["gpu_turn"] = gpu_turn
            result["headline"] = headline(result["env"], gpu_turn)
            result["cores_per_gpu"] = cores_per_gpu(result["headline"])
        out.write_text(json.dumps(result, indent=1) + "\n")

    result["env"], result["settings"]["workers"] = env_side(args)
    save()
    save(gpu_side(result["env"], gpu, args, save))
    add_ahead(result["headline"], env_ids(args), args.steps, save)
    result["complete"] = True
    save()
    _print_summary(result)
    _print_cores(result)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
