"""Native multi-turn GRPO over textgyms vector envs, in one file (CleanRL style).

Every step plays ``num_groups`` tasks ``group_size`` times each with
``textgyms.make_vec(..., group_size=G)``. An episode is one token sequence, built token-in /
token-out: the prompt ids, the ids the policy sampled (loss mask 1), the ids of the env's answer
as the chat template frames it (loss mask 0, :func:`textgyms.tokens.next_turn_ids`), the next
sampled ids, and so on until the env says done. Earlier turns are never re-tokenised, so the
policy is trained on exactly the tokens it saw and produced.

Advantages: ``grpo`` normalises each episode's return within its group (every policy token of
the episode gets it); ``rebn`` gives every turn its reward-to-go, normalised over the batch,
which is what dense per-turn rewards (e.g. Wordle ``reward_mode="dense"``) need. Losses: the
PPO-clipped surrogate with clip-higher (``eps_low`` / ``eps_high``), an optional k3 KL penalty to
the initial model, and one of three normalisers: ``grpo`` (mean over each sequence's tokens,
then over sequences), ``dapo`` (mean over all tokens of the batch) and ``dr_grpo`` (sum over
tokens divided by a constant token budget; no std scaling of advantages).

    python baselines/grpo.py --model tiny-random --env-id textgyms/Wordle-v0 --steps 10

On a GPU (``--device auto``, the default, picks CUDA when torch sees one) rollouts and updates
run there under bfloat16 autocast, with float32 weights; the batch scales with
``--num-groups`` x ``--group-size`` (episodes per step), ``--gen-batch-size`` (episodes per
``generate`` call) and ``--micro-batch`` (episodes per forward/backward pass), and a CUDA
out-of-memory error names the one to lower. On the CPU (float32) nothing is cast.

Writes OUT/config.json, OUT/metrics.jsonl, OUT/summary.json (device, GPU name, wall time, peak
GPU memory), OUT/training.png, OUT/checkpoint-<step>/ and OUT/final/.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from textgyms.core import invalid_after
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
from textgyms.prefix import generate_shared, output_head, prefix_hidden
from textgyms.tokens import shared_prefix_len


@dataclass
class Args:
    model: str = "tiny-random"
    """model preset (tiny-random, smollm2-135m) or a local save_pretrained directory"""
    env_id: str = "textgyms/Wordle-v0"
    """registered textgyms env id"""
    envs: str = ""
    """a mixture instead of --env-id, e.g. 'textgyms/Wordle-v0*2,textgyms/Code-v0' or JSON (see
    docs/vectors.md); metrics gain reward/<env>, score/<env>, success/<env> per env"""
    curriculum: str = ""
    """a success-rate curriculum as JSON, e.g. '{"ladders": {"textgyms/Wordle-v0": [{},
    {"hard_mode": true}]}, "window": 16}': it counts each step's episodes; logs
    curriculum/<env>/level"""
    env_kwargs: str = "{}"
    """env kwargs as a JSON object, e.g. '{"vocab": "easy", "max_guesses": 3}'"""
    num_groups: int = 4
    """tasks per step (GRPO groups)"""
    group_size: int = 4
    """episodes per task (G); the members of a group play the same seed"""
    steps: int = 20
    """optimiser steps (one rollout batch each)"""
    lr: float = 1e-5
    """AdamW learning rate"""
    max_new_tokens: int = 32
    """token budget of one policy turn"""
    temperature: float = 1.0
    """sampling temperature (the loss scores tokens at the same temperature)"""
    stop: tuple[str, ...] = ()
    """stop strings that end a turn besides the EOS token, e.g. </guess>"""
    tools_in_prompt: bool = False
    """render the env's tool schemas into the prompt (textgyms prompts already state the format)"""
    loss: Literal["dapo", "dr_grpo", "grpo"] = "dapo"
    """loss normaliser: token mean (dapo), constant budget (dr_grpo), per-sequence mean (grpo)"""
    advantage: Literal["grpo", "rebn"] = "grpo"
    """group-normalised episode return, or per-turn reward-to-go normalised over the batch"""
    gamma: float = 1.0
    """discount of the per-turn reward-to-go (advantage rebn)"""
    beta: float = 0.0
    """weight of the k3 KL penalty to the initial model (0: no reference model is loaded)"""
    eps_low: float = 0.2
    """lower clip range: the ratio is clipped below 1 - eps_low"""
    eps_high: float = 0.28
    """upper clip range (clip-higher): the ratio is clipped above 1 + eps_high"""
    dynamic_sampling: bool = False
    """drop groups whose episodes all got the same return (they carry no signal)"""
    num_iterations: int = 1
    """optimiser steps on each rollout batch (ratios differ from 1 only after the first)"""
    micro_batch: int = 0
    """episodes per forward/backward pass, gradients accumulated (0: one group, whose shared
    prompt is then encoded once)"""
    train_layers: int = 0
    """train only the top N decoder layers and the final norm (0: every parameter)"""
    max_grad_norm: float = 1.0
    """gradient clipping"""
    norm_tokens: int = 0
    """dr_grpo's constant tokens per episode (0: max_new_tokens x the env's turn limit)"""
    device: str = "auto"
    """where the model generates and trains: auto (CUDA when torch sees a GPU, else cpu), cpu,
    cuda or cuda:N (the reference model of --beta too)"""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """compute dtype: auto (bfloat16 on CUDA, float32 on the CPU); bfloat16 runs under autocast
    with float32 weights; float16 is refused (it needs loss scaling)"""
    gen_batch_size: int = 0
    """episodes per generate call (0: every episode still playing, all at once); lower it if
    CUDA runs out of memory while generating"""
    generator: Literal["hf", "vllm"] = "hf"
    """hf: model.generate (CPU/GPU); vllm: a colocated vLLM engine (CUDA only)"""
    vllm_gpu_memory: float = 0.3
    """fraction of GPU memory the colocated vLLM engine may take"""
    out: str = "runs/grpo"
    """output directory"""
    resume: bool = False
    """continue from the latest OUT/checkpoint-<step>"""
    max_seconds: float = 0.0
    """stop after the first step that ends this many seconds after the start (0: run every
    step); for runs that must fit a fixed time on a borrowed GPU"""
    save_every: int = 0
    """write a checkpoint every this many steps (0: only the final model)"""
    seed: int = 0
    """seeds the tasks (step t plays seeds seed + t * num_groups + group) and the sampling"""


