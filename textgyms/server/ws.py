"""The WebSocket session: OpenEnv's ``/ws`` message protocol (and JSON-RPC on ``/mcp``).

Messages (OpenEnv's): ``{"type": "reset", "data": {"seed", "episode_id", "options"}}``,
``{"type": "step", "data": {"text": ...}}``, ``{"type": "state"}``, ``{"type": "close"}`` and
``{"type": "mcp", "data": <JSON-RPC request>}``; replies ``observation``, ``state``, ``mcp`` or
``error`` (``{"message", "code"}``), built with OpenEnv's own response models.

Whatever a client sends, the session answers and stays usable: a frame that is binary, not
JSON, JSON but not an object, too deep, too large, of an unknown type or with bad fields gets an
``error`` reply; an env error (a step after the end, bad reset options) too. Only ``close``, the
client leaving, the idle deadline or the server stopping end a session.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import (
    WSErrorCode,
    WSErrorResponse,
    WSObservationResponse,
    WSStateResponse,
)
from pydantic import ValidationError

from textgyms.server.env import ServedError, TextAction
from textgyms.server.protocols import CONNECTION_KEY
from textgyms.server.sessions import CapacityError, Registry, Session, SessionEnded

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
log = logging.getLogger("textgyms.serve")

RESET_FIELDS = ("seed", "episode_id", "options")
NOT_MCP = (
    "this environment has no MCP tools: play it with OpenEnv messages over /ws "
    '({"type": "reset"}, then {"type": "step", "data": {"text": "<completion>"}})'
)


def error(message: str, code: str, **extra: Any) -> str:
    """An OpenEnv error reply."""
    return WSErrorResponse(data={"message": message, "code": code, **extra}).model_dump_json()


class Outbox:
    """``send`` for text frames that goes quiet once the connection is closed or gone."""

    def __init__(self, send: Send) -> None:
        self._send, self.closed = send, False

    async def text(self, text: str) -> None:
        """Send a text frame (nothing once the connection is closed or gone)."""
        if self.closed:
            return
        try:
            await self._send({"type": "websocket.send", "text": text})
        except (OSError, RuntimeError):  # uvicorn's ClientDisconnected, or sent after close
            self.closed = True

    async def close(self, code: int, reason: str = "") -> None:
        """Send the close frame, once."""
        if not self.closed:
            self.closed = True
            try:
                await self._send({"type": "websocket.close", "code": code, "reason": reason})
            except (OSError, RuntimeError):
                pass


async def serve(
    scope: Any, receive: Receive, send: Send, registry: Registry, limit: int, rpc_only: bool
) -> None:
    """One connection, one session: open it, answer its messages, close it with everything."""
    connection = scope.get("extensions", {}).get(CONNECTION_KEY)
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    out = Outbox(send)

    def abort(graceful: bool) -> None:
        if connection is not None:
            connection.end(graceful, 1001, "session closed by the server")

    try:
        session = await registry.open(abort)
    except CapacityError as exc:
        code = "CAPACITY_REACHED" if not registry.draining else "SESSION_ERROR"
        await out.text(error(str(exc), code, max_sessions=exc.limit))
        await out.close(1013, "try again later")
        return
    except Exception as exc:  # noqa: BLE001 - the env could not be built: say why, keep serving
        log.exception("building a session's env failed")
        await out.text(error(f"{type(exc).__name__}: {exc}", WSErrorCode.FACTORY_ERROR.value))
        await out.close(1011)
        return
    try:
        await _loop(session, receive, out, limit, rpc_only)
    except SessionEnded:
        pass  # closed by the server (SIGTERM past the grace) while its call was running
    finally:
        await session.close()
        await out.close(1001 if registry.draining else 1000)


async def _loop(session: Session, receive: Receive, out: Outbox, limit: int, rpc: bool) -> None:
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return  # websocket.disconnect
        session.touch()
        reply, end = await answer(session, message, limit, rpc)
        if reply is not None:
            await session.reply(out.text, reply)
        if end or session.registry.draining or session.closed:
            return


async def answer(
    session: Session, message: Message, limit: int, rpc: bool
) -> tuple[str | None, bool]:
    """The reply to one frame, and whether the session ends after it."""
    parsed, problem = parse(message, limit)
    if problem is not None:
        return (_rpc_error(None, -32700, problem) if rpc else problem), False
    if rpc:
        response, end = jsonrpc(parsed, session)
        return json.dumps(response), end
    return await answer_message(session, parsed)


async def answer_message(session: Session, parsed: Any) -> tuple[str | None, bool]:
    """The reply to one parsed OpenEnv message, and whether the session ends after it."""
    if not isinstance(parsed, dict):
        text = (
            'a message must be a JSON object such as {"type": "step", "data": {"text": "..."}}'
            f", got a JSON {_kind(parsed)}"
        )
        return error(text, WSErrorCode.INVALID_JSON.value), False
    kind, data = parsed.get("type"), parsed.get("data", {})
    if kind == "close":
        return None, True
    if kind == "state":
        return WSStateResponse(data=session.env.state.model_dump()).model_dump_json(), False
    if kind == "mcp":
        response, end = jsonrpc(data, session)
        return json.dumps({"type": "mcp", "data": response}), end
    if kind not in ("reset", "step"):
        unknown = f"unknown message type {str(kind)[:80]!r}"
        return error(unknown, WSErrorCode.UNKNOWN_TYPE.value), False
    if not isinstance(data, dict):
        text = f"'data' must be a JSON object, got a JSON {_kind(data)}"
        return error(text, WSErrorCode.VALIDATION_ERROR.value), False
    return await _env_call(session, kind, data), False


async def _env_call(session: Session, kind: str, data: dict[str, Any]) -> str:
    """Reset or step the session's env on its thread; env errors become error replies."""
    env = session.env
    try:
        if kind == "reset":
            fields = {k: data[k] for k in RESET_FIELDS if k in data}
            observation = await session.call(functools.partial(env.reset, **fields))
        else:
            observation = await session.call(env.step, TextAction.model_validate(data))
    except ValidationError as exc:
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e.get("loc")})
        text = f"invalid {kind} data (fields {fields}): a step is {{\"text\": \"<completion>\"}}"
        return error(text, WSErrorCode.VALIDATION_ERROR.value)
    except ServedError as exc:
        return error(str(exc), WSErrorCode.EXECUTION_ERROR.value)
    except SessionEnded:
        raise
    except Exception as exc:  # noqa: BLE001 - an env bug must not end the session; it is logged
        log.exception("env %s raised", kind)
        return error(f"{type(exc).__name__}: {exc}"[:2000], WSErrorCode.EXECUTION_ERROR.value)
    return WSObservationResponse(data=serialize_observation(observation)).model_dump_json()


