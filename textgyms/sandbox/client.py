"""The client side of the sandbox: one fork server per process, started lazily.

``Sandbox`` starts ``python -m textgyms.sandbox.server`` with ``subprocess`` (not
``multiprocessing``: vector-env workers are daemonic and may not have children of their own),
with a scrubbed environment, and talks to it over pipes. A server that dies is restarted once
per request; a second failure, a protocol fault or no usable confinement raises
:class:`~textgyms.errors.SandboxError`. Agent outcomes (errors, timeouts, output overflow) are
data in the returned :class:`Execution`, never exceptions.

:func:`shared` gives the process's :class:`SandboxPool`, reference-counted by the environments
using it and closed when the last one closes (and at interpreter exit). The pool starts a fork
server per run running at the same time, up to its size (one, unless :func:`set_pool_size`
says more: ``textgyms serve`` sizes it to the cores), so runs from different threads (the
sessions of a server) never queue behind each other below that size; above it a run waits for
the first server to come free, in arrival order. A thread inside :func:`cancel_scope` whose
event is set (its session ended) gives up a queued run with :class:`RunCancelled`.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import select
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textgyms.errors import RunCancelled, SandboxError
from textgyms.sandbox import protocol
from textgyms.sandbox.bwrap import MODE_ENV
from textgyms.sandbox.confine import UNSAFE_ENV
from textgyms.sandbox.workdir import DISK_ENV

__all__ = [
    "Sandbox",
    "SandboxPool",
    "Execution",
    "CallResult",
    "shared",
    "release",
    "cancel_scope",
    "set_pool_size",
]

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class CallResult:
    """One call of the entry point: its decoded return value, or the error it raised."""

    ok: bool
    value: Any = None
    error: str | None = None


@dataclass(frozen=True)
class Execution:
    """What one sandboxed execution did.

    ``status``: ``"ok"`` (exit 0), ``"error"`` (an exception or a nonzero exit), ``"timeout"``,
    ``"killed"`` (a signal, e.g. the CPU limit), ``"output_limit"`` (too much output, or
    results too large or too costly to decode), ``"disk_limit"`` (the run filled its
    size-bounded work dir) or ``"memory_limit"`` (agent code hit ``memory_mb``: a
    ``MemoryError``, in the module or in any call). ``calls`` has one entry
    per requested input, ``None`` for calls that never reported (the child died first)."""

    status: str
    exit_code: int
    stdout: str
    stderr: str
    calls: list[CallResult | None] = field(default_factory=list)
    missing_entry: bool = False
    elapsed: float = 0.0


def _server_env() -> dict[str, str]:
    """The server's whole environment: no secrets of the parent reach forked children."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONPATH": _PACKAGE_ROOT,
        "PYTHONHASHSEED": "0",  # str/set iteration order is the same in every run
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",  # BLAS thread pools do not survive fork
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # Who the agent's code is, the same on every host and in every mode: without these,
        # ``Path.home()``, ``expanduser("~")`` and ``getpass.getuser()`` fall back to the
        # user database, which a confined child cannot read (or, under bubblewrap, has not).
        # Children run as nobody (or as an unprivileged user they cannot learn more about).
        "HOME": "/",
        "USER": "nobody",
        "LOGNAME": "nobody",
    }
    for name in (UNSAFE_ENV, MODE_ENV, "TEXTGYMS_SANDBOX_TMP", DISK_ENV):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


