"""The message-level trainer adapters against a real model behind a real OpenAI-compatible server.

One ``transformers serve`` process (SmolLM2-135M-Instruct on CPU, the ``model_server`` fixture)
answers every adapter here: verifiers' ``vf-eval`` with the textgyms tasksets and with verifiers'
own OpenEnv taskset against ``textgyms serve``, the OpenRLHF agent file, ART rollouts and
``textgyms eval --policy openai:``. Every episode is then replayed locally: the model's recorded
completions, stepped into a fresh env on the same seed, must give the same observations, rewards
and score as the adapter recorded. Episodes are short (``max_turns`` 2, 8 tokens a reply).

verifiers runs from its own venv (``.venv-verifiers``, made by ``make test``): verifiers 0.4 pins
mcp 2 and the openenv 0.10 of this venv needs mcp<2.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from support import started_servers, verifiers_env

import textgyms
from textgyms.integrations.episode import COMMON_METRICS, Episode, TaskRow

# Importing ART imports litellm, which fetches a price table from the network unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
VF_BIN = ROOT / ".venv-verifiers" / "bin"
KWARGS = {"max_turns": 2}
MAX_TOKENS = 8


def _replay(row: TaskRow, actions: list[str]) -> tuple[Episode, list[str]]:
    """A local episode stepped with ``actions``; its observations after each step."""
    episode = Episode(row)
    observations = []
    for action in actions:
        result = episode.step(action)
        observations.append(result.observation)
        if result.done:
            break
    return episode, observations


# ---------------------------------------------------------------- verifiers


def _vf_cmd(server, out: Path, *args: str) -> tuple[list[str], dict]:
    """``vf-eval`` (the real CLI, from the verifiers venv) against the model server."""
    if not (VF_BIN / "vf-eval").exists():
        pytest.skip("no .venv-verifiers (run `make test`, which makes it)")
    env = {**verifiers_env(VF_BIN), "OPENAI_API_KEY": "local"}
    cmd = [str(VF_BIN / "vf-eval"), *args, "-m", server.model,
           "--client.base-url", f"{server.url}/v1", "--client.api-key-var", "OPENAI_API_KEY",
           "--env.player.runtime.type", "subprocess", "--env.player.harness.id", "null",
           "--sampling.max-tokens", str(MAX_TOKENS), "--sampling.temperature", "0",
           "-r", "1", "--output-dir", str(out), "--run.name", "run"]
    return cmd, env


def _traces(out: Path, done: subprocess.CompletedProcess) -> list[dict]:
    """The traces a finished ``vf-eval`` wrote, in task order; every episode without error."""
    assert done.returncode == 0, done.stderr[-3000:]
    episodes = [json.loads(line) for line in (out / "run" / "traces.jsonl").open()]
    assert episodes and all(e["ok"] and not e["errors"] for e in episodes), episodes
    traces = [trace for e in episodes for trace in e["traces"]]
    return sorted(traces, key=lambda t: t["task"]["data"]["idx"])


def _vf_eval(server, out: Path, *args: str) -> list[dict]:
    cmd, env = _vf_cmd(server, out, *args)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    return _traces(out, done)


def _messages(trace: dict) -> tuple[list[str], list[str]]:
    """The user and assistant texts of a verifiers trace, in order."""
    messages = [node["message"] for node in trace["nodes"]]
    return ([m["content"] for m in messages if m["role"] == "user"],
            [m["content"] for m in messages if m["role"] == "assistant"])


def _check_textgyms_trace(trace: dict, finished: bool = True) -> None:
    info = trace["info"]["textgyms"]
    assert trace["task"]["key"] == info["task_id"]  # the trace names the task by its task_id
    users, replies = _messages(trace)
    assert replies == info["actions"]  # the env played exactly what the model wrote
    episode, observations = _replay(TaskRow.from_row(info), replies)
    assert users[0] == episode.prompt
    assert users[1:] == observations[: len(users) - 1]  # each observation went back unchanged
    assert trace["rewards"] == {"textgyms": {"score": pytest.approx(episode.reward()),
                                             "weight": 1.0}}
    assert trace["metrics"] == pytest.approx(episode.metrics())
    assert trace["metrics"]["finished"] == float(finished) == float(episode.done)
    episode.close()


def test_vf_eval_plays_every_id_through_the_textgyms_tasksets(model_server, tmp_path):
    """One run over every id in turn (``interleave``): Wordle and Search for two turns, the
    long-prompt envs for one; the env's own turn limit ends every episode."""
    ids = textgyms.env_ids()
    entries = [{"id": i, "kwargs": {"max_turns": 2 if ("Wordle" in i or "Search" in i) else 1}}
               for i in ids]
    traces = _vf_eval(model_server, tmp_path / "all", "textgyms_env",
                      "--env.taskset.envs", json.dumps(entries), "--env.taskset.interleave",
                      "True", "--env.taskset.seed", "7", "-n", str(len(ids)))
    assert [t["info"]["textgyms"]["env_id"] for t in traces] == ids
    assert [t["info"]["textgyms"]["seed"] for t in traces] == list(range(7, 7 + len(ids)))
    for trace, entry in zip(traces, entries):
        assert len(_messages(trace)[1]) <= entry["kwargs"]["max_turns"]
        _check_textgyms_trace(trace)


