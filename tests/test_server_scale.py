"""``textgyms serve --workers N`` and the capacity report, against real server processes."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("openenv")

import textgyms  # noqa: E402,F401  (registers the ids)
from textgyms.remote import RemoteEnv  # noqa: E402
from textgyms.server.process import ServerProcess  # noqa: E402

pytestmark = pytest.mark.usefixtures("deadline")

WORDLE = "textgyms/Wordle-v0"


def capacity(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/capacity", timeout=30) as response:
        return json.loads(response.read())


def _worker_pids(url: str) -> list[int]:
    try:  # a connection the kernel gave the dying worker is reset: ask again
        return [w["pid"] for w in capacity(url)["workers"]]
    except OSError:
        return []


def wait_for(predicate: Any, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, "did not happen in time"
        time.sleep(0.2)


def play(env: Any, seed: int) -> list[Any]:
    """A whole oracle episode: the transcript of (obs, reward, terminated, truncated, info)."""
    local = gym.make(WORDLE)
    local.reset(seed=seed)
    steps: list[Any] = [env.reset(seed=seed)]
    for action in local.unwrapped.oracle_actions():
        steps.append(env.step(action))
    local.close()
    return steps


def test_workers_share_the_port_serve_whole_sessions_and_report_capacity() -> None:
    server = ServerProcess(WORDLE, args=["--workers", "2", "--max-sessions", "20"])
    try:
        empty = capacity(server.url)
        assert empty["max_sessions"] == 40 and empty["in_use"] == 0
        pids = sorted(w["pid"] for w in empty["workers"])
        assert len(pids) == 2 and server.pid not in pids
        envs = [RemoteEnv(server.url) for _ in range(20)]
        full = capacity(server.url)
        assert full["in_use"] == 20 and full["free"] == 20
        assert sorted(w["pid"] for w in full["workers"]) == pids
        # The kernel spreads connections over both (all 20 on one: odds 2 in a million).
        assert all(w["in_use"] > 0 for w in full["workers"])
        with ThreadPoolExecutor(8) as pool:
            remote = list(pool.map(play, envs, range(20)))
        local = gym.make(WORDLE)
        assert remote == [play(local, seed) for seed in range(20)]  # no episode mixed up
        for env in envs:
            env.close()
        os.kill(pids[0], signal.SIGKILL)  # a worker that dies is started again
        wait_for(lambda: len(set(_worker_pids(server.url)) - {pids[0]}) == 2)
        assert len(capacity(server.url)["workers"]) == 2 and server.proc.poll() is None
    finally:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(120) == 0
        server.stop()
    assert "Traceback" not in server.stderr


def test_package_writes_an_openenv_environment_that_openenv_validate_accepts(tmp_path) -> None:
    import importlib.util
    import subprocess
    import sys

    from textgyms.cli import main

    out = tmp_path / "wordle_env"
    kwargs = '{"hard_mode": true}'
    assert main(["serve", WORDLE, "--kwargs", kwargs, "--max-sessions", "64",
                 "--package", str(out)]) == 0  # fmt: skip
    validate = subprocess.run(
        [sys.executable, "-m", "openenv.cli", "validate", str(out), "--skip-build"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "PASS  static.manifest" in validate.stdout
    docker = (out / "Dockerfile").read_text()
    command = json.loads(docker.rsplit("CMD ", 1)[1])
    assert command[:3] == ["textgyms", "serve", WORDLE]
    assert json.loads(command[command.index("--kwargs") + 1]) == {"hard_mode": True}
    assert command[command.index("--max-sessions") + 1] == "64"
    readme = (out / "README.md").read_text()
    assert readme.startswith("---\n") and "sdk: docker" in readme and "app_port: 8000" in readme
    pins = (out / "requirements.txt").read_text().split()
    assert all("==" in pin for pin in pins) and any(p.startswith("openenv==") for p in pins)
    spec = importlib.util.spec_from_file_location("packaged_app", out / "server" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ENV_ID == WORDLE and module.KWARGS == {"hard_mode": True}
    assert module.app.factory.kwargs == {"hard_mode": True}  # the ASGI app builds
    assert main(["serve", WORDLE, "--package", str(out)]) == 2  # not empty: refused
    assert main(["serve", "textgyms/Nope-v0", "--package", str(tmp_path / "x")]) == 2



def test_workers_never_outlive_their_supervisor() -> None:
    server = ServerProcess(WORDLE, args=["--workers", "2"])
    pids = _worker_pids(server.url)
    assert len(pids) == 2
    os.kill(server.pid, signal.SIGKILL)  # no chance to stop them itself
    server.proc.wait(30)

    def gone(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/status") as f:
                return "State:\tZ" in f.read()  # exited (a zombie until reaped)
        except OSError:
            return True

    wait_for(lambda: all(gone(pid) for pid in pids))
    server.stop()
