"""The Ray backend on a local Ray cluster started here, and ``textgyms eval --backend``."""

from __future__ import annotations

import json
import os
import signal
import time

import numpy as np
import pytest
import ray

import textgyms
from textgyms.cli import env_kwargs_doc, main
from textgyms.errors import ConfigError, WorkerDiedError
from textgyms.evaluate import load_results
from textgyms.policies import ScriptedPolicy
from textgyms.vector.ray import RayVecEnv

ENV_IDS = textgyms.env_ids()
# `textgyms eval` passes split= to every env: evaluate on the first id that takes it.
EVAL_ID = next(i for i in ENV_IDS if "split=" in env_kwargs_doc(i))

pytestmark = pytest.mark.usefixtures("ray_cluster")


def _same(a, b) -> None:
    assert a.observations == b.observations and a.infos == b.infos
    assert np.array_equal(a.rewards, b.rewards) and np.array_equal(a.env_ids, b.env_ids)
    assert np.array_equal(a.terminated, b.terminated)
    assert np.array_equal(a.truncated, b.truncated)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_batches_as_serial(env_id):
    """Random and oracle moves through both backends give identical batches, autoreset too."""
    # Two actors (a split over workers) for one id; one for the others, as actors are slow
    # to start on a busy 2-core machine.
    workers = 2 if env_id == ENV_IDS[0] else 1
    kwargs = {"group_size": 2}
    with (
        textgyms.make_vec(env_id, 4, backend="ray", num_workers=workers, **kwargs) as vec,
        textgyms.make_vec(env_id, 4, backend="serial", **kwargs) as ref,
    ):
        assert isinstance(vec, RayVecEnv) and vec.num_workers == workers
        assert vec.single_observation_space == ref.single_observation_space
        obs, infos = vec.reset(seed=11)
        assert (obs, infos) == ref.reset(seed=11)
        done = 0
        for step in range(24):
            policy = ScriptedPolicy("random" if step % 3 == 0 else "oracle", seed=step)
            actions = policy.act(obs, infos, envs=vec)
            assert actions == policy.act(obs, infos, envs=ref)
            batch = vec.step(actions)
            _same(batch, ref.step(actions))
            obs, infos = batch.observations, batch.infos
            done += int((batch.terminated | batch.truncated).sum())
        assert done > 0  # autoreset was exercised


def test_partial_batches_cover_every_env():
    """Which actors answer first is a race, but oldest-request-first among the ready ones means
    no env is starved: every env shows up within a bounded number of partial batches."""
    with textgyms.make_vec(ENV_IDS[0], 4, backend="ray", num_workers=4, batch_size=2) as vec:
        vec.async_reset(list(range(4)))
        seen: set[int] = set()
        for _ in range(40):
            batch = vec.recv()
            assert batch.env_ids.size == 2 and len(batch.observations) == 2
            seen |= set(batch.env_ids.tolist())
            if seen == {0, 1, 2, 3}:
                break
            vec.send(["<guess>crane</guess>"] * 2, batch.env_ids)
        assert seen == {0, 1, 2, 3}


def _wait_until_dead(actor) -> None:
    """``ray.kill`` is asynchronous: a call made right after it may still be served."""
    for _ in range(200):
        try:
            ray.get(actor.pid.remote(), timeout=10)
        except ray.exceptions.RayActorError:
            return
        time.sleep(0.05)
    raise AssertionError("the killed actor is still answering")


def test_killed_actor_raises_naming_the_worker():
    vec = textgyms.make_vec(ENV_IDS[0], 4, backend="ray", num_workers=2)
    obs, infos = vec.reset(seed=0)
    ray.kill(vec.actors[1])
    _wait_until_dead(vec.actors[1])
    with pytest.raises(WorkerDiedError, match=r"ray worker 1 \(actor [0-9a-f]+, envs 2..3\)"):
        vec.step(["<guess>crane</guess>"] * 4)
    with pytest.raises(WorkerDiedError, match="ray worker 1"):  # and it stays broken
        vec.reset(seed=0)
    vec.close()


