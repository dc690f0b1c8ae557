"""The agent's tools, run on its candidate network only (never the reference or a label).

A tool state (:class:`env.NetState`) gives ``devices`` (the network's device names),
``config(device)`` (a device's candidate config, without compiling the network), ``net`` (the
compiled candidate), ``mine`` and ``editable(device)`` (the agent's configs), ``hits`` (ACL
match counters) and ``logs``."""

from __future__ import annotations

import ipaddress
from typing import Any

from textgyms.envs.netconfig import show, show6, show_bgp
from textgyms.envs.netconfig.acl import format_packet
from textgyms.envs.netconfig.bounded import by_identity
from textgyms.envs.netconfig.memo import Memo, key_of
from textgyms.envs.netconfig.model import PROTO_NAME, PROTO_NUM
from textgyms.envs.netconfig.parser import apply_counted
from textgyms.envs.netconfig.routing import Walk
from textgyms.envs.netconfig.topologies import canonical_quad, dotted

SHOW_CMDS = {
    "show_run": ("show running-config", show.show_run),
    "show_ip_route": ("show ip route", show.show_ip_route),
    "show_ip_int_brief": ("show ip interface brief", show.show_ip_int_brief),
    "show_ip_ospf_neighbor": ("show ip ospf neighbor", show.show_ip_ospf_neighbor),
    "show_vlan_brief": ("show vlan brief", show.show_vlan_brief),
    "show_standby_brief": ("show standby brief", show.show_standby_brief),
    "show_ip_bgp_summary": ("show ip bgp summary", show_bgp.show_ip_bgp_summary),
    "show_ipv6_route": ("show ipv6 route", show6.show_ipv6_route),
    "show_ipv6_int_brief": ("show ipv6 interface brief", show6.show_ipv6_int_brief),
    "show_ipv6_ospf_neighbor": ("show ipv6 ospf neighbor", show6.show_ipv6_ospf_neighbor),
}


# (network memo key, command, device) -> its output: the members of a GRPO group start from
# one compiled network and often look at it the same way first. Strings only: nothing here
# for the garbage collector to scan but the key tuples.
_SHOWN = Memo(512)


def shown(net, name: str, dev: str) -> str:
    """The output of the show command ``name`` on ``dev``: a pure function of the network
    (no show command reads NAT state, the only thing a packet walk writes), so a network
    compiled from texts (one with a memo key: an unedited candidate) renders each command
    once; an edited candidate's network has no key and is rendered every time."""
    fn = SHOW_CMDS[name][1]
    key = key_of(net)
    if key is None:
        return fn(net, dev)
    return _SHOWN.get((key, name, dev), lambda: fn(net, dev))


# (config id, "run") -> (config, its ``show running-config``), for shared parsed configs: the
# members of a GRPO group read the same starting configs.
_RUNNING = Memo(256)


def running_config(cfg) -> str:
    """``show running-config`` of ``cfg``, rendered once per shared parsed config (an edited
    device's own copy is rendered every time)."""
    return by_identity(_RUNNING, cfg, "run", lambda: show.running_config(cfg))


def _addr(text: str) -> int | None:
    """The int of an IPv4 address as ``ipaddress`` reads ``text`` (stripped), or None. A
    quad written as ``str(IPv4Address)`` writes one (an agent's usual target) takes a dict
    lookup per octet instead of ``ipaddress``'s parser, a tenth of the cost."""
    text = str(text).strip()
    n = canonical_quad(text)
    if n is not None:
        return n
    try:
        return int(ipaddress.IPv4Address(text))
    except ValueError:
        return None


def _addr6(text: str) -> int | None:
    try:
        return int(ipaddress.IPv6Address(str(text).strip()))
    except ValueError:
        return None


def _count(state, walk) -> None:
    for key in walk.hits:
        state.hits[key] = state.hits.get(key, 0) + 1


