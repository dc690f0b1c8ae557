"""``textgyms export sft``: oracle records load with ``datasets``, are distinct, come from the
train split only, and feed ``baselines/sft.py``."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the envs)
from textgyms.cli import main as cli_main
from textgyms.core import task_in_split
from textgyms.envs.wordle.generate import answer_pool
from textgyms.errors import ConfigError
from textgyms.export import ExportSource, export_sft, parse_sources, record_key

datasets = pytest.importorskip("datasets")

WORDLE = "textgyms/Wordle-v0"
ISO = next(i for i in textgyms.env_ids() if i.startswith("textgyms/ISO20022"))
EASY = {"vocab": "easy", "max_guesses": 3}


def _load(path):
    return datasets.load_dataset("json", data_files=str(path), split="train")


def test_chat_records_load_with_datasets_and_are_distinct_train_tasks(tmp_path):
    out = tmp_path / "wordle.jsonl"
    counts = export_sft([ExportSource(WORDLE, EASY)], 60, out, "chat", progress=False)
    assert counts == {WORDLE: 60}
    ds = _load(out)
    assert len(ds) == 60
    assert {"messages", "env_id", "env_kwargs", "seed", "task_id", "score"} <= set(ds.column_names)
    assert len(set(ds["task_id"])) == 60  # deduplicated...
    assert max(ds["seed"]) > 59  # ...by skipping seeds whose game was already written
    test_answers = set(answer_pool(5, "easy", "test"))
    env = gym.make(WORDLE, **EASY, split="train")
    for row in ds:
        assert row["score"] == 1.0 and json.loads(row["env_kwargs"]) == EASY
        roles = [m["role"] for m in row["messages"]]
        assert roles[0] == "user" and roles[-1] == "assistant"
        assert roles[1:] == ["assistant", "user"] * (len(roles) // 2 - 1) + ["assistant"]
        env.reset(seed=row["seed"])  # the record is the train-split task of its seed
        assert env.unwrapped.task.task_id == row["task_id"]
        assert env.unwrapped.task.secret not in test_answers
        last = row["messages"][-1]["content"]
        assert last == f"<guess>{env.unwrapped.task.secret}</guess>"


def test_tool_records_of_two_envs_use_the_trl_tool_call_format(tmp_path):
    out = tmp_path / "mix.jsonl"
    sources = parse_sources(f"{WORDLE},{ISO}", json.dumps({WORDLE: EASY}))
    assert [s.kwargs for s in sources] == [EASY, {}]
    export_sft(sources, 5, out, "tools", seed=3, progress=False)
    ds = _load(out)
    assert sorted(set(ds["env_id"])) == sorted([WORDLE, ISO]) and len(ds) == 10
    for row in ds:
        tools = json.loads(row["tools"])
        names = {t["function"]["name"] for t in tools}
        calls = [m for m in row["messages"] if m["role"] == "assistant"]
        assert calls and all(m["content"] == "" and len(m["tool_calls"]) == 1 for m in calls)
        assert {c["tool_calls"][0]["function"]["name"] for c in calls} <= names
        replies = [m for m in row["messages"] if m["role"] == "tool"]
        assert len(replies) == len(calls) - 1 and all(m["name"] in names for m in replies)
        env = gym.make(row["env_id"], **json.loads(row["env_kwargs"]), split="train")
        env.reset(seed=row["seed"])
        task = env.unwrapped.task
        assert task.task_id == row["task_id"]
        if row["env_id"] == ISO:  # a procedural family: the test split is a hash partition
            assert task_in_split(task, "train") and not task_in_split(task, "test")
    wordle = next(r for r in ds if r["env_id"] == WORDLE)
    args = wordle["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert args == {"word": "crate"}  # the solver's opening word, as a typed argument


def test_a_weighted_mixture_splits_the_episodes_by_weight(tmp_path):
    spec = json.dumps([{"id": WORDLE, "kwargs": EASY, "weight": 2, "name": "wordle-easy"},
                       {"id": ISO}])
    sources = parse_sources(spec, '{"max_turns": 5}')
    assert [(s.name, s.weight) for s in sources] == [("wordle-easy", 2.0), ("", 1.0)]
    assert sources[0].kwargs == {"max_turns": 5, **EASY} and sources[1].kwargs == {"max_turns": 5}
    counts = export_sft(sources, 3, tmp_path / "mix.jsonl", "chat", progress=False)
    assert counts == {"wordle-easy": 4, ISO: 2}  # 3 x weight / mean weight (1.5)
    rows = [json.loads(line) for line in (tmp_path / "mix.jsonl").read_text().splitlines()]
    assert [r["env_id"] for r in rows] == [WORDLE] * 4 + [ISO] * 2
    assert [s.env_id for s in parse_sources(f"{WORDLE}*3,{ISO}")] == [WORDLE, ISO]


def test_a_test_split_or_unknown_format_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="train-split tasks only"):
        parse_sources(WORDLE, '{"split": "test"}')
    with pytest.raises(ConfigError, match="unknown format"):
        export_sft([ExportSource(WORDLE, {})], 1, tmp_path / "x.jsonl", "xml", progress=False)
    with pytest.raises(ConfigError, match="unknown env"):
        parse_sources("textgyms/Nope-v0")


def test_cli_writes_the_file_and_records_are_deterministic(tmp_path, capsys):
    argv = ["export", "sft", "--envs", WORDLE, "--kwargs", json.dumps(EASY), "--episodes", "4",
            "--seed", "7", "--quiet"]
    assert cli_main([*argv, "--out", str(tmp_path / "a.jsonl")]) == 0
    assert f"{WORDLE}: 4 episodes" in capsys.readouterr().out
    assert cli_main([*argv, "--out", str(tmp_path / "b.jsonl")]) == 0
    a, b = (tmp_path / "a.jsonl").read_text(), (tmp_path / "b.jsonl").read_text()
    assert a == b and len(a.splitlines()) == 4
    assert len({record_key(json.loads(line)) for line in a.splitlines()}) == 4


def test_sft_script_trains_on_both_formats(tmp_path):
    pytest.importorskip("torch")
    from baselines.sft import Args, read_export, tokenize
    from textgyms.models import tiny_random

    _, tok = tiny_random(seed=0)
    for fmt in ("chat", "tools"):
        path = tmp_path / f"{fmt}.jsonl"
        export_sft([ExportSource(WORDLE, EASY)], 3, path, fmt, progress=False)
        transcripts = read_export(str(path), limit=2)
        assert len(transcripts) == 2
        rows = tokenize(tok, transcripts, Args(tools_in_prompt=fmt == "tools"))
        taught = tok.decode([i for i, m in zip(rows[0]["input_ids"], rows[0]["loss_mask"]) if m])
        first = '<tool_call>{"name": "guess", "arguments": {"word": "crate"}}</tool_call>'
        assert taught.startswith("<guess>crate</guess>" if fmt == "chat" else first)
        assert taught.count(tok.eos_token) == sum(
            m["role"] == "assistant" for m in transcripts[0]["messages"])
