"""Wordle as an environment: rules through the env, invalid moves, rewards, variants, seeding."""

import json
import multiprocessing as mp
import pickle

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textgyms  # noqa: F401
from textgyms.envs.wordle.env import render_board
from textgyms.envs.wordle.generate import WordleTask, answer_pool, in_test_split
from textgyms.envs.wordle.verify import verify
from textgyms.errors import ConfigError

ID = "textgyms/Wordle-v0"


def start(secret: str, **kwargs) -> gym.Env:
    env = gym.make(ID, **kwargs)
    u = env.unwrapped
    task = WordleTask(secret, u.length, u.max_guesses, u.hard_mode, u.vocab)
    env.reset(options={"task": task})
    return env


def test_two_pass_feedback_shown_for_repeated_letters():
    env = start("abide")
    obs, *_ = env.step("<guess>speed</guess>")
    # s p e e d vs a b i d e: the first E is yellow, the second gray, D yellow.
    assert obs.splitlines()[0] == "1. S P E E D   _ _ Y _ Y"
    assert "Letters not in the word: P S." in obs


def test_solve_in_one_and_json_form():
    env = start("crane")
    call = json.dumps({"name": "guess", "arguments": {"word": "CRANE"}})
    obs, reward, terminated, truncated, info = env.step(f"thinking... {call}")
    assert terminated and not truncated and reward == 1.0
    assert info["solved"] and info["parts"]["efficiency"] == 1.0 and "CRANE" in obs


def test_six_guesses_end_the_game_with_partial_credit():
    env = start("crane")
    for i, word in enumerate(["moist", "plumb", "dough", "fizzy", "track", "crank"]):
        obs, reward, terminated, truncated, info = env.step(f"<guess>{word}</guess>")
        assert terminated == (i == 5)
    assert not info["solved"] and 0 < info["score"] < 0.5
    assert info["parts"]["greens"] == pytest.approx(0.8)  # c r a n from "crank"
    assert reward == info["score"] and "the word was CRANE" in obs


@pytest.mark.parametrize(
    "action, needle",
    [
        ("<guess>cran</guess>", "not a 5-letter word"),
        ("<guess>zzzzz</guess>", "not in the word list"),
        ("<guess>cr4ne</guess>", "letters a-z only"),
        ("crane", "No tool call found"),
        ("<guess>crane", "never closed"),
    ],
)
def test_invalid_moves_are_feedback_not_guesses(action, needle):
    env = start("crane")
    obs, reward, terminated, truncated, info = env.step(action)
    assert needle in obs and info["error"] in ("invalid", "format")
    assert info["guesses"] == 0 and info["guesses_left"] == 6 and not terminated and reward == 0


def test_hard_mode_rejects_ignored_hints():
    env = start("crane", hard_mode=True)
    env.step("<guess>trace</guess>")  # R, A, C, E revealed
    obs, *_, info = env.step("<guess>moist</guess>")
    assert info["error"] == "invalid" and "hard mode" in obs
    obs, *_, info = env.step("<guess>crate</guess>")
    assert info["error"] is None and info["guesses"] == 2


def test_max_invalid_ends_the_episode_below_one():
    env = start("crane", max_invalid=2)
    env.step("nope")
    obs, reward, terminated, truncated, info = env.step("<guess>qqqqq</guess>")
    assert terminated and info["score"] == 0.0 and "Too many invalid actions" in obs


def test_scale_by_guesses():
    env = start("crane", scale_by_guesses=True)
    env.step("<guess>slate</guess>")
    *_, info = env.step("<guess>crane</guess>")
    assert info["score"] == pytest.approx(1 - 1 / 6)


@pytest.mark.parametrize("length", [4, 5, 6, 7])
def test_word_lengths_have_working_oracle(length):
    env = gym.make(ID, length=length)
    for seed in range(3):
        env.reset(seed=seed)
        assert len(env.unwrapped.task.secret) == length
        for action in env.unwrapped.solve(env.unwrapped.task):
            *_, terminated, truncated, info = env.step(action)
        assert terminated and info["solved"]


def test_bad_kwargs_name_the_choices():
    with pytest.raises(ConfigError, match="choose one of: 4, 5, 6, 7"):
        gym.make(ID, length=8)
    with pytest.raises(ConfigError, match="common"):
        gym.make(ID, vocab="huge")
    with pytest.raises(ConfigError, match="train, test, all"):
        gym.make(ID, split="dev")


