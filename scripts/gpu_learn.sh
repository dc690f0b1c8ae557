#!/usr/bin/env bash
# One family's learning run on a GPU (baselines/gpu_learn.py): SFT and GRPO of SmolLM2-135M, then
# greedy evaluations of random, blind, the untrained model, SFT and GRPO on 200 test episodes.
# Run from the project root on a CUDA machine (same installs as scripts/gpu_check.sh):
#
#     bash scripts/gpu_learn.sh search      # or wordle, netconfig; gpu_learn.py options follow
#
# Results go to $OUT/results/gpu/<family>/ when OUT is set (bring them into
# baselines/results/gpu/<family>/), else straight to baselines/results/gpu/<family>/; the
# checkpoints to $WORK (default runs/gpu). Sized for one 10-minute command (GRPO stops after
# --grpo-seconds, 330 by default).
set -euo pipefail
family=${1:?usage: bash scripts/gpu_learn.sh search|wordle|netconfig [gpu_learn.py options]}
shift
PY=${PYTHON:-python3}
out="${OUT:+$OUT/results/gpu}"
out="${out:-baselines/results/gpu}"
mkdir -p "$out/$family"
"$PY" -c "import torch; print('cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-')"
"$PY" baselines/gpu_learn.py --family "$family" --out "$out" --work "${WORK:-runs/gpu}" "$@" \
  2>&1 | tee "$out/$family/log.txt"
