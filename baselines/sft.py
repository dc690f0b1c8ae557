"""Supervised fine-tuning on oracle trajectories of any textgyms env, in one file (CleanRL style).

Every env family can solve its own tasks (``env.unwrapped.solve(task)``). This script plays
``episodes`` tasks with those oracle actions, renders each transcript (``info["messages"]``)
with the model's chat template and fine-tunes the model with cross-entropy on the assistant
tokens only: :func:`textgyms.tokens.episode_tokens` gives the token ids and the loss mask (1 on
the policy's turns, end-of-turn token included; 0 on the template and on the env's text), so
the model learns to act, never to predict the environment. It is the warm-up before RL: a model
that already speaks the env's action format gives GRPO rewards to work with.

    python baselines/sft.py --model smollm2-135m --env-id textgyms/Wordle-v0 \\
        --env-kwargs '{"vocab": "easy"}' --episodes 200 --epochs 1 --lr 5e-5 --seed 0 \\
        --out runs/demo/sft

With ``--data FILE.jsonl`` it trains on the records of ``textgyms export sft`` instead (chat
or tool-call format; ``--tools-in-prompt`` renders the records' ``tools``), so one exported file
feeds this script, TRL's ``SFTTrainer`` and a later ``baselines/trl_grpo.py --model OUT/final``.

On a GPU (``--device auto``, the default, picks CUDA when torch sees one) the forward passes run
under bfloat16 autocast with float32 weights; ``--batch-size`` (episodes per optimiser step,
one forward pass) scales with its memory, and a CUDA out-of-memory error names it. On the CPU
(float32) nothing is cast.

Writes OUT/config.json, OUT/metrics.jsonl (one row per optimiser step, plus held-out loss rows
before and after training), OUT/summary.json (the final metrics, the device, GPU name, wall
time and peak GPU memory) and OUT/final/ (model and tokenizer, ``save_pretrained``; load it
with ``textgyms.models.load_model("OUT/final")``). The run is deterministic given ``--seed``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from textgyms.devices import (
    autocast,
    device_info,
    dtype_name,
    out_of_memory_hint,
    peak_gpu_mem_gb,
    reset_peak_memory,
    resolve_device,
)
from textgyms.errors import ConfigError
from textgyms.export import play_oracle
from textgyms.prefix import output_head, prefix_hidden
from textgyms.tokens import shared_prefix_len


@dataclass
class Args:
    model: str = "tiny-random"
    """model preset (tiny-random, smollm2-135m), a local save_pretrained directory, or a hub id
    already in the local Hugging Face cache"""
    env_id: str = "textgyms/Wordle-v0"
    """registered textgyms env id"""
    env_kwargs: str = "{}"
    """env kwargs as a JSON object, e.g. '{"vocab": "easy"}'"""
    data: str | None = None
    """a JSONL file from `textgyms export sft` (chat or tools format) to train on instead of
    playing the oracle here; --episodes then caps how many of its records are used"""
    split: str = "train"
    """task split the training episodes are drawn from (train, test or all)"""
    episodes: int = 200
    """oracle episodes to train on (seeds seed, seed+1, ...)"""
    epochs: int = 1
    """passes over the episodes"""
    lr: float = 5e-5
    """AdamW learning rate (constant after a linear warm-up)"""
    warmup_steps: int = 5
    """optimiser steps of linear learning-rate warm-up"""
    weight_decay: float = 0.0
    """AdamW weight decay"""
    batch_size: int = 8
    """episodes per optimiser step"""
    train_layers: int = 0
    """train only the top N decoder layers and the final norm (0: every parameter)"""
    max_length: int = 2048
    """episodes longer than this many tokens are cut to it (counted in the metrics)"""
    max_steps: int | None = None
    """stop after this many optimiser steps (default: epochs over all episodes)"""
    max_grad_norm: float = 1.0
    """gradient-norm clip"""
    eval_episodes: int = 16
    """held-out oracle episodes (split eval_split) scored before and after training (0: none)"""
    eval_split: str = "test"
    """task split of the held-out episodes"""
    tools_in_prompt: bool = False
    """render the env's tool schemas into the prompt (same flag as baselines/grpo.py)"""
    device: str = "auto"
    """where the model trains: auto (CUDA when torch sees a GPU, else cpu), cpu, cuda or cuda:N"""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """compute dtype: auto (bfloat16 on CUDA, float32 on the CPU); bfloat16 runs under autocast
    with float32 weights; float16 is refused (it needs loss scaling)"""
    seed: int = 0
    """seed of the model init (tiny-random), the episode order and the env tasks"""
    out: str = "runs/sft"
    """output directory"""