def logs(state, dev: str) -> str:
    """The syslog buffer of ``dev`` as the candidate network stands."""
    net = state.net
    out = []
    for (d, name), (status, proto) in sorted(net.status.items()):
        if d != dev:
            continue
        if status == "administratively down":
            out.append(f"%LINK-5-CHANGED: Interface {name}, changed state to administratively down")
        elif proto == "down" and name in net.config(dev).interfaces:
            out.append(
                f"%LINEPROTO-5-UPDOWN: Line protocol on Interface {name}, changed state to down"
            )
    for a in net.adjacencies.get(dev, ()):
        rid = ipaddress.IPv4Address(a.neighbor_rid)
        out.append(
            f"%OSPF-5-ADJCHG: Process 1, Nbr {rid} on {a.iface} from LOADING to FULL, Loading Done"
        )
    if net.config(dev).ospf6 is not None:
        for a in net.v6.adjacencies.get(dev, ()):
            rid = ipaddress.IPv4Address(a.neighbor_rid)
            out.append(f"%OSPFv3-5-ADJCHG: Process {net.config(dev).ospf6.pid}, Nbr {rid} on "
                       f"{a.iface} from LOADING to FULL, Loading Done")
        out += [msg for d, msg in net.v6.events if d == dev]
    out += [msg for d, msg in net.events if d == dev]
    out += state.logs.get(dev, [])
    stamp = [
        f"*Mar  1 00:{k // 60:02d}:{k % 60:02d}.{(211 * k) % 1000:03d}: " for k in range(len(out))
    ]
    return "\n".join(s + m for s, m in zip(stamp, out)) or "(log buffer empty)"


def run_tool(state, name: str, args: dict[str, Any]) -> tuple[str, str | None]:
    """(output, error or None) of one tool call."""
    dev = str(args.get("device") or "").strip()
    if name in SHOW_CMDS or name in (
        "show_access_lists",
        "get_logs",
        "ping",
        "traceroute",
        "apply_config",
    ):
        if dev not in state.devices:
            known = ", ".join(sorted(state.devices))
            return f"% Unknown device {dev[:40]!r}; devices: {known}", "invalid"
    # A device's config alone answers these: the candidate network is not compiled for them.
    # (An edit, above all: it makes any compiled network stale, so compiling one first, as
    # every tool step once did, was work thrown away, a whole compile per edit.)
    if name == "apply_config":
        return _apply(state, dev, str(args.get("text", "")))
    if name == "show_run":
        return f"{dev}#show running-config\n{running_config(state.config(dev))}", None
    if name == "show_access_lists":
        text = show.access_lists(state.config(dev), dev, state.hits)
        return f"{dev}#show access-lists\n{text}", None
    net = state.net
    if name in SHOW_CMDS:
        return f"{dev}#{SHOW_CMDS[name][0]}\n{shown(net, name, dev)}", None
    if name == "get_logs":
        return f"{dev}#show logging\n{logs(state, dev)}", None
    if name in ("ping", "traceroute"):
        return _ping(state, name, dev, args)
    return _test_flow(state, args)


def _ping(state, name: str, dev: str, args) -> tuple[str, str | None]:
    net = state.net
    dst = _addr(args.get("target", ""))
    dst6 = _addr6(args.get("target", "")) if dst is None else None
    if dst6 is not None:
        return _ping6(state, name, dev, dst6)
    if dst is None:
        return f"% Unrecognized host or address: {str(args.get('target'))[:40]!r}", "invalid"
    if name == "ping":
        there, back = net.ping(dev, dst)
        _count(state, there)
        if back is not None:
            _count(state, back)
        if back is not None and back.status == "delivered":
            marks = "!!!!!"
        elif back is None and there.status in ("no_route", "denied") and there.at != dev:
            marks = "U.U.U"  # a router on the way answers with ICMP unreachables
        else:
            marks = "....."
        return f"{dev}#ping {dotted(dst)}\n{show.ping_text(dst, marks)}", None
    src = net.source_ip(dev, dst) or 0
    w = net.walk((src, dst, 17, 49152, 33434, False), dev)
    text = show.traceroute_text(net, dst, w)
    return f"{dev}#traceroute {dotted(dst)}\n{text}", None


