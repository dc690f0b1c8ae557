"""ChatHistory and EpisodeStats over a real env."""

import warnings

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

import textgyms  # noqa: F401
from textgyms.wrappers import ChatHistory, EpisodeStats

ID = "textgyms/Wordle-v0"


def test_chat_history_is_the_transcript():
    env = ChatHistory(gym.make(ID), system="You are a Wordle expert.")
    messages, info = env.reset(seed=0)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == info["text"]
    messages, *_, info = env.step("<guess>crane</guess>")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert (
        messages[2]["content"] == "<guess>crane</guess>" and messages[3]["content"] == info["text"]
    )
    assert env.observation_space.contains(messages)


def test_chat_history_passes_check_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any other checker warning fails the test
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version")
        check_env(ChatHistory(gym.make(ID).unwrapped), skip_render_check=True)


def test_episode_stats_records_each_episode():
    env = EpisodeStats(gym.make(ID))
    for seed in range(3):
        env.reset(seed=seed)
        plan = env.unwrapped.solve(env.unwrapped.task)
        for action in ["junk"] + plan:
            *_, terminated, truncated, info = env.step(action)
        assert info["episode"]["length"] == len(plan) + 1 and info["episode"]["invalid"] == 1
        assert info["episode"]["solved"] and info["episode"]["return"] == 1.0
    summary = env.summary()
    assert summary["episodes"] == 3 and summary["solved"] == 1.0 and summary["invalid"] == 1.0
