"""Conformance: every token-level adapter over the chat templates TRL ships, for every env id.

Each template (read from the installed ``trl/chat_templates``, offline) is put on the tiny local
tokenizer with the template's special tokens added as single ids. Every env id is played with
scripted completions (one junk turn, then the oracle's actions; the first completion cut before
its end-of-turn token, the others ended as the model family ends a turn) through:

* verl: ``TextgymsAgentLoop`` (verl's own base class, with verl's Continuous Token builder for
  the family where verl registers one) behind a scripted ``server_manager``;
* OpenRLHF: the shipped ``AgentExecutor`` running OpenRLHF's own multi-turn loop with a scripted
  engine;
* TRL: the ``environment_factory`` class, its tool outputs rendered by ``GRPOTrainer``'s own
  tool-suffix code with the template TRL would train with.

Checked: the generated ids verbatim with mask 1, each gap (mask 0) equal to what the template
renders for that observation turn in the real conversation (the tail of the template's own
tokenisation), and the rewards equal to the local env's for the same seed and actions.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

import textgyms
from textgyms.integrations.episode import COMMON_METRICS, Episode, TaskRow
from textgyms.models import tiny_tokenizer
from textgyms.tokens import observation_turn

trl = pytest.importorskip("trl")
pytest.importorskip("verl")
pytest.importorskip("openrlhf.utils.agent")
from omegaconf import OmegaConf  # noqa: E402
from trl import GRPOTrainer  # noqa: E402
from trl.chat_template_utils import (  # noqa: E402
    get_training_chat_template,
    is_chat_template_prefix_preserving,
    supports_tool_calling,
)
from verl.experimental.agent_loop.agent_loop import DictConfigWrap  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402
from verl.utils.tokenizer.continuous_token import ContinuousTokenBuilder  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from textgyms.integrations.openrlhf_agent import AgentExecutor  # noqa: E402
from textgyms.integrations.verl import TextgymsAgentLoop  # noqa: E402

# template: (bos, eos, the token the model ends a turn with, config.json model_type for verl)
FAMILIES = {
    "qwen2_5": (None, "<|im_end|>", "<|im_end|>", "qwen2"),
    "qwen3": (None, "<|im_end|>", "<|im_end|>", "qwen3"),
    "qwen3_5_think": (None, "<|im_end|>", "<|im_end|>", "qwen3_5"),
    "llama3_1": ("<|begin_of_text|>", "<|eot_id|>", "<|eot_id|>", "llama"),
    "llama3_2": ("<|begin_of_text|>", "<|eot_id|>", "<|eot_id|>", "llama"),
    "gemma3": ("<bos>", "<eos>", "<end_of_turn>", "gemma3_text"),
    "gemma4": ("<bos>", "<eos>", "<turn|>", "gemma4"),
    "gptoss": ("<|startoftext|>", "<|return|>", "<|return|>", "gpt_oss"),
    "deepseekv3": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜end▁of▁sentence｜>",
                   "deepseek_v3"),
    "phi3_5": ("<s>", "<|endoftext|>", "<|end|>", "phi3"),
    # GLM's model ends a turn with the next turn's opening token (<|user|>); verl's GLM builder
    # would delete it, so the adapter keeps the model's ids and uses the shared rule
    "glm4moe": (None, "<|endoftext|>", "<|user|>", "glm4_moe"),
}
# Where the template writes an assistant turn in history exactly as the model generated it, a
# full re-render of the transcript must equal the built sequence token for token.
APPEND_ONLY = {"qwen2_5", "qwen3", "llama3_1", "llama3_2", "gemma3", "gemma4", "phi3_5"}
# TRL's own check refuses tool calling with these templates (they cannot render a tool turn).
TRL_NO_TOOLS = {"gemma3", "phi3_5"}
ENV_IDS = textgyms.env_ids()
JUNK = "nothing to do"
MARK = "\u2063mark\u2063"
_SPECIAL = re.compile(r"<[|｜][^'\"\s{}]{1,40}?[|｜]>|<(?:start|end)_of_(?:turn|image)>"
                      r"|<\|[a-z_]+>|<[a-z_]+\|>")


def _template(name: str) -> str:
    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text()


@cache
def _base():
    return tiny_tokenizer()


@cache
def _tokenizer(name: str):
    """The tiny tokenizer wearing ``name``'s chat template and special tokens."""
    bos, eos, end, _ = FAMILIES[name]
    text = _template(name)
    tok = copy.deepcopy(_base())
    specials = sorted(set(_SPECIAL.findall(text)) | {t for t in (bos, eos, end) if t})
    tok.add_special_tokens({"additional_special_tokens": specials, "eos_token": eos,
                            **({"bos_token": bos} if bos else {})})
    tok.chat_template = text
    tok.response_template = None  # TRL's add_response_schema picks the family's parser
    return tok


