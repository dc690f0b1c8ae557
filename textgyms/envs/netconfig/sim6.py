"""The IPv6 plane of a compiled network: addresses (global, EUI-64 and link-local), router
advertisements, OSPFv3, the IPv6 RIB/FIB and the IPv6 packet walk.

IOS semantics modelled:

* A router forwards IPv6 only with ``ipv6 unicast-routing``; only then does it send router
  advertisements, from which hosts take their default router (its link-local address), and
  run OSPFv3. Without it the router still has a table (connected, local, static routes) for
  the traffic it sends itself.
* Every IPv6 interface has a link-local address: configured, or FE80::/64 plus the EUI-64
  of the interface MAC (a stable MAC per device and interface stands in for the hardware's).
* The RIB has connected (``C``) prefixes, local (``L``) /128s, statics (``S``: a global next
  hop resolves recursively; a link-local one is used on its exit interface; an exit interface
  alone sends to the destination itself, which on Ethernet needs it on the link, as there is
  no proxy ND) and OSPFv3 routes (``O``, ``OI``), the best administrative distance winning,
  longest-prefix match and equal-cost multipath as for IPv4.
* OSPFv3 needs a 32-bit router ID: ``router-id``, else the highest IPv4 loopback address,
  else the highest IPv4 interface address; with none, the process does not start and logs
  ``%OSPFv3-4-NORTRID``. Neighbours meet over link-local addresses on a shared link (no
  common prefix needed), same area, hello and dead intervals, different router IDs, neither
  end passive; OSPF routes point at the neighbour's link-local address.

* Multiprotocol BGP, IPv6 unicast: sessions to neighbors named by global IPv6 address, the
  prefixes of ``network`` in ``address-family ipv6`` exchanged where both ends activate the
  family, installed as ``B`` (see :mod:`bgp`).

IPv6 ACLs, NAT64, OSPFv3 redistribution and IPv6 BGP policy are not modelled (see the docs
page's table).
"""

from __future__ import annotations

import ipaddress
import zlib
from collections.abc import Mapping

from textgyms.envs.netconfig import bgp, ospf, routing
from textgyms.envs.netconfig.model import DeviceConfig, Interface
from textgyms.envs.netconfig.ospf import Adjacency, OspfIf, area_flag
from textgyms.envs.netconfig.routing import R_FWD, R_IFACE, L3If, Route, Walk

LINK_LOCAL = int(ipaddress.IPv6Address("fe80::"))
LL_MASK = routing.MASKS6[10]
MAX_HOPS = 32
_EMPTY: dict = {}


def pseudo_mac(dev: str, iface: str) -> int:
    """A stable, locally administered 48-bit MAC for ``dev``'s ``iface``."""
    return (0x0E << 40) | (zlib.crc32(f"{dev}/{iface}".encode()) << 8) | (len(iface) & 0xFF)


def eui64(mac: int) -> int:
    """The modified EUI-64 interface identifier of a MAC (FFFE inserted, U/L bit flipped)."""
    hi, lo = mac >> 24, mac & 0xFFFFFF
    return ((hi << 40) | (0xFFFE << 24) | lo) ^ (1 << 57)


def addresses(dev: str, itf: Interface) -> tuple[int, list[tuple[int, int, int]]]:
    """(link-local address, [(address, network, prefix length)]) of an IPv6 interface."""
    ident = eui64(pseudo_mac(dev, itf.name))
    ll = int(itf.ipv6_ll) if itf.ipv6_ll is not None else LINK_LOCAL | ident
    out = []
    for a in itf.ipv6:
        net = a.iface.network
        addr = int(net.network_address) | ident if a.eui64 else int(a.iface.ip)
        out.append((addr, int(net.network_address), net.prefixlen))
    return ll, out


def forwards(kind: str, cfg: DeviceConfig) -> bool:
    """Routers and layer-3 switches forward IPv6 only with ``ipv6 unicast-routing``."""
    return kind in ("router", "l3switch") and cfg.ipv6_routing


def _nortrid(pid: int) -> str:
    return (f"%OSPFv3-4-NORTRID: OSPFv3 process {pid} could not pick a router-id, please "
            "configure manually")


