"""The IPv6 task family: addressing with static routes (easy), OSPFv3 in one area on
IPv6-only routers, which therefore need configured router IDs (medium), and OSPFv3 added to
a dual-stack network that already runs multi-area OSPFv2, with the same area design (hard).

Address plans are a /48 (2001:db8::/32 documentation space or a random unique-local fd00::/8
prefix) cut into /64s: LANs with the router at ``::1``, point-to-point links with ``::1`` and
``::2``. Requirements state addresses in compressed or fully expanded form (the same address
to IOS); the checks read the simulated IPv6 plane only.
"""

from __future__ import annotations

import copy
import ipaddress

import networkx as nx
import numpy as np

from textgyms.envs.netconfig import areas
from textgyms.envs.netconfig.ipobj import interface6
from textgyms.envs.netconfig.model import DeviceConfig, Ospf, StaticRoute, V6Addr
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.scenario import Scenario
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.topologies import (
    ETH,
    Topo,
    base_config,
    chain,
    draw,
    host_config,
    hub_spoke,
    uniform,
)

I6 = ipaddress.IPv6Interface


def site_prefix(rng: np.random.Generator) -> ipaddress.IPv6Network:
    """A /48: documentation space or a unique-local prefix with a random global ID."""
    if uniform(rng) < 0.5:
        return ipaddress.IPv6Network(f"2001:db8:{draw(rng, 1, 0xFFFF):x}::/48")
    gid = draw(rng, 0, 2**40)
    return ipaddress.IPv6Network(((0xFD << 120) | (gid << 80), 48))


def plan6(rng: np.random.Generator, t: Topo) -> tuple[dict, dict]:
    """IPv6 addresses for every addressed router interface and every host of ``t``."""
    site = int(site_prefix(rng).network_address)
    sids = [x + 1 for x in rng.permutation(0xFF)[:len(t.lans)].tolist()]  # arange(1, 0x100)
    addr: dict[tuple[str, str], I6] = {}
    hosts: dict[str, I6] = {}
    host_ints = [(h, int(hip)) for h, (hip, _gw) in t.hosts.items()]
    for (router, iface, net), sid in zip(t.lans, sids):
        pfx = site | (sid << 64)
        addr[(router, iface)] = interface6(pfx | 1, 64)
        lo = int(net.network_address)
        hi = lo | ((1 << (32 - net.prefixlen)) - 1)
        for h, x in host_ints:
            if lo <= x <= hi:  # the host is on this LAN
                # The host's IPv4 last octet, read as hex digits: ::37 for .37.
                hosts[h] = interface6(pfx | int(str(x & 0xFF), 16), 64)
    for k, (a, ai, b, bi, _net) in enumerate(t.wans):
        pfx = site | ((0xFF00 + k) << 64)
        addr[(a, ai)], addr[(b, bi)] = interface6(pfx | 1, 64), interface6(pfx | 2, 64)
    return addr, hosts


def v6_text(x: int) -> str:
    """``str(IPv6Address(x))``: eight hex groups, the longest run of two or more zero groups
    (the first of equal runs) written ``::``, without ipaddress's string round trips
    (IPv4-mapped addresses, which some Pythons write differently, are left to it)."""
    if x >> 32 == 0xFFFF:
        return str(ipaddress.IPv6Address(x))
    groups = [f"{(x >> shift) & 0xFFFF:x}" for shift in range(112, -16, -16)]
    best, best_len, start = 0, 0, -1
    for k, g in enumerate(groups):
        if g != "0":
            start = -1
            continue
        if start < 0:
            start = k
        if k - start + 1 > best_len:
            best, best_len = start, k - start + 1
    if best_len < 2:
        return ":".join(groups)
    return ":".join(groups[:best]) + "::" + ":".join(groups[best + best_len:])


def iface6_text(a: I6) -> str:
    """``str(a)`` for an IPv6 interface: its address and prefix length."""
    return f"{v6_text(int(a))}/{a.network.prefixlen}"


def shown(rng: np.random.Generator, a: I6) -> str:
    """An address as a requirement states it: compressed, or fully expanded upper-case."""
    if uniform(rng) < 0.6:
        return iface6_text(a)
    return f"{a.ip.exploded.upper()}/{a.network.prefixlen}"