# ----------------------------------------------------------------------------------------------
# The maths: pure functions, imported by the tests.


def group_advantages(returns: Sequence[float], group_size: int, scale: bool = True) -> np.ndarray:
    """``(R - mean of its group)``, divided by the group's std when ``scale`` (zero-variance
    groups get 0, not a division by ~0)."""
    r = np.asarray(returns, np.float64).reshape(-1, group_size)
    std = r.std(axis=1, keepdims=True)
    centred = (r - r.mean(axis=1, keepdims=True)) / (np.where(std > 1e-8, std, 1.0) if scale else 1)
    # exactly 0 for equal returns: the mean of equal floats can differ from them by an ulp
    return np.where(std > 1e-8, centred, 0.0).reshape(-1)


def rebn_advantages(
    turn_rewards: Sequence[Sequence[float]], gamma: float = 1.0
) -> list[list[float]]:
    """ReBN: each turn's discounted reward-to-go, normalised over every turn of the batch."""
    togo: list[list[float]] = []
    for rewards in turn_rewards:
        g, row = 0.0, []
        for r in reversed(rewards):
            g = r + gamma * g
            row.append(g)
        togo.append(row[::-1])
    flat = np.asarray([g for row in togo for g in row], np.float64)
    mean, std = (flat.mean(), flat.std()) if flat.size else (0.0, 0.0)
    return [[(g - mean) / std if std > 1e-8 else 0.0 for g in row] for row in togo]


def informative_groups(returns: Sequence[float], group_size: int) -> np.ndarray:
    """One bool per group: do its episodes' returns differ (DAPO's dynamic sampling)?"""
    r = np.asarray(returns, np.float64).reshape(-1, group_size)
    return r.max(axis=1) - r.min(axis=1) > 1e-8


