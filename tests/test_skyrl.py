"""textgyms in SkyRL: exported rows read by SkyRL's own ``PromptDataset``, envs made through
``skyrl_gym``'s registry exactly as SkyRL's generator makes them, and every registered id
played to its end through the ``BaseTextEnv`` contract, equal to the local env's episode
(byte-equal observations, the same rewards)."""

from __future__ import annotations

import json
import math
import sys

import gymnasium as gym
import pytest

import textgyms
from textgyms.errors import ConfigError
from textgyms.export_sources import parse_sources
from textgyms.export_tasks import export_tasks
from textgyms.integrations.episode import Episode, TaskRow, env_name, metric_keys

skyrl_gym = pytest.importorskip("skyrl_gym")
PromptDataset = pytest.importorskip("skyrl.train.dataset").PromptDataset
from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402

from textgyms.integrations.skyrl import ENV_CLASS, register_env  # noqa: E402
from textgyms.integrations.skyrl.env import TextgymsEnv  # noqa: E402

JUNK = ["", "hello", "<guess>zzzzz</guess>", '{"name": "nope", "arguments": {}}']


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """One exported task per registered id, read back by SkyRL's own PromptDataset (as its
    trainer reads ``data.train_data``): ``(prompt, env_class, extras)`` per row."""
    path = tmp_path_factory.mktemp("skyrl") / "tasks.parquet"
    export_tasks(parse_sources(",".join(textgyms.env_ids())), 1, path, "skyrl")
    from textgyms.models import tiny_tokenizer

    dataset = PromptDataset([str(path)], tiny_tokenizer(), max_prompt_length=100_000,
                            num_workers=1)
    return [dataset[i][:3] for i in range(len(dataset))]


def _make(env_class, extras, max_turns=50):
    """What SkyRL's generator does: set max_turns, then make through the registry."""
    return skyrl_gym.make(env_class, env_config={}, extras={**extras, "max_turns": max_turns})


def _play_both(env, local, seed, actions):
    """Step the SkyRL env and the local env with the same actions; compare every step."""
    local.reset(seed=seed)
    total, returned = 0.0, 0.0
    for action in actions:
        out = env.step(action)
        obs, reward, term, trunc, info = local.step(action)
        total += reward
        returned += out["reward"]
        assert set(out) == {"observations", "reward", "done", "metadata",
                            "postprocessed_action"}
        assert out["done"] == (term or trunc)
        assert out["metadata"]["observation"] == obs  # byte-equal
        if out["done"]:
            assert out["observations"] == []
            assert returned == pytest.approx(total)
            assert env.get_metrics()["score"] == info["score"]
            return True
        assert out["observations"] == [{"role": "user", "content": obs}]
        assert out["reward"] == reward
    return False


def test_the_env_is_registered_once_in_skyrls_registry():
    register_env()
    register_env()  # idempotent: SkyRL refuses a second registration of a name
    assert ENV_CLASS in skyrl_gym.registry
    assert issubclass(TextgymsEnv, BaseTextEnv)


def test_every_id_plays_the_oracles_episode_like_the_local_env(rows):
    register_env()
    assert sorted(extras["env_id"] for _, _, extras in rows) == sorted(textgyms.env_ids())
    for prompt, env_class, extras in rows:
        assert env_class == ENV_CLASS
        env = _make(env_class, extras)
        row = TaskRow.from_row(extras)
        local = row.make()
        first, meta = env.init(prompt)
        assert first == prompt and meta["task_id"] == row.task_id
        actions = list(local.unwrapped.solve(_task(local, row.seed)))
        assert _play_both(env, local, row.seed, actions), row.env_id
        assert env.get_metrics()["score"] == 1.0 and env.get_metrics()["finished"] == 1.0
        env.close()
        local.close()


def test_every_id_plays_junk_to_its_end_like_the_local_env(rows):
    register_env()
    for prompt, env_class, extras in rows:
        env = _make(env_class, extras, max_turns=0)  # the env's own limits only
        row = TaskRow.from_row(extras)
        local = row.make()
        env.init(prompt)
        assert _play_both(env, local, row.seed, JUNK * 30), row.env_id
        assert env.get_metrics()["score"] < 1.0
        env.close()
        local.close()


def test_the_trainers_turn_limit_ends_the_episode_with_the_episodes_reward(rows):
    register_env()
    prompt, env_class, extras = next(r for r in rows if r[2]["env_id"] == "textgyms/Wordle-v0")
    env = _make(env_class, extras, max_turns=2)
    env.init(prompt)
    first = env.step("<guess>zzzzz</guess>")
    second = env.step("<guess>crane</guess>")
    assert not first["done"] and second["done"] and second["metadata"]["cut"]
    episode = Episode(TaskRow.from_row(extras))  # the shared episode, stepped the same way
    episode.step("<guess>zzzzz</guess>")
    episode.step("<guess>crane</guess>")
    assert first["reward"] + second["reward"] == pytest.approx(episode.reward())
    expected = _same_nan(episode.metrics(fill=math.nan))
    assert _same_nan(env.get_metrics()) == expected and env.get_metrics()["finished"] == 0.0
    env.close()
    assert _same_nan(env.get_metrics()) == expected  # still there after close
    episode.close()


