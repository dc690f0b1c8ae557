"""``textgyms serve`` driven over real sockets: real server processes on 127.0.0.1, the stock
OpenEnv client from PyPI (``GenericEnvClient``), raw WebSockets for malformed traffic, and
``RemoteEnv`` / ``backend="remote"`` against local envs and the serial backend."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openenv")

from support import started_servers  # noqa: E402

import textgyms  # noqa: E402,F401  (registers the ids)
from textgyms.cli import main  # noqa: E402
from textgyms.errors import ConfigError, ResetNeeded, ServerError  # noqa: E402
from textgyms.remote import RemoteEnv  # noqa: E402
from textgyms.server import load_openenv  # noqa: E402
from textgyms.server.process import ServerProcess  # noqa: E402
from textgyms.vector import make_vec  # noqa: E402

load_openenv()
from openenv.core.generic_client import GenericEnvClient  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

pytestmark = pytest.mark.usefixtures("deadline")

IDS = sorted(i for i in gym.registry if i.startswith("textgyms/"))
WORDLE, CODE = "textgyms/Wordle-v0", "textgyms/Code-v0"
TOKEN = "s3cret-token"
LIMIT = 4096  # --max-message-bytes of the limits server
IDLE = 2.0  # --idle-timeout of the limits server (seconds)
SERVERS: dict[str, tuple[str, dict[str, Any]]] = {
    **{env_id: (env_id, {}) for env_id in IDS},
    "wordle2": (WORDLE, {}),
    "dying": (WORDLE, {}),
    "sigterm": (CODE, {}),
    "limits": (
        WORDLE,
        {
            "token": TOKEN,
            "args": ["--max-sessions", "2", "--max-message-bytes", str(LIMIT)],
        },
    ),
    # Its own server: an idle timeout on the limits server could free a slot mid-test.
    "idle": (WORDLE, {"args": ["--max-sessions", "2", "--idle-timeout", str(IDLE)]}),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, ServerProcess]]:
    """Every server this module uses, started together and stopped at the end."""
    yield from started_servers(SERVERS)


def client(url: str, token: str | None = None) -> Any:
    """The stock OpenEnv client, synchronous."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return GenericEnvClient(base_url=url, headers=headers).sync()


def raw(url: str, token: str | None = TOKEN) -> Any:
    """A plain WebSocket to ``/ws`` (to send what the stock client never would)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return ws_connect(url.replace("http", "ws") + "/ws", additional_headers=headers)


def ask(ws: Any, message: str) -> dict[str, Any]:
    ws.send(message)
    return json.loads(ws.recv(timeout=60))


def http_status(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def descendants(pid: int) -> set[int]:
    """Every live descendant process of ``pid`` (from /proc)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for tid in os.listdir(f"/proc/{parent}/task") if os.path.exists(f"/proc/{parent}") else ():
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as f:
                    kids = {int(k) for k in f.read().split()}
            except OSError:
                continue
            todo += kids - found
            found |= kids
    return found


def wait_for(predicate: Any, what: str, seconds: float = 60.0) -> None:
    """Poll until ``predicate()`` holds; fail naming ``what`` (a bound, not a speed claim)."""
    end = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > end:
            pytest.fail(f"{what} did not happen within {seconds:g} s")
        time.sleep(0.1)


def local_episode(env_id: str, seed: int) -> tuple[gym.Env, str, dict, list[str]]:
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    return env, obs, info, list(env.unwrapped.oracle_actions())


