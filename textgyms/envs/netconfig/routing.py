"""Layer 3 control plane: connected routes, OSPF adjacencies and shortest paths by cost,
static routes, and the RIB chosen by administrative distance."""

from __future__ import annotations

import heapq
import ipaddress
from collections.abc import Mapping
from typing import NamedTuple

from textgyms.envs.netconfig.model import DeviceConfig

AD = {"C": 0, "S": 1, "O": 110}


class L3If(NamedTuple):
    """An interface that is up and has an address."""

    name: str
    ip: int
    net: int
    plen: int
    domain: tuple


class Route(NamedTuple):
    """One RIB entry; ``fwd`` is the next hop packets are sent to (None: the destination)."""

    net: int
    plen: int
    proto: str  # "C" | "S" | "O"
    ad: int
    metric: int
    nexthop: int | None  # as displayed ("via ...")
    iface: str
    fwd: int | None


class Adjacency(NamedTuple):
    """An OSPF neighbour as seen from one router."""

    iface: str
    neighbor: str
    neighbor_ip: int
    neighbor_rid: int
    area: int


MASKS = tuple((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF for plen in range(33))


def mask(plen: int) -> int:
    """The netmask of a prefix length, as an int."""
    return MASKS[plen]


def ospf_area(cfg: DeviceConfig, ip: int) -> int | None:
    """The area of the first network statement that matches ``ip`` (None: not enabled)."""
    if cfg.ospf is None:
        return None
    for net, wc, area in cfg.ospf.networks:
        w = int(wc)
        if (ip | w) == (int(net) | w):
            return area
    return None


def router_id(cfg: DeviceConfig, l3: list[L3If]) -> int:
    """Configured router-id, else the highest loopback address, else the highest address."""
    if cfg.ospf is not None and cfg.ospf.router_id is not None:
        return int(cfg.ospf.router_id)
    loops = [i.ip for i in l3 if i.name.startswith("Loopback")]
    return max(loops or [i.ip for i in l3] or [0])


def ospf_adjacencies(
    configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]]
) -> tuple[dict[str, list[Adjacency]], list[tuple[str, str]]]:
    """OSPF neighbours per router (same domain, same subnet, same area, not passive), and
    syslog events (device, message) for the hello mismatches found."""
    by_domain: dict[tuple, list] = {}
    for dev, ifs in l3.items():
        cfg = configs[dev]
        if cfg.ospf is None:
            continue
        for i in ifs:
            area = ospf_area(cfg, i.ip)
            if area is not None and i.name not in cfg.ospf.passive:
                by_domain.setdefault(i.domain, []).append((dev, i, area))
    adj: dict[str, list[Adjacency]] = {d: [] for d in l3}
    logs: list[tuple[str, str]] = []
    rids = {d: router_id(configs[d], ifs) for d, ifs in l3.items()}
    for members in by_domain.values():
        for k, (da, ia, aa) in enumerate(members):
            for db, ib, ab in members[k + 1 :]:
                if da == db or (ia.net, ia.plen) != (ib.net, ib.plen):
                    continue
                if aa != ab:
                    for d, i, other in ((da, ia, ib), (db, ib, ia)):
                        logs.append((d, _area_log(other.ip, i.name)))
                    continue
                adj[da].append(Adjacency(ia.name, db, ib.ip, rids[db], aa))
                adj[db].append(Adjacency(ib.name, da, ia.ip, rids[da], ab))
    return adj, logs


def _area_log(src: int, iface: str) -> str:
    return (
        "%OSPF-4-ERRRCV: Received invalid packet: mismatched area ID, from backbone area "
        f"must be virtual-link but not found from {ipaddress.IPv4Address(src)}, {iface}"
    )


