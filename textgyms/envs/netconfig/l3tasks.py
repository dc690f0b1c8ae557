"""The addressing and routing task families (static routes or OSPF, with a waypoint at the
hard level)."""

from __future__ import annotations

import ipaddress

import networkx as nx
import numpy as np

from textgyms.envs.netconfig.scenario import Scenario, host_collateral
from textgyms.envs.netconfig.topologies import (
    Hosts,
    Topo,
    base_config,
    chain,
    choose,
    dotted,
    hub_spoke,
    net_text,
    own_addrs,
    uniform,
    wan,
    wildcard,
)


def topology_for(rng: np.random.Generator, level: str) -> Topo:
    """A routed topology whose size grows with the level."""
    if level == "easy":
        return chain(rng, 2)
    if level == "medium":
        return chain(rng, 3) if uniform(rng) < 0.5 else hub_spoke(rng, 2)
    return wan(rng, 4, 1)


# --- addressing ---------------------------------------------------------------------------


def addressing(rng: np.random.Generator, level: str) -> Scenario:
    """Assign every interface its address and enable it; hosts must reach their gateway and
    each WAN neighbour must answer a ping."""
    t = topology_for(rng, level)
    routers = t.routers()
    reference = {r: base_config(t, r) for r in routers}
    start = {r: f"hostname {r}" for r in routers}
    reqs, checks = [], []
    lan_ifs = {(r, i) for r, i, _ in t.lans}
    for (dev, iface), addr in sorted(t.addr.items()):
        how = "exact"
        if level != "easy" and (dev, iface) in lan_ifs:
            how = "first"
        elif level == "hard":
            hosts = Hosts(addr.network)
            how = "first" if addr.ip == hosts[0] else "last"
        reqs.append(
            {"type": "address", "device": dev, "interface": iface, "address": str(addr), "how": how}
        )
        checks.append({"g": "addressing", "dev": dev, "if": iface, "ip": str(addr)})
    for h, (_hip, gw) in sorted(t.hosts.items()):
        checks.append({"g": "reach", "src": h, "dst": str(gw)})
    for a, _ai, b, bi, _net in t.wans:
        checks.append({"g": "reach", "src": a, "dst": dotted(int(t.addr[(b, bi)]))})
    return Scenario(t, reference, start, reqs, checks)


# --- routing ------------------------------------------------------------------------------


def _graph(t: Topo) -> nx.Graph:
    g = nx.Graph()
    for a, ai, b, bi, _net in t.wans:
        g.add_edge(a, b, ports=((a, ai), (b, bi)))
    return g


def _static_lines(t: Topo, g: nx.Graph, r: str) -> list[str]:
    """Static routes from ``r`` to every remote LAN along the shortest path of hops."""
    lines = []
    for owner, _iface, net in t.lans:
        if owner == r:
            continue
        nxt = nx.shortest_path(g, r, owner)[1]
        (x, xi), (y, yi) = g.edges[r, nxt]["ports"]
        far = (y, yi) if x == r else (x, xi)
        lines.append(f"ip route {dotted(int(net.network_address))} {dotted(int(net.netmask))} "
                     f"{dotted(int(t.addr[far]))}")
    return lines


def _ospf_lines(t: Topo, r: str, passive: bool, costs: dict) -> tuple[list[str], dict]:
    extra: dict[str, list[str]] = {}
    for (dev, iface), cost in costs.items():
        if dev == r:
            extra.setdefault(iface, []).append(f" ip ospf cost {cost}")
    lines = ["router ospf 1"]
    if passive:
        lines += [f" passive-interface {i}" for o, i, _ in t.lans if o == r]
    for _iface, addr in own_addrs(t, r):
        lines.append(f" network {wildcard(addr.network)} area 0")
    return lines, extra


