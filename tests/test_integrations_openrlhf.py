"""The OpenRLHF agent file with OpenRLHF's own executor loop (openrlhf 0.11, --no-deps).

OpenRLHF's ``MultiTurnAgentExecutor.execute`` runs unchanged; only its engine is local: vLLM does
not run on CPU, so the engine here answers with the oracle's actions tokenized by SmolLM2's real
tokenizer (full episodes that solve every id). ``test_integrations_llm.py`` drives the same file
with the real OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from types import SimpleNamespace

import gymnasium as gym
import pytest

pytest.importorskip("openrlhf.utils.agent")

import textgyms
from textgyms.errors import ConfigError
from textgyms.integrations.cli import shipped_path
from textgyms.integrations.episode import COMMON_METRICS, Episode, TaskRow, metric_keys
from textgyms.integrations.openrlhf_agent import AgentExecutor, feedback_template

KWARGS = {"max_turns": 8}


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from textgyms.models import smollm2_dir

    return AutoTokenizer.from_pretrained(str(smollm2_dir()), local_files_only=True)


class ScriptedEngine:
    """OpenRLHF's engine interface (``generate(token_ids, params)``) answering with fixed texts,
    each tokenized by the real tokenizer and ended with its EOS, cut at ``params.max_tokens``."""

    def __init__(self, tokenizer, texts):
        self.tokenizer, self.texts, self.prompts = tokenizer, list(texts), []

    async def generate(self, token_ids, params, multi_modal_data=None):
        self.prompts.append(list(token_ids))
        text = self.texts.pop(0) if self.texts else "nothing"
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = ids + [self.tokenizer.eos_token_id]
        cut = len(ids) > params.max_tokens
        ids = ids[: params.max_tokens]
        out = SimpleNamespace(token_ids=ids, text=self.tokenizer.decode(ids, skip_special_tokens=True),
                              finish_reason="length" if cut else "stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def _prompt(tokenizer, row: TaskRow) -> str:
    """The prompt as OpenRLHF renders it (--data.apply_chat_template): the env's first message."""
    episode = Episode(row)
    try:
        return tokenizer.apply_chat_template(episode.messages, tokenize=False,
                                             add_generation_prompt=True)
    finally:
        episode.close()


def _execute(tokenizer, row, texts, max_length=16384):
    engine = ScriptedEngine(tokenizer, texts)
    label = json.dumps(row.columns())
    params = SimpleNamespace(max_tokens=None, logprobs=None)
    out = asyncio.run(AgentExecutor().execute(_prompt(tokenizer, row), label, params, max_length,
                                              tokenizer, engine))
    return out, engine


def _oracle(row: TaskRow) -> tuple[list[str], float, dict]:
    """The oracle's actions and the local episode's return and metrics."""
    env = row.make()
    env.reset(seed=row.seed)
    actions = env.unwrapped.oracle_actions()
    env.close()
    local = Episode(row)
    for action in actions:
        if local.step(action).done:
            break
    result = local.reward(), local.metrics()
    local.close()
    return actions, *result


@pytest.mark.parametrize("env_id", textgyms.env_ids())
def test_oracle_episode_through_openrlhf_executor(tokenizer, env_id):
    # rows as `textgyms export tasks` writes them: the file's metric keys (every id here)
    row = TaskRow.from_row({"env_id": env_id, "env_kwargs": KWARGS, "seed": 3,
                            "metric_keys": metric_keys(textgyms.env_ids())})
    actions, local_return, local_metrics = _oracle(row)
    out, engine = _execute(tokenizer, row, actions)
    assert out["reward"] == pytest.approx(local_return)
    assert local_metrics["solved"] == 1.0 and out["scores"] == pytest.approx(local_metrics["score"])
    assert out["extra_logs"] == local_metrics  # other envs' keys 0.0: one key set per batch
    assert tuple(out["extra_logs"]) == row.metric_keys
    assert len(out["action_ranges"]) == len(engine.prompts) == local_metrics["turns"]
    # Every action range holds exactly the tokens the engine generated, and the tokens between
    # two ranges are the env's observation rendered as a chat-template user turn.
    tokens = out["observation_tokens"]
    text = tokenizer.decode(tokens)
    assert text.count("<|im_start|>user\n") == len(engine.prompts)
    assert text.endswith("<|im_end|>")  # the last completion ended the turn
    assert "<|im_end|>\n<|im_start|>user\n" in text
    assert "<|im_end|><|im_end|>" not in text  # the model's EOS is not repeated by the feedback


