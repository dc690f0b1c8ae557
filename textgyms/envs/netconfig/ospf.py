"""OSPFv2 as IOS runs it: adjacencies, per-area shortest paths, inter-area routes through
area border routers, external routes from redistribution, and equal-cost multipath.

* An adjacency needs the same segment, subnet, area, hello and dead intervals, no passive
  end, different router IDs (a duplicate is logged and refused, as on IOS), matching
  authentication, hellos that each end's inbound ACL lets in (OSPF is IP protocol 89 to
  224.0.0.5; outbound ACLs skip a router's own packets) and, on a broadcast segment, a
  router that can be DR (see :mod:`ospf_opts`).
* Each area runs its own SPF. Intra-area routes (``O``) beat inter-area ones (``O IA``),
  which beat externals (``O E1``, then ``O E2`` by metric, ties by the cost to the ASBR).
* An ABR (interfaces in area 0 and another area) summarises the intra-area routes of its
  non-backbone areas into area 0, and everything it knows into its other areas; it only
  uses summaries heard over the backbone. A non-backbone area with no ABR is an island.
* Stub areas (``area A stub``, agreed by every router in the area: the hello's stub flag must
  match) get no external routes; their ABRs send a default route (cost 1) instead, and with
  ``no-summary`` (totally stubby) no inter-area routes but that default.
* Loopbacks are advertised as /32 host routes; interface cost is ``ip ospf cost`` or the
  reference bandwidth (100 Mbit/s unless ``auto-cost``) divided by the bandwidth.
"""

from __future__ import annotations

import functools
import heapq
import ipaddress
from collections.abc import Mapping
from typing import NamedTuple

from textgyms.envs.netconfig import ospf_opts, policy
from textgyms.envs.netconfig.acl import evaluate
from textgyms.envs.netconfig.bounded import Key, Memo, by_identity
from textgyms.envs.netconfig.model import Acl, DeviceConfig
from textgyms.envs.netconfig.routing import (
    R_IFACE,
    R_NET,
    R_PLEN,
    R_PROTO,
    R_TAG,
    L3If,
    Route,
    network_area,
    network_ints,
    router_id,
)

DEFAULT_BW = {  # kbit/s, as IOS sets them per interface type
    "GigabitEthernet": 1_000_000, "FastEthernet": 100_000, "Ethernet": 10_000,
    "TenGigabitEthernet": 10_000_000, "Serial": 1_544, "Loopback": 8_000_000,
    "Vlan": 1_000_000,
}
RANK = {"O": 0, "O IA": 1, "O E1": 2, "O N1": 2, "O E2": 3, "O N2": 3}
# A route's first hops, (next-hop address, out interface) pairs, sorted: a tuple of plain
# values, which SPF results share instead of copying and the garbage collector stops
# tracking (the SPF memo holds thousands).
Hops = tuple[tuple[int, str], ...]


def area_flag(kind: int) -> int:
    """What a hello says of the area (its E and N option bits): 0 normal, 1 stub, 2 NSSA;
    neighbours must agree on it."""
    return (0, 1, 1, 2, 2)[kind]


class Adjacency(NamedTuple):
    """An OSPF neighbour as seen from one router."""

    iface: str
    neighbor: str
    neighbor_ip: int
    neighbor_rid: int
    area: int
    usable: bool = True  # False: FULL, but the two ends describe the link differently


_new_adj = functools.partial(tuple.__new__, Adjacency)  # Adjacency(*fields), all given


class OspfIf(NamedTuple):
    """One up interface OSPF runs on, with what adjacency and SPF read of it."""

    dev: str
    l3: L3If
    area: int
    cost: int
    passive: bool
    timers: tuple[int, int]
    stub: int = 0  # the router's view of the area: 0 normal, 1 stub, 2 totally stubby
    auth: ospf_opts.Auth = ospf_opts.NULL_AUTH  # authentication type and keys
    dr: tuple[bool, int] = (False, 1)  # (the network elects a DR, the priority)
    kind: str = "broadcast"  # the OSPF network type
    acl_in: tuple | None = None  # the inbound ACL's entries (None: no filter)


_new_oif = functools.partial(tuple.__new__, OspfIf)  # OspfIf(*fields), every field given


