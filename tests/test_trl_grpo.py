"""baselines/trl_grpo.py: TRL's GRPOTrainer on a textgyms env, end to end on CPU with tiny-random."""

import json
import math

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("tyro")

from baselines.trl_grpo import Args, main, tool_ready, vllm_settings  # noqa: E402
from textgyms.errors import ConfigError  # noqa: E402
from textgyms.models import CHAT_TEMPLATE, load_model, tiny_random  # noqa: E402


def _guess_bias(tok, word):
    """A ``sequence_bias`` that makes the random model call ``guess(word)`` and stop: a scripted
    model through TRL's real generation, tool-call parsing and env stepping."""
    text = f'<tool_call>{{"name": "guess", "arguments": {{"word": "{word}"}}}}</tool_call>'
    ids = tok.encode(text, add_special_tokens=False) + [tok.eos_token_id]
    return {tuple(ids[: k + 1]): 50.0 * (k + 1) for k in range(len(ids))}


@pytest.mark.filterwarnings("ignore::FutureWarning")  # trl's own use of deprecated names
def test_a_step_logs_the_env_reward_and_saves_the_model(tmp_path):
    kwargs = {"vocab": "easy", "max_guesses": 2}
    env = gym.make("textgyms/Wordle-v0", split="train", **kwargs)
    env.reset(seed=0)  # the task of the dataset's first row (seed 0)
    secret = env.unwrapped.task.secret
    out = tmp_path / "grpo"
    args = Args(env_kwargs=json.dumps(kwargs), steps=1, group_size=2, batch_size=2,
                max_completion_length=48, max_tool_calls=1, out=str(out))
    _, tok = tiny_random(seed=args.seed)
    result = main(args, generation_kwargs={"sequence_bias": _guess_bias(tok, secret)})
    rows = [json.loads(line) for line in (out / "metrics.jsonl").open()]
    assert [r["step"] for r in rows] == [1]
    assert result["reward_key"] == "rewards/WordleV0Env/mean"
    assert rows[0][result["reward_key"]] == pytest.approx(1.0)  # the env scored the solve
    assert rows[0]["tools/call_frequency"] > 0 and math.isfinite(rows[0]["loss"])
    model, ltok = load_model(str(out / "final"))
    assert ltok.chat_template == CHAT_TEMPLATE and ltok.response_template is not None
    assert sum(p.numel() for p in model.parameters()) == sum(
        p.numel() for p in tiny_random(seed=0)[0].parameters())


def test_vllm_modes_need_cuda():
    assert vllm_settings(Args(vllm_mode="none")) == {"use_vllm": False}
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    for mode in ("colocate", "server"):
        with pytest.raises(ConfigError, match="CUDA"):
            vllm_settings(Args(vllm_mode=mode))


def test_chatml_tokenizer_without_tool_support_gets_the_textgyms_tool_template():
    from trl.chat_template_utils import supports_tool_calling

    _, tok = tiny_random(seed=0)
    tok.chat_template = (  # SmolLM2-style ChatML: content only, tool calls would be dropped
        "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + "
        "'<|im_end|>\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    )
    tok.response_template = None
    assert not supports_tool_calling(tok)
    assert supports_tool_calling(tool_ready(tok)) and tok.response_template is not None
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    tok.eos_token = "<|endoftext|>"
    with pytest.raises(ConfigError, match="tool calls"):
        tool_ready(tok)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # trl's own use of deprecated names
def test_trl_grpo_starts_from_an_sft_checkpoint_trained_on_exported_tool_calls(tmp_path):
    from baselines import sft
    from textgyms.export import ExportSource, export_sft

    kwargs = {"vocab": "easy", "max_guesses": 2}
    data = tmp_path / "sft.jsonl"
    export_sft([ExportSource("textgyms/Wordle-v0", kwargs)], 4, data, "tools", progress=False)
    trained = sft.main(sft.Args(data=str(data), episodes=4, batch_size=2, lr=3e-3,
                                warmup_steps=1, eval_episodes=0, tools_in_prompt=True,
                                out=str(tmp_path / "sft")))
    assert trained["episodes"] == 4 and trained["train/loss_last"] < trained["train/loss_first"]
    args = Args(model=str(tmp_path / "sft" / "final"), env_kwargs=json.dumps(kwargs), steps=1,
                group_size=2, batch_size=2, max_completion_length=32, max_tool_calls=1,
                out=str(tmp_path / "grpo"))
    result = main(args)
    rows = [json.loads(line) for line in (tmp_path / "grpo" / "metrics.jsonl").open()]
    assert [r["step"] for r in rows] == [1] and math.isfinite(rows[0]["loss"])
    assert result["reward_key"] in rows[0]
    start, _ = load_model(str(tmp_path / "sft" / "final"))
    end, _ = load_model(str(tmp_path / "grpo" / "final"))
    assert sum(p.numel() for p in start.parameters()) == sum(p.numel() for p in end.parameters())
