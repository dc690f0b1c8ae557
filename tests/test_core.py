"""Core pieces on their own: seeding, TextSpace, Task ids, Verdict checks."""

import dataclasses
import pickle
import string
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import textgyms  # noqa: F401
from textgyms.core import Task, TextSpace, Verdict
from textgyms.envs.wordle.generate import WordleTask
from textgyms.errors import ConfigError, VerifierError
from textgyms.seeding import seeded_generator

ID = "textgyms/Wordle-v0"


def test_reset_seed_gives_the_documented_stream():
    env = gym.make(ID).unwrapped
    for seed in (0, 1, 2**40, 2**127):
        env.reset(seed=seed)
        env.reset(seed=seed)  # the re-used generator is re-seeded, not advanced
        expected = seeded_generator(seed).random(9)[1:]  # Wordle's reset drew the first number
        env.reset(seed=seed)
        assert np.array_equal(env.np_random.random(8), expected)
        assert env.np_random_seed == seed
    assert not np.array_equal(seeded_generator(1).random(4), seeded_generator(2).random(4))


@pytest.mark.parametrize("seed", [-1, 2**128, 1.5, "7", True])
def test_bad_seeds_raise(seed):
    with pytest.raises(ConfigError, match="seed must be"):
        gym.make(ID).reset(seed=seed)


def test_text_space_accepts_any_unicode_within_length():
    space = TextSpace(5)
    assert space.contains("") and space.contains("a b!") and space.contains("日本語☃")
    assert not space.contains("toolong") and not space.contains(b"bytes")
    assert space.contains(space.sample())


def test_text_spaces_share_their_charset_tables_and_still_work_alone():
    a, b = TextSpace(5), TextSpace(4096, seed=3)
    tables = [k for k in vars(a) if k.startswith("_char")]
    assert tables and all(getattr(a, k) is getattr(b, k) for k in tables)
    env_a, env_b = gym.make(ID).unwrapped, gym.make(ID).unwrapped
    assert env_a.observation_space._char_index is env_b.action_space._char_index
    copy = pickle.loads(pickle.dumps(b))  # a worker's spaces cross to the parent pickled
    assert copy == b and copy.max_length == 4096 and copy.contains("日本語")
    assert len(b.sample()) <= 4096 and set(b.sample()) <= set(string.printable)
    assert b.sample(mask=(None, np.array([1] + [0] * 99, dtype=np.int8))).strip("0") == ""


def test_task_id_is_stable_across_processes():
    task = WordleTask("crane", 5, 6, True, "common")
    code = (
        "from textgyms.envs.wordle.generate import WordleTask;"
        "print(WordleTask('crane', 5, 6, True, 'common').task_id)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == task.task_id
    assert task.task_id != WordleTask("crane", 5, 6, False, "common").task_id


@pytest.mark.parametrize("score", [-0.1, 1.01, float("nan"), "1"])
def test_verdict_rejects_scores_outside_unit_interval(score):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Verdict(score=score, solved=False)


def test_split_partition_is_fixed_and_disjoint():
    from textgyms.core import generate_in_split, task_in_split

    @dataclasses.dataclass(frozen=True)
    class Numbered(Task):
        n: int

    tasks = [Numbered(n) for n in range(500)]
    test = {t.n for t in tasks if task_in_split(t, "test")}
    train = {t.n for t in tasks if task_in_split(t, "train")}
    assert not test & train and len(test | train) == 500
    assert 60 < len(test) < 140  # about one in five
    assert all(task_in_split(t, "all") for t in tasks)
    rng = np.random.default_rng(0)
    drawn = generate_in_split(lambda: Numbered(int(rng.integers(10**9))), "test")
    assert task_in_split(drawn, "test")
    with pytest.raises(VerifierError, match="no task of split 'test'"):
        generate_in_split(lambda: Numbered(1), "test" if 1 in train else "train")


def test_made_as_reports_the_id_and_kwargs_of_gym_make():
    env = gym.make("textgyms/Wordle-v0", max_guesses=3)
    env_id, kwargs = env.unwrapped.made_as()
    assert env_id == "textgyms/Wordle-v0" and kwargs["max_guesses"] == 3
    bare = type(env.unwrapped)()  # not made by gym.make: nothing to report
    with pytest.raises(ConfigError, match="gym.make"):
        bare.made_as()


def test_reset_info_is_the_standard_keys():
    """``TextEnv.reset`` writes the standard keys as literals: they must be the constants."""
    from textgyms.core import ERROR, MESSAGES, OBS_KIND, TASK_ID, TOOLS, TURN

    env = gym.make("textgyms/Wordle-v0")
    obs, info = env.reset(seed=0)
    assert list(info) == [TASK_ID, TURN, ERROR, OBS_KIND, MESSAGES, TOOLS]
    assert info[MESSAGES] == [{"role": "user", "content": obs}]
    assert info[MESSAGES] is not env.unwrapped._ep.messages  # the transcript is not shared


def test_step_info_starts_with_the_standard_keys():
    """``core._record`` writes the standard keys as literals: they must be the constants."""
    from textgyms.core import ERROR, MESSAGES, OBS_KIND, TASK_ID, TURN

    env = gym.make("textgyms/Wordle-v0")
    env.reset(seed=0)
    guess = "slate" if env.unwrapped.task.secret == "crane" else "crane"
    for action in (f"<guess>{guess}</guess>", "junk"):  # Wordle's quick path, then the general
        *_, info = env.step(action)
        assert list(info)[:5] == [TASK_ID, TURN, ERROR, OBS_KIND, MESSAGES]
        assert set(info) - {TASK_ID, TURN, ERROR, OBS_KIND, MESSAGES} == {"guesses", "guesses_left"}
