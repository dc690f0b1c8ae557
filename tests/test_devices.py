"""``device`` / ``dtype`` choices (textgyms.devices) wherever a model runs, on the CPU: the
defaults change nothing there, CUDA asked for without CUDA fails at once naming it, CUDA
out-of-memory names the setting to lower, and runs record where they ran."""

from __future__ import annotations

import json

import pytest

from textgyms import devices
from textgyms.errors import ConfigError, DeviceMemoryError

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import textgyms  # noqa: E402
from baselines import demo, grpo, sft, trl_grpo  # noqa: E402
from textgyms.models import load_model  # noqa: E402
from textgyms.policies import HFPolicy, ScriptedPolicy, make_policy  # noqa: E402

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="the behaviour without CUDA")
TIMING = ("gen_s", "train_s", "time", "seconds")


@NO_CUDA
def test_auto_is_the_cpu_in_float32_without_cuda():
    assert devices.resolve_device() == (torch.device("cpu"), torch.float32)
    assert devices.resolve_device("cpu", "bf16") == (torch.device("cpu"), torch.bfloat16)
    assert devices.resolve_device("CPU", torch.float16) == (torch.device("cpu"), torch.float16)


def test_unknown_values_name_the_valid_choices():
    with pytest.raises(ConfigError, match=r"unknown device 'tpu'; choose one of: auto, cpu, cuda"):
        devices.resolve_device("tpu")
    with pytest.raises(ConfigError, match=r"unknown device 'cuda:x'"):
        devices.resolve_device("cuda:x")
    with pytest.raises(ConfigError, match=r"unknown dtype 'int8'; choose one of: auto, float32"):
        devices.resolve_device("cpu", "int8")
    with pytest.raises(ConfigError, match="unknown option 'devcie'"):
        make_policy("hf:tiny-random?devcie=cpu")


@NO_CUDA
def test_cuda_without_cuda_fails_at_once_naming_cuda(tmp_path):
    for device in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(ConfigError, match="needs CUDA"):
            devices.resolve_device(device)
    with pytest.raises(ConfigError, match="needs CUDA"):
        load_model("tiny-random", device="cuda")
    # The device is checked before the model: a path that does not exist is not even looked at.
    with pytest.raises(ConfigError, match="needs CUDA"):
        make_policy("hf:/nonexistent/model?device=cuda&dtype=bfloat16")
    with pytest.raises(ConfigError, match="needs CUDA"):
        grpo.check_args(grpo.Args(device="cuda"))
    with pytest.raises(ConfigError, match="needs CUDA"):
        sft.main(sft.Args(device="cuda", out=str(tmp_path / "sft")))
    with pytest.raises(ConfigError, match="needs CUDA"):
        trl_grpo.precision_settings(trl_grpo.Args(device="cuda"))


def test_load_model_casts_the_weights():
    model, _ = load_model("tiny-random", device="cpu", dtype="bfloat16")
    assert model.dtype == torch.bfloat16 and model.device.type == "cpu"
    model, _ = load_model("tiny-random", device="cpu", dtype="float32")
    assert model.dtype == torch.float32


def test_a_model_object_stays_where_it_is_unless_told():
    model, tok = load_model("tiny-random", device="cpu")
    assert HFPolicy(model, tok).model.dtype == torch.float32
    policy = HFPolicy(model, tok, dtype="bfloat16", device="cpu")
    assert policy.model.dtype == torch.bfloat16 and policy.device == "cpu"
    assert policy.spec()["dtype"] == "bfloat16"


@pytest.mark.parametrize("script", [sft, grpo, trl_grpo, demo])
def test_every_baseline_takes_device_and_dtype(script, capsys):
    import tyro

    with pytest.raises(SystemExit):
        tyro.cli(script.Args, args=["--help"])
    text = capsys.readouterr().out
    assert "--device" in text and "--dtype" in text and "bfloat16" in text
    assert script.Args().device == "auto" and script.Args().dtype == "auto"


def test_trl_precision_settings():
    assert trl_grpo.precision_settings(trl_grpo.Args(device="cpu")) == {"use_cpu": True}
    assert trl_grpo.precision_settings(trl_grpo.Args(device="cpu", dtype="float32")) == {
        "use_cpu": True, "bf16": False, "fp16": False}


def _updates(tmp_path, name, **kw):
    """Two GRPO updates of ``tiny-random`` (set up by ``grpo.setup``, with a reference model)
    on one real rollout whose returns are set to differ within each group, so that the updates
    have real gradients and the second a real KL; the rollout's ids, the stats, the weights."""
    args = grpo.Args(num_groups=2, group_size=2, max_new_tokens=6, lr=1e-3, beta=0.05,
                     out=str(tmp_path / name), **kw)
    model, tok, ref, opt, _ = grpo.setup(args, tmp_path / name)
    with textgyms.make_vec("textgyms/Wordle-v0", 4, group_size=2,
                           env_kwargs={"max_invalid": 1}) as vec:
        episodes = grpo.rollout(grpo.HFGenerator(model, tok, args), tok, vec, args, step=0)
    for episode, ret in zip(episodes, (1.0, 0.0, 0.5, 0.0)):
        episode.rewards[-1] = ret
    stats = [grpo.update(model, ref, opt, episodes, args, norm_tokens=64) for _ in range(2)]
    return [e.ids for e in episodes], stats, model.state_dict()


