"""Invalid actions are counted as the env counts them: a valid final answer that scores 0 (its
verdict's ``error`` is "wrong_answer") is not one, a malformed action is; the evaluation
records, the stats wrappers and GRPO's metrics agree with the env."""

from __future__ import annotations

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.core import ERROR, INVALID_ACTIONS, invalid_after
from textgyms.evaluate import evaluate, load_results
from textgyms.policies.base import Policy
from textgyms.wrappers import EpisodeStats
from textgyms.wrappers.puffer import PufferInfo

SEARCH = ("textgyms/Search-v1", {"difficulty": "lookup", "search_only": True, "k": 2,
                                 "max_turns": 3, "max_invalid": 2})


class Fixed(Policy):
    """Plays ``actions`` in order, whatever it sees."""

    def __init__(self, actions):
        self.actions = actions

    def act(self, observations, infos, envs=None):
        return [self.actions[int(info["turn"])] for info in infos]

    def spec(self):
        return {"name": "fixed", "type": "test"}


@pytest.mark.parametrize("actions, invalid", [
    (["<search>anything</search>", "<answer>Nobody Ltd</answer>"], 0),  # wrong, not invalid
    (["no tool call here", "<answer>Nobody Ltd</answer>"], 1),
    (["no tool call", "still none"], 2),  # the second ends the episode (max_invalid=2)
])
def test_a_wrong_answer_is_not_an_invalid_action(actions, invalid):
    env = gym.make(SEARCH[0], **SEARCH[1])
    env.reset(seed=3)
    count = 0
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        count = invalid_after(count, info, terminated or truncated)
    assert terminated and info[INVALID_ACTIONS] == invalid == count
    assert info[ERROR] is not None  # the last step still names what went wrong
    env.close()


def test_eval_and_wrappers_count_like_the_env(tmp_path):
    actions = ["<search>anything</search>", "<answer>Nobody Ltd</answer>", ""]
    evaluate(Fixed(actions), [SEARCH[0]], episodes=2, env_kwargs=SEARCH[1],
             out=tmp_path / "run", progress=False)
    rows = load_results(tmp_path / "run")
    assert [r["invalid"] for r in rows] == [0, 0] and all(r["error"] for r in rows)
    for wrapper in (EpisodeStats, PufferInfo):
        env = wrapper(gym.make(SEARCH[0], **SEARCH[1]))
        env.reset(seed=0)
        env.step(actions[0])
        *_, info = env.step(actions[1])
        summary = info["episode"] if wrapper is EpisodeStats else info
        assert summary["invalid"] == 0, wrapper.__name__


def test_without_the_env_count_errors_are_counted():
    assert invalid_after(1, {ERROR: "format"}, done=True) == 2  # an env that does not say
    assert invalid_after(1, {ERROR: "wrong_answer", INVALID_ACTIONS: 1}, done=True) == 1
    assert invalid_after(0, {ERROR: None}, done=False) == 0
