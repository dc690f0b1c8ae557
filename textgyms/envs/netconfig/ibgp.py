"""BGP inside an OSPF domain: the iBGP family and OSPF<->BGP redistribution.

* ``ibgp``: a chain of 2 (easy), 3 (medium) or 4 (hard) routers of one AS already runs OSPF
  over its links, LANs and Loopback0 addresses; the first router is the edge to a provider
  (eBGP, provider-managed) whose server LAN is announced in BGP. The agent builds a full mesh
  of iBGP sessions between the loopbacks (``update-source Loopback0``), announces every LAN,
  and makes the provider's routes usable inside the AS without putting the provider link in
  OSPF (``next-hop-self`` on the edge: iBGP keeps the eBGP next hop otherwise, and a route
  whose next hop is unreachable is never installed).
* ``bgp_ospf``: an OSPF chain whose first router borders a partner AS (eBGP,
  partner-managed, its LANs announced in BGP). The agent peers with the partner and
  redistributes both ways: OSPF into BGP (at medium and hard only the LANs, through a
  route-map: the transit links must not leak) and BGP into OSPF (at hard through a route-map
  that lets only the partner's first LAN in).

Checks are behavioural: sessions (between loopbacks for iBGP), the protocol each route comes
from, routes that must not be learned, and pings over every path.
"""

from __future__ import annotations

import ipaddress

import numpy as np

from textgyms.envs.netconfig.scenario import Scenario
from textgyms.envs.netconfig.topologies import (
    GI,
    TEST_NET_3,
    Plan,
    Topo,
    add_lan,
    base_config,
    chain,
    dotted,
    draw,
    iface4,
    own_addrs,
    wildcard,
)

I = ipaddress.IPv4Interface  # noqa: E741
EDGE_PORT = GI.format(3)


def _provider(rng: np.random.Generator, t: Topo, edge: str, name: str, lans: int, asn: int,
              peer_as: int) -> tuple[str, list[ipaddress.IPv4Network], str]:
    """Cable a BGP router ``name`` (AS ``asn``, ``lans`` LANs with a host each, announced
    in BGP) to ``edge``; return (its address on the link, its LANs, its configuration)."""
    k = draw(rng, 1, 60)
    lo = TEST_NET_3 + 4 * k  # a /30: far end .1, near end .2
    far, near = dotted(lo + 1), dotted(lo + 2)
    t.kinds[name] = "router"
    t.addr[(edge, EDGE_PORT)] = iface4(lo + 2, 30)
    t.addr[(name, GI.format(1))] = iface4(lo + 1, 30)
    t.link(edge, EDGE_PORT, name, GI.format(1))
    plan = Plan(rng)
    plan.base = "198.51"  # TEST-NET space: no internal address plan draws it
    nets = [add_lan(t, rng, plan, name, GI.format(2 + j), [f"S{j + 1}"]) for j in range(lans)]
    cfg = base_config(t, name) + f"\nrouter bgp {asn}\n bgp router-id {far}\n" + "".join(
        f" network {n.network_address} mask {n.netmask}\n" for n in nets) + \
        f" neighbor {near} remote-as {peer_as}"
    return far, nets, cfg


def _ospf(t: Topo, r: str, extra: str = "") -> str:
    """OSPF area 0 on every interface of ``r`` but the edge port, LANs passive."""
    lines = ["router ospf 1", *(f" passive-interface {i}" for o, i, _n in t.lans if o == r)]
    for iface, addr in own_addrs(t, r):
        if iface != EDGE_PORT:
            lines.append(f" network {wildcard(addr.network)} area 0")
    return base_config(t, r) + "\n" + "\n".join(lines) + extra


def _lan_of(t: Topo, r: str) -> ipaddress.IPv4Network:
    return next(n for o, _i, n in t.lans if o == r)


