"""The eBGP family: peer autonomous systems and steer traffic with BGP policy.

* easy: two routers in two ASes, one link: bring up the eBGP session and advertise each LAN.
* medium: R1 is dual-homed to two providers (provider-managed ISP1 and ISP2, both peering
  with the server's AS); R1 must peer with both, advertise its LAN, send outbound traffic
  through ISP1 (local preference: by default the tie goes to ISP2's lower router ID) and
  still reach the server through ISP2 when the ISP1 link fails.
* hard: also make return traffic come back through ISP1 (a longer AS path towards ISP2).

Checks are behavioural: sessions, the protocol each route comes from, pings over every path,
the path traffic takes (both directions at hard), and the failover (the link failed in the
simulator).
"""

from __future__ import annotations

import ipaddress

import numpy as np

from textgyms.envs.netconfig.scenario import Scenario
from textgyms.envs.netconfig.topologies import (
    GI,
    Plan,
    Topo,
    add_lan,
    add_wan,
    base_config,
    dotted,
    draw,
)

I = ipaddress.IPv4Interface  # noqa: E741


def _bgp(asn: int, rid: str | None, nets, neighbors: dict[str, int], extra: str = "") -> str:
    lines = [f"router bgp {asn}"] + ([f" bgp router-id {rid}"] if rid else [])
    lines += [f" network {n.network_address} mask {n.netmask}" for n in nets]
    lines += [f" neighbor {ip} remote-as {a}" for ip, a in neighbors.items()]
    return "\n".join(lines) + ("\n" + extra if extra else "")


def _peer_ip(t: Topo, a: str, b: str) -> str:
    """The address of ``b`` on its link to ``a``."""
    for x, xi, y, yi, _net in t.wans:
        if {x, y} == {a, b}:
            return str(t.addr[(y, yi)].ip if x == a else t.addr[(x, xi)].ip)
    raise KeyError((a, b))


def _pair(rng: np.random.Generator) -> Scenario:
    t, plan = Topo("two-as"), Plan(rng)
    asn = {"R1": 65001 + draw(rng, 0, 50), "R2": 65101 + draw(rng, 0, 50)}
    for r in asn:
        t.kinds[r] = "router"
    add_wan(t, plan, "R1", GI.format(1), "R2", GI.format(1))
    lans = {r: add_lan(t, rng, plan, r, GI.format(0), [f"H{k + 1}"]) for k, r in enumerate(asn)}
    reference, start, reqs, checks = {}, {}, [], []
    for r, other in (("R1", "R2"), ("R2", "R1")):
        start[r] = base_config(t, r)
        nbr = {_peer_ip(t, r, other): asn[other]}
        reference[r] = start[r] + "\n" + _bgp(asn[r], None, [lans[r]], nbr)
        reqs.append({"type": "bgp", "device": r, "asn": asn[r], "peers": nbr,
                     "advertise": [str(lans[r])]})
        checks.append({"g": "routing", "dev": r, "prefix": str(lans[other]), "proto": "B"})
    checks.append({"g": "bgp_session", "a": "R1", "b": "R2"})
    checks += [{"g": "reach", "src": "H1", "dst": dotted(int(t.hosts["H2"][0]))},
               {"g": "reach", "src": "H2", "dst": dotted(int(t.hosts["H1"][0]))}]
    return Scenario(t, reference, start, reqs, checks)


def _dual_homed(rng: np.random.Generator, level: str) -> Scenario:
    t, plan = Topo("dual-homed"), Plan(rng)
    asn = {"R1": 65001 + draw(rng, 0, 50), "ISP1": 64510 + draw(rng, 0, 5),
           "ISP2": 64520 + draw(rng, 0, 5), "R3": 64600 + draw(rng, 0, 50)}
    for r in asn:
        t.kinds[r] = "router"
    add_wan(t, plan, "R1", GI.format(1), "ISP1", GI.format(1))
    add_wan(t, plan, "R1", GI.format(2), "ISP2", GI.format(1))
    add_wan(t, plan, "ISP1", GI.format(2), "R3", GI.format(1))
    add_wan(t, plan, "ISP2", GI.format(2), "R3", GI.format(2))
    lan = add_lan(t, rng, plan, "R1", GI.format(0), ["H1"])
    srv_lan = add_lan(t, rng, plan, "R3", GI.format(0), ["SRV1"])
    rids = {"ISP1": "198.51.100.2", "ISP2": "198.51.100.1", "R3": "198.51.100.3"}
    fixed = {}
    for r, peers in (("ISP1", ("R1", "R3")), ("ISP2", ("R1", "R3")), ("R3", ("ISP1", "ISP2"))):
        nbr = {_peer_ip(t, r, p): asn[p] for p in peers}
        fixed[r] = base_config(t, r) + "\n" + _bgp(asn[r], rids[r],
                                                   [srv_lan] if r == "R3" else [], nbr)
    isp1, isp2 = _peer_ip(t, "R1", "ISP1"), _peer_ip(t, "R1", "ISP2")
    policy = ("route-map FROM-ISP1 permit 10\n set local-preference 200\n!\n"
              f"router bgp {asn['R1']}\n neighbor {isp1} route-map FROM-ISP1 in")
    if level == "hard":
        policy = (f"ip prefix-list OUR-LAN seq 5 permit {lan}\n"
                  "route-map TO-ISP2 permit 10\n match ip address prefix-list OUR-LAN\n"
                  f" set as-path prepend {asn['R1']} {asn['R1']}\n!\n" + policy
                  + f"\n neighbor {isp2} route-map TO-ISP2 out")
    start = {"R1": base_config(t, "R1")}
    reference = {"R1": start["R1"] + "\n" + _bgp(asn["R1"], None, [lan],
                                                  {isp1: asn["ISP1"], isp2: asn["ISP2"]})
                 + "\n" + policy}
    srv = dotted(int(t.hosts["SRV1"][0]))
    reqs = [{"type": "bgp", "device": "R1", "asn": asn["R1"],
             "peers": {isp1: asn["ISP1"], isp2: asn["ISP2"]}, "advertise": [str(lan)]},
            {"type": "bgp_policy", "prefer": "ISP1", "backup": "ISP2", "inbound": level == "hard",
             "server": srv}]
    checks = [{"g": "bgp_session", "a": "R1", "b": "ISP1"},
              {"g": "bgp_session", "a": "R1", "b": "ISP2"},
              {"g": "routing", "dev": "R1", "prefix": str(srv_lan), "proto": "B"},
              {"g": "reach", "src": "H1", "dst": srv},
              {"g": "waypoint", "src": "H1", "dst": srv, "via": "ISP1"},
              {"g": "reach", "src": "H1", "dst": srv, "fail": ["R1", GI.format(1)]}]
    if level == "hard":
        checks.append({"g": "waypoint", "src": "SRV1", "dst": dotted(int(t.hosts["H1"][0])),
                       "via": "ISP1"})
    return Scenario(t, reference, start, reqs, checks, fixed)


def peering(rng: np.random.Generator, level: str) -> Scenario:
    """eBGP between two ASes (easy) or a dual-homed edge with policy (medium, hard)."""
    return _pair(rng) if level == "easy" else _dual_homed(rng, level)