def test_vf_eval_family_taskset_and_the_agents_turn_limit(model_server, tmp_path):
    """A family module as the taskset id (its env by default), the test split, two tasks, and
    the agent's own limit (2 turns) cutting an episode the env would let run for 4."""
    traces = _vf_eval(model_server, tmp_path / "wordle", "textgyms_wordle",
                      "--env.taskset.kwargs", '{"max_turns": 4}', "--env.taskset.split", "test",
                      "--env.player.max-turns", "2", "-n", "2")
    assert [t["info"]["textgyms"]["seed"] for t in traces] == [0, 1]
    for trace in traces:
        assert trace["info"]["textgyms"]["env_id"] == "textgyms/Wordle-v0"
        assert json.loads(trace["info"]["textgyms"]["env_kwargs"])["split"] == "test"
        assert len(trace["info"]["textgyms"]["actions"]) == 2
        _check_textgyms_trace(trace, finished=False)


OPENENV_TOML = """
[env.taskset]
id = "openenv"
base_url = "{base_url}"
resets = [{{seed = 11}}]
"""
OPENENV_KWARGS = {"max_turns": 1}


@pytest.fixture
def id_servers() -> Iterator[dict[str, object]]:
    """``textgyms serve`` (from this venv) for every id, with ``OPENENV_KWARGS``, by id: all
    started at once, since each start is mostly importing the server stack."""
    if not (VF_BIN / "vf-eval").exists():
        pytest.skip("no .venv-verifiers (run `make test`, which makes it)")
    yield from started_servers({env_id: (env_id, {"kwargs": OPENENV_KWARGS})
                                for env_id in textgyms.env_ids()})


