"""Fault tests: dead workers, sandbox children killed by their limits, broken search indexes,
and ``close()`` releasing every process, file descriptor and thread.

Complements tests/test_vector.py (a dead worker raises), tests/test_search_backends.py (missing
or corrupt index files, unreachable Elasticsearch) and tests/test_sandbox*.py: here the faults
go through the real envs and vectors, and what is left behind afterwards is checked.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import psutil
import pytest

import textgyms
from textgyms.errors import IndexCorruptError, WorkerDiedError
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.sandbox import client as sandbox_client
from textgyms.vector import make_vec

WORDLE, CODE, SEARCH = "textgyms/Wordle-v0", "textgyms/Code-v0", "textgyms/Search-v1"
SMALL_SEARCH = {"pages": 1000, "backend": "fts5"}  # small and quick to index

# A fault that hangs fails its test after 120 s instead of hanging the suite.
pytestmark = pytest.mark.usefixtures("deadline")


def play(vec: Any, seed: int, steps: int) -> list[tuple]:
    """Reset with ``seed`` and take ``steps`` random-policy steps; the batches as plain values."""
    policy = ScriptedPolicy("random", seed=seed)
    obs, infos = vec.reset(seed=seed)
    out: list[tuple] = [(obs, infos)]
    for _ in range(steps):
        obs, rewards, terminated, truncated, infos = vec.step(policy.act(obs, infos, envs=vec))
        out.append((obs, rewards.tolist(), terminated.tolist(), truncated.tolist(), infos))
    return out


def descendants(pid: int) -> list[psutil.Process]:
    """Every live descendant of ``pid``."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def gone(procs: list[psutil.Process], timeout: float = 10.0) -> list[psutil.Process]:
    """The processes of ``procs`` still running after ``timeout`` seconds."""
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    return alive


# -- a worker killed mid-step ------------------------------------------------------------------


def test_dead_worker_names_worker_and_env_and_a_new_vector_replays_the_same():
    # Code: its workers hold resources of their own (a sandbox server each).
    env_id = CODE

    def vector() -> Any:
        return make_vec(env_id, 4, backend="multiprocessing", num_workers=2)

    with vector() as vec:
        reference = play(vec, seed=5, steps=3)
    vec = vector()
    play(vec, seed=5, steps=1)  # Code: the worker's sandbox server is running now
    victim = vec.worker_pids[1]
    below = descendants(victim)
    vec.send(["<guess>crane</guess>"] * 4)
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(WorkerDiedError) as err:
        for _ in range(3):  # worker 1 may have answered before it was killed
            vec.recv()
            vec.send(["<guess>crane</guess>"] * 4)
    message = str(err.value)
    assert "worker 1" in message and env_id in message and "envs 2..3" in message
    assert "SIGKILL" in message
    vec.close()
    # What the dead worker had started (Code's sandbox server) dies with it: no orphans.
    assert gone(below) == []
    with vector() as again:  # a new make_vec on the same seeds plays exactly the same
        assert play(again, seed=5, steps=3) == reference


# -- sandbox children killed by their limits ---------------------------------------------------


def submit(code: str) -> str:
    return json.dumps({"name": "submit", "arguments": {"code": code}})


ALLOCATIONS = {
    "at import": "x = bytearray(1 << 31)\ndef {entry}(*args, **kwargs):\n    return 0\n",
    "in the call": "def {entry}(*args, **kwargs):\n    return len(bytearray(1 << 31))\n",
    "growing": (
        "def {entry}(*args, **kwargs):\n    xs = []\n    while True:\n"
        "        xs.append(b'x' * (1 << 20))\n"
    ),
}


@pytest.fixture
def code_env() -> Iterator[gym.Env]:
    """A Code env with a 128 MB memory limit per sandbox child (closed after each test: an
    open one would keep its sandbox server, whose spare child changes, under the close checks
    below)."""
    env = gym.make(CODE, memory_mb=128, test_timeout=3.0, run_timeout=5.0)
    yield env
    env.close()


