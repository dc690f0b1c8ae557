"""The CPU learning demonstrations: SFT on honest oracle games, then native GRPO.

SmolLM2-135M-Instruct (the offline ``smollm2-135m`` preset) learns one of two variants, each
sized to train within the demo's budget on 2 CPU cores (``--demo``):

- ``search`` (the headline): FictionWeb Search, ``difficulty="lookup"`` (one-hop questions,
  "What is the name of the university that the painter X attended?"), Search-R1 tools
  (``<search>`` returns the top ``k=2`` documents, ``<answer>`` ends the episode), 3 turns,
  one invalid action ends the game. FictionWeb is generated, so no answer is in the model's
  pretraining: it has to search and read.
- ``wordle``: the 500 most frequent answers, three guesses, one invalid action ends the game.

Three stages:

1. SFT data from the train split (:func:`honest_records`): the oracle's games, made honest
   where the oracle knows more than the board or the pages show (Search: answer as soon as
   the answer is on a page shown, and keep only games whose answer was shown; Wordle: the
   solver without its last-guess oracle step, which plays the secret while the board still
   allows several words).
2. ``baselines/sft.py --data``: one pass of assistant-only cross-entropy over those games.
3. ``baselines/grpo.py``: GRPO on the env's own reward, sampling at ``--temperature``; each
   turn ends at the model's end-of-turn token, exactly as in evaluation.

Both stages train the top ``--train-layers`` of the 30 decoder layers (the backward pass stops
there). ``make demo`` then evaluates every model greedily on the test split.

    python baselines/demo.py --demo search --out runs/demo/train-search

Writes OUT/sft-data.jsonl, OUT/sft/, OUT/grpo/ (metrics.jsonl, training.png, final/),
OUT/curves.png (the reward curve and the success / invalid-action curves) and
OUT/summary.json (stage timings and first/last rewards); prints the GRPO reward table.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from baselines import grpo, sft  # noqa: E402

SEARCH_ID, WORDLE_ID = "textgyms/Search-v1", "textgyms/Wordle-v0"
SEARCH_VARIANT = {"difficulty": "lookup", "search_only": True, "k": 2, "max_turns": 3,
                  "max_invalid": 1}
WORDLE_VARIANT = {"vocab": "easy", "max_guesses": 3, "max_invalid": 1}
VARIANT = json.dumps(WORDLE_VARIANT)  # the Wordle demo's variant (earlier name, kept)


@dataclass
class Args:
    demo: Literal["search", "wordle"] = "search"
    """which demo: its env, variant and the defaults below that are left unset"""
    model: str = "smollm2-135m"
    """model preset or local directory"""
    env_id: str = ""
    """registered textgyms env id (default: the demo's)"""
    env_kwargs: str = ""
    """the variant as JSON (default: the demo's)"""
    sft_episodes: int = 0
    """distinct honest games of the train split for SFT (0: the demo's default)"""
    sft_lr: float = 1e-4
    """SFT learning rate"""
    steps: int = 0
    """GRPO steps (0: the demo's default)"""
    num_groups: int = 2
    """GRPO tasks per step"""
    group_size: int = 8
    """GRPO episodes per task"""
    lr: float = 0.0
    """GRPO learning rate (0: the demo's default)"""
    train_layers: int = 15
    """SFT and GRPO train the top N of SmolLM2's 30 decoder layers (the backward pass stops
    there: a step costs about two forward passes instead of three)"""
    micro_batch: int = 32
    """GRPO episodes per forward pass (at least a step's 16: the rules, which every task
    shares, are encoded once per step)"""
    temperature: float = 0.7
    """sampling temperature of GRPO rollouts (`make demo` evaluates every model greedily)"""
    max_new_tokens: int = 0
    """tokens per turn (0: the demo's default; a guess takes 8 to 10, a search or an answer
    up to about 20)"""
    device: str = "auto"
    """where SFT and GRPO run: auto (CUDA when torch sees a GPU, else cpu), cpu, cuda, cuda:N"""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """compute dtype of both stages: auto (bfloat16 autocast on CUDA, float32 on the CPU)"""
    seed: int = 0
    """seeds every stage"""
    out: str = "runs/demo/train"
    """output directory"""


#: Per demo, the defaults of the arguments left at 0 or "". Search's SFT is a short warm-up on
#: purpose: 32 games teach the action format and win about a third of the test games, leaving
#: GRPO groups with both outcomes; after 96 games SFT wins nearly every sampled episode and
#: GRPO's advantages are all 0 (docs/training.md has the measurements).
DEFAULTS: dict[str, dict[str, Any]] = {
    "search": {"env_id": SEARCH_ID, "env_kwargs": json.dumps(SEARCH_VARIANT),
               "sft_episodes": 32, "steps": 20, "lr": 5e-5, "max_new_tokens": 24},
    "wordle": {"env_id": WORDLE_ID, "env_kwargs": VARIANT, "sft_episodes": 394, "steps": 13,
               "lr": 4e-5, "max_new_tokens": 12},
}


def resolved(args: Args) -> Args:
    """``args`` with the demo's defaults filled in where they were left unset."""
    return replace(args, **{k: v for k, v in DEFAULTS[args.demo].items() if not getattr(args, k)})


# ----------------------------------------------------------------------------------------------
# Honest SFT data.


def honest_actions(env: Any) -> list[str]:
    """The actions of an honest game of the episode in progress (``env`` just reset): moves
    that only use what the observations will show (see the module docstring)."""
    u = env.unwrapped
    task = u.task
    if u.spec.id.startswith("textgyms/Wordle-"):
        from textgyms.envs.wordle import solver

        words = solver.solve(task.secret, length=task.length, vocab=task.vocab,
                             hard_mode=task.hard_mode, max_guesses=task.max_guesses,
                             oracle=False)
        return [f"<guess>{w}</guess>" for w in words]
    return u.solve(task)


def play_honest(env: Any, seed: int) -> tuple[dict[str, Any], float, bool]:
    """Play ``seed``'s honest game; return the last info, the final score and whether every
    move was supported by what had been shown (for Search: the answer was on a page shown;
    the oracle's further searches are dropped once it is)."""
    from textgyms.envs.search.verify import normalize

    env.reset(seed=seed)
    u = env.unwrapped
    is_search = u.spec.id.startswith("textgyms/Search-")
    gold = normalize(u.task.answers[0]) if is_search else ""
    shown = False
    for action in honest_actions(env):
        if is_search and shown and not action.startswith("<answer>"):
            continue  # the answer is on screen: searching on would be the oracle's knowledge
        obs, _, term, trunc, info = env.step(action)
        shown = shown or (is_search and f" {gold} " in f" {normalize(obs)} ")
        if term or trunc:
            return info, float(info["score"]), shown or not is_search
    raise RuntimeError(f"seed {seed}: the honest game did not end")


def honest_records(env_id: str, kwargs: dict[str, Any], episodes: int, seed: int = 0
                   ) -> Iterator[dict[str, Any]]:
    """Up to ``episodes`` distinct honest train-split games as chat records (the format of
    ``textgyms export sft --format chat``). Search games whose answer was never shown are
    left out (no observation supports them); Wordle games are kept, solved or not."""
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the envs)

    env = gym.make(env_id, **{**kwargs, "split": "train"})
    seen: set[str] = set()
    try:
        for s in range(seed, seed + episodes * 20):
            info, score, supported = play_honest(env, s)
            task_id = env.unwrapped.task.task_id
            if task_id in seen or not supported:
                continue
            seen.add(task_id)
            yield {"messages": info["messages"], "env_id": env_id,
                   "env_kwargs": json.dumps(kwargs, sort_keys=True), "seed": s,
                   "task_id": task_id, "score": score}
            if len(seen) == episodes:
                return
    finally:
        env.close()


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
    args = resolved(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    data = out / "sft-data.jsonl"
    kwargs = json.loads(args.env_kwargs)
    with open(data, "w", encoding="utf-8") as f:
        records = list(honest_records(args.env_id, kwargs, args.sft_episodes, args.seed))
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    timings["export_s"] = time.perf_counter() - start
    sft_result = sft.main(sft.Args(
        model=args.model, env_id=args.env_id, env_kwargs=args.env_kwargs, data=str(data),
        episodes=len(records), epochs=1, lr=args.sft_lr, batch_size=8, eval_episodes=0,
        train_layers=args.train_layers, seed=args.seed, out=str(out / "sft"),
        device=args.device, dtype=args.dtype))
    timings["sft_s"] = time.perf_counter() - start - timings["export_s"]
    print(f"SFT: {len(records)} games, {sft_result['steps']} steps, loss "
          f"{sft_result['train/loss_first']:.3f} -> {sft_result['train/loss_last']:.3f} "
          f"({timings['sft_s']:.0f} s)", flush=True)
    result = grpo.main(grpo.Args(
        model=str(out / "sft" / "final"), env_id=args.env_id, env_kwargs=args.env_kwargs,
        num_groups=args.num_groups, group_size=args.group_size, steps=args.steps, lr=args.lr,
        temperature=args.temperature, max_new_tokens=args.max_new_tokens, seed=args.seed,
        micro_batch=args.micro_batch, train_layers=args.train_layers, out=str(out / "grpo"),
        device=args.device, dtype=args.dtype))
    timings["train_s"] = time.perf_counter() - start
    timings["grpo_s"] = timings["train_s"] - timings["export_s"] - timings["sft_s"]
    rows = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines()]
    plot_curves(rows, out / "curves.png")
    print(reward_table(rows))
    grpo_run = json.loads((out / "grpo" / "summary.json").read_text())
    summary = {"args": asdict(args), "sft_games": len(records),
               **{k: grpo_run[k] for k in ("device", "gpu_name", "dtype")},
               "peak_gpu_mem_gb": max((m for m in (sft_result["peak_gpu_mem_gb"],
                                                   grpo_run["peak_gpu_mem_gb"]) if m is not None),
                                      default=None),
               "sft_games_solved": sum(r["score"] >= 1.0 for r in records),
               **{k: round(v, 1) for k, v in timings.items()},
               "first_reward": result["first_reward"], "last_reward": result["last_reward"]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"mean reward, first quarter of the steps {result['first_reward']:.3f}, last quarter "
          f"{result['last_reward']:.3f}; SFT {timings['sft_s']:.0f} s + GRPO "
          f"{timings['grpo_s']:.0f} s", flush=True)
    return summary


if __name__ == "__main__":
    import tyro

    main(tyro.cli(Args))
