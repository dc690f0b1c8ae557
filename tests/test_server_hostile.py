"""``textgyms serve`` against hostile and careless clients, over real sockets on 127.0.0.1.

Each fault class of the server's hardening has a test here: sessions that escape their owner
or the session limit, malformed frames, oversized and chunked bodies, ping floods, silent and
half-sent connections, clients that stop reading, HTTP calls without a session, SIGTERM with
work in flight, and one Code session's run holding up another's. Raw sockets, ``websockets``
and ``http.client`` send what the stock client never would; the stock OpenEnv client checks
that the server still serves honest clients afterwards.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("openenv")

from support import started_servers  # noqa: E402

import textgyms  # noqa: E402,F401  (registers the ids)
from textgyms.errors import RunCancelled  # noqa: E402
from textgyms.remote import RemoteEnv  # noqa: E402
from textgyms.sandbox import SandboxPool, cancel_scope  # noqa: E402
from textgyms.server import load_openenv  # noqa: E402
from textgyms.server.process import ServerProcess  # noqa: E402

load_openenv()
from openenv.core.generic_client import GenericEnvClient  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

pytestmark = pytest.mark.usefixtures("deadline")

WORDLE, CODE = "textgyms/Wordle-v0", "textgyms/Code-v0"
TOKEN = "hostile-test-token"
LIMIT = 4096
IDLE = 2.0
SERVERS: dict[str, tuple[str, dict[str, Any]]] = {
    "two": (WORDLE, {"token": TOKEN, "args": ["--max-sessions", "2", "--max-message-bytes",
                                              str(LIMIT)]}),
    "idle": (WORDLE, {"args": ["--max-sessions", "2", "--idle-timeout", str(IDLE)]}),
    "flood": (WORDLE, {}),
    "conns": (WORDLE, {"token": TOKEN, "args": ["--request-timeout", "2",
                                                "--max-connections", "8"]}),
    "code": (CODE, {"kwargs": {"run_timeout": 30.0}, "args": ["--sandbox-servers", "2"]}),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, ServerProcess]]:
    """Every server this module uses, started together and stopped at the end."""
    yield from started_servers(SERVERS)


def ws(url: str, path: str = "/ws", token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return ws_connect(url.replace("http", "ws") + path, additional_headers=headers,
                      max_size=None)


def ask(conn: Any, message: Any) -> dict[str, Any]:
    conn.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return json.loads(conn.recv(timeout=60))


def step(conn: Any, text: str = "<guess>crane</guess>") -> dict[str, Any]:
    return ask(conn, {"type": "step", "data": {"text": text}})


def admits(url: str, n: int, token: str | None = None) -> bool:
    envs = []
    try:
        for _ in range(n):
            envs.append(RemoteEnv(url, token))
    except Exception:  # noqa: BLE001 - refused: not free yet
        return False
    finally:
        for env in envs:
            env.close()
    return True


def wait_for(predicate: Any, what: str, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > end:
            pytest.fail(f"{what} did not happen within {seconds:g} s")
        time.sleep(0.2)


def call(url: str, method: str, path: str, body: Any = None, token: str | None = None,
         conn: http.client.HTTPConnection | None = None) -> tuple[int, Any]:
    host, port = url.rsplit("//", 1)[1].split(":")
    conn = conn or http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body))
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    return response.status, json.loads(raw) if raw else None


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status").read().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def raw_socket(url: str, rcvbuf: int | None = None) -> socket.socket:
    host, port = url.rsplit("//", 1)[1].split(":")
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect((host, int(port)))
    return sock


def raw_ws(url: str, rcvbuf: int | None = None, token: str | None = None) -> socket.socket:
    """A WebSocket handshake by hand: the socket is then the test's to misuse."""
    sock = raw_socket(url, rcvbuf)
    key = base64.b64encode(os.urandom(16)).decode()
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{auth}\r\n".encode()
    )
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 101"), reply[:200]
    return sock


