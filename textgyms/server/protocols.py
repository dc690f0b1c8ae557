"""uvicorn's HTTP and WebSocket protocols with the connection-level limits a server needs.

uvicorn leaves these to a proxy; ``textgyms serve`` may face clients directly, so:

- **a connection must authenticate within a deadline, and unauthenticated ones are capped**
  per peer and in total (:mod:`textgyms.server.gate`), from the moment it is accepted, before
  any byte is parsed: silent sockets and half-sent request lines cannot hold the descriptors
  that clients with a token need; authenticated connections have their own cap;
- **a request must arrive whole within** ``request_timeout`` seconds of its first byte (or of
  the connection, for the first request): silent connections and half-sent requests are
  dropped instead of being held forever (idle keep-alive connections close after uvicorn's
  keep-alive timeout);
- **a WebSocket whose peer does not read is not read either**: once the replies (pongs
  included) waiting for it pass the transport's high-water mark, the server stops reading its
  frames until they drain, so a ping flood costs a bounded buffer, not memory without end;
- both protocols put themselves in the ASGI scope (``extensions["textgyms.connection"]``), so
  the app can mark the connection authenticated (``authenticate()``) and the session layer
  can end it: a close frame, or dropping a socket whose reply is stuck
  (:meth:`GuardedWebSocket.end`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from textgyms.server.gate import Gate, Limits

CONNECTION_KEY = "textgyms.connection"
CLOSE_FLUSH = 5.0  # seconds a graceful close may wait for the peer to take the close frame
_COMPLETE = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.MIGHT_SWITCH_PROTOCOL, h11.SWITCHED_PROTOCOL)


def protocol_classes(gate: Gate) -> tuple[type, type]:
    """The HTTP and WebSocket protocol classes for uvicorn's ``http=`` and ``ws=``, sharing
    ``gate`` (one per server process)."""
    http = type("TextgymsHTTP", (GuardedHTTP,), {"limits": gate.limits, "gate": gate})
    ws = type("TextgymsWebSocket", (GuardedWebSocket,), {"gate": gate})
    return http, ws


class GuardedHTTP(H11Protocol):
    """h11 behind the gate, with a deadline on each incomplete request."""

    limits: Limits
    gate: Gate

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._upgraded = False
        super().connection_made(transport)
        self.gate.admit(transport)  # may drop another unauthenticated connection (or this one)
        self.app = _in_scope(self.app, self)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if not self._upgraded:  # else the WebSocket protocol owns the transport
            self.gate.forget(self.transport)
        super().connection_lost(exc)

    def authenticate(self) -> bool:
        """The app saw the token: see :meth:`Gate.authenticate`."""
        return self.gate.authenticate(self.transport)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._upgraded or self.transport.is_closing():
            return  # the WebSocket protocol owns the connection now
        if self.conn.their_state in _COMPLETE:
            self._disarm()
        else:  # a request under way (or bytes of the next one): it has a deadline
            self._arm()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._upgraded = True
        self._disarm()  # the WebSocket layer authenticates the handshake at once
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state not in _COMPLETE:
            self._arm()  # a pipelined request already started

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.limits.request_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        incomplete = self.conn.their_state not in _COMPLETE
        if incomplete and not self._upgraded and not self.transport.is_closing():
            self.transport.abort()


def _in_scope(app: Any, connection: Any) -> Callable[..., Awaitable[None]]:
    """``app`` with ``connection`` in each request's scope (the HTTP scope has no hook)."""

    async def scoped(scope: Any, receive: Any, send: Any) -> None:
        scope.setdefault("extensions", {})[CONNECTION_KEY] = connection
        await app(scope, receive, send)

    return scoped


class GuardedWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol behind the gate (the HTTP protocol admitted the
    connection), which stops reading a peer that does not read."""

    gate: Gate

    def connection_lost(self, exc: Exception | None) -> None:
        self.gate.forget(self.transport)
        super().connection_lost(exc)

    def authenticate(self) -> bool:
        """The handshake carried the token: see :meth:`Gate.authenticate`."""
        return self.gate.authenticate(self.transport)

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][CONNECTION_KEY] = self

    def pause_writing(self) -> None:
        super().pause_writing()
        self.transport.pause_reading()  # no more pings read while their pongs cannot leave

    def resume_writing(self) -> None:
        super().resume_writing()
        if not self.read_paused:
            self.transport.resume_reading()

    async def receive(self) -> Any:
        message = await self.queue.get()
        if self.read_paused and self.queue.empty():
            self.read_paused = False
            if self.writable.is_set():  # else resume_writing resumes reading
                self.transport.resume_reading()
        return message

    def end(self, graceful: bool, code: int = 1001, reason: str = "") -> None:
        """End the connection: a close frame then a flushing close (``graceful``), or drop
        the socket at once (a peer that stopped reading would never take the close frame).
        The app's pending ``receive`` gets ``websocket.disconnect`` either way."""
        if self.transport.is_closing():
            return
        if graceful and self.handshake_complete and not self.close_sent:
            self.conn.send_close(code, reason)
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code})
            self.transport.close()
            self.loop.call_later(CLOSE_FLUSH, self.transport.abort)  # if it never flushes
        else:
            self.transport.abort()
