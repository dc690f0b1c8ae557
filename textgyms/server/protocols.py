"""uvicorn's HTTP and WebSocket protocols with the connection-level limits a server needs.

uvicorn leaves these to a proxy; ``textgyms serve`` may face clients directly, so:

- **connections are capped** (``max_connections``, below the descriptor limit): one over the cap
  is dropped as soon as it is accepted, so silent sockets can never use up the descriptors
  that clients with a token need;
- **a request must arrive whole within** ``request_timeout`` seconds of its first byte (or of
  the connection, for the first request): silent connections and half-sent requests are
  dropped instead of being held forever (idle keep-alive connections close after uvicorn's
  keep-alive timeout);
- **a WebSocket whose peer does not read is not read either**: once the replies (pongs
  included) waiting for it pass the transport's high-water mark, the server stops reading its
  frames until they drain, so a ping flood costs a bounded buffer, not memory without end;
- the WebSocket protocol puts itself in the ASGI scope (``extensions["textgyms.connection"]``)
  so the session layer can end a connection itself: a close frame, or dropping a socket
  whose reply is stuck (:meth:`GuardedWebSocket.end`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

CONNECTION_KEY = "textgyms.connection"
CLOSE_FLUSH = 5.0  # seconds a graceful close may wait for the peer to take the close frame
_COMPLETE = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.MIGHT_SWITCH_PROTOCOL, h11.SWITCHED_PROTOCOL)


@dataclass(frozen=True)
class Limits:
    """Connection limits of one server process."""

    max_connections: int
    request_timeout: float


def protocol_classes(limits: Limits) -> tuple[type, type]:
    """The HTTP and WebSocket protocol classes for uvicorn's ``http=`` and ``ws=``."""
    http = type("TextgymsHTTP", (GuardedHTTP,), {"limits": limits})
    return http, GuardedWebSocket


class GuardedHTTP(H11Protocol):
    """h11 with a connection cap and a deadline on each incomplete request."""

    limits: Limits

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._upgraded = False
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self.connections.discard(self)
            transport.abort()  # over the cap: its descriptor is freed at once
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

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


class GuardedWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol that stops reading a peer that does not read."""

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
