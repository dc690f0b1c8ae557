"""The first-hop redundancy family: two routers share a LAN's gateway address with HSRP.

Hosts on a switched LAN use a virtual gateway address; routers R1 and R2 (already addressed
and running OSPF towards the provider-managed CORE router, behind which is a server) must run
an HSRP group so that:

* easy: R1 is active, and traffic survives R1's LAN link failing (R2 takes over);
* medium: also, when R1's uplink to CORE fails, R2 takes over (interface tracking on R1 and
  ``preempt`` on R2: tracking alone changes nothing);
* hard: two LANs (two groups) shared for load: R1 active for the first, R2 for the second,
  each tracking its uplink, with preemption both ways.

Failover is checked by failing the link in the simulator and re-running the election and the
pings; the routers' priorities and timers are the agent's choice.
"""

from __future__ import annotations

import ipaddress

import numpy as np

from textgyms.envs.netconfig.scenario import Scenario
from textgyms.envs.netconfig.topologies import (
    ETH,
    GI,
    Hosts,
    Plan,
    Topo,
    base_config,
    choose,
    dotted,
    draw,
    iface4,
    own_addrs,
    wildcard,
)

I = ipaddress.IPv4Interface  # noqa: E741


def _lan(t: Topo, plan: Plan, rng, sw: str, idx: int, port: str, owner: bool = False) -> tuple:
    """A LAN on switch ``sw`` joined by R1 and R2 on ``port``: (subnet, VIP, hosts); with
    ``owner`` the VIP is R1's own address (a VRRP address owner)."""
    net = plan.lan()
    plen, addrs = net.prefixlen, Hosts(net).ints
    vip = ipaddress.IPv4Address(addrs[1] if owner else addrs[0])
    t.kinds[sw] = "switch"
    for k, r in enumerate(("R1", "R2")):
        t.addr[(r, port)] = iface4(addrs[1 + k], plen)
        t.link(r, port, sw, GI.format(1 + k))
    hosts = []
    picks = [x + 20 for x in choose(rng, 180, 2)]  # the draws of choosing from arange(20, 200)
    for k in range(2):
        h = f"PC{2 * idx + k + 1}"
        t.kinds[h] = "host"
        t.hosts[h] = (iface4(addrs[picks[k]], plen), vip)
        t.link(sw, f"FastEthernet0/{k + 1}", h, ETH)
        hosts.append(h)
    t.lans += [("R1", port, net), ("R2", port, net)]
    return net, vip, hosts


def _core(t: Topo, plan: Plan, rng) -> tuple[str, str]:
    """CORE with uplinks to R1 and R2 and the server LAN; returns (server IP, CORE config)."""
    t.kinds["CORE"] = "router"
    for k, r in enumerate(("R1", "R2")):
        net = plan.wan()
        a, b = Hosts(net).ints
        t.addr[(r, GI.format(1))] = iface4(a, 30)
        t.addr[("CORE", GI.format(1 + k))] = iface4(b, 30)
        t.wans.append((r, GI.format(1), "CORE", GI.format(1 + k), net))
        t.link(r, GI.format(1), "CORE", GI.format(1 + k))
    srv_net = plan.lan()
    srv = Hosts(srv_net).ints
    t.addr[("CORE", GI.format(0))] = iface4(srv[0], 24)
    t.kinds["SRV1"] = "host"
    t.hosts["SRV1"] = (iface4(srv[draw(rng, 9, 200)], 24), ipaddress.IPv4Address(srv[0]))
    t.link("CORE", GI.format(0), "SRV1", ETH)
    cfg = base_config(t, "CORE") + "\nrouter ospf 1\n passive-interface GigabitEthernet0/0\n" \
        " network 0.0.0.0 255.255.255.255 area 0"
    return dotted(int(t.hosts["SRV1"][0])), cfg


