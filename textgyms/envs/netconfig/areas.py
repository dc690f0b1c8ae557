"""The multi-area OSPF design family: a backbone (area 0) of core routers, each border router
attached to a branch router in its own area. The agent must put every interface in its area,
bring up every adjacency, and (medium, hard) keep LANs passive; at the hard level every router
also takes its Loopback0 address as its router ID. Branch LANs then reach each other as
inter-area routes through the ABRs, which the checks verify by behaviour (pings over every
equal-cost path, OSPF provenance of the forwarding route, areas, adjacencies, router IDs)."""

from __future__ import annotations

import numpy as np

from textgyms.envs.netconfig.scenario import Scenario, host_collateral
from textgyms.envs.netconfig.topologies import (
    BRANCH_WANS,
    GI,
    LEGACY_WANS,
    Plan,
    Topo,
    add_lan,
    add_wan,
    base_config,
    dotted,
    draw,
    iface4,
    link_ends,
    net_text,
    own_addrs,
    wan,
    wildcard,
)

AREA_SETS = ((1, 2, 3), (10, 20, 30), (100, 200, 300), (11, 12, 13))


def _branches(rng: np.random.Generator, t: Topo, n: int) -> dict[tuple[str, str], int]:
    """Hang ``n`` branch routers (one LAN and host each) off distinct core routers, each in
    its own area; return the area of every interface (core interfaces in area 0)."""
    areas = {key: 0 for key in t.addr}
    plan = Plan(rng)
    # The core uses 10/8 or 172.16/12: branches take 192.168/16, so nothing overlaps.
    plan.base, plan.wan_block = "192.168", BRANCH_WANS
    ids = AREA_SETS[draw(rng, len(AREA_SETS))]
    core = t.routers()
    abrs = [core[int(k)] for k in rng.permutation(len(core))[:n]]
    for k, abr in enumerate(abrs):
        br = f"BR{k + 1}"
        t.kinds[br] = "router"
        port = GI.format(1 + sum(1 for (d, _p) in t.desc if d == abr))
        add_wan(t, plan, abr, port, br, GI.format(1))
        add_lan(t, rng, plan, br, GI.format(0), [f"HB{k + 1}"])
        for key in t.addr:
            if key not in areas:
                areas[key] = ids[k]
    return areas


def _loopbacks(t: Topo, areas: dict) -> dict[str, str]:
    """A Loopback0 /32 per router (10.255.255.N: no address plan draws 10.255), in the area
    of the router's other interfaces; returns router -> router ID."""
    rids = {}
    for k, r in enumerate(sorted(t.routers()), 1):
        addr = iface4(0x0AFFFF00 | k, 32)  # 10.255.255.k/32
        t.addr[(r, "Loopback0")] = addr
        t.desc[(r, "Loopback0")] = "router ID"
        areas[(r, "Loopback0")] = 0 if not r.startswith("BR") else max(
            a for (d, _i), a in areas.items() if d == r)
        rids[r] = str(addr.ip)
    return rids


def _config(t: Topo, r: str, areas: dict, passive: bool, rid: str | None, base: str) -> str:
    """``base`` (``r``'s base_config) and its OSPF process with the interfaces' areas."""
    lines = ["router ospf 1"]
    if rid:
        lines.append(f" router-id {rid}")
    if passive:
        lines += [f" passive-interface {i}" for o, i, _ in t.lans if o == r]
    for iface, addr in own_addrs(t, r):
        lines.append(f" network {wildcard(addr.network)} area {areas[(r, iface)]}")
    return base + "\n" + "\n".join(lines)


def ospf_areas(rng: np.random.Generator, level: str) -> Scenario:
    """Multi-area OSPF: 1 (easy), 2 (medium) or 3 (hard) branch areas around area 0."""
    n_core, chords, n_areas = {"easy": (2, 0, 1), "medium": (3, 0, 2), "hard": (4, 1, 3)}[level]
    t = wan(rng, n_core, chords) if n_core > 2 else _pair(rng)
    areas = _branches(rng, t, n_areas)
    passive = level != "easy"
    rids = _loopbacks(t, areas) if level == "hard" else {}
    start = {r: base_config(t, r) for r in t.routers()}
    reference = {r: _config(t, r, areas, passive, rids.get(r), start[r]) for r in start}
    reqs: list[dict] = [{"type": "ospf_areas", "passive": passive, "areas": sorted(
        {a for a in areas.values()}), "links": area_text(t, areas)}]
    checks: list[dict] = []
    for (dev, iface), area in sorted(areas.items()):
        checks.append({"g": "ospf_area", "dev": dev, "if": iface, "area": area})
    for a, ai, b, _bi, _net in t.wans:
        checks.append({"g": "adjacency", "a": a, "if": ai, "b": b})
    checks.append({"g": "router_ids", "devs": t.routers()})
    for r, rid in sorted(rids.items()):
        reqs.append({"type": "router_id", "device": r, "rid": rid})
        checks.append({"g": "router_id", "dev": r, "rid": rid})
    prefixes = [net_text(net) for _o, _i, net in t.lans]
    for r in t.routers():
        for (owner, iface, _net), prefix in zip(t.lans, prefixes):
            if owner != r:
                checks.append({"g": "routing", "dev": r, "prefix": prefix, "proto": "O"})
            elif passive:
                checks.append({"g": "passive", "dev": r, "if": iface})
    hosts = sorted(t.hosts)
    text = {h: dotted(int(t.hosts[h][0])) for h in hosts}  # written once, read n - 1 times
    for h in hosts:
        for other in hosts:
            if other != h:
                checks.append({"g": "reach", "src": h, "dst": text[other]})
    reqs.append({"type": "reach", "src": ", ".join(hosts), "dst": "every other host"})
    checks += host_collateral(rng, t.hosts)
    return Scenario(t, reference, start, reqs, checks)


