"""The contract every registered ``textgyms/*`` id must meet (docs/architecture.md, "Tests").

A new env is covered by registering it: nothing here names a family.
"""

from __future__ import annotations

import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support import conformance_cases

import textgyms
from textgyms.core import TOOLS
from textgyms.errors import ConfigError, ResetNeeded

ENV_IDS = textgyms.env_ids()
SEEDS = (0, 1, 7)


CASES = conformance_cases()
_VARIANT: dict[str, dict] = {}  # env_id -> the variant kwargs of the running test


def make(env_id: str, **kwargs) -> gym.Env:
    return gym.make(env_id, **{**_VARIANT.get(env_id, {}), **kwargs})


def play(env: gym.Env, actions, seed: int):
    """Reset with ``seed``, step ``actions`` until done; return the transcript and last info."""
    obs, info = env.reset(seed=seed)
    transcript, rewards = [obs], []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        transcript.append(obs)
        rewards.append(reward)
        if terminated or truncated:
            return transcript, rewards, info, True
    return transcript, rewards, info, False


def oracle_episode(env: gym.Env, seed: int):
    env.reset(seed=seed)
    return play(env, env.unwrapped.solve(env.unwrapped.task), seed)


def junk_actions(prompt: str) -> list[str]:
    return [
        "",
        " ",
        "\x00\x01\x02" * 10,
        "🦄 ünïcödé ☃ 中文 " * 50,
        "x" * 1_000_000,
        bytes(range(256)).decode("latin-1"),
        prompt,
        "<guess>",
        "</answer><answer>",
        "<<<>>>",
        '{"name": ',
        '{"name": "nope", "arguments": {}}',
        "[1, 2, {",
        '{"name": 5, "arguments": null}',
        "<search><open></search></open>",
    ]


def _case_id(case: tuple[str, dict]) -> str:
    env_id, kw = case
    return env_id + "".join(f"-{k}={v}" for k, v in sorted(kw.items()))


@pytest.fixture(params=CASES, ids=[_case_id(c) for c in CASES])
def env_id(request) -> str:
    env_id, kw = request.param
    _VARIANT[env_id] = kw
    yield env_id
    _VARIANT.pop(env_id, None)


def test_registry_is_not_empty():
    assert "textgyms/Wordle-v0" in ENV_IDS


def test_check_env_without_warnings(env_id):
    env = make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


def test_make_with_prefix_works_without_import(env_id):
    import subprocess
    import sys

    code = f"import gymnasium as gym; e = gym.make('textgyms:{env_id}'); print(type(e.reset(seed=1)[0]).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "str"


def test_reset_info_has_standard_keys_and_tools(env_id):
    obs, info = make(env_id).reset(seed=0)
    assert isinstance(obs, str) and obs
    assert {"task_id", "turn", "error", "messages", "obs_kind", "tools"} <= set(info)
    assert "score" not in info and "solved" not in info  # only once the episode is over
    assert info["turn"] == 0 and info["obs_kind"] == "prompt"
    assert info["messages"] == [{"role": "user", "content": obs}]
    for tool in info[TOOLS]:
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"


def test_same_seed_same_task_and_transcript(env_id):
    a, b = make(env_id), make(env_id)
    for seed in SEEDS:
        ta, ra, ia, _ = oracle_episode(a, seed)
        tb, rb, ib, _ = oracle_episode(b, seed)
        assert (ta, ra) == (tb, rb)
        assert a.unwrapped.task == b.unwrapped.task
        rng = np.random.default_rng(seed)
        acts = [a.unwrapped.sample_action(rng) for _ in range(3)]
        assert play(a, acts, seed)[0] == play(b, acts, seed)[0]


def test_many_seeds_many_tasks(env_id):
    env = make(env_id)
    ids = {env.reset(seed=s)[1]["task_id"] for s in range(60)}
    assert len(ids) >= 45


def test_test_split_is_held_out_from_train(env_id):
    """Leaderboards evaluate on split="test": every id has one, disjoint from "train" (a
    dataset without a train split may refuse split="train", with a ConfigError)."""
    test = make(env_id, split="test")
    test_ids = {test.reset(seed=s)[1]["task_id"] for s in range(12)}
    try:
        train = make(env_id, split="train")
    except ConfigError:
        return
    train_ids = {train.reset(seed=s)[1]["task_id"] for s in range(12)}
    assert len(test_ids) > 1 and len(train_ids) > 1 and not test_ids & train_ids