# -- the wire contract, for every registered id ---------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_stock_client_plays_every_id_like_the_local_env(
    servers: dict[str, ServerProcess], env_id: str
) -> None:
    url = servers[env_id].url
    assert http_status(url + "/health") == 200
    local, obs, info, actions = local_episode(env_id, seed=11)
    with client(url) as env:
        result = env.reset(seed=11)
        assert result.observation["text"] == obs and result.observation["info"] == info
        assert result.done is False
        for action in [*actions[:-1], "no tool call at all", actions[-1]]:
            result = env.step({"text": action})
            obs, reward, terminated, truncated, info = local.step(action)
            assert result.observation["text"] == obs and result.observation["info"] == info
            assert result.reward == reward and result.done == (terminated or truncated)
            assert result.metadata == {"terminated": terminated, "truncated": truncated}
            if result.done:
                break
        assert result.done and result.reward == reward and info["score"] == 1.0
        state = env.state()
        assert state["episode_id"] and state["step_count"] == info["turn"]
        assert state["env_id"] == env_id and state["kwargs"] == {}
    local.close()


def test_remote_env_has_the_local_spaces_errors_and_junk_handling(
    servers: dict[str, ServerProcess],
) -> None:
    local = gym.make(WORDLE)
    env = RemoteEnv(servers[WORDLE].url)
    assert env.env_id == WORDLE and env.kwargs == {}
    assert env.observation_space == local.observation_space
    assert env.action_space == local.action_space
    assert env.reset(seed=4) == local.reset(seed=4)
    junk = ["", "x" * 100_000, "ünïcødé 🙂 <guess>", "<guess>\ud800ab</guess>", b"<guess>cr\xff</guess>"]
    for seed, action in enumerate(junk):  # a fresh episode each: junk ends episodes
        assert env.reset(seed=seed) == local.reset(seed=seed)
        assert env.step(action) == local.step(action)
    with pytest.raises(TypeError):
        env.step(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="JSON"):
        env.reset(seed=1, options={"task": object()})
    env.reset(seed=4)
    local.reset(seed=4)
    for action in local.unwrapped.oracle_actions():
        assert env.step(action) == local.step(action)
    with pytest.raises(ResetNeeded):  # the same class as the local env raises
        env.step("<guess>crane</guess>")
    assert env.reset(seed=5) == local.reset(seed=5)  # the session is still usable
    env.close()
    env.close()


# -- backend="remote" ---------------------------------------------------------------------------


def play(vec: Any, steps: int) -> bytes:
    """Reset, then step with a deterministic mix of solving, guessing and junk; the record."""
    records: list[Any] = [vec.reset(seed=123)]
    solver = [gym.make(WORDLE) for _ in range(vec.num_envs)]
    for t in range(steps):
        actions = []
        for i, info in enumerate(records[-1][-1]):
            if "task_id" in info and info.get("turn", 1) == 0:
                solver[i].reset(seed=_seed_of(vec, i))
            kind = (i * 3 + t) % 5
            actions.append(
                solver[i].unwrapped.oracle_actions()[-1]
                if kind == 0
                else "<guess>crane</guess>" if kind < 3 else "junk"
            )
        if vec.autoreset == "disabled" and len(records[-1]) == 5:
            done = records[-1][2] | records[-1][3]
            if done.any():  # reset just the finished envs (they continue their seed schedule)
                records.append(vec.reset(options={"reset_mask": done}))
                continue
        batch = vec.step(actions)
        records.append(
            (batch.observations, batch.rewards, batch.terminated, batch.truncated, batch.infos)
        )
    return as_bytes(records)


