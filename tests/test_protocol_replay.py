"""The env kwargs a run records must rebuild the same env with ``gym.make(env_id, **kwargs)``."""

import json

import gymnasium as gym
import pytest
from support import conformance_cases

from textgyms.evaluate import evaluate
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.protocol import env_protocol, resolved_kwargs

CASES = conformance_cases()


def _record(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    try:
        return env_protocol(env, env_id, kwargs, seed=0, episodes=1, samples=1), env
    except BaseException:
        env.close()
        raise


def _budget(env):
    u = env.unwrapped
    return (u.max_turns, u.max_invalid, u.invalid_penalty, u.reward_mode,
            u.observation_space.max_length, u.action_space.max_length)


@pytest.mark.parametrize(("env_id", "variant"), CASES, ids=[f"{i}-{n}" for n, (i, _) in
                                                             enumerate(CASES)])
def test_recorded_kwargs_rebuild_the_same_env(env_id, variant):
    rec, env = _record(env_id, {"split": "test", **variant})
    with env:
        rebuilt = gym.make(env_id, **rec["kwargs"])  # raised for Wordle and ISO before
        with rebuilt:
            # the same budgets (Search's max_obs_chars was recorded as the base class's default)
            assert _budget(rebuilt) == _budget(env)
            again = env_protocol(rebuilt, env_id, rec["kwargs"], seed=0, episodes=1, samples=1)
            assert again == rec
            assert rebuilt.reset(seed=3)[0] == env.reset(seed=3)[0]


def test_wordle_records_no_kwarg_it_fixes_itself():
    full = resolved_kwargs("textgyms/Wordle-v0", {})
    assert "max_obs_chars" not in full  # WordleEnv passes it to TextEnv itself
    assert full["max_invalid"] == 3 and full["max_guesses"] == 6
    search = resolved_kwargs(next(i for i, _ in CASES if "Search" in i), {})
    assert search["max_obs_chars"] == 32_768  # SearchEnv's setdefault, not TextEnv's 16,384


def test_a_run_metadata_replays(tmp_path):
    kwargs = {"vocab": "easy", "max_guesses": 3, "max_invalid": 1}
    evaluate(ScriptedPolicy("oracle"), ["textgyms/Wordle-v0"], episodes=2, out=tmp_path,
             env_kwargs=kwargs, progress=False)
    meta = json.loads((tmp_path / "metadata.json").read_text())
    recorded = meta["protocol"]["envs"]["textgyms/Wordle-v0"]["kwargs"]
    with gym.make("textgyms/Wordle-v0", **recorded) as env:
        assert env.unwrapped.max_guesses == 3 and env.unwrapped.split == "test"
