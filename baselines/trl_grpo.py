"""GRPO on any textgyms env through TRL's ``GRPOTrainer``, in one file (CleanRL style).

The same task as ``baselines/grpo.py``, but TRL runs the loop: each dataset row is one task
(``textgyms.wrappers.trl.trl_dataset``: an empty user message and a ``seed``), the env class from
``textgyms.wrappers.trl.environment_factory`` gives every rollout its own env (its prompt is
appended to the user message, its tools become the model's tools), the model answers with
native tool calls that TRL parses and plays on the env, and the env's episode return is the
reward. A GRPO group is ``group_size`` rollouts of the same row, hence of the same task.

Generation runs in the trainer's own model (``--vllm-mode none``, what CPU machines use) or in
vLLM on a GPU, colocated with training or as a separate ``trl vllm-serve`` process.

    python baselines/trl_grpo.py --model tiny-random --env-id textgyms/Wordle-v0 --steps 10
    # on a GPU: trl vllm-serve --model runs/demo/sft/final  (in another shell), then
    python baselines/trl_grpo.py --model runs/demo/sft/final --vllm-mode server --steps 200

``--device`` picks where TRL trains (``auto``: CUDA when torch sees a GPU); ``--dtype``
sets TRL's mixed precision: ``auto`` keeps TRL's default (bfloat16 autocast, on the CPU too),
``float32`` turns it off, ``bfloat16`` / ``float16`` ask for it (TRL scales float16 losses).
The weights stay float32 either way. ``--batch-size`` (rollouts per step) scales the work.

Writes OUT/config.json, OUT/metrics.jsonl (TRL's log, one row per step: rewards, tool-call
frequency, loss, ...), OUT/summary.json (the last step's log, device, GPU name, TRL's bf16/fp16
flags, wall time, peak GPU memory) and OUT/final/ (model and tokenizer, ``save_pretrained``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from textgyms.devices import device_info, peak_gpu_mem_gb, reset_peak_memory, resolve_device
from textgyms.errors import ConfigError


@dataclass
class Args:
    model: str = "tiny-random"
    """model preset (tiny-random, smollm2-135m), a local save_pretrained directory, or a hub id
    already in the local Hugging Face cache"""
    env_id: str = "textgyms/Wordle-v0"
    """registered textgyms env id"""
    env_kwargs: str = "{}"
    """env kwargs as a JSON object, e.g. '{"vocab": "easy"}'"""
    split: str = "train"
    """task split the episodes are drawn from"""
    steps: int = 20
    """optimiser steps (TRL max_steps)"""
    group_size: int = 4
    """rollouts per task (TRL num_generations)"""
    batch_size: int = 8
    """rollouts per optimiser step (a multiple of group_size)"""
    lr: float = 1e-5
    """learning rate"""
    beta: float = 0.0
    """KL penalty weight (0: no reference model)"""
    loss_type: Literal["dapo", "grpo", "dr_grpo", "bnpo"] = "dapo"
    """TRL's loss normaliser"""
    temperature: float = 1.0
    """sampling temperature"""
    max_completion_length: int = 256
    """token budget of a whole rollout's completion (all turns)"""
    max_tool_calls: int = 6
    """tool-calling iterations per rollout (TRL max_tool_calling_iterations)"""
    vllm_mode: Literal["none", "colocate", "server"] = "none"
    """generation: the trainer's model (none), vLLM in the training process (colocate, GPU),
    or a `trl vllm-serve` server (server, GPU)"""
    vllm_server_url: str = "http://127.0.0.1:8000"
    """base URL of the vLLM server (vllm-mode server)"""
    vllm_gpu_memory_utilization: float = 0.3
    """GPU memory share of colocated vLLM"""
    device: str = "auto"
    """where TRL trains and generates: auto (CUDA when torch sees a GPU, else cpu), cpu or cuda
    (for another GPU, set CUDA_VISIBLE_DEVICES)"""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """TRL's mixed precision: auto (TRL's default, bfloat16 autocast), float32 (none),
    bfloat16 or float16; the weights stay float32"""
    seed: int = 0
    """seed of the trainer, the model init (tiny-random) and the first task"""
    out: str = "runs/trl_grpo"
    """output directory"""


def vllm_settings(args: Args) -> dict[str, Any]:
    """The GRPOConfig fields of ``--vllm-mode``; vLLM needs CUDA, so this checks for it."""
    if args.vllm_mode == "none":
        return {"use_vllm": False}
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(
            f"--vllm-mode {args.vllm_mode} needs a CUDA GPU (vLLM does not run on CPU); "
            "use --vllm-mode none to generate with the training model"
        )
    if args.vllm_mode == "server":
        return {"use_vllm": True, "vllm_mode": "server",
                "vllm_server_base_url": args.vllm_server_url}
    return {"use_vllm": True, "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": args.vllm_gpu_memory_utilization}