def frame(opcode: int, payload: bytes) -> bytes:
    """One masked client frame (RFC 6455)."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def closed_by_server(sock: socket.socket, seconds: float = 30.0) -> bool:
    """Whether the server ends the connection within ``seconds`` (reading what it sends)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


# -- malformed frames ----------------------------------------------------------------------------

MALFORMED: list[tuple[str, Any, str]] = [
    ("array", "[]", "INVALID_JSON"),
    ("string", '"reset"', "INVALID_JSON"),
    ("null", "null", "INVALID_JSON"),
    ("number", "7", "INVALID_JSON"),
    ("deep", "[" * 200_000 + "]" * 200_000, ""),  # over the size limit or too deep: refused
    ("deep_small", '{"type": "reset", "data": ' + "[" * 2000 + "]" * 2000 + "}", ""),
    ("digits_5000", '{"type": "reset", "data": {"seed": ' + "9" * 5000 + "}}", ""),
    ("digits_3000", '{"type": "reset", "data": {"seed": ' + "9" * 3000 + "}}", ""),
    ("binary", b"\x00\x01\x02 not text", "VALIDATION_ERROR"),
    ("binary_json", json.dumps({"type": "state"}).encode(), "VALIDATION_ERROR"),
    ("data_list", '{"type": "step", "data": []}', "VALIDATION_ERROR"),
    ("options_list", '{"type": "reset", "data": {"options": [1, 2]}}', "EXECUTION_ERROR"),
    ("seed_text", '{"type": "reset", "data": {"seed": "7"}}', "EXECUTION_ERROR"),
    ("type_object", '{"type": {"a": 1}}', "UNKNOWN_TYPE"),
    ("no_type", "{}", "UNKNOWN_TYPE"),
]