def ibgp(rng: np.random.Generator, level: str) -> Scenario:
    """A full iBGP mesh over loopbacks with next-hop-self at the edge."""
    n = {"easy": 2, "medium": 3, "hard": 4}[level]
    t = chain(rng, n)
    t.name = "ibgp-over-ospf"
    routers = t.routers()
    asn, isp_as = 65000 + draw(rng, 1, 500), 64500 + draw(rng, 1, 9)
    loops = {}
    for k, r in enumerate(routers, 1):
        t.addr[(r, "Loopback0")] = iface4(0x0AFFFF00 | k, 32)  # 10.255.255.k/32
        t.desc[(r, "Loopback0")] = "iBGP source"
        loops[r] = f"10.255.255.{k}"
    edge = routers[0]
    isp_ip, srv_nets, isp_cfg = _provider(rng, t, edge, "ISP", 1, isp_as, asn)
    start = {r: _ospf(t, r) for r in routers}
    reference = {}
    for r in routers:
        lan = _lan_of(t, r)
        lines = [f"router bgp {asn}", f" bgp router-id {loops[r]}",
                 f" network {lan.network_address} mask {lan.netmask}"]
        for p in routers:
            if p != r:
                lines += [f" neighbor {loops[p]} remote-as {asn}",
                          f" neighbor {loops[p]} update-source Loopback0"]
                if r == edge:
                    lines.append(f" neighbor {loops[p]} next-hop-self")
        if r == edge:
            lines.append(f" neighbor {isp_ip} remote-as {isp_as}")
        reference[r] = start[r] + "\n" + "\n".join(lines)
    srv = dotted(int(t.hosts["S1"][0]))
    reqs = [{"type": "ibgp", "asn": asn, "routers": routers, "edge": edge, "isp": isp_ip,
             "isp_asn": isp_as, "loopbacks": loops, "server": srv}]
    checks = [{"g": "bgp_session", "a": edge, "b": "ISP"}]
    for r in routers:
        checks += [{"g": "bgp_session", "a": r, "b": p, "peer_ip": loops[p]}
                   for p in routers if p != r]
        checks.append({"g": "routing", "dev": r, "prefix": str(srv_nets[0]), "proto": "B"})
        checks.append({"g": "routing", "dev": "ISP", "prefix": str(_lan_of(t, r)),
                       "proto": "B"})
    hosts = sorted(h for h in t.hosts if h.startswith("H"))
    checks += [{"g": "reach", "src": h, "dst": srv} for h in hosts]
    checks += [{"g": "no_route", "dev": r, "prefix": str(ipaddress.IPv4Network(
        f"{isp_ip}/30", strict=False))} for r in routers[1:]]
    return Scenario(t, reference, start, reqs, checks, {"ISP": isp_cfg})


def bgp_ospf(rng: np.random.Generator, level: str) -> Scenario:
    """OSPF and BGP redistributed into each other at the border router."""
    n = {"easy": 2, "medium": 3, "hard": 3}[level]
    t = chain(rng, n)
    t.name = "ospf-bgp-border"
    routers = t.routers()
    asn, p_as = 65000 + draw(rng, 1, 500), 64600 + draw(rng, 1, 50)
    edge = routers[0]
    p_ip, p_nets, p_cfg = _provider(rng, t, edge, "PARTNER", 2 if level == "hard" else 1,
                                    p_as, asn)
    start = {r: _ospf(t, r) for r in routers}
    lans = [_lan_of(t, r) for r in routers]
    o2b = " redistribute ospf 1"
    policy = ""
    if level != "easy":
        o2b += " route-map OSPF-TO-BGP"
        policy += "".join(f"\nip prefix-list INSIDE-LANS permit {x}" for x in lans)
        policy += "\nroute-map OSPF-TO-BGP permit 10\n match ip address prefix-list INSIDE-LANS"
    b2o = f" redistribute bgp {asn} subnets"
    if level == "hard":
        b2o += " route-map BGP-TO-OSPF"
        policy += (f"\nip prefix-list PARTNER-ALLOWED permit {p_nets[0]}"
                   "\nroute-map BGP-TO-OSPF permit 10\n match ip address prefix-list "
                   "PARTNER-ALLOWED\n set metric 50")
    bgp = f"router bgp {asn}\n neighbor {p_ip} remote-as {p_as}\n{o2b}"
    reference = dict(start)
    reference[edge] = start[edge] + f"\n{b2o}\n{bgp}{policy}"
    allowed = p_nets[:1] if level == "hard" else p_nets
    reqs = [{"type": "bgp_ospf", "device": edge, "asn": asn, "peer": p_ip, "peer_asn": p_as,
             "inside": [str(x) for x in lans], "only_lans": level != "easy",
             "allowed": [str(x) for x in allowed],
             "denied": [str(x) for x in p_nets[len(allowed):]]}]
    checks = [{"g": "bgp_session", "a": edge, "b": "PARTNER"}]
    for x in lans:
        checks.append({"g": "routing", "dev": "PARTNER", "prefix": str(x), "proto": "B"})
    for r in routers[1:]:
        checks += [{"g": "routing", "dev": r, "prefix": str(x), "proto": "O"} for x in allowed]
        checks += [{"g": "no_route", "dev": r, "prefix": str(x)} for x in p_nets[len(allowed):]]
    if level != "easy":
        checks += [{"g": "no_route", "dev": "PARTNER", "prefix": str(w[4])} for w in t.wans]
    hosts = sorted(h for h in t.hosts if h.startswith("H"))
    for s in sorted(h for h in t.hosts if h.startswith("S"))[:len(allowed)]:
        checks += [{"g": "reach", "src": h, "dst": dotted(int(t.hosts[s][0]))} for h in hosts]
    return Scenario(t, reference, start, reqs, checks, {"PARTNER": p_cfg})