def test_oracle_scores_one(env_id):
    env = make(env_id)
    for seed in range(8):
        _, rewards, info, done = oracle_episode(env, seed)
        assert done and info["score"] == 1.0 and info["solved"] is True
        assert math.isclose(sum(rewards), 1.0)


def test_dense_rewards_sum_to_the_score(env_id):
    env = make(env_id, reward_mode="dense")
    for seed in range(4):
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        total, done, info = 0.0, False, {}
        while not done:
            _, r, term, trunc, info = env.step(env.unwrapped.sample_action(rng))
            assert math.isfinite(r)
            total, done = total + r, term or trunc
        assert math.isclose(total, info["score"], abs_tol=1e-9)


def test_junk_actions_never_raise_and_score_below_one(env_id):
    env = make(env_id)
    prompt, _ = env.reset(seed=3)
    for junk in junk_actions(prompt):
        transcript, rewards, info, done = play(env, [junk] * 50, seed=3)
        assert done, f"{junk[:30]!r} never ended the episode"
        assert info["score"] < 1.0 and info["error"] is not None
        assert all(env.observation_space.contains(o) for o in transcript)
        assert all(len(m["content"]) <= env.action_space.max_length for m in info["messages"])
        assert all(math.isfinite(r) for r in rewards)


def test_invalid_penalty_is_charged(env_id):
    env = make(env_id, invalid_penalty=0.25, max_invalid=2)
    _, rewards, info, done = play(env, ["", ""], seed=0)
    assert done and rewards[0] == -0.25
    assert math.isclose(sum(rewards), info["score"] - 0.5)


def test_truncation_at_turn_limit(env_id):
    env = make(env_id, max_turns=2, max_invalid=100)
    _, _, info, _ = play(env, ["no tool here"], seed=0)
    obs, _, terminated, truncated, info = env.step("still none")
    assert truncated and not terminated and info["turn"] == 2 and "score" in info
    with pytest.raises(ResetNeeded, match="reset"):
        env.step("again")


def test_api_misuse_raises_at_once(env_id):
    with pytest.raises(ConfigError, match="valid kwargs"):
        make(env_id, definitely_not_a_kwarg=1)
    with pytest.raises(ConfigError, match="sparse, dense"):
        make(env_id, reward_mode="shaped")
    env = make(env_id)
    with pytest.raises(gym.error.ResetNeeded):  # textgyms' ResetNeeded subclasses it
        env.step("hello")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="must be a str"):
        env.step(42)


def test_replay_task_via_options(env_id):
    env = make(env_id)
    env.reset(seed=5)
    task = env.unwrapped.task
    env.reset(seed=99)
    _, info = env.reset(options={"task": task})
    assert info["task_id"] == task.task_id and env.unwrapped.task == task


def test_pickle_round_trip_mid_episode(env_id):
    env = make(env_id)
    env.reset(seed=2)
    plan = env.unwrapped.solve(env.unwrapped.task)
    env.step("not an action")
    clone = pickle.loads(pickle.dumps(env))
    for action in plan:
        a, b = env.step(action), clone.step(action)
        assert a[:4] == b[:4] and a[4]["task_id"] == b[4]["task_id"]
        if a[2] or a[3]:
            break


def test_render_ansi_is_the_transcript(env_id):
    env = make(env_id, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    env.step("hello")
    text = env.render()
    assert obs in text and "[agent] hello" in text


def test_serial_and_multiprocessing_batches_match(env_id):
    local = make(env_id)
    local.reset(seed=11)
    rng = np.random.default_rng(0)
    # The family's own random actions, mixed with junk, played identically on both backends.
    steps = [[local.unwrapped.sample_action(rng) for _ in range(4)] for _ in range(8)]
    steps[2] = ["", "junk", "{}", "<a>"]
    results = []
    for backend in ("serial", "multiprocessing"):
        with textgyms.make_vec(
            env_id, 4, backend=backend, group_size=2, env_kwargs=_VARIANT.get(env_id, {})
        ) as vec:
            obs, infos = vec.reset(seed=11)
            trace = [(obs, infos)]
            for actions in steps:
                b = vec.step(actions)
                trace.append(
                    (
                        b.observations,
                        b.rewards.tolist(),
                        b.terminated.tolist(),
                        b.truncated.tolist(),
                        b.infos,
                    )
                )
            results.append(trace)
    assert results[0] == results[1]
    first_infos = results[0][0][1]
    assert first_infos[0]["task_id"] == first_infos[1]["task_id"]  # a GRPO group shares its task
    assert first_infos[0]["task_id"] != first_infos[2]["task_id"]