def test_actor_killed_by_a_signal_mid_step_raises():
    vec = textgyms.make_vec(ENV_IDS[0], 2, backend="ray", num_workers=2)
    vec.reset(seed=0)
    pid = ray.get(vec.actors[0].pid.remote())
    os.kill(pid, signal.SIGSTOP)  # frozen, so the step below is surely in flight when it dies
    vec.send(["<guess>crane</guess>"] * 2)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(WorkerDiedError, match=r"ray worker 0 .*envs 0..0"):
        vec.recv()
    vec.close()


def test_env_errors_keep_their_type_and_config_is_checked():
    with pytest.raises(ConfigError, match="unknown kwarg"):
        textgyms.make_vec(ENV_IDS[0], 2, backend="ray", not_a_kwarg=1)
    with pytest.raises(ConfigError, match="num_workers must be a divisor"):
        textgyms.make_vec(ENV_IDS[0], 4, backend="ray", num_workers=3)
    with pytest.raises(ConfigError, match="context applies to backend='multiprocessing'"):
        textgyms.make_vec(ENV_IDS[0], 2, backend="ray", context="fork")


def _eval(tmp_path, name, policy, *extra):
    out = tmp_path / name
    args = ["eval", "--policy", policy, "--envs", EVAL_ID, "--episodes", "7"]
    args += ["--seed", "3", "--concurrency", "3", "--out", str(out), "--quiet", *extra]
    assert main(args) == 0
    rows = sorted(load_results(out), key=lambda r: r["episode"])
    for r in rows:  # wall time differs; vector rewards are float32
        r.pop("wall_time")
        r["rewards"] = [round(x, 6) for x in r["rewards"]]
        r["return"] = round(r["return"], 6)
    return rows, json.loads((out / "metadata.json").read_text())


def test_eval_backends_give_the_same_results_and_resume(tmp_path):
    """The seeded random baseline gives the same records on every backend as in-process."""
    ref, meta = _eval(tmp_path, "ref", "random")
    assert [r["episode"] for r in ref] == list(range(7)) and meta["backend"] == "in-process"
    for backend in ("serial", "multiprocessing", "ray"):
        rows, meta = _eval(tmp_path, backend, "random", "--backend", backend)
        assert rows == ref, backend
        assert meta["backend"] == backend and EVAL_ID in meta["envs"]
    results = tmp_path / "ray" / "results.jsonl"  # an interrupted ray run resumes
    results.write_text("\n".join(results.read_text().splitlines()[:4]) + "\n")
    rows, _ = _eval(tmp_path, "ray", "random", "--backend", "ray")
    assert rows == ref


