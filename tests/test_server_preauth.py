"""``textgyms serve``'s pre-authentication limits, against real server processes on loopback.

A connection that has not shown the token is closed at ``--auth-deadline`` whatever it sent,
and such connections are capped per peer and in total, so a flood of idle or half-sent
connections (from one address or several) never keeps a client with the token out. The
floods here use loopback addresses only (127.0.0.0/8), are bounded in count, and every socket
is closed at the end.
"""

from __future__ import annotations

import http.client
import json
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("openenv")

import textgyms  # noqa: E402,F401  (registers the ids)
from textgyms.remote import RemoteEnv  # noqa: E402
from textgyms.server.gate import peer_key  # noqa: E402
from textgyms.server.process import ServerProcess  # noqa: E402

pytestmark = pytest.mark.usefixtures("deadline")

WORDLE = "textgyms/Wordle-v0"
TOKEN = "preauth-test-token"
FLOOD = 1100  # more than the usual 1,024 descriptors
FIVE_ADDRESSES = tuple(f"127.0.0.{i}" for i in range(2, 7))


def _serve(deadline: str, request_timeout: str, token: str | None) -> Iterator[ServerProcess]:
    """A Wordle server with this auth deadline and request timeout, stopped after the module."""
    args = ["--auth-deadline", deadline, "--request-timeout", request_timeout]
    server = ServerProcess(WORDLE, token=token, args=args)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def flooded() -> Iterator[ServerProcess]:
    """A server with the token and default caps; the deadline (and the request timeout, which
    also drops a silent connection) are long, so that the flood is certainly still held while
    the client with the token comes in."""
    yield from _serve("120", "120", TOKEN)


@pytest.fixture(scope="module")
def strict() -> Iterator[ServerProcess]:
    """A server with a 1 s deadline and a request timeout far past it: whatever closes a
    connection within a few seconds here is the deadline."""
    yield from _serve("1", "600", TOKEN)


@pytest.fixture(scope="module")
def tokenless() -> Iterator[ServerProcess]:
    """The same on loopback without a token: any whole request authenticates."""
    yield from _serve("1", "600", None)


def address(url: str) -> tuple[str, int]:
    host, port = url.rsplit("//", 1)[1].split(":")
    return host, int(port)