def if_cost(cfg: DeviceConfig, name: str) -> int:
    """``ip ospf cost`` or reference bandwidth / interface bandwidth (at least 1)."""
    itf = cfg.interfaces.get(name)
    if itf is not None and itf.ospf_cost is not None:
        return itf.ospf_cost
    return bw_cost(cfg, name, cfg.ospf.ref_bw if cfg.ospf is not None else 100)


def bw_cost(cfg: DeviceConfig, name: str, ref: int) -> int:
    """The reference bandwidth ``ref`` (Mbit/s) / the interface bandwidth, in 1..65535."""
    return _bw_cost(cfg.interfaces, cfg.interfaces.get(name), name, ref)


def _bw_cost(interfaces: dict, itf, name: str, ref: int) -> int:
    """:func:`bw_cost` of interface ``name`` (``itf``: its settings, None if it has none)."""
    bw = itf.bandwidth if itf is not None and itf.bandwidth else None
    if not bw:
        parent = interfaces.get(name.split(".", 1)[0])
        bw = parent.bandwidth if parent is not None and parent.bandwidth else None
    bw = bw or DEFAULT_BW.get(name.rstrip("0123456789/."), 1_000_000)
    return max(1, min(65535, ref * 1000 // bw))


def ospf_interfaces(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]],
                    rids: Mapping[str, int]) -> list[OspfIf]:
    """Every up interface OSPF runs on, with its area, cost, passivity and timers."""
    out = []
    for dev, ifs in l3.items():
        cfg = configs[dev]
        if cfg.ospf is None or not rids[dev]:
            continue
        # A device's part depends on its config and interfaces alone: a network compiled
        # again with the same shared config and interfaces (another submission, a link
        # failed elsewhere) reuses it.
        out += by_identity(_OIFS, cfg, (dev, tuple(ifs)),
                           lambda d=dev, c=cfg, i=ifs: _device_oifs(d, c, i))
    return out


_OIFS = Memo(1024)  # (config id, device, interfaces) -> (config, its OSPF interfaces)


def _device_oifs(dev: str, cfg: DeviceConfig, ifs: list[L3If]) -> list[OspfIf]:
    """The OSPF interfaces of one router (with a router ID) among its up interfaces."""
    ospf = cfg.ospf
    interfaces = cfg.interfaces
    nets = None  # the network statements as ints, converted once per router when needed
    out = []
    for i in ifs:
        name = i.name
        itf = interfaces.get(name)
        if itf is not None and itf.ospf_area is not None and itf.ospf_area[0] == ospf.pid:
            area = itf.ospf_area[1]
        else:  # routing.ospf_area over the statements converted once
            if nets is None:
                nets = network_ints(ospf)
            area = network_area(nets, i.ip)
            if area is None:
                continue
        kind = ospf_opts.net_type(itf, name)
        hello = (itf.ospf_hello if itf is not None else None) or ospf_opts.default_hello(kind)
        dead = (itf.ospf_dead if itf is not None else None) or 4 * hello
        passive = ospf.is_passive(name) or name.startswith("Loopback")
        acl = cfg.acls.get(itf.acl_in) if itf is not None and itf.acl_in else None
        cost = itf.ospf_cost if itf is not None and itf.ospf_cost is not None else \
            _bw_cost(interfaces, itf, name, ospf.ref_bw)
        prio = itf.ospf_priority if itf is not None and itf.ospf_priority is not None else 1
        out.append(_new_oif((dev, i, area, cost, passive, (hello, dead), ospf.stub_kind(area),
                             ospf_opts.auth_of(itf, ospf, area),
                             (kind in ospf_opts.DR_TYPES, prio), kind,
                             tuple(acl.entries) if acl is not None and acl.entries else None)))
    return out


