#!/usr/bin/env bash
# GRPO with ART on textgyms Search + Code (Qwen3-1.7B, one GPU; ART's LocalBackend needs its
# backend extra: pip install "openpipe-art[backend]==0.5.18").
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
python "$HERE/train.py" "$@"
