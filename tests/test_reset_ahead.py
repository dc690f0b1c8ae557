"""Reset-ahead: ``TextEnv.pregenerate`` and the multiprocessing workers that call it while they
wait for actions. A reset that uses a drawn task must give exactly what it gives without it."""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import pickle
import threading
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pytest
from support import conformance_cases

import textgyms
from textgyms.core import Task, TextEnv, Turn, Verdict
from textgyms.errors import ConfigError
from textgyms.mixture import MixtureEnv
from textgyms.policies import ScriptedPolicy
from textgyms.vector import make_vec
from textgyms.vector.base import _EnvRunner
from textgyms.vector.multiprocessing import _prepare_while_idle, _serve


def _counting(env: TextEnv) -> list[int]:
    """Count ``env.generate`` calls (an instance attribute shadows the method)."""
    calls: list[int] = []
    method = type(env).generate

    def generate(rng: np.random.Generator) -> Task:
        calls.append(1)
        return method(env, rng)

    env.generate = generate  # type: ignore[method-assign]
    return calls


def _episode_start(env: gym.Env, seed: int) -> tuple:
    obs, info = env.reset(seed=seed)
    inner = env.unwrapped
    return obs, info, inner.task, inner.np_random.bit_generator.state


@pytest.mark.parametrize(("env_id", "kwargs"), conformance_cases())
def test_a_pregenerated_task_starts_the_same_episode(env_id: str, kwargs: dict) -> None:
    plain = gym.make(env_id, **kwargs)
    ahead = gym.make(env_id, **kwargs)
    try:
        ahead.unwrapped.pregenerate(11)
        calls = _counting(ahead.unwrapped)
        assert _episode_start(ahead, 11) == _episode_start(plain, 11)
        assert calls == []  # the reset drew nothing: it used the kept task
        # The kept task is used once: the same seed again draws it afresh, equally.
        assert _episode_start(ahead, 11) == _episode_start(plain, 11)
        assert calls == [1]
    finally:
        plain.close()
        ahead.close()


def test_another_seed_or_a_task_option_ignores_the_kept_task() -> None:
    env = gym.make("textgyms/Wordle-v0")
    plain = gym.make("textgyms/Wordle-v0")
    inner = env.unwrapped
    inner.pregenerate(5)
    calls = _counting(inner)
    assert _episode_start(env, 6) == _episode_start(plain, 6)
    assert calls == [1]
    task = plain.unwrapped.task
    obs, _ = env.reset(seed=5, options={"task": task})
    assert env.unwrapped.task == task and calls == [1]
    inner.forget_pregenerated()
    assert _episode_start(env, 5) == _episode_start(plain, 5)
    assert calls == [1, 1]


def test_a_copied_env_keeps_its_drawn_task_and_generator() -> None:
    env = gym.make("textgyms/Wordle-v0").unwrapped
    env.reset(seed=1)
    env.pregenerate(9)
    copy = pickle.loads(pickle.dumps(env))  # as an env shipped to another process
    plain = gym.make("textgyms/Wordle-v0")
    assert _episode_start(copy, 9) == _episode_start(plain, 9)
    assert copy.np_random.random() == plain.unwrapped.np_random.random()


def test_pregenerate_checks_the_seed_as_reset_does() -> None:
    env = gym.make("textgyms/Wordle-v0").unwrapped
    for bad in (-1, 1.5, "3"):
        with pytest.raises(ConfigError):
            env.pregenerate(bad)  # type: ignore[arg-type]


def test_a_mixture_pregenerates_on_the_entry_its_seed_picks() -> None:
    spec = "textgyms/Wordle-v0,textgyms/NetConfig-v4"
    plain, ahead = MixtureEnv(spec), MixtureEnv(spec)
    for seed in range(4):
        ahead.pregenerate(seed)
        calls = _counting(ahead._env(ahead.mixture.pick(seed), 0).unwrapped)
        assert ahead.reset(seed=seed) == plain.reset(seed=seed)
        assert ahead.unwrapped.task == plain.unwrapped.task
        assert calls == []


def test_a_mixture_draws_ahead_at_the_levels_of_its_latest_reset() -> None:
    env_id = "textgyms/NetConfig-v4"
    ladders = {env_id: [{"difficulty": "easy"}, {"difficulty": "hard"}]}
    plain, ahead = MixtureEnv(env_id, ladders), MixtureEnv(env_id, ladders)
    hard = {"levels": {env_id: 1}}  # as a curriculum passes them, with every reset
    ahead.reset(seed=0, options=dict(hard))
    ahead.pregenerate(5)
    calls = _counting(ahead._env(0, 1).unwrapped)
    assert ahead.reset(seed=5, options=dict(hard)) == plain.reset(seed=5, options=dict(hard))
    assert ahead.unwrapped.task == plain.unwrapped.task and ahead.unwrapped.task.level == "hard"
    assert calls == []