def _waypoint(rng: np.random.Generator, t: Topo, g: nx.Graph) -> tuple[str, str, str, dict]:
    """A (src, dst, via) triple and interface costs that force the path through ``via``."""
    routers = sorted(g.nodes)
    for _attempt in range(1000):
        # indices into the list: the draws of choosing from the list itself
        a, b, c = (routers[k] for k in choose(rng, len(routers), 3))
        path = nx.shortest_path(g, a, c) + nx.shortest_path(g, c, b)[1:]
        if len(set(path)) == len(path) and len(path) >= 3:
            break
    else:
        raise RuntimeError("no waypoint triple found in 1000 draws (a generator bug)")
    on_path = {frozenset(e) for e in zip(path, path[1:])}
    costs = {}
    for u, v, data in g.edges(data=True):
        if frozenset((u, v)) not in on_path:
            for port in data["ports"]:
                costs[port] = 100
    return a, b, c, costs


def routing(rng: np.random.Generator, level: str, proto: str | None = None) -> Scenario:
    """Static routes (easy) or OSPF (medium, hard with a waypoint) so every LAN reaches every
    other; routes must come from the required protocol (``proto`` overrides the level's)."""
    t = topology_for(rng, level)
    g = _graph(t)
    proto = proto or ("static" if level == "easy" else "ospf")
    passive = proto == "ospf" and level != "easy"
    costs: dict = {}
    reqs: list[dict] = [{"type": "routing", "protocol": proto}]
    if proto == "ospf":
        reqs[0].update({"process": 1, "area": 0, "passive": passive})

    checks: list[dict] = []
    if level == "hard" and proto == "ospf":
        a, b, via, costs = _waypoint(rng, t, g)
        ha = next(h for h, (_, gw) in t.hosts.items() if _lan_owner(t, gw) == a)
        hb = next(h for h, (_, gw) in t.hosts.items() if _lan_owner(t, gw) == b)
        reqs.append({"type": "waypoint", "src": ha, "dst": hb, "via": via})
        checks.append({"g": "waypoint", "src": ha, "dst": dotted(int(t.hosts[hb][0])), "via": via})
    reference, start = {}, {}
    for r in t.routers():
        start[r] = base = base_config(t, r)
        if proto == "static":
            reference[r] = base + "\n" + "\n".join(_static_lines(t, g, r))
        else:
            lines, extra = _ospf_lines(t, r, passive, costs)
            reference[r] = base_config(t, r, extra) + "\n" + "\n".join(lines)
    _routing_checks(t, proto, passive, reqs, checks)
    checks += host_collateral(rng, t.hosts)
    return Scenario(t, reference, start, reqs, checks)


def _lan_owner(t: Topo, gw: ipaddress.IPv4Address) -> str:
    return next(r for r, i, net in t.lans if gw in net)


def _routing_checks(t: Topo, proto: str, passive: bool, reqs: list, checks: list) -> None:
    """Reachability between every pair of hosts, the protocol each router forwards to every
    remote LAN by, and the protocol's own requirements: no dynamic routing for "static
    only"; for OSPF every interface in area 0, an adjacency on every router-to-router link,
    unique router IDs and (when asked) passive LAN interfaces."""
    code = "S" if proto == "static" else "O"
    hosts = sorted(t.hosts)
    text = {h: dotted(int(t.hosts[h][0])) for h in hosts}  # written once, read n - 1 times
    for h in hosts:
        for other in hosts:
            if other != h:
                checks.append({"g": "reach", "src": h, "dst": text[other]})
        if h != hosts[0]:
            reqs.append({"type": "reach", "src": hosts[0], "dst": f"{h} ({t.hosts[h][0].ip})"})
    prefixes = [net_text(net) for _o, _i, net in t.lans]
    for r in t.routers():
        if proto == "static":
            checks.append({"g": "static_only", "dev": r})
        for (owner, iface, _net), prefix in zip(t.lans, prefixes):
            if owner != r:
                checks.append({"g": "routing", "dev": r, "prefix": prefix, "proto": code})
            elif passive:
                checks.append({"g": "passive", "dev": r, "if": iface})
    if proto == "ospf":
        for (dev, iface), _addr in sorted(t.addr.items()):
            checks.append({"g": "ospf_area", "dev": dev, "if": iface, "area": 0})
        for a, ai, b, _bi, _net in t.wans:
            checks.append({"g": "adjacency", "a": a, "if": ai, "b": b})
        checks.append({"g": "router_ids", "devs": t.routers()})
