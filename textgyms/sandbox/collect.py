"""Collecting a sandbox child's output: its pipes read under caps and a deadline, then the
reply the server sends (:func:`supervise`).

A child writes stdout, stderr, result lines and one setup byte on four pipes. Everything it
writes is agent-controlled, so every stream is capped as it arrives (stdout and stderr keep a
head and a tail), the results' decoding cost is bounded before anything is decoded, and a
child that overruns its deadline or a cap is killed. Nothing here knows the expected outputs.
"""

from __future__ import annotations

import json
import os
import select
import socket
import time
from typing import Any, Protocol

_STREAM_CAP = 1 << 16  # head + tail bytes kept of stdout and of stderr
_HARD_CAP = 4 << 20  # more output than this (any stream) kills the child
_RESULT_CAP = 16 << 20  # bytes of results per run
_DECODE_BUDGET = 64 << 20  # bytes of objects decoding them may cost (see _decode_cost)
_NON_ASCII = bytes(range(128, 256))
_SETUP_BUDGET = 60.0  # seconds for a child to get confined, however loaded the machine


class Stream:
    """A pipe's output: the first and last ``cap // 2`` bytes, and the total size."""

    def __init__(self, cap: int, keep_all: bool = False) -> None:
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        self.half, self.keep_all = cap // 2, keep_all

    def add(self, data: bytes) -> None:
        """Count ``data`` and keep what fits: the head until it is full, then the newest bytes."""
        self.total += len(data)
        room = self.half - len(self.head)
        if self.keep_all or room > 0:
            cut = len(data) if self.keep_all else room
            self.head += data[:cut]
            data = data[cut:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        """The kept bytes, with a marker where the middle was cut."""
        head = self.head.decode("utf-8", "replace")
        if not self.tail:
            return head
        cut = self.total - len(self.head) - len(self.tail)
        mid = f"\n[... {cut:,} bytes cut ...]\n" if cut > 0 else ""
        return head + mid + self.tail.decode("utf-8", "replace")


class Watcher(Protocol):
    """What :func:`supervise` needs of the zygote handle: its socket, the exit statuses it
    has read, and ways to read one more, wait for one and kill a child."""

    sock: socket.socket
    exits: dict[int, int]

    def poll_exit(self) -> None: ...

    def wait_exit(self, pid: int, timeout: float = 30.0) -> int: ...

    def kill(self, pid: int) -> None: ...


def supervise(pid: int, fds: list[int], budget: float, zygote: Watcher) -> dict[str, Any]:
    """Collect the child's pipes until it exits, the deadline passes or output overflows.

    The agent's ``budget`` starts when the child reports that it is confined: on a loaded
    machine, a slow start must not turn into a timeout charged to the agent (or, before the
    child is confined, into a sandbox fault)."""
    deadline = time.monotonic() + _SETUP_BUDGET
    streams = [Stream(_STREAM_CAP), Stream(_STREAM_CAP), Stream(_RESULT_CAP, True)]
    streams.append(Stream(8192))
    caps = [_HARD_CAP, _HARD_CAP, _RESULT_CAP, 8192]
    poller = select.poll()
    for fd in [*fds, zygote.sock.fileno()]:
        poller.register(fd, select.POLLIN)
    live, reason, cost = set(fds), None, 0
    while (live or pid not in zygote.exits) and reason is None:
        left = deadline - time.monotonic()
        if left <= 0:
            reason = "timeout"
            break
        for fd, _ in poller.poll(left * 1000):
            if fd not in live:
                zygote.poll_exit()
                continue
            data = os.read(fd, 1 << 16)
            k = fds.index(fd)
            if not data:
                poller.unregister(fd)
                live.discard(fd)
                continue
            if k == 3 and not streams[3].total:  # "K": confined, the agent's code starts
                deadline = time.monotonic() + budget
            streams[k].add(data)
            cost += _decode_cost(data) if k == 2 else 0
            if streams[k].total > caps[k] or cost > _DECODE_BUDGET:
                reason = "output_limit"
    if reason is not None:
        zygote.kill(pid)
    wstatus = zygote.wait_exit(pid)
    for fd in fds:
        os.close(fd)
    return _reply(streams, wstatus, reason)


def _decode_cost(data: bytes) -> int:
    """An upper bound on the bytes of Python objects that decoding ``data`` (JSON lines) costs,
    here and again in the client: every ``[``, ``{``, ``,`` or ``:`` may start an object of up
    to 64 bytes (an empty list: 56 bytes and a pointer, from 3 bytes of JSON, so an array of
    empty lists is the worst case), and a non-ASCII byte may grow sixfold when re-encoded as a
    ``\\uXXXX`` escape. Counted in C as the bytes arrive, so a hostile stream is cut off long
    before it is decoded (measured: ``json.loads`` peaks below this bound for every shape)."""
    marks = data.count(b"[") + data.count(b"{") + data.count(b",") + data.count(b":")
    return len(data) + 64 * marks + 6 * (len(data) - len(data.translate(None, _NON_ASCII)))


def _reply(streams: list[Stream], wstatus: int, reason: str | None) -> dict[str, Any]:
    out, err, res, setup = streams
    setup_text = setup.text()
    if not setup_text.startswith("K"):
        return {"status": "sandbox_error", "message": setup_text[1:] or "child died in setup"}
    results, events = _parse_results(res.head.decode("utf-8", "replace"))
    code = os.waitstatus_to_exitcode(wstatus)
    if reason is None:  # a signal first: the child was killed whatever it reported before
        if code < 0:
            reason = "killed"
        elif "timeout" in events:
            reason = "timeout"
        elif "memory" in events:
            reason = "memory_limit"
        else:
            reason = "ok" if code == 0 else "error"
    return {
        "status": reason,
        "exit_code": code,
        "stdout": out.text(),
        "stderr": err.text(),
        "stdout_bytes": out.total,
        "stderr_bytes": err.total,
        "results": results,
        "events": sorted(events),
    }


def _parse_results(text: str) -> tuple[dict[str, Any], set[str]]:
    """Result lines by call index (the first valid line for an index wins) and events."""
    results: dict[str, Any] = {}
    events: set[str] = set()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # the agent can write anything on this pipe
            continue
        if not isinstance(record, dict) or not _shallow(record, 250):
            continue
        if isinstance(record.get("event"), str):
            events.add(record["event"][:20])
        elif isinstance(record.get("i"), int) and str(record["i"]) not in results:
            results[str(record["i"])] = record
    return results, events


def _shallow(value: Any, limit: int) -> bool:
    """True if ``value`` nests at most ``limit`` levels (so the client can decode the reply
    without hitting the recursion limit). Iterative: the value may be very deep."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True