def adjacencies(oifs: list[OspfIf], rids: Mapping[str, int], devices) -> tuple[
    dict[str, list[Adjacency]], list[tuple[str, str]]
]:
    """OSPF neighbours per router and syslog events (device, message) for the mismatches."""
    by_domain: dict[tuple, list[OspfIf]] = {}
    for o in oifs:
        if not o.passive:
            by_domain.setdefault(o.l3.domain, []).append(o)
    adj: dict[str, list[Adjacency]] = {d: [] for d in devices}
    logs: list[tuple[str, str]] = []
    for members in by_domain.values():
        # A DR is elected among the routers of priority above 0 on DR networks; without one
        # no two of them get past 2WAY.
        dr = any(o.dr[1] > 0 for o in members if o.dr[0])
        for k, a in enumerate(members):
            for b in members[k + 1:]:
                if a.dev == b.dev or (a.l3.net, a.l3.plen) != (b.l3.net, b.l3.plen):
                    continue
                if a.area != b.area:
                    logs += [(x.dev, _area_log(y.l3.ip, x.l3.name)) for x, y in ((a, b), (b, a))]
                    continue
                if a.timers != b.timers or area_flag(a.stub) != area_flag(b.stub):
                    continue  # hellos are dropped (timers, stub flag): no log by default
                if not ospf_opts.authenticates(a.auth, b.auth):
                    continue  # packets fail authentication (seen only with debug)
                if not (hears(a, b) and hears(b, a)):
                    continue  # an inbound ACL drops the other's hellos
                if a.dr[0] and b.dr[0] and not dr:
                    continue  # no DR: the neighbours stay 2WAY
                if rids[a.dev] == rids[b.dev]:
                    logs += [(x.dev, _dup_log(rids[x.dev], y.l3.ip, x.l3.name))
                             for x, y in ((a, b), (b, a))]
                    continue
                # Different network types with the same timers (point-to-point against
                # broadcast) reach FULL, but one router LSA lists a point-to-point link and
                # the other a transit network: SPF's two-way check fails, no route uses it.
                same = a.kind == b.kind
                adj[a.dev].append(_new_adj((a.l3.name, b.dev, b.l3.ip, rids[b.dev], a.area, same)))
                adj[b.dev].append(_new_adj((b.l3.name, a.dev, a.l3.ip, rids[a.dev], b.area, same)))
    return adj, logs


ALL_SPF_ROUTERS = int(ipaddress.IPv4Address("224.0.0.5"))
OSPF_PROTO = 89


def hears(a: OspfIf, b: OspfIf) -> bool:
    """Whether ``a``'s inbound ACL lets ``b``'s hellos in (IP protocol 89 from ``b``'s
    address to 224.0.0.5); outbound ACLs never filter a router's own hellos."""
    if a.acl_in is None:
        return True
    acl = Acl("", "extended", list(a.acl_in))
    return evaluate(acl, (b.l3.ip, ALL_SPF_ROUTERS, OSPF_PROTO, 0, 0, False))[0]


def _area_log(src: int, iface: str) -> str:
    return (
        "%OSPF-4-ERRRCV: Received invalid packet: mismatched area ID, from backbone area "
        f"must be virtual-link but not found from {ipaddress.IPv4Address(src)}, {iface}"
    )


def _dup_log(rid: int, src: int, iface: str) -> str:
    return (f"%OSPF-4-DUP_RTRID_NBR: OSPF detected duplicate router-id "
            f"{ipaddress.IPv4Address(rid)} from {ipaddress.IPv4Address(src)} on interface "
            f"{iface}")


def _union(a: Hops, b) -> Hops:
    """First hops ``a`` and ``b`` together, sorted (equal-cost paths: rare)."""
    return tuple(sorted(set(a).union(b)))


def _spf(src: str, graph: Mapping[str, list[tuple[str, int, int, str]]]):
    """Dijkstra from ``src``: distances and, per router, its first hops (ECMP), sorted."""
    dist = {src: 0}
    first: dict[str, Hops] = {src: ()}
    heap = [(0, src)]
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        d, u = pop(heap)
        if d > dist[u]:
            continue
        for v, cost, nh, out in graph.get(u, ()):
            nd = d + cost
            if v not in dist or nd < dist[v]:
                # (from the source, its one first hop; else those of the router before)
                dist[v], first[v] = nd, ((nh, out),) if u == src else first[u]
                push(heap, (nd, v))
            elif nd == dist[v]:
                first[v] = _union(first[v], ((nh, out),) if u == src else first[u])
    return dist, first