def test_eval_rejects_an_unknown_backend(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--policy", "oracle", "--out", str(tmp_path), "--backend", "gpu"])
    assert "invalid choice" in capsys.readouterr().err


def test_pufferlib_ray_backend_leaves_ray_running():
    from textgyms.wrappers import puffer

    vec = puffer.make(ENV_IDS[0], 2, "Ray", num_workers=1, max_obs_tokens=64, max_action_tokens=8)
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (2, 64) and obs.dtype == np.int32
    finished = []
    for _ in range(12):
        obs, rewards, terminals, truncations, infos = vec.step(vec.action_space.sample())
        assert obs.shape == (2, 64) and np.isfinite(rewards).all()
        finished += infos
    assert finished and all(0.0 <= s["score"] <= 1.0 for s in finished)
    vec.close()
    assert ray.is_initialized()


def test_every_actor_plays_its_own_reproducible_task_stream():
    """Envs on different actors never replay each other's seeds; the streams are serial's."""

    wordle = next(i for i in ENV_IDS if i.startswith("textgyms/Wordle-"))

    def streams(backend: str, **kwargs) -> list[list[str]]:
        with textgyms.make_vec(wordle, 4, backend=backend, **kwargs) as vec:
            _, infos = vec.reset(seed=5)
            out = [[info["task_id"]] for info in infos]
            for _ in range(12):  # junk ends each episode after a few turns
                for i, info in enumerate(vec.step(["junk"] * 4).infos):
                    if "final_info" in info:
                        out[i].append(info["task_id"])
            return out

    got = streams("ray", num_workers=2)
    flat = [task for stream in got for task in stream]
    assert min(map(len, got)) >= 3 and len(set(flat)) == len(flat)
    assert got == streams("serial")


def _assigned_resources(actor) -> dict[str, float]:
    """What Ray granted an actor, asked of the actor itself."""
    return ray.get(
        actor.__ray_call__.remote(lambda _self: ray.get_runtime_context().get_assigned_resources())
    )


def test_make_vec_gives_every_actor_its_actor_options():
    """``make_vec(..., backend="ray", actor_options=...)`` reaches ``ActorClass.options``: each
    actor holds the half CPU it asked for (by default an actor holds none while it runs)."""
    with textgyms.make_vec(
        ENV_IDS[0], 2, backend="ray", num_workers=2, actor_options={"num_cpus": 0.5}
    ) as vec:
        assert [_assigned_resources(a).get("CPU") for a in vec.actors] == [0.5, 0.5]
        obs, _ = vec.reset(seed=0)
        assert len(obs) == 2
    with textgyms.make_vec(ENV_IDS[0], 1, backend="ray", num_workers=1) as vec:
        assert "CPU" not in _assigned_resources(vec.actors[0])


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ([("num_cpus", 1)], "must be a dict of Ray actor options"),
        ({1: 2}, "must be a dict of Ray actor options"),
        ({"num_cpu": 1}, "Ray refused .*num_cpu"),
        ({"num_cpus": -1}, "Ray refused"),
        ({"max_restarts": 3}, r"\['max_restarts'\] cannot be set"),
        ({"name": "envs"}, r"\['name'\] cannot be set"),
    ],
)
def test_bad_actor_options_raise_config_error(options, match):
    with pytest.raises(ConfigError, match=match):
        textgyms.make_vec(ENV_IDS[0], 2, backend="ray", actor_options=options)


def test_actor_options_need_the_ray_backend():
    with pytest.raises(ConfigError, match="actor_options apply to backend='ray'"):
        textgyms.make_vec(ENV_IDS[0], 2, backend="serial", actor_options={"num_cpus": 1})


@pytest.mark.parametrize("mode", ["wait", "auto"])
def test_actors_collect_garbage_in_their_wait_unless_told_not_to(mode, monkeypatch):
    from textgyms.vector.collector import EMULATED

    monkeypatch.setenv("TEXTGYMS_WORKER_GC", mode)
    with textgyms.make_vec("textgyms/Wordle-v0", 2, backend="ray", num_workers=1) as vec:
        vec.reset(seed=0)
        vec.step(["crane", "slate"])
        on, collections = ray.get(vec.actors[0].collector_state.remote())
    assert on == (mode == "auto" or not EMULATED)
    assert len(collections) == 3


@pytest.mark.parametrize("ahead", [True, False])
def test_actors_draw_ahead_once_the_driver_has_the_batch(ahead):
    """Reset-ahead: after ``recv``, each actor draws its env's next task on its second thread
    (the batches stay the serial backend's: test_same_batches_as_serial runs with it on)."""
    with textgyms.make_vec("textgyms/NetConfig-v4", 2, backend="ray", num_workers=2,
                           reset_ahead=ahead) as vec:
        first = vec.reset(seed=0)
        time.sleep(1.0)  # the model's turn
        kept = [vec.call_env(i, "forget_pregenerated") for i in range(2)]
        assert kept == [ahead, ahead]
        vec.reset(seed=0)
        time.sleep(1.0)
        batch = vec.step([vec.call_env(i, "oracle_actions")[0] for i in range(2)])
    with textgyms.make_vec("textgyms/NetConfig-v4", 2) as serial:
        assert serial.reset(seed=0)[0] == first[0]
        want = serial.step([serial.call_env(i, "oracle_actions")[0] for i in range(2)])
    _same(batch, want)  # the autoreset used the drawn tasks: the same next episodes