def clipped_token_loss(
    logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor, eps_low: float, eps_high: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token PPO-clip loss ``-min(r A, clip(r, 1-eps_low, 1+eps_high) A)`` and a bool mask
    of the tokens whose clipped term is the active one (no gradient flows through those)."""
    ratio = torch.exp(logp - old_logp)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv
    return -torch.minimum(unclipped, clipped), clipped < unclipped


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimator of KL(policy || reference): ``exp(d) - d - 1``, ``d = ref - logp``."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1


def loss_weights(mask: torch.Tensor, kind: str, norm_tokens: int = 0) -> torch.Tensor:
    """Per-token weights ``w`` (shape of ``mask``, rows are episodes) so the loss is
    ``sum(w * token_loss)``; micro-batches can then be summed without renormalising."""
    mask = mask.float()
    rows = mask.shape[0]
    if kind == "dapo":
        return mask / mask.sum().clamp(min=1)
    if kind == "grpo":
        return mask / (mask.sum(dim=1, keepdim=True).clamp(min=1) * rows)
    if kind == "dr_grpo":
        if norm_tokens < 1:
            raise ConfigError("dr_grpo needs norm_tokens >= 1")
        return mask / (rows * norm_tokens)
    raise ConfigError(f"unknown loss {kind!r}; choose one of: dapo, dr_grpo, grpo")


# ----------------------------------------------------------------------------------------------
# Episodes: one token sequence each, built token-in / token-out.


@dataclass
class Episode:
    """One episode as a token sequence; ``turn_of[t]`` is the policy turn of token t (-1 off
    the loss mask); ``rewards[k]`` is the env reward after turn k; ``invalid`` counts the
    actions the env rejected (malformed or illegal)."""

    ids: list[int]
    mask: list[int] = field(default_factory=list)
    turn_of: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    invalid: int = 0

    def __post_init__(self) -> None:
        self.mask = self.mask or [0] * len(self.ids)
        self.turn_of = self.turn_of or [-1] * len(self.ids)

    def add(self, ids: Sequence[int], policy: bool) -> None:
        """Append generated (``policy``) or template/env ids."""
        self.ids += ids
        self.mask += [int(policy)] * len(ids)
        self.turn_of += [len(self.rewards) if policy else -1] * len(ids)


def cut_completion(tok: Any, ids: list[int], stop: Sequence[str]) -> list[int]:
    """A sampled row up to its EOS or the end of its first stop string (inclusive). A row with
    neither ran to the token budget, so it holds no padding."""
    end = ids.index(tok.eos_token_id) + 1 if tok.eos_token_id in ids else len(ids)
    if stop and any(s in tok.decode(ids[:end]) for s in stop):
        end = next(j + 1 for j in range(end) if any(s in tok.decode(ids[: j + 1]) for s in stop))
    return ids[:end]


def compute_dtype(model: Any, args: Args) -> Any:
    """The dtype forward passes of ``model`` run in: ``--dtype``, with ``auto`` resolved for
    the model's device (bfloat16 on CUDA, float32 on the CPU)."""
    kind = resolve_device(model.device, args.dtype)[1]
    if kind == torch.float16:
        raise ConfigError("--dtype float16 needs loss scaling, which this loop does not do; "
                          "use bfloat16 (or float32)")
    return kind


class HFGenerator:
    """Sampling with ``model.generate`` on the training model itself (left-padded batches)."""

    def __init__(self, model: Any, tok: Any, args: Args) -> None:
        self.model, self.tok, self.args = model, tok, args

    def generate(self, contexts: Sequence[list[int]], seed: int) -> list[list[int]]:
        """One completion per context, in batches of ``--gen-batch-size`` (default: one batch)
        whose shared prefix (the chat template and the env's rules; a group's whole
        first-turn context) is encoded once (:func:`textgyms.prefix.generate_shared`);
        reproducible from ``seed`` (torch's RNG is forked, the CUDA one too)."""
        tok, args = self.tok, self.args
        kwargs: dict[str, Any] = {"max_new_tokens": args.max_new_tokens,
                                  "pad_token_id": tok.pad_token_id,
                                  "eos_token_id": tok.eos_token_id,
                                  "do_sample": args.temperature > 0}
        if args.temperature > 0:
            kwargs.update(temperature=args.temperature, top_p=1.0, top_k=0)
        if args.stop:
            kwargs.update(stop_strings=list(args.stop), tokenizer=tok)
        self.model.eval()
        device = self.model.device
        cuda = [device.index or 0] if device.type == "cuda" else []
        size = args.gen_batch_size or len(contexts)
        rows: list[list[int]] = []
        hint = out_of_memory_hint(f"generating {len(contexts)} completions",
                                  "--gen-batch-size, or --num-groups / --group-size")
        with (torch.random.fork_rng(devices=cuda), torch.no_grad(),
              autocast(device, compute_dtype(self.model, args)), hint):
            torch.manual_seed(seed)
            for start in range(0, len(contexts), size):
                out, _, width = generate_shared(self.model, contexts[start : start + size],
                                                tok.pad_token_id, **kwargs)
                rows += [cut_completion(tok, row[width:].tolist(), args.stop) for row in out]
        return rows

    def before_update(self) -> None:
        """Nothing to free: generation and training share the model."""

    def after_update(self, model: Any) -> None:
        """Nothing to push: generation and training share the model."""


class VLLMGenerator(HFGenerator):
    """A colocated vLLM engine: sleeps during the backward pass, gets the new weights after
    each optimiser step. CUDA only (vLLM is imported here, never at module level)."""

    def __init__(self, model: Any, tok: Any, args: Args) -> None:
        if not torch.cuda.is_available():
            raise ConfigError("--generator vllm needs a CUDA GPU; use --generator hf on CPU")
        try:
            import vllm
        except ImportError as exc:
            raise ConfigError("--generator vllm needs `pip install vllm` (textgyms[vllm])") from exc
        super().__init__(model, tok, args)
        self.vllm = vllm
        # The engine must live in this process so its model can take our weights in place.
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self.llm = vllm.LLM(model=_saved(model, tok, Path(args.out) / "vllm-init"),
                            enable_sleep_mode=True, gpu_memory_utilization=args.vllm_gpu_memory,
                            seed=args.seed, dtype="auto")

    def generate(self, contexts: Sequence[list[int]], seed: int) -> list[list[int]]:
        """Sample from token ids (no re-tokenisation); one seeded request per context."""
        params = [self.vllm.SamplingParams(temperature=self.args.temperature, top_p=1.0,
                                           max_tokens=self.args.max_new_tokens,
                                           stop=list(self.args.stop) or None,
                                           include_stop_str_in_output=True, seed=seed + i)
                  for i in range(len(contexts))]
        prompts = [{"prompt_token_ids": list(c)} for c in contexts]
        outs = self.llm.generate(prompts, params, use_tqdm=False)
        return [cut_completion(self.tok, list(o.outputs[0].token_ids), self.args.stop)
                for o in outs]

    def before_update(self) -> None:
        """Free the engine's KV cache and weights' GPU memory for the backward pass."""
        self.llm.sleep(level=1)

    def after_update(self, model: Any) -> None:
        """Wake the engine and load the updated weights into it, in place."""
        self.llm.wake_up()
        runner = self.llm.llm_engine.model_executor.driver_worker.worker.model_runner
        runner.model.load_weights(((k, v) for k, v in model.state_dict().items()))
        self.llm.reset_prefix_cache()  # cached KV blocks came from the old weights


def _saved(model: Any, tok: Any, path: Path) -> str:
    """Write the model where vLLM can load it from; return the directory."""
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def rollout(gen: HFGenerator, tok: Any, vec: Any, args: Args, step: int) -> list[Episode]:
    """Play one episode per env, all envs in lock step, each turn one batched generation."""
    from textgyms.tokens import next_turn_ids

    _, infos = vec.reset(seed=args.seed + step * vec.num_groups)
    tools = infos[0].get("tools") if args.tools_in_prompt else None
    episodes = [Episode(list(tok.apply_chat_template(
        list(info["messages"]), tools=tools, add_generation_prompt=True, tokenize=True,
        return_dict=False))) for info in infos]
    turn = 0
    while active := [i for i, e in enumerate(episodes) if not e.done]:
        seed = (args.seed * 1_000_003 + step) * 1_009 + turn
        completions = gen.generate([episodes[i].ids for i in active], seed)
        actions = [""] * len(episodes)  # finished envs idle: their autoreset episode is unused
        for i, ids in zip(active, completions):
            episodes[i].add(ids, policy=True)
            actions[i] = tok.decode(ids, skip_special_tokens=True)
        batch = vec.step(actions)
        for i, ids in zip(active, completions):
            ep, info = episodes[i], batch.infos[i]
            ep.rewards.append(float(batch.rewards[i]))
            done = bool(batch.terminated[i] or batch.truncated[i])
            ep.invalid = invalid_after(ep.invalid, info.get("final_info", info) if done else info,
                                       done)
            if done:
                ep.done, ep.info = True, info.get("final_info", info)
            else:
                emitted = bool(ids) and ids[-1] == tok.eos_token_id
                ep.add(next_turn_ids(tok, info["messages"], tools=tools, eos_emitted=emitted),
                       policy=False)
        turn += 1
    return episodes


# ----------------------------------------------------------------------------------------------
# The update.


def token_advantages(episodes: Sequence[Episode], args: Args) -> list[list[float]]:
    """Each episode's per-token advantage (0 off the loss mask)."""
    if args.advantage == "rebn":
        per_turn = rebn_advantages([e.rewards for e in episodes], args.gamma)
    else:
        adv = group_advantages([sum(e.rewards) for e in episodes], args.group_size,
                               scale=args.loss != "dr_grpo")
        per_turn = [[float(a)] * len(e.rewards) for a, e in zip(adv, episodes)]
    return [[turns[k] if k >= 0 else 0.0 for k in e.turn_of]
            for e, turns in zip(episodes, per_turn)]


def pad_right(rows: Sequence[Sequence[float]], value: float, dtype: torch.dtype) -> torch.Tensor:
    """Rows of different lengths as one right-padded (rows, longest) tensor."""
    width = max(map(len, rows))
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], dtype=dtype)