class Sandbox:
    """A handle on one fork server (see the module docstring). Close it when done, or use it
    as a context manager: ``with Sandbox() as box: ...``."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._kills = 0  # kill() calls so far: a run that was killed must not be retried
        self.hello: dict[str, Any] = {}

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "textgyms.sandbox.server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_server_env(),
                close_fds=True,
                start_new_session=True,  # a Ctrl-C for the trainer is not the server's
            )
            hello = self._read(timeout=60.0)
        except (OSError, EOFError, ValueError) as exc:
            self._stop()
            raise SandboxError(f"the sandbox server could not start: {exc}") from exc
        self.hello = hello
        if "error" in hello:
            self._stop()
            raise SandboxError(hello["error"])
        if hello.get("mode") == "unsafe":
            warnings.warn(
                f"textgyms sandbox running WITHOUT full kernel confinement ({hello['describe']}) "
                f"because {UNSAFE_ENV}=1: agent code can read and change this machine.",
                RuntimeWarning,
                stacklevel=3,
            )

    def _read(self, timeout: float) -> dict[str, Any]:
        fd = self._proc.stdout.fileno()
        poller = select.poll()  # not select(): descriptors above 1024 are common in trainers
        poller.register(fd, select.POLLIN)
        if not poller.poll(timeout * 1000):
            raise EOFError(f"no answer from the sandbox server within {timeout:.0f} s")
        message = protocol.recv(fd)
        if message is None:
            raise EOFError(f"the sandbox server exited (code {self._proc.poll()})")
        return message

    def _request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        with self._lock:
            kills = self._kills
            for attempt in (1, 2):
                if self._proc is not None and self._proc.poll() is not None:
                    self._stop()  # a dead server: close its pipes before starting another
                if self._proc is None:
                    self._start_unless_killed(kills)
                try:
                    protocol.send(self._proc.stdin.fileno(), message)
                    reply = self._read(timeout + 70.0)  # the server allows 60 s of setup
                    break
                except (OSError, EOFError, ValueError) as exc:  # ValueError: corrupt JSON
                    self._stop()
                    if self._kills != kills:  # kill()ed on purpose: no restart, no rerun
                        raise SandboxError("sandbox run killed: its work was cancelled") from exc
                    if attempt == 2:
                        raise SandboxError(f"the sandbox server failed twice: {exc}") from exc
        if reply.get("status") == "sandbox_error":
            raise SandboxError(f"sandbox fault: {reply.get('message')}")
        return reply

    def _start_unless_killed(self, kills: int) -> None:
        """:meth:`_start`, for a request that began at ``kills`` kills: a :meth:`kill` while
        the server starts (a pool closed then) ends the run as killed, not as a server that
        could not start."""
        try:
            self._start()
        except SandboxError as exc:
            if self._kills != kills:
                raise SandboxError("sandbox run killed: its work was cancelled") from exc
            raise
        if self._kills != kills:  # killed before the server existed: it must not run either
            self._stop()
            raise SandboxError("sandbox run killed: its work was cancelled")

    def ping(self) -> int:
        """Start the server if needed; return its pid."""
        return int(self._request({"op": "ping"}, 5.0)["pid"])

    def run(self, code: str, *, timeout: float = 5.0, memory_mb: int = 1024) -> Execution:
        """Run ``code`` as a script; stdout and stderr come back head-and-tail truncated."""
        limits = _limits(timeout, memory_mb)
        request = {"op": "run", "code": code, "timeout": timeout, "limits": limits}
        return _execution(self._request(request, timeout), 0)

    def call(
        self,
        code: str,
        entry: str,
        inputs: list[Any],
        *,
        by_name: bool = False,
        test_timeout: float = 2.0,
        module_timeout: float = 5.0,
        timeout: float | None = None,
        memory_mb: int = 1024,
    ) -> Execution:
        """Run ``code`` (its top level under ``module_timeout``), then ``entry(*args)`` (or
        ``entry(**kwargs)`` with ``by_name``) for each input, each under ``test_timeout``; the
        whole run under ``timeout`` (default: the sum of those budgets)."""
        total = timeout if timeout is not None else module_timeout + test_timeout * len(inputs)
        request = {
            "op": "call",
            "code": code,
            "module_timeout": min(module_timeout, total),
            "entry": entry,
            "inputs": [protocol.encode_value(x) for x in inputs],
            "kwargs": by_name,
            "test_timeout": test_timeout,
            "timeout": total,
            "limits": _limits(total, memory_mb),
        }
        return _execution(self._request(request, total), len(inputs))

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Stop the server (it exits when its stdin closes)."""
        with self._lock:
            self._stop()

    def kill(self) -> None:
        """Kill the server now, even mid-run (its zygote and children die with it); the run
        in progress ends with :class:`SandboxError` (it is not retried on a fresh server, as a
        server that merely died is). For shutting down work nobody awaits."""
        self._kills += 1  # before the kill, so the run's thread sees it when its read fails
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def __enter__(self) -> Sandbox:
        """The sandbox itself; its server starts on first use."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the server, whether or not the block raised."""
        self.close()

    @property
    def confinement(self) -> str:
        """How children are confined: ``"kernel"`` (Landlock and seccomp), ``"bwrap"``
        (bubblewrap) or ``"unsafe"`` (opted out); starts the server if it is not running."""
        if self._proc is None:
            self.ping()
        return str(self.hello["mode"])

    @property
    def pid(self) -> int | None:
        """The server's pid, or None when it is not running."""
        return self._proc.pid if self._proc is not None else None


