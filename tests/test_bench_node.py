"""benchmarks/bench_node.py: the JSON a quick (CPU) run writes, the model shapes it counts,
and its GPU turn's code path (run here on the CPU with a tiny config). No timing assertions."""

from __future__ import annotations

import json

import pytest
from support import load_benchmark


@pytest.fixture(scope="module")
def bench():
    """The benchmark module."""
    yield from load_benchmark("bench_node")


def test_quick_run_writes_the_schema(bench, tmp_path):
    out = tmp_path / "node.json"
    assert bench.main(["--quick", "--only", "Wordle", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["complete"] is True
    assert res["machine"]["gpu"] == {"skipped": "--quick"}
    assert res["machine"]["name"].startswith("cpu-")
    assert res["settings"]["workers"]["measured"] == sorted(
        {min(w, res["machine"]["cores"]) for w in (1, 2)})
    points = {(r["family"], r["envs"], r["workers"]) for r in res["env"]}
    assert points == {(f, n, w) for f in ("Wordle",) for n in (16, 32)
                      for w in res["settings"]["workers"]["measured"]}
    for r in res["env"]:
        assert r["resets_per_s"] > 0 and r["steps_per_s"] > 0 and r["env_turn_ms"] > 0
        assert r["backend"] == ("serial" if r["workers"] == 1 else "multiprocessing")
    models = res["gpu_turn"]["models"]
    assert set(models) == {"smollm2-135m", "qwen2.5-1.5b", "qwen2.5-7b"}
    assert all(m["measured_ms"] == {} and m["limit_ms"] for m in models.values())
    assert res["gpu_turn"]["limit_assumes"].startswith("H200")
    heads = {(h["family"], h["model"]) for h in res["headline"]}
    assert heads == {(f, m) for f in ("Wordle",) for m in ("qwen2.5-7b", "qwen2.5-1.5b")}
    for h in res["headline"]:
        assert h["share"] == pytest.approx(h["env_turn_ms"] / h["gpu_limit_ms"], rel=1e-3)
        assert h["met"] == (h["share"] <= h["target"])
        if h["workers"] > 1:  # measured again with reset-ahead and the model's turn as a gap
            assert h["env_turn_ahead_ms"] > 0
            assert h["gap_ms"] == pytest.approx(min(h["gpu_limit_ms"], 2 * h["env_turn_ms"]),
                                                abs=1e-3)
            assert h["share_ahead"] == pytest.approx(
                h["env_turn_ahead_ms"] / h["gpu_limit_ms"], rel=1e-3)
            assert h["met_ahead"] == (h["share_ahead"] <= h["target"])
    assert any("share_ahead" in h for h in res["headline"]) == (max(
        res["settings"]["workers"]["measured"]) > 1)
    # Cores per GPU: a core's env steps/s at the headline's worker count against the GPU's
    # turns/s; keeping up takes workers x share cores, the target that over the target.
    cores = {(c["family"], c["model"]): c for c in res["cores_per_gpu"]}
    assert set(cores) == heads
    for h in res["headline"]:
        c = cores[(h["family"], h["model"])]
        assert c["steps_per_core_s"] == pytest.approx(
            h["envs"] / (h["workers"] * h["env_turn_ms"] / 1e3), rel=1e-3)
        assert c["gpu_turns_per_s"] == pytest.approx(h["envs"] / (h["gpu_limit_ms"] / 1e3),
                                                     rel=1e-3)
        assert c["keep_up"] == pytest.approx(h["workers"] * h["share"], rel=2e-3)
        assert c["for_target"] == pytest.approx(c["keep_up"] / h["target"], rel=2e-3)
    # --derive recomputes the table from the JSON alone, measuring nothing.
    del res["cores_per_gpu"]
    out.write_text(json.dumps(res))
    assert bench.main(["--derive", str(out)]) == 0
    assert {(c["family"], c["model"]): c
            for c in json.loads(out.read_text())["cores_per_gpu"]} == cores


@pytest.mark.parametrize("name", ["smollm2-135m", "qwen2.5-1.5b", "qwen2.5-7b"])
def test_param_count_matches_transformers(bench, name):
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):  # shapes only: a 7B model costs no memory here
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**bench.MODELS[name]))
    assert bench.param_count(bench.MODELS[name]) == model.num_parameters()


def test_physical_limit_is_weights_per_decode_step_plus_prefill(bench):
    cfg = bench.MODELS["qwen2.5-1.5b"]
    n = bench.param_count(cfg)
    bw, flops = bench.GPUS["H200"]
    got = bench.physical_limit_s(cfg, 256, 128, bw, flops)
    assert got == pytest.approx(32 * 2 * n / bw + 2 * n * 256 * 128 / flops)
    assert bench.prefill_tokens(10) == 64 and bench.prefill_tokens(700) == 256


def _tiny(bench) -> dict:
    return dict(bench.MODELS["qwen2.5-1.5b"], hidden_size=32, intermediate_size=64,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                vocab_size=256)


def test_gpu_turn_code_path_runs_on_cpu(bench):
    pytest.importorskip("torch")
    model = bench.build_model(_tiny(bench), device="cpu", dtype="float32")
    assert bench.gpu_turn_s(model, batch=3, prefill=200, device="cpu", reps=1) > 0


def test_models_are_built_on_the_device_they_run_on(bench):
    torch = pytest.importorskip("torch")
    # A 7B model initialised on the CPU first would take minutes of a GPU run's time budget.
    model = bench.build_model(bench.MODELS["qwen2.5-7b"], device="meta")
    assert {p.device.type for p in model.parameters()} == {"meta"}
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}


