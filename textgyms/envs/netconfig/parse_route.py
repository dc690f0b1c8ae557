"""``ip route`` of the IOS-lite parser: the general path and the parser's fast path
(:mod:`parse_fast`) both apply it here.

Returns None or the message IOS would print, having changed nothing when it rejects a line.
"""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig.model import DeviceConfig, StaticRoute
from textgyms.envs.netconfig.parse_if import (
    ip4,
    network4,
    normalize_ifname,
    route_options,
)
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID

__all__ = ["static_route"]


def _own_address(dev: DeviceConfig, addr: ipaddress.IPv4Address) -> bool:
    """Whether ``addr`` is the address of one of ``dev``'s interfaces (compared as ints:
    ``IPv4Interface.ip`` builds a new address object on every call)."""
    n = int(addr)
    return any(i.ip is not None and int(i.ip) == n for i in dev.interfaces.values())


def static_route(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    """``ip route PREFIX MASK {NEXTHOP | INTERFACE [NEXTHOP]} [AD] [name N] [permanent]``
    (``w`` expanded, without ``no``)."""
    if len(w) < 5:
        return INCOMPLETE
    prefix = network4(w[2], w[3])
    if prefix is None:
        return "%Inconsistent address and mask" if ip4(w[2]) and ip4(w[3]) else INVALID
    ifname = normalize_ifname(w[4])
    nh = ip4(w[4]) if ifname is None else (ip4(w[5]) if len(w) > 5 else None)
    if nh is None and ifname is None:
        return INVALID
    rest = w[5 + (ifname is not None and nh is not None):]
    opts = route_options(rest)
    if isinstance(opts, str):
        return opts
    if nh is not None and _own_address(dev, nh) and not neg:
        return "%Invalid next hop address (it's this router)"
    route = StaticRoute(prefix, nh, ifname, opts.get("ad", 1), opts.get("name", ""),
                        opts.get("permanent", False), opts.get("tag"))
    for r in [r for r in dev.routes if (r.prefix, r.nexthop, r.iface) == (prefix, nh, ifname)]:
        dev.routes.remove(r)
    if not neg:
        dev.routes.append(route)
    return None
