"""IOS-formatted IPv6 tool outputs: ``show ipv6 route``, ``show ipv6 interface brief``,
``show ipv6 ospf neighbor``, and the ping and traceroute texts for IPv6 targets. Addresses
are printed as IOS prints them: compressed, upper-case."""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig.routing import R_NET, R_PLEN, Route, Walk
from textgyms.envs.netconfig.sim import Network

LINK_LOCAL = ipaddress.IPv6Network("fe80::/10")
_CODES = (
    "Codes: C - Connected, L - Local, S - Static, U - Per-user Static route\n"
    "       B - BGP, R - RIP, H - NHRP, I1 - ISIS L1\n"
    "       I2 - ISIS L2, IA - ISIS interarea, IS - ISIS summary, D - EIGRP\n"
    "       EX - EIGRP external, ND - ND Default, NDp - ND Prefix, DCE - Destination\n"
    "       NDr - Redirect, O - OSPF Intra, OI - OSPF Inter, OE1 - OSPF ext 1\n"
    "       OE2 - OSPF ext 2, ON1 - OSPF NSSA ext 1, ON2 - OSPF NSSA ext 2"
)


def a6(value: int) -> str:
    """An IPv6 address as IOS prints it."""
    return str(ipaddress.IPv6Address(value)).upper()


def _via(r: Route) -> str:
    _net, _plen, proto, _ad, _metric, nexthop, iface, _fwd, _tag = r
    if proto == "L":
        return f"via {iface}, receive"
    if nexthop is None:
        return f"via {iface}, directly connected"
    if ipaddress.IPv6Address(nexthop) in LINK_LOCAL:
        return f"via {a6(nexthop)}, {iface}"
    return f"via {a6(nexthop)}"


def show_ipv6_route(net: Network, dev: str) -> str:
    """``show ipv6 route`` (hosts have no IPv6 routing table)."""
    plane = net.v6
    if dev not in plane.rib:
        return "% Invalid input detected at '^' marker."
    entries: dict[tuple[int, int], list[Route]] = {}
    for r in plane.rib[dev]:
        entries.setdefault((r[R_NET], r[R_PLEN]), []).append(r)
    lines = [f"IPv6 Routing Table - default - {len(entries) + 1} entries", _CODES]
    for (n, p), routes in sorted(entries.items()):
        _net, _plen, proto, ad, metric, *_rest = routes[0]
        code = {"O IA": "OI", "O E1": "OE1", "O E2": "OE2"}.get(proto, proto)
        lines.append(f"{code:<4}{a6(n)}/{p} [{ad}/{metric}]")
        vias = dict.fromkeys(_via(r) for r in routes)  # recursive statics repeat theirs
        lines += [f"     {v}" for v in vias]
    lines += ["L   FF00::/8 [0/0]", "     via Null0, receive"]
    return "\n".join(lines)


def show_ipv6_int_brief(net: Network, dev: str) -> str:
    """``show ipv6 interface brief``: status and the IPv6 addresses of every interface."""
    plane = net.v6
    cfg = net.config(dev)
    rows = []
    names = sorted({n for (d, n) in net.status if d == dev})
    for name in names:
        status, proto = net.status[(dev, name)]
        rows.append(f"{name:<23}[{status}/{proto}]")
        itf = cfg.interfaces.get(name)
        ll = plane.ll.get((dev, name))
        if itf is None or not itf.ipv6_on():
            rows.append("    unassigned")
            continue
        if ll is not None:
            rows.append(f"    {a6(ll)}")
        rows += [f"    {a6(i.ip)}" for i in plane.l3[dev] if i.name == name]
        if ll is None:  # down: IOS lists the configured addresses, marked tentative
            rows += [f"    {str(a.iface.ip).upper()} [TEN]" for a in itf.ipv6 if not a.eui64]
    return "\n".join(rows)


def show_ipv6_ospf_neighbor(net: Network, dev: str) -> str:
    """``show ipv6 ospf neighbor`` (OSPFv3)."""
    plane = net.v6
    cfg = net.config(dev)
    if cfg.ospf6 is None or dev not in plane.rids:
        return ""
    rid = ipaddress.IPv4Address(plane.rids[dev])
    rows = [f"            OSPFv3 Router with ID ({rid}) (Process ID {cfg.ospf6.pid})", "",
            f"{'Neighbor ID':<16}{'Pri':<6}{'State':<16}{'Dead Time':<12}"
            f"{'Interface ID':<16}Interface"]
    for a in sorted(plane.adjacencies.get(dev, ()), key=lambda a: a.neighbor_rid):
        ifid = _if_index(net, a.neighbor, a.neighbor_ip)
        rows.append(f"{str(ipaddress.IPv4Address(a.neighbor_rid)):<16}{1:<6}{'FULL/  -':<16}"
                    f"{'00:00:35':<12}{ifid:<16}{a.iface}")
    return "\n".join(rows)


def _if_index(net: Network, dev: str, ll: int) -> int:
    """The neighbour's interface ID (IOS shows its ifIndex; here its position)."""
    names = sorted(n for (d, n) in net.v6.ll if d == dev)
    name = next((n for n in names if net.v6.ll[(dev, n)] == ll), "")
    return names.index(name) + 1 if name else 0


def traceroute6_text(net: Network, dst: int, walk: Walk, max_ttl: int = 30) -> str:
    """``traceroute`` to an IPv6 address: each router answers from the global address of
    the interface the probe came in by; ``* * *`` once replies stop, the reason unsaid."""
    plane = net.v6
    delivered = walk.status == "delivered"
    lines = ["Type escape sequence to abort.", f"Tracing the route to {a6(dst)}", ""]
    routed = list(walk.hops[1:])
    for k, (dev, inif, _out) in enumerate(routed, 1):
        last = delivered and k == len(routed)
        ip = dst if last else next((i.ip for i in plane.l3[dev] if i.name == inif), None)
        lines.append(f"  {k:>2} {a6(ip)} 1 msec 1 msec 1 msec" if ip is not None
                     else f"  {k:>2}  *  *  *")
    if not delivered:
        lines += [f"  {k:>2}  *  *  *" for k in range(len(routed) + 1, max_ttl + 1)]
    return "\n".join(lines)