def _v6_only(t: Topo, r: str, addr: dict) -> DeviceConfig:
    """``r`` with descriptions and IPv6 addresses, no IPv4."""
    bare = copy.copy(t)
    bare.addr = {}
    cfg = parse_config(base_config(bare, r), r)[0]
    _add_v6(cfg, r, addr)
    return cfg


def _add_v6(cfg: DeviceConfig, r: str, addr: dict) -> None:
    """Give ``r``'s interfaces in ``cfg`` their IPv6 addresses from ``addr``."""
    for (d, iface), a in addr.items():
        if d == r:
            cfg.iface(iface).ipv6.append(V6Addr(a))


def host6(t: Topo, h: str, a: I6, dual: bool) -> str:
    """A host's configuration: its IPv6 address (the default router comes from router
    advertisements), and its IPv4 address and gateway when dual-stack."""
    if dual:
        return host_config(t, h).replace(" no shutdown",
                                         f" ipv6 address {iface6_text(a)}\n no shutdown")
    return f"hostname {h}\ninterface {ETH}\n ipv6 address {iface6_text(a)}\n no shutdown"


def _wan_graph(t: Topo) -> nx.Graph:
    """The routers and their WAN links (each edge with its two ports)."""
    g = nx.Graph()
    for a, ai, b, bi, _net in t.wans:
        g.add_edge(a, b, ports=((a, ai), (b, bi)))
    return g


def _statics(t: Topo, addr: dict, r: str, g: nx.Graph) -> list[StaticRoute]:
    """``ipv6 route`` to every remote LAN via the next router on the shortest path in
    ``g`` (:func:`_wan_graph`, built once for every router)."""
    out = []
    for owner, iface, _net in t.lans:
        if owner != r:
            nxt = nx.shortest_path(g, r, owner)[1]
            (x, xi), (y, yi) = g.edges[r, nxt]["ports"]
            far = (y, yi) if x == r else (x, xi)
            out.append(StaticRoute(addr[(owner, iface)].network, addr[far].ip, None))
    return out


def _enable_ospf6(cfg: DeviceConfig, iface_areas: dict, passive: list[str], rid: str | None):
    cfg.ipv6_routing = True
    cfg.ospf6 = Ospf(1, ipaddress.IPv4Address(rid) if rid else None)
    cfg.ospf6.passive.update(passive)
    for iface, area in iface_areas.items():
        cfg.iface(iface).ospf6_area = (1, area)


def _reach(t: Topo, hosts6: dict, reqs: list, checks: list) -> None:
    names = sorted(hosts6)
    text = {h: v6_text(int(hosts6[h])) for h in names}  # written once, read n - 1 times
    for h in names:
        for other in names:
            if other != h:
                checks.append({"g": "reach6", "src": h, "dst": text[other]})
    reqs.append({"type": "reach6", "hosts": [f"{h} ({text[h]})" for h in names]})


def _ospf6_checks(t: Topo, iface_areas: dict, checks: list) -> None:
    for (dev, iface), area in sorted(iface_areas.items()):
        checks.append({"g": "ospf6_area", "dev": dev, "if": iface, "area": area})
    for a, ai, b, _bi, _net in t.wans:
        checks.append({"g": "adjacency6", "a": a, "if": ai, "b": b})
    checks.append({"g": "router_ids6", "devs": t.routers()})


def _net6_text(a: I6) -> str:
    """``str(a.network)``: the interface's prefix."""
    net = a.network
    return f"{v6_text(int(net.network_address))}/{net.prefixlen}"


def _lan_routes(t: Topo, addr: dict, code: str, passive: bool, checks: list) -> None:
    prefix = {(o, i): _net6_text(addr[(o, i)]) for o, i, _net in t.lans}
    for r in t.routers():
        for owner, iface, _net in t.lans:
            if owner != r:
                checks.append({"g": "routing6", "dev": r, "proto": code,
                               "prefix": prefix[(owner, iface)]})
            elif passive:
                checks.append({"g": "passive6", "dev": r, "if": iface})