class _Flaky(TextEnv):
    """Tasks are the seed's first draw; drawing for a generator whose first draw is odd fails."""

    def __init__(self) -> None:
        super().__init__(max_turns=2)

    def generate(self, rng: np.random.Generator) -> Task:
        value = int(rng.integers(1000))
        if value % 2:
            raise ValueError(f"odd draw {value}")
        return _Value(value)

    def prompt(self, task: Task) -> str:
        return str(task)

    def respond(self, state: object, action: str) -> Turn:
        return Turn("done", terminated=True, verdict=Verdict(1.0, True))

    def final_verdict(self, state: object) -> Verdict:
        return Verdict(0.0, False)


@dataclass(frozen=True)
class _Value(Task):
    value: int


def _odd(seed: int) -> bool:
    return int(textgyms.seeding.seeded_generator(seed).integers(1000)) % 2 == 1


def test_a_worker_draws_next_tasks_until_a_command_waits() -> None:
    even = next(s for s in range(200) if not _odd(s) and not _odd(s + 4))
    runners = [_EnvRunner(_Flaky(), "same_step", 4) for _ in range(3)]
    parent, child = mp.Pipe()
    for r in runners:
        r.reset(even, None)
    parent.send(("step", []))  # a command is waiting: the worker must not start drawing
    _prepare_while_idle(child, runners)
    assert all(r.env._ready is None for r in runners)
    child.recv()
    _prepare_while_idle(child, runners)  # idle: each env's next episode (seed + stride)
    assert [r.env._ready[0] for r in runners] == [even + 4] * 3
    calls = _counting(runners[0].env)
    runners[0].reset(None, None)
    fresh = _Flaky().generate(textgyms.seeding.seeded_generator(even + 4))
    assert calls == [] and runners[0].env.task == fresh
    parent.close()
    child.close()


class _Slow(_Flaky):
    """A ``_Flaky`` with a method a policy might call in the model's turn, slower than the
    workers' settle time (so a drawing thread is sure to see it running)."""

    def look(self) -> str:
        time.sleep(0.05)
        return "looked"


def _kept_after(messages: list[tuple], envs: int) -> tuple[list, list[bool]]:
    """Run a worker (``_serve``, in a thread) on ``envs`` fresh ``_Slow`` envs with
    ``messages`` queued before it reads any (so nothing is drawn before them), leave it
    0.3 s of model's turn, then ask each env whether it holds a drawn task: (the replies to
    ``messages``, those answers)."""
    even = next(s for s in range(200) if not _odd(s) and not _odd(s + 4))
    runners = [_EnvRunner(_Slow(), "same_step", 4) for _ in range(envs)]
    for r in runners:
        r.reset(even, None)
    parent, child = mp.Pipe()
    for message in messages:
        parent.send(message)
    worker = threading.Thread(target=_serve, args=(child, runners))
    worker.start()
    replies = [parent.recv() for m in messages if m[0] != "ahead"]
    time.sleep(0.3)
    kept = []
    for i in range(envs):
        parent.send(("call", (i, "forget_pregenerated", ())))
        kept.append(parent.recv()[1])
    parent.send(("close", None))
    worker.join(5)
    assert not worker.is_alive()
    return replies, kept


def test_a_call_in_the_models_turn_does_not_end_the_drawing() -> None:
    replies, kept = _kept_after([("ahead", None), ("call", (0, "look", ()))], 3)
    assert replies == [("ok", "looked")]
    assert kept == [True, True, True]  # the worker drew on after the call


def test_a_failed_step_ends_the_models_turn_too() -> None:
    replies, kept = _kept_after(
        [("ahead", None), ("call", (0, "look", ())), ("step", None)], 2)
    assert replies[0] == ("ok", "looked") and replies[1][0] == "err"  # a step with no actions
    assert kept == [False, False]  # the parent sends no "ahead" after an error: no drawing


def test_a_ray_actor_draws_on_after_a_call_in_the_models_turn() -> None:
    pytest.importorskip("ray")
    from textgyms.vector.ray import _Worker

    even = next(s for s in range(200) if not _odd(s) and not _odd(s + 1))
    worker = _Worker(_Slow, 2, 1, "same_step")  # the actor's body, run in this process
    worker.reset([even, even], None, [True, True], ahead=True)
    assert worker.call(0, "look", ()) == "looked"  # its thread yields to the call ...
    time.sleep(0.3)  # ... and draws after it
    assert [worker.call(i, "forget_pregenerated", ()) for i in range(2)] == [True, True]
    worker.step(["x", "x"])  # after a step without ``ahead``, a call starts no drawing
    worker.call(0, "look", ())
    time.sleep(0.1)
    assert [worker.call(i, "forget_pregenerated", ()) for i in range(2)] == [False, False]
    worker._stop = True
    worker._wake.set()


class _Warmed(_Flaky):
    """A ``_Flaky`` that logs, to a list its envs share, each task drawn and each warmed."""

    def __init__(self, log: list[tuple[str, int]]) -> None:
        super().__init__()
        self.log = log

    def generate(self, rng: np.random.Generator) -> Task:
        task = super().generate(rng)
        self.log.append(("draw", task.value))
        return task

    def warm(self, task: Task) -> None:
        self.log.append(("warm", task.value))