def token_logps(model: Any, ids: torch.Tensor, mask: torch.Tensor, temperature: float
                ) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Log-probs of ``ids[:, s:]`` (right-padded with -1) under ``model`` at ``temperature``,
    the matching mask and ``s``, the length of the prefix the rows share (at least 1).

    Two exact savings (:mod:`textgyms.prefix`): the shared prefix is encoded once and its KV
    cache repeated over the rows (gradients still flow through it), and the vocabulary
    projection runs only on the mask's tokens, whose log-probs are the only ones any loss
    term uses (the others are 0 here).
    """
    s = max(shared_prefix_len(ids, mask), 1)
    rows, width = ids.shape
    attn = (torch.arange(width, device=ids.device)[None] < ids.ne(-1).sum(1, keepdim=True)).long()
    x, targets, m = ids.clamp(min=0), ids[:, s:].clamp(min=0), mask[:, s:]
    scale = 1.0 / max(temperature, 1e-6)
    head = output_head(model)
    if head is None:  # position p predicts token p + 1
        logits = model(input_ids=x, attention_mask=attn).logits[:, s - 1 : -1].float() * scale
        logp = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return logp, m, s
    keep = m.bool()
    hidden = prefix_hidden(model, x, attn, s - 1)[:, :-1][keep]
    chosen = torch.log_softmax(head(hidden).float() * scale, dim=-1)
    chosen = chosen.gather(-1, targets[keep].unsqueeze(-1)).squeeze(-1)
    logp = chosen.new_zeros(keep.shape).masked_scatter(keep, chosen)
    return logp, m, s


def chunk_loss(model: Any, ref: Any, x: torch.Tensor, mask: torch.Tensor, adv: torch.Tensor,
               weights: torch.Tensor, args: Args, cache: dict[str, torch.Tensor]
               ) -> tuple[torch.Tensor, dict[str, float]]:
    """The weighted loss of one micro-batch (``x`` right-padded with -1) and its statistics.
    ``cache`` keeps the micro-batch's old and reference log-probs across iterations."""
    logp, m, s = token_logps(model, x, mask, args.temperature)
    old = cache.setdefault("old", logp.detach()) if args.num_iterations > 1 else logp.detach()
    per_token, clipped = clipped_token_loss(logp, old, adv[:, s:], args.eps_low, args.eps_high)
    kl = torch.zeros_like(logp)
    if ref is not None:
        if "ref" not in cache:
            with torch.no_grad():
                cache["ref"] = token_logps(ref, x, mask, args.temperature)[0]
        kl = kl_k3(logp, cache["ref"])
        per_token = per_token + args.beta * kl
    loss = (per_token * weights[:, s:]).sum()
    return loss, {"kl": float((kl.detach() * m).sum()), "tokens": float(m.sum()),
                  "clipped": float((clipped & m.bool()).sum())}


