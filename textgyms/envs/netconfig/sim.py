"""The network simulator: a compiled network and the packet walk.

:class:`Network` compiles device configurations and cabling into interface status,
broadcast domains, ARP tables, OSPF adjacencies and a FIB per router. :meth:`Network.walk`
sends one packet hop by hop: ingress ACL -> NAT (outside to inside) -> FIB -> NAT (inside to
outside) -> egress ACL (transit packets only: a device's own packets bypass its outbound
ACLs, as on IOS) -> next hop by ARP in the egress broadcast domain, with loop and TTL
detection.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping
from typing import NamedTuple

from textgyms.envs.netconfig import bgp, fhrp, l2, nat, ospf, routing, sim6
from textgyms.envs.netconfig.acl import Packet, evaluate
from textgyms.envs.netconfig.bounded import Memo, by_identity, is_shared
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.routing import R_FWD, R_IFACE, R_PROTO, L3If, Route, Walk
from textgyms.envs.netconfig.topologies import dotted as _dotted

__all__ = ["MAX_HOPS", "Network", "Walk", "routes_packets"]

ROUTERS = ("router", "l3switch")


def routes_packets(kind: str, cfg: DeviceConfig) -> bool:
    """Routers route unless ``no ip routing``; layer-3 switches only with ``ip routing``
    (off by default on Catalyst switches, as on IOS)."""
    if kind == "router":
        return cfg.ip_routing is not False
    return kind == "l3switch" and cfg.ip_routing is True
_EMPTY: dict = {}
MAX_HOPS = 32
dotted = functools.lru_cache(maxsize=4096)(_dotted)  # walk reasons name the same addresses
_W = functools.partial(tuple.__new__, Walk)  # Walk(*fields) without the Python-level call
_new_l3if = functools.partial(tuple.__new__, L3If)  # L3If(*fields), as above
MAX_PASSES = 4  # IGP/BGP rounds when OSPF and BGP are redistributed into each other


class _Facts(NamedTuple):
    """What a compile reads of one device's configuration, derived once per shared parsed
    config (reading ipaddress objects is slow): its layer-2 signature, each addressed
    interface's (address, network, prefix length), the interfaces with an inbound ACL or
    NAT outside, its FHRP members, and whether it has NAT rules or an outbound ACL."""

    layer2: Hashable
    addrs: dict[str, tuple[int, int, int]]
    ingress: tuple[str, ...]
    fhrp: list
    gateway: int | None  # ``ip default-gateway``
    egress: bool  # NAT rules or an outbound ACL: a packet may change or stop leaving it


_new_facts = functools.partial(tuple.__new__, _Facts)  # _Facts(*fields), all given
_FACTS = Memo(512)  # (config id, kind) -> (config, its _Facts); the last few tasks
# (config id, domains id, OSPF routes id) -> (config, those routes, (statics, RIB, FIB),
# domains): see Network._device_table. All three are held, so their ids stay theirs.
_ROUTES = Memo(256)
_NO_ROUTES: list[Route] = []  # a router without OSPF routes (never changed: its id is a key)


def _facts(kind: str, cfg: DeviceConfig) -> _Facts:
    def make() -> _Facts:
        addrs = {}
        ingress = []
        groups = False  # any FHRP group (most devices have none: no second pass for them)
        egress = bool(cfg.nat)
        for name, itf in cfg.interfaces.items():
            ip = itf.ip
            if ip is not None:  # (int(ip) and ip.network.prefixlen, without their calls)
                a, plen = ip._ip, ip._prefixlen
                addrs[name] = (a, a & routing.MASKS[plen], plen)
                groups = groups or bool(itf.fhrp)
            if itf.acl_in is not None or itf.nat == "outside":
                ingress.append(name)
            egress = egress or itf.acl_out is not None
        members = fhrp.device_members(cfg) if groups and kind in ROUTERS else []
        gateway = int(cfg.gateway) if cfg.gateway is not None else None
        return _new_facts((l2.signature(kind, cfg), addrs, tuple(ingress), members, gateway,
                           egress))

    return by_identity(_FACTS, cfg, kind, make)


class Network:
    """A compiled network; ``devices`` maps name -> (kind, config)."""

    def __init__(
        self, devices: Mapping[str, tuple[str, DeviceConfig]], links: list[l2.Link],
        fhrp_incumbent: Mapping | None = None,
    ) -> None:
        """``fhrp_incumbent``: the active router of each FHRP group at an earlier moment
        (another network's ``fhrp_state``); by default the one that won at boot."""
        self.devices = dict(devices)
        self.links = list(links)
        facts = self._index_devices()
        self.status, self.domain = l2.layer2(  # shared, read-only
            self.devices, self.links, {d: f.layer2 for d, f in facts.items()})
        self.l3: dict[str, list[L3If]] = {d: [] for d in self.devices}
        self.arp: dict[tuple, dict[int, tuple[str, str]]] = {}
        l3, arp = self.l3, self.arp
        for port, dom in self.domain.items():  # (port: the (device, interface) key itself)
            dev, name = port
            addr = facts[dev].addrs.get(name)
            if addr is None:
                continue
            l3[dev].append(_new_l3if((name, addr[0], addr[1], addr[2], dom)))
            at = arp.get(dom)
            if at is None:
                at = arp[dom] = {}
            at[addr[0]] = port
        self.own = {d: {i.ip: i.name for i in ifs} for d, ifs in self.l3.items()}
        # (Most networks have no FHRP group: nothing to elect.)
        self.fhrp_state, self.fhrp_actives = fhrp.elect(
            self._router_cfgs, self.domain, self.status, fhrp_incumbent, self._members) \
            if any(self._members.values()) else ({}, {})
        # With a dual-active both answer ARP; hosts keep one (the first, here).
        self.fhrp = {k: (v[0][0], v[0][1], k[1]) for k, v in self.fhrp_actives.items()}
        for (dom, vip), (dev, name, _vip) in self.fhrp.items():
            self.arp.setdefault(dom, {})[vip] = (dev, name)
            self.own[dev].setdefault(vip, name)
        self._arp_at = {k: self.arp.get(dom, _EMPTY) for k, dom in self.domain.items()}
        self.nat_pool_use: dict[tuple[str, int], int] = {}  # (dev, inside local) -> global
        self._v6: sim6.Plane6 | None = None
        self._route()

    def _index_devices(self) -> dict[str, _Facts]:
        """Each device's :class:`_Facts`, and in one pass over the devices what routing and
        the packet walk look up by device: the routers (their configs and FHRP members, in
        device order, never set order: results must not depend on the hash seed), every
        config, the ports that filter or translate inbound, and the hosts' gateways."""
        facts: dict[str, _Facts] = {}
        self.routers: set[str] = set()
        self._router_cfgs: dict[str, DeviceConfig] = {}
        self._members: dict[str, list] = {}
        self._cfgs: dict[str, DeviceConfig] = {}
        self._ingress_fx: set[tuple[str, str]] = set()
        self._gateway: dict[str, int] = {}
        egress = False
        for d, (k, c) in self.devices.items():
            f = facts[d] = _facts(k, c)
            self._cfgs[d] = c
            if routes_packets(k, c):
                self.routers.add(d)
                self._router_cfgs[d] = c
                self._members[d] = f.fhrp
            for n in f.ingress:
                self._ingress_fx.add((d, n))
            if f.gateway is not None:
                self._gateway[d] = f.gateway
            egress = egress or f.egress
        self._is_plain = not self._ingress_fx and not egress  # see _plain
        return facts

    def with_incumbent(self, incumbent: Mapping) -> Network:
        """This network with each FHRP group's election starting from ``incumbent`` (another
        network's ``fhrp_state``). The election is all an incumbent changes: where every group
        elects what it elected here, a view of this network (its own NAT state) is the
        answer and nothing is compiled again."""
        if fhrp.elect(self._router_cfgs, self.domain, self.status, incumbent,
                      self._members) == (
                self.fhrp_state, self.fhrp_actives):
            return self.view()
        return Network(self.devices, self.links, incumbent)

    def view(self) -> Network:
        """This network with NAT state of its own (all a packet walk writes); everything
        else is shared and read-only. (A plain attribute copy: ``copy.copy`` goes through
        the pickle protocol, a measurable share of a submission step.)"""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.nat_pool_use = {}
        return out

    @property
    def v6(self) -> sim6.Plane6:
        """The IPv6 plane, compiled on first use (IPv4-only tasks never pay for it)."""
        if self._v6 is None:
            self._v6 = sim6.Plane6(self.devices, self.domain, self.l3)
        return self._v6

    def _route(self) -> None:
        configs = self._router_cfgs
        l3r = {d: self.l3[d] for d in configs}
        self._igp(configs, l3r, {})
        self.bgp_sessions: list = []
        self.bgp_attempts: list = []
        self.bgp_best: dict = {}
        if any(c.bgp is not None for c in configs.values()):
            self._route_bgp(configs, l3r)
            # OSPF redistributing BGP: its externals come from the BGP routes, so OSPF runs
            # again with them; where OSPF is also redistributed into BGP, BGP runs again
            # over the new OSPF routes (what one border puts into OSPF another may put back
            # into BGP) until its best paths settle.
            if any(c.ospf is not None and "bgp" in c.ospf.redistribute for c in configs.values()):
                again = any(c.bgp is not None and any(s.startswith("ospf") for s in
                                                      c.bgp.redistribute)
                            for c in configs.values())
                for _pass in range(MAX_PASSES):
                    learned = {d: [r for r in rib if r[R_PROTO] == "B"]
                               for d, rib in self.rib.items()}
                    self._igp(configs, l3r, learned)
                    if not again:
                        break
                    before = {d: set(b) for d, b in self.bgp_best.items()}
                    self._route_bgp(configs, l3r, strip=True)
                    if {d: set(b) for d, b in self.bgp_best.items()} == before:
                        break

    def _igp(self, configs, l3r, learned: dict[str, list[Route]]) -> None:
        """Connected, static and OSPF routes (with ``learned`` BGP routes kept in the RIB and
        offered to redistribution) into ``rib`` and ``fib``."""
        adj, events, self.rids, oifs, self.areas, tables, internal = ospf.compute(
            configs, l3r)
        self.adjacencies, self.events = adj, events
        statics: dict[str, list[Route]] = {}
        # Connected routes and the OSPF candidates of each router, built once (the lists are
        # only concatenated below, never changed).
        conn = {dev: routing.connected_routes(self.l3[dev]) for dev in configs}
        known: dict[str, tuple] = {}  # dev -> (memo key, (statics, RIB, FIB)) of a device
        # A router's up interfaces are a function of its config and the broadcast domains
        # (a shared, read-only dict that an unchanged layer 2 hands out again): keyed by
        # their identities, held in the entry, not by hashing the interfaces.
        dom = self.domain
        for dev, cfg in configs.items():
            mine = internal.get(dev, _NO_ROUTES)
            key = (id(cfg), id(dom), id(mine))
            hit = _ROUTES._d.get(key)
            if hit is not None and hit[0] is cfg and hit[1] is mine and hit[3] is dom:
                known[dev] = key, hit[2]
                statics[dev] = hit[2][0]
            else:
                known[dev] = key, None
                statics[dev] = routing.static_routes(
                    cfg.routes, self.l3[dev], conn[dev] + mine) if cfg.routes else []
        externals = {}
        for dev, cfg in configs.items():
            if cfg.ospf is not None and (cfg.ospf.redistribute or cfg.ospf.originate):
                rib = routing.select(conn[dev] + statics[dev] + learned.get(dev, []))
                mine = [o for o in oifs if o.dev == dev]
                externals[dev] = ospf.redistributed(cfg, rib, self.l3[dev], mine)
        full = ospf.with_externals(self.areas, tables, externals,
                                   ospf.nssa_defaults(configs, self.areas))
        self.rib: dict[str, list[Route]] = {}
        self.fib = {}
        for dev, cfg in configs.items():
            # External routes only ever add prefixes to a table (a copy of the shared one):
            # one that did not grow still gives the routes listed before.
            table = full.get(dev, _EMPTY)
            grown = full is not tables and len(table) != len(tables.get(dev, _EMPTY))
            if not grown and not learned.get(dev):
                self.rib[dev], self.fib[dev] = self._device_table(
                    cfg, conn[dev], internal.get(dev, _NO_ROUTES), statics[dev], dom,
                    *known[dev])
                continue
            ospf_routes = ospf.to_routes(table) if grown else internal.get(dev, [])
            cands = conn[dev] + ospf_routes
            self.rib[dev], self.fib[dev] = routing.rib_fib(
                cands + statics[dev] + learned.get(dev, []))

    @staticmethod
    def _device_table(cfg: DeviceConfig, conn: list[Route], internal: list[Route],
                      statics: list[Route], domain: dict, key: tuple,
                      found: tuple | None) -> tuple:
        """(RIB, FIB) of a router from its connected, internal OSPF and static routes alone:
        a pure function of its config, its up interfaces (of the config and ``domain``) and
        its OSPF routes (the shared list an unchanged SPF hands out), so a network that
        changed elsewhere (another device of a submission, a fault elsewhere) reuses it for a
        shared config."""
        if found is not None:
            return found[1], found[2]
        rib, fib = routing.rib_fib(conn + internal + statics)
        if is_shared(cfg):
            _ROUTES.put(key, (cfg, internal, (statics, rib, fib), domain))
        return rib, fib

    def _tcp_hops(self, src: int, dst: int) -> int | None:
        """Routers between ``src`` and ``dst`` for a BGP connection (TCP port 179) from the
        device that owns ``src``, over the IGP/static FIBs; None if it is not delivered."""
        dev = self.owner(src)
        if dev is None:
            return None
        w = self.walk((src, dst, 6, 49152, 179, False), dev)
        if w.status != "delivered" or dst not in self.own.get(w.at, _EMPTY):
            return None
        return max(0, len(w.hops) - 2)

    def _hops_between(self) -> Callable[[int, int], int | None]:
        """:meth:`_tcp_hops` for one BGP run. Each established session asks it the same two
        questions from both of its ends; where nothing filters or translates, a walk reads
        nothing but the FIBs and tables that are fixed during the run, so answers are kept."""
        if not self._is_plain:
            return self._tcp_hops
        known: dict[tuple[int, int], int | None] = {}

        def hops(src: int, dst: int) -> int | None:
            key = (src, dst)
            if key not in known:
                known[key] = self._tcp_hops(src, dst)
            return known[key]

        return hops

    def _route_bgp(self, configs, l3r, strip: bool = False) -> None:
        """BGP on top of the IGP/static RIBs (sessions and next hops use them); ``strip``
        first drops the BGP routes of an earlier pass."""
        if strip:
            for dev, rib in self.rib.items():
                self.rib[dev] = [r for r in rib if r[R_PROTO] != "B"]
                self.fib[dev] = routing.build_fib(self.rib[dev])
        owner = {ip: d for d, own in self.own.items() for ip in own}
        self.bgp_attempts, self.bgp_sessions, self.bgp_best = bgp.compute(
            configs, l3r, self.rib, self.fib, owner, self._hops_between())
        for dev, best in self.bgp_best.items():
            self.rib[dev], self.fib[dev] = routing.rib_fib(
                self.rib[dev] + bgp.to_routes(best, self.fib[dev]))

    # --- helpers ----------------------------------------------------------------------------
    def kind(self, dev: str) -> str:
        return self.devices[dev][0]

    def config(self, dev: str) -> DeviceConfig:
        return self.devices[dev][1]

    def owner(self, ip: int) -> str | None:
        """The device that has address ``ip`` on an interface that is up."""
        for dev, own in self.own.items():
            if ip in own:
                return dev
        return None

    def _host_egress(self, dev: str, dst: int) -> tuple[str, int] | None:
        """A non-routing device's (interface, next hop) for ``dst``: direct or the gateway."""
        masks, ifs = routing.MASKS, self.l3[dev]
        for i in ifs:
            if dst & masks[i.plen] == i.net:
                return i.name, dst
        g = self._gateway.get(dev)
        if g is not None:
            for i in ifs:
                if g & masks[i.plen] == i.net:
                    return i.name, g
        return None

    def source_ip(self, dev: str, dst: int) -> int | None:
        """The address ``dev`` would source a packet to ``dst`` from (its egress interface)."""
        if dev in self.routers:
            hit = routing.lookup(self.fib[dev], dst)
            name = hit[0][R_IFACE] if hit else None
        else:
            eg = self._host_egress(dev, dst)
            name = eg[0] if eg else None
        for i in self.l3[dev]:
            if i.name == name:
                return i.ip
        return self.l3[dev][0].ip if self.l3[dev] else None

    # --- the packet walk --------------------------------------------------------------------
    def walk(
        self,
        pkt: Packet,
        src_dev: str,
        xlate: dict | None = None,
        inif: str | None = None,
        choices: tuple[int, ...] | None = None,
    ) -> Walk:
        """Send ``pkt`` from ``src_dev`` (or inject it there as arriving on ``inif``);
        ``xlate`` collects (and answers) dynamic NAT translations. Among equal-cost routes
        the k-th forwarding decision takes ``choices[k]`` (0 past its end); without
        ``choices`` it takes the one a per-destination CEF hash would."""
        if self._is_plain:
            return self._walk_plain(pkt, src_dev, inif, choices)
        xlate = {} if xlate is None else xlate
        dev = src_dev
        hops: list = []
        hits: list = []
        fanout: list[int] = []
        seen: set = set()
        cfgs, fx, own, arp_at = self._cfgs, self._ingress_fx, self.own, self._arp_at
        for _ in range(MAX_HOPS):
            cfg = cfgs[dev]
            if inif is not None and (dev, inif) in fx:
                ok, pkt, why = self._ingress(dev, cfg, inif, pkt, hits, xlate)
                if not ok:
                    hops.append((dev, inif, None))
                    return _W(("denied", tuple(hops), pkt, tuple(hits), why, dev, tuple(fanout)))
            if pkt[1] in own[dev]:
                hops.append((dev, inif, None))
                return _W(("delivered", tuple(hops), pkt, tuple(hits), "", dev, tuple(fanout)))
            step = self._egress(dev, cfg, inif, pkt, hits, xlate, choices, fanout)
            if type(step) is Walk:
                hops.append((dev, inif, None))
                return _W((step[0], tuple(hops), step[2], tuple(hits), step[4], step[5],
                           tuple(fanout)))
            out, nh, pkt = step
            hops.append((dev, inif, out))
            key = (dev, inif, pkt)
            if key in seen:
                return _W(("loop", tuple(hops), pkt, tuple(hits), "routing loop", dev,
                           tuple(fanout)))
            seen.add(key)
            target = arp_at.get((dev, out), _EMPTY).get(nh) or self._proxy_arp(dev, out, nh)
            if target is None:
                why = f"no ARP reply for {dotted(nh)} on {dev} {out}"
                return _W(("unreachable", tuple(hops), pkt, tuple(hits), why, dev, tuple(fanout)))
            dev, inif = target
        return _W(("ttl", tuple(hops), pkt, tuple(hits), "TTL expired", dev, tuple(fanout)))

    def _plain(self) -> bool:
        """Whether no device filters or translates a packet (no inbound ACL or NAT outside
        port, no NAT rule or outbound ACL anywhere): then a packet never changes on its way
        and no ACL entry is hit. (``_is_plain``, found at compile from each config's
        :class:`_Facts`; a view may set it False to take the general walk.)"""
        return self._is_plain

    def _walk_plain(self, pkt: Packet, dev: str, inif: str | None,
                    choices: tuple[int, ...] | None) -> Walk:
        """:meth:`walk` on a :meth:`_plain` network: each hop only looks up the route (or a
        host's gateway), and a loop is a (device, in interface) seen before."""
        dst, own, arp_at, fibs = pkt[1], self.own, self._arp_at, self.fib
        hops: list = []
        fanout: list[int] = []
        seen: set = set()
        for _ in range(MAX_HOPS):
            if dst in own[dev]:  # (the commonest end: no helper call)
                hops.append((dev, inif, None))
                return _W(("delivered", tuple(hops), pkt, (), "", dev, tuple(fanout)))
            # A router with one route there (most hops): the longest match inline; every
            # other case (hosts, no route, Null0, equal-cost routes) in _route_out.
            fib = fibs.get(dev)
            if fib is not None:
                for m, bucket in fib[2]:
                    routes = bucket.get(dst & m)
                    if routes:
                        break
                else:
                    routes = None
            if fib is not None and routes is not None and len(routes) == 1 and \
                    routes[0][6] != "Null0":
                r = routes[0]
                out, nh = r[6], r[7] if r[7] is not None else dst  # (iface, fwd)
            else:
                step = self._route_out(dev, inif, pkt, choices, fanout)
                if type(step) is Walk:
                    hops.append((dev, inif, None))
                    return _W((step[0], tuple(hops), pkt, (), step[4], dev, tuple(fanout)))
                out, nh = step
            hops.append((dev, inif, out))
            here = (dev, inif)
            if here in seen:
                return _W(("loop", tuple(hops), pkt, (), "routing loop", dev, tuple(fanout)))
            seen.add(here)
            target = arp_at.get((dev, out), _EMPTY).get(nh) or self._proxy_arp(dev, out, nh)
            if target is None:
                why = f"no ARP reply for {dotted(nh)} on {dev} {out}"
                return _W(("unreachable", tuple(hops), pkt, (), why, dev, tuple(fanout)))
            dev, inif = target
        return _W(("ttl", tuple(hops), pkt, (), "TTL expired", dev, tuple(fanout)))

    def _proxy_arp(self, dev: str, out: str, nh: int) -> tuple[str, str] | None:
        """A router on the segment that answers ARP for ``nh`` on its behalf (IOS proxy ARP,
        on by default): it has a route to ``nh`` through another interface."""
        dom = self.domain.get((dev, out))
        for (d, name) in sorted(self.arp.get(dom, _EMPTY).values()):
            if d == dev or d not in self.routers:
                continue
            itf = self._cfgs[d].interfaces.get(name)
            if itf is not None and not itf.proxy_arp:
                continue
            routes = routing.lookup(self.fib[d], nh)
            if routes and all(r[R_IFACE] != name for r in routes) and routes[0][R_IFACE] != "Null0":
                return d, name
        return None

    def _ingress(self, dev, cfg, inif, pkt, hits, xlate):
        itf = cfg.interfaces.get(inif)
        if itf is None:
            return True, pkt, ""
        if itf.acl_in is not None:
            ok, idx = evaluate(cfg.acls.get(itf.acl_in), pkt)
            if itf.acl_in in cfg.acls:
                hits.append((dev, itf.acl_in, idx))
            if not ok:
                return False, pkt, f"denied by ACL {itf.acl_in} in on {dev} {inif}"
        if itf.nat == "outside" and cfg.nat:
            return True, nat.outside_in(self, dev, cfg, pkt, xlate), ""
        return True, pkt, ""

    def _route_out(self, dev: str, inif: str | None, pkt: Packet,
                   choices: tuple[int, ...] | None, fanout: list[int]) -> tuple | Walk:
        """Where ``dev`` sends ``pkt`` (arrived on ``inif``, None for its own): (out
        interface, next hop), or a Walk saying why it has no route."""
        fib = self.fib.get(dev)
        if fib is None:  # hosts, layer-2 switches and routers without ip routing
            eg = self._host_egress(dev, pkt[1]) if inif is None else None
            if eg is None:
                why = "no gateway" if inif is None else f"{dev} does not route"
                return _W(("no_route", (), pkt, (), why, dev, ()))
            return eg
        dst = pkt[1]
        for m, bucket in fib[2]:  # routing.lookup, inline: this runs at every hop
            routes = bucket.get(dst & m)
            if routes:
                break
        else:
            return _W(("no_route", (), pkt, (), f"no route to {dotted(dst)} on {dev}", dev, ()))
        r = routes[0] if len(routes) == 1 else routing.pick(routes, pkt, choices, fanout)
        iface, fwd = r[R_IFACE], r[R_FWD]
        if iface == "Null0":
            return _W(("no_route", (), pkt, (), f"discarded to Null0 on {dev}", dev, ()))
        return iface, fwd if fwd is not None else dst

    def _egress(self, dev, cfg, inif, pkt, hits, xlate, choices=None, fanout=None):
        """(out interface, next hop, packet) or a Walk saying why the packet stops here."""
        step = self._route_out(dev, inif, pkt, choices, fanout if fanout is not None else [])
        if type(step) is Walk:
            return step
        out, nh = step
        if cfg.nat and inif is not None:  # NAT translates only what passes through
            pkt = nat.inside_out(self, dev, cfg, inif, out, pkt, xlate)
            if pkt is None:
                return _W(("denied", (), pkt, (), f"NAT pool exhausted on {dev}", dev, ()))
        # IOS checks outbound ACLs on transit packets only: what the device originates
        # itself (its pings and replies, its BGP and OSPF packets) bypasses them.
        oitf = cfg.interfaces.get(out) if inif is not None else None
        if oitf is not None and oitf.acl_out is not None:
            ok, idx = evaluate(cfg.acls.get(oitf.acl_out), pkt)
            if oitf.acl_out in cfg.acls:
                hits.append((dev, oitf.acl_out, idx))
            if not ok:
                why = f"denied by ACL {oitf.acl_out} out on {dev} {out}"
                return _W(("denied", (), pkt, (), why, dev, ()))
        return out, nh, pkt

    # --- composite tests --------------------------------------------------------------------
    def walks(self, pkt: Packet, src_dev: str, inif: str | None = None,
              limit: int = 64) -> list[tuple[tuple[int, ...], Walk]]:
        """Every path the packet may take over equal-cost routes (up to ``limit``), each
        with the choice vector that replays it."""
        return routing.all_paths(lambda ch: self.walk(pkt, src_dev, None, inif, ch), limit)

    def flow(
        self,
        src: int,
        dst: int,
        proto: int = 6,
        dport: int = 80,
        sport: int = 49152,
        established: bool = False,
    ) -> Walk:
        """A one-way flow from the device owning ``src``."""
        dev = self.owner(src)
        pkt = (src, dst, proto, sport, dport, established)
        if dev is None:  # an address no device has: inject it at the router of its subnet
            for d, ifs in self.l3.items():
                for i in ifs:
                    if d in self.routers and src & routing.mask(i.plen) == i.net:
                        return self.walk(pkt, d, None, i.name)
            why = f"no device has {dotted(src)} on an interface that is up"
            return Walk("unreachable", (), pkt, (), why, "")
        return self.walk(pkt, dev)

    def exchange(self, src_dev: str, dst: int, proto: int = 1, dport: int = 0,
                 src: int | None = None, choices=None) -> tuple[Walk, Walk | None]:
        """A packet and, if it arrives, the reply (with NAT state carried over)."""
        src = self.source_ip(src_dev, dst) if src is None else src
        if src is None:
            pkt = (0, dst, proto, 0, dport, False)
            return Walk("no_route", (), pkt, (), f"{src_dev} has no address", src_dev), None
        xlate: dict = {}
        sport = 0 if proto == 1 else 49152
        there = self.walk((src, dst, proto, sport, dport, False), src_dev, xlate, None, choices)
        return there, self._reply(there, proto, xlate)

    def _reply(self, there: Walk, proto: int, xlate: dict) -> Walk | None:
        """The reply to a packet that walked ``there`` (None if it was not delivered)."""
        if there.status != "delivered":
            return None
        p = there.packet
        return self.walk((p[1], p[0], proto, p[4], p[3], proto == 6), there.at, xlate)

    def ping(self, src_dev: str, dst: int, src: int | None = None) -> tuple[Walk, Walk | None]:
        """An ICMP echo and, if it arrives, the reply (with NAT state carried over)."""
        return self.exchange(src_dev, dst, 1, 0, src)

    def ping_all_paths(self, src_dev: str, dst: int) -> list[tuple[Walk, Walk | None]]:
        """A ping over every equal-cost path there (each reply on its hashed path back)."""
        src = self.source_ip(src_dev, dst)
        if src is None:
            return [self.ping(src_dev, dst)]
        pkt = (src, dst, 1, 0, 0, False)
        before = len(self.nat_pool_use)
        first: dict = {}
        w0 = self.walk(pkt, src_dev, first, None, ())
        if not w0.fanout:  # one path (the common case): what all_paths would do, directly
            if len(self.nat_pool_use) == before:
                return [(w0, self._reply(w0, 1, first))]
            return [self.exchange(src_dev, dst, 1, 0, src, ())]
        xlates: dict[tuple[int, ...], dict] = {(): first}

        def walk(ch: tuple[int, ...]) -> Walk:
            if not ch:  # the first path, walked above
                return w0
            xlates[ch] = {}
            return self.walk(pkt, src_dev, xlates[ch], None, ch)

        ways = routing.all_paths(walk)
        out = []
        for ch, w in ways:
            # The echo walked this path already. NAT pool bindings are the only state a walk
            # reads that walks change, and they are only ever added: while none was added,
            # walking it again would give the same walk and translations, so they are reused.
            if len(self.nat_pool_use) == before:
                out.append((w, self._reply(w, 1, xlates[ch])))
            else:
                out.append(self.exchange(src_dev, dst, 1, 0, src, ch))
        return out