def _pair(rng: np.random.Generator) -> Topo:
    """Two core routers on one link, a LAN each (the ring of :func:`wan` needs three)."""
    from textgyms.envs.netconfig.topologies import chain

    t = chain(rng, 2)
    t.name = "small-wan"
    return t


def area_text(t: Topo, areas: dict) -> list[str]:
    """Per area, the interfaces in it, as the requirement lists them."""
    by_area: dict[int, list[str]] = {}
    for (dev, iface), area in sorted(areas.items()):
        by_area.setdefault(area, []).append(f"{dev} {iface}")
    return [f"area {a}: {', '.join(v)}" for a, v in sorted(by_area.items())]


def nssa(rng: np.random.Generator, level: str) -> Scenario:
    """Multi-area OSPF (as :func:`ospf_areas` at ``level``) where the first branch area is
    an NSSA: its branch router redistributes a static route to a legacy LAN (type 7,
    translated to type 5 by the ABR), a backbone router redistributes the Internet server LAN
    (type 5, which must not enter the NSSA), and the ABR sends the NSSA a default route."""
    from textgyms.envs.netconfig.families import _add_isp

    sc = ospf_areas(rng, level)
    t = sc.topo
    t.name = "nssa"
    areas = {(c["dev"], c["if"]): c["area"] for c in sc.checks if c["g"] == "ospf_area"}
    area = areas[("BR1", GI.format(1))]
    abr = next(d for (d, i), a in areas.items() if a == area and not d.startswith("BR"))
    own = t.routers()  # the agent's routers (LEG1 and ISP are not)
    edge = next(r for r in own if not r.startswith("BR") and r != abr)
    plan = Plan(rng)
    plan.base, plan.wan_block = "10.250", LEGACY_WANS
    t.kinds["LEG1"] = "router"
    link = add_wan(t, plan, "BR1", GI.format(2), "LEG1", GI.format(1))
    lan = add_lan(t, rng, plan, "LEG1", GI.format(0), ["HL1"])
    near, far = link_ends(link)
    isp_ip, _block, web, isp_cfg = _add_isp(rng, t, edge, GI.format(7))
    back = t.addr[(edge, GI.format(7))].ip
    sc.fixed["ISP"] = isp_cfg + "".join(f"\nip route {n} {back}" for n in (
        "10.0.0.0 255.0.0.0", "172.16.0.0 255.240.0.0", "192.168.0.0 255.255.0.0"))
    sc.fixed["LEG1"] = base_config(t, "LEG1") + f"\nip route 0.0.0.0 0.0.0.0 {near}"
    members = sorted({d for (d, _i), a in areas.items() if a == area})
    web_lan = "198.51.100.0/24"
    add = {d: [] for d in own}
    for d in members:
        add[d].append(f"router ospf 1\n area {area} nssa" + (
            " default-information-originate" if d == abr else ""))
    add["BR1"] = [f"ip route {lan.network_address} {lan.netmask} {far}", *add["BR1"],
                  " redistribute static subnets"]
    add[edge] += [f"ip route 198.51.100.0 255.255.255.0 {isp_ip}",
                  "router ospf 1\n redistribute static subnets"]
    for d in own:
        # only BR1 (the legacy link) and the edge (the provider link) have new ports: every
        # other router's addressing part is what ospf_areas rendered
        if d == "BR1" or d == edge:
            base = base_config(t, d)
            sc.start[d] = base + sc.start[d][len(base_config_prefix(sc.start[d])):]
            sc.reference[d] = base + sc.reference[d][len(base_config_prefix(sc.reference[d])):]
        sc.reference[d] += "".join(f"\n{x}" for x in add[d])
    sc.reqs.append({"type": "nssa", "area": area, "device": "BR1", "lan": net_text(lan),
                    "via": str(far), "edge": edge, "external": web_lan})
    hosts = sorted(h for h in t.hosts if h.startswith("HB") or h.startswith("H"))
    hosts = [h for h in hosts if h not in ("HL1", "WEB1")]
    lan_text, legacy, web_text = net_text(lan), dotted(int(t.hosts["HL1"][0])), str(web)
    for d in own:
        if d != "BR1":
            sc.checks.append({"g": "routing", "dev": d, "prefix": lan_text, "proto": "O"})
    for d in members:  # inside the NSSA: the default route, not the type-5 route
        if d != abr:
            sc.checks.append({"g": "no_route", "dev": d, "prefix": web_lan})
            sc.checks.append({"g": "routing", "dev": d, "prefix": web_lan, "proto": "O"})
    sc.checks += [{"g": "reach", "src": h, "dst": legacy} for h in hosts]
    sc.checks += [{"g": "reach", "src": h, "dst": web_text} for h in hosts]
    return sc


def base_config_prefix(text: str) -> str:
    """The addressing part of a generated configuration (up to its routing blocks)."""
    cut = text.find("\nrouter ")
    return text if cut < 0 else text[:cut]