def test_splits_are_disjoint_and_cover_the_answers():
    train, test = answer_pool(5, "common", "train"), answer_pool(5, "common", "test")
    assert not set(train) & set(test)
    assert set(train) | set(test) == set(answer_pool(5, "common", "all"))
    assert 0.1 < len(test) / (len(train) + len(test)) < 0.3
    env = gym.make(ID, split="test")
    assert all(in_test_split(env.reset(seed=s)[0] and env.unwrapped.task.secret) for s in range(20))


def _secret_in_child(seed, queue):
    import gymnasium as gym

    env = gym.make(ID)
    env.reset(seed=seed)
    queue.put(env.unwrapped.task.secret)


def test_same_seed_same_secret_in_a_spawned_process_and_after_pickling():
    env = gym.make(ID)
    env.reset(seed=1234)
    secret = env.unwrapped.task.secret
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_secret_in_child, args=(1234, queue))
    proc.start()
    assert queue.get(timeout=120) == secret
    proc.join()
    assert pickle.loads(pickle.dumps(env)).unwrapped.task.secret == secret


def test_env_verdict_matches_the_pure_verifier():
    env = start("crane")
    for word in ["moist", "trace", "caner", "track", "nacre", "react"]:
        *_, info = env.step(f"<guess>{word}</guess>")
    pure = verify(env.unwrapped.task, ["moist", "trace", "caner", "track", "nacre", "react"])
    assert info["score"] == pure.score and info["parts"] == dict(pure.parts)


def test_verify_is_total_on_odd_inputs():
    task = WordleTask("crane")
    assert verify(task, []).score == 0.0
    assert verify(task, ["", "toolongword", "crane"]).solved
    assert verify(task, ["crane"] * 10).score == 1.0


def test_board_rendering_golden():
    env = start("eerie")
    env.step("<guess>sweet</guess>")
    obs, *_ = env.step("<guess>eerie</guess>")
    board = render_board(env.unwrapped.state)
    assert board == (
        "1. S W E E T   _ _ Y Y _\n"
        "2. E E R I E   G G G G G\n"
        "Letters not in the word: S T W. Guesses left: 4."
    )


words5 = st.sampled_from(sorted(answer_pool(5, "common", "all"))[:400])


@settings(max_examples=200, deadline=None)
@given(secret=words5, guesses=st.lists(words5, max_size=8))
def test_verifier_properties(secret, guesses):
    task = WordleTask(secret)
    verdict = verify(task, guesses)
    assert 0.0 <= verdict.score <= 1.0
    assert verdict.solved == (secret in guesses[:6])
    if not verdict.solved:
        assert verdict.score <= 0.5
        # Partial credit never shrinks as more guesses are played.
        assert verify(task, guesses[:-1]).score <= verdict.score or not guesses
    assert set(verdict.parts) == {"solved", "greens", "letters", "efficiency"}


def test_prompt_golden():
    obs, _ = gym.make(ID, hard_mode=True).reset(seed=0)
    assert obs == (
        "Let's play Wordle. Guess the secret 5-letter English word in at most 6 guesses. "
        "Each guess must be a valid 5-letter word.\n"
        "After each guess you get one mark per letter: G = right letter in the right place, "
        "Y = the letter is in the word but elsewhere, _ = not in the word (or no more copies of it).\n"
        "Hard mode: every revealed hint must be used in later guesses (G letters stay in place, "
        "Y letters must appear).\n"
        "Reply with your guess inside tags, e.g. <guess>crane</guess>, or as a tool call "
        '{"name": "guess", "arguments": {"word": "..."}}. You may think before answering; only '
        "the last guess in your reply counts."
    )



def test_replayed_task_that_does_not_fit_the_env_raises_config_error():
    """A task given through reset options whose secret length differs from its own length
    field or from the env's length is API misuse: it says which length to use."""
    import gymnasium as gym

    from textgyms.envs.wordle.generate import WordleTask
    from textgyms.errors import ConfigError

    env = gym.make("textgyms/Wordle-v0")
    for task in (WordleTask("cranes", length=5), WordleTask("cranes", length=6),
                 WordleTask("cran", length=5)):
        with pytest.raises(ConfigError, match="length="):
            env.reset(seed=0, options={"task": task})
    obs, _info = env.reset(seed=0, options={"task": WordleTask("crane")})
    assert "5-letter" in obs
    env6 = gym.make("textgyms/Wordle-v0", length=6)
    env6.reset(seed=0, options={"task": WordleTask("cranes", length=6)})