def parse(message: Message, limit: int) -> tuple[Any, str | None]:
    """The JSON value of a frame, or an error reply saying why there is none."""
    binary = message.get("bytes")
    text = message.get("text") or ""
    if binary is not None:
        size = len(binary)
    else:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        refused = (
            f"message of {size} bytes refused: the limit is {limit} bytes "
            "(textgyms serve --max-message-bytes); the session is still open"
        )
        return None, error(refused, WSErrorCode.VALIDATION_ERROR.value)
    if binary is not None:
        text = f"binary frame ({size} bytes) refused: send each message as JSON text"
        return None, error(text, WSErrorCode.VALIDATION_ERROR.value)
    try:
        return json.loads(text), None
    except RecursionError:
        return None, error("invalid JSON: nested too deeply", WSErrorCode.INVALID_JSON.value)
    except ValueError as exc:  # JSONDecodeError, and integers over Python's digit limit
        return None, error(f"invalid JSON: {str(exc)[:200]}", WSErrorCode.INVALID_JSON.value)


def jsonrpc(request: Any, session: Session | None) -> tuple[dict[str, Any], bool]:
    """The JSON-RPC 2.0 response to an MCP request, and whether the session ends.

    ``openenv/session/create`` names the caller's own session (a connection has exactly one;
    over plain HTTP there is none to give, see :mod:`textgyms.server.sessions`), and
    ``openenv/session/close`` closes it, ending its connection; any other id is unknown.
    """
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0":
        text = 'Invalid Request: expected {"jsonrpc": "2.0", "method": ...}'
        return _rpc(None, -32600, text), False
    rid, method, params = request.get("id"), request.get("method"), request.get("params", {})
    if not isinstance(rid, (str, int, type(None))) or isinstance(rid, bool):
        rid = None
    if not isinstance(method, str):
        return _rpc(rid, -32600, "Invalid Request: 'method' must be a string"), False
    if not isinstance(params, dict):
        return _rpc(rid, -32602, "Invalid params: 'params' must be an object"), False
    if method == "openenv/session/create":
        if session is None:
            return _rpc(rid, -32600, "sessions belong to a connection: open a WebSocket to /ws "
                        "or /mcp; an HTTP request cannot own one"), False
        return {"jsonrpc": "2.0", "id": rid, "result": {"session_id": session.id}}, False
    if method == "openenv/session/close":
        target = params.get("session_id")
        if session is not None and session.registry.owned(target, session):
            result = {"session_id": session.id, "closed": True}
            return {"jsonrpc": "2.0", "id": rid, "result": result}, True
        return _rpc(rid, -32602, "unknown session_id (a connection can close only its own)"), False
    if method in ("tools/list", "tools/call"):
        return _rpc(rid, -32601, NOT_MCP), False
    return _rpc(rid, -32601, f"Method not found: {method[:80]}"), False


