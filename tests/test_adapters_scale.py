"""Trainer adapters at scale: env work never blocks the rollout event loop, Code runs of
concurrent rollouts overlap in the sandbox pool, every episode reports one fixed metric key set
per env id (the union over a mixture), and observations and contexts keep to the token budget.

The async checks drive OpenRLHF's own ``MultiTurnAgentExecutor`` (the shipped agent file) with
the real Code sandbox; the engine answers with fixed texts tokenized by SmolLM2's tokenizer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re
from types import SimpleNamespace

import pytest

import textgyms
from textgyms.cpus import sandbox_workers, usable_cpus
from textgyms.errors import ConfigError
from textgyms.integrations import episode as episode_module
from textgyms.integrations.episode import (
    COMMON_METRICS,
    Episode,
    TaskRow,
    cut_observation,
    env_name,
    metric_keys,
    obs_token_limit,
)

CODE_KWARGS = {"max_turns": 2, "run_timeout": 30.0}


# ------------------------------------------------------------------------------ metrics


@pytest.mark.parametrize("env_id", textgyms.env_ids())
def test_every_episode_reports_its_envs_fixed_keys_with_the_verdict_parts(env_id):
    keys = metric_keys(env_id)
    name = env_name(env_id)
    assert keys[:len(COMMON_METRICS)] == COMMON_METRICS
    assert f"{name}/score" in keys and f"{name}/invalid_actions" in keys
    row = TaskRow.from_row({"env_id": env_id, "seed": 4, "env_kwargs": {"max_turns": 8}})
    oracle, cut = Episode(row), Episode(row)
    try:
        for action in oracle.env.unwrapped.oracle_actions():
            if oracle.step(action).done:
                break
        cut.step("not an action")  # then the trainer cuts it: the verdict as things stand
        for ep in (oracle, cut):
            metrics = ep.metrics()
            assert tuple(metrics) == keys  # the same keys, in the same order, every episode
            assert all(isinstance(v, float) for v in metrics.values())
            assert metrics["score"] == metrics[f"{name}/score"] == ep.score()
            assert metrics["return"] == ep.reward() and metrics[f"{name}/episodes"] == 1.0
        parts = oracle.info["parts"]
        for key in keys:
            if key.startswith(f"{name}/parts/") and key.rpartition("/")[2] in parts:
                assert oracle.metrics()[key] == parts[key.rpartition("/")[2]]
        assert oracle.metrics()["solved"] == 1.0 and oracle.metrics()["finished"] == 1.0
        assert cut.metrics()["invalid_actions"] == 1.0 and cut.metrics()["finished"] == 0.0
    finally:
        oracle.close()
        cut.close()


def test_a_mixture_reports_the_union_with_other_envs_keys_filled():
    mixture = "textgyms/Wordle-v0*2,textgyms/Code-v0"
    keys = metric_keys(mixture)
    assert keys == metric_keys(["textgyms/Wordle-v0", "textgyms/Code-v0", "textgyms/Wordle-v0"])
    assert set(metric_keys("textgyms/Wordle-v0")) | set(metric_keys("textgyms/Code-v0")) == set(keys)
    row = TaskRow.from_row({"env_id": "textgyms/Wordle-v0", "seed": 1, "metric_keys": keys})
    episode = Episode(row)
    episode.step("<guess>crane</guess>")
    for fill in (0.0, None):
        metrics = episode.metrics(fill=fill)
        assert tuple(metrics) == keys
        assert metrics["code/score"] is fill and metrics["code/parts/tests"] is fill
        assert metrics["wordle/parts/greens"] == episode.metrics()["wordle/parts/greens"]
    assert math.isnan(episode.metrics(fill=math.nan)["code/episodes"])
    episode.close()
    # the keys travel in the row (as a list or JSON text), top level or in extra_info
    assert TaskRow.from_row({"extra_info": json.dumps(row.columns())}).metric_keys == keys
    import gymnasium as gym

    # a second version of Wordle would log under the same name: refused
    gym.register(id="textgyms/Wordle-v99", entry_point="textgyms.envs.wordle.env:WordleEnv")
    try:
        with pytest.raises(ConfigError, match="both log metrics"):
            metric_keys(["textgyms/Wordle-v0", "textgyms/Wordle-v99"])
    finally:
        del gym.registry["textgyms/Wordle-v99"]


# ------------------------------------------------------------------------------ budget


def test_observations_are_cut_to_the_budget_with_a_visible_marker(monkeypatch):
    from textgyms.models import tiny_tokenizer

    tok = tiny_tokenizer()
    text = "the quick brown fox jumps over the lazy dog " * 20
    n = len(tok.encode(text, add_special_tokens=False))
    cut = cut_observation(text, 10, tok)
    assert cut.endswith(f"…[truncated {n - 10} tokens]")
    assert len(tok.encode(cut.rpartition("\n")[0], add_special_tokens=False)) <= 10
    assert cut_observation(text, n, tok) == text and cut_observation(text, None, tok) == text
    raw = cut_observation("é" * 10, 5)  # bytes without a tokenizer; never half a character
    assert raw == "éé\n…[truncated 15 bytes]"
    monkeypatch.setenv("TEXTGYMS_MAX_OBS_TOKENS", "64")
    assert obs_token_limit() == 64 and obs_token_limit(8) == 8
    monkeypatch.setenv("TEXTGYMS_MAX_OBS_TOKENS", "lots")
    with pytest.raises(ConfigError, match="TEXTGYMS_MAX_OBS_TOKENS"):
        obs_token_limit()
    with pytest.raises(ConfigError, match="max_obs_tokens"):
        obs_token_limit(0)


# ------------------------------------------------------------------------------ sandbox pool


def test_the_adapters_size_the_sandbox_pool_to_the_cpus_or_the_override(monkeypatch):
    from textgyms.sandbox import client

    monkeypatch.delenv("TEXTGYMS_SANDBOX_WORKERS", raising=False)
    assert sandbox_workers() == usable_cpus()
    monkeypatch.setenv("TEXTGYMS_SANDBOX_WORKERS", "0")
    with pytest.raises(ConfigError, match="TEXTGYMS_SANDBOX_WORKERS"):
        sandbox_workers()
    monkeypatch.setenv("TEXTGYMS_SANDBOX_WORKERS", "5")
    monkeypatch.setitem(episode_module._pool_state, "sized", None)
    monkeypatch.setitem(client._pool_size, "size", 1)
    row = TaskRow.from_row({"env_id": "textgyms/Code-v0", "seed": 0})
    env = row.make()  # an adapter's first env sizes the pool
    try:
        env.reset(seed=0)
        assert client._pool_size["size"] == 5 and env.unwrapped._sandbox().size == 5
    finally:
        env.close()


# ------------------------------------------------------------------------------ event loop


@pytest.fixture(scope="module")
def tokenizer():
    pytest.importorskip("openrlhf.utils.agent")
    from transformers import AutoTokenizer

    from textgyms.models import smollm2_dir

    return AutoTokenizer.from_pretrained(str(smollm2_dir()), local_files_only=True)


class ScriptedEngine:
    """OpenRLHF's engine interface answering with fixed texts (tokenized, EOS-ended)."""

    def __init__(self, tokenizer, texts):
        self.tokenizer, self.texts = tokenizer, list(texts)

    async def generate(self, token_ids, params, multi_modal_data=None):
        await asyncio.sleep(0)  # a real engine yields to the loop while it generates
        text = self.texts.pop(0) if self.texts else "nothing"
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = [*ids, self.tokenizer.eos_token_id][: params.max_tokens]
        out = SimpleNamespace(token_ids=ids, text=self.tokenizer.decode(ids, skip_special_tokens=True),
                              finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def _prompt(tokenizer, row: TaskRow) -> str:
    episode = Episode(row)
    try:
        return tokenizer.apply_chat_template(episode.messages, tokenize=False,
                                             add_generation_prompt=True)
    finally:
        episode.close()


async def _rollout(tokenizer, row, texts, done: list, name: str, max_length=16384):
    from textgyms.integrations.openrlhf_agent import AgentExecutor

    params = SimpleNamespace(max_tokens=None, logprobs=None)
    out = await AgentExecutor().execute(_prompt(tokenizer, row), json.dumps(row.columns()),
                                        params, max_length, tokenizer,
                                        ScriptedEngine(tokenizer, texts))
    done.append(name)
    return out


def test_a_slow_code_step_does_not_stall_the_other_rollouts_on_the_loop(tokenizer):
    """One rollout's Code run sleeps 2 s in the sandbox; four Wordle rollouts of three turns
    each, started after it on the same loop, all finish first. Stepping envs on the loop (the
    old adapter) blocked them behind the run, and the Code rollout finished first."""
    code = TaskRow.from_row({"env_id": "textgyms/Code-v0", "seed": 0, "env_kwargs": CODE_KWARGS})
    wordle = [TaskRow.from_row({"env_id": "textgyms/Wordle-v0", "seed": s,
                                "env_kwargs": {"max_guesses": 3}}) for s in range(4)]
    done: list[str] = []

    async def main():
        slow = asyncio.create_task(_rollout(
            tokenizer, code, ["<run>import time\ntime.sleep(2)\nprint('slept')</run>"], done,
            "code"))
        await asyncio.sleep(0.2)  # the Code rollout is inside its run by now (or starting it)
        fast = [_rollout(tokenizer, row, ["<guess>zzzzz</guess>"] * 3, done, f"wordle{i}")
                for i, row in enumerate(wordle)]
        return await asyncio.gather(slow, *fast)

    outs = asyncio.run(main())
    assert done[-1] == "code" and sorted(done[:-1]) == [f"wordle{i}" for i in range(4)]
    tokens = tokenizer.decode(outs[0]["observation_tokens"])
    assert "slept" in tokens  # the run really ran, and finished
    assert all(len(o["action_ranges"]) == 3 for o in outs[1:])


def test_eight_concurrent_code_rollouts_run_in_parallel_sandboxes(tokenizer, monkeypatch):
    """Each rollout's run prints the time it started and ended inside the sandbox: all eight
    runs are in progress at one instant (with one sandbox server they would run in turn)."""
    monkeypatch.setenv("TEXTGYMS_SANDBOX_WORKERS", "8")
    monkeypatch.setitem(episode_module._pool_state, "sized", None)
    script = ("<run>import time\nprint('START', time.time(), flush=True)\ntime.sleep(4)\n"
              "print('END', time.time())</run>")
    rows = [TaskRow.from_row({"env_id": "textgyms/Code-v0", "seed": s, "env_kwargs": CODE_KWARGS})
            for s in range(8)]
    done: list[str] = []

    async def main():
        return await asyncio.gather(*(_rollout(tokenizer, row, [script], done, str(i))
                                      for i, row in enumerate(rows)))

    outs = asyncio.run(main())
    spans = []
    for out in outs:
        text = tokenizer.decode(out["observation_tokens"])
        start = re.search(r"START ([0-9.]+)", text)
        end = re.search(r"END ([0-9.]+)", text)
        assert start and end, text[-500:]
        spans.append((float(start.group(1)), float(end.group(1))))
    assert len(spans) == 8
    assert max(s for s, _ in spans) < min(e for _, e in spans)  # one instant inside all eight


# ------------------------------------------------------------------------------ ART


def _art():
    pytest.importorskip("textgyms.integrations.art")
    from textgyms.integrations.art import Scenario, art, rollout

    return Scenario, art, rollout


def _chat_server(reply, limit=None):
    """A stdlib OpenAI-compatible server (test_policies_openai's) answering ``reply(first
    user message)``; with ``limit`` it counts a request's tokens as its JSON bytes / 4 and
    refuses (400) one whose prompt plus ``max_tokens`` exceeds it, as vLLM does."""
    from test_policies_openai import ChatServer, completion

    def responder(body, n, server):
        prompt = len(json.dumps(body["messages"])) // 4
        if limit is not None and prompt + body["max_tokens"] > limit:
            return 400, {}, {"error": {"message": "maximum context length exceeded"}}
        text = reply(body["messages"][0]["content"])
        return 200, {}, completion(text, prompt_tokens=prompt, completion_tokens=len(text) // 4)

    return ChatServer(responder)


def test_art_rollouts_keep_running_while_one_steps_a_slow_code_run():
    Scenario, art, rollout = _art()

    def reply(prompt):
        if "<submit>" in prompt:
            return "<run>import time\ntime.sleep(2)\nprint('slept')</run>"
        return "<guess>zzzzz</guess>"

    done: list[str] = []

    async def play(model, scenario, name):
        trajectory = await rollout(model, scenario)
        done.append(name)
        return trajectory

    with _chat_server(reply) as server:
        model = art.Model(name="m", project="textgyms-tests", inference_api_key="x",
                          inference_base_url=server.url, inference_model_name="m")

        async def main():
            code = Scenario("textgyms/Code-v0", CODE_KWARGS, seed=0, tool_calls=False,
                            max_turns=1)
            slow = asyncio.create_task(play(model, code, "code"))
            await asyncio.sleep(0.2)
            fast = [play(model, Scenario("textgyms/Wordle-v0", {"max_guesses": 3}, seed=s,
                                         tool_calls=False), f"wordle{s}") for s in range(4)]
            return await asyncio.gather(slow, *fast)

        trajectories = asyncio.run(main())
    assert done[-1] == "code" and sorted(done[:-1]) == [f"wordle{s}" for s in range(4)]
    assert trajectories[0].metrics["turns"] == 1.0
    assert all(t.metrics["wordle/turns"] == 3.0 for t in trajectories[1:])


def test_art_ends_an_episode_that_would_overflow_the_context_and_pays_the_score_so_far():
    Scenario, art, rollout = _art()
    action = "<run>print('x' * 3000)</run>"
    limit = 1500
    with _chat_server(lambda prompt: action, limit=limit) as server:
        model = art.Model(name="m", project="textgyms-tests", inference_api_key="x",
                          inference_base_url=server.url, inference_model_name="m")
        scenario = Scenario("textgyms/Code-v0", {"max_turns": 8}, seed=2, tool_calls=False,
                            max_tokens=64)
        with pytest.raises(Exception, match="maximum context length"):
            asyncio.run(rollout(model, scenario))  # without a budget: the server's error
        budgeted = dataclasses.replace(scenario, max_context_tokens=limit)
        trajectory = asyncio.run(rollout(model, budgeted))
        asked = len(server.requests)
    assert trajectory.metrics["context_cut"] == 1.0 and trajectory.metrics["finished"] == 0.0
    turns = int(trajectory.metrics["turns"])
    assert turns >= 1
    local = Episode(budgeted.row)
    for _ in range(turns):
        local.step(action)
    assert trajectory.reward == pytest.approx(local.reward())  # the score as things stand
    local.close()
    assert asked > turns  # the unbudgeted run's refused request is among them