def solve_next_episode(env: gym.Env, seed: int) -> None:
    """The env still works after a fault: the next episode is solved by the reference."""
    env.reset(seed=seed)
    _, reward, terminated, _, info = env.step(env.unwrapped.solve(env.unwrapped.state.task)[0])
    assert terminated and reward == 1.0 and info["error"] is None


@pytest.mark.parametrize("where", list(ALLOCATIONS))
def test_allocation_beyond_memory_mb_is_a_scored_failure(code_env, where):
    code_env.reset(seed=1)
    entry = code_env.unwrapped.state.task.entry
    code = ALLOCATIONS[where].format(entry=entry)
    # The agent sees the memory error by name when it runs or tests the code...
    obs, _, terminated, _, _ = code_env.step(f"<run>{code}\n{entry}()\n</run>")
    assert not terminated and "MemoryError" in obs
    obs, _, _, _, info = code_env.step(f"<test>{code}</test>")
    assert "MemoryError" in obs and info["passed"] == 0
    # ...and a submission is scored 0 (the episode ends; nothing hangs).
    obs, reward, terminated, _, info = code_env.step(submit(code))
    assert terminated and reward == 0.0 and info["score"] == 0.0 and not info["solved"]
    assert info["error"] == "memory_limit" and f"0/{info['total']} hidden tests passed" in obs
    solve_next_episode(code_env, seed=2)


def kill_busy_sandbox_child(stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL the sandbox child running the agent's code, as the kernel's OOM killer would:
    the leaf process of this test process's tree that burns CPU from now on (idle spares and
    other idle leaves, such as multiprocessing's fork server, do not)."""
    me = psutil.Process()
    start: dict[int, float] = {}
    while not stop.wait(0.05):
        for proc in me.children(recursive=True):
            try:
                used = proc.cpu_times().user
                start.setdefault(proc.pid, used)
                if used - start[proc.pid] > 0.3 and not proc.children():
                    proc.kill()
                    killed.append(proc.pid)
                    return
            except psutil.NoSuchProcess:
                continue


def test_sandbox_child_killed_mid_run_is_a_scored_failure(code_env):
    code_env.reset(seed=3)
    entry = code_env.unwrapped.state.task.entry
    spin = f"def {entry}(*args, **kwargs):\n    while True:\n        pass\n"
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=kill_busy_sandbox_child, args=(stop, killed))
    killer.start()
    try:
        obs, reward, terminated, _, info = code_env.step(submit(spin))
    finally:
        stop.set()
        killer.join()
    assert len(killed) == 1, "no sandbox child was found running the code"
    assert terminated and reward == 0.0 and info["error"] == "killed"
    assert "The run ended with: killed" in obs
    solve_next_episode(code_env, seed=4)


# -- broken search indexes, through the env ----------------------------------------------------


@pytest.mark.parametrize("backend", ["fts5", "tantivy"])
def test_index_files_missing_behind_the_complete_marker_raise_a_named_error(
    tmp_path, monkeypatch, backend
):
    monkeypatch.setenv("TEXTGYMS_CACHE_DIR", str(tmp_path))
    env = gym.make(SEARCH, pages=1000, backend=backend)
    env.reset(seed=0)
    env.close()
    (index,) = (tmp_path / "search").iterdir()
    for f in index.iterdir():  # the marker says "complete" but the index itself is gone
        if f.name != "COMPLETE":
            shutil.rmtree(f) if f.is_dir() else f.unlink()
    fresh = gym.make(SEARCH, pages=1000, backend=backend)
    with pytest.raises(IndexCorruptError, match=str(index)):
        fresh.reset(seed=0)
    fresh.close()


# -- close() releases every process, file and thread -------------------------------------------