# ----------------------------------------------------------------------------------------------
# Oracle data.


def oracle_transcripts(args: Args, split: str, n: int, first_seed: int) -> list[dict[str, Any]]:
    """Play ``n`` episodes with the env's oracle; return each ``{"messages", "tools", "score"}``.

    Episode ``i`` is reset with seed ``first_seed + i``, so the tasks are reproducible.
    """
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the envs)

    kwargs = json.loads(args.env_kwargs)
    if not isinstance(kwargs, dict):
        raise ConfigError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}")
    env = gym.make(args.env_id, **{**kwargs, "split": split})
    out = []
    try:
        for i in range(n):
            tools, info, reward = play_oracle(env, first_seed + i)
            out.append({"messages": info["messages"], "tools": tools or None, "score": reward})
    finally:
        env.close()
    return out


def read_export(path: str, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` records of a ``textgyms export sft`` file as transcripts (the
    ``tools`` column is a JSON string there, a list here)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if len(out) == limit:
                break
            if not line.strip():
                continue
            rec = json.loads(line)
            tools = rec.get("tools")
            out.append({"messages": rec["messages"], "score": rec.get("score", 1.0),
                        "tools": json.loads(tools) if isinstance(tools, str) else tools})
    if not out:
        raise ConfigError(f"--data {path}: no records")
    return out


def tokenize(tok: Any, transcripts: Sequence[dict[str, Any]], args: Args) -> list[dict[str, Any]]:
    """Token ids and assistant-only loss masks, cut to ``max_length``.

    ``episode_tokens`` checks that the chat template only appends (ContextDriftError
    otherwise), so the masked tokens are exactly what the model would generate in the same
    conversation at inference time.
    """
    from textgyms.tokens import episode_tokens

    rows = []
    for t in transcripts:
        et = episode_tokens(tok, t["messages"], tools=t["tools"] if args.tools_in_prompt else None)
        # The env's last answer (after the policy's last token) has no target: drop it.
        end = max((i + 1 for i, m in enumerate(et.loss_mask) if m), default=0)
        rows.append({"input_ids": et.input_ids[: min(end, args.max_length)],
                     "loss_mask": et.loss_mask[: min(end, args.max_length)],
                     "truncated": end > args.max_length})
    return rows


def collate(rows: Sequence[dict[str, Any]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad a batch: ``input_ids``, ``attention_mask`` and ``loss_mask`` (0 on padding)."""
    width = max(len(r["input_ids"]) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        n = len(r["input_ids"])
        ids[i, :n] = torch.tensor(r["input_ids"])
        attn[i, :n] = 1
        mask[i, :n] = torch.tensor(r["loss_mask"])
    return {"input_ids": ids, "attention_mask": attn, "loss_mask": mask}


# ----------------------------------------------------------------------------------------------
# The loss.


def masked_nll(
    logits: torch.Tensor, input_ids: torch.Tensor, loss_mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss, correct)``: mean next-token cross-entropy over the tokens with ``loss_mask`` 1,
    and how many of them the model's argmax predicts.

    Position ``t`` of ``logits`` predicts token ``t + 1``; only targets on the mask count, so
    the env's text and the template never contribute a loss or a gradient.
    """
    targets, keep = input_ids[:, 1:], loss_mask[:, 1:].bool()
    picked = logits[:, :-1][keep].float()
    if picked.shape[0] == 0:
        raise ValueError("the batch has no assistant tokens to train on")
    loss = torch.nn.functional.cross_entropy(picked, targets[keep])
    return loss, (picked.argmax(-1) == targets[keep]).sum()


def shared_prefix(batch: dict[str, torch.Tensor]) -> int:
    """Length of the token prefix every row of the batch shares, stopped before the position
    that predicts the batch's first policy token (so every loss position lies after it)."""
    first = int(batch["loss_mask"].float().argmax(-1).min())  # earliest policy token of any row
    return max(0, min(shared_prefix_len(batch["input_ids"], batch["loss_mask"]), first - 1))


def on_device(batch: dict[str, torch.Tensor], model: Any) -> dict[str, torch.Tensor]:
    """A collated batch on the model's device (the same tensors on the CPU)."""
    return {k: v.to(model.device) for k, v in batch.items()}


def compute_dtype(model: Any, args: Args) -> Any:
    """The dtype forward passes run in: ``--dtype``, ``auto`` resolved for the model's device."""
    kind = resolve_device(model.device, args.dtype)[1]
    if kind == torch.float16:
        raise ConfigError("--dtype float16 needs loss scaling, which this script does not do; "
                          "use bfloat16 (or float32)")
    return kind


def batch_loss(model: Any, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`masked_nll` of ``model`` on a collated batch, computed with less work.

    Two exact savings: the output layer runs only where a target is on the mask (a few percent
    of a transcript's tokens; for a small model the vocabulary projection is a fifth of the
    compute), and the prompt every row shares (an env's instructions are the same for every
    task) runs once, its key/value cache repeated across the batch; gradients flow through
    that cache, so the result equals the plain computation. Models whose head is more than one
    linear layer (Gemma's logit soft-capping) take the plain path through ``model(...).logits``.
    """
    ids, attn, mask = batch["input_ids"], batch["attention_mask"], batch["loss_mask"]
    head = output_head(model)
    if head is None:
        return masked_nll(model(input_ids=ids, attention_mask=attn).logits, ids, mask)
    start = shared_prefix(batch) if ids.shape[0] > 1 else 0
    hidden = prefix_hidden(model, ids, attn, start)
    keep = mask[:, start + 1 :].bool()
    logits = head(hidden[:, :-1][keep]).float()
    targets = ids[:, start + 1 :][keep]
    if targets.numel() == 0:
        raise ValueError("the batch has no assistant tokens to train on")
    loss = torch.nn.functional.cross_entropy(logits, targets)
    return loss, (logits.argmax(-1) == targets).sum()


@torch.no_grad()
def evaluate(model: Any, rows: Sequence[dict[str, Any]], pad_id: int, batch_size: int,
             kind: Any = torch.float32) -> dict:
    """Token-weighted held-out loss and greedy token accuracy on the assistant tokens
    (forward passes in the compute dtype ``kind``)."""
    was_training = model.training
    model.eval()
    nll = correct = count = 0.0
    for i in range(0, len(rows), batch_size):
        batch = on_device(collate(rows[i : i + batch_size], pad_id), model)
        n = float(batch["loss_mask"][:, 1:].sum())
        with out_of_memory_hint("scoring held-out episodes", "--batch-size"), \
                autocast(model.device, kind):
            loss, right = batch_loss(model, batch)
        nll, correct, count = nll + float(loss) * n, correct + float(right), count + n
    model.train(was_training)
    return {"eval/loss": nll / count, "eval/token_acc": correct / count}


# ----------------------------------------------------------------------------------------------
# Training.


def batches(n_rows: int, args: Args) -> list[list[int]]:
    """The row indices of every optimiser step: a seeded shuffle per epoch, cut at max_steps."""
    gen = torch.Generator().manual_seed(args.seed)
    order = [i for _ in range(args.epochs) for i in torch.randperm(n_rows, generator=gen).tolist()]
    steps = [order[i : i + args.batch_size] for i in range(0, len(order), args.batch_size)]
    return steps if args.max_steps is None else steps[: args.max_steps]


def train(model: Any, rows: list[dict[str, Any]], pad_id: int, args: Args, log: Any) -> list:
    """AdamW over the steps of :func:`batches`; writes one metrics row per step; returns them."""
    from tqdm.auto import tqdm

    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, args.warmup_steps)))
    model.train()
    kind = compute_dtype(model, args)
    lower = f"--batch-size (now {args.batch_size} episodes per step) or --max-length"
    history, start = [], time.perf_counter()
    for step, idx in enumerate(bar := tqdm(batches(len(rows), args), desc="sft")):
        batch = on_device(collate([rows[i] for i in idx], pad_id), model)
        with out_of_memory_hint("training", lower):
            with autocast(model.device, kind):
                loss, right = batch_loss(model, batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            opt.step()
        sched.step()
        tokens = int(batch["loss_mask"][:, 1:].sum())
        row = {"step": step + 1, "train/loss": loss.item(),
               "train/token_acc": right.item() / tokens, "train/grad_norm": norm.item(),
               "train/tokens": tokens,
               "lr": sched.get_last_lr()[0], "time": time.perf_counter() - start}
        if not math.isfinite(row["train/loss"]):
            raise FloatingPointError(f"non-finite loss at step {step + 1}")
        history.append(row)
        log.write(json.dumps(row) + "\n")
        log.flush()
        bar.set_postfix(loss=f"{row['train/loss']:.3f}")
    return history


def summary(history: list[dict], before: dict, after: dict, rows: list, start: float) -> dict:
    """The final metrics :func:`main` returns."""
    last = history[-min(5, len(history)):]
    return {
        "steps": len(history),
        "episodes": len(rows),
        "truncated_episodes": sum(r["truncated"] for r in rows),
        "assistant_tokens": sum(sum(r["loss_mask"]) for r in rows),
        "tokens": sum(len(r["input_ids"]) for r in rows),
        "train/loss_first": history[0]["train/loss"] if history else float("nan"),
        "train/loss_last": sum(r["train/loss"] for r in last) / max(1, len(last)),
        **{f"{k}_before": v for k, v in before.items()},
        **{f"{k}_after": v for k, v in after.items()},
        "seconds": time.perf_counter() - start,
    }


def main(args: Args) -> dict[str, Any]:
    """Collect oracle episodes, fine-tune, save OUT/final; return the final metrics."""
    from textgyms.models import load_model, train_top_layers

    start = time.perf_counter()
    where = resolve_device(args.device, args.dtype)[0]  # a bad --device fails before any work
    torch.manual_seed(args.seed)  # the model's own randomness (dropout, if it has any)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(asdict(args), indent=2))
    model, tok = load_model(args.model, seed=args.seed, device=where, dtype=torch.float32)
    reset_peak_memory(where)  # the peak is this run's (a test process may have run others)
    kind = compute_dtype(model, args)
    train_top_layers(model, args.train_layers)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    transcripts = (read_export(args.data, args.episodes) if args.data
                   else oracle_transcripts(args, args.split, args.episodes, args.seed))
    rows = tokenize(tok, transcripts, args)
    held = tokenize(tok, oracle_transcripts(args, args.eval_split, args.eval_episodes,
                                            args.seed + 1_000_000), args)
    with open(out / "metrics.jsonl", "w") as log:
        before = evaluate(model, held, pad_id, args.batch_size, kind) if held else {}
        log.write(json.dumps({"step": 0, **before}) + "\n")
        history = train(model, rows, pad_id, args, log)
        after = evaluate(model, held, pad_id, args.batch_size, kind) if held else {}
        log.write(json.dumps({"step": len(history), **after}) + "\n")
    model.eval()
    model.save_pretrained(out / "final")
    tok.save_pretrained(out / "final")
    result = {**summary(history, before, after, rows, start), **device_info(model.device),
              "dtype": dtype_name(kind), "peak_gpu_mem_gb": peak_gpu_mem_gb(model.device)}
    (out / "summary.json").write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    import tyro

    print(json.dumps(main(tyro.cli(Args)), indent=2))