def _rpc(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _rpc_error(rid: Any, code: int, reply: str) -> str:
    """A JSON-RPC error carrying the message of an OpenEnv error reply."""
    return json.dumps(_rpc(rid, code, json.loads(reply)["data"]["message"]))


def _kind(value: Any) -> str:
    kinds = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


# --- /mux: many sessions over one connection ----------------------------------------------------


async def serve_mux(
    scope: Any, receive: Receive, send: Send, registry: Registry, limit: int
) -> None:
    """``/mux``: one connection carrying many sessions, for vectors of many envs.

    Every message names its env, ``{"env": k, "type": ..., "data": ...}``, and so does its
    reply. ``{"env": k, "type": "open"}`` opens session ``k`` (a slot each; the reply is its
    state), ``"close"`` ends it, and ``reset``, ``step``, ``state`` are OpenEnv's. Messages of
    different envs are handled concurrently (each session on its own thread), those of one env
    in order. The sessions belong to the connection: it is their owner and their idle clock,
    and they all end with it.
    """
    connection = scope.get("extensions", {}).get(CONNECTION_KEY)
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    mux = _Mux(registry, Outbox(send), connection)
    try:
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                break
            mux.touch()
            parsed, problem = parse(message, limit)
            env = parsed.get("env") if isinstance(parsed, dict) else None
            if problem is not None or not isinstance(env, int) or isinstance(env, bool):
                text = 'each message names its env: {"env": 0, "type": "step", "data": {...}}'
                await mux.emit(None, problem or error(text, WSErrorCode.VALIDATION_ERROR.value))
                continue
            mux.dispatch(env, parsed)
            if registry.draining:
                break
    finally:
        await mux.close()


class _Mux:
    """The sessions of one ``/mux`` connection and their replies."""

    def __init__(self, registry: Registry, out: Outbox, connection: Any) -> None:
        self.registry, self.out, self.connection = registry, out, connection
        self.sessions: dict[int, Session] = {}
        self.tasks: set[Any] = set()
        self.lock = asyncio.Lock()  # one reply written at a time

    def touch(self) -> None:
        """Activity on the connection counts for each of its sessions (their one owner)."""
        for session in self.sessions.values():
            session.touch()

    def abort(self, graceful: bool) -> None:
        """End the connection; a graceful end waits while a sibling session is computing
        (the SIGTERM drain and the idle reaper come back for it)."""
        if graceful and any(s.computing for s in self.sessions.values() if not s.closed):
            return
        if self.connection is not None:
            self.connection.end(graceful, 1001, "sessions closed by the server")

    async def emit(self, env: int | None, reply: str) -> None:
        """Send ``reply`` tagged with its env number, one reply at a time."""
        tagged = f'{{"env": {"null" if env is None else env}, {reply[1:]}'  # a JSON object
        self.touch()  # a reply taken counts for the connection, the owner of every session
        async with self.lock:
            session = self.sessions.get(env) if env is not None else None
            if session is not None:
                await session.reply(self.out.text, tagged)
            else:
                await self.out.text(tagged)

    def dispatch(self, env: int, parsed: dict[str, Any]) -> None:
        """Handle a message in its own task (other envs' messages need not wait for it)."""
        task = asyncio.get_running_loop().create_task(self._handle(env, parsed))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _handle(self, env: int, parsed: dict[str, Any]) -> None:
        kind = parsed.get("type")
        if kind == "open":
            await self._open(env)
            return
        session = self.sessions.get(env)
        if session is not None and session.closed:  # reaped (idle) while its siblings worked
            self.sessions.pop(env, None)
            text = f"env {env} was closed by the server (idle)"
            await self.emit(env, error(text, WSErrorCode.SESSION_ERROR.value))
            return
        if session is None:
            text = f'env {env} is not open here: send {{"env": {env}, "type": "open"}} first'
            await self.emit(env, error(text, WSErrorCode.VALIDATION_ERROR.value))
            return
        try:
            reply, end = await answer_message(session, parsed)
        except SessionEnded:
            return
        if end:
            self.sessions.pop(env, None)
            await session.close()
            reply = json.dumps({"type": "closed", "data": {}})
        if reply is not None:
            await self.emit(env, reply)

    async def _open(self, env: int) -> None:
        if env in self.sessions:
            await self.emit(env, error(f"env {env} is already open", "VALIDATION_ERROR"))
            return
        try:
            session = await self.registry.open(self.abort)
        except CapacityError as exc:
            code = WSErrorCode.CAPACITY_REACHED.value
            await self.emit(env, error(str(exc), code, max_sessions=exc.limit))
            return
        except Exception as exc:  # noqa: BLE001 - the env could not be built: say why
            text = f"{type(exc).__name__}: {exc}"
            await self.emit(env, error(text, WSErrorCode.FACTORY_ERROR.value))
            return
        self.sessions[env] = session
        await self.emit(env, WSStateResponse(data=session.env.state.model_dump()).model_dump_json())

    async def close(self) -> None:
        """End every session of the connection, then the connection."""
        for task in list(self.tasks):
            task.cancel()
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()
        await self.out.close(1001 if self.registry.draining else 1000)
