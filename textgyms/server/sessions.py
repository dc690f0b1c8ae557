"""Sessions of ``textgyms serve``: one env each, owned by one connection, with a deadline.

The rules, the same however a session was opened (``/ws``, or ``/mcp`` over a WebSocket):

- **slots**: every env the server builds, a session's or a one-off HTTP call's, takes one of
  ``--max-sessions`` slots until it is closed (:class:`Slots`);
- **owner**: a session belongs to the connection that opened it and ends with it; its id is
  never accepted from any other connection (HTTP requests cannot open sessions: nothing would
  tell the server when such an owner is gone);
- **deadline**: a session whose client neither sent a message nor took a reply for
  ``idle_timeout`` seconds is closed, and its connection aborted (a client that stops reading
  leaves a reply blocked in the socket; that counts as idle too);
- **work**: each session's env calls run in order on the session's own thread, so one session's
  slow step never holds another's; when the session ends, its cancel event is set, which
  cancels the sandbox runs it still had queued (:func:`textgyms.sandbox.client.cancel_scope`).
"""

from __future__ import annotations

import asyncio
import queue
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from textgyms.sandbox.client import cancel_scope


class CapacityError(RuntimeError):
    """Every ``--max-sessions`` slot is taken."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"server at capacity: all {limit} session slots are in use (--max-sessions); "
            "retry when a session ends, or read GET /capacity first"
            if limit
            else "server shutting down: no new sessions"
        )
        self.limit = limit


class SessionEnded(Exception):
    """The session ended while one of its calls was still running (nobody awaits it now)."""


class Slots:
    """A counter of envs alive, bounded by ``--max-sessions`` (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.watch: Callable[[int], None] | None = None  # told the count on every change
        self._lock = threading.Lock()

    def take(self) -> None:
        """Take a slot, or raise :class:`CapacityError`."""
        with self._lock:
            if self.used >= self.limit:
                raise CapacityError(self.limit)
            self.used += 1
            if self.watch is not None:
                self.watch(self.used)

    def give(self) -> None:
        """Give a slot back."""
        with self._lock:
            self.used = max(0, self.used - 1)
            if self.watch is not None:
                self.watch(self.used)


class Worker:
    """A daemon thread that runs one session's calls in order (its env is not thread-safe).

    A daemon, so that a step stuck in agent code past the SIGTERM grace cannot hold the exit.
    """

    def __init__(self, name: str, cancel: threading.Event) -> None:
        self.cancel = cancel
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._waiting: set[asyncio.Future] = set()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        with cancel_scope(self.cancel):
            while True:
                item = self._calls.get()
                if item is None:
                    return
                fn, args, loop, future = item
                try:
                    result = fn(*args)
                except BaseException as exc:  # handed to the awaiting coroutine
                    loop.call_soon_threadsafe(_settle, future, None, exc)
                else:
                    loop.call_soon_threadsafe(_settle, future, result, None)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on this thread, awaited."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._waiting.add(future)
        self._calls.put((fn, args, loop, future))
        try:
            return await future
        finally:
            self._waiting.discard(future)

    def abandon(self) -> None:
        """Stop awaiting the calls in progress: their awaiters get :class:`SessionEnded`."""
        for future in list(self._waiting):
            if not future.done():
                future.set_exception(SessionEnded())

    def stop(self) -> None:
        """Let the thread end after the call it is running (if any)."""
        self._calls.put(None)


def _settle(future: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if future.done():  # the awaiting coroutine was cancelled
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


class Session:
    """One env, its thread, its owner's way out (``abort``) and its activity clock."""

    def __init__(self, registry: Registry, abort: Abort) -> None:
        self.id = secrets.token_hex(16)
        self.registry = registry
        self.abort = abort  # ends the owner's connection: abort(graceful) (see Abort)
        self.cancel = threading.Event()
        self.worker = Worker(f"textgyms-session-{self.id[:8]}", self.cancel)
        self.env: Any = None
        self.computing = False  # an env call is running (it cannot be interrupted)
        self.replying = False  # its reply is being written (a client that never reads stalls it)
        self.last_active = time.monotonic()
        self.closed = False

    def touch(self) -> None:
        """The client sent a message or took a reply."""
        self.last_active = time.monotonic()

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run an env call on the session's thread, counted as in flight."""
        self.computing = True
        try:
            return await self.worker.run(fn, *args)
        finally:
            self.computing = False
            self.touch()  # the deadline counts from the reply, not from the request

    async def reply(self, send: Callable[[str], Awaitable[None]], text: str) -> None:
        """Write a reply; the client took it once the write completes."""
        self.replying = True
        try:
            await send(text)
        finally:
            self.replying = False
            self.touch()
            self.registry.idle.set()

    @property
    def busy(self) -> bool:
        """A call or its reply is in flight (what the SIGTERM drain waits for)."""
        return self.computing or self.replying

    async def close(self) -> None:
        """End the session: cancel its queued runs, close its env (on its thread), free it."""
        if self.closed:
            return
        self.closed = True
        self.cancel.set()
        env, self.env = self.env, None
        if env is not None and self.computing:  # its thread is stuck in a call: close from here
            self.worker.abandon()
            await asyncio.to_thread(_close_anyway, env)
        elif env is not None:
            try:
                await asyncio.wait_for(self.worker.run(env.close), CLOSE_WAIT)
            except Exception:  # noqa: BLE001 - a stuck or failing close must not keep the slot
                await asyncio.to_thread(_close_anyway, env)
        self.worker.stop()
        self.registry.forget(self)


CLOSE_WAIT = 10.0  # seconds a session's close waits for its thread before closing from here


def _close_anyway(env: Any) -> None:
    try:
        env.close()
    except Exception:  # noqa: BLE001 - best effort: the env's own close failed or hangs
        pass


class Registry:
    """Every live session of this process, its idle deadline, and the SIGTERM drain."""

    def __init__(self, factory: Callable[[], Any], idle_timeout: float | None) -> None:
        self.factory = factory
        self.idle_timeout = idle_timeout
        self.sessions: dict[str, Session] = {}
        self.draining = False
        self.idle = asyncio.Event()  # set whenever a call finishes (the drain waits on it)
        self._reaper: asyncio.Task | None = None

    async def open(self, abort: Abort) -> Session:
        """A new session with its env (raises :class:`CapacityError` when full)."""
        if self.draining:
            raise CapacityError(0)
        session = Session(self, abort)
        try:
            session.env = await session.worker.run(self.factory)
        except BaseException:
            session.worker.stop()
            raise
        self.sessions[session.id] = session
        self._start_reaper()
        return session

    def forget(self, session: Session) -> None:
        """Drop a closed session from the record."""
        self.sessions.pop(session.id, None)

    def owned(self, session_id: Any, session: Session) -> bool:
        """Whether ``session_id`` names ``session`` (the only session its caller owns)."""
        return isinstance(session_id, str) and secrets.compare_digest(session_id, session.id)

    def _start_reaper(self) -> None:
        if self.idle_timeout is not None and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        """Close sessions idle past the deadline (a blocked reply counts as idle)."""
        assert self.idle_timeout is not None
        period = min(1.0, self.idle_timeout / 4)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                if not session.computing and now - session.last_active > self.idle_timeout:
                    # A close frame for a silent client; a reply stuck in the socket of one
                    # that stopped reading would never flush, so that socket is dropped.
                    session.abort(not session.replying)
                    await session.close()

    async def drain(self, grace: float) -> int:
        """SIGTERM: let calls in flight finish (their replies go out), for up to ``grace`` s,
        then close every session. Returns how many calls were still running (cancelled)."""
        self.draining = True
        end = time.monotonic() + grace
        for session in list(self.sessions.values()):
            if not session.busy:
                session.abort(True)  # nothing in flight: a close frame now
        while any(s.busy for s in self.sessions.values()) and time.monotonic() < end:
            self.idle.clear()
            try:
                await asyncio.wait_for(self.idle.wait(), max(0.0, end - time.monotonic()))
            except asyncio.TimeoutError:
                break
        cancelled = sum(1 for s in self.sessions.values() if s.busy)
        for session in list(self.sessions.values()):
            session.abort(not session.busy)
            await session.close()
        if self._reaper is not None:
            self._reaper.cancel()
        return cancelled

    def report(self) -> dict[str, Any]:
        """Sessions in use in this process."""
        busy = sum(1 for s in self.sessions.values() if s.busy)
        return {"sessions": len(self.sessions), "busy": busy}


Abort = Callable[[bool], None]  # abort(graceful): a close frame (True) or a dropped socket (False)
