"""SkyRL 0.4 as its users run it: its own generator plays every id through our env.

SkyRL 0.4 needs Python 3.12, so it lives in ``.venv-skyrl`` (made by ``make test``) and
``tests/skyrl_run.py`` runs there: ``textgyms.integrations.skyrl.main.load_config`` parses the
config with SkyRL's own loader, SkyRL's ``PromptDataset`` reads the exported rows and its
``SkyRLGymGenerator`` plays them with a scripted inference client (the oracle's answers, then
junk). Here the report is checked against the local envs of this venv: the same actions on the
same seeds give the same rewards and observations.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import textgyms
from textgyms.integrations.episode import TaskRow

ROOT = Path(__file__).resolve().parents[1]
SKYRL_PY = ROOT / ".venv-skyrl" / "bin" / "python"


@pytest.fixture(scope="module")
def report() -> dict:
    if not SKYRL_PY.exists():
        pytest.skip("no .venv-skyrl (run `make test`, which makes it)")
    done = subprocess.run([str(SKYRL_PY), str(ROOT / "tests" / "skyrl_run.py")],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _local(row: dict, actions: list[str]) -> tuple[float, list[str], dict]:
    """Play ``actions`` on the local env of ``row``: return, observations, last info."""
    task = TaskRow.from_row(row)
    env = task.make()
    env.reset(seed=task.seed)
    total, observations, info = 0.0, [], {}
    for action in actions:
        obs, reward, term, trunc, info = env.step(action)
        total += reward
        observations.append(obs)
        if term or trunc:
            break
    env.close()
    return total, observations, info


def test_skyrl_runs_on_python_3_12_with_the_entrypoints_config(report):
    assert report["python"] == [3, 12]
    assert report["config"] == {"env_class": "textgyms", "max_turns": 50, "env_kwargs": {},
                                "backend": report["config"]["backend"]}


def test_skyrls_generator_plays_every_id_to_the_local_envs_rewards(report):
    trajectories = report["trajectories"]
    assert len(trajectories) == 2 * len(textgyms.env_ids())
    played = sorted({TaskRow.from_row(t["row"]).env_id for t in trajectories})
    assert played == sorted(textgyms.env_ids())
    for i, traj in enumerate(trajectories):
        row = TaskRow.from_row(traj["row"])
        assert traj["actions"] == traj["scripted"], row.env_id  # ids decode to the script
        assert traj["generated_verbatim"] and traj["prompt_is_template"], row.env_id
        total, observations, info = _local(traj["row"], traj["actions"])
        assert traj["reward_sum"] == pytest.approx(total), row.env_id
        # every observation but the last (none once done) sits in a mask-0 gap, rendered
        assert len(traj["observations"]) == len(observations) - 1, row.env_id
        for gap, obs in zip(traj["observations"], observations, strict=False):
            assert obs.strip() and obs in gap, row.env_id
        if i % 2 == 0:  # the oracle's episode
            assert info["score"] == 1.0, row.env_id
        else:
            assert info["score"] < 1.0, row.env_id
        assert traj["stop_reason"] == "stop"


def test_every_session_is_finished_and_metrics_reach_skyrl(report):
    n = len(textgyms.env_ids())
    assert report["finished_sessions"] == sorted(f"{u}_{r}" for u in range(n) for r in (0, 1))
    metrics = report["rollout_metrics"]  # SkyRL averages get_metrics() under environment/
    keys = {f"environment/{k}" for k in ("score", "solved", "turns", "return", "finished")}
    assert keys <= set(metrics), sorted(metrics)
    returns = [t["reward_sum"] for t in report["trajectories"]]
    assert metrics["environment/return"] == pytest.approx(sum(returns) / len(returns))
    assert 0.5 <= metrics["environment/score"] < 1.0  # the oracle's half scores 1


def test_env_kwargs_from_skyrls_config_reach_the_env(report):
    strict = report["strict_wordle"]  # max_invalid=1 from environment.skyrl_gym.textgyms
    assert strict["turns"] == 1 and strict["reward_sum"] <= 0.0


def test_skyrls_config_refusals_are_config_errors(report):
    refused = report["refused"]
    assert "nope" in refused["unknown"] and "SkyRL refuses" in refused["unknown"]
    assert "'+' prefix" in refused["plus"]
    assert "train_batch_size >= cfg.trainer.policy_mini_batch_size" in refused["batch"]