@pytest.mark.parametrize(("name", "payload", "code"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_frames_get_an_error_reply_and_the_session_stays_usable(
    servers: dict[str, ServerProcess], name: str, payload: Any, code: str
) -> None:
    with ws(servers["flood"].url) as conn:
        first = ask(conn, {"type": "reset", "data": {"seed": 3}})
        assert first["type"] == "observation"
        reply = ask(conn, payload)
        assert reply["type"] == "error", reply
        if code:
            assert reply["data"]["code"] == code, reply
        if name == "options_list":
            assert "options must be a JSON object" in reply["data"]["message"]
        after = step(conn)  # the same episode goes on
        assert after["type"] == "observation"
        assert after["data"]["observation"]["info"]["turn"] == 1


def test_oversize_frames_are_refused_and_the_session_kept(servers: dict[str, ServerProcess]) -> None:
    with ws(servers["two"].url, token=TOKEN) as conn:
        assert ask(conn, {"type": "reset", "data": {"seed": 1}})["type"] == "observation"
        for payload in ("x" * (LIMIT + 1), b"\x00" * (LIMIT * 3)):
            reply = ask(conn, payload)
            assert reply["type"] == "error" and "limit" in reply["data"]["message"]
        assert step(conn)["data"]["observation"]["info"]["turn"] == 1


# -- sessions: slots, owners, ids ---------------------------------------------------------------


def test_http_cannot_create_sessions_and_ids_of_websocket_sessions_are_not_addressable(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["two"].url
    create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    for _ in range(4):  # before the fix each call kept an env open, owned by nobody
        status, reply = call(url, "POST", "/mcp", create, TOKEN)
        assert status == 200 and "error" in reply and "connection" in reply["error"]["message"]
    with ws(url, token=TOKEN) as conn:
        assert ask(conn, {"type": "reset", "data": {"seed": 2}})["type"] == "observation"
        mine = ask(conn, {"type": "mcp", "data": create})["data"]["result"]["session_id"]
        close = {"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close",
                 "params": {"session_id": mine}}
        status, reply = call(url, "POST", "/mcp", close, TOKEN)  # not its owner
        assert status == 200 and "error" in reply
        assert step(conn)["type"] == "observation"  # untouched
        other = dict(close, params={"session_id": "0" * 32})
        assert "error" in ask(conn, {"type": "mcp", "data": other})["data"]
        # Closing its own id ends the session that uses it: reply, then the connection closes.
        assert ask(conn, {"type": "mcp", "data": close})["data"]["result"]["closed"] is True
        with pytest.raises(Exception):  # noqa: B017 - websockets' ConnectionClosed
            conn.recv(timeout=30)
    wait_for(lambda: admits(url, 2, TOKEN), "both slots free after closing by id")


def test_mcp_over_websocket_is_a_session_owned_by_its_connection(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["two"].url
    create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    with ws(url, "/mcp", TOKEN) as second:
        with ws(url, "/mcp", TOKEN) as first:
            ids = [ask(c, create)["result"]["session_id"] for c in (first, second)]
            assert ids[0] != ids[1]
            assert not admits(url, 1, TOKEN)  # both slots are taken by the two /mcp sessions
            assert ask(first, "[1,")["error"]["code"] == -32700  # malformed: answered, open
            assert ask(first, create)["result"]["session_id"] == ids[0]
        wait_for(lambda: admits(url, 1, TOKEN), "the slot of the /mcp session whose owner left")


def test_one_off_http_envs_hold_a_slot_and_http_step_says_why_it_cannot(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["two"].url
    local = gym.make(WORDLE)
    obs, info = local.reset(seed=9)
    status, reply = call(url, "POST", "/reset", {"seed": 9}, TOKEN)
    assert status == 200 and reply["observation"]["text"] == obs
    for body, needle in (({"options": [1]}, "JSON object"), ({"seed": "x"}, "seed"),
                         ([1, 2], "JSON object"), ({"options": {"nope": 1}}, "nope")):
        status, reply = call(url, "POST", "/reset", body, TOKEN)
        assert 400 <= status < 500 and needle in reply["detail"], (status, reply)
    host, port = url.rsplit("//", 1)[1].split(":")
    keep = http.client.HTTPConnection(host, int(port), timeout=60)
    status, reply = call(url, "POST", "/step", {"action": {"text": "x"}}, TOKEN, keep)
    assert status == 409 and "/ws" in reply["detail"]
    assert call(url, "GET", "/schema", None, TOKEN, keep)[0] == 200  # same connection, kept
    a, b = RemoteEnv(url, TOKEN), RemoteEnv(url, TOKEN)
    status, reply = call(url, "POST", "/reset", {"seed": 9}, TOKEN)
    assert status == 503 and "--max-sessions" in reply["detail"]
    a.close()
    b.close()


def test_capacity_report_says_sessions_in_use_and_free(servers: dict[str, ServerProcess]) -> None:
    url = servers["two"].url
    wait_for(lambda: call(url, "GET", "/capacity", None, TOKEN)[1]["in_use"] == 0, "no sessions")
    env = RemoteEnv(url, TOKEN)
    status, report = call(url, "GET", "/capacity", None, TOKEN)
    assert status == 200 and report["max_sessions"] == 2
    assert report["in_use"] == 1 and report["free"] == 1
    assert report["workers"] == [{"pid": servers["two"].pid, "in_use": 1, "free": 1}]
    env.close()
    assert call(url, "GET", "/capacity", None, None)[0] == 401  # behind the token too


# -- connections and bodies ---------------------------------------------------------------------


def test_chunked_bodies_over_the_limit_are_refused(servers: dict[str, ServerProcess]) -> None:
    server = servers["two"]
    before = rss_kib(server.pid)
    sock = raw_socket(server.url)
    sock.sendall(
        b"POST /reset HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        + f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\r\n".encode()
    )
    chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
    sent = 0
    sock.settimeout(10)
    try:
        for _ in range(1024):  # up to 64 MiB, far over the 4 KiB limit
            sock.sendall(chunk)
            sent += 1
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass
    sock.settimeout(30)
    try:
        head = sock.recv(4096)
    except ConnectionResetError:
        head = b""
    sock.close()
    assert head.startswith(b"HTTP/1.1 413"), head[:100]
    assert rss_kib(server.pid) - before < 32 * 1024  # the body was never held whole


def test_a_ping_flood_from_a_client_that_never_reads_costs_bounded_memory(
    servers: dict[str, ServerProcess],
) -> None:
    server = servers["flood"]
    before = rss_kib(server.pid)
    sock = raw_ws(server.url, rcvbuf=4096)
    ping = frame(0x9, b"p" * 125) * 512  # 512 pings a write
    sock.settimeout(5)
    sent = 0
    try:
        for _ in range(1600):  # up to ~100 MiB of pings
            sock.sendall(ping)
            sent += len(ping)
    except (TimeoutError, BrokenPipeError, ConnectionResetError):
        pass  # the server stopped reading a client that does not read: what should happen
    grown = rss_kib(server.pid) - before
    sock.close()
    assert grown < 24 * 1024, f"server grew {grown} KiB for {sent} bytes of pings"
    with GenericEnvClient(base_url=server.url).sync() as env:  # still serving
        assert env.reset(seed=1).observation["text"]


def test_silent_and_half_sent_connections_are_dropped_and_capped(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["conns"].url
    silent = [raw_socket(url) for _ in range(12)]  # none shows the token: the deadline acts
    half = raw_socket(url)
    half.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"se")
    slow_head = raw_socket(url)
    slow_head.sendall(b"GET /schema HTTP/1.1\r\nHost: x\r\n")
    for sock in [*silent, half, slow_head]:
        assert closed_by_server(sock), "a connection that never completed a request stayed open"
        sock.close()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with GenericEnvClient(base_url=url, headers=auth).sync() as env:
        assert env.reset(seed=1).observation["text"]
        time.sleep(3.0)  # past --request-timeout: a session's connection is not a request
        assert env.step({"text": "<guess>crane</guess>"}).observation["info"]["turn"] == 1


def test_a_client_that_stops_reading_loses_its_session_at_the_idle_deadline(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["idle"].url
    wait_for(lambda: admits(url, 2), "both slots free")
    sock = raw_ws(url, rcvbuf=4096)
    request = frame(0x1, json.dumps({"type": "state"}).encode())
    sock.settimeout(5)
    try:
        for _ in range(20_000):  # replies pile up: the client never reads one
            sock.sendall(request)
    except (TimeoutError, BrokenPipeError, ConnectionResetError):
        pass
    wait_for(lambda: admits(url, 2), "the slot of a client that stopped reading")
    sock.close()


# -- SIGTERM with work in flight -----------------------------------------------------------------


def test_sigterm_delivers_replies_of_steps_in_flight_and_cancels_work_past_the_grace() -> None:
    args = ["--grace", "4", "--sandbox-servers", "2"]
    server = ServerProcess(CODE, {"run_timeout": 60.0}, args=args)
    with ws(server.url) as quick, ws(server.url) as stuck:
        _sigterm_while_busy(server, quick, stuck)
    assert server.proc.wait(60) == 0
    server.stop()
    assert "1 step(s) still running" in server.stderr and "cancelled" in server.stderr
    assert "Traceback" not in server.stderr


def _sigterm_while_busy(server: ServerProcess, quick: Any, stuck: Any) -> None:
    for conn in (quick, stuck):
        assert ask(conn, {"type": "reset", "data": {"seed": 1}})["type"] == "observation"
    # Overlapping runs start both sandbox servers now, so that on a loaded machine the quick
    # run below is not a cold server start plus 1.5 s racing the 4 s grace.
    for conn in (quick, stuck):
        conn.send(json.dumps({"type": "step", "data": {"text": "<run>import time; time.sleep(1)</run>"}}))
    for conn in (quick, stuck):
        assert json.loads(conn.recv(timeout=60))["type"] == "observation"
    stuck.send(json.dumps({"type": "step", "data": {"text": "<run>import time; time.sleep(50)</run>"}}))
    quick.send(json.dumps({"type": "step", "data": {"text": "<run>import time; time.sleep(1.5); print(42)</run>"}}))
    time.sleep(0.5)  # both runs started
    server.proc.send_signal(signal.SIGTERM)
    reply = json.loads(quick.recv(timeout=60))
    assert reply["type"] == "observation" and "42" in reply["data"]["observation"]["text"]
    for conn in (quick, stuck):
        with pytest.raises(Exception):  # noqa: B017 - the connection is closed after the reply
            conn.recv(timeout=60)


# -- isolation of work -------------------------------------------------------------------------


def test_one_sessions_sleeping_run_never_holds_another_sessions_quick_run(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["code"].url
    with ws(url) as sleeper, ws(url) as quick:
        for conn in (sleeper, quick):
            assert ask(conn, {"type": "reset", "data": {"seed": 4}})["type"] == "observation"
        sleeper.send(json.dumps({"type": "step", "data": {"text": "<run>import time; time.sleep(12)</run>"}}))
        time.sleep(1.0)  # the sleeping run is under way
        reply = step(quick, "<run>print(6 * 7)</run>")
        assert "42" in reply["data"]["observation"]["text"]
        with pytest.raises(TimeoutError):  # the sleeper's reply has not come yet: it was first
            sleeper.recv(timeout=0)
        assert json.loads(sleeper.recv(timeout=60))["type"] == "observation"


def test_queued_runs_of_an_ended_session_are_cancelled_not_run() -> None:
    pool = SandboxPool(1)
    order: list[str] = []
    holder_started = threading.Event()

    def holder() -> None:
        holder_started.set()
        pool.run("import time; time.sleep(3)", timeout=20)
        order.append("holder done")

    gone = threading.Event()
    result: dict[str, Any] = {}

    def queued() -> None:
        with cancel_scope(gone):
            try:
                pool.run("print('should not run')", timeout=20)
                result["ran"] = True
            except RunCancelled as exc:
                result["cancelled"] = str(exc)
                order.append("queued cancelled")

    try:
        first = threading.Thread(target=holder)
        first.start()
        holder_started.wait(10)
        wait_for(lambda: pool.pid is not None, "the first server starting")
        second = threading.Thread(target=queued)
        second.start()
        time.sleep(0.5)  # it is queued behind the holder (pool of one)
        gone.set()  # its session ended
        second.join(30)
        first.join(60)
    finally:
        pool.close()
    assert "ran" not in result and "session ended" in result["cancelled"]
    assert order == ["queued cancelled", "holder done"]


# -- /mux: many sessions over one connection --------------------------------------------------


def test_mux_sessions_answer_malformed_frames_and_all_end_with_their_connection(
    servers: dict[str, ServerProcess],
) -> None:
    url = servers["two"].url
    wait_for(lambda: admits(url, 2, TOKEN), "both slots free")
    with ws(url, "/mux", TOKEN) as conn:
        for env in (0, 1):
            opened = ask(conn, {"env": env, "type": "open"})
            assert opened["env"] == env and opened["type"] == "state"
        refused = ask(conn, {"env": 2, "type": "open"})  # a third session: over --max-sessions
        assert refused["data"]["code"] == "CAPACITY_REACHED"
        for junk in ("[]", "7", '{"type": "step"}', b"\x00", '{"env": true, "type": "open"}'):
            reply = ask(conn, junk)
            assert reply["type"] == "error" and reply["env"] is None
        assert ask(conn, {"env": 5, "type": "state"})["data"]["code"] == "VALIDATION_ERROR"
        reset = ask(conn, {"env": 1, "type": "reset", "data": {"seed": 7}})
        assert reset["env"] == 1 and reset["type"] == "observation"
        local = gym.make(WORDLE)
        assert reset["data"]["observation"]["text"] == local.reset(seed=7)[0]
        assert not admits(url, 1, TOKEN)
    wait_for(lambda: admits(url, 2, TOKEN), "both slots free once the /mux connection closed")
