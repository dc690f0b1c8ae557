#!/usr/bin/env bash
# GRPO with SkyRL on textgyms Search + Code (Qwen3-1.7B, 8 GPUs; SkyRL 0.4 needs Python 3.12):
# export the tasks, then run SkyRL's experiment through textgyms' entry point (it registers
# the `textgyms` env inside SkyRL's Ray entrypoint). Extra arguments are more overrides.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
KWARGS='{"textgyms/Search-v1": {"max_turns": 6}, "textgyms/Code-v0": {"max_turns": 6}}'
if [ ! -f data/skyrl/train.parquet ]; then
    textgyms export tasks --envs textgyms/Search-v1,textgyms/Code-v0 --kwargs "$KWARGS" \
        --split train --episodes 2048 --for skyrl --out data/skyrl/train.parquet
    textgyms export tasks --envs textgyms/Search-v1,textgyms/Code-v0 --kwargs "$KWARGS" \
        --split test --episodes 64 --for skyrl --out data/skyrl/validation.parquet
fi
mapfile -t OVERRIDES < <(grep -v '^\s*#' "$HERE/overrides.txt" | grep .)
python -m textgyms.integrations.skyrl.main "${OVERRIDES[@]}" "$@"