def test_warm_pregenerated_warms_the_kept_task_once() -> None:
    even = next(s for s in range(200) if not _odd(s))
    log: list[tuple[str, int]] = []
    env = _Warmed(log)
    assert env.warm_pregenerated() is False  # nothing kept
    env.pregenerate(even)
    assert env.warm_pregenerated() is True and env.warm_pregenerated() is False
    value = log[0][1]
    assert log == [("draw", value), ("warm", value)]
    env.reset(seed=even)  # takes the kept task (drawn once, warmed once)
    assert env.warm_pregenerated() is False and len(log) == 2


def test_a_worker_draws_every_next_task_before_it_warms_one() -> None:
    """Drawing saves a step more than warming: a short model's turn goes to the draws."""
    even = next(s for s in range(200) if not _odd(s) and not _odd(s + 4))
    log: list[tuple[str, int]] = []
    runners = [_EnvRunner(_Warmed(log), "same_step", 4) for _ in range(3)]
    for r in runners:
        r.reset(even, None)
    log.clear()
    parent, child = mp.Pipe()
    _prepare_while_idle(child, runners)
    assert [kind for kind, _value in log] == ["draw"] * 3 + ["warm"] * 3
    assert not any(r.wants_prepare() or r.wants_warm() for r in runners)
    _prepare_while_idle(child, runners)  # nothing left to do
    assert len(log) == 6
    runners[0].reset(None, None)  # the next episode: its successor is to draw, then warm
    assert runners[0].wants_prepare() and not runners[0].wants_warm()
    runners[0].prepare_next()
    assert runners[0].wants_warm()
    parent.close()
    child.close()


def test_a_mixture_warms_the_task_its_entry_keeps() -> None:
    spec = "textgyms/Wordle-v0,textgyms/NetConfig-v4"
    env = MixtureEnv(spec)
    seed = next(s for s in range(50) if env.mixture.pick(s) == 1)  # a NetConfig episode
    assert env.warm_pregenerated() is False
    env.pregenerate(seed)
    assert env.warm_pregenerated() is True and env.warm_pregenerated() is False


def test_a_ray_actor_warms_after_it_has_drawn() -> None:
    pytest.importorskip("ray")
    from textgyms.vector.ray import _Worker

    even = next(s for s in range(200) if not _odd(s) and not _odd(s + 1))
    log: list[tuple[str, int]] = []
    worker = _Worker(lambda: _Warmed(log), 2, 1, "same_step")  # the actor's body, here
    worker.reset([even, even], None, [True, True], ahead=False)
    log.clear()
    worker.ahead()
    time.sleep(0.3)
    assert [kind for kind, _value in log] == ["draw", "draw", "warm", "warm"]
    worker._stop = True
    worker._wake.set()


def test_a_failed_draw_ahead_is_raised_by_the_reset_itself() -> None:
    odd = next(s for s in range(1, 200) if _odd(s))
    runner = _EnvRunner(_Flaky(), "same_step", 1)
    runner.base_seed, runner.episode = odd - 1, 0  # the next episode's seed is ``odd``
    runner.prepare_next()  # swallowed here ...
    assert runner.env._ready is None
    with pytest.raises(ValueError, match="odd draw"):  # ... and raised where it belongs
        runner.reset(None, None)


def _digest(ahead: bool, env_id: str, steps: int) -> str:
    vec = make_vec(env_id, 4, backend="multiprocessing", num_workers=2, reset_ahead=ahead)
    policy = ScriptedPolicy("oracle")
    h = hashlib.sha256()
    try:
        obs, infos = vec.reset(seed=3)
        for _ in range(steps):
            obs, rewards, term, trunc, infos = vec.step(policy.act(obs, infos, envs=vec))
            h.update(json.dumps([obs, rewards.tolist(), term.tolist(), trunc.tolist(),
                                 [i.get("task_id") for i in infos]]).encode())
    finally:
        vec.close()
    return h.hexdigest()


def test_multiprocessing_results_are_the_same_with_or_without_reset_ahead() -> None:
    mixture = "textgyms/NetConfig-v4,textgyms/Wordle-v0"  # NetConfig's oracle ends in one step
    assert _digest(True, mixture, 4) == _digest(False, mixture, 4)


@pytest.mark.parametrize("ahead", [True, False])
def test_workers_draw_ahead_once_the_parent_has_the_batch(ahead: bool) -> None:
    with make_vec("textgyms/NetConfig-v4", 2, backend="multiprocessing", num_workers=2,
                  reset_ahead=ahead) as vec:
        vec.reset(seed=0)
        time.sleep(0.5)  # the model's turn: each worker draws its env's next task
        kept = [vec.call_env(i, "forget_pregenerated") for i in range(2)]
    assert kept == [ahead, ahead]


def test_reset_ahead_is_a_switch_of_the_worker_backends() -> None:
    with pytest.raises(ConfigError, match="multiprocessing"):
        make_vec("textgyms/Wordle-v0", 2, backend="serial", reset_ahead=True)
    with pytest.raises(ConfigError, match="True or False"):
        make_vec("textgyms/Wordle-v0", 2, backend="multiprocessing", num_workers=1,
                 reset_ahead="yes")