class Plane6:
    """The IPv6 state of a network, compiled from its devices, broadcast domains and the
    IPv4 interfaces (OSPFv3 takes its router ID from them)."""

    def __init__(self, devices: Mapping[str, tuple[str, DeviceConfig]],
                 domain: Mapping[tuple[str, str], tuple], l3v4: Mapping[str, list[L3If]]):
        self.devices = devices
        self.domain = domain
        self.l3: dict[str, list[L3If]] = {d: [] for d in devices}  # global addresses
        self.ll: dict[tuple[str, str], int] = {}
        self.nd: dict[tuple, dict[int, tuple[str, str]]] = {}
        for (dev, name), dom in sorted(domain.items()):
            itf = devices[dev][1].interfaces.get(name)
            if itf is None or not itf.ipv6_on():
                continue
            ll, glob = addresses(dev, itf)
            self.ll[(dev, name)] = ll
            self.nd.setdefault(dom, {})[ll] = (dev, name)
            for addr, net, plen in glob:
                self.l3[dev].append(L3If(name, addr, net, plen, dom))
                self.nd[dom][addr] = (dev, name)
        self.own = {d: {i.ip: i.name for i in ifs} for d, ifs in self.l3.items()}
        for (dev, name), ll in self.ll.items():
            self.own[dev].setdefault(ll, name)
        self.routers = [d for d, (k, c) in devices.items() if forwards(k, c)]
        self._gateways: dict[str, tuple[str, int] | None] = {}  # host -> (link, router)
        # Every router has an IPv6 table for its own traffic; only ``self.routers`` forward.
        self._tables = [d for d, (k, _c) in devices.items() if k in ("router", "l3switch")]
        self._ospf(l3v4)
        self._rib()
        self._bgp(l3v4)

    # --- control plane ----------------------------------------------------------------------
    def _ospf(self, l3v4: Mapping[str, list[L3If]]) -> None:
        """OSPFv3: router IDs, interfaces, adjacencies, areas and the routes they give."""
        self.rids: dict[str, int] = {}
        self.events: list[tuple[str, str]] = []
        self.oifs: list[OspfIf] = []
        for dev in self.routers:
            cfg = self.devices[dev][1]
            if cfg.ospf6 is None:
                continue
            rid = routing.router_id(cfg, l3v4.get(dev, []), cfg.ospf6)
            if not rid:
                self.events.append((dev, _nortrid(cfg.ospf6.pid)))
                continue
            self.rids[dev] = rid
            self.oifs += self._ospf_ifs(dev, cfg)
        self.adjacencies = self._adjacencies([o for o in self.oifs if o.l3.plen < 0])
        self.areas = ospf.Areas(self.oifs, self.adjacencies, host_plen=128)
        self.tables = ospf.internal_tables(self.areas)

    def _ospf_ifs(self, dev: str, cfg: DeviceConfig) -> list[OspfIf]:
        """Per OSPFv3 interface that is up: one entry on its link-local address (for
        adjacencies; ``plen`` -1: no prefix) and one per global prefix it advertises."""
        out = []
        for name, itf in sorted(cfg.interfaces.items()):
            ll = self.ll.get((dev, name))
            if ll is None or itf.ospf6_area is None or itf.ospf6_area[0] != cfg.ospf6.pid:
                continue
            area = itf.ospf6_area[1]
            cost = itf.ospf6_cost or ospf.bw_cost(cfg, name, cfg.ospf6.ref_bw)
            hello = itf.ospf6_hello or 10
            timers = (hello, itf.ospf6_dead or 4 * hello)
            passive = cfg.ospf6.is_passive(name) or name.startswith("Loopback")
            dom = self.domain[(dev, name)]
            stub = cfg.ospf6.stub_kind(area)
            out.append(OspfIf(dev, L3If(name, ll, 0, -1, dom), area, cost, passive, timers, stub))
            out += [OspfIf(dev, i, area, cost, passive, timers, stub)
                    for i in self.l3[dev] if i.name == name]
        return out

    def _adjacencies(self, links: list[OspfIf]) -> dict[str, list[Adjacency]]:
        by_domain: dict[tuple, list[OspfIf]] = {}
        for o in links:
            if not o.passive:
                by_domain.setdefault(o.l3.domain, []).append(o)
        adj: dict[str, list[Adjacency]] = {d: [] for d in self.devices}
        for members in by_domain.values():
            for k, a in enumerate(members):
                for b in members[k + 1:]:
                    if a.dev == b.dev or a.area != b.area or a.timers != b.timers \
                            or area_flag(a.stub) != area_flag(b.stub):
                        continue
                    if self.rids[a.dev] == self.rids[b.dev]:
                        continue  # duplicate router ID: IOS refuses the neighbour
                    adj[a.dev].append(Adjacency(a.l3.name, b.dev, b.l3.ip, self.rids[b.dev],
                                                a.area))
                    adj[b.dev].append(Adjacency(b.l3.name, a.dev, a.l3.ip, self.rids[a.dev],
                                                b.area))
        return adj

    def _rib(self) -> None:
        self.rib: dict[str, list[Route]] = {}
        self.fib: dict[str, tuple] = {}
        for dev in self._tables:
            cfg = self.devices[dev][1]
            ifs = self.l3[dev]
            conn = [(i.net, i.plen, "C", 0, 0, None, i.name, None, 0) for i in ifs]
            local = [(i.ip, 128, "L", 0, 0, None, i.name, None, 0) for i in ifs]
            base = conn + ospf.to_routes(self.tables.get(dev, {}))
            up = ifs + [L3If(n, 0, 0, 0, ()) for (d, n) in self.ll if d == dev]
            statics = routing.static_routes(cfg.routes6, up, base, 128)
            self.rib[dev] = routing.select(base + local + statics)
            self.fib[dev] = routing.build_fib(self.rib[dev], 128)

    def _bgp(self, l3v4: Mapping[str, list[L3If]]) -> None:
        """Multiprotocol BGP's IPv6 unicast family over the IPv6 RIBs: sessions to
        neighbors named by IPv6 address, and the ``B`` routes their updates give (router
        IDs are the IPv4 ones, as BGP's are)."""
        cfgs = {d: self.devices[d][1] for d in self._tables if self.devices[d][1].bgp}
        self.bgp_attempts: list = []
        self.bgp_sessions: list = []
        self.bgp_best: dict = {}
        if not any(c.bgp.ipv6_peers() for c in cfgs.values()):
            return
        owner = {ip: d for d, own in self.own.items() for ip in own}
        rids = {d: bgp.router_id(c, list(l3v4.get(d, []))) for d, c in cfgs.items()}
        self.bgp_attempts, self.bgp_sessions, self.bgp_best = bgp.compute(
            cfgs, {d: self.l3[d] for d in cfgs}, self.rib, self.fib, owner, self._tcp_hops,
            6, rids)
        for dev, best in self.bgp_best.items():
            self.rib[dev] = routing.select(self.rib[dev] + bgp.to_routes(best, self.fib[dev]))
            self.fib[dev] = routing.build_fib(self.rib[dev], 128)

    def _tcp_hops(self, src: int, dst: int) -> int | None:
        """Routers between ``src`` and ``dst`` for a BGP connection over IPv6 (None: not
        delivered)."""
        dev = next((d for d, own in self.own.items() if src in own), None)
        if dev is None:
            return None
        w = self.walk((src, dst, 6, 49152, 179, False), dev)
        if w.status != "delivered" or dst not in self.own.get(w.at, _EMPTY):
            return None
        return max(0, len(w.hops) - 2)

    # --- forwarding -------------------------------------------------------------------------
    def default_router(self, dev: str, name: str) -> int | None:
        """The router a host on ``dev``'s ``name`` learns from router advertisements (the
        first by name among those on the link that forward IPv6): its link-local address."""
        dom = self.domain.get((dev, name))
        for addr, (d, _n) in sorted(self.nd.get(dom, _EMPTY).items(), key=lambda x: x[1]):
            if d != dev and d in self.routers and addr & LL_MASK == LINK_LOCAL:
                return addr
        return None

    def _host_egress(self, dev: str, dst: int) -> tuple[str, int] | None:
        for i in self.l3[dev]:
            if dst & routing.MASKS6[i.plen] == i.net:
                return i.name, dst
        try:
            return self._gateways[dev]
        except KeyError:
            pass
        # The first of its links (by name) with a router: found once per device (the plane
        # never changes), not by sorting every link-local address at each packet.
        found = None
        for name in sorted(n for d, n in self.ll if d == dev):
            gw = self.default_router(dev, name)
            if gw is not None:
                found = name, gw
                break
        self._gateways[dev] = found
        return found

    def _next(self, dev: str, inif, pkt, choices, fanout) -> tuple[str, int] | str:
        """(out interface, next hop) or why the packet stops at ``dev``."""
        if inif is not None and dev not in self.routers:
            return f"{dev} does not route IPv6"
        if dev not in self.fib:
            return self._host_egress(dev, pkt[1]) or "no default router"
        routes = routing.lookup(self.fib[dev], pkt[1])
        if not routes:
            return f"no route to {ipaddress.IPv6Address(pkt[1])} on {dev}"
        r = routing.pick(routes, pkt, choices, fanout)
        iface, fwd = r[R_IFACE], r[R_FWD]
        if iface == "Null0":
            return f"discarded to Null0 on {dev}"
        return iface, fwd if fwd is not None else pkt[1]

    def walk(self, pkt: tuple, src_dev: str, choices=None) -> Walk:
        """Send ``pkt`` (src, dst, proto, sport, dport, established) from ``src_dev``."""
        dev, inif = src_dev, None
        hops: list = []
        fanout: list[int] = []
        seen: set = set()
        for _ in range(MAX_HOPS):
            if pkt[1] in self.own[dev]:
                hops.append((dev, inif, None))
                return Walk("delivered", tuple(hops), pkt, (), "", dev, tuple(fanout))
            step = self._next(dev, inif, pkt, choices, fanout)
            if isinstance(step, str):
                hops.append((dev, inif, None))
                return Walk("no_route", tuple(hops), pkt, (), step, dev, tuple(fanout))
            out, nh = step
            hops.append((dev, inif, out))
            if (dev, inif) in seen:
                return Walk("loop", tuple(hops), pkt, (), "routing loop", dev, tuple(fanout))
            seen.add((dev, inif))
            target = self.nd.get(self.domain.get((dev, out)), _EMPTY).get(nh)
            if target is None:
                why = f"no neighbor advertisement for {ipaddress.IPv6Address(nh)} on {out}"
                return Walk("unreachable", tuple(hops), pkt, (), why, dev, tuple(fanout))
            dev, inif = target
        return Walk("ttl", tuple(hops), pkt, (), "hop limit exceeded", dev, tuple(fanout))

    def source_ip(self, dev: str, dst: int) -> int | None:
        """The global address ``dev`` sources packets to ``dst`` from (its egress interface's,
        else any of its own)."""
        if dev in self.fib:
            hit = routing.lookup(self.fib[dev], dst)
            name = hit[0][R_IFACE] if hit else None
        else:
            eg = self._host_egress(dev, dst)
            name = eg[0] if eg else None
        mine = [i.ip for i in self.l3[dev] if i.name == name] or [i.ip for i in self.l3[dev]]
        return mine[0] if mine else None

    def ping(self, src_dev: str, dst: int, choices=None) -> tuple[Walk, Walk | None]:
        """An ICMPv6 echo and, if it arrives, the reply."""
        src = self.source_ip(src_dev, dst)
        if src is None:
            pkt = (0, dst, 58, 0, 0, False)
            return Walk("no_route", (), pkt, (), f"{src_dev} has no IPv6 address", src_dev), None
        there = self.walk((src, dst, 58, 0, 0, False), src_dev, choices)
        if there.status != "delivered":
            return there, None
        return there, self.walk((dst, src, 58, 0, 0, False), there.at)

    def ping_all_paths(self, src_dev: str, dst: int) -> list[tuple[Walk, Walk | None]]:
        """A ping over every equal-cost path there (each reply on its hashed path back)."""
        src = self.source_ip(src_dev, dst)
        if src is None:
            return [self.ping(src_dev, dst)]
        ways = routing.all_paths(lambda ch: self.walk((src, dst, 58, 0, 0, False), src_dev, ch))
        # Each echo is the walk :meth:`ping` would repeat (same source, same choices, and
        # nothing in the IPv6 plane changes): only the replies are walked.
        return [(w, self.walk((dst, src, 58, 0, 0, False), w.at) if w.status == "delivered"
                 else None) for _ch, w in ways]