def test_verifiers_openenv_taskset_drives_textgyms_serve(model_server, id_servers, tmp_path):
    """verifiers' own OpenEnv taskset (no textgyms code in the loop) against ``textgyms serve``
    run from this venv, one server and one ``vf-eval`` per id, all at once; rewards and
    observations equal the local env's. Most of its time is the model reading the six OpenEnv
    payloads (observation JSON and action schema: about 17,600 prompt tokens, one request at a
    time on the CPU), not the servers or verifiers' setup."""
    ids, kwargs = textgyms.env_ids(), OPENENV_KWARGS
    runs = []
    for env_id in ids:
        out = tmp_path / env_id.split("/")[1]
        out.mkdir()
        # A config file: verifiers' CLI cannot take the OpenEnv taskset from flags alone (it
        # validates a default OpenEnvConfig, which needs `env` or `base_url`, first).
        config = out / "eval.toml"
        config.write_text(OPENENV_TOML.format(base_url=id_servers[env_id].url))
        cmd, env = _vf_cmd(model_server, out, "@", str(config), "-n", "1")
        runs.append((out, subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.PIPE, text=True)))
    results = []
    for out, proc in runs:
        _, err = proc.communicate(timeout=900)
        results.append(_traces(out, subprocess.CompletedProcess(proc.args, proc.returncode,
                                                                "", err)))
    for env_id, traces in zip(ids, results):
        users, replies = _messages(traces[0])
        payloads = [json.loads(u) for u in users]
        # verifiers strips the reply and sends it as the action's one required field, "text".
        row = TaskRow.from_row({"env_id": env_id, "env_kwargs": kwargs, "seed": 11})
        episode, observations = _replay(row, [r.strip() for r in replies])
        assert payloads[0]["observation"]["text"] == episode.prompt
        assert payloads[0]["action_schema"]["required"] == ["text"]
        assert [p["observation"]["text"] for p in payloads[1:]] == observations[: len(users) - 1]
        assert episode.done and len(replies) == 1
        assert traces[0]["rewards"]["openenv_reward"]["score"] == pytest.approx(episode.reward())
        episode.close()


# ---------------------------------------------------------------- OpenRLHF


