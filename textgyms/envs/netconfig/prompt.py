"""The first observation of a NetConfig episode: role, topology, requirements, the managed
devices' current configurations, extra context (symptoms, logs, the question) and the tools."""

from __future__ import annotations

import json
from functools import lru_cache

from textgyms.envs.netconfig.memo import parsed_config
from textgyms.envs.netconfig.task import NetTask

INTRO = {
    "addressing": "Address every interface of the routers you manage and enable it.",
    "acl": "Implement the traffic-filtering policy on the firewall router.",
    "routing": "Configure routing so that the requirements below hold.",
    "vlan": "Configure VLANs, access ports, trunks and inter-VLAN routing.",
    "nat": "Configure NAT on the edge router so inside hosts can reach the Internet.",
    "repair": (
        "The network below is broken. Find and fix the faults with minimal changes: lines a "
        "fix does not need to touch must stay as they are, and locked devices must not change."
    ),
    "diagnosis": "Find the root cause of the outage described below. Do not change anything.",
    "analysis": "Analyse the topology below.",
    "ospf_areas": "Design multi-area OSPF: put every interface in its area as required below.",
    "fhrp": "Make the LAN gateway redundant with HSRP on the two routers.",
    "bgp": "Configure BGP peering and routing policy as required below.",
    "redistribution": "Bring routes OSPF does not carry into the OSPF domain.",
    "ibgp": "Run iBGP across the autonomous system over its OSPF underlay, as required below.",
    "bgp_ospf": "Redistribute between OSPF and BGP at the border router as required below.",
    "vrrp": "Make the LAN gateway redundant with VRRP on the two routers.",
    "nssa": "Design multi-area OSPF with a not-so-stubby area, as required below.",
    "ipv6": "Deploy IPv6 (addresses, IPv6 routing, static routes or OSPFv3) as required below.",
}


def _hosts(task: NetTask) -> list[str]:
    kinds = dict(task.devices)
    out = []
    for name, text in task.fixed:
        if kinds[name] != "host":
            out.append(f"  {name} ({kinds[name]}, provider-managed: not yours to configure)")
            continue
        itf, v6 = None, ""
        # Only an ``ipv6`` line, however abbreviated ("ipv..."), gives a host an IPv6
        # address: a host without one is not parsed (its network may never be compiled)
        if "ipv" in text.lower():
            itf = next(iter(parsed_config(text, name)[0].interfaces.values()), None)
            v6 = ", ".join(str(a.iface) for a in itf.ipv6) if itf is not None else ""
        if itf is not None and itf.ip is None and v6:
            out.append(f"  {name} (host): {v6} (default router from router advertisements)")
            continue
        words = text.split()
        ip = words[words.index("address") + 1] if "address" in words else "?"
        mask = words[words.index("address") + 2] if "address" in words else "?"
        line = f"  {name} (host): {ip} {mask}, default gateway {words[-1]}"
        out.append(line + (f"; IPv6 {v6}" if v6 else ""))
    return out


@lru_cache(maxsize=256)
def render_prompt(task: NetTask) -> str:
    """The task prompt (cached: GRPO groups reset the same task many times)."""
    kinds = dict(task.devices)
    mine = [d for d, _ in task.start]
    parts = [
        f"You are a network engineer working on a {task.topology} network "
        f"({task.family}, {task.level}). {INTRO[task.family]}",
        "",
        "Cabling:",
        *(f"  {a} {ai} <-> {b} {bi}" for a, ai, b, bi in task.links),
        "",
        "Devices you manage: " + ", ".join(f"{d} ({kinds[d]})" for d in mine),
        "Other devices:",
        *_hosts(task),
    ]
    if task.requirements:
        parts += ["", "Requirements:", task.requirements]
    if task.level == "easy" and task.spec != "[]":
        parts += ["", "Requirements as JSON:", json.dumps(json.loads(task.spec))]
    parts += ["", "Current configuration of the devices you manage:"]
    for d, text in task.start:
        parts += [f"! device {d}", text]
    if task.context:
        parts += ["", task.context]
    parts += ["", _HOW]
    if task.family == "ipv6" or any("ipv6" in text for _d, text in task.start):
        parts.append(_HOW6)
    return "\n".join(parts)


_HOW = """\
Dialect: IOS-lite, a strict subset of Cisco IOS (hostname; interface with ip address, \
[no] shutdown, description, ip access-group, ip nat inside|outside, switchport mode/access \
vlan/trunk allowed vlan/native vlan, encapsulation dot1Q, ip ospf cost|priority|PID area \
A|authentication [message-digest]|authentication-key|message-digest-key|network TYPE, \
standby version 1|2, standby G ip [A] (no A: learnt)|priority 0-255|preempt|track IF \
[decrement] N|timers H D|authentication [text S|md5 key-string K], vrrp G ip A|priority \
1-254|preempt|timers advertise N|authentication; vlan/name; \
ip routing; ip route (next hop, exit interface or both, distance, name, tag); router ospf with \
network/passive-interface [default]/router-id/area A authentication|stub|nssa \
[no-summary] [default-information-originate]/redistribute static|connected|bgp AS [subnets] \
[metric N] [metric-type N] [tag N] [route-map]/default-information originate; router bgp \
with neighbor A|PG remote-as/peer-group/route-map/prefix-list/next-hop-self/activate/password/\
update-source/ebgp-multihop/shutdown, network mask and redistribute ospf PID [match \
internal|external [1|2]|nssa-external [1|2]]|static|connected [route-map], also inside \
address-family ipv4 ... exit-address-family; address-family ipv6 with neighbor A activate \
and network P/L (IPv6 neighbors by IPv6 address); route-map (match ip address prefix-list \
or ACL|tag N, set local-preference|as-path prepend|metric|metric-type|tag); \
ip prefix-list; `!` is a comment and `exit` leaves one mode level; \
standard and extended ACLs, numbered or named (protocol ip|tcp|udp|icmp|ospf or a number); \
ip nat pool; ip nat inside source \
list|static, with pools, overload, port forwarding and extendable). Keywords may be \
abbreviated as IOS allows. Interfaces are enabled unless `shutdown`.
Tools (XML-style tags or JSON tool calls; only the last call in a reply counts): show_run, \
show_ip_route, show_ip_int_brief, show_ip_ospf_neighbor, show_access_lists, show_vlan_brief, \
show_standby_brief, show_ip_bgp_summary, get_logs (each takes a device), ping and traceroute \
(target address, device attribute), test_flow (src, dst, proto, port), apply_config \
(config lines, device attribute) and submit.
Submit ends the episode. For configuration tasks, put the complete configuration of every \
device you manage inside submit, one section per device starting with "! device NAME" (each \
device exactly once), or submit with an empty body to submit your candidate as edited with \
apply_config. Lines outside the dialect cost points. Example of a tool call: \
{"name": "show_run", "arguments": {"device": "..."}}"""
_HOW6 = """\
IPv6 (same dialect): ipv6 unicast-routing; interface ipv6 address X/L [eui-64] | FE80::X \
link-local, ipv6 enable, ipv6 ospf PID area A, ipv6 ospf cost N; ipv6 route P/L (next hop, \
exit interface, or both with a link-local next hop; distance, name); ipv6 router ospf PID with \
router-id/passive-interface [default]. Extra tools: show_ipv6_route, show_ipv6_int_brief, \
show_ipv6_ospf_neighbor (each takes a device); ping and traceroute take IPv6 targets."""