class Areas:
    """Per-area graphs, stub prefixes and SPF results. ``host_plen`` is the length of a
    loopback's host route (32; 128 for OSPFv3); an interface with a negative ``plen`` joins
    its area without a prefix (OSPFv3 on a link-local-only link)."""

    def __init__(self, oifs: list[OspfIf], adj: Mapping[str, list[Adjacency]],
                 host_plen: int = 32) -> None:
        cost: dict[tuple[str, str], int] = {}
        self.stub: dict[tuple[str, int], int] = {}
        self.members: dict[int, set[str]] = {}
        self.stubs: dict[int, dict[tuple[int, int], list[tuple[str, int]]]] = {}
        for o in oifs:  # (one pass over the interfaces for all four)
            dev, l3, area = o.dev, o.l3, o.area
            cost[(dev, l3.name)] = o.cost
            self.stub[(dev, area)] = o.stub
            ms = self.members.get(area)
            if ms is None:
                ms = self.members[area] = set()
            ms.add(dev)
            if l3.plen < 0:
                continue
            loop = l3.name.startswith("Loopback")
            pfx = (l3.ip, host_plen) if loop else (l3.net, l3.plen)
            by_pfx = self.stubs.get(area)  # (no throwaway dict and list per interface)
            if by_pfx is None:
                by_pfx = self.stubs[area] = {}
            owners = by_pfx.get(pfx)
            if owners is None:
                by_pfx[pfx] = [(dev, o.cost)]
            else:
                owners.append((dev, o.cost))
        graphs: dict[int, dict] = {a: {} for a in self.members}
        for d, ns in adj.items():
            for a in ns:
                if a.usable:
                    graphs[a.area].setdefault(d, []).append(
                        (a.neighbor, cost[(d, a.iface)], a.neighbor_ip, a.iface))
        self.spf = {(a, r): _spf(r, graphs[a]) for a, ms in self.members.items() for r in ms}
        # An ABR is in area 0 and another: none without two areas.
        self.abrs = {r for r in self.members.get(0, ())
                     if any(r in ms for a, ms in self.members.items() if a != 0)} \
            if len(self.members) > 1 else set()
        self._areas_of: dict[str, list[int]] = {}

    def areas_of(self, r: str) -> list[int]:
        """The areas ``r`` is in, in order (computed once per router: SPF asks often)."""
        found = self._areas_of.get(r)
        if found is None:
            found = self._areas_of[r] = sorted(a for a, ms in self.members.items() if r in ms)
        return list(found)

    def only_stub(self, r: str) -> bool:
        """Whether every area of ``r`` is a stub or NSSA (no type-5 LSA reaches it)."""
        return all(self.stub.get((r, a), 0) for a in self.areas_of(r))

    def nssa_areas(self, r: str) -> list[int]:
        """The not-so-stubby areas ``r`` is in."""
        return [a for a in self.areas_of(r) if self.stub.get((r, a), 0) >= 3]

    def intra(self, r: str, area: int) -> dict[tuple[int, int], tuple[int, Hops]]:
        """Prefixes of ``area`` reachable from ``r`` inside it: cost and first hops."""
        dist, first = self.spf[(area, r)]
        out: dict[tuple[int, int], tuple[int, Hops]] = {}
        for pfx, owners in self.stubs.get(area, {}).items():
            if len(owners) == 1:  # most prefixes have one router on them
                o, c = owners[0]
                if o in dist:
                    out[pfx] = (dist[o] + c, first[o])
                continue
            best = _nearest(owners, dist, first)
            if best is not None:
                out[pfx] = best
        return out


def _nearest(owners: list[tuple[str, int]], dist: dict, first: dict) -> tuple[int, Hops] | None:
    """(cost, first hops) of a prefix with several routers on it (a transit link): the
    cheapest of (distance to the owner + its interface cost), the first hops of every owner
    at that cost; None if no owner is reachable."""
    m = hops = None
    for o, c in owners:
        d = dist.get(o)
        if d is None:
            continue
        x = d + c
        if m is None or x < m:
            m, hops = x, first[o]
        elif x == m:
            hops = _union(hops, first[o])
    return None if m is None else (m, hops)


def _intra_table(areas: Areas, r: str, area: int) -> dict[tuple[int, int], tuple]:
    """``areas.intra(r, area)`` as a fresh table (what :func:`_merge` makes of it in an
    empty one): prefix -> ("O", cost, the first hops, tag 0)."""
    dist, first = areas.spf[(area, r)]
    out: dict[tuple[int, int], tuple] = {}
    for pfx, owners in areas.stubs.get(area, {}).items():
        if len(owners) == 1:  # most prefixes have one router on them
            o, c = owners[0]
            if o in dist:
                out[pfx] = ("O", dist[o] + c, first[o], 0)
            continue
        best = _nearest(owners, dist, first)
        if best is not None:
            out[pfx] = ("O", best[0], best[1], 0)
    return out