class ServerEngine:
    """OpenRLHF's engine interface over the server's ``/v1/completions``: the token ids are
    decoded to the prompt text, and the completion is tokenized back (plus EOS on a stop)."""

    def __init__(self, server, tokenizer):
        self.server, self.tokenizer, self.calls = server, tokenizer, 0

    def _complete(self, prompt: str, max_tokens: int) -> dict:
        body = {"model": self.server.model, "prompt": prompt, "max_tokens": max_tokens,
                "temperature": 0}
        request = urllib.request.Request(f"{self.server.url}/v1/completions",
                                         json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as reply:
            return json.loads(reply.read())["choices"][0]

    async def generate(self, token_ids, params, multi_modal_data=None):
        self.calls += 1
        prompt = self.tokenizer.decode(token_ids)
        choice = await asyncio.to_thread(self._complete, prompt, min(params.max_tokens, MAX_TOKENS))
        ids = self.tokenizer(choice["text"], add_special_tokens=False)["input_ids"]
        if choice["finish_reason"] == "stop":
            ids.append(self.tokenizer.eos_token_id)
        out = SimpleNamespace(token_ids=ids, text=choice["text"],
                              finish_reason=choice["finish_reason"], logprobs=None)
        return SimpleNamespace(outputs=[out])


def test_openrlhf_agent_file_with_the_server(model_server):
    pytest.importorskip("openrlhf.utils.agent")
    from transformers import AutoTokenizer

    from textgyms.integrations.openrlhf_agent import AgentExecutor

    tokenizer = AutoTokenizer.from_pretrained(model_server.model, local_files_only=True)
    for env_id in ("textgyms/Wordle-v0", "textgyms/Code-v0"):
        row = TaskRow.from_row({"env_id": env_id, "env_kwargs": KWARGS, "seed": 2})
        local = Episode(row)
        prompt = tokenizer.apply_chat_template(local.messages, tokenize=False,
                                               add_generation_prompt=True)
        local.close()
        engine = ServerEngine(model_server, tokenizer)
        params = SimpleNamespace(max_tokens=None, logprobs=None)
        out = asyncio.run(AgentExecutor().execute(prompt, json.dumps(row.columns()), params,
                                                  8192, tokenizer, engine))
        tokens = out["observation_tokens"]
        replies = [tokenizer.decode(tokens[a:b], skip_special_tokens=True)
                   for a, b in out["action_ranges"]]
        episode, _ = _replay(row, replies)
        assert engine.calls == len(replies) == KWARGS["max_turns"] or episode.done
        assert out["reward"] == pytest.approx(episode.reward())
        assert out["extra_logs"] == pytest.approx(episode.metrics(COMMON_METRICS))
        episode.close()


# ---------------------------------------------------------------- ART


def _check_art(trajectory, scenario) -> None:
    from openai.types.chat.chat_completion import Choice

    from textgyms.integrations.art import Scenario, _action

    choices = [m for m in trajectory.messages_and_choices if isinstance(m, Choice)]
    assert choices and all(c.message.role == "assistant" for c in choices)
    row = Scenario.from_row(trajectory.metadata).row  # the trajectory replays from itself
    assert (row.env_id, row.env_kwargs, row.seed, row.split) == (
        scenario.row.env_id, scenario.row.env_kwargs, scenario.row.seed, scenario.row.split)
    episode, observations = _replay(row, [_action(c.message) for c in choices])
    assert trajectory.metadata["task_id"] == episode.info["task_id"]
    answers = [m["content"] for m in trajectory.messages_and_choices
               if isinstance(m, dict) and m["role"] in ("user", "tool")]
    assert answers[0] == episode.prompt and answers[1:] == observations[: len(answers) - 1]
    assert trajectory.reward == pytest.approx(episode.reward())
    # this env's keys, less parts its verdict lacks; ART adds its own (e.g. the duration)
    metrics = {k: v for k, v in episode.metrics(fill=None).items() if v is not None}
    assert {k: trajectory.metrics[k] for k in metrics} == pytest.approx(metrics)
    assert trajectory.metadata["seed"] == scenario.seed
    episode.close()


def test_art_rollouts_and_groups_with_the_server(model_server):
    # art only through the adapter, which keeps ART's transformers patch out of this process
    pytest.importorskip("textgyms.integrations.art")
    from textgyms.integrations.art import Scenario, art, rollout, trajectory_groups

    model = art.Model(name="smollm2", project="textgyms-tests", inference_api_key="local",
                      inference_base_url=f"{model_server.url}/v1",
                      inference_model_name=model_server.model)
    for scenario in (Scenario("textgyms/Wordle-v0", KWARGS, seed=4, max_tokens=MAX_TOKENS),
                     Scenario("textgyms/Code-v0", KWARGS, seed=4, tool_calls=False,
                              max_tokens=MAX_TOKENS)):
        trajectory = asyncio.run(rollout(model, scenario))
        assert isinstance(trajectory, art.Trajectory)
        assert (trajectory.tools is not None) == scenario.tool_calls
        _check_art(trajectory, scenario)
    groups = asyncio.run(trajectory_groups("textgyms/Wordle-v0", 1, model=model, group_size=2,
                                           kwargs=KWARGS, seed=9, max_tokens=MAX_TOKENS,
                                           temperature=1.0))
    assert [len(g.trajectories) for g in groups] == [2] and not any(g.exceptions for g in groups)
    for i, group in enumerate(groups):
        assert isinstance(group, art.TrajectoryGroup)
        for trajectory in group.trajectories:
            assert trajectory.metadata["seed"] == 9 + i  # one scenario per group
            _check_art(trajectory, Scenario("textgyms/Wordle-v0", KWARGS, seed=9 + i))


# ---------------------------------------------------------------- textgyms eval


def test_eval_with_openai_policy_against_the_server(model_server, tmp_path):
    out = tmp_path / "eval"
    policy = f"openai:{model_server.model}@{model_server.url}/v1?max_tokens={MAX_TOKENS}&temperature=0"
    subprocess.run([sys.executable, "-m", "textgyms.cli", "eval", "--policy", policy,
                    "--envs", "textgyms/Wordle-v0", "--episodes", "2", "--kwargs",
                    json.dumps(KWARGS), "--out", str(out)], check=True, timeout=900,
                   capture_output=True)
    results = [json.loads(line) for line in (out / "results.jsonl").open()]
    assert len(results) == 2
    for r in results:
        assert len(r["actions"]) <= KWARGS["max_turns"] and r["turns"] == len(r["actions"])
        row = TaskRow.from_row({"env_id": "textgyms/Wordle-v0", "env_kwargs": {**KWARGS,
                                "split": "test"}, "seed": r["seed"], "split": "test"})
        episode, _ = _replay(row, r["actions"])
        assert r["score"] == pytest.approx(episode.score())
        episode.close()