def test_feedback_template_closes_the_turn_the_model_left_open(tokenizer):
    ended = feedback_template(tokenizer, "OBS", ended_turn=True)
    cut = feedback_template(tokenizer, "OBS", ended_turn=False)
    assert ended == "\n<|im_start|>user\nOBS<|im_end|>\n<|im_start|>assistant\n"
    assert cut == "<|im_end|>" + ended


def test_cut_by_openrlhf_length_budget_pays_the_episode_return(tokenizer):
    row = TaskRow.from_row({"env_id": "textgyms/Wordle-v0", "env_kwargs": KWARGS, "seed": 5})
    prompt_len = len(tokenizer(_prompt(tokenizer, row), add_special_tokens=False)["input_ids"])
    wrong = ["<guess>aaaaa</guess>", "<guess>crane</guess>", "<guess>slate</guess>"]
    out, engine = _execute(tokenizer, row, wrong, max_length=prompt_len + 60)
    local = Episode(row)
    for text in wrong[: len(engine.prompts)]:
        local.step(text)
    assert not local.done and len(engine.prompts) >= 1  # OpenRLHF's budget ended it, not the env
    assert out["reward"] == pytest.approx(local.reward())  # the score as things stand, less penalties
    assert out["extra_logs"]["finished"] == 0.0 and out["extra_logs"]["context_cut"] == 1.0
    assert tuple(out["extra_logs"]) == COMMON_METRICS  # a row without keys: the common ones
    local.close()


def test_label_must_name_a_task_row(tokenizer):
    row = TaskRow.from_row({"env_id": "textgyms/Wordle-v0", "seed": 1})
    engine = ScriptedEngine(tokenizer, ["<guess>crane</guess>"])
    params = SimpleNamespace(max_tokens=None, logprobs=None)
    with pytest.raises(ConfigError, match="task row"):
        asyncio.run(AgentExecutor().execute(_prompt(tokenizer, row), "not json", params, 4096,
                                            tokenizer, engine))
    code = TaskRow.from_row({"env_id": "textgyms/Code-v0", "seed": 1})
    other = json.dumps({**code.columns(), "seed": 2})  # a prompt of seed 1 labelled seed 2
    with pytest.raises(ConfigError, match="not the prompt"):
        asyncio.run(AgentExecutor().execute(_prompt(tokenizer, code), other, params, 4096,
                                            tokenizer, engine))


def test_openrlhf_loads_the_shipped_file_the_cli_prints():
    from openrlhf.utils.agent import AgentExecutorBase

    path = subprocess.run([sys.executable, "-m", "textgyms.cli", "integrations", "openrlhf-path"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert path == str(shipped_path("openrlhf")) and path.endswith("openrlhf_agent.py")
    # What OpenRLHF's vllm_engine._load_agent_executor does with --train.agent_func_path.
    import importlib.util

    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module.AgentExecutor, AgentExecutorBase)
    assert isinstance(module.AgentExecutor(), AgentExecutorBase)
    assert gym.spec("textgyms/Wordle-v0")  # the file registered the ids on import


def test_observations_over_the_token_budget_are_cut_with_a_marker(tokenizer, monkeypatch):
    monkeypatch.setenv("TEXTGYMS_MAX_OBS_TOKENS", "12")
    row = TaskRow.from_row({"env_id": "textgyms/Code-v0", "env_kwargs": KWARGS, "seed": 1})
    out, _ = _execute(tokenizer, row, ["<run>print('x' * 5000)</run>", "nothing"])
    text = tokenizer.decode(out["observation_tokens"])
    assert "…[truncated" in text and "x" * 200 not in text  # the 5000 x's did not come back