def resources() -> dict[str, Any]:
    """This process's child processes, open fds (with their targets), threads and mapped
    files: what a closed env or vector must not leave behind."""
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the fd listdir itself used, already closed
            continue
    maps = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()}
    return {
        "children": sorted(p.pid for p in psutil.Process().children(recursive=True)),
        "fds": sorted(fds.values()),
        "threads": sorted(t.name for t in threading.enumerate()),
        "tasks": len(os.listdir("/proc/self/task")),
        "index_maps": sorted(m for m in maps if "search" in m and "/" in m),
    }


def leftovers(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What ``after`` holds that ``before`` did not: new children, fds, threads, mapped index
    files, and extra OS threads. Things that went away are not leftovers (a thread an earlier
    test started may end while this one runs)."""
    out = {k: sorted((Counter(after[k]) - Counter(before[k])).elements())
           for k in ("children", "fds", "threads", "index_maps")}
    out["tasks"] = max(0, after["tasks"] - before["tasks"])
    return {k: v for k, v in out.items() if v}


def settle(check: Callable[[], dict[str, Any]], want: dict[str, Any] | None) -> dict[str, Any]:
    """``check()`` once nothing is left over against ``want`` (processes take a moment to be
    reaped), or, with ``want=None``, once two checks 0.2 s apart agree; the last value after
    10 s."""
    end = time.monotonic() + 10.0
    now = check()
    while time.monotonic() < end:
        if want is not None and not leftovers(want, now):
            break
        time.sleep(0.2)
        now, previous = check(), now
        if want is None and now == previous:
            break
    return now


CASES = [
    ("serial", WORDLE, {}),
    ("multiprocessing", WORDLE, {}),
    ("serial", CODE, {}),
    ("multiprocessing", CODE, {}),
    ("serial", SEARCH, {"env_kwargs": SMALL_SEARCH}),
    ("serial", SEARCH, {"env_kwargs": {**SMALL_SEARCH, "backend": "tantivy"}}),  # mmaps
    ("multiprocessing", SEARCH, {"env_kwargs": SMALL_SEARCH}),
]


def _case_id(case: tuple) -> str:
    backend, env_id, kwargs = case
    index = kwargs.get("env_kwargs", {}).get("backend")
    return "-".join([backend, env_id.split("/")[1], *([index] if index else [])])


@pytest.fixture
def own_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh table of per-process sandbox holds: Code envs an earlier test in this worker left
    open keep the process's shared server alive by design, which would hide whether *this*
    test's close() stops the server it started."""
    monkeypatch.setattr(sandbox_client, "_shared", {})


@pytest.mark.usefixtures("own_sandbox")
@pytest.mark.parametrize(("backend", "env_id", "kwargs"), CASES, ids=[_case_id(c) for c in CASES])
def test_close_releases_processes_fds_and_threads(backend, env_id, kwargs):
    def cycle() -> dict[str, Any]:
        with make_vec(env_id, 2, backend=backend, **kwargs) as vec:
            play(vec, seed=0, steps=2)
            return resources()

    # The first cycle may start things that live on by design (multiprocessing's fork server,
    # sqlite's or tantivy's global thread pools, imported modules' caches): measure after it.
    cycle()
    before = settle(resources, None)  # once an earlier test's exiting processes are reaped
    during = cycle()
    after = settle(resources, before)
    assert leftovers(before, after) == {}
    if backend == "multiprocessing" or env_id == CODE:  # the check can see what was open
        assert len(during["children"]) > len(before["children"])


@pytest.mark.usefixtures("own_sandbox")
def test_close_of_a_single_code_env_stops_its_sandbox_server():
    earlier = {p.pid for p in descendants(os.getpid())}  # e.g. multiprocessing's fork server
    env = gym.make(CODE)
    env.reset(seed=0)
    env.step("<run>print(1)</run>")  # the sandbox server starts on first use
    servers = [p for p in descendants(os.getpid()) if p.pid not in earlier]
    assert servers, "the sandbox server did not start"
    env.close()
    assert gone(servers) == []
    assert textgyms.env_ids()  # the package is still usable after the close
