"""The compile's and the packet walk's shortcuts give what the general code gives: the
cheapest owner of a shared prefix (``ospf._nearest``), the plain-network flag found from
each config's facts, the routed-port cables of layer 2, and the BGP hop counts kept for
one run."""

from __future__ import annotations

import random

from support import netconfig_networks

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.netconfig import l2, ospf

FAMILIES = ("routing", "addressing", "ospf_areas", "bgp", "fhrp", "redistribution", "repair",
            "acl", "nat", "vlan", "ibgp", "vrrp")


def _networks():
    return netconfig_networks(FAMILIES, 2)


def _nearest_reference(owners, dist, first):
    """The cost and first hops (sorted, as SPF gives them) as ``Areas.intra`` found them
    before ``_nearest``."""
    best = [(dist[o] + c, o) for o, c in owners if o in dist]
    if not best:
        return None
    m = min(x for x, _ in best)
    return m, tuple(sorted(set().union(*(first[o] for x, o in best if x == m))))


def test_nearest_owner_matches_the_reference():
    rng = random.Random(7)
    routers = [f"R{k}" for k in range(6)]
    for _ in range(3000):
        dist = {r: rng.randint(0, 4) for r in routers if rng.random() < 0.8}
        first = {r: tuple(sorted({(rng.randint(1, 3), f"Gi0/{rng.randint(0, 2)}")
                                  for _ in range(rng.randint(0, 2))})) for r in dist}
        owners = [(rng.choice(routers), rng.randint(1, 3)) for _ in range(rng.randint(2, 4))]
        assert ospf._nearest(owners, dist, first) == _nearest_reference(owners, dist, first)


def _domains_reference(devices, links, status):
    """``l2.domains`` with every cable's ends through ``_end`` (no routed-port shortcut)."""
    up = {k: v[1] == "up" for k, v in status.items()}
    uf = l2._UnionFind()
    subs = {d: l2._subinterfaces(c) for d, (k, c) in devices.items() if k not in l2.SWITCHES}
    for a, b in links:
        if not (up.get(a) and up.get(b)) or a[0] not in devices or b[0] not in devices:
            continue
        (ka, cfa), (kb, cfb) = devices[a[0]], devices[b[0]]
        ca = l2._end(a[0], ka, cfa, a[1], up, subs.get(a[0], l2._NO_SUBS))
        cb = l2._end(b[0], kb, cfb, b[1], up, subs.get(b[0], l2._NO_SUBS))
        for key in ca.keys() & cb.keys():
            uf.union(ca[key], cb[key])
    out = {}
    switches = {d for d, (k, _c) in devices.items() if k in l2.SWITCHES}
    for (dev, name), ok in up.items():
        if not ok:
            continue
        if dev in switches:
            if name.startswith("Vlan"):
                uf.union(("if", dev, name), ("vl", dev, int(name[4:])))
            elif not name.startswith("Loopback"):
                continue
        out[(dev, name)] = uf.find(("if", dev, name))
    return out


def test_compiled_networks_agree_with_the_general_code():
    seen = 0
    for net in _networks():
        seen += 1
        plain = not net._ingress_fx and not any(
            cfg.nat or any(i.acl_out is not None for i in cfg.interfaces.values())
            for _kind, cfg in net.devices.values())
        assert net._plain() == plain
        status = l2.oper_status(net.devices, l2.peers(net.links))
        assert list(status.items()) == list(net.status.items())
        assert list(_domains_reference(net.devices, net.links, status).items()) == \
            list(net.domain.items())
        hops = net._hops_between()
        addrs = sorted({ip for own in net.own.values() for ip in own})
        for src in addrs[::2]:
            for dst in addrs[::3]:
                assert hops(src, dst) == net._tcp_hops(src, dst) == hops(src, dst)
    assert seen >= 30


def test_peer_table_finds_what_neighbor_finds():
    from textgyms.envs.netconfig import bgp

    checked = 0
    for net in _networks():
        configs = {d: c for d, (_k, c) in net.devices.items() if c.bgp is not None}
        if not configs:
            continue
        table = bgp.peer_table(configs)
        addrs = {ip for own in net.own.values() for ip in own}
        for d, cfg in configs.items():
            keys = addrs | {int(ip) for ip in cfg.bgp.neighbors}
            for k in sorted(keys):
                assert table[d].get(k) == cfg.bgp.neighbor(bgp._addr(k))
                checked += 1
    assert checked >= 100
