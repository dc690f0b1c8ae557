"""Tests of textgyms.vector: backends agree, groups share tasks, autoreset modes, failures."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys

import gymnasium as gym
import numpy as np
import pytest

import textgyms
from textgyms.errors import BackendError, ConfigError, ResetNeeded, WorkerDiedError
from textgyms.vector import Batch, MultiprocessingVecEnv, SerialVecEnv, VecEnv, make_vec

# A hung VecEnv fails its test after 120 s instead of hanging the suite.
pytestmark = pytest.mark.usefixtures("deadline")

ENV = "textgyms/Wordle-v0"
BAD_KWARGS = {"length": 99}  # the env rejects it at construction with a ConfigError
JUNK = "no tool call here"  # an invalid action: a turn with feedback, never an exception
GUESS = "<guess>crane</guess>"
BACKENDS = ["serial", "multiprocessing"]


def single(seed: int) -> gym.Env:
    """A lone env reset with ``seed``: the reference for what a vector env must produce."""
    env = gym.make(ENV)
    env.reset(seed=seed)
    return env


def answer(env: gym.Env) -> str:
    """The last oracle action, which solves the episode in progress in one step."""
    return env.unwrapped.solve(env.unwrapped.task)[-1]


def answer_for(seed: int) -> str:
    """The solving action for the episode that ``reset(seed=seed)`` starts."""
    return answer(single(seed))


def mixed_policy(env: gym.Env, i: int, t: int) -> str:
    """Solve, guess, or send junk depending on env and step, so episodes end at varied times."""
    kind = (i * 3 + t) % 5
    if kind == 0 and i % 4 != 3:  # every fourth env never solves: its episodes run out
        return answer(env)
    return GUESS if kind in (1, 2) else JUNK


def record(batch: Batch) -> tuple:
    """A batch as plain comparable values."""
    obs, rewards, terminated, truncated, infos = batch
    return (
        obs,
        rewards.tolist(),
        terminated.tolist(),
        truncated.tolist(),
        infos,
        batch.env_ids.tolist(),
    )


# -- backends agree ------------------------------------------------------------------------------


@pytest.mark.parametrize("autoreset", ["same_step", "next_step"])
def test_serial_and_multiprocessing_give_identical_batches(autoreset: str) -> None:
    num_envs, steps, seed = 8, 40, 123
    serial_records, all_actions = [], []
    with make_vec(ENV, num_envs, backend="serial", group_size=2, autoreset=autoreset) as vec:
        serial_records.append(vec.reset(seed=seed))
        for t in range(steps):
            actions = [mixed_policy(env, i, t) for i, env in enumerate(vec.envs)]
            all_actions.append(actions)
            serial_records.append(record(vec.step(actions)))
    mp_records = []
    with make_vec(
        ENV, num_envs, backend="multiprocessing", group_size=2, autoreset=autoreset, num_workers=2
    ) as vec:
        mp_records.append(vec.reset(seed=seed))
        for actions in all_actions:
            mp_records.append(record(vec.step(actions)))
    assert mp_records == serial_records
    json.dumps(serial_records)  # infos are JSON-able
    terminated = np.array([r[2] for r in serial_records[1:]])
    rewards = np.array([r[1] for r in serial_records[1:]])
    assert terminated.sum() >= num_envs  # many episodes ended (and were autoreset) on the way
    assert (rewards[terminated] == 1.0).any() and (rewards[terminated] < 1.0).any()


def test_batch_unpacks_as_gymnasium_tuple_with_numpy_dtypes() -> None:
    with make_vec(ENV, 4, backend="serial") as vec:
        obs, infos = vec.reset(seed=0)
        assert len(obs) == 4 and all(isinstance(o, str) for o in obs)
        batch = vec.step([GUESS] * 4)
        obs, rewards, terminated, truncated, infos = batch
        assert obs == batch.observations and infos == batch.infos
        assert rewards.dtype == np.float32 and terminated.dtype == np.bool_
        assert truncated.dtype == np.bool_ and batch.env_ids.dtype == np.int64
        assert batch.env_ids.tolist() == [0, 1, 2, 3]
        assert vec.single_observation_space.contains(obs[0])
        assert vec.single_action_space.contains(GUESS)


# -- seeding and groups ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_members_play_the_same_tasks_across_autoresets(backend: str) -> None:
    num_envs, group_size, seed = 8, 4, 31
    num_groups = num_envs // group_size
    # Members end their episodes at different times: junk ends an episode sooner than guessing.
    actions = [JUNK if i % group_size in (0, 3) else GUESS for i in range(num_envs)]
    with make_vec(ENV, num_envs, backend=backend, group_size=group_size) as vec:
        _, infos = vec.reset(seed=seed)
        episodes = [[info["task_id"]] for info in infos]
        for _ in range(40):
            for i, info in enumerate(vec.step(actions).infos):
                if "final_info" in info:
                    assert info["final_info"]["task_id"] == episodes[i][-1]
                    episodes[i].append(info["task_id"])
    for g in range(num_groups):
        members = episodes[g * group_size : (g + 1) * group_size]
        shortest = min(len(m) for m in members)
        assert shortest >= 3 and max(len(m) for m in members) > shortest
        assert all(m[:shortest] == members[0][:shortest] for m in members)
        for k, task_id in enumerate(members[0][:4]):  # the documented seed schedule
            _, info = gym.make(ENV).reset(seed=seed + g + k * num_groups)
            assert info["task_id"] == task_id
    assert episodes[0][0] != episodes[group_size][0]


def test_reset_seeds_are_reproducible_and_accept_lists() -> None:
    with make_vec(ENV, 6, backend="serial", group_size=2) as vec:
        obs_a, infos_a = vec.reset(seed=9)
        obs_b, infos_b = vec.reset(seed=[9, 10, 11])  # one seed per group
        obs_c, _ = vec.reset(seed=[9, 9, 10, 10, 11, 11])  # one seed per env
        assert obs_a == obs_b == obs_c and infos_a == infos_b
        _, infos = vec.reset()  # a fresh base seed from the vector's own RNG
        ids = [info["task_id"] for info in infos]
        assert ids[0] == ids[1] and ids[2] == ids[3] and ids[4] == ids[5]
        with pytest.raises(ConfigError, match="seed"):
            vec.reset(seed=[1, 2])
        with pytest.raises(ConfigError, match="seed"):
            vec.reset(seed=-1)


# -- autoreset modes -----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_step_autoreset_returns_new_episode_and_keeps_final(backend: str) -> None:
    seed = 5
    ref = single(seed)  # env 0 and 1 (group 0) play this task
    final_obs, final_reward, _, _, final_info = ref.step(answer(ref))
    with make_vec(ENV, 4, backend=backend, group_size=2) as vec:
        vec.reset(seed=seed)
        batch = vec.step([answer_for(seed)] * 2 + [JUNK] * 2)
    assert batch.terminated.tolist() == [True, True, False, False]
    assert batch.rewards.tolist() == [final_reward] * 2 + [0.0] * 2
    next_obs, next_info = gym.make(ENV).reset(seed=seed + 0 + 1 * 2)  # episode k=1 of group 0
    for i in (0, 1):
        assert batch.observations[i] == next_obs
        assert batch.infos[i]["task_id"] == next_info["task_id"]
        assert batch.infos[i]["final_obs"] == final_obs
        assert batch.infos[i]["final_info"] == dict(final_info)
    assert all("final_obs" not in info for info in batch.infos[2:])


@pytest.mark.parametrize("backend", BACKENDS)
def test_next_step_autoreset_follows_gymnasium(backend: str) -> None:
    seed = 5
    ref = single(seed)
    final_obs, final_reward, *_ = ref.step(answer(ref))
    with make_vec(ENV, 4, backend=backend, group_size=2, autoreset="next_step") as vec:
        vec.reset(seed=seed)
        ended = vec.step([answer_for(seed)] * 2 + [JUNK] * 2)
        after = vec.step([GUESS] * 4)  # ignored by envs 0 and 1, which reset instead
    assert ended.terminated.tolist() == [True, True, False, False]
    assert ended.observations[:2] == [final_obs] * 2 and ended.rewards[0] == final_reward
    assert all("final_obs" not in info for info in ended.infos)
    next_obs, next_info = gym.make(ENV).reset(seed=seed + 2)
    assert after.observations[:2] == [next_obs] * 2
    assert [info["task_id"] for info in after.infos[:2]] == [next_info["task_id"]] * 2
    assert after.rewards[:2].tolist() == [0.0, 0.0]
    assert not after.terminated[:2].any() and not after.truncated[:2].any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_disabled_autoreset_needs_reset_mask(backend: str) -> None:
    seed = 5
    with make_vec(ENV, 4, backend=backend, group_size=2, autoreset="disabled") as vec:
        vec.reset(seed=seed)
        ended = vec.step([answer_for(seed)] * 2 + [GUESS] * 2)
        assert ended.terminated.tolist() == [True, True, False, False]
        with pytest.raises(ResetNeeded, match="reset_mask"):
            vec.step([GUESS] * 4)
        # Without a seed, the chosen env continues its schedule: episode k=1 of group 0.
        obs, infos = vec.reset(options={"reset_mask": np.array([True, False, False, False])})
        assert obs[0] == gym.make(ENV).reset(seed=seed + 2)[0]
        assert obs[1:] == ended.observations[1:] and infos[1:] == [{}, {}, {}]
        with pytest.raises(ResetNeeded):  # env 1 is still finished
            vec.step([GUESS] * 4)
        obs, _ = vec.reset(seed=77, options={"reset_mask": np.array([False, True, False, False])})
        assert obs[1] == gym.make(ENV).reset(seed=77)[0]
        batch = vec.step([GUESS] * 4)
        # Envs 2 and 3 were not stepped by the refused calls: this is their second turn.
        assert batch.infos[2]["turn"] == batch.infos[3]["turn"] == 2
        assert batch.infos[0]["turn"] == batch.infos[1]["turn"] == 1


# -- EnvPool-style batches -----------------------------------------------------------------------


def test_batch_size_below_num_envs_returns_env_ids_and_covers_every_env() -> None:
    with make_vec(ENV, 8, backend="multiprocessing", num_workers=4, batch_size=4) as vec:
        vec.async_reset([100 + i for i in range(8)])
        turns: dict[int, int] = {}
        seen: set[int] = set()
        # Which worker answers first is up to the OS scheduler: on a loaded machine one can be
        # late for many batches. The claim is no starvation, so play until every env was seen
        # (at least 30 batches, at most 500).
        for n in range(500):
            if n >= 30 and seen == set(range(8)):
                break
            batch = vec.recv()
            ids = batch.env_ids.tolist()
            assert len(ids) == len(batch.observations) == 4 and len(set(ids)) == 4
            assert all(ids[j] // 2 == ids[j + 1] // 2 for j in (0, 2))  # whole workers
            for env_id, info in zip(ids, batch.infos):
                # Every env advances by exactly one turn each time it is stepped.
                expected = turns.get(env_id, -1) + 1
                got = info["final_info"]["turn"] if "final_info" in info else info["turn"]
                assert env_id not in turns or got == expected
                turns[env_id] = info["turn"]
            seen.update(ids)
            vec.send([GUESS] * 4, batch.env_ids)
        assert seen == set(range(8))


def test_step_with_batch_size_steps_the_last_batch() -> None:
    with make_vec(ENV, 4, backend="multiprocessing", num_workers=2, batch_size=2) as vec:
        obs, _ = vec.reset(seed=0)
        assert len(obs) == 2 and vec.env_ids is not None and len(vec.env_ids) == 2
        batch = vec.step([GUESS] * 2)
        assert len(batch.observations) == 2
        with pytest.raises(ConfigError, match="whole workers"):
            vec.send([GUESS] * 2, [0, 3])


# -- failures --------------------------------------------------------------------------------------


def test_killed_worker_raises_worker_died_error() -> None:
    vec = make_vec(ENV, 4, backend="multiprocessing", num_workers=2)
    assert isinstance(vec, MultiprocessingVecEnv)
    vec.reset(seed=0)
    os.kill(vec.worker_pids[1], signal.SIGKILL)
    with pytest.raises(WorkerDiedError, match=r"worker 1 .*exit code -9"):
        vec.step([GUESS] * 4)  # the deadline fixture fails the test if this hangs
    with pytest.raises(WorkerDiedError):  # the VecEnv stays unusable, and says why
        vec.reset(seed=0)
    vec.close()
    vec.close()


def test_worker_killed_while_stepping_raises_in_recv() -> None:
    with make_vec(ENV, 4, backend="multiprocessing", num_workers=2) as vec:
        vec.reset(seed=0)
        vec.send([GUESS] * 4)
        os.kill(vec.worker_pids[0], signal.SIGKILL)
        with pytest.raises(WorkerDiedError, match="worker 0"):
            for _ in range(3):  # worker 0 may have answered before it was killed
                vec.recv()
                vec.send([GUESS] * 4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_env_errors_at_construction_keep_their_type(backend: str) -> None:
    with pytest.raises(ConfigError) as raised:
        make_vec(ENV, 2, backend=backend, **BAD_KWARGS)
    if backend == "multiprocessing":
        assert "worker 0" in str(raised.value) and "Traceback" in str(raised.value)


def test_env_errors_in_workers_keep_their_type_and_traceback() -> None:
    with pytest.raises(Exception) as in_process:  # whatever type the env itself raises
        gym.make(ENV).step(GUESS)  # stepping before any reset: the env refuses
    error_type = type(in_process.value)
    assert "ResetNeeded" in error_type.__name__
    with make_vec(ENV, 4, backend="multiprocessing", num_workers=2) as vec:
        with pytest.raises(error_type, match=r"(?s)reset.*worker 0 .*Traceback"):
            vec.step([GUESS] * 4)
        vec.reset(seed=1)  # the VecEnv recovers with a reset
        assert len(vec.step([GUESS] * 4).observations) == 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"backend": "cuda"}, "serial, multiprocessing, ray"),
        ({"autoreset": "sometimes"}, "same_step, next_step, disabled"),
        ({"group_size": 3}, "group_size"),
        ({"group_size": 0}, "group_size"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": 16}, "batch_size"),
        ({"batch_size": 4}, "serial"),
        ({"batch_size": 4, "backend": "multiprocessing", "autoreset": "disabled"}, "disabled"),
        ({"batch_size": 3, "backend": "multiprocessing", "num_workers": 4}, "multiple"),
        ({"num_workers": 3, "backend": "multiprocessing"}, "divisor"),
        ({"num_workers": 2}, "multiprocessing"),
        ({"context": "teleport", "backend": "multiprocessing"}, "forkserver"),
    ],
)
def test_bad_configuration_raises_config_error(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        make_vec(ENV, 8, **kwargs)


def test_bad_env_id_and_num_envs_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown env id"):
        make_vec("textgyms/Nope-v0", 2)
    with pytest.raises(ConfigError, match="num_envs"):
        make_vec(ENV, 0)


def test_misuse_of_reset_and_step_raises_config_error() -> None:
    with make_vec(ENV, 4, backend="serial") as vec:
        vec.reset(seed=0)
        with pytest.raises(ConfigError, match="4 actions"):
            vec.step([GUESS] * 3)
        with pytest.raises(ConfigError, match="reset_mask"):
            vec.reset(options={"reset_mask": np.zeros(4, np.bool_)})
        with pytest.raises(ConfigError, match="reset_mask"):
            vec.reset(options={"reset_mask": np.ones(5, np.bool_)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_recv_and_send_out_of_order_raise_backend_error(backend: str) -> None:
    with make_vec(ENV, 4, backend=backend) as vec:
        vec.reset(seed=0)
        with pytest.raises(BackendError, match="recv"):
            vec.recv()  # nothing was sent
        vec.send([GUESS] * 4)
        with pytest.raises(BackendError, match="recv"):
            vec.send([GUESS] * 4)  # the previous results were not received
        assert vec.recv().infos[0]["turn"] == 1  # nothing was lost


def test_make_vec_is_exported_by_the_package() -> None:
    assert textgyms.make_vec is make_vec


# -- closing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_close_is_idempotent_and_final(backend: str) -> None:
    vec = make_vec(ENV, 4, backend=backend)
    assert isinstance(vec, (SerialVecEnv, MultiprocessingVecEnv)) and isinstance(vec, VecEnv)
    pids = vec.worker_pids if isinstance(vec, MultiprocessingVecEnv) else []
    vec.reset(seed=0)
    vec.close()
    vec.close()
    with pytest.raises(BackendError, match="closed"):
        vec.step([GUESS] * 4)
    for pid in pids:  # workers were joined, so their pids are gone
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_context_manager_and_garbage_collection_close_quietly(monkeypatch) -> None:
    unraisable: list = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with make_vec(ENV, 2, backend="multiprocessing", num_workers=2) as vec:
        vec.reset(seed=0)
    assert vec.closed
    vec = make_vec(ENV, 2, backend="multiprocessing", num_workers=2)
    vec.reset(seed=0)
    del vec
    with pytest.raises(ConfigError):  # a VecEnv that failed half-way is collected quietly too
        make_vec(ENV, 2, backend="multiprocessing", **BAD_KWARGS)
    gc.collect()
    assert unraisable == []


def test_fork_context_gives_the_same_batches() -> None:
    def run(**kwargs: object) -> list:
        with make_vec(ENV, 4, backend="multiprocessing", num_workers=2, **kwargs) as vec:
            return [vec.reset(seed=3)] + [record(vec.step([GUESS] * 4)) for _ in range(8)]

    assert run(context="fork") == run()


@pytest.mark.parametrize("backend", BACKENDS)
def test_scripted_oracle_through_call_env(backend):
    """ScriptedPolicy reaches each env's oracle through call_env, wherever the env lives."""
    from textgyms.policies import ScriptedPolicy

    policy = ScriptedPolicy("oracle")
    scores: dict[int, float] = {}
    with textgyms.make_vec(ENV, 4, backend=backend) as vec:
        obs, infos = vec.reset(seed=3)
        for _ in range(7):
            batch = vec.step(policy.act(obs, infos, envs=vec))
            obs, infos = batch.observations, batch.infos
            for i in np.flatnonzero(batch.terminated | batch.truncated):
                scores.setdefault(int(i), infos[i]["final_info"]["score"])
    assert scores == {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}


def test_call_env_misuse_raises():
    with textgyms.make_vec(ENV, 2, backend="multiprocessing") as vec:
        vec.reset(seed=0)
        with pytest.raises(ConfigError, match="env_id"):
            vec.call_env(5, "oracle_actions")
        with pytest.raises(ConfigError, match="public env method"):
            vec.call_env(0, "_advance")
        vec.send([GUESS] * 2)
        with pytest.raises(BackendError, match="recv"):
            vec.call_env(0, "oracle_actions")
        vec.recv()
        assert isinstance(vec.call_env(1, "oracle_actions"), list)


def test_env_kwargs_pass_names_that_clash_with_make_vec_options() -> None:
    with make_vec(ENV, 2, env_kwargs={"length": 6}, hard_mode=True) as vec:
        obs, _ = vec.reset(seed=0)
        assert "secret 6-letter" in obs[0]
        assert all(len(a) == len("<guess>xxxxxx</guess>") for a in vec.call_env(0, "oracle_actions"))
    with pytest.raises(ConfigError, match="length given twice"):
        make_vec(ENV, 2, env_kwargs={"length": 6}, length=5)
