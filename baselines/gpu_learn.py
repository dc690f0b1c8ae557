"""One family's learning run at GPU scale: honest SFT, GRPO, then greedy evaluations of every
policy next to the floors, written where ``textgyms leaderboard`` and the viewer read them.

    python baselines/gpu_learn.py --family search --out baselines/results/gpu

Stages, each evaluation written as soon as it is done (a run cut short by a time limit keeps
what it finished): ``random`` and ``blind`` (the floors), ``smollm2`` (the model untrained),
SFT on honest oracle games of the train split (``baselines/demo.py``'s data), ``sft``, GRPO from
the SFT model, ``grpo``. Every evaluation plays ``--episodes`` test-split episodes greedily
(the leaderboard protocol: seeds 0..N-1). Writes ``OUT/<family>/<policy>/{results.jsonl,
metadata.json}`` (the metadata records the device, GPU name, wall time and peak GPU memory),
``OUT/<family>/train.json`` (the variant, every setting, and the SFT and GRPO run records:
device, GPU name, dtype, wall time, peak GPU memory, first and last GRPO rewards),
``OUT/<family>/grpo-metrics.jsonl`` and ``OUT/<family>/table.md`` (scores with 95% intervals,
feedback use, and whether GRPO > SFT > untrained and GRPO > blind hold with disjoint
intervals). Checkpoints stay in ``--work`` (hundreds of MB: not results).

The presets are sized for one H200 and a 10-minute command, and have not run there yet
(``scripts/gpu_learn.sh`` is the command a GPU session runs); on a CPU use ``baselines/demo.py``.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from baselines import demo, demo_table, grpo, sft  # noqa: E402

#: Per family: the variant and the training settings the arguments left at 0 / "" take.
PRESETS: dict[str, dict[str, Any]] = {
    # Harder than the CPU demo's lookup: 1-2 hop questions, 5 turns, top-3 documents.
    "search": {"env_id": "textgyms/Search-v1",
               "env_kwargs": {"difficulty": "easy", "search_only": True, "k": 3,
                              "max_turns": 5, "max_invalid": 1},
               "sft_episodes": 64, "steps": 120, "num_groups": 16, "group_size": 8,
               "lr": 2e-5, "max_new_tokens": 32},
    # The CPU demo's variant, with the GPU's budget: many more steps and larger groups.
    "wordle": {"env_id": "textgyms/Wordle-v0", "env_kwargs": demo.WORDLE_VARIANT,
               "sft_episodes": 394, "steps": 200, "num_groups": 16, "group_size": 16,
               "lr": 2e-5, "max_new_tokens": 12},
    "netconfig": {"env_id": "textgyms/NetConfig-v4",
                  "env_kwargs": {"family": "routing", "difficulty": "easy", "max_turns": 8,
                                 "max_invalid": 2},
                  "sft_episodes": 128, "steps": 80, "num_groups": 8, "group_size": 8,
                  "lr": 2e-5, "max_new_tokens": 128},
}


@dataclass
class Args:
    family: Literal["search", "wordle", "netconfig"] = "search"
    """which preset (env, variant, training sizes)"""
    model: str = "smollm2-135m"
    """the model to train (a preset of textgyms.models or a local directory)"""
    env_kwargs: str = ""
    """the variant as JSON (default: the preset's)"""
    episodes: int = 200
    """test-split episodes per evaluation"""
    sft_episodes: int = 0
    """honest train-split games for SFT (0: the preset's)"""
    steps: int = 0
    """GRPO steps at most (0: the preset's)"""
    num_groups: int = 0
    """GRPO tasks per step (0: the preset's)"""
    group_size: int = 0
    """GRPO episodes per task (0: the preset's)"""
    lr: float = 0.0
    """GRPO learning rate (0: the preset's)"""
    max_new_tokens: int = 0
    """tokens per turn, in training and evaluation (0: the preset's)"""
    grpo_seconds: float = 330.0
    """GRPO stops after the step that passes this many seconds (0: every step)"""
    temperature: float = 0.7
    """GRPO's sampling temperature (evaluations decode greedily)"""
    device: str = "auto"
    """where training and the model evaluations run (auto: CUDA when torch sees a GPU)"""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """compute dtype (auto: bfloat16 autocast on CUDA, float32 on the CPU)"""
    seed: int = 0
    """seeds every stage"""
    out: str = "baselines/results/gpu"
    """results: OUT/<family>/<policy>/ per evaluation, train.json, table.md"""
    work: str = "runs/gpu"
    """checkpoints and SFT data: WORK/<family>/"""


def resolved(args: Args) -> tuple[Args, str, dict[str, Any]]:
    """``(args with the preset's defaults, env id, env kwargs)``."""
    preset = PRESETS[args.family]
    fills = {k: preset[k] for k in ("sft_episodes", "steps", "num_groups", "group_size", "lr",
                                    "max_new_tokens") if not getattr(args, k)}
    args = replace(args, **fills)
    kwargs = json.loads(args.env_kwargs) if args.env_kwargs else dict(preset["env_kwargs"])
    return args, preset["env_id"], kwargs


def evaluate_policy(spec: str, name: str, args: Args, env_id: str, kwargs: dict[str, Any]
                    ) -> dict[str, Any]:
    """Evaluate ``spec`` into ``OUT/<family>/<name>`` (a fresh directory); return its
    aggregates for ``env_id``."""
    from textgyms.evaluate import evaluate
    from textgyms.policies import make_policy

    out = Path(args.out) / args.family / name
    shutil.rmtree(out, ignore_errors=True)
    agg = evaluate(make_policy(spec, seed=args.seed), [env_id], episodes=args.episodes, out=out,
                   seed=args.seed, concurrency=args.episodes, env_kwargs=kwargs, progress=False)
    a = agg[env_id]
    print(f"{name:8s} score {a['score']:.3f} ± {a['score_ci95']:.3f}  solved "
          f"{a['solve_rate']:.3f}  invalid/ep {a['invalid']:.2f}", flush=True)
    return a


def hf_spec(model: str, args: Args) -> str:
    """The greedy ``hf:`` spec every model is evaluated with (one batch of all episodes)."""
    return (f"hf:{model}?max_new_tokens={args.max_new_tokens}&tools_in_prompt=false"
            f"&temperature=0&batch_size={args.episodes}&device={args.device}&dtype={args.dtype}")


def train(args: Args, env_id: str, kwargs: dict[str, Any], work: Path) -> dict[str, Any]:
    """SFT on honest games, then GRPO; return both run records."""
    variant = json.dumps(kwargs)
    data = work / "sft-data.jsonl"
    records = list(demo.honest_records(env_id, kwargs, args.sft_episodes, args.seed))
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    sft_run = sft.main(sft.Args(
        model=args.model, env_id=env_id, env_kwargs=variant, data=str(data),
        episodes=len(records), epochs=1, lr=1e-4, batch_size=16, eval_episodes=0,
        seed=args.seed, out=str(work / "sft"), device=args.device, dtype=args.dtype))
    grpo.main(grpo.Args(
        model=str(work / "sft" / "final"), env_id=env_id, env_kwargs=variant,
        num_groups=args.num_groups, group_size=args.group_size, steps=args.steps, lr=args.lr,
        temperature=args.temperature, max_new_tokens=args.max_new_tokens, seed=args.seed,
        max_seconds=args.grpo_seconds, out=str(work / "grpo"), device=args.device,
        dtype=args.dtype))
    grpo_run = json.loads((work / "grpo" / "summary.json").read_text())
    return {"sft_games": len(records), "sft": sft_run, "grpo": grpo_run}


def main(args: Args) -> dict[str, Any]:
    """Run every stage; return ``{"train": ..., "scores": {policy: aggregates}}``."""
    args, env_id, kwargs = resolved(args)
    results, work = Path(args.out) / args.family, Path(args.work) / args.family
    results.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    scores = {p: evaluate_policy(p, p, args, env_id, kwargs) for p in ("random", "blind")}
    scores["smollm2"] = evaluate_policy(hf_spec(args.model, args), "smollm2", args, env_id,
                                        kwargs)
    run = train(args, env_id, kwargs, work)
    shutil.copy(work / "grpo" / "metrics.jsonl", results / "grpo-metrics.jsonl")
    for name in ("sft", "grpo"):
        scores[name] = evaluate_policy(hf_spec(str(work / name / "final"), args), name, args,
                                       env_id, kwargs)
    record = {"args": asdict(args), "env_id": env_id, "env_kwargs": kwargs, **run,
              "wall_time_s": round(time.perf_counter() - started, 1)}
    (results / "train.json").write_text(json.dumps(record, indent=2))
    demo_table.main(demo_table.Args(str(results), prefix="", out=str(results / "table.md")))
    return {"train": record, "scores": scores}


if __name__ == "__main__":
    import tyro

    main(tyro.cli(Args))
