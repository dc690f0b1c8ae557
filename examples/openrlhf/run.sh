#!/usr/bin/env bash
# GRPO with OpenRLHF on textgyms Search + Code (Qwen3-1.7B, 8 GPUs): export the tasks as JSON
# lines, then run OpenRLHF's PPO/GRPO trainer with the textgyms agent file. Extra arguments are
# more flags of openrlhf.cli.train_ppo_ray.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
KWARGS='{"textgyms/Search-v1": {"max_turns": 6}, "textgyms/Code-v0": {"max_turns": 6}}'
if [ ! -f data/openrlhf/train.jsonl ]; then
    textgyms export tasks --envs textgyms/Search-v1,textgyms/Code-v0 --kwargs "$KWARGS" \
        --split train --episodes 2048 --out data/openrlhf/train.jsonl
fi
mapfile -t ARGS < <(grep -v '^\s*#' "$HERE/args.txt" | grep .)
python -m openrlhf.cli.train_ppo_ray "${ARGS[@]}" \
    --train.agent_func_path "$(textgyms integrations path openrlhf)" "$@"
