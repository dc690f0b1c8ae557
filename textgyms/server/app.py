"""The ASGI app: OpenEnv's FastAPI app for one textgyms id, behind a small guard.

OpenEnv provides the routes (``/ws`` sessions, ``/health``, ``/reset``, ``/step``, ``/state``,
``/schema``, ``/metadata``), the per-session env instances, the session limit and the error
replies. The guard adds what a network service needs and OpenEnv leaves out:

- a bearer token on every route but ``/health`` (compared in constant time);
- no attaching to another session by id (OpenEnv's ``/ws?session_id=``);
- a message size limit that refuses an oversize WebSocket message with an OpenEnv error reply
  and keeps the session (OpenEnv would pass it on; uvicorn would close the connection);
- an idle timeout that closes the WebSocket (code 1001) of a client that sent nothing for
  that long, which frees its env. OpenEnv's own reaper is not used: it closes the env of a
  connected WebSocket session but leaves the socket open, so the client would go on talking
  to a closed env.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from openenv.core.env_server import ConcurrencyConfig, create_fastapi_app

from textgyms.server.env import EnvFactory, TextAction, TextObservation, TextState

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MIB = 1024 * 1024
OPEN_PATHS = frozenset({"/health"})  # load balancers probe it without credentials


def create_app(
    env_id: str,
    kwargs: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    max_sessions: int = 256,
    max_message_bytes: int = MIB,
    idle_timeout: float | None = None,
) -> Guard:
    """The guarded OpenEnv app serving ``gymnasium.make(env_id, **kwargs)``, one env per session.

    Builds one env first (OpenEnv checks its class), so a bad id or kwarg fails here, before
    the server listens. The lifespan shutdown closes every env still open.
    """
    factory = EnvFactory(env_id, dict(kwargs or {}))
    app = create_fastapi_app(
        factory,
        TextAction,
        TextObservation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions),
        env_name=env_id.rpartition("/")[2],
        state_cls=TextState,
        mode="simulation",
    )
    app.router.on_shutdown.append(factory.close_all)  # after OpenEnv's own shutdown hook
    guard = Guard(app, token, max_message_bytes, idle_timeout)
    guard.factory = factory
    return guard


class Guard:
    """ASGI middleware: bearer token, WebSocket message size limit and idle timeout."""

    def __init__(
        self, app: Any, token: str | None, max_message_bytes: int, idle_timeout: float | None
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_message_bytes = max_message_bytes
        self.idle_timeout = idle_timeout
        self.factory: EnvFactory | None = None  # set by create_app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:  # lifespan
            await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None or scope["path"] in OPEN_PATHS:
            return True
        for name, value in scope.get("headers", ()):
            if name == b"authorization" and value.startswith(b"Bearer "):
                return hmac.compare_digest(value[7:].strip(), self.token)
        return False

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._authorized(scope):
            await _respond(send, 401, "missing or wrong bearer token (Authorization: Bearer T)")
            return
        length = dict(scope.get("headers", ())).get(b"content-length", b"0")
        if length.isdigit() and int(length) > self.max_message_bytes:
            await _respond(send, 413, f"request body over {self.max_message_bytes} bytes")
            return
        await self.app(scope, receive, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._authorized(scope):
            await _deny(scope, receive, send, 401, "missing or wrong bearer token")
            return
        if "session_id" in parse_qs(scope.get("query_string", b"").decode("latin-1")):
            # OpenEnv lets a WebSocket attach to an existing session by id; here every
            # connection is its own session, and no client may enter another one.
            await _deny(scope, receive, send, 403, "attaching to a session by id is disabled")
            return
        send = _dropping_send_after_disconnect(send)
        await self.app(scope, self._guarded_receive(receive, send), send)

    def _guarded_receive(self, receive: Receive, send: Send) -> Receive:
        """``receive`` that answers oversize messages itself and times out idle clients."""
        connected = False

        async def guarded() -> Message:
            nonlocal connected
            while True:
                if connected and self.idle_timeout is not None:
                    try:
                        message = await asyncio.wait_for(receive(), self.idle_timeout)
                    except asyncio.TimeoutError:
                        reason = f"idle for {self.idle_timeout:g} s"
                        await send({"type": "websocket.close", "code": 1001, "reason": reason})
                        return {"type": "websocket.disconnect", "code": 1001}
                else:
                    message = await receive()
                connected = connected or message["type"] == "websocket.connect"
                size = _size(message)
                if size <= self.max_message_bytes:
                    return message
                await send({"type": "websocket.send", "text": _too_large(size, self)})

        return guarded


def _dropping_send_after_disconnect(send: Send) -> Send:
    """``send`` that drops what a client that is gone can no longer receive.

    When the client vanished (or the server is shutting down) while its step was running,
    OpenEnv's handler would report the failed send by sending again, which fails too and ends
    in a traceback in the log. Dropped here, the handler reads the disconnect next and ends
    the session the normal way (closing its env).
    """
    gone = False

    async def guarded(message: Message) -> None:
        nonlocal gone
        if gone:
            return
        try:
            await send(message)
        except OSError:  # uvicorn's ClientDisconnected: the peer is gone
            gone = True

    return guarded


def _size(message: Message) -> int:
    """Bytes of a ``websocket.receive`` message (0 for other messages)."""
    if message.get("bytes") is not None:
        return len(message["bytes"])
    text = message.get("text")
    if text is None:
        return 0
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _too_large(size: int, guard: Guard) -> str:
    """An OpenEnv error reply (``WSErrorResponse`` shape) for an oversize message."""
    message = (
        f"message of {size} bytes refused: the limit is {guard.max_message_bytes} bytes "
        "(textgyms serve --max-message-bytes); the session is still open"
    )
    return json.dumps({"type": "error", "data": {"message": message, "code": "VALIDATION_ERROR"}})


async def _deny(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    """Refuse a WebSocket handshake with an HTTP status (or close 1008 if the server cannot)."""
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        await _respond(send, status, detail, "websocket.")
    else:
        await send({"type": "websocket.close", "code": 1008})


async def _respond(send: Send, status: int, detail: str, prefix: str = "") -> None:
    """A JSON error response (``prefix="websocket."`` denies a WebSocket handshake)."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": f"{prefix}http.response.start", "status": status, "headers": headers})
    await send({"type": f"{prefix}http.response.body", "body": body})
