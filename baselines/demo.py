"""The CPU learning demonstration: SFT warm-up on exported oracle games, then native GRPO.

SmolLM2-135M-Instruct (the offline ``smollm2-135m`` preset) plays a short Wordle variant: the
500 most frequent answers, three guesses, and one invalid action ends the game. Three stages,
sized to train in under 15 minutes on 2 CPU cores:

1. ``textgyms export sft``: every distinct oracle game of the train split (394, one per train
   answer; the test split's answers never appear), in chat format (:mod:`textgyms.export`).
2. ``baselines/sft.py --data``: one pass of assistant-only cross-entropy over those games. The
   model learns the action format, the solver's opening word and a valid second word.
3. ``baselines/grpo.py``: GRPO on the env's own reward, sampling at temperature 0.7; each turn
   ends at the model's end-of-turn token, exactly as in evaluation.

Both stages train the top 15 of the 30 decoder layers (``--train-layers``): the backward pass
stops there, which is what fits the budget. ``make demo`` then evaluates every model greedily.

    python baselines/demo.py --out runs/demo/train

Writes OUT/sft-data.jsonl, OUT/sft/, OUT/grpo/ (metrics.jsonl, training.png, final/),
OUT/curves.png (the reward curve and the success / invalid-action curves) and
OUT/summary.json (stage timings and first/last rewards); prints the GRPO reward table.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from baselines import grpo, sft  # noqa: E402

VARIANT = '{"vocab": "easy", "max_guesses": 3, "max_invalid": 1}'


@dataclass
class Args:
    model: str = "smollm2-135m"
    """model preset or local directory"""
    env_id: str = "textgyms/Wordle-v0"
    """registered textgyms env id"""
    env_kwargs: str = VARIANT
    """the demo variant (JSON)"""
    sft_episodes: int = 394
    """distinct oracle games of the train split for SFT (of 394, one per train answer)"""
    sft_lr: float = 1e-4
    """SFT learning rate"""
    steps: int = 13
    """GRPO steps"""
    num_groups: int = 2
    """GRPO tasks per step"""
    group_size: int = 8
    """GRPO episodes per task"""
    lr: float = 4e-5
    """GRPO learning rate"""
    train_layers: int = 15
    """SFT and GRPO train the top N of SmolLM2's 30 decoder layers (the backward pass stops
    there: a step costs about two forward passes instead of three)"""
    micro_batch: int = 32
    """GRPO episodes per forward pass (at least a step's 16: the rules, which every task
    shares, are encoded once per step)"""
    temperature: float = 0.7
    """sampling temperature of GRPO rollouts (`make demo` evaluates every model greedily)"""
    max_new_tokens: int = 12
    """tokens per turn (a guess and its end-of-turn token take 8 to 10)"""
    seed: int = 0
    """seeds every stage"""
    out: str = "runs/demo/train"
    """output directory"""


def reward_table(rows: list[dict]) -> str:
    """A Markdown table of the GRPO steps' mean reward, success, invalid actions and turns."""
    lines = ["| step | reward | success | invalid/ep | turns |", "|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['step']} | {r['reward']:.3f} | {r['success']:.2f} | "
              f"{r.get('invalid', float('nan')):.2f} | {r['turns']:.2f} |" for r in rows]
    return "\n".join(lines)


def moving_average(values: list[float], window: int) -> list[float]:
    """The mean of each value and up to ``window - 1`` values before it."""
    return [sum(values[max(0, i - window + 1): i + 1]) / (i + 1 - max(0, i - window + 1))
            for i in range(len(values))]


def plot_curves(rows: list[dict], path: Path, window: int = 5) -> None:
    """Two panels: the mean reward per step, and success rate and invalid actions per episode
    (thin: per step; thick: moving average over ``window`` steps)."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write files only
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for ax, keys in ((left, ("reward",)), (right, ("success", "invalid"))):
        for key in keys:
            values = [float(r.get(key, float("nan"))) for r in rows]
            line = ax.plot(steps, values, alpha=0.35, linewidth=1)[0]
            ax.plot(steps, moving_average(values, window), color=line.get_color(), linewidth=2,
                    label=key if key != "invalid" else "invalid actions / episode")
        ax.set_xlabel("GRPO step")
        ax.grid(alpha=0.3)
        ax.legend()
    left.set_title("mean episode reward")
    right.set_title("success and invalid actions")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(args: Args) -> dict:
    """Run the three stages; return the timings and GRPO's first/last mean rewards."""
    from textgyms.export import ExportSource, export_sft

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    data = out / "sft-data.jsonl"
    export_sft([ExportSource(args.env_id, json.loads(args.env_kwargs))], args.sft_episodes,
               data, "chat", seed=args.seed, progress=False)
    timings["export_s"] = time.perf_counter() - start
    sft_result = sft.main(sft.Args(
        model=args.model, env_id=args.env_id, env_kwargs=args.env_kwargs, data=str(data),
        episodes=args.sft_episodes, epochs=1, lr=args.sft_lr, batch_size=8, eval_episodes=0,
        train_layers=args.train_layers, seed=args.seed, out=str(out / "sft")))
    timings["sft_s"] = time.perf_counter() - start - timings["export_s"]
    print(f"SFT: {sft_result['steps']} steps, loss {sft_result['train/loss_first']:.3f} -> "
          f"{sft_result['train/loss_last']:.3f} ({timings['sft_s']:.0f} s)", flush=True)
    result = grpo.main(grpo.Args(
        model=str(out / "sft" / "final"), env_id=args.env_id, env_kwargs=args.env_kwargs,
        num_groups=args.num_groups, group_size=args.group_size, steps=args.steps, lr=args.lr,
        temperature=args.temperature, max_new_tokens=args.max_new_tokens, seed=args.seed,
        micro_batch=args.micro_batch, train_layers=args.train_layers, out=str(out / "grpo")))
    timings["train_s"] = time.perf_counter() - start
    timings["grpo_s"] = timings["train_s"] - timings["export_s"] - timings["sft_s"]
    rows = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines()]
    plot_curves(rows, out / "curves.png")
    print(reward_table(rows))
    summary = {"args": asdict(args), **{k: round(v, 1) for k, v in timings.items()},
               "first_reward": result["first_reward"], "last_reward": result["last_reward"]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"mean reward, first quarter of the steps {result['first_reward']:.3f}, last quarter "
          f"{result['last_reward']:.3f}; SFT {timings['sft_s']:.0f} s + GRPO "
          f"{timings['grpo_s']:.0f} s", flush=True)
    return summary


if __name__ == "__main__":
    import tyro

    main(tyro.cli(Args))