def test_each_model_is_built_once_for_all_its_turns(bench, monkeypatch):
    pytest.importorskip("torch")
    built, real = [], bench.build_model

    def build(cfg, device="cuda", dtype="bfloat16"):
        built.append(cfg)
        return real(cfg, "cpu", "float32")

    monkeypatch.setattr(bench, "build_model", build)
    keys = [(2, 64, "2x64"), (2, 128, "2x128"), (3, 64, "3x64")]
    got = bench._measure_model("tiny", _tiny(bench), keys, device="cpu")
    assert len(built) == 1 and set(got) == {"2x64", "2x128", "3x64"}
    assert all(ms > 0 for ms in got.values())


def test_a_turn_too_large_for_the_gpu_is_recorded_as_none_and_the_rest_measured(
        bench, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(bench, "build_model", lambda cfg, device="cuda": object())

    def turn(model, batch, prefill, device, reps=1, warm=1):
        if batch >= 3:  # the 7B at 1,024 envs on the H200: its KV cache does not fit
            raise torch.OutOfMemoryError("CUDA out of memory")
        return 0.25

    monkeypatch.setattr(bench, "gpu_turn_s", turn)
    keys = [(2, 64, "2x64"), (3, 64, "3x64")]
    assert bench._measure_model("tiny", _tiny(bench), keys, device="cpu") == {
        "2x64": 250.0, "3x64": None}


def test_a_run_cut_short_keeps_what_it_measured(bench, monkeypatch, tmp_path):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt  # as a time limit would stop the run

    monkeypatch.setattr(bench, "add_ahead", stop)
    out = tmp_path / "node.json"
    with pytest.raises(KeyboardInterrupt):
        bench.main(["--quick", "--only", "Wordle", "--out", str(out)])
    res = json.loads(out.read_text())
    assert res["complete"] is False
    assert res["env"] and res["gpu_turn"]["models"] and res["headline"]
    assert all("share_ahead" not in h for h in res["headline"])


def test_a_family_missing_its_dependency_is_skipped_not_fatal(bench, tmp_path, monkeypatch):
    """A family whose optional dependency is not installed (as ISO 20022's ``schwifty`` was
    on the GPU machine) is recorded as skipped, and the families after it are measured."""
    import gymnasium as gym

    env_id = "textgyms-test/MissingDependency-v0"
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point="textgyms_no_such_module:Env")
    monkeypatch.setitem(bench.FAMILIES, "Missing", env_id)
    monkeypatch.setattr(bench, "MIXTURE", f"textgyms/Wordle-v0*2,{env_id}")
    out = tmp_path / "node.json"
    assert bench.main(["--quick", "--only", "Missing", "Wordle", "mixture", "--models",
                       "qwen2.5-7b", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["complete"] is True
    skipped = res["settings"]["workers"]["skipped"]
    assert sorted(skipped) == ["Missing", "mixture"]  # the mixture: one entry is missing
    assert all("textgyms_no_such_module" in why for why in skipped.values())
    assert {r["family"] for r in res["env"]} == {"Wordle"}
    assert {h["family"] for h in res["headline"]} == {"Wordle"}


def test_only_keeps_its_order_and_rejects_an_unknown_name(bench, capsys):
    """``--only`` measures in the order it names (the GPU script puts the families a cut-short
    stage must not lose first); a name that is not a family is an error, not a silent no-op."""
    args = bench._args(["--only", "mixture", "ISO20022", "Wordle"])
    assert list(bench.env_ids(args)) == ["mixture", "ISO20022", "Wordle"]
    assert bench.env_ids(args)["mixture"] == bench.MIXTURE
    with pytest.raises(SystemExit):
        bench._args(["--only", "Wordle", "Wordel"])
    assert "unknown Wordel" in capsys.readouterr().err


def test_every_limit_is_saved_before_any_model_is_measured(bench):
    """The first save of the GPU side holds every model's physical limits (so the headline
    and the cores table exist even if the measured turns are cut short by a time limit)."""
    rows = [{"family": "Wordle", "envs": 16, "workers": 1, "env_turn_ms": 1.0,
             "obs_chars_per_turn": 200.0}]
    args = bench._args(["--envs", "16", "--only", "Wordle"])
    saved: list[dict] = []
    out = bench.gpu_side(rows, {"skipped": "test"}, args,
                         lambda g: saved.append(json.loads(json.dumps(g))))
    assert saved and set(saved[0]["models"]) == set(bench.MODELS)
    assert all(m["limit_ms"] for m in saved[0]["models"].values())
    assert bench.headline(rows, saved[0]) == bench.headline(rows, out)


def test_a_mixture_is_warmed_until_each_worker_has_made_every_entry(bench, monkeypatch):
    assert bench.warm_resets("textgyms/Wordle-v0") == 1
    assert bench.warm_resets("textgyms/Wordle-v0*3") == 1  # one entry, however weighted
    assert bench.warm_resets(bench.MIXTURE) == bench.MIXTURE_WARM_RESETS
    # the real vector, its resets counted: the warm ones (distinct seeds), then the timed one
    seeds: list[int] = []
    real = bench.make_vec

    def counted(*args, **kwargs):
        vec = real(*args, **kwargs)
        reset = vec.reset

        def recording(*a, seed=None, **kw):
            seeds.append(seed)
            return reset(*a, seed=seed, **kw)

        vec.reset = recording
        return vec

    monkeypatch.setattr(bench, "make_vec", counted)
    bench.env_point("textgyms/Wordle-v0,textgyms/Search-v1", 4, 1, 1)
    assert seeds == [1, 5, 9, 13, 0]
    seeds.clear()
    bench.env_point("textgyms/Wordle-v0", 4, 1, 1)
    assert seeds == [1, 0]