@pytest.fixture(scope="module", autouse=True)
def code_sandbox():
    """Keep the process's Code sandbox server up, so each Code episode does not start one."""
    env = gym.make("textgyms/Code-v0")
    env.reset(seed=0)
    env.unwrapped._sandbox()
    yield
    env.close()


@cache
def _script(env_id: str) -> tuple[tuple[str, ...], tuple[dict, ...], float, dict]:
    """The actions (junk, then the oracle's), the env's user turns (its prompt, then its answer
    to each action) and the local env's return and metrics."""
    local = Episode(TaskRow(env_id, {"split": "train"}, seed=1))
    actions = [JUNK, *local.env.unwrapped.oracle_actions()]
    played, turns = [], [{"role": "user", "content": local.prompt}]
    for action in actions:
        played.append(action)
        result = local.step(action)
        turns.append({"role": "user", "content": result.observation})
        if result.done:
            break
    out = tuple(played), tuple(turns), local.reward(), local.metrics()
    local.close()
    return out


def _completions(tok, name: str, actions) -> list[list[int]]:
    """The scripted generated ids: the first turn cut before its end-of-turn token (as at a
    length limit), the others ended with the token the family ends a turn with."""
    end = tok.convert_tokens_to_ids(FAMILIES[name][2])
    return [tok.encode(a, add_special_tokens=False) + ([end] if k else [])
            for k, a in enumerate(actions)]


def _expected_gap(tok, history, observation, completion) -> list[int]:
    """What the template renders after the last assistant turn of ``history`` when
    ``observation`` follows, found in the rendering of the real conversation (that turn's
    content replaced by a marker) and checked against the template's own tokenisation; less the
    template's end-of-turn token when the completion ended its turn."""
    marked = [*history[:-1], {"role": "assistant", "content": MARK}, observation]
    text = tok.apply_chat_template(marked, tokenize=False, add_generation_prompt=True)
    full = tok.apply_chat_template(marked, tokenize=True, add_generation_prompt=True,
                                   return_dict=False)
    tail = tok.encode(text[text.index(MARK) + len(MARK):], add_special_tokens=False)
    assert list(full[-len(tail):]) == tail  # the tail is what the template tokenises
    assert tail[0] in tok.all_special_ids  # it starts at the template's end of turn
    ended = completion[-1] in (tail[0], tok.eos_token_id)
    return tail[1:] if ended else tail


def _check_sequence(tok, name, prompt, seq, mask, actions, completions, observations):
    """Mask-1 spans are the completions verbatim; every gap is the template's rendering; for
    templates that write history as generated, every context is a full re-render."""
    starts = _starts(mask)
    assert len(starts) == len(completions)
    history = list(observations[0:1])
    at = 0
    for k, ids in enumerate(completions):
        assert starts[k] == at and seq[at:at + len(ids)] == ids and all(mask[at:at + len(ids)])
        if name in APPEND_ONLY:  # the context the model saw is the template's rendering
            context = tok.apply_chat_template(history, tokenize=True, return_dict=False,
                                              add_generation_prompt=True)
            assert list(prompt) + list(seq[:at]) == list(context), (name, k)
        at += len(ids)
        history.append({"role": "assistant", "content": actions[k]})
        if k + 1 == len(completions):
            break
        gap = _expected_gap(tok, history, observations[k + 1], ids)
        assert seq[at:at + len(gap)] == gap and not any(mask[at:at + len(gap)]), (name, k)
        at += len(gap)
        history.append(observations[k + 1])
    assert at == len(seq)


