"""The IPv6 behavioural checks (see :mod:`checks`): each reads the simulated network's IPv6
plane (addresses that are up, pings over every equal-cost path, the route that forwards a
prefix, OSPFv3 areas, adjacencies and router IDs), never the text of a configuration."""

from __future__ import annotations

import functools
import ipaddress

from textgyms.envs.netconfig import routing
from textgyms.envs.netconfig.ipobj import from_text
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.sim import Network

A = ipaddress.IPv4Address


@functools.lru_cache(maxsize=4096)
def addr6(text: str) -> int:
    """An IPv6 address (any textual form) as an int (cached: every submission's checks name
    the same addresses)."""
    return int(ipaddress.IPv6Address(text))


def _addressing6(net: Network, c: dict, ref) -> tuple[bool, str]:
    """The interface is up with the required address (the forms IOS accepts compare equal)."""
    want = from_text(ipaddress.IPv6Interface, c["ip"])
    plane = net.v6
    have = [i for i in plane.l3[c["dev"]] if i.name == c["if"]]
    ok = any(i.ip == int(want.ip) and i.plen == want.network.prefixlen for i in have)
    if ok:
        return True, ""  # the reason is only ever read for a check that fails
    shown = ", ".join(f"{ipaddress.IPv6Address(i.ip)}/{i.plen}" for i in have) or "none up"
    return ok, f"{c['dev']} {c['if']}: IPv6 {shown}, required {want}"


def _reach6(net: Network, c: dict, ref) -> tuple[bool, str]:
    """An IPv6 ping that succeeds on every equal-cost path the echo may take."""
    for _there, back in net.v6.ping_all_paths(c["src"], addr6(c["dst"])):
        if back is None or back.status != "delivered":
            return False, f"ping {c['src']} -> {c['dst']} fails"
    return True, ""


@functools.lru_cache(maxsize=4096)
def _network6_int(text: str) -> int:
    """A check's IPv6 prefix's network address as an int (cached)."""
    return int(from_text(ipaddress.IPv6Network, text).network_address)


def _routing6(net: Network, c: dict, ref) -> tuple[bool, str]:
    """Traffic to the prefix is forwarded by a route of the required protocol."""
    fib = net.v6.fib.get(c["dev"])
    routes = routing.lookup(fib, _network6_int(c["prefix"]) + 1) if fib is not None else []
    want = c["proto"]
    for r in routes:
        if r[routing.R_PROTO].split()[0] == want:
            return True, ""  # the reason is only ever read for a check that fails
    got = sorted({r[routing.R_PROTO].split()[0] for r in routes})
    pfx = from_text(ipaddress.IPv6Network, c["prefix"])
    name = {"O": "OSPFv3", "S": "static"}[want]
    return False, (f"{c['dev']} forwards to {pfx} by no {name} route"
                   + (f" (it uses: {', '.join(got)})" if got else " (no route)"))


def dynamic_protocols(cfg: DeviceConfig) -> list[str]:
    """The routing processes a device runs (configured, whatever they advertise): a "static
    only" requirement allows none of them, for either address family."""
    procs = (("OSPF", cfg.ospf), ("OSPFv3", cfg.ospf6), ("BGP", cfg.bgp))
    return [name for name, proc in procs if proc is not None]


def static_only(net: Network, c: dict, ref) -> tuple[bool, str]:
    """No dynamic routing process on the device (static routes only)."""
    running = dynamic_protocols(net.config(c["dev"]))
    return not running, (f"{c['dev']} runs a dynamic routing protocol ({', '.join(running)}) "
                         "where static only is required")


def _ospf6_area(net: Network, c: dict, ref) -> tuple[bool, str]:
    """OSPFv3 runs on the interface (the process started), in the required area."""
    areas = {o.area for o in net.v6.oifs if (o.dev, o.l3.name) == (c["dev"], c["if"])}
    where = f"in area {min(areas)}" if areas else "not in OSPFv3"
    return areas == {c["area"]}, f"{c['dev']} {c['if']} is {where}, required: area {c['area']}"


def _adjacency6(net: Network, c: dict, ref) -> tuple[bool, str]:
    ok = any(a.neighbor == c["b"] and a.iface == c["if"]
             for a in net.v6.adjacencies.get(c["a"], ()))
    return ok, f"no OSPFv3 adjacency between {c['a']} and {c['b']} on {c['a']} {c['if']}"


def _router_ids6(net: Network, c: dict, ref) -> tuple[bool, str]:
    """Every router's OSPFv3 process has a router ID (it started) and no two share one."""
    rids: dict[int, list[str]] = {}
    for d in c["devs"]:
        rids.setdefault(net.v6.rids.get(d, 0), []).append(d)
    bad = [f"{A(r)} ({', '.join(ds)})" if r else f"none ({', '.join(ds)}: not started)"
           for r, ds in sorted(rids.items()) if len(ds) > 1 or not r]
    return not bad, f"duplicate or missing OSPFv3 router IDs: {'; '.join(bad)}"


def _passive6(net: Network, c: dict, ref) -> tuple[bool, str]:
    """The interface runs OSPFv3 (so its prefix is advertised) but sends no hellos."""
    ok = any((o.dev, o.l3.name) == (c["dev"], c["if"]) and o.passive for o in net.v6.oifs)
    return ok, f"{c['dev']} {c['if']} is not a passive, advertised OSPFv3 interface"


CHECKS6 = {
    "addressing6": _addressing6,
    "reach6": _reach6,
    "routing6": _routing6,
    "static_only6": static_only,
    "ospf6_area": _ospf6_area,
    "adjacency6": _adjacency6,
    "router_ids6": _router_ids6,
    "passive6": _passive6,
}
WEIGHTS6 = {"addressing6": 2, "reach6": 2, "routing6": 2, "static_only6": 2, "ospf6_area": 1,
            "adjacency6": 1, "router_ids6": 1, "passive6": 1}
