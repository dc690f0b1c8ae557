"""The redistribution family: connect routes OSPF does not carry into an OSPF domain.

A chain of routers already runs OSPF. A provider-managed legacy router hangs off one of them
with a LAN it does not advertise (it only has a default route back); the agent adds a static
route on the OSPF router it hangs off and redistributes it (classic IOS redistributes only
classful networks without ``subnets``, and the legacy /24s are subnets of 10/8: the
pitfall). At medium and hard the domain also
gets an Internet exit: a default route on the edge router, originated into OSPF with
``default-information originate``. Hard adds a second legacy site on another router.
Checks: every host reaches every legacy LAN (and the Internet server), and the other OSPF
routers forward to them by OSPF (external) routes.
"""

from __future__ import annotations

import numpy as np

from textgyms.envs.netconfig.families import _add_isp
from textgyms.envs.netconfig.scenario import Scenario
from textgyms.envs.netconfig.topologies import (
    GI,
    LEGACY_WANS,
    Plan,
    add_lan,
    add_wan,
    base_config,
    chain,
    dotted,
    link_ends,
    own_addrs,
    wildcard,
)

PORT = GI.format(3)


def _ospf(t, r: str) -> str:
    lines = ["router ospf 1", *(f" passive-interface {i}" for o, i, _n in t.lans if o == r)]
    for iface, addr in own_addrs(t, r):
        if iface != PORT:
            lines.append(f" network {wildcard(addr.network)} area 0")
    return base_config(t, r) + "\n" + "\n".join(lines)


def redistribution(rng: np.random.Generator, level: str) -> Scenario:
    """Static routes to legacy sites redistributed into OSPF; a default route at medium+."""
    t = chain(rng, 3)
    routers = t.routers()
    plan = Plan(rng)
    # Legacy sites take 10.250/16, which no address plan draws; their /24s are subnets of
    # the class A network 10/8, so they need "subnets" to be redistributed.
    plan.base, plan.wan_block = "10.250", LEGACY_WANS
    sites = [routers[2]] + ([routers[1]] if level == "hard" else [])
    fixed, extra, checks, reqs = {}, {r: [] for r in routers}, [], []
    for k, r in enumerate(sites):
        leg = f"LEG{k + 1}"
        t.kinds[leg] = "router"
        net = add_wan(t, plan, r, PORT, leg, GI.format(1))
        lan = add_lan(t, rng, plan, leg, GI.format(0), [f"HL{k + 1}"])
        near, far = link_ends(net)
        fixed[leg] = base_config(t, leg) + f"\nip route 0.0.0.0 0.0.0.0 {near}"
        extra[r].append(f"ip route {lan.network_address} {lan.netmask} {far}")
        reqs.append({"type": "legacy", "device": r, "lan": str(lan), "via": str(far)})
        for other in routers:
            proto = "S" if other == r else "O"
            checks.append({"g": "routing", "dev": other, "prefix": str(lan), "proto": proto})
    for r in sites:
        extra[r].append("router ospf 1\n redistribute static subnets")
    hosts = sorted(h for h in t.hosts if h.startswith("H") and not h.startswith("HL"))
    targets = sorted(h for h in t.hosts if h.startswith("HL"))
    if level != "easy":
        edge = routers[0]
        isp_ip, _block, web, isp_cfg = _add_isp(rng, t, edge, PORT)
        back = t.addr[(edge, PORT)].ip
        fixed["ISP"] = isp_cfg + "".join(  # the provider routes the private blocks back
            f"\nip route {n} {back}" for n in ("10.0.0.0 255.0.0.0", "172.16.0.0 255.240.0.0",
                                               "192.168.0.0 255.255.0.0"))
        extra[edge] += [f"ip route 0.0.0.0 0.0.0.0 {isp_ip}",
                        "router ospf 1\n default-information originate"]
        reqs.append({"type": "default_route", "device": edge, "via": str(isp_ip)})
        for other in routers[1:]:
            checks.append({"g": "routing", "dev": other, "prefix": "0.0.0.0/0", "proto": "O"})
        checks += [{"g": "reach", "src": h, "dst": str(web)} for h in hosts]
    for h in hosts:
        checks += [{"g": "reach", "src": h, "dst": dotted(int(t.hosts[x][0]))} for x in targets]
    start = {r: _ospf(t, r) for r in routers}
    reference = {r: start[r] + "".join(f"\n{x}" for x in extra[r]) for r in routers}
    return Scenario(t, reference, start, reqs, checks, fixed)