def _merge(table: dict, pfx, kind: str, cost, hops, tag: int = 0) -> None:
    """Keep the better route (type first, then cost); equal ones add their next hops. An
    entry is (kind, cost, first hops, route tag), all of it immutable: a table is copied by
    copying its dict (see :func:`with_externals`), and the garbage collector stops
    tracking an entry of plain values."""
    cur = table.get(pfx)
    key = (RANK[kind], cost)
    if cur is None or key < (RANK[cur[0]], cur[1]):
        table[pfx] = (kind, cost, hops if type(hops) is tuple else tuple(sorted(hops)), tag)
    elif key == (RANK[cur[0]], cur[1]):
        table[pfx] = (cur[0], cur[1], _union(cur[2], hops), cur[3])


def _via(areas: Areas, r: str, area: int, b: str):
    """(cost, first hops) from ``r`` to router ``b`` inside ``area``, or None."""
    dist, first = areas.spf[(area, r)]
    return (dist[b], first[b]) if b in dist and b != r else None


def internal_tables(areas: Areas) -> dict[str, dict]:
    """Per router, prefix -> (kind, cost, first hops) for intra- and inter-area routes."""
    routers = {r for ms in areas.members.values() for r in ms}
    if not areas.abrs:  # no summaries: each router's intra-area routes are its table
        return {r: _table_of(areas, r) for r in routers}
    intra_area = {(r, a): areas.intra(r, a) for r in routers for a in areas.areas_of(r)}
    tables: dict[str, dict] = {r: {} for r in routers}
    for (r, _a), routes in intra_area.items():
        table = tables[r]
        if table:
            for pfx, (c, hops) in routes.items():
                _merge(table, pfx, "O", c, hops)
        else:  # what _merge does with each prefix of one area into an empty table
            for pfx, (c, hops) in routes.items():
                table[pfx] = ("O", c, hops, 0)
    # What each ABR summarises into the backbone: its non-backbone intra-area routes.
    into0 = {b: {} for b in areas.abrs}
    for b in areas.abrs:
        for a in areas.areas_of(b):
            for pfx, (c, _h) in intra_area[(b, a)].items() if a != 0 else ():
                into0[b][pfx] = min(c, into0[b].get(pfx, c))
    for b in sorted(areas.abrs):  # ABRs first: they only listen to the backbone
        _summaries(tables[b], areas, b, 0, {b2: into0[b2] for b2 in areas.abrs})
    for r in sorted(routers - areas.abrs):
        for a in areas.areas_of(r):
            heard = {}
            for b in areas.abrs & areas.members[a]:
                if a == 0:
                    heard[b] = into0[b]
                else:  # everything the ABR routes, except what it learned inside area a
                    heard[b] = _into_area(areas, tables[b], intra_area[(b, a)], b, a)
            _summaries(tables[r], areas, r, a, heard)
    return tables


def _table_of(areas: Areas, r: str) -> dict:
    """Router ``r``'s intra-area routes of all its areas (the best of each prefix)."""
    table = None
    for a in areas.areas_of(r):
        if table is None:
            table = _intra_table(areas, r, a)
        else:
            for pfx, (c, hops) in areas.intra(r, a).items():
                _merge(table, pfx, "O", c, hops)
    return {} if table is None else table


def _into_area(areas: Areas, abr_table: dict, learned_here: dict, b: str, a: int) -> dict:
    """The summaries ABR ``b`` sends into non-backbone area ``a``: its intra- and inter-area
    routes not learned inside ``a``; into a stub area also a default route (cost 1, IOS's
    ``area default-cost``), and into a totally stubby one that default alone."""
    kind = areas.stub.get((b, a), 0)
    if kind in (2, 4):  # totally stubby, totally NSSA: the default summary alone
        return {(0, 0): 1}
    out = {p: e[1] for p, e in abr_table.items() if p not in learned_here and e[0] in ("O", "O IA")}
    return {**out, (0, 0): 1} if kind == 1 else out