def _ping6(state, name: str, dev: str, dst: int) -> tuple[str, str | None]:
    """``ping`` / ``traceroute`` to an IPv6 address (IOS picks the protocol by the form)."""
    plane = state.net.v6
    shown = show6.a6(dst)
    if name == "ping":
        there, back = plane.ping(dev, dst)
        ok = back is not None and back.status == "delivered"
        routed_away = back is None and there.status == "no_route" and there.at != dev
        # A router on the way answers with ICMPv6 unreachables, rate-limited as for IPv4.
        marks = "!!!!!" if ok else "U.U.U" if routed_away else "....."
        return f"{dev}#ping {shown}\n{show.ping_text(shown, marks)}", None
    src = plane.source_ip(dev, dst) or 0
    w = plane.walk((src, dst, 17, 49152, 33434, False), dev)
    return f"{dev}#traceroute {shown}\n{show6.traceroute6_text(state.net, dst, w)}", None


def _test_flow(state, args) -> tuple[str, str | None]:
    net = state.net
    src, dst = _addr(args.get("src", "")), _addr(args.get("dst", ""))
    src6 = dst6 = None
    if src is None or dst is None:  # an IPv6 flow, or none (no text is both kinds)
        src6, dst6 = _addr6(args.get("src", "")), _addr6(args.get("dst", ""))
        if src6 is None or dst6 is None:
            return "% test_flow needs IPv4 (or IPv6) src and dst addresses", "invalid"
    proto = PROTO_NUM.get(str(args.get("proto", "tcp")), 6)
    port = int(args.get("port") or 0)
    if not 0 <= port <= 65535:
        return "% port must be 0-65535", "invalid"
    if src is None:
        return _flow_text(_flow6(net.v6, src6, dst6, proto, port), show6.a6), None
    w = net.flow(src, dst, proto, port)
    _count(state, w)
    return _flow_text(w, None), None


def _flow6(plane, src: int, dst: int, proto: int, port: int):
    """An IPv6 packet walked from the device that owns ``src`` (no IPv6 filtering exists)."""
    dev = next((d for d, own in plane.own.items() if src in own), None)
    pkt = (src, dst, proto, 49152, port, False)
    if dev is None:
        why = f"no device has {show6.a6(src)} on an interface that is up"
        return Walk("unreachable", (), pkt, (), why, "")
    return plane.walk(pkt, dev)


def _flow_text(w, fmt6) -> str:
    """A packet tracer's report: the packet, its fate, the path and why it stopped."""
    path = " -> ".join(f"{d}({i or '-'}>{o or '-'})" for d, i, o in w.hops) or "(none)"
    p = w.packet
    head = format_packet(p) if fmt6 is None else (
        f"{PROTO_NAME.get(p[2], p[2])} [{fmt6(p[0])}]:{p[3]} -> [{fmt6(p[1])}]:{p[4]}")
    lines = [f"flow {head}", f"result: {w.status}", f"path: {path}"]
    if w.reason:
        lines.append(f"reason: {w.reason}")
    return "\n".join(lines)


def _apply(state, dev: str, text: str) -> tuple[str, str | None]:
    if dev not in state.mine:
        return f"% {dev} is not managed by you; it cannot be configured", "invalid"
    issues, n = apply_counted(state.editable(dev), text, dev)
    state._net = None  # recompile on next use
    state.logs.setdefault(dev, []).append("%SYS-5-CONFIG_I: Configured from console by vty0")
    out = [f"{dev}(config)# {n - len(issues)} of {n} line(s) applied"]
    for i in issues[:20]:  # as the console echoes a rejected line and its message
        out += [f"{dev}(config)#{i.line.strip()[:80]}", i.reason]
    return "\n".join(out), "invalid" if issues or n == 0 else None