def _ospf(t: Topo, r: str, extra: dict[str, list[str]] | None = None) -> str:
    lans = [i for o, i, _n in t.lans if o == r]
    lines = ["router ospf 1", *(f" passive-interface {i}" for i in lans)]
    for _i, addr in own_addrs(t, r):
        lines.append(f" network {wildcard(addr.network)} area 0")
    return base_config(t, r, extra) + "\n" + "\n".join(lines)


def fhrp(rng: np.random.Generator, level: str, proto: str = "hsrp") -> Scenario:
    """HSRP on one LAN (easy, medium: with uplink tracking) or two LANs (hard); VRRP on one
    LAN (easy) or two (medium, hard: the first LAN's gateway is R1's own address, so R1 is
    its address owner)."""
    t, plan = Topo("redundant-gateway"), Plan(rng)
    t.kinds.update({"R1": "router", "R2": "router"})
    owner = proto == "vrrp" and level == "hard"
    lans = [_lan(t, plan, rng, "SW1", 0, GI.format(0), owner)]
    if level == "hard" or (proto == "vrrp" and level == "medium"):
        lans.append(_lan(t, plan, rng, "SW2", 1, GI.format(2)))
    srv, core_cfg = _core(t, plan, rng)
    groups = [draw(rng, 1, 50) for _ in lans]
    track = level != "easy" and proto == "hsrp"  # VRRP tracks objects only: not modelled
    extra: dict[str, dict[str, list[str]]] = {"R1": {}, "R2": {}}
    reqs: list[dict] = []
    checks: list[dict] = []
    for k, ((net, vip, hosts), grp) in enumerate(zip(lans, groups)):
        port = GI.format(0 if k == 0 else 2)
        act, stby = ("R1", "R2") if k == 0 else ("R2", "R1")
        if proto == "vrrp":  # VRRP preempts by default; an address owner needs no priority
            extra[act][port] = [f" vrrp {grp} ip {vip}"] + (
                [] if owner and k == 0 else [f" vrrp {grp} priority 110"])
            extra[stby][port] = [f" vrrp {grp} ip {vip}"]
        else:
            extra[act][port] = [f" standby {grp} ip {vip}", f" standby {grp} priority 110",
                                f" standby {grp} preempt"]
            extra[stby][port] = [f" standby {grp} ip {vip}", f" standby {grp} preempt"]
        if track:
            extra[act][port].append(f" standby {grp} track {GI.format(1)} 20")
        reqs.append({"type": "fhrp", "group": grp, "vip": str(vip), "subnet": str(net),
                     "active": act, "standby": stby, "track": track, "proto": proto})
        _checks(checks, hosts, str(vip), srv, act, stby, port, track)
    reference = {r: _ospf(t, r, extra[r]) for r in ("R1", "R2")}
    start = {r: _ospf(t, r) for r in ("R1", "R2")}
    fixed = {"CORE": core_cfg, "SW1": "hostname SW1"}
    if level == "hard":
        fixed["SW2"] = "hostname SW2"
    return Scenario(t, reference, start, reqs, checks, fixed)


def _checks(checks: list, hosts, vip: str, srv: str, act: str, stby: str, port: str,
            track: bool) -> None:
    for h in hosts:
        checks.append({"g": "reach", "src": h, "dst": srv})
    h = hosts[0]
    checks.append({"g": "fhrp", "host": h, "vip": vip, "active": act, "fail": None, "dst": srv})
    checks.append({"g": "fhrp", "host": h, "vip": vip, "active": stby, "fail": [act, port],
                   "dst": srv})
    # The primary takes the role back once its link recovers: preempt where it is needed.
    checks.append({"g": "fhrp", "host": h, "vip": vip, "active": act, "fail": [act, port],
                   "recover": True, "dst": srv})
    if track:
        checks.append({"g": "fhrp", "host": h, "vip": vip, "active": stby,
                       "fail": [act, GI.format(1)], "dst": srv})
        checks.append({"g": "fhrp", "host": h, "vip": vip, "active": act,
                       "fail": [act, GI.format(1)], "recover": True, "dst": srv})