@NO_CUDA
def test_explicit_cpu_float32_grpo_is_bit_identical_to_the_default(tmp_path):
    """The defaults resolve to the CPU in float32, where nothing is cast or moved: the same
    rollout tokens, update statistics and weights, bit for bit."""
    ids, stats, weights = _updates(tmp_path, "default")
    assert stats[0]["grad_norm"] > 0 and stats[1]["kl"] > 0  # it really trained
    assert _updates(tmp_path, "explicit", device="cpu", dtype="float32")[:2] == (ids, stats)
    other = _updates(tmp_path, "again", device="cpu", dtype="float32")[2]
    assert all(torch.equal(weights[k], other[k]) for k in weights)


@NO_CUDA
def test_grpo_main_on_the_cpu_records_where_it_ran(tmp_path):
    def run(name, **kw):
        result = grpo.main(grpo.Args(num_groups=2, group_size=2, steps=1, max_new_tokens=6,
                                     env_kwargs=json.dumps({"max_invalid": 1}),
                                     out=str(tmp_path / name), **kw))
        return {k: v for k, v in result.items() if k not in TIMING}

    assert run("default") == run("explicit", device="cpu", dtype="float32")
    record = json.loads((tmp_path / "default" / "summary.json").read_text())
    assert record["device"] == "cpu" and record["gpu_name"] is None
    assert record["dtype"] == "float32" and record["peak_gpu_mem_gb"] is None
    assert record["wall_time_s"] > 0 and record["steps_run"] == 1
    assert "gpu_mem_gb" not in (tmp_path / "default" / "metrics.jsonl").read_text()


@NO_CUDA
def test_explicit_cpu_float32_sft_is_bit_identical_to_the_default(tmp_path):
    def run(name, **kw):
        args = sft.Args(episodes=4, batch_size=2, max_steps=2, eval_episodes=2,
                        out=str(tmp_path / name), **kw)
        result = sft.main(args)
        rows = [json.loads(x) for x in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]
        return ({k: v for k, v in result.items() if k not in TIMING},
                [{k: v for k, v in r.items() if k not in TIMING} for r in rows])

    assert run("default") == run("explicit", device="cpu", dtype="float32")


def test_float16_training_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="loss scaling"):
        grpo.main(grpo.Args(device="cpu", dtype="float16", steps=1, out=str(tmp_path / "g")))
    with pytest.raises(ConfigError, match="loss scaling"):
        sft.main(sft.Args(device="cpu", dtype="float16", episodes=2, out=str(tmp_path / "s")))


def test_bfloat16_autocast_changes_the_numbers_not_the_weights_dtype(tmp_path):
    _, full, _ = _updates(tmp_path, "f32", device="cpu", dtype="float32")
    _, half, weights = _updates(tmp_path, "bf16", device="cpu", dtype="bfloat16")
    assert all(v.dtype == torch.float32 for v in weights.values() if v.is_floating_point())
    # The first loss is -A whatever the log-probs (the ratio is 1); its gradient is not.
    assert half[0]["grad_norm"] != full[0]["grad_norm"]
    assert half[0]["grad_norm"] == pytest.approx(full[0]["grad_norm"], rel=0.1)


def test_out_of_memory_becomes_a_named_error():
    with pytest.raises(DeviceMemoryError, match=r"while generating.*; lower batch_size"):
        with devices.out_of_memory_hint("generating", "batch_size"):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    with pytest.raises(KeyError):  # anything else passes through untouched
        with devices.out_of_memory_hint("generating", "batch_size"):
            raise KeyError("x")


def test_hf_policy_out_of_memory_names_its_batch_size(monkeypatch):
    import gymnasium as gym

    policy = HFPolicy("tiny-random", max_new_tokens=4, batch_size=8)

    def full(*args, **kwargs):  # what generate raises when the KV cache does not fit
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    monkeypatch.setattr(policy.model, "generate", full)
    obs, info = gym.make("textgyms/Wordle-v0").reset(seed=0)
    with pytest.raises(DeviceMemoryError, match=r"lower batch_size \(now 8\)"):
        policy.act([obs], [info])


def test_static_cache_generates_the_same_greedy_tokens():
    import gymnasium as gym

    env = gym.make("textgyms/Wordle-v0")
    resets = [env.reset(seed=i) for i in range(3)]
    texts = [HFPolicy("tiny-random", max_new_tokens=6, temperature=0, static_cache=s, device="cpu"
                      ).act([o for o, _ in resets], [i for _, i in resets]) for s in (False, True)]
    assert texts[0] == texts[1]


def test_eval_metadata_records_where_it_ran(tmp_path):
    from textgyms.evaluate import evaluate

    for name, policy in (("random", ScriptedPolicy("random")),
                         ("hf", HFPolicy("tiny-random", max_new_tokens=4, device="cpu"))):
        evaluate(policy, ["textgyms/Wordle-v0"], episodes=2, out=tmp_path / name,
                 progress=False)
        meta = json.loads((tmp_path / name / "metadata.json").read_text())
        assert meta["device"] == "cpu" and meta["gpu_name"] is None
        assert meta["peak_gpu_mem_gb"] is None and meta["wall_time_s"] >= 0
    assert meta["policy"]["dtype"] == "float32"
