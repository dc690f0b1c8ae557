"""Pre-authentication limits: what a connection may hold before it has shown the token.

Every accepted TCP connection starts **unauthenticated**. It becomes authenticated when the
app sees a whole request that carries the server's bearer token (with no token configured:
any whole request, since there is nothing to prove). Until then:

- it is closed ``auth_deadline`` seconds after it was accepted, whatever it sent meanwhile
  (nothing, half a request line, requests without the token);
- at most ``max_unauth_per_peer`` such connections are kept per peer address (IPv6: per
  /64, which one host usually holds whole) and ``max_unauth`` in total. A connection over a
  cap does not wait for a slot: it takes one, and the oldest unauthenticated connection of
  its own peer (per-peer cap) or of the peer holding the most (total cap) is dropped. A
  client with the token therefore gets in however many slots a flood holds: its connection
  is the newest, and it authenticates in one round trip, before all but a flood of more than
  ``max_unauth_per_peer`` new connections within that round trip make it the oldest;
- authenticated connections are capped separately (``max_connections``), and the two caps
  together stay below the descriptor limit, so accepting never fails for want of one.

The gate is per server process and runs on the event loop thread (no locks). The protocols
(:mod:`textgyms.server.protocols`) call :meth:`Gate.admit` when a connection is accepted,
before any byte is parsed, and :meth:`Gate.forget` when it is lost; the app calls
:meth:`Gate.authenticate` through the connection in the ASGI scope.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Connection limits of one server process (``textgyms serve`` options)."""

    max_connections: int  # authenticated connections
    request_timeout: float  # seconds for each request to arrive whole
    auth_deadline: float  # seconds for a new connection to authenticate
    max_unauth: int  # unauthenticated connections in all
    max_unauth_per_peer: int  # unauthenticated connections of one peer address
    descriptors: tuple[int, int]  # RLIMIT_NOFILE (soft, hard) as raised at start


class Gate:
    """The unauthenticated connections of one server process, their deadline and caps."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._pending: dict[Any, asyncio.TimerHandle] = {}  # transport -> deadline, oldest first
        self._peers: dict[str, dict[Any, None]] = {}  # peer -> its pending transports, in order
        self._peer_of: dict[Any, str] = {}
        self._authenticated: set[Any] = set()

    def admit(self, transport: asyncio.BaseTransport) -> None:
        """A connection just accepted: unauthenticated until :meth:`authenticate`; dropped at
        the deadline. Over a cap, the oldest unauthenticated connection of the same peer (or of
        the peer holding the most) is dropped to make room."""
        loop = asyncio.get_running_loop()
        peer = peer_key(transport.get_extra_info("peername"))
        self._pending[transport] = loop.call_later(self.limits.auth_deadline, self._expire,
                                                   transport)  # fmt: skip
        self._peer_of[transport] = peer
        self._peers.setdefault(peer, {})[transport] = None
        if len(self._peers[peer]) > self.limits.max_unauth_per_peer:
            self._drop(next(iter(self._peers[peer])))
        elif len(self._pending) > self.limits.max_unauth:
            busiest = max(self._peers, key=lambda p: len(self._peers[p]))
            self._drop(next(iter(self._peers[busiest])))

    def authenticate(self, transport: asyncio.BaseTransport) -> bool:
        """The connection made an authenticated request: no deadline any more. False if it
        cannot be one more authenticated connection (``max_connections`` reached) or was
        already dropped; it then stays unauthenticated."""
        if transport in self._authenticated:
            return True
        if transport not in self._pending:
            return False  # dropped (deadline or cap) while its request was on the way
        if len(self._authenticated) >= self.limits.max_connections:
            return False
        self._unpend(transport)
        self._authenticated.add(transport)
        return True

    def forget(self, transport: asyncio.BaseTransport) -> None:
        """The connection is gone (either state); safe to call more than once."""
        self._unpend(transport)
        self._authenticated.discard(transport)

    def report(self) -> dict[str, Any]:
        """This process's connection limits and counts, for ``GET /capacity``."""
        soft, hard = self.limits.descriptors
        return {
            "authenticated": len(self._authenticated),
            "unauthenticated": len(self._pending),
            "max_connections": self.limits.max_connections,
            "max_unauth": self.limits.max_unauth,
            "max_unauth_per_peer": self.limits.max_unauth_per_peer,
            "auth_deadline": self.limits.auth_deadline,
            "descriptors": {"soft": soft, "hard": hard},
        }

    def _expire(self, transport: asyncio.BaseTransport) -> None:
        if transport in self._pending:
            self._drop(transport)

    def _drop(self, transport: asyncio.BaseTransport) -> None:
        self._unpend(transport)
        transport.abort()  # its descriptor is freed now, not after a close handshake

    def _unpend(self, transport: asyncio.BaseTransport) -> None:
        timer = self._pending.pop(transport, None)
        if timer is None:
            return
        timer.cancel()
        peer = self._peer_of.pop(transport)
        mine = self._peers[peer]
        del mine[transport]
        if not mine:
            del self._peers[peer]


def peer_key(peername: Any) -> str:
    """The address a per-peer cap counts by: the IPv4 address, or the IPv6 /64."""
    if not isinstance(peername, (tuple, list)) or not peername:
        return ""  # a Unix socket: one local peer
    host = str(peername[0])
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:a.b.c.d is the IPv4 peer
    if mapped is not None:
        return str(mapped)
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
