"""Fault causes in the routing protocols and gateway redundancy: BGP, HSRP and
redistribution into OSPF.

Each cause takes the parsed configurations of a working network (``cfgs``, changed in place,
and only through ``cfgs[device]``: the fault bench clones a device when it is looked up so)
and returns the fault's label ``{device, cause, components}``, or None when the network has
nothing of that kind to break. Whether the fault shows in the network's behaviour is decided
by :mod:`faults`, which owns the closed set of causes; this module imports no family.
"""

from __future__ import annotations

import numpy as np

from textgyms.envs.netconfig.model import DeviceConfig, Fhrp

Label = dict[str, object]
Configs = dict[str, DeviceConfig]


def _pick(rng: np.random.Generator, items: list):
    return items[int(rng.integers(len(items)))] if items else None


def bgp_remote_as(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """A neighbor configured with the wrong remote AS: the session never comes up."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.bgp and c.bgp.neighbors])
    if dev is None:
        return None
    nbrs = sorted(cfgs[dev].bgp.neighbors.values(), key=lambda n: int(n.ip))
    n = nbrs[int(rng.integers(len(nbrs)))]
    n.remote_as = (n.remote_as or 0) % 65000 + 1
    return {"device": dev, "cause": "bgp_remote_as", "components": ["router bgp"]}


def bgp_missing_network(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """A ``network`` statement removed: the session is up but the LAN is never advertised,
    so the peers have no route back to it."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.bgp and c.bgp.networks])
    if dev is None:
        return None
    nets = cfgs[dev].bgp.networks
    nets.pop(int(rng.integers(len(nets))))
    return {"device": dev, "cause": "bgp_missing_network", "components": ["router bgp"]}


def hsrp_no_preempt(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """The standby router loses ``preempt``: tracking on the active one no longer hands over."""
    picks = [(d, n, k) for d, c in sorted(cfgs.items()) for n, i in sorted(c.interfaces.items())
             for k, g in sorted(i.fhrp.items()) if g.preempt and g.priority == 100 and not g.track]
    pick = _pick(rng, picks)
    if pick is None:
        return None
    d, n, k = pick
    cfgs[d].interfaces[n].fhrp[k].preempt = False
    return {"device": d, "cause": "hsrp_no_preempt", "components": [n]}


def _hsrp_groups(cfgs: Configs) -> list[list[tuple[str, str, Fhrp, object]]]:
    """The members (device, interface, group, its key on the interface) of each HSRP group
    configured with its virtual IP on every member, in a stable order (read only: a cause
    edits a member through ``cfgs[device]``, the configs it may change)."""
    groups: dict[tuple, list] = {}
    for d, c in sorted(cfgs.items()):
        for n, itf in sorted(c.interfaces.items()):
            for k, g in itf.fhrp.items():
                if g.proto == "hsrp" and g.vip is not None:
                    groups.setdefault((g.group, int(g.vip)), []).append((d, n, g, k))
    return [m for _k, m in sorted(groups.items()) if len(m) >= 2]


def hsrp_wrong_priority(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """A priority that makes the wrong router active: the intended active router's priority
    lowered below its peer's, or the peer's raised above it (HSRP elects the highest
    priority; both ends preempt in these networks, so the wrong one keeps the role)."""
    groups = [m for m in _hsrp_groups(cfgs)
              if len({g.priority for _d, _n, g, _k in m}) == len(m)]  # a strict winner
    members = _pick(rng, groups)
    if members is None:
        return None
    ranked = sorted(members, key=lambda m: m[2].priority, reverse=True)
    (wd, wn, win, wk), (ld, ln, lose, lk) = ranked[0], ranked[1]
    if rng.random() < 0.5:  # lower the intended active router (a priority above 0 kept)
        low = int(rng.integers(max(1, lose.priority - 30), lose.priority))
        cfgs[wd].interfaces[wn].fhrp[wk].priority = low
        return {"device": wd, "cause": "hsrp_wrong_priority", "components": [wn]}
    high = int(rng.integers(win.priority + 1, min(255, win.priority + 50) + 1))
    cfgs[ld].interfaces[ln].fhrp[lk].priority = high
    return {"device": ld, "cause": "hsrp_wrong_priority", "components": [ln]}


def redistribute_no_subnets(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``redistribute static`` without ``subnets``: classic IOS then injects classful
    networks only, and the legacy /24s (subnets of 10/8) stay out of OSPF."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.ospf is not None
                      and c.ospf.redistribute.get("static", (False,))[0]])
    if dev is None:
        return None
    _subnets, metric, mtype = cfgs[dev].ospf.redistribute["static"]
    cfgs[dev].ospf.redistribute["static"] = (False, metric, mtype)
    return {"device": dev, "cause": "redistribute_no_subnets", "components": ["router ospf"]}


def default_not_originated(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``default-information originate`` missing on the Internet edge: OSPF never carries a
    static default route by itself, so no other router learns one."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.ospf is not None
                      and c.ospf.originate is not None])
    if dev is None:
        return None
    cfgs[dev].ospf.originate = None
    return {"device": dev, "cause": "default_not_originated", "components": ["router ospf"]}


def bgp_password_mismatch(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """A TCP MD5 password on one end of a session only: the peer's segments fail the MD5
    check (IOS logs %TCP-6-BADAUTH) and the session never comes up."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.bgp and c.bgp.neighbors])
    if dev is None:
        return None
    nbrs = sorted(cfgs[dev].bgp.neighbors.values(), key=lambda n: int(n.ip))
    n = nbrs[int(rng.integers(len(nbrs)))]
    n.password = "Md5-" + "".join(str(int(x)) for x in rng.integers(0, 10, size=6))
    return {"device": dev, "cause": "bgp_password_mismatch", "components": ["router bgp"]}


def hsrp_version_mismatch(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``standby version 2`` on one member of an HSRP group: v1 and v2 hellos do not
    interoperate, so both routers become active."""
    members = _pick(rng, _hsrp_groups(cfgs))
    if members is None:
        return None
    d, n, _g, _k = members[int(rng.integers(len(members)))]
    itf = cfgs[d].interfaces[n]
    itf.hsrp_version = 2 if itf.hsrp_version == 1 else 1
    return {"device": d, "cause": "hsrp_version_mismatch", "components": [n]}


def ospf_network_mismatch(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``ip ospf network point-to-point`` on one end of an Ethernet link: the adjacency goes
    FULL, but the two router LSAs describe the link differently and SPF installs no route
    across it."""
    picks = [(d, n) for d, c in sorted(cfgs.items()) if c.ospf is not None
             for n, i in sorted(c.interfaces.items())
             if i.ip is not None and i.ip.network.prefixlen == 30 and i.ospf_network is None
             and n.startswith("Gigabit") and not c.ospf.is_passive(n)]
    pick = _pick(rng, picks)
    if pick is None:
        return None
    cfgs[pick[0]].interfaces[pick[1]].ospf_network = "point-to-point"
    return {"device": pick[0], "cause": "ospf_network_mismatch", "components": [pick[1]]}


def ibgp_no_next_hop_self(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``next-hop-self`` dropped at the edge: its iBGP peers keep the provider's address as
    the next hop, which the IGP does not carry, so they install no route to the provider."""
    picks = [(d, a) for d, c in sorted(cfgs.items()) if c.bgp
             for a, n in sorted(c.bgp.neighbors.items()) if n.next_hop_self]
    pick = _pick(rng, picks)
    if pick is None:
        return None
    cfgs[pick[0]].bgp.neighbors[pick[1]].next_hop_self = None
    return {"device": pick[0], "cause": "ibgp_no_next_hop_self", "components": ["router bgp"]}


def bgp_no_update_source(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``update-source Loopback0`` dropped for a loopback peer: the session comes from the
    egress interface's address, which the peer does not name, and never establishes."""
    picks = [(d, a) for d, c in sorted(cfgs.items()) if c.bgp
             for a, n in sorted(c.bgp.neighbors.items()) if n.update_source]
    pick = _pick(rng, picks)
    if pick is None:
        return None
    cfgs[pick[0]].bgp.neighbors[pick[1]].update_source = None
    return {"device": pick[0], "cause": "bgp_no_update_source", "components": ["router bgp"]}


def bgp_not_redistributed(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """One direction of OSPF<->BGP redistribution missing at the border."""
    picks = [(d, "bgp") for d, c in sorted(cfgs.items()) if c.bgp and c.bgp.redistribute]
    picks += [(d, "ospf") for d, c in sorted(cfgs.items())
              if c.ospf is not None and "bgp" in c.ospf.redistribute]
    pick = _pick(rng, picks)
    if pick is None:
        return None
    d, where = pick
    if where == "bgp":
        cfgs[d].bgp.redistribute.clear()
    else:
        cfgs[d].ospf.redistribute.pop("bgp")
    comp = "router bgp" if where == "bgp" else "router ospf"
    return {"device": d, "cause": "bgp_not_redistributed", "components": [comp]}


def vrrp_auth_mismatch(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """VRRP authentication on one member only: the other discards its advertisements and
    both become master."""
    picks = [(d, n, k) for d, c in sorted(cfgs.items()) for n, i in sorted(c.interfaces.items())
             for k, g in sorted(i.fhrp.items()) if g.proto == "vrrp" and g.auth is None]
    pick = _pick(rng, picks)
    if pick is None:
        return None
    d, n, k = pick
    cfgs[d].interfaces[n].fhrp[k].auth = ("text", "vrrp" + str(int(rng.integers(10, 99))))
    return {"device": d, "cause": "vrrp_auth_mismatch", "components": [n]}


def nssa_flag_mismatch(rng: np.random.Generator, cfgs: Configs, kinds) -> Label | None:
    """``area A nssa`` missing on one router of the area: the hellos' area flags differ and
    the adjacency never forms."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.ospf is not None and c.ospf.nssa])
    if dev is None:
        return None
    area = sorted(cfgs[dev].ospf.nssa)[0]
    del cfgs[dev].ospf.nssa[area]
    return {"device": dev, "cause": "nssa_flag_mismatch", "components": ["router ospf"]}


PROTOCOL_FAULTS = (bgp_remote_as, bgp_missing_network, hsrp_no_preempt, hsrp_wrong_priority,
                   redistribute_no_subnets, default_not_originated, bgp_password_mismatch,
                   hsrp_version_mismatch, ospf_network_mismatch, ibgp_no_next_hop_self,
                   bgp_no_update_source, bgp_not_redistributed, vrrp_auth_mismatch,
                   nssa_flag_mismatch)