def _summaries(table: dict, areas: Areas, r: str, area: int, heard: dict) -> None:
    """Add the inter-area routes ``r`` derives from the summaries ``heard`` in ``area``."""
    if not heard:  # (an area without an ABR, most: no summaries)
        return
    intra = {p for p, e in table.items() if e[0] == "O"}
    for b, routes in heard.items():
        via = _via(areas, r, area, b)
        if via is None:
            continue
        for pfx, c in routes.items():
            if pfx not in intra:
                _merge(table, pfx, "O IA", via[0] + c, via[1])


def _asbr_path(areas: Areas, r: str, s: str, depth: int = 2):
    """(cost, first hops) from ``r`` to the ASBR ``s``: inside a common area, else through
    an ABR (ABRs only through the backbone)."""
    best = None
    for a in areas.areas_of(r):
        direct = _via(areas, r, a, s) if s in areas.members[a] else None
        cands = [direct] if direct else []
        if depth and (r not in areas.abrs or a == 0):
            for b in areas.abrs & areas.members[a]:
                first, rest = _via(areas, r, a, b), _asbr_path(areas, b, s, depth - 1)
                if first and rest and b != s:
                    cands.append((first[0] + rest[0], first[1]))
        for c in cands:
            if best is None or c[0] < best[0]:
                best = (c[0], set(c[1]))
            elif c[0] == best[0]:
                best[1].update(c[1])
    return best


def external_routes(areas: Areas, tables: dict, externals: dict[str, list],
                    nssa_defaults: dict[str, list[int]] | None = None) -> None:
    """Add external routes: ``externals`` maps an ASBR to (prefix, metric, type, tag), the
    tag carried in the LSA to every router that installs it. Inside an
    NSSA they are type-7 (``O N1``/``O N2``, from ASBRs of that area, over intra-area
    paths); elsewhere type-5 (``O E1``/``O E2``), an NSSA's ASBR reaching them once its ABR
    translates. ``nssa_defaults`` maps an ABR to the NSSAs it sends a type-7 default into
    (``area A nssa default-information-originate``)."""
    for r, table in tables.items():
        internal = set(table)
        for b, nssas in (nssa_defaults or {}).items():
            for a in nssas:
                via = _via(areas, r, a, b) if r in areas.members.get(a, ()) else None
                if via is not None and (0, 0) not in internal:
                    _merge(table, (0, 0), "O N2", (1 << 24) + via[0], via[1])
        for s, prefixes in externals.items():
            if s == r or (areas.only_stub(s) and not areas.nssa_areas(s)):
                continue  # a router only in stub areas cannot be an ASBR
            path, kind = _external_path(areas, r, s)
            if path is None:
                continue
            for pfx, metric, mtype, tag in prefixes:
                if pfx in internal:
                    continue
                if mtype == 1:
                    _merge(table, pfx, f"O {kind}1", path[0] + metric, path[1], tag)
                else:  # E2: the metric alone, ties broken by the cost to the ASBR
                    _merge(table, pfx, f"O {kind}2", (metric << 24) + path[0], path[1], tag)


def with_externals(areas: Areas, tables: dict[str, dict], externals: dict[str, list],
                   nssa_defaults: dict[str, list[int]]) -> dict[str, dict]:
    """The shared internal ``tables`` with the external routes added (see
    :func:`external_routes`): copies when there are any (external routes only ever add
    entries, so the copies' shared entries stay intact), else the tables themselves."""
    if not nssa_defaults and not any(externals.values()):
        return tables
    tables = {r: dict(t) for r, t in tables.items()}
    external_routes(areas, tables, externals, nssa_defaults)
    return tables


def nssa_defaults(configs: Mapping[str, DeviceConfig], areas: Areas) -> dict[str, list[int]]:
    """ABR -> the NSSAs it sends a type-7 default into (``default-information-originate``
    on its ``area A nssa``)."""
    out = {}
    for r in sorted(areas.abrs):
        ospf = configs[r].ospf
        nssas = [a for a in areas.nssa_areas(r) if ospf.nssa.get(a, (0, 0, 0))[1]]
        if nssas:
            out[r] = nssas
    return out


def _external_path(areas: Areas, r: str, s: str):
    """(cost and first hops from ``r`` to ASBR ``s``, "N" or "E"), or (None, "")."""
    shared = [a for a in areas.nssa_areas(s) if r in areas.members.get(a, ())]
    if shared:  # type 7 inside the NSSA both are in
        vias = [v for v in (_via(areas, r, a, s) for a in shared) if v is not None]
        return (min(vias, key=lambda v: v[0]), "N") if vias else (None, "")
    if areas.only_stub(r):
        return None, ""  # no type-5 LSA is flooded into stub areas and NSSAs
    return _asbr_path(areas, r, s), "E"