class ScriptedServer:
    """verl's ``server_manager``: returns the scripted ids (log-prob -0.5 each)."""

    def __init__(self, completions):
        self.completions, self.prompts = list(completions), []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        self.prompts.append(list(prompt_ids))
        ids = self.completions.pop(0)
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@cache
def _verl_config():
    import verl

    path = Path(verl.__file__).parent / "trainer/config/_generated_ppo_trainer.yaml"
    cfg = OmegaConf.load(path)
    cfg.actor_rollout_ref.rollout.response_length = 1 << 15
    cfg.actor_rollout_ref.rollout.prompt_length = 1 << 15
    return cfg


@pytest.mark.parametrize("name", FAMILIES)
def test_verl_agent_loop(name):
    tok = _tokenizer(name)
    cfg = _verl_config()
    for env_id in ENV_IDS:
        actions, observations, reward, metrics = _script(env_id)
        completions = _completions(tok, name, actions)
        server = ScriptedServer(completions)
        loop = TextgymsAgentLoop(DictConfigWrap(cfg), server, tok, None, RLHFDataset,
                                 DictConfigWrap(cfg.data), hf_model_type=FAMILIES[name][3])
        row = TaskRow(env_id, {"split": "train"}, seed=1).columns()
        out = asyncio.run(loop.run({"temperature": 0, "logprobs": True}, **row))
        assert out.prompt_ids == tok.apply_chat_template(
            observations[:1], tokenize=True, add_generation_prompt=True, return_dict=False)
        seq, mask = out.response_ids, out.response_mask
        if name == "gemma4":  # verl's Gemma 4 builder: no newline after the model's <turn|>
            assert type(loop.continuous_token_builder).__name__ == "Gemma4ContinuousTokenBuilder"
            seq, mask = _gemma4_newlines(tok, seq, mask)
        _check_sequence(tok, name, out.prompt_ids, seq, mask, actions, completions,
                        observations)
        pairs = set(zip(out.response_logprobs, out.response_mask))
        assert pairs == {(-0.5, 1), (0.0, 0)}  # the server's on the model's ids, 0 elsewhere
        assert server.prompts == [out.prompt_ids + out.response_ids[:a] for a in
                                  _starts(out.response_mask)]
        assert out.reward_score == pytest.approx(reward)
        # a row without the file's metric_keys reports the keys common to every env
        assert out.extra_fields["reward_extra_info"] == {k: metrics[k] for k in COMMON_METRICS}


def test_verl_uses_the_family_builder_where_verl_registers_one():
    kinds = {}
    cfg = _verl_config()
    for name, family in FAMILIES.items():
        loop = TextgymsAgentLoop(DictConfigWrap(cfg), None, _tokenizer(name), None, RLHFDataset,
                                 DictConfigWrap(cfg.data), hf_model_type=family[3])
        kinds[name] = type(loop.continuous_token_builder) is not ContinuousTokenBuilder
    assert {n for n, own in kinds.items() if own} == {"qwen2_5", "qwen3", "qwen3_5_think",
                                                      "gemma4", "gptoss", "deepseekv3", "glm4moe"}


def _gemma4_newlines(tok, seq, mask):
    """verl's Gemma 4 builder joins the model's ``<turn|>`` and the next ``<|turn>`` with no
    newline where the template writes one; put it back to compare with the template."""
    end, start = tok.convert_tokens_to_ids("<turn|>"), tok.convert_tokens_to_ids("<|turn>")
    newline = tok.encode("\n", add_special_tokens=False)
    out_ids, out_mask = [], []
    for i, (t, m) in enumerate(zip(seq, mask)):
        out_ids.append(t)
        out_mask.append(m)
        if t == end and i + 1 < len(seq) and seq[i + 1] == start:
            out_ids += newline
            out_mask += [0] * len(newline)
    return out_ids, out_mask


def _starts(mask):
    return [i for i, m in enumerate(mask) if m and (i == 0 or not mask[i - 1])]