def update(model: Any, ref: Any, opt: Any, episodes: Sequence[Episode], args: Args,
           norm_tokens: int) -> dict[str, float]:
    """``num_iterations`` optimiser steps on the batch (micro-batched, gradients accumulated),
    on the model's device, forward passes under :func:`textgyms.devices.autocast`."""
    device, kind = model.device, compute_dtype(model, args)
    ids = pad_right([e.ids for e in episodes], -1, torch.long).to(device)  # -1 marks padding
    mask = pad_right([e.mask for e in episodes], 0, torch.long).to(device)
    adv = pad_right(token_advantages(episodes, args), 0.0, torch.float32).to(device)
    weights = loss_weights(mask, args.loss, norm_tokens)
    size = args.micro_batch or args.group_size
    chunks = [slice(i, i + size) for i in range(0, len(episodes), size)]
    caches: list[dict[str, torch.Tensor]] = [{} for _ in chunks]
    sums = {"loss": 0.0, "kl": 0.0, "clipped": 0.0, "tokens": 0.0, "grad_norm": 0.0}
    model.train()
    lower = f"--micro-batch (now {size} episodes per pass)"
    for it in range(args.num_iterations):
        opt.zero_grad(set_to_none=True)
        for rows, cache in zip(chunks, caches):
            width = int(ids[rows].ne(-1).sum(1).max())
            with out_of_memory_hint("training", lower):
                with autocast(device, kind):
                    loss, stats = chunk_loss(model, ref, ids[rows, :width], mask[rows, :width],
                                             adv[rows, :width], weights[rows, :width], args,
                                             cache)
                loss.backward()
            sums["clipped"] += stats["clipped"]  # over every iteration
            sums["tokens"] += stats["tokens"]
            if it == 0:  # loss and KL as measured before any update on this batch
                sums["loss"] += float(loss.detach())
                sums["kl"] += stats["kl"]
        with out_of_memory_hint("taking the optimiser step", "--micro-batch"):
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            opt.step()
        sums["grad_norm"] = sums["grad_norm"] or float(norm)
    model.eval()
    tokens = max(sums["tokens"], 1.0)
    first = tokens / args.num_iterations
    return {"loss": sums["loss"], "kl": sums["kl"] / first, "clip_frac": sums["clipped"] / tokens,
            "grad_norm": sums["grad_norm"]}


