"""The CPU learning demonstration: SFT warm-up, then native multi-turn GRPO, on easy Wordle.

SmolLM2-135M-Instruct (the offline ``smollm2-135m`` preset) is first fine-tuned lightly on
oracle games (``baselines/sft.py``), just enough to half-learn the ``<guess>word</guess>``
format, then trained with GRPO (``baselines/grpo.py``) on the env's own reward. The variant is
small so that it runs on a 2-core CPU: the 500 most frequent answers, 2 guesses, one invalid
action allowed, short turns. GRPO has signal because some of a group's games are well-formed and
score partial credit while others are not, and the reward curve rises as the policy learns to
play valid words.

    python baselines/demo.py            # writes runs/demo/sft/ and runs/demo/grpo/

It prints a table of the mean reward per GRPO step and writes runs/demo/grpo/training.png.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from baselines import grpo, sft  # noqa: E402


@dataclass
class Args:
    model: str = "smollm2-135m"
    """model preset or local directory"""
    env_id: str = "textgyms/Wordle-v0"
    """registered textgyms env id"""
    env_kwargs: str = '{"vocab": "easy", "max_guesses": 2, "max_invalid": 1}'
    """the easy variant (JSON)"""
    sft_episodes: int = 16
    """oracle games of the SFT warm-up (one pass)"""
    sft_lr: float = 5e-5
    """SFT learning rate"""
    steps: int = 12
    """GRPO steps"""
    num_groups: int = 2
    """GRPO tasks per step"""
    group_size: int = 4
    """GRPO episodes per task"""
    lr: float = 1e-5
    """GRPO learning rate"""
    max_new_tokens: int = 10
    """tokens per turn (a guess is about 7 tokens)"""
    seed: int = 0
    """seeds both stages"""
    out: str = "runs/demo"
    """output directory (sft/ and grpo/ inside)"""


def reward_table(rows: list[dict]) -> str:
    """A Markdown table of the GRPO steps' mean reward, success rate and turns."""
    lines = ["| step | reward | success | turns | policy tokens |", "|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['step']} | {r['reward']:.3f} | {r['success']:.2f} | {r['turns']:.2f} | "
              f"{r['policy_tokens']:.1f} |" for r in rows]
    return "\n".join(lines)


def main(args: Args) -> dict:
    """Run both stages; return GRPO's final metrics (with first/last mean rewards)."""
    start = time.perf_counter()
    out = Path(args.out)
    sft_result = sft.main(sft.Args(
        model=args.model, env_id=args.env_id, env_kwargs=args.env_kwargs,
        episodes=args.sft_episodes, epochs=1, lr=args.sft_lr, batch_size=4, eval_episodes=0,
        seed=args.seed, out=str(out / "sft")))
    print(f"SFT: {sft_result['steps']} steps, loss {sft_result['train/loss_first']:.3f} -> "
          f"{sft_result['train/loss_last']:.3f} ({time.perf_counter() - start:.0f} s)", flush=True)
    result = grpo.main(grpo.Args(
        model=str(out / "sft" / "final"), env_id=args.env_id, env_kwargs=args.env_kwargs,
        num_groups=args.num_groups, group_size=args.group_size, steps=args.steps, lr=args.lr,
        max_new_tokens=args.max_new_tokens, stop=("</guess>",), seed=args.seed,
        out=str(out / "grpo")))
    rows = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines()]
    print(reward_table(rows))
    print(f"mean reward, first {len(rows) // 4 or 1} steps: {result['first_reward']:.3f}; "
          f"last {len(rows) // 4 or 1}: {result['last_reward']:.3f}; "
          f"total {time.perf_counter() - start:.0f} s", flush=True)
    return {**result, "seconds": time.perf_counter() - start}


if __name__ == "__main__":
    import tyro

    main(tyro.cli(Args))