def to_routes(table: dict) -> list[Route]:
    """A router's OSPF table as RIB candidates (one per equal-cost next hop)."""
    out = []
    for pfx in sorted(table):  # (the keys alone: cheaper to compare than the items)
        kind, cost, hops, tag = table[pfx]
        metric = cost >> 24 if kind == "O E2" else cost
        for nh, iface in sorted(hops) if len(hops) > 1 else hops:  # most have one next hop
            out.append((pfx[0], pfx[1], kind, 110, metric, nh, iface, nh, tag))
    return out


def classful(net: int, plen: int) -> bool:
    """Whether a prefix is a whole class A, B or C network."""
    first = net >> 24
    clen = 8 if first < 128 else 16 if first < 192 else 24 if first < 224 else 32
    return plen == clen


def redistributed(cfg: DeviceConfig, rib: list[Route], l3: list[L3If],
                  oifs: list[OspfIf]) -> list[tuple[tuple[int, int], int, int, int]]:
    """What an ASBR injects: statics, non-OSPF connected subnets and BGP routes it
    redistributes (classful networks only without ``subnets``, never the default route) and
    the default route of ``default-information originate`` (if it has one, or ``always``); a
    route-map on ``redistribute`` lets through only what it permits (``match tag`` reads the
    route's tag), with its ``set metric``, ``set metric-type`` and ``set tag``. The LSA's tag
    is the route-map's ``set tag``, else ``redistribute ... tag N``, else the route's own
    (a static route's ``tag``). Entries are (prefix, metric, metric type, tag)."""
    ospf = cfg.ospf
    if ospf is None:
        return []
    out = []
    running = {o.l3.name for o in oifs}
    for source, code in (("static", "S"), ("connected", "C"), ("bgp", "B")):
        opts = ospf.redistribute.get(source)
        if opts is None:
            continue
        subnets, metric, mtype = opts
        rmap = ospf.redistribute_maps.get(source)
        for r in rib:
            net, plen = r[R_NET], r[R_PLEN]
            if r[R_PROTO] != code or plen == 0 or (code == "C" and r[R_IFACE] in running):
                continue
            m, t, tag = metric, mtype, ospf.redistribute_tags.get(source, r[R_TAG])
            if rmap is not None:
                e = policy.route_map_entry(cfg, rmap, net, plen, r[R_TAG])
                if e is None:
                    continue  # denied by the route-map (or it is not defined)
                m = e.metric if e.metric is not None else m
                t = e.metric_type if e.metric_type is not None else t
                tag = e.tag if e.tag is not None else tag
            if subnets or classful(net, plen):
                out.append(((net, plen), m, t, tag))
    if ospf.originate is not None:
        always, metric, mtype = ospf.originate
        if always or any(r[R_PLEN] == 0 and not r[R_PROTO].startswith("O") for r in rib):
            out.append(((0, 0), metric, mtype, 0))
    return sorted(set(out))


# Adjacencies, areas and SPF tables are a pure function of the OSPF interfaces and router
# IDs: a network compiled again (a second pass when BGP and OSPF redistribute into each
# other, a failed link OSPF does not run on, a submission that changed no OSPF input) reuses
# them. Callers read them only, except the tables, which each caller gets its own copy of.
_SPF = Memo(256)


def compute(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]]):
    """(adjacencies, syslog events, router IDs, OSPF interfaces, areas, internal tables,
    each router's internal tables as routes: :func:`to_routes`); all shared and read-only:
    a caller adding external routes copies the tables first (:func:`with_externals`)."""
    rids = {d: router_id(configs[d], l3[d]) if configs[d].ospf is not None else 0 for d in l3}
    oifs = ospf_interfaces(configs, l3, rids)

    def make():
        adj, logs = adjacencies(oifs, rids, l3)
        areas = Areas(oifs, adj)
        tables = internal_tables(areas)
        return adj, logs, areas, tables, {r: to_routes(t) for r, t in tables.items()}

    adj, logs, areas, tables, routes = _SPF.get(Key((tuple(oifs), tuple(rids.items()))), make)
    return adj, logs, dict(rids), oifs, areas, tables, routes
