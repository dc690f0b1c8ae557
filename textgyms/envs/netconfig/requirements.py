"""Typed requirements rendered to natural language (and shown as JSON at the easy level)."""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig.topologies import (
    canonical_plen,
    canonical_quad,
    dotted,
    netmask_text,
)


def _interface(text: str) -> tuple[str, str, str]:
    """(address, netmask, network) texts of an interface ``A.B.C.D/N``, as ``ipaddress``
    writes them. The generators write the canonical form, read here by arithmetic; any
    other text is left to ``IPv4Interface`` (its parsing, its errors)."""
    addr, _slash, plen_text = text.partition("/")
    value, plen = canonical_quad(addr), canonical_plen(plen_text)
    if value is None or plen is None:
        iface = ipaddress.IPv4Interface(text)
        return str(iface.ip), str(iface.netmask), str(iface.network)
    mask = (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
    return dotted(value), netmask_text(plen), f"{dotted(value & mask)}/{plen}"


def _addr(r: dict) -> str:
    ip, netmask, net = _interface(r["address"])
    how = r.get("how", "exact")
    if how == "first":
        return f"{r['device']} {r['interface']}: the first usable address of {net} (enabled)"
    if how == "last":
        return f"{r['device']} {r['interface']}: the last usable address of {net} (enabled)"
    return f"{r['device']} {r['interface']}: {ip} {netmask} (enabled)"


def _rule(k: int, r: dict) -> str:
    proto = r["proto"].upper() if r["proto"] != "ip" else "all IP traffic"
    port = ""
    if r.get("port"):
        op, *vals = r["port"]
        port = {
            "eq": f" to port {vals[0]}",
            "range": f" to ports {vals[0]}-{vals[-1]}",
            "gt": f" to ports above {vals[0]}",
            "lt": f" to ports below {vals[0]}",
        }[op]
    est = " (only established connections: ACK or RST set)" if r.get("established") else ""
    return f"  {k}. {r['action']} {proto} from {r['src']} to {r['dst']}{port}{est}"


def _acl(r: dict) -> str:
    kind = "a standard" if r["kind"] == "standard" else "an extended"
    name = f"numbered {r['name']}" if r["name"].isdigit() else f"named {r['name']}"
    lines = [
        f"Filter traffic with {kind} ACL ({name}) applied {r['direction']}bound on "
        f"{r['device']} {r['interface']}. Rules in priority order (first match wins):"
    ]
    lines += [_rule(k, rule) for k, rule in enumerate(r["rules"], 1)]
    lines.append(f"  Everything else: {r['default']}.")
    return "\n".join(lines)


def _routing(r: dict) -> str:
    if r["protocol"] == "static":
        return (
            "Routing: use static routes only (no dynamic routing protocol); every router "
            "must reach every LAN."
        )
    text = (
        f"Routing: run OSPF process {r['process']} in area {r['area']} on every router "
        "and advertise every connected subnet; routes to remote LANs must be learned via "
        "OSPF (not static routes)."
    )
    if r.get("passive"):
        text += " LAN interfaces must be passive (no OSPF hellos towards hosts)."
    return text


def _areas(r: dict) -> str:
    lines = ["OSPF areas: run OSPF on every router with each interface in its area (area 0 is "
             "the backbone; border routers join their branch area to it); routes to remote "
             "LANs must be learned via OSPF:"]
    lines += [f"  {x}" for x in r["links"]]
    if r.get("passive"):
        lines.append("  LAN interfaces must be passive (no OSPF hellos towards hosts).")
    return "\n".join(lines)


def _fhrp(r: dict) -> str:
    proto = r.get("proto", "hsrp").upper()
    text = (f"Gateway redundancy for {r['subnet']}: {proto} group {r['group']} with virtual IP "
            f"{r['vip']} (the hosts' gateway) on {r['active']} and {r['standby']}; "
            f"{r['active']} is active, and if its LAN link fails {r['standby']} takes over "
            f"({r['active']} takes the role back when the link recovers).")
    if r.get("track"):
        text += (f" If {r['active']}'s uplink to CORE fails, {r['standby']} must take over "
                 "too (and give it back when it recovers).")
    return text


def _bgp(r: dict) -> str:
    peers = ", ".join(f"{ip} (AS {asn})" for ip, asn in r["peers"].items())
    return (f"BGP: {r['device']} runs BGP in AS {r['asn']}, peers with {peers} and "
            f"advertises {', '.join(r['advertise'])}.")


def _bgp_policy(r: dict) -> str:
    text = (f"Policy: traffic to the server {r['server']} leaves through {r['prefer']} "
            f"(use BGP local preference), and still reaches it through {r['backup']} when "
            f"the link to {r['prefer']} fails.")
    if r.get("inbound"):
        text += (f" Return traffic from the server must also come in through {r['prefer']} "
                 f"(make the path through {r['backup']} longer).")
    return text


def _ibgp(r: dict) -> str:
    loops = ", ".join(f"{d} {ip}" for d, ip in r["loopbacks"].items())
    return (f"iBGP: {', '.join(r['routers'])} run BGP in AS {r['asn']} with a full mesh of "
            f"iBGP sessions between their Loopback0 addresses ({loops}; OSPF already carries "
            f"them), and each advertises its LAN in BGP. {r['edge']} also peers with the "
            f"provider at {r['isp']} (AS {r['isp_asn']}). Every router must reach the server "
            f"{r['server']} by BGP routes; the provider link must stay out of OSPF (no router "
            "but the edge may have a route to it).")


def _bgp_ospf(r: dict) -> str:
    text = (f"Redistribution: {r['device']} runs BGP in AS {r['asn']}, peers with the partner "
            f"at {r['peer']} (AS {r['peer_asn']}), and redistributes between OSPF process 1 "
            "and BGP both ways: the partner learns the inside LANs by BGP, and every other "
            "OSPF router learns the partner's LANs by OSPF.")
    if r["only_lans"]:
        text += (" Only the inside LANs (" + ", ".join(r["inside"]) + ") may go to the partner:"
                 " no transit link subnet.")
    if r["denied"]:
        text += (" Of the partner's LANs only " + ", ".join(r["allowed"]) + " may enter OSPF ("
                 + ", ".join(r["denied"]) + " must not).")
    return text


def _nssa(r: dict) -> str:
    return (f"NSSA: area {r['area']} is a not-so-stubby area (every router in it agrees): no "
            "external route from the rest of the domain may enter it, and its ABR gives it a "
            f"default route instead. Inside it, {r['device']} reaches the legacy LAN "
            f"{r['lan']} through {r['via']} (not running OSPF): route it statically and "
            "redistribute it, so every router learns it by OSPF. "
            f"{r['edge']} already redistributes its static route to {r['external']} (the "
            "Internet server LAN).")


def _ospf6(r: dict) -> str:
    if r["v6only"]:
        text = (f"Routing: enable IPv6 routing and run OSPFv3 process {r['process']} in area 0 "
                "on every interface; routes to remote LANs must be learned via OSPFv3. The "
                "routers have no IPv4 address.")
    else:
        text = (f"Dual stack: IPv4 already runs multi-area OSPF and must keep working. Enable "
                f"IPv6 routing and run OSPFv3 process {r['process']} with every interface in "
                "the same area as for IPv4; routes to remote LANs must be learned via OSPFv3:")
        text += "".join(f"\n  {x}" for x in r["areas"])
    if r.get("passive"):
        text += "\n  LAN interfaces must be passive (no OSPFv3 hellos towards hosts)."
    return text


RENDER = {
    "address6": lambda r: f"{r['device']} {r['interface']}: {r['address']} (enabled)",
    "routing6": lambda r: (
        "Routing: enable IPv6 routing and use static routes only (no dynamic routing "
        "protocol); every router must reach every LAN."
    ),
    "ospf6": _ospf6,
    "reach6": lambda r: (
        "Every host must reach every other host over IPv6 (hosts take their default router "
        f"from router advertisements): {', '.join(r['hosts'])}."
    ),
    "legacy": lambda r: (
        f"The legacy LAN {r['lan']} sits behind {r['via']} (not running OSPF) off "
        f"{r['device']}: route it there statically and make every OSPF router learn it "
        "via OSPF, so every host reaches it."
    ),
    "default_route": lambda r: (
        f"{r['device']} is the Internet exit (default route via {r['via']}); every other "
        "router must learn the default route via OSPF so every host reaches the Internet."
    ),
    "bgp": _bgp,
    "ibgp": _ibgp,
    "bgp_ospf": _bgp_ospf,
    "nssa": _nssa,
    "bgp_policy": _bgp_policy,
    "fhrp": _fhrp,
    "ospf_areas": _areas,
    "router_id": lambda r: (
        f"{r['device']}: the OSPF router ID is {r['rid']} (its Loopback0 address, advertised "
        "in the router's area)."
    ),
    "address": _addr,
    "acl": _acl,
    "routing": _routing,
    "reach": lambda r: f"{r['src']} must be able to ping {r['dst']}.",  # src may list hosts
    "waypoint": lambda r: (
        f"Traffic from {r['src']} to {r['dst']} must pass through {r['via']} (tune OSPF "
        "interface costs)."
    ),
    "vlan": lambda r: f"On {r['device']}, VLAN {r['vlan']} is named {r['name']}.",
    "access": lambda r: (
        f"{r['device']} {r['interface']} is an access port in VLAN {r['vlan']} ({r['host']})."
    ),
    "trunk": lambda r: (
        f"{r['device']} {r['interface']} is an 802.1Q trunk carrying exactly VLANs "
        f"{','.join(str(v) for v in r['vlans'])}."
    ),
    "gateway": lambda r: (
        f"VLAN {r['vlan']} ({r['subnet']}) is routed by {r['device']} at {r['address']} "
        f"using {r['mode']}."
    ),
    "nat_pat": lambda r: (
        f"On {r['device']}, translate traffic from {', '.join(r['networks'])} leaving "
        f"{r['outside']} to the address of {r['outside']} (PAT/overload, standard ACL "
        f"{r['acl']}); inside interfaces: {', '.join(r['inside'])}."
    ),
    "nat_static": lambda r: (
        f"On {r['device']}, statically map inside server {r['local']} to public address "
        f"{r['global']}."
    ),
    "isolated": lambda r: f"{r['a']} and {r['b']} must not share a broadcast domain.",
    "preserve": lambda r: f"Do not change {r['what']}.",
}


def render(reqs: list[dict]) -> str:
    """One line (or block) per requirement."""
    return "\n".join(f"- {RENDER[r['type']](r)}" for r in reqs)