class ScriptedEngine:
    """OpenRLHF's engine interface answering with the scripted ids."""

    def __init__(self, tok, completions):
        self.tok, self.completions, self.prompts = tok, list(completions), []

    async def generate(self, token_ids, params, multi_modal_data=None):
        self.prompts.append(list(token_ids))
        ids = self.completions.pop(0)
        text = self.tok.decode(ids, skip_special_tokens=True)
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=text,
                                                        finish_reason="stop", logprobs=None)])


@pytest.mark.parametrize("name", FAMILIES)
def test_openrlhf_agent(name):
    tok = _tokenizer(name)
    for env_id in ENV_IDS:
        actions, observations, reward, metrics = _script(env_id)
        completions = _completions(tok, name, actions)
        prompt = tok.apply_chat_template(observations[:1], tokenize=False,
                                         add_generation_prompt=True)
        label = json.dumps(TaskRow(env_id, {"split": "train"}, seed=1).columns())
        engine = ScriptedEngine(tok, completions)
        params = SimpleNamespace(max_tokens=None, logprobs=None)
        out = asyncio.run(AgentExecutor().execute(prompt, label, params, 1 << 16, tok, engine))
        tokens = out["observation_tokens"]
        first = out["action_ranges"][0][0]
        mask = [0] * len(tokens)
        for a, b in out["action_ranges"]:
            mask[a:b] = [1] * (b - a)
        _check_sequence(tok, name, tokens[:first], tokens[first:], mask[first:], actions,
                        completions, observations)
        assert out["reward"] == pytest.approx(reward)
        assert out["extra_logs"] == {k: metrics[k] for k in COMMON_METRICS}


def _trl_suffix(tok, tool_message):
    """``GRPOTrainer``'s own tool-response ids, with the template TRL would train with."""
    template = None if is_chat_template_prefix_preserving(tok) else get_training_chat_template(tok)
    trainer = SimpleNamespace(processing_class=tok, _tokenizer=tok, chat_template=template,
                              chat_template_kwargs={}, _is_vlm=False)
    return GRPOTrainer._get_tool_suffix_ids(trainer, [tool_message])


@pytest.mark.parametrize("name", FAMILIES)
def test_trl_environment_factory(name):
    from textgyms.actions import parse
    from textgyms.wrappers.trl import environment_factory

    tok = _tokenizer(name)
    if name in TRL_NO_TOOLS:  # GRPOTrainer refuses environment_factory with this template
        assert not supports_tool_calling(tok)
        return
    assert supports_tool_calling(tok)
    for env_id in ENV_IDS:
        actions, *_ = _script(env_id)
        instance = environment_factory(env_id, split="train")()
        instance.reset(seed=1)
        env = instance._env.unwrapped
        for action in actions[1:]:  # TRL only ever calls tools: the oracle's actions
            call = parse(action, env.tools)
            observation = getattr(instance, call.name)(**dict(call.args))
            message = {"role": "tool", "name": call.name, "content": observation}
            if name == "deepseekv3":  # TRL's dummy call has dict arguments; the template
                with pytest.raises(TypeError, match="concatenate"):  # joins them as a string
                    _trl_suffix(tok, message)
                continue
            text = tok.decode(_trl_suffix(tok, message))
            assert observation in text or json.dumps(observation, ensure_ascii=False) in text
        local = Episode(TaskRow(env_id, {"split": "train"}, seed=1))
        for action in actions[1:]:
            local.step(action)
        assert instance.get_reward() == pytest.approx(local.reward())
        local.close()
        instance._env.close()


@pytest.mark.parametrize("name", FAMILIES)
def test_rule_is_the_templates_tail_for_user_and_cut_turns(name):
    """The shared rule alone: after an ended and a cut completion, on an observation ending in
    a newline (trimmed by Llama 3.1 and Gemma 3), the appended ids are the template's."""
    tok = _tokenizer(name)
    history = [{"role": "user", "content": "Guess a word.\n"},
               {"role": "assistant", "content": "<guess>crane</guess>"}]
    observation = {"role": "user", "content": "G _ Y _ _\n"}
    turn = observation_turn(tok, [observation])
    for completion in _completions(tok, name, ["<guess>crane</guess>"] * 2):
        assert turn.ids_after(completion) == _expected_gap(tok, history, observation, completion)
    assert len(turn.close) == 1 and turn.close[0] in tok.all_special_ids
