"""``textgyms serve --workers N``: N server processes on one port, each serving whole sessions.

The parent reserves the port, loads the app once (imports, the env check, Search's world and
index are then shared copy-on-write), and forks N workers, each listening on the port with
``SO_REUSEPORT``: the kernel spreads new connections over them by a hash of the client's
address and port. A WebSocket session lives on one connection, which one worker accepted, so
every message of a session is served by that worker alone. Each worker has its own
``--max-sessions`` slots and writes its counts to a small shared table, so ``GET /capacity``
on any worker reports every worker. SIGTERM to the parent is passed to the workers, each
drains as one server does; the parent exits 0 once they all have. A worker that dies is
started again.
"""

from __future__ import annotations

import mmap
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from typing import Any

_ROW = struct.Struct("qqq")  # pid, sessions in use, slot limit


class Table:
    """Per-worker session counts in memory shared by every worker (an anonymous mmap)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._map = mmap.mmap(-1, _ROW.size * workers)

    def write(self, index: int, pid: int, used: int, limit: int) -> None:
        """Worker ``index``'s row: its pid, sessions in use and slot limit."""
        _ROW.pack_into(self._map, index * _ROW.size, pid, used, limit)

    def report(self) -> list[dict[str, Any]]:
        """``{pid, in_use, free}`` of each worker that has started."""
        rows = []
        for i in range(self.workers):
            pid, used, limit = _ROW.unpack_from(self._map, i * _ROW.size)
            if pid:
                rows.append({"pid": pid, "in_use": used, "free": max(0, limit - used)})
        return rows


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with ``SO_REUSEPORT`` (``port`` 0: a free one). The
    parent holds one that never listens, to keep the port; each worker listens on its own."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host.strip("[]"), port))
    return sock


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A worker's own listening socket on the shared port."""
    sock = bind(host, port)
    sock.listen(backlog)
    return sock


def supervise(
    count: int,
    run_worker: Callable[[int, int], None],
    announce: Callable[[], None],
) -> int:
    """Fork ``count`` workers (``run_worker(index, ready_fd)`` in each), wait until each says
    it listens, ``announce()``, then keep them running until SIGTERM or SIGINT; returns the
    exit status."""
    stopping = {"now": False}
    children: dict[int, int] = {}  # pid -> index

    def spawn(index: int) -> int:
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(ready_r)
            _die_with_parent()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = 1
            try:
                run_worker(index, ready_w)
                code = 0
            finally:
                os._exit(code)  # never return into the parent's code
        os.close(ready_w)
        children[pid] = index
        return ready_r

    def stop(signum: int, frame: Any) -> None:
        stopping["now"] = True
        for pid in list(children):
            _signal(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for fd in [spawn(i) for i in range(count)]:
        os.read(fd, 1)  # the worker listens (or died: b"")
        os.close(fd)
    announce()
    return _wait(children, stopping, spawn)


MAX_RESTARTS = 10  # a worker that keeps dying is a fault to report, not to retry forever


def _wait(children: dict[int, int], stopping: dict[str, bool], spawn: Callable[[int], int]) -> int:
    status, restarts = 0, 0
    while children:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        index = children.pop(pid, None)
        if index is None:
            continue
        if not stopping["now"] and restarts >= MAX_RESTARTS:
            print(f"textgyms serve: workers died {restarts} times; stopping",
                  file=sys.stderr, flush=True)  # fmt: skip
            stopping["now"], status = True, 1
            for other in list(children):
                _signal(other, signal.SIGTERM)
        elif not stopping["now"]:  # died on its own: serve its share again
            print(f"textgyms serve: worker {index} (pid {pid}) exited; restarting it",
                  file=sys.stderr, flush=True)  # fmt: skip
            restarts += 1
            time.sleep(0.5)
            os.close(spawn(index))
    return status


def _die_with_parent() -> None:
    """Ask Linux for a SIGTERM when the supervisor dies, however it dies (even SIGKILL), so
    no worker outlives it holding the port; elsewhere this does nothing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