def as_bytes(records: list[Any]) -> bytes:
    """Records as bytes: JSON, with numpy arrays as (dtype, raw bytes). Not pickle: pickle's
    bytes also encode which infos share one object (serial shares the transcript list)."""

    def array(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return [str(x.dtype), x.tobytes().hex()]
        raise TypeError(type(x))

    return json.dumps(records, default=array).encode()


def _seed_of(vec: Any, i: int) -> int | None:
    """The seed of env ``i``'s current episode, read from the serial or remote runner."""
    runner = vec._runners[i]
    return None if runner.base_seed is None else runner.base_seed + runner.episode * runner.stride


@pytest.mark.parametrize("connections", [None, 2])
@pytest.mark.parametrize("autoreset", ["same_step", "next_step", "disabled"])
def test_remote_vector_equals_serial_byte_for_byte(
    servers: dict[str, ServerProcess], autoreset: str, connections: int | None
) -> None:
    urls = [servers[WORDLE].url, servers["wordle2"].url]
    with make_vec(WORDLE, 6, backend="serial", group_size=2, autoreset=autoreset) as vec:
        expected = play(vec, 24)
    with make_vec(
        WORDLE, 6, backend="remote", group_size=2, autoreset=autoreset, urls=urls,
        connections=connections,
    ) as vec:
        assert [env.url for env in vec.envs] == urls * 3  # spread over both servers
        if connections:  # 6 envs over 2 connections per server, not 6 WebSockets
            carriers = {id(env.connection) for env in vec.envs}
            assert len(carriers) == 2 * len(urls)
        assert play(vec, 24) == expected
    records = json.loads(expected)
    ends = sum(bytes.fromhex(r[2][1]).count(1) for r in records[1:] if len(r) == 5)
    assert ends >= 6  # many episodes ended (and were reset) on the way


def test_remote_vector_refuses_kwargs_the_server_does_not_serve(
    servers: dict[str, ServerProcess],
) -> None:
    with pytest.raises(ConfigError, match="hard_mode"):
        make_vec(WORDLE, 2, backend="remote", urls=[servers[WORDLE].url], hard_mode=True)
    with pytest.raises(ConfigError, match="urls"):
        make_vec(WORDLE, 2, backend="remote")


def test_a_dead_server_raises_a_named_error_naming_its_url(
    servers: dict[str, ServerProcess],
) -> None:
    server = servers["dying"]
    env = RemoteEnv(server.url)
    env.reset(seed=0)
    vec = make_vec(WORDLE, 2, backend="remote", urls=[server.url])
    vec.reset(seed=0)
    os.kill(server.pid, signal.SIGKILL)
    server.proc.wait(30)
    with pytest.raises(ServerError, match=server.url.rpartition(":")[2]):
        env.step("<guess>crane</guess>")
    with pytest.raises(ServerError, match=server.url.rpartition(":")[2]):
        vec.step(["<guess>crane</guess>"] * 2)
    vec.close()
    env.close()


# -- limits and faults --------------------------------------------------------------------------


def test_token_is_required_on_every_route_but_health(servers: dict[str, ServerProcess]) -> None:
    url = servers["limits"].url
    assert http_status(url + "/health") == 200
    assert http_status(url + "/schema") == 401
    assert http_status(url + "/schema", token="wrong") == 401
    assert http_status(url + "/schema", token=TOKEN) == 200
    for token in (None, "wrong"):
        with pytest.raises(ConnectionError, match="401"):
            client(url, token).connect()
        with pytest.raises(ServerError, match="401"):
            RemoteEnv(url, token)
    with client(url, TOKEN) as env:
        assert env.reset(seed=1).observation["text"]
    with pytest.raises(Exception, match="403"):  # no entering another session by its id
        ws_connect(url.replace("http", "ws") + "/ws?session_id=x", additional_headers={
            "Authorization": f"Bearer {TOKEN}"
        })


def test_max_sessions_refuses_the_next_client_and_admits_one_when_a_session_ends(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["limits"].url
    first, second = RemoteEnv(url, TOKEN), RemoteEnv(url, TOKEN)
    with pytest.raises(ServerError, match="CAPACITY_REACHED|maximum|capacity"):
        RemoteEnv(url, TOKEN)
    first.close()

    wait_for(lambda: admits(url, 1, TOKEN), "a session slot freed by close()")
    second.close()


def admits(url: str, n: int, token: str | None = None) -> bool:
    """Whether the server at ``url`` accepts ``n`` more sessions right now (closed again)."""
    envs = []
    try:
        for _ in range(n):
            envs.append(RemoteEnv(url, token))
    except ServerError:
        return False
    finally:
        for env in envs:
            env.close()
    return True


def test_oversize_malformed_and_unknown_messages_get_error_replies_and_keep_the_session(
    servers: dict[str, ServerProcess],
) -> None:
    with raw(servers["limits"].url) as ws:
        assert ask(ws, json.dumps({"type": "reset", "data": {"seed": 3}}))["type"] == "observation"
        big = json.dumps({"type": "step", "data": {"text": "é" * LIMIT}})
        reply = ask(ws, big)
        assert reply["type"] == "error" and "limit" in reply["data"]["message"]
        assert ask(ws, "{not json")["data"]["code"] == "INVALID_JSON"
        assert ask(ws, json.dumps({"type": "teleport"}))["data"]["code"] == "UNKNOWN_TYPE"
        assert ask(ws, json.dumps({"type": "step", "data": {"txt": 1}}))["type"] == "error"
        step = ask(ws, json.dumps({"type": "step", "data": {"text": "<guess>crane</guess>"}}))
        assert step["type"] == "observation" and step["data"]["observation"]["info"]["turn"] == 1


def test_idle_sessions_are_closed_and_their_slot_freed(servers: dict[str, ServerProcess]) -> None:
    url = servers["idle"].url
    with raw(url, token=None) as ws:
        assert ask(ws, json.dumps({"type": "reset", "data": {}}))["type"] == "observation"
        time.sleep(IDLE + 1.0)  # stay idle past --idle-timeout
        with pytest.raises(Exception) as closed:
            ask(ws, json.dumps({"type": "state"}))
        assert getattr(closed.value, "rcvd", None) is not None and closed.value.rcvd.code == 1001
    wait_for(lambda: admits(url, 2), "both slots free again")


def test_a_client_that_drops_mid_episode_frees_its_env_and_sandbox(
    servers: dict[str, ServerProcess],
) -> None:
    server = servers[CODE]
    before = descendants(server.pid)
    with raw(server.url, token=None) as ws:
        assert ask(ws, json.dumps({"type": "reset", "data": {"seed": 2}}))["type"] == "observation"
        step = ask(ws, json.dumps({"type": "step", "data": {"text": "<run>print(6 * 7)</run>"}}))
        assert "42" in step["data"]["observation"]["text"]
        sandbox = descendants(server.pid) - before
        assert sandbox, "running code should have started the sandbox server"
        ws.socket.shutdown(socket.SHUT_RDWR)  # no close frame: the client just vanishes
    wait_for(lambda: not descendants(server.pid) & sandbox, "the sandbox processes exiting")


def test_sigterm_finishes_the_step_in_flight_closes_every_env_and_exits_0(
    servers: dict[str, ServerProcess],
) -> None:
    server = servers["sigterm"]
    with raw(server.url, token=None) as ws:
        assert ask(ws, json.dumps({"type": "reset", "data": {"seed": 1}}))["type"] == "observation"
        ask(ws, json.dumps({"type": "step", "data": {"text": "<run>print(1)</run>"}}))
        sandbox = descendants(server.pid)
        assert sandbox
        code = "<run>import time; time.sleep(1)</run>"
        ws.send(json.dumps({"type": "step", "data": {"text": code}}))
        threading.Event().wait(0.3)  # let the step start
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(120) == 0
    assert "Traceback" not in server.stderr
    wait_for(lambda: not any(os.path.exists(f"/proc/{p}") for p in sandbox), "sandbox exit")


def test_serving_off_loopback_needs_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TEXTGYMS_TOKEN", raising=False)
    assert main(["serve", WORDLE, "--host", "0.0.0.0"]) == 2
    assert "--token" in capsys.readouterr().err
    assert main(["serve", WORDLE, "--max-sessions", "0"]) == 2
    assert main(["serve", WORDLE, "--kwargs", "{hard_mode: yes}"]) == 2
    assert "--kwargs is not valid JSON" in capsys.readouterr().err