def _limits(timeout: float, memory_mb: int) -> dict[str, int]:
    return {"cpu_seconds": int(timeout) + 2, "memory_mb": int(memory_mb)}


def _execution(reply: dict[str, Any], n: int) -> Execution:
    calls: list[CallResult | None] = []
    for i in range(n):
        rec = reply["results"].get(str(i))
        if rec is None:
            calls.append(None)
        elif rec.get("ok") is True:
            try:
                calls.append(CallResult(True, protocol.decode_value(rec.get("out"))))
            except (TypeError, ValueError, RecursionError):
                calls.append(CallResult(False, error="unreadable return value"))
        else:
            calls.append(CallResult(False, error=str(rec.get("error"))[:500]))
    return Execution(
        status=reply["status"],
        exit_code=int(reply["exit_code"]),
        stdout=reply["stdout"],
        stderr=reply["stderr"],
        calls=calls,
        missing_entry="missing" in reply.get("events", ()),
        elapsed=float(reply.get("elapsed", 0.0)),
    )


# --- the pool: several servers for runs from several threads ----------------------------------
_scope = threading.local()


@contextlib.contextmanager
def cancel_scope(event: threading.Event) -> Iterator[None]:
    """Runs this thread queues for a pooled server give up (:class:`RunCancelled`) once
    ``event`` is set: the server sets it when the session that owns the thread ends."""
    previous = getattr(_scope, "event", None)
    _scope.event = event
    try:
        yield
    finally:
        _scope.event = previous