def _static(rng: np.random.Generator) -> Scenario:
    """Easy: address every interface, enable IPv6 routing, static routes only."""
    t = chain(rng, 2 + draw(rng, 2))
    addr, hosts6 = plan6(rng, t)
    reqs: list[dict] = [{"type": "address6", "device": d, "interface": i,
                         "address": shown(rng, a)} for (d, i), a in sorted(addr.items())]
    reqs.append({"type": "routing6", "protocol": "static"})
    checks = [{"g": "addressing6", "dev": d, "if": i, "ip": iface6_text(a)}
              for (d, i), a in sorted(addr.items())]
    start, reference = {}, {}
    g = _wan_graph(t)
    for r in t.routers():
        cfg = _v6_only(t, r, {})
        start[r] = render_config(cfg)
        _add_v6(cfg, r, addr)  # the same parsed configuration, now with its addresses
        cfg.ipv6_routing = True
        cfg.routes6 = _statics(t, addr, r, g)
        reference[r] = render_config(cfg)
        checks.append({"g": "static_only6", "dev": r})
    _lan_routes(t, addr, "S", False, checks)
    _reach(t, hosts6, reqs, checks)
    fixed = {h: host6(t, h, a, False) for h, a in hosts6.items()}
    return Scenario(t, reference, start, reqs, checks, fixed)


def _single_area(rng: np.random.Generator) -> Scenario:
    """Medium: OSPFv3 area 0 on IPv6-only routers (router IDs must be configured)."""
    t = chain(rng, 3) if uniform(rng) < 0.5 else hub_spoke(rng, 2)
    addr, hosts6 = plan6(rng, t)
    lans = {(r, i) for r, i, _n in t.lans}
    reqs: list[dict] = [{"type": "ospf6", "process": 1, "passive": True, "v6only": True}]
    checks: list[dict] = []
    start, reference = {}, {}
    for k, r in enumerate(t.routers(), 1):
        cfg = _v6_only(t, r, addr)
        start[r] = render_config(cfg)
        mine = {i: 0 for (d, i) in addr if d == r}
        _enable_ospf6(cfg, mine, [i for (d, i) in lans if d == r], f"{k}.{k}.{k}.{k}")
        reference[r] = render_config(cfg)
    _ospf6_checks(t, {key: 0 for key in addr}, checks)
    _lan_routes(t, addr, "O", True, checks)
    _reach(t, hosts6, reqs, checks)
    fixed = {h: host6(t, h, a, False) for h, a in hosts6.items()}
    return Scenario(t, reference, start, reqs, checks, fixed)


def _dual_stack(rng: np.random.Generator) -> Scenario:
    """Hard: IPv4 runs multi-area OSPF already; add IPv6 and OSPFv3 with the same areas."""
    sc = areas.ospf_areas(rng, "medium")
    t = sc.topo
    addr, hosts6 = plan6(rng, t)
    iface_areas = {(c["dev"], c["if"]): c["area"] for c in sc.checks if c["g"] == "ospf_area"}
    lans = {(r, i) for r, i, _n in t.lans}
    start, reference = {}, {}
    for r in t.routers():
        cfg = parse_config(sc.reference[r], r)[0]
        _add_v6(cfg, r, addr)
        start[r] = render_config(cfg)
        mine = {i: area for (d, i), area in iface_areas.items() if d == r}
        _enable_ospf6(cfg, mine, [i for (d, i) in lans if d == r], None)
        reference[r] = render_config(cfg)
    reqs = [{"type": "ospf6", "process": 1, "passive": True, "v6only": False,
             "areas": areas.area_text(t, iface_areas)}]
    checks = list(sc.checks)  # IPv4 already passes them all: they must keep passing
    _ospf6_checks(t, iface_areas, checks)
    _lan_routes(t, addr, "O", True, checks)
    _reach(t, hosts6, reqs, checks)
    fixed = {h: host6(t, h, a, True) for h, a in hosts6.items()}
    return Scenario(t, reference, start, reqs, checks, fixed)


def ipv6(rng: np.random.Generator, level: str) -> Scenario:
    """An IPv6 task at ``level``."""
    return {"easy": _static, "medium": _single_area, "hard": _dual_stack}[level](rng)