def descriptors_for(count: int) -> None:
    """Raise this process's soft descriptor limit to hold ``count`` more sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 256
    if soft >= wanted:
        return
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard descriptor limit {hard} cannot hold {count} test sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def open_idle(url: str, sources: tuple[str, ...], count: int) -> list[socket.socket]:
    """``count`` TCP connections that send nothing, from ``sources`` in turn."""
    socks: list[socket.socket] = []
    try:
        for i in range(count):
            socks.append(socket.create_connection(address(url), timeout=30,
                                                  source_address=(sources[i % len(sources)], 0)))
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks


def capacity(url: str, token: str | None = TOKEN) -> dict[str, Any]:
    conn = http.client.HTTPConnection(*address(url), timeout=30)
    try:
        conn.request("GET", "/capacity", headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        conn.close()


def closed_by_server(sock: socket.socket, seconds: float) -> bool:
    """Whether the server ends the connection within ``seconds`` (reading what it sends)."""
    sock.settimeout(seconds)
    end = time.monotonic() + seconds
    try:
        while sock.recv(65536):
            sock.settimeout(max(0.01, end - time.monotonic()))
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize("sources", [("127.0.0.1",), FIVE_ADDRESSES],
                         ids=["same-address", "five-addresses"])
def test_a_client_with_the_token_gets_in_while_1100_idle_connections_are_open(
    flooded: ServerProcess, sources: tuple[str, ...]
) -> None:
    descriptors_for(FLOOD)
    idle = open_idle(flooded.url, sources, FLOOD)
    try:
        # The functional deadline the issue asks for: session and reset, each within 2 s.
        env = RemoteEnv(flooded.url, TOKEN, timeout=2.0, connect_timeout=2.0)
        try:
            assert env.reset(seed=1)[0] == gym.make(WORDLE).reset(seed=1)[0]
        finally:
            env.close()
        report = capacity(flooded.url)["connections"]
        # The flood is really held (not closed wholesale), up to the caps and no further; the
        # client's and this report's connections each took a slot until they showed the token.
        held = min(FLOOD, report["max_unauth_per_peer"] * len(sources), report["max_unauth"])
        assert held - 2 <= report["unauthenticated"] <= held
    finally:
        for sock in idle:
            sock.close()


def test_silent_and_half_sent_connections_are_closed_at_the_auth_deadline(
    strict: ServerProcess,
) -> None:
    host, port = address(strict.url)
    sends = {
        "silent": b"",
        "half a request line": b"GET /ws HT",
        "half the headers": b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: webso",
        "a request without the token": b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        "a request with a wrong token": b"GET /capacity HTTP/1.1\r\nHost: x\r\n"
                                        b"Authorization: Bearer wrong\r\n\r\n",
    }
    socks = {what: socket.create_connection((host, port), timeout=30) for what in sends}
    try:
        for what, data in sends.items():
            socks[what].sendall(data)
        for what, sock in socks.items():  # the request timeout (600 s) cannot be what acts
            assert closed_by_server(sock, 15.0), f"{what}: still open past the deadline"
    finally:
        for sock in socks.values():
            sock.close()


def test_the_deadline_spares_connections_that_showed_the_token(strict: ServerProcess) -> None:
    env = RemoteEnv(strict.url, TOKEN)
    conn = http.client.HTTPConnection(*address(strict.url), timeout=30)
    try:
        env.reset(seed=1)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        conn.request("GET", "/health", headers=auth)
        assert conn.getresponse().read()
        time.sleep(2.5)  # past the 1 s deadline, within uvicorn's 5 s keep-alive
        conn.request("GET", "/health", headers=auth)  # the same connection, still open
        assert conn.getresponse().status == 200
        observation, reward, terminated, truncated, info = env.step("<guess>crane</guess>")
        assert info["turn"] == 1
    finally:
        conn.close()
        env.close()


def test_without_a_token_the_deadline_closes_only_connections_without_a_whole_request(
    tokenless: ServerProcess,
) -> None:
    host, port = address(tokenless.url)
    silent = socket.create_connection((host, port), timeout=30)
    half = socket.create_connection((host, port), timeout=30)
    half.sendall(b"GET /health HT")
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", "/health")  # no token needed: this request authenticates
        assert conn.getresponse().read()
        assert closed_by_server(silent, 15.0) and closed_by_server(half, 15.0)
        conn.request("GET", "/capacity")  # the same connection, past the 1 s deadline
        assert conn.getresponse().status == 200
    finally:
        for sock in (silent, half):
            sock.close()
        conn.close()


def test_capacity_reports_the_descriptor_limit_raised_and_the_connection_limits(
    strict: ServerProcess,
) -> None:
    report = capacity(strict.url)["connections"]
    soft, hard = report["descriptors"]["soft"], report["descriptors"]["hard"]
    assert soft == hard or hard == resource.RLIM_INFINITY  # raised at start
    assert report["auth_deadline"] == 1.0
    assert report["max_unauth"] + report["max_connections"] < soft
    assert 1 <= report["max_unauth_per_peer"] <= report["max_unauth"]


def test_serve_help_lists_the_pre_authentication_limits() -> None:
    out = subprocess.run([sys.executable, "-m", "textgyms.cli", "serve", "--help"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    for flag in ("--auth-deadline", "--max-unauth", "--max-unauth-per-peer", "--max-connections"):
        assert flag in out


@pytest.mark.parametrize(("peer", "key"), [
    (("203.0.113.9", 5000), "203.0.113.9"),
    (("2001:db8:1:2:aaaa::1", 5000, 0, 0), "2001:db8:1:2::/64"),
    (("2001:db8:1:2:bbbb::7", 6000, 0, 0), "2001:db8:1:2::/64"),  # same /64, same peer
    (("::ffff:198.51.100.4", 5000, 0, 0), "198.51.100.4"),
    (None, ""),
])
def test_peers_are_counted_by_ipv4_address_and_ipv6_64(peer: Any, key: str) -> None:
    assert peer_key(peer) == key