class SandboxPool:
    """Up to ``size`` fork servers, one per run in progress, started on demand.

    The same methods as :class:`Sandbox`. Queueing rule: a run takes an idle server, else
    starts one while fewer than ``size`` exist, else waits its turn (first come, first served)
    for the first server another run gives back. A run waiting inside a :func:`cancel_scope`
    whose event gets set raises :class:`RunCancelled` without running. Once :meth:`close` is
    called, every run (those still waiting too) raises :class:`SandboxError` instead of
    starting a server.
    """

    def __init__(self, size: int = 1) -> None:
        self.size = max(1, int(size))
        self._idle: list[Sandbox] = []
        self._all: list[Sandbox] = []
        self._turns: collections.deque[object] = collections.deque()
        self._cond = threading.Condition()
        self._closed = False

    @contextlib.contextmanager
    def _server(self) -> Iterator[Sandbox]:
        box = self._take()
        try:
            yield box
        finally:
            with self._cond:
                if self._closed:
                    box.close()
                else:
                    self._idle.append(box)
                self._cond.notify_all()

    def _take(self) -> Sandbox:
        event: threading.Event | None = getattr(_scope, "event", None)
        turn = object()
        with self._cond:
            self._turns.append(turn)
            try:
                while True:
                    if self._closed:  # also wakes the runs still waiting when it closes
                        raise SandboxError(
                            "this SandboxPool is closed: make a new one, or use "
                            "textgyms.sandbox.shared() for the process's pool")
                    if event is not None and event.is_set():
                        raise RunCancelled("sandbox run cancelled: its session ended")
                    if self._turns[0] is turn and (self._idle or len(self._all) < self.size):
                        break
                    self._cond.wait(0.2)  # wakes on a free server, and polls the cancel event
                if self._idle:
                    return self._idle.pop()
                box = Sandbox()
                self._all.append(box)
                return box
            finally:
                self._turns.remove(turn)
                self._cond.notify_all()

    def run(self, code: str, **kwargs: Any) -> Execution:
        """:meth:`Sandbox.run` on a pooled server."""
        with self._server() as box:
            return box.run(code, **kwargs)

    def call(self, code: str, entry: str, inputs: list[Any], **kwargs: Any) -> Execution:
        """:meth:`Sandbox.call` on a pooled server."""
        with self._server() as box:
            return box.call(code, entry, inputs, **kwargs)

    def ping(self) -> int:
        """:meth:`Sandbox.ping` on a pooled server (starting one if needed)."""
        with self._server() as box:
            return box.ping()

    @property
    def confinement(self) -> str:
        """How children are confined (see :attr:`Sandbox.confinement`)."""
        with self._server() as box:
            return box.confinement

    @property
    def hello(self) -> dict[str, Any]:
        """The first server's hello (starting one if needed)."""
        with self._server() as box:
            if box.pid is None:
                box.ping()
            return box.hello

    @property
    def pid(self) -> int | None:
        """The pid of a running server of the pool, or None when none runs."""
        with self._cond:
            return next((box.pid for box in self._all if box.pid is not None), None)

    @property
    def pids(self) -> list[int]:
        """The pids of the pool's running servers."""
        with self._cond:
            return [box.pid for box in self._all if box.pid is not None]

    def close(self) -> None:
        """Stop every server; one still running a run (that nobody is left to await: the
        last user has gone) is killed with its run."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            busy = [box for box in self._all if box not in idle]
            self._cond.notify_all()
        for box in idle:
            box.close()
        for box in busy:
            box.kill()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the process's shared pool ----------------------------------------------------------------
_shared: dict[int, tuple[SandboxPool, int]] = {}  # pid -> (pool, users)
_shared_lock = threading.Lock()
_pool_size = {"size": 1}


def set_pool_size(size: int) -> None:
    """How many sandbox servers this process's shared pool may run at once (>= 1); applies
    to the pool made next and to the one in use (``textgyms serve`` calls it before any
    session starts, the trainer adapters when they make their first env)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"the sandbox pool size must be an integer >= 1, got {size!r}")
    with _shared_lock:
        _pool_size["size"] = size
        box = _shared.get(os.getpid(), (None, 0))[0]
    if box is not None:
        with box._cond:
            box.size = size
            box._cond.notify_all()  # runs waiting for a server may start one now


def shared() -> SandboxPool:
    """This process's sandbox pool (a forked process gets its own); counts one more user."""
    with _shared_lock:
        box, users = _shared.get(os.getpid(), (None, 0))
        if box is None:
            box = SandboxPool(_pool_size["size"])
        _shared[os.getpid()] = (box, users + 1)
        return box


def release(box: SandboxPool) -> None:
    """One user fewer; the servers stop when none is left."""
    with _shared_lock:
        entry = _shared.get(os.getpid())
        if entry is None or entry[0] is not box:
            return
        if entry[1] <= 1:
            del _shared[os.getpid()]
            box.close()
        else:
            _shared[os.getpid()] = (box, entry[1] - 1)


@atexit.register
def _close_all() -> None:
    entry = _shared.pop(os.getpid(), None)
    if entry is not None:
        entry[0].close()
