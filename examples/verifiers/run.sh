#!/usr/bin/env bash
# Evaluate (or collect rollouts from) Qwen3-1.7B on textgyms Search + Code with verifiers'
# vf-eval, in the environment that has verifiers (`.venv-verifiers` in a checkout; uv must be
# on the PATH). Serve the model first, e.g. `vllm serve Qwen/Qwen3-1.7B --port 8000`.
# Extra arguments override the file, e.g. --select.limit 8.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OPENAI_API_KEY="${OPENAI_API_KEY:-local}" vf-eval @ "$HERE/eval.toml" "$@"