# ----------------------------------------------------------------------------------------------
# Metrics, plot, checkpoints.


def episode_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
    """Batch means: return, final score, success, invalid actions, turns, policy and total
    tokens."""
    return {
        "reward": float(np.mean([sum(e.rewards) for e in episodes])),
        "score": float(np.mean([e.info.get("score", 0.0) for e in episodes])),
        "success": float(np.mean([bool(e.info.get("solved")) for e in episodes])),
        "invalid": float(np.mean([e.invalid for e in episodes])),
        "turns": float(np.mean([len(e.rewards) for e in episodes])),
        "policy_tokens": float(np.mean([sum(e.mask) for e in episodes])),
        "tokens": float(np.mean([len(e.ids) for e in episodes])),
    }


PLOTTED = ("reward", "success", "invalid", "turns", "policy_tokens", "kl", "clip_frac",
           "grad_norm")


def plot_metrics(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """One panel per metric of :data:`PLOTTED` against the step, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write files only
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(15, 6.5))
    steps = [r["step"] for r in rows]
    for ax, key in zip(axes.flat, PLOTTED):
        ax.plot(steps, [r.get(key, float("nan")) for r in rows], marker="o", markersize=3)
        ax.set_title(key)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def make_curriculum(args: Args) -> Any:
    """The ``--curriculum`` (None without one), recording only the episodes a step trains on."""
    if not args.curriculum:
        return None
    from textgyms.curriculum import Curriculum

    spec = json_object(args.curriculum, "--curriculum", 'with "ladders"')
    return Curriculum.parse({**spec, "record": "manual"})


def env_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
    """Per-env means of a mixture's episodes: ``reward/<env>``, ``score/<env>``,
    ``success/<env>`` (empty for a single env, whose infos carry no ``env_name``)."""
    by_env: dict[str, list[Episode]] = {}
    for e in episodes:
        if "env_name" in e.info:
            by_env.setdefault(e.info["env_name"], []).append(e)
    out = {}
    for name, eps in sorted(by_env.items()):
        means = episode_metrics(eps)
        out.update({f"{k}/{name}": means[k] for k in ("reward", "score", "success")})
    return out


def plot_env_metrics(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Per-env reward, success and curriculum level against the step, one line per env."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    panels = (("reward/", "reward"), ("success/", "success"), ("curriculum/", "level"))
    for ax, (prefix, title) in zip(axes, panels):
        keys = sorted({k for r in rows for k in r if k.startswith(prefix)
                       and (prefix != "curriculum/" or k.endswith("/level"))})
        for key in keys:  # an env missing from a step's sample is a gap in its line
            ax.plot([r["step"] for r in rows], [r.get(key, float("nan")) for r in rows],
                    marker="o", markersize=3, label=key[len(prefix):].removesuffix("/level"))
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if keys:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def latest_checkpoint(out: Path) -> tuple[int, Path | None]:
    """``(step, directory)`` of the newest ``checkpoint-<step>`` in ``out``, or ``(0, None)``."""
    found = [(int(m.group(1)), p) for p in out.glob("checkpoint-*")
             if (m := re.fullmatch(r"checkpoint-(\d+)", p.name)) and (p / "trainer.pt").exists()]
    return max(found) if found else (0, None)


def save_checkpoint(out: Path, step: int, model: Any, tok: Any, opt: Any) -> Path:
    """Model, tokenizer, optimiser state, step and torch RNG state in ``out/checkpoint-<step>``
    (``trainer.pt`` is written last: a checkpoint without it is incomplete and ignored)."""
    path = out / f"checkpoint-{step}"
    model.save_pretrained(path)
    tok.save_pretrained(path)
    torch.save({"optimizer": opt.state_dict(), "step": step, "rng": torch.get_rng_state()},
               path / "trainer.pt")
    return path


def read_metrics(path: Path, upto: int) -> list[dict[str, Any]]:
    """The logged rows of steps ``<= upto`` (a resumed run drops what came after its checkpoint)."""
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["step"] <= upto]


# ----------------------------------------------------------------------------------------------
# The script.


def setup(args: Args, out: Path) -> tuple[Any, Any, Any, Any, int]:
    """``(model, tokenizer, reference or None, optimiser, first step)``, resumed if asked; the
    models on ``--device`` with float32 weights (``--dtype`` is the compute dtype)."""
    from textgyms.models import load_model, train_top_layers

    where = resolve_device(args.device, args.dtype)[0]
    start, ckpt = latest_checkpoint(out) if args.resume else (0, None)
    model, tok = load_model(str(ckpt) if ckpt else args.model, seed=args.seed, device=where,
                            dtype=torch.float32)
    train_top_layers(model, args.train_layers)
    ref = None
    if args.beta > 0:  # the reference is always the initial model, resumed or not
        ref = load_model(args.model, seed=args.seed, device=where, dtype=torch.float32)[0]
        ref = ref.eval().requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.0)
    if ckpt is not None:
        state = torch.load(ckpt / "trainer.pt", weights_only=False)
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
    return model, tok, ref, opt, start


def json_object(text: str, flag: str, what: str = "") -> dict[str, Any]:
    """``text`` parsed as the JSON object ``flag`` takes, or a ConfigError naming ``flag``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{flag} must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} must be a JSON object {what}".rstrip())
    return value


