"""``textgyms export tasks``: task rows load with ``datasets``, carry each trainer's columns,
replay the env's own prompt for their seed, follow mixture weights, and never put a test-split
task in a train file."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the envs)
from textgyms.cli import main as cli_main
from textgyms.envs.wordle.generate import answer_pool
from textgyms.errors import ConfigError
from textgyms.export_sources import parse_sources
from textgyms.export_tasks import export_tasks
from textgyms.integrations.episode import TaskRow, metric_keys

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

WORDLE = "textgyms/Wordle-v0"
ISO = next(i for i in textgyms.env_ids() if i.startswith("textgyms/ISO20022"))
EASY = {"vocab": "easy", "max_guesses": 3}
BASE = {"prompt", "env_id", "env_kwargs", "seed", "task_id", "split", "extra_info",
        "metric_keys"}


def _load(path):
    kind = "parquet" if str(path).endswith(".parquet") else "json"
    return datasets.load_dataset(kind, data_files=str(path), split="train")


@pytest.mark.parametrize("trainer,extra", [
    ("generic", set()),
    ("verl", {"data_source", "agent_name"}),
    ("skyrl", {"env_class", "reward_spec", "data_source"}),
])
def test_rows_load_with_datasets_and_carry_the_trainers_columns(tmp_path, trainer, extra):
    out = tmp_path / f"{trainer}.parquet"
    counts = export_tasks(parse_sources(WORDLE, json.dumps(EASY)), 12, out, trainer)
    assert counts == {WORDLE: 12}
    ds = _load(out)
    assert set(ds.column_names) == BASE | extra and len(ds) == 12
    assert len(set(ds["task_id"])) == 12  # distinct tasks
    env = gym.make(WORDLE, **EASY)
    for i, row in enumerate(ds):
        _, info = env.reset(seed=row["seed"])
        assert row["prompt"] == info["messages"]  # the env's own first messages, byte for byte
        assert row["task_id"] == info["task_id"] and row["split"] == "train"
        assert json.loads(row["env_kwargs"]) == {**EASY, "split": "train"}
        assert row["extra_info"]["index"] == i
        assert TaskRow.from_row({"extra_info": row["extra_info"]}) == TaskRow.from_row(row)
        if trainer == "verl":
            assert row["agent_name"] == "textgyms" and row["data_source"] == WORDLE
        if trainer == "skyrl":
            assert row["env_class"] == "textgyms" and row["reward_spec"] == {"method": "env"}
            assert row["data_source"] == WORDLE  # SkyRL's evaluation groups by it
        assert tuple(row["metric_keys"]) == metric_keys(WORDLE)
        assert TaskRow.from_row(row).metric_keys == metric_keys(WORDLE)


def test_test_split_rows_never_reach_a_train_file(tmp_path):
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    export_tasks(parse_sources(WORDLE, json.dumps(EASY), "train"), 40, train)
    export_tasks(parse_sources(WORDLE, json.dumps(EASY), "test"), 10, test)
    train_ds, test_ds = _load(train), _load(test)
    assert set(train_ds["split"]) == {"train"} and set(test_ds["split"]) == {"test"}
    assert not set(train_ds["task_id"]) & set(test_ds["task_id"])
    test_answers = set(answer_pool(5, "easy", "test"))  # Wordle splits its answer list
    for ds, split in ((train_ds, "train"), (test_ds, "test")):
        for row in ds:  # the row's task, as its env makes it, is in the row's split
            env = TaskRow.from_row(row).make()
            env.reset(seed=row["seed"])
            assert (env.unwrapped.task.secret in test_answers) == (split == "test")
            env.close()
    with pytest.raises(ConfigError, match="train-split tasks only"):
        parse_sources(WORDLE, '{"split": "test"}', "train")


def test_mixture_weights_and_per_env_kwargs(tmp_path):
    out = tmp_path / "mix.jsonl"
    sources = parse_sources(f"{WORDLE}*3,{ISO}", json.dumps({WORDLE: EASY}))
    counts = export_tasks(sources, 4, out, "verl")
    assert counts == {WORDLE: 6, ISO: 2}  # 4 x weight / mean weight
    ds = _load(out)
    assert [r["env_id"] for r in ds] == [WORDLE] * 6 + [ISO] * 2
    assert [r["extra_info"]["index"] for r in ds] == list(range(8))
    assert {r["data_source"] for r in ds} == {WORDLE, ISO}
    # every row carries the mixture's one key set (verl builds its arrays from one sample's)
    assert {tuple(r["metric_keys"]) for r in ds} == {metric_keys([WORDLE, ISO])}


def test_cli_writes_the_file_and_refuses_bad_arguments(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    code = cli_main(["export", "tasks", "--envs", WORDLE, "--kwargs", json.dumps(EASY),
                     "--split", "test", "--episodes", "3", "--for", "skyrl", "--out", str(out)])
    assert code == 0 and "3 test-split tasks" in capsys.readouterr().out
    assert set(_load(out)["split"]) == {"test"}
    with pytest.raises(ConfigError, match="parquet or .jsonl"):
        export_tasks(parse_sources(WORDLE), 1, tmp_path / "t.csv")
    with pytest.raises(ConfigError, match="unknown trainer"):
        export_tasks(parse_sources(WORDLE), 1, tmp_path / "t.jsonl", "openrlhf")
    assert cli_main(["export", "tasks", "--envs", WORDLE, "--kwargs", '{"split": "train"}',
                     "--split", "test", "--out", str(out)]) == 2
    assert "test-split tasks only" in capsys.readouterr().err
