#!/usr/bin/env bash
# GRPO with TRL on textgyms Search (Qwen3-1.7B, one GPU, vLLM colocated). Extra arguments
# override the YAML, e.g. --env_id textgyms/Code-v0 --output_dir runs/trl-qwen3-1.7b-code.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
python "$HERE/train.py" --config "$HERE/grpo.yaml" "$@"
