#!/usr/bin/env bash
# GRPO with verl on textgyms Search + Code (Qwen3-1.7B, 8 GPUs): export the tasks, then run
# verl's trainer with examples/verl/textgyms_grpo.yaml. Extra arguments are Hydra overrides,
# e.g. trainer.n_gpus_per_node=4.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
KWARGS='{"textgyms/Search-v1": {"max_turns": 6}, "textgyms/Code-v0": {"max_turns": 6}}'
if [ ! -f data/verl/train.parquet ]; then
    textgyms export tasks --envs textgyms/Search-v1,textgyms/Code-v0 --kwargs "$KWARGS" \
        --split train --episodes 2048 --for verl --out data/verl/train.parquet
    textgyms export tasks --envs textgyms/Search-v1,textgyms/Code-v0 --kwargs "$KWARGS" \
        --split test --episodes 64 --for verl --out data/verl/test.parquet
fi
python -m verl.trainer.main_ppo --config-path "$HERE" --config-name textgyms_grpo \
    actor_rollout_ref.rollout.agent.agent_loop_config_path="$(textgyms integrations path verl)" \
    "$@"
