#!/usr/bin/env bash
# The node check for a 16-core GPU machine: can its CPUs keep its GPU fed? Runs, in one command,
#   1. benchmarks/bench_code.py (the sandbox's scaling from 1 to 16 workers: the figure the
#      issue still lacks, and the shortest stage, so it comes first);
#   2. benchmarks/bench_node.py at 256 envs with 1, 4 and 16 workers (env side of a turn, the
#      GPU's measured and physical-limit turn for SmolLM2-135M, Qwen2.5-1.5B and -7B shapes);
#   3. benchmarks/bench_node.py at 1,024 envs with 16 workers (ISO 20022 and the mixture first:
#      the families an earlier run left unmeasured at that size), in what is left;
#   4. benchmarks/bench_reset_ahead.py with 16 workers (NetConfig and the mixture, a 100 ms gap),
#      in what is left of the budget.
# Run from the project root, offline, with textgyms installed with torch, transformers and
# gymnasium (no model download: the GPU turns use random weights of the real shapes):
#
#     bash scripts/gpu_node.sh
#
# ISO 20022 (and so the mixture) needs the `iso` extra's pure-Python wheels there; a family
# whose dependency is missing is recorded as skipped in node.json, not measured. Take them
# along with the wheels the machine lacks (its image has lxml):
#
#     GPU_EXTRA_WHEELS="schwifty==2026.10.1 pycountry==26.2.16 rstr==3.2.2 xmlschema==4.3.2
#       elementpath==5.1.4" bash <the GPU preparation script>
#
# Results and the log go to $OUT/gpu_node/ when OUT is set, else runs/gpu_node/ (bring the JSON
# into benchmarks/results/). Sized for one 10-minute command with setup: every stage has a time
# limit and the whole run GPU_NODE_SECONDS (520 by default; a stage that would start later is
# skipped); the exit status is non-zero if a stage failed.
set -uo pipefail
PY=${PYTHON:-python3}
t0=$(date +%s)
budget=${GPU_NODE_SECONDS:-520}
source scripts/gpu_stages.sh  # start_log NAME; stage NAME SECONDS CMD...
start_log gpu_node

"$PY" -c "import os, torch, textgyms; print('cores', os.cpu_count(), 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-', 'textgyms', textgyms.__version__)"
stage "Code sandbox scaling" 140 "$PY" benchmarks/bench_code.py
cp benchmarks/results/code.json "$dest/code.json" 2>/dev/null
cp benchmarks/results/code.md "$dest/code.md" 2>/dev/null
# node.json is written as the run goes: a stage cut short still leaves what it measured.
stage "node: 256 envs, 1/4/16 workers" 330 "$PY" benchmarks/bench_node.py --envs 256 \
  --workers 1 4 16 --steps 4 --out "$dest/node.json"
stage "node: 1,024 envs, 16 workers" 150 "$PY" benchmarks/bench_node.py --envs 1024 \
  --workers 16 --steps 3 --only ISO20022 mixture Wordle Search NetConfig Code \
  --out "$dest/node_1024.json"
# What is left of the budget (the figures come first): the two heaviest resets.
stage "reset-ahead, 16 workers" 60 "$PY" benchmarks/bench_reset_ahead.py --gaps 100 \
  --only NetConfig mixture --pairs 1 --steps 6 --out "$dest/reset_ahead.json"
echo "== total $(( $(date +%s) - t0 )) s, status $status"
exit $status
