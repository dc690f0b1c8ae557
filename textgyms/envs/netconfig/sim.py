"""The network simulator: a compiled network and the packet walk.

:class:`Network` compiles device configurations and cabling into interface status,
broadcast domains, ARP tables, OSPF adjacencies and a FIB per router. :meth:`Network.walk`
sends one packet hop by hop: ingress ACL -> NAT (outside to inside) -> FIB -> NAT (inside to
outside) -> egress ACL -> next hop by ARP in the egress broadcast domain, with loop and TTL
detection.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import NamedTuple

from textgyms.envs.netconfig import l2, routing
from textgyms.envs.netconfig.acl import Packet, evaluate
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.routing import L3If, Route

ROUTERS = ("router", "l3switch")
_EMPTY: dict = {}
MAX_HOPS = 32


class Walk(NamedTuple):
    """The fate of one packet: ``status`` is delivered, denied, no_route, unreachable, loop
    or ttl; ``hops`` are (device, in interface, out interface); ``packet`` is the packet as
    last seen (after NAT); ``hits`` are the ACL entries that matched (device, acl, index)."""

    status: str
    hops: tuple[tuple[str, str | None, str | None], ...]
    packet: Packet
    hits: tuple[tuple[str, str, int], ...]
    reason: str
    at: str  # the device where the walk ended


class Network:
    """A compiled network; ``devices`` maps name -> (kind, config)."""

    def __init__(
        self, devices: Mapping[str, tuple[str, DeviceConfig]], links: list[l2.Link]
    ) -> None:
        self.devices = dict(devices)
        self.links = list(links)
        peer = l2.peers(self.links)
        self.status = l2.oper_status(self.devices, peer)
        self.domain = l2.domains(self.devices, self.links, self.status)
        self.l3: dict[str, list[L3If]] = {d: [] for d in self.devices}
        self.arp: dict[tuple, dict[int, tuple[str, str]]] = {}
        for (dev, name), dom in self.domain.items():
            itf = self.devices[dev][1].interfaces.get(name)
            if itf is None or itf.ip is None:
                continue
            net = itf.ip.network
            i = L3If(name, int(itf.ip.ip), int(net.network_address), net.prefixlen, dom)
            self.l3[dev].append(i)
            self.arp.setdefault(dom, {})[i.ip] = (dev, name)
        self.own = {d: {i.ip: i.name for i in ifs} for d, ifs in self.l3.items()}
        self._route()
        # Lookups the packet walk does at every hop, precomputed once.
        self._cfgs = {d: c for d, (_k, c) in self.devices.items()}
        self._ingress_fx = {
            (d, n) for d, c in self._cfgs.items() for n, i in c.interfaces.items()
            if i.acl_in is not None or i.nat == "outside"
        }
        self._arp_at = {k: self.arp.get(dom, _EMPTY) for k, dom in self.domain.items()}

    def _route(self) -> None:
        configs = {d: c for d, (k, c) in self.devices.items() if k in ROUTERS}
        l3r = {d: self.l3[d] for d in configs}
        self.adjacencies, self.events = routing.ospf_adjacencies(configs, l3r)
        ospf = routing.ospf_routes(configs, l3r, self.adjacencies)
        self.rib: dict[str, list[Route]] = {}
        self.fib = {}
        for dev, cfg in configs.items():
            base = routing.connected_routes(self.l3[dev]) + ospf.get(dev, [])
            rib = routing.select(base + routing.static_routes(cfg, self.l3[dev], base))
            self.rib[dev] = rib
            self.fib[dev] = routing.build_fib(rib)

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
        gw = self.config(dev).gateway
        for i in self.l3[dev]:
            if dst & routing.mask(i.plen) == i.net:
                return i.name, dst
        if gw is not None:
            g = int(gw)
            for i in self.l3[dev]:
                if g & routing.mask(i.plen) == i.net:
                    return i.name, g
        return None

    def source_ip(self, dev: str, dst: int) -> int | None:
        """The address ``dev`` would source a packet to ``dst`` from (its egress interface)."""
        if self.kind(dev) in ROUTERS:
            hit = routing.lookup(self.fib[dev], dst)
            name = hit[0].iface if hit else None
        else:
            eg = self._host_egress(dev, dst)
            name = eg[0] if eg else None
        for i in self.l3[dev]:
            if i.name == name:
                return i.ip
        return self.l3[dev][0].ip if self.l3[dev] else None

    # --- the packet walk --------------------------------------------------------------------
    def walk(
        self, pkt: Packet, src_dev: str, xlate: dict | None = None, inif: str | None = None
    ) -> Walk:
        """Send ``pkt`` from ``src_dev`` (or inject it there as arriving on ``inif``);
        ``xlate`` collects (and answers) dynamic NAT translations."""
        xlate = {} if xlate is None else xlate
        dev = src_dev
        hops: list = []
        hits: list = []
        seen: set = set()
        cfgs, fx, own, arp_at = self._cfgs, self._ingress_fx, self.own, self._arp_at
        for _ in range(MAX_HOPS):
            cfg = cfgs[dev]
            if inif is not None and (dev, inif) in fx:
                ok, pkt, why = self._ingress(dev, cfg, inif, pkt, hits, xlate)
                if not ok:
                    hops.append((dev, inif, None))
                    return Walk("denied", tuple(hops), pkt, tuple(hits), why, dev)
            if pkt[1] in own[dev]:
                hops.append((dev, inif, None))
                return Walk("delivered", tuple(hops), pkt, tuple(hits), "", dev)
            step = self._egress(dev, cfg, inif, pkt, hits, xlate)
            if type(step) is Walk:
                hops.append((dev, inif, None))
                return step._replace(hops=tuple(hops), hits=tuple(hits))
            out, nh, pkt = step
            hops.append((dev, inif, out))
            key = (dev, inif, pkt)
            if key in seen:
                return Walk("loop", tuple(hops), pkt, tuple(hits), "routing loop", dev)
            seen.add(key)
            target = arp_at.get((dev, out), _EMPTY).get(nh)
            if target is None:
                why = f"no ARP reply for {ipaddress.IPv4Address(nh)} on {dev} {out}"
                return Walk("unreachable", tuple(hops), pkt, tuple(hits), why, dev)
            dev, inif = target
        return Walk("ttl", tuple(hops), pkt, tuple(hits), "TTL expired", dev)

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
            for rule in cfg.nat:
                if rule.kind == "static" and int(rule.global_) == pkt[1]:
                    return True, (pkt[0], int(rule.local)) + pkt[2:], ""
            local = xlate.get((dev, pkt[1], pkt[0]))
            if local is not None:
                return True, (pkt[0], local) + pkt[2:], ""
        return True, pkt, ""

    def _egress(self, dev, cfg, inif, pkt, hits, xlate):
        """(out interface, next hop, packet) or a Walk saying why the packet stops here."""
        fib = self.fib.get(dev)
        if fib is None:  # hosts and layer-2 switches do not route
            eg = self._host_egress(dev, pkt[1]) if inif is None else None
            if eg is None:
                why = "no gateway" if inif is None else f"{dev} does not route"
                return Walk("no_route", (), pkt, (), why, dev)
            return eg[0], eg[1], pkt
        routes = routing.lookup(fib, pkt[1])
        if not routes:
            why = f"no route to {ipaddress.IPv4Address(pkt[1])} on {dev}"
            return Walk("no_route", (), pkt, (), why, dev)
        r = routes[0]
        out, nh = r.iface, r.fwd if r.fwd is not None else pkt[1]
        pkt = self._nat_out(dev, cfg, inif, out, pkt, xlate)
        oitf = cfg.interfaces.get(out)
        if oitf is not None and oitf.acl_out is not None:
            ok, idx = evaluate(cfg.acls.get(oitf.acl_out), pkt)
            if oitf.acl_out in cfg.acls:
                hits.append((dev, oitf.acl_out, idx))
            if not ok:
                why = f"denied by ACL {oitf.acl_out} out on {dev} {out}"
                return Walk("denied", (), pkt, (), why, dev)
        return out, nh, pkt

    def _nat_out(self, dev, cfg, inif, out, pkt, xlate) -> Packet:
        """Inside-to-outside source translation (static first, then list/overload)."""
        if not cfg.nat or inif is None:
            return pkt
        iin, iout = cfg.interfaces.get(inif), cfg.interfaces.get(out)
        if iin is None or iout is None or iin.nat != "inside" or iout.nat != "outside":
            return pkt
        new = None
        for rule in cfg.nat:
            if rule.kind == "static" and int(rule.local) == pkt[0]:
                new = int(rule.global_)
                break
        if new is None:
            for rule in cfg.nat:
                if rule.kind == "dynamic" and rule.iface == out and rule.acl in cfg.acls:
                    if evaluate(cfg.acls[rule.acl], pkt)[0] and iout.ip is not None:
                        new = int(iout.ip.ip)
                        break
        if new is None:
            return pkt
        xlate[(dev, new, pkt[1])] = pkt[0]
        return (new,) + pkt[1:]

    # --- composite tests --------------------------------------------------------------------
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
                    if self.kind(d) in ROUTERS and src & routing.mask(i.plen) == i.net:
                        return self.walk(pkt, d, None, i.name)
            why = f"no device has {ipaddress.IPv4Address(src)} on an interface that is up"
            return Walk("unreachable", (), pkt, (), why, "")
        return self.walk(pkt, dev)

    def ping(self, src_dev: str, dst: int, src: int | None = None) -> tuple[Walk, Walk | None]:
        """An ICMP echo and, if it arrives, the reply (with NAT state carried over)."""
        src = self.source_ip(src_dev, dst) if src is None else src
        if src is None:
            pkt = (0, dst, 1, 0, 0, False)
            return Walk("no_route", (), pkt, (), f"{src_dev} has no address", src_dev), None
        xlate: dict = {}
        there = self.walk((src, dst, 1, 0, 0, False), src_dev, xlate)
        if there.status != "delivered":
            return there, None
        p = there.packet
        back = self.walk((p[1], p[0], 1, 0, 0, False), there.at, xlate)
        return there, back