def _same_nan(metrics):
    """Metrics with NaN as a comparable marker."""
    return {k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in metrics.items()}


def test_metrics_have_the_files_fixed_keys_and_average_per_env(rows):
    """Every episode reports the exported file's one key set (other envs' keys NaN), and
    SkyRL's per-env-class aggregation, which calls our ``aggregate_metrics``, averages each
    env's keys over that env's episodes only."""
    from skyrl_gym.metrics import aggregate_for_environment

    register_env()
    keys = metric_keys(textgyms.env_ids())
    collected = []
    for prompt, env_class, extras in rows:
        env = _make(env_class, extras, max_turns=1)
        env.init(prompt)
        env.step("junk")
        metrics = env.get_metrics()
        assert tuple(metrics) == keys
        name = env_name(extras["env_id"])
        assert not math.isnan(metrics[f"{name}/score"]) and metrics[f"{name}/episodes"] == 1.0
        assert all(math.isnan(v) for k, v in metrics.items()
                   if "/" in k and not k.startswith(f"{name}/"))
        collected.append(metrics)
        env.close()
    wordle = Episode(TaskRow.from_row(next(e for _, _, e in rows if "Wordle" in e["env_id"])))
    wordle.step("junk")
    aggregated = aggregate_for_environment(ENV_CLASS, collected + [collected[0]])
    assert aggregated["wordle/episodes"] == 1.0 and set(aggregated) <= set(keys)
    assert {f"{env_name(i)}/score" for i in textgyms.env_ids()} <= set(aggregated)
    assert aggregated["wordle/score"] == pytest.approx(wordle.score())
    assert aggregated["score"] == pytest.approx(
        sum(m["score"] for m in collected + [collected[0]]) / (len(collected) + 1))
    wordle.close()


def test_the_context_budget_ends_the_episode_paying_the_score_so_far(rows, monkeypatch):
    register_env()
    prompt, env_class, extras = next(r for r in rows if r[2]["env_id"] == "textgyms/Wordle-v0")
    size = sum(len(json.dumps(m["content"], ensure_ascii=False).encode()) + 8 for m in prompt)
    config = {"max_context_tokens": size + 200, "max_obs_tokens": 40}
    env = skyrl_gym.make(env_class, env_config=config, extras={**extras, "max_turns": 50})
    env.init(prompt)
    first = env.step("<guess>crane</guess>")
    assert not first["done"]
    answer = first["observations"][0]["content"]
    assert "…[truncated" in answer and len(answer.partition("\n…")[0].encode()) <= 40
    out = first
    while not out["done"]:
        out = env.step("<guess>slate</guess>")
    assert out["metadata"]["cut"] and not out["metadata"]["terminated"]
    metrics = env.get_metrics()
    assert metrics["context_cut"] == 1.0 and metrics["finished"] == 0.0
    episode = Episode(TaskRow.from_row(extras))
    for _ in range(env.turns):
        episode.step("<guess>slate</guess>" if _ else "<guess>crane</guess>")
    assert first["reward"] + out["reward"] + 0.0 == pytest.approx(episode.reward())
    assert episode.reward() > 0  # SkyRL's own length stop would have paid nothing
    env.close()
    episode.close()


def test_a_stale_prompt_or_a_step_before_init_is_refused(rows):
    register_env()
    prompt, env_class, extras = rows[0]
    env = _make(env_class, extras)
    with pytest.raises(ConfigError, match="before init"):
        env.step("x")
    with pytest.raises(ConfigError, match="re-export"):
        env.init([{"role": "user", "content": "another prompt"}])
    system = [{"role": "system", "content": "Be brief."}]
    assert env.init(system + list(prompt))[0] == system + list(prompt)  # a system turn is kept
    env.close()


def _task(env: gym.Env, seed: int):
    """The task of ``seed`` in ``env`` (reset on it)."""
    env.reset(seed=seed)
    return env.unwrapped.task


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="SkyRL's trainer imports on 3.12")
def test_the_entrypoint_says_why_skyrls_trainer_cannot_run_on_python_3_11():
    from textgyms.integrations.skyrl.main import main

    with pytest.raises(ConfigError, match="Python >= 3.12") as err:
        main(["trainer.epochs=1"])
    assert "TypedDict" in str(err.value)  # pydantic refuses skyrl 0.3.0's types here


def test_env_config_kwargs_apply_under_the_rows_own(rows):
    register_env()
    prompt, env_class, extras = next(r for r in rows if r[2]["env_id"] == "textgyms/Wordle-v0")
    strict = skyrl_gym.make(env_class, env_config={"env_kwargs": {"max_invalid": 1}},
                            extras={**extras, "max_turns": 50})
    lenient = _make(env_class, extras)
    for env in (strict, lenient):
        env.init(prompt)
    assert strict.step("junk")["done"] and not lenient.step("junk")["done"]
    row_split = skyrl_gym.make(env_class, env_config={"env_kwargs": {"split": "test"}},
                               extras=extras)
    assert row_split.row.env_kwargs["split"] == "train"  # the row's own kwargs win
