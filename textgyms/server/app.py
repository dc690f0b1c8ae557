"""The ASGI app: OpenEnv's FastAPI app for one textgyms id, behind a guard that owns sessions.

OpenEnv provides the informational routes (``/health``, ``/schema``, ``/metadata``, ``/state``,
``/openapi.json``, ``/docs``), the wire types and their serialisation. The guard adds what a
network service needs and serves the routes that hold envs itself:

- a bearer token on every route but ``/health`` (compared in constant time); a request that
  carries it (any whole request, without a token) authenticates its connection, which lifts
  the pre-authentication deadline and caps of :mod:`textgyms.server.gate`;
- ``/ws`` and ``/mcp`` over WebSocket: sessions owned by their connection, counted against
  ``--max-sessions``, with an idle deadline (:mod:`textgyms.server.sessions`,
  :mod:`textgyms.server.ws`); OpenEnv's attach-by-id (``/ws?session_id=``) is refused;
- ``POST /reset``: a one-off env (it holds a slot while it runs), with 4xx replies for bad
  arguments; ``POST /step``: 409, since an HTTP call has no episode to step; ``POST /mcp``:
  JSON-RPC answers, and no sessions (an HTTP request cannot own one);
- ``GET /capacity``: sessions in use and free, per worker process (and, under
  ``textgyms serve``, the connection limits and the descriptor limit of the answering one);
- a body size limit that holds for every transfer encoding (bodies are read here, counted
  chunk by chunk, before any route sees them).
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from openenv.core.env_server import ConcurrencyConfig, create_fastapi_app
from openenv.core.env_server.serialization import serialize_observation
from starlette.requests import Request
from starlette.responses import JSONResponse

from textgyms.server import ws
from textgyms.server.env import EnvFactory, ServedError, TextAction, TextObservation, TextState
from textgyms.server.protocols import CONNECTION_KEY
from textgyms.server.sessions import CapacityError, Registry, Slots

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MIB = 1024 * 1024
OPEN_PATHS = frozenset({"/health"})  # load balancers probe it without credentials
OVER_CAP = "the server is at --max-connections authenticated connections: retry later"
NO_EPISODE = (
    "POST /step has no episode to step: an HTTP call has no session, so each would act on a "
    "fresh env. Play episodes over the WebSocket /ws (reset, then step), as the OpenEnv client does"
)


def create_app(
    env_id: str,
    kwargs: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    max_sessions: int = 256,
    max_message_bytes: int = MIB,
    idle_timeout: float | None = None,
    capacity: Callable[[], dict[str, Any]] | None = None,
) -> Guard:
    """The guarded app serving ``gymnasium.make(env_id, **kwargs)``, one env per session.

    Builds one env first (OpenEnv checks its class), so a bad id or kwarg fails here, before
    the server listens. The lifespan shutdown closes every env still open. ``capacity`` gives
    the ``/capacity`` report (default: this process alone).
    """
    slots = Slots(max_sessions)
    factory = EnvFactory(env_id, dict(kwargs or {}), slots)
    app = create_fastapi_app(
        factory,
        TextAction,
        TextObservation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions),
        env_name=env_id.rpartition("/")[2],
        state_cls=TextState,
        mode="simulation",
    )
    app.add_exception_handler(CapacityError, _capacity_response)
    app.router.on_shutdown.append(factory.close_all)  # after OpenEnv's own shutdown hook
    registry = Registry(factory, idle_timeout)
    guard = Guard(app, token, max_message_bytes, registry)
    guard.capacity = capacity or guard.local_capacity
    return guard


async def _capacity_response(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "1"})


class Guard:
    """ASGI middleware: token, sessions, size limits, the routes that hold envs."""

    def __init__(
        self, app: Any, token: str | None, max_message_bytes: int, registry: Registry
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_message_bytes = max_message_bytes
        self.registry = registry
        self.factory: EnvFactory = registry.factory  # type: ignore[assignment]
        self.capacity: Callable[[], dict[str, Any]] = self.local_capacity

    def local_capacity(self) -> dict[str, Any]:
        """This process's sessions: in use and free."""
        import os

        slots = self.factory.slots
        worker = {"pid": os.getpid(), "in_use": slots.used, "free": slots.limit - slots.used}
        return summarise([worker], slots.limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:  # lifespan
            await self.app(scope, receive, send)

    def _has_token(self, scope: Scope) -> bool:
        """Whether the request carries the token (always, on a server without one)."""
        if self.token is None:
            return True
        for name, value in scope.get("headers", ()):
            if name == b"authorization" and value.startswith(b"Bearer "):
                return hmac.compare_digest(value[7:].strip(), self.token)
        return False

    def _access(self, scope: Scope) -> int:
        """200: serve the request; 401: no token; 503: over ``--max-connections``.

        A request with the token authenticates its connection (lifting the gate's deadline);
        one to an open path without it is served but leaves the connection unauthenticated.
        """
        if not self._has_token(scope):
            return 200 if scope["path"] in OPEN_PATHS else 401
        connection = scope.get("extensions", {}).get(CONNECTION_KEY)
        if connection is not None and not connection.authenticate():
            return 503
        return 200

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        access = self._access(scope)
        if access == 401:
            await _respond(send, 401, "missing or wrong bearer token (Authorization: Bearer T)")
            return
        if access == 503:
            await _respond(send, 503, OVER_CAP, close=True)
            return
        length = dict(scope.get("headers", ())).get(b"content-length", b"0")
        declared = int(length) if length.isdigit() else 0
        limit = self.max_message_bytes
        body = None if declared > limit else await read_body(receive, limit)
        if body is None:
            detail = f"request body over {self.max_message_bytes} bytes"
            await _respond(send, 413, detail, close=True)
            return
        route = (scope["method"], scope["path"])
        if route == ("POST", "/step"):
            await _respond(send, 409, NO_EPISODE)
        elif route == ("POST", "/reset"):
            status, reply = await self._reset(body)
            await _send_json(send, status, reply)
        elif route == ("POST", "/mcp"):
            await _send_json(send, 200, self._mcp(body))
        elif route == ("GET", "/capacity"):
            await _send_json(send, 200, self.capacity())
        else:
            await self.app(scope, _replay(body, receive), send)

    async def _reset(self, body: bytes) -> tuple[int, Any]:
        """``POST /reset``: a one-off env (holding a slot while it runs), then closed."""
        try:
            data = json.loads(body) if body.strip() else {}
        except (ValueError, RecursionError) as exc:
            return 400, {"detail": f"invalid JSON body: {str(exc)[:200]}"}
        if not isinstance(data, dict):
            return 422, {"detail": "the body must be a JSON object: {seed, episode_id, options}"}
        fields = {k: data[k] for k in ws.RESET_FIELDS if k in data}
        try:
            env = await asyncio.to_thread(self.factory)
        except CapacityError as exc:
            return 503, {"detail": str(exc)}
        try:
            observation = await asyncio.to_thread(lambda: env.reset(**fields))
        except ServedError as exc:
            return 422, {"detail": str(exc)}
        finally:
            await asyncio.to_thread(env.close)
        return 200, serialize_observation(observation)

    @staticmethod
    def _mcp(body: bytes) -> dict[str, Any]:
        try:
            request = json.loads(body)
        except (ValueError, RecursionError):
            error = {"code": -32700, "message": "Parse error: the body is not JSON"}
            return {"jsonrpc": "2.0", "id": None, "error": error}
        return ws.jsonrpc(request, None)[0]

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        access = self._access(scope)
        if access != 200:
            detail = "missing or wrong bearer token" if access == 401 else OVER_CAP
            await _deny(scope, receive, send, access, detail)
            return
        if "session_id" in parse_qs(scope.get("query_string", b"").decode("latin-1")):
            # OpenEnv lets a WebSocket attach to an existing session by id; here every
            # connection is its own session, and no client may enter another one.
            await _deny(scope, receive, send, 403, "attaching to a session by id is disabled")
            return
        if scope["path"] not in ("/ws", "/mcp", "/mux"):
            await _deny(scope, receive, send, 404, "WebSocket routes: /ws, /mcp and /mux")
            return
        if scope["path"] == "/mux":
            await ws.serve_mux(scope, receive, send, self.registry, self.max_message_bytes)
            return
        limit, rpc = self.max_message_bytes, scope["path"] == "/mcp"
        await ws.serve(scope, receive, send, self.registry, limit, rpc)


def summarise(workers: list[dict[str, Any]], per_worker: int) -> dict[str, Any]:
    """The ``/capacity`` report from each worker's ``{pid, in_use, free}``."""
    in_use = sum(w["in_use"] for w in workers)
    return {
        "max_sessions": per_worker * len(workers),
        "in_use": in_use,
        "free": sum(w["free"] for w in workers),
        "workers": workers,
    }


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once it passes ``limit`` bytes (chunked or not)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` that gives the body read already, then waits for the disconnect."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _deny(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    """Refuse a WebSocket handshake with an HTTP status (or close 1008 if the server cannot)."""
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        await _respond(send, status, detail, "websocket.")
    else:
        await send({"type": "websocket.close", "code": 1008})


async def _send_json(send: Send, status: int, value: Any) -> None:
    body = json.dumps(value).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _respond(
    send: Send, status: int, detail: str, prefix: str = "", close: bool = False
) -> None:
    """A JSON error response (``prefix="websocket."`` denies a WebSocket handshake).
    ``close``: end the connection after it (the rest of an oversize body is never read)."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": f"{prefix}http.response.start", "status": status, "headers": headers})
    await send({"type": f"{prefix}http.response.body", "body": body})