def check_args(args: Args) -> dict[str, Any]:
    """Validate the arguments; return the parsed env kwargs."""
    env_kwargs = json_object(args.env_kwargs, "--env-kwargs")
    for name in ("num_groups", "group_size", "steps", "max_new_tokens", "num_iterations"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be >= 1")
    if args.gen_batch_size < 0 or args.micro_batch < 0:
        raise ConfigError("--gen-batch-size and --micro-batch must be >= 0 (0: the default)")
    resolve_device(args.device, args.dtype)  # a bad --device or --dtype fails before any work
    if not (0 <= args.eps_low < 1 and args.eps_high >= 0 and args.beta >= 0):
        raise ConfigError("need 0 <= eps_low < 1, eps_high >= 0 and beta >= 0")
    return env_kwargs


def main(args: Args) -> dict[str, Any]:
    """Train; return the last step's metrics plus ``first``/``last`` mean rewards."""
    import gymnasium as gym

    import textgyms

    env_kwargs = check_args(args)
    started = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model, tok, ref, opt, start = setup(args, out)
    compute_dtype(model, args)  # float16 is refused before any rollout
    gen = (VLLMGenerator if args.generator == "vllm" else HFGenerator)(model, tok, args)
    cur = make_curriculum(args)
    vec = textgyms.make_vec(args.envs or args.env_id, args.num_groups * args.group_size,
                            group_size=args.group_size, env_kwargs=env_kwargs, curriculum=cur)
    norm_tokens = args.norm_tokens or args.max_new_tokens * max(
        int(gym.make(e.env_id, **{**env_kwargs, **e.kwargs}).unwrapped.max_turns)
        for e in textgyms.Mixture.parse(args.envs or [args.env_id]).entries)
    rows = read_metrics(out / "metrics.jsonl", start)
    (out / "config.json").write_text(json.dumps(asdict(args), indent=2))
    with vec, open(out / "metrics.jsonl", "w") as log:
        log.writelines(json.dumps(r) + "\n" for r in rows)
        for step in range(start, args.steps):
            rows.append(train_step(gen, model, ref, opt, tok, vec, args, step, norm_tokens, cur))
            log.write(json.dumps(rows[-1]) + "\n")
            log.flush()
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in rows[-1].items()), flush=True)
            if args.save_every and (step + 1) % args.save_every == 0:
                save_checkpoint(out, step + 1, model, tok, opt)
            if args.max_seconds and time.perf_counter() - started > args.max_seconds:
                print(f"--max-seconds {args.max_seconds:g} reached after step {step + 1}",
                      flush=True)
                break
    model.save_pretrained(out / "final")
    tok.save_pretrained(out / "final")
    plot_metrics(rows, out / "training.png")
    if args.envs or cur is not None:
        plot_env_metrics(rows, out / "training_envs.png")
    k = max(1, len(rows) // 4)
    result = {**rows[-1], "first_reward": float(np.mean([r["reward"] for r in rows[:k]])),
              "last_reward": float(np.mean([r["reward"] for r in rows[-k:]]))}
    (out / "summary.json").write_text(json.dumps(
        {**run_record(model, args, started, rows), **result}, indent=2))
    return result


def run_record(model: Any, args: Args, started: float, rows: Sequence[dict[str, Any]]
               ) -> dict[str, Any]:
    """Where and how long the run ran: device, GPU name (null on the CPU), compute dtype, wall
    time and the largest per-step peak GPU memory (null on the CPU)."""
    peaks = [r["gpu_mem_gb"] for r in rows if r.get("gpu_mem_gb") is not None]
    return {**device_info(model.device), "dtype": dtype_name(compute_dtype(model, args)),
            "torch": torch.__version__, "wall_time_s": round(time.perf_counter() - started, 2),
            "peak_gpu_mem_gb": max(peaks) if peaks else None, "steps_run": len(rows)}


def train_step(gen: HFGenerator, model: Any, ref: Any, opt: Any, tok: Any, vec: Any, args: Args,
               step: int, norm_tokens: int, cur: Any = None) -> dict[str, Any]:
    """Roll out, filter (dynamic sampling), update, push weights; return the step's metrics
    (on CUDA with ``gpu_mem_gb``, the step's peak GPU memory)."""
    reset_peak_memory(model.device)
    t0 = time.perf_counter()
    episodes = rollout(gen, tok, vec, args, step)
    t1 = time.perf_counter()
    row: dict[str, Any] = {"step": step + 1, **episode_metrics(episodes), **env_metrics(episodes)}
    if cur is not None:  # the episodes this step trains on move the levels of the next step
        for e in episodes:
            cur.record_info(e.info)
        row.update(cur.metrics())
    keep = np.ones(len(episodes) // args.group_size, bool)
    if args.dynamic_sampling:
        keep = informative_groups([sum(e.rewards) for e in episodes], args.group_size)
    kept = [e for i, e in enumerate(episodes) if keep[i // args.group_size]]
    row["groups_kept"] = int(keep.sum())
    stats = {"loss": 0.0, "kl": 0.0, "clip_frac": 0.0, "grad_norm": 0.0}
    if kept:
        gen.before_update()
        stats = update(model, ref, opt, kept, args, norm_tokens)
        gen.after_update(model)
    row.update(stats, gen_s=round(t1 - t0, 2), train_s=round(time.perf_counter() - t1, 2))
    if (peak := peak_gpu_mem_gb(model.device)) is not None:  # CUDA only: CPU rows unchanged
        row["gpu_mem_gb"] = peak
    return {k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v)
            for k, v in row.items()}


if __name__ == "__main__":
    import tyro

    main(tyro.cli(Args))