def _spf(src: str, graph: Mapping[str, list[tuple[str, int, int, str]]]):
    """Dijkstra from ``src``: distances and, per router, the set of first hops (ECMP)."""
    dist = {src: 0}
    first: dict[str, set[tuple[int, str]]] = {src: set()}
    heap = [(0, src)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for v, cost, nh, out in graph.get(u, ()):
            nd = d + cost
            hops = {(nh, out)} if u == src else first[u]
            if v not in dist or nd < dist[v]:
                dist[v], first[v] = nd, set(hops)
                heapq.heappush(heap, (nd, v))
            elif nd == dist[v]:
                first[v] |= hops
    return dist, first


def ospf_routes(
    configs: Mapping[str, DeviceConfig],
    l3: Mapping[str, list[L3If]],
    adj: Mapping[str, list[Adjacency]],
) -> dict[str, list[Route]]:
    """The OSPF routes of every router: shortest path by cost to every advertised subnet."""
    cost = {
        (d, i.name): (configs[d].interfaces[i.name].ospf_cost or 1)
        if i.name in configs[d].interfaces
        else 1
        for d, ifs in l3.items()
        for i in ifs
    }
    graph = {
        d: [(a.neighbor, cost[(d, a.iface)], a.neighbor_ip, a.iface) for a in n]
        for d, n in adj.items()
    }
    stubs: dict[tuple[int, int], list[tuple[str, int]]] = {}
    for d, ifs in l3.items():
        for i in ifs:
            if ospf_area(configs[d], i.ip) is not None:
                stubs.setdefault((i.net, i.plen), []).append((d, cost[(d, i.name)]))
    out: dict[str, list[Route]] = {}
    for d in l3:
        if configs[d].ospf is None:
            continue
        dist, first = _spf(d, graph)
        connected = {(i.net, i.plen) for i in l3[d]}
        routes = []
        for prefix, owners in stubs.items():
            if prefix in connected:
                continue
            best = [(dist[o] + c, o) for o, c in owners if o in dist and o != d]
            if not best:
                continue
            metric = min(m for m, _ in best)
            hops = sorted(set().union(*(first[o] for m, o in best if m == metric)))
            for nh, iface in hops:
                routes.append(Route(prefix[0], prefix[1], "O", 110, metric, nh, iface, nh))
        out[d] = routes
    return out


def connected_routes(ifs: list[L3If]) -> list[Route]:
    return [Route(i.net, i.plen, "C", 0, 0, None, i.name, None) for i in ifs]


def lookup(fib: tuple, dst: int) -> list[Route]:
    """Longest-prefix match: the best routes for ``dst`` (empty if none)."""
    for m, bucket in fib[2]:
        hit = bucket.get(dst & m)
        if hit:
            return hit
    return []


def static_routes(cfg: DeviceConfig, ifs: list[L3If], base: list[Route]) -> list[Route]:
    """Static routes whose next hop resolves through connected or OSPF routes, or whose exit
    interface is up."""
    fib = build_fib(base)
    up = {i.name for i in ifs}
    out = []
    for r in cfg.routes:
        net, plen = int(r.prefix.network_address), r.prefix.prefixlen
        if r.iface is not None:
            if r.iface in up:
                out.append(Route(net, plen, "S", r.ad, 0, None, r.iface, None))
            continue
        via = lookup(fib, int(r.nexthop))
        if via:
            fwd = int(r.nexthop) if via[0].proto == "C" else via[0].fwd
            out.append(Route(net, plen, "S", r.ad, 0, int(r.nexthop), via[0].iface, fwd))
    return out


def select(candidates: list[Route]) -> list[Route]:
    """The RIB: for each prefix, the routes of the lowest administrative distance."""
    best: dict[tuple[int, int], list[Route]] = {}
    for r in candidates:
        key = (r.net, r.plen)
        cur = best.get(key)
        if cur is None or r.ad < cur[0].ad:
            best[key] = [r]
        elif r.ad == cur[0].ad and r not in cur:
            cur.append(r)
    return [r for key in sorted(best) for r in best[key]]


def build_fib(rib: list[Route]) -> tuple:
    """Index a RIB by prefix length for longest-prefix match: (prefix lengths, table,
    [(netmask, routes by network)] longest first)."""
    table: dict[int, dict[int, list[Route]]] = {}
    for r in rib:
        table.setdefault(r.plen, {}).setdefault(r.net, []).append(r)
    plens = sorted(table, reverse=True)
    return plens, table, [(MASKS[p], table[p]) for p in plens]