def precision_settings(args: Args) -> dict[str, Any]:
    """The GRPOConfig fields of ``--device`` and ``--dtype`` (``use_cpu``, ``bf16``, ``fp16``);
    checks that CUDA is there when asked for."""
    where = resolve_device(args.device, "float32")[0]
    if where.type == "cuda" and args.device.strip().lower() not in ("auto", "cuda"):
        raise ConfigError(f"--device {args.device}: TRL trains on the current CUDA device; "
                          "use --device cuda with CUDA_VISIBLE_DEVICES set to the GPU you want")
    out: dict[str, Any] = {"use_cpu": where.type == "cpu"}
    if args.dtype != "auto":  # auto: TRL's own default (bf16 mixed precision, CPU too)
        out.update(bf16=args.dtype == "bfloat16", fp16=args.dtype == "float16")
    return out


def tool_ready(tok: Any) -> Any:
    """``tok``, able to render and parse native tool calls, as GRPOTrainer requires.

    A ChatML tokenizer whose template has no tool support (SmolLM2's renders only ``content``)
    gets the textgyms ChatML template, which adds the tool schemas to the system turn and
    ``<tool_call>`` JSON to assistant turns, and the matching response template; any other
    tokenizer without tool support is an error rather than a silent format change.
    """
    from trl.chat_template_utils import supports_tool_calling

    from textgyms.models import CHAT_TEMPLATE, RESPONSE_TEMPLATE

    if supports_tool_calling(tok):
        return tok
    vocab = tok.get_vocab()
    if "<|im_start|>" not in vocab or tok.eos_token != "<|im_end|>":
        raise ConfigError(
            "the model's chat template cannot render tool calls, which TRL's environment_factory "
            "needs; use a model whose template supports tools"
        )
    tok.chat_template = CHAT_TEMPLATE
    tok.response_template = RESPONSE_TEMPLATE
    return tok


def make_trainer(args: Args, generation_kwargs: dict[str, Any] | None = None) -> Any:
    """Load the model, build the env class, the dataset and the ``GRPOTrainer``.

    ``generation_kwargs`` go to ``generate`` as TRL's ``generation_kwargs`` (e.g. a
    ``sequence_bias``, which has no command-line form).
    """
    from trl import GRPOConfig, GRPOTrainer

    from textgyms.models import load_model
    from textgyms.wrappers.trl import environment_factory, trl_dataset

    kwargs = json.loads(args.env_kwargs)
    if not isinstance(kwargs, dict):
        raise ConfigError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}")
    if args.batch_size % args.group_size:
        raise ConfigError(f"--batch-size {args.batch_size} is not a multiple of --group-size "
                          f"{args.group_size}")
    vllm = vllm_settings(args)
    precision = precision_settings(args)
    import torch

    config = GRPOConfig(
        output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=args.batch_size,
        num_generations=args.group_size, learning_rate=args.lr, beta=args.beta,
        loss_type=args.loss_type, temperature=args.temperature,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls, logging_steps=1, report_to="none",
        save_strategy="no", seed=args.seed, generation_kwargs=generation_kwargs,
        **precision, **vllm,
    )
    where = "cpu" if precision["use_cpu"] else "cuda"
    model, tok = load_model(args.model, seed=args.seed, device=where, dtype=torch.float32)
    env_class = environment_factory(args.env_id, seed=args.seed, **{**kwargs, "split": args.split})
    tasks = max(1, args.steps * args.batch_size // args.group_size)
    return GRPOTrainer(model=model, args=config, processing_class=tool_ready(tok),
                       train_dataset=trl_dataset(tasks, seed=args.seed),
                       environment_factory=env_class)


def main(args: Args, generation_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train; write the log and OUT/final; return the last step's log plus ``reward_key``
    (the log's name for the env's mean reward). See :func:`make_trainer` for the kwargs."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(asdict(args), indent=2))
    started = time.perf_counter()
    trainer = make_trainer(args, generation_kwargs)
    reset_peak_memory(trainer.model.device)
    trainer.train()
    steps = [row for row in trainer.state.log_history if "loss" in row]
    with open(out / "metrics.jsonl", "w") as log:
        log.writelines(json.dumps(row) + "\n" for row in steps)
    trainer.model.save_pretrained(out / "final")
    trainer.processing_class.save_pretrained(out / "final")
    env_name = next(iter(trainer.environment_factories.values())).__name__
    result = {**(steps[-1] if steps else {}), "reward_key": f"rewards/{env_name}/mean"}
    run = {**device_info(trainer.model.device), "bf16": trainer.args.bf16,
           "fp16": trainer.args.fp16, "wall_time_s": round(time.perf_counter() - started, 2),
           "peak_gpu_mem_gb": peak_gpu_mem_gb(trainer.model.device)}
    (out / "summary.json").write_text(json.dumps({**run, **result}, indent=2))
    return result


if __name__ == "__main__":
    import tyro

    print(json.dumps(main(tyro.cli(Args)), indent=2))
