"""The behavioural checks the verifier runs on a simulated candidate network, one function
per check kind: each returns (passed, why not). A check reads the network (pings over every
equal-cost path, packet walks, the RIB, OSPF adjacencies and areas) and the requirement it
comes from, never the text of a configuration, so every configuration that behaves the same
passes the same checks. ``ref`` is the reference network's parsed configs (only the ACL
equivalence check reads it, to compare decisions, never text)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import ipaddress
import threading
from collections.abc import Callable, Mapping

from textgyms.envs.netconfig.acl import FULL, difference, evaluate, format_packet
from textgyms.envs.netconfig.checks6 import CHECKS6, WEIGHTS6, static_only
from textgyms.envs.netconfig.ipobj import from_text
from textgyms.envs.netconfig.memo import derived
from textgyms.envs.netconfig.model import DeviceConfig, Interface
from textgyms.envs.netconfig.routing import (
    R_PLEN,
    R_PROTO,
    Walk,
    all_paths,
    lookup,
    ospf_area,
)
from textgyms.envs.netconfig.scenario import ip, run_flow
from textgyms.envs.netconfig.sim import Network

A = ipaddress.IPv4Address
Ref = Mapping[str, DeviceConfig] | None
MAX_ACL_ENTRIES = 300  # the policies have a handful; equivalence cost grows with entries
NAMES = {"O": "OSPF", "S": "static", "B": "BGP"}


def _addressing(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    itf = net.config(c["dev"]).interfaces.get(c["if"])
    have = itf.ip if itf is not None else None
    status = net.status.get((c["dev"], c["if"]), ("down", "down"))
    if have == from_text(ipaddress.IPv4Interface, c["ip"]) and status == ("up", "up"):
        return True, ""  # the reason is only ever read for a check that fails
    if _RUN.quiet:
        return False, ""
    return False, f"{c['dev']} {c['if']}: address {have or 'unassigned'}, {status[0]}/{status[1]}"


def _reach(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """A ping that succeeds on every equal-cost path the echo may take (with a link failed
    first, if the check says so)."""
    when = ""
    if c.get("fail"):
        net = failed(net, *c["fail"])
        when = f" when {c['fail'][0]} {c['fail'][1]} fails"
    if _pings(net, c["src"], ip(c["dst"])):
        return True, ""
    return False, f"ping {c['src']} -> {c['dst']} fails{when}"


class _Run(threading.local):
    """The state of the :func:`run` in progress in this thread: the walks it made so far
    (see :func:`_plain_walks`), dropped when it ends (kept past it, they were objects the
    garbage collector scans again and again, for a rare resubmission), and whether it is
    quiet. Outside a run (a fault generator calling a check) neither applies."""

    walks: dict | None = None
    quiet = False  # reasons not wanted: see run


_RUN = _Run()


def _plain_walks(net: Network) -> dict | None:
    """The one-way walks made so far in this :func:`run` in ``net``'s compiled network
    (every view shares its FIBs) that met no equal-cost choice, by (packet, first device);
    None outside a run, or unless the network is plain (no ACL, no NAT: a walk then changes
    neither its packet nor any state). Such a walk is the same whatever the choices, and
    the checks ping both ways between the same hosts: the reply of one ping is the echo of
    the reverse one."""
    runs = _RUN.walks
    if runs is None or not net._plain():
        return None
    fib = net.fib
    hit = runs.get(id(fib))
    if hit is not None and hit[0] is fib:
        return hit[1]
    walks: dict = {}
    runs[id(fib)] = (fib, walks)  # (holding the FIBs keeps their id theirs)
    return walks


def _walk(net: Network, walks: dict, pkt: tuple, dev: str, choices) -> Walk:
    """``net.walk(pkt, dev, None, None, choices)`` on a plain network, from ``walks``."""
    w = walks.get((pkt, dev))
    if w is None:
        w = net.walk(pkt, dev, None, None, choices)
        if not w.fanout:
            walks[(pkt, dev)] = w
    return w


def _pings(net: Network, src_dev: str, dst: int) -> bool:
    """Whether every ping of ``net.ping_all_paths(src_dev, dst)`` gets its reply; on a
    plain network the same walks, each made once."""
    walks = _plain_walks(net)
    if walks is None:
        return all(back is not None and back.status == "delivered"
                   for _there, back in net.ping_all_paths(src_dev, dst))
    src = net.source_ip(src_dev, dst)
    if src is None:
        return False  # (ping_all_paths: no address to send from, no echo)
    pkt = (src, dst, 1, 0, 0, False)
    first = _walk(net, walks, pkt, src_dev, ())
    ways = [first]
    if first.fanout:  # every equal-cost path, as ping_all_paths takes them
        ways = [w for _ch, w in all_paths(
            lambda ch: net.walk(pkt, src_dev, None, None, ch) if ch else first)]
    for there in ways:
        if there.status != "delivered":
            return False
        # The reply, as Network._reply sends it (a plain walk leaves the packet unchanged).
        if _walk(net, walks, (dst, src, 1, 0, 0, False), there.at, None).status != "delivered":
            return False
    return True


def _flow(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    w = run_flow(net, c)
    got = w.status if w is not None else "unreachable"
    if got == c["expect"]:
        return True, ""
    if _RUN.quiet:
        return False, ""
    pkt = (ip(c["src"]), ip(c["dst"]), {"tcp": 6, "udp": 17, "icmp": 1, "ip": 0}[c["proto"]],
           49152, int(c["dport"]), c["est"])
    label = "unmentioned flow changed" if c["g"] == "collateral" else "flow"
    return got == c["expect"], f"{label} {format_packet(pkt)}: expected {c['expect']}, got {got}"


def _applied(cfg: DeviceConfig, iface: str, direction: str):
    itf = cfg.interfaces.get(iface)
    name = getattr(itf, f"acl_{direction}") if itf is not None else None
    return None if name is None else cfg.acls.get(name)


def _acl_equiv(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """The applied ACL decides like the policy on every packet the interface can carry (an
    outbound ACL on a LAN only ever sees destinations inside that LAN)."""
    mine = _applied(net.config(c["dev"]), c["if"], c["dir"])
    theirs = _applied(ref[c["dev"]], c["if"], c["dir"]) if ref else None
    if mine is not None and len(mine.entries) > MAX_ACL_ENTRIES:  # bounds verification time
        return False, f"the ACL on {c['dev']} {c['if']} has over {MAX_ACL_ENTRIES} entries"
    if mine is theirs:  # the policy's own ACL (a shared parsed config): nothing to compare
        return True, ""
    space = None
    if c.get("subnet"):
        net_ = ipaddress.IPv4Network(c["subnet"])
        box = (int(net_.network_address), int(net_.broadcast_address))
        space = FULL[:1] + (box,) + FULL[2:] if c["dir"] == "out" else (box,) + FULL[1:]
    pkt = difference(mine, theirs, space)
    if pkt is None:
        return True, ""
    if _RUN.quiet:
        return False, ""
    want = "permit" if evaluate(theirs, pkt)[0] else "deny"
    return False, (f"the ACL applied {c['dir']} on {c['dev']} {c['if']} differs from the "
                   f"policy: {format_packet(pkt)} should {want}")


def _prefix(text: str) -> ipaddress.IPv4Network:
    """A check's prefix (cached)."""
    return from_text(ipaddress.IPv4Network, text)


@functools.lru_cache(maxsize=4096)
def _prefix_text(text: str) -> str:
    """A check's prefix as a failure message shows it (cached: formatting is slow)."""
    return str(_prefix(text))


@functools.lru_cache(maxsize=4096)
def _network_int(text: str) -> int:
    """A check's prefix's network address as an int (cached)."""
    return int(_prefix(text).network_address)


def _routing(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """Traffic to the prefix is forwarded by a route of the required protocol (the most
    specific route that matches: a summary or default route counts)."""
    fib = net.fib.get(c["dev"])
    routes = lookup(fib, _network_int(c["prefix"]) + 1) if fib is not None else []
    want = c["proto"]
    for r in routes:
        if r[R_PROTO].split()[0] == want:
            return True, ""
    if _RUN.quiet:
        return False, ""
    got = sorted({r[R_PROTO].split()[0] for r in routes})
    return False, (
        f"{c['dev']} forwards to {_prefix_text(c['prefix'])} by no {NAMES[want]} route"
        + (f" (it uses: {', '.join(got)})" if got else " (no route)")
    )


def _passive(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    cfg = net.config(c["dev"])
    itf = cfg.interfaces.get(c["if"])
    ok = (cfg.ospf is not None and cfg.ospf.is_passive(c["if"]) and itf is not None
          and itf.ip is not None and ospf_area(cfg, int(itf.ip), c["if"]) is not None)
    return ok, "" if ok else f"{c['dev']} {c['if']} is not a passive, advertised OSPF interface"


def _ospf_area(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """OSPF runs on the interface, in the required area."""
    cfg = net.config(c["dev"])
    itf = cfg.interfaces.get(c["if"])
    area = ospf_area(cfg, int(itf.ip), c["if"]) if itf is not None and itf.ip else None
    if area == c["area"]:
        return True, ""
    where = "not in OSPF" if area is None else f"in area {area}"
    return area == c["area"], f"{c['dev']} {c['if']} is {where}, required: area {c['area']}"


def _adjacency(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """A FULL adjacency that SPF uses (both ends describe the link the same way)."""
    found = [a for a in net.adjacencies.get(c["a"], ()) if a.neighbor == c["b"]
             and a.iface == c["if"]]
    if found and not any(a.usable for a in found):
        return False, (f"OSPF adjacency between {c['a']} and {c['b']} on {c['a']} {c['if']} is "
                       "FULL but no route is installed across it (the network types differ)")
    return bool(found), f"no OSPF adjacency between {c['a']} and {c['b']} on {c['a']} {c['if']}"


def _router_ids(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    rids: dict[int, list[str]] = {}
    for d in c["devs"]:
        if net.config(d).ospf is not None:
            rids.setdefault(net.rids.get(d, 0), []).append(d)
    bad = [(r, ds) for r, ds in sorted(rids.items()) if len(ds) > 1 or not r]
    if bad and _RUN.quiet:
        return False, ""
    dup = [f"{A(r)} ({', '.join(ds)})" for r, ds in bad]
    return not dup, f"duplicate or missing OSPF router IDs: {'; '.join(dup)}"


def _bgp_session(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """An established session between the two routers (to ``peer_ip``, b's address, when
    the check names one: loopback peering)."""
    want = ip(c["peer_ip"]) if c.get("peer_ip") else None
    ok = any(s.a == c["a"] and s.b == c["b"] and want in (None, s.b_ip)
             for s in net.bgp_sessions)
    to = f" (to {c['peer_ip']})" if want is not None else ""
    return ok, f"no BGP session between {c['a']} and {c['b']}{to}"


def _no_route(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """No route at least as specific as the prefix: it must not be learned there (a
    default or shorter summary may still cover it)."""
    pfx = _prefix(c["prefix"])
    fib = net.fib.get(c["dev"])
    routes = lookup(fib, _network_int(c["prefix"])) if fib is not None else []
    leaked = [r for r in routes if r[R_PLEN] >= pfx.prefixlen]
    if leaked and _RUN.quiet:
        return False, ""
    return not leaked, f"{c['dev']} has a route to {pfx} it must not learn ({leaked[0][R_PROTO]})" \
        if leaked else ""


def _router_id(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    have = net.rids.get(c["dev"], 0)
    if have == ip(c["rid"]):
        return True, ""
    if _RUN.quiet:
        return False, ""
    return False, f"{c['dev']} has OSPF router ID {A(have)}, required {c['rid']}"


def failed(net: Network, dev: str, iface: str) -> Network:
    """``net`` with one interface of ``dev`` shut down (a failed link), recompiled (once per
    compiled network, link and process: see :mod:`memo`)."""
    return derived(net, ("failed", dev, iface), lambda: _failed(net, dev, iface))


def _failed(net: Network, dev: str, iface: str) -> Network:
    devices = dict(net.devices)
    kind, cfg = devices[dev]
    # A copy down to the one interface that changes (the configs are shared and read-only).
    cfg = copy.copy(cfg)
    cfg.interfaces = dict(cfg.interfaces)
    itf = cfg.interfaces.get(iface)
    cfg.interfaces[iface] = dataclasses.replace(itf, shutdown=True) if itf else Interface(
        iface, shutdown=True)
    devices[dev] = (kind, cfg)
    return Network(devices, net.links)


def recovered(net: Network, dev: str, iface: str) -> Network:
    """``net`` after the link failed and came back: every link up again, and each gateway
    group's incumbent the router that was active during the failure."""
    return derived(net, ("recovered", dev, iface),
                   lambda: net.with_incumbent(failed(net, dev, iface).fhrp_state))


def _any_fhrp(net: Network) -> bool:
    """Whether any interface of any device configures an HSRP or VRRP group (a starting
    network often has none)."""
    return any(itf.fhrp for _kind, cfg in net.devices.values()
               for itf in cfg.interfaces.values())


def _fhrp(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """The right router, and only it, answers for the virtual gateway (after failing a link,
    and after it recovers, if asked) and the LAN still reaches the server through it on every
    path."""
    when = ""
    if c["fail"]:
        dev, iface = c["fail"]
        when = f" when {dev} {iface} fails" + (" and recovers" if c.get("recover") else "")
        if c["active"] != "no router" and not _any_fhrp(net):
            # Failing a link configures no gateway group: none is active then either, and
            # the network with the link failed (a whole compile) is not needed to say so.
            return False, f"no router is active for {c['vip']}{when}, required: {c['active']}"
        net = recovered(net, dev, iface) if c.get("recover") else failed(net, dev, iface)
    dom = net.domain.get((c["host"], "Ethernet0"))
    actives = net.fhrp_actives.get((dom, ip(c["vip"])), [])
    if len(actives) > 1:
        return False, (f"{' and '.join(d for d, _i in actives)} are all active for {c['vip']}"
                       f"{when} (they do not hear each other's hellos)")
    who = actives[0][0] if actives else "no router"
    if who != c["active"]:
        return False, f"{who} is active for {c['vip']}{when}, required: {c['active']}"
    ok, _why = _reach(net, {"src": c["host"], "dst": c["dst"]}, ref)
    return ok, f"{c['host']} cannot reach {c['dst']} through {c['vip']}{when}"


def _waypoint(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """Every equal-cost path from the source passes through ``via``."""
    dev = c["src"]
    src = net.source_ip(dev, ip(c["dst"]))
    for _ch, w in net.walks((src or 0, ip(c["dst"]), 1, 0, 0, False), dev):
        path = [h[0] for h in w.hops]
        if w.status != "delivered" or c["via"] not in path:
            if _RUN.quiet:
                return False, ""
            return False, (f"traffic {c['src']} -> {c['dst']} may take {' -> '.join(path)}, "
                           f"not via {c['via']}")
    return True, ""


def _vlan(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    have = net.config(c["dev"]).vlans.get(c["vlan"])
    return have == c["name"], f"{c['dev']} VLAN {c['vlan']} is {have or 'missing'}"


def _trunk(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    itf = net.config(c["dev"]).interfaces.get(c["if"])
    mode = itf.mode if itf is not None else None
    allowed = itf.trunk_allowed if itf is not None else None
    ok = mode == "trunk" and allowed is not None and set(allowed) == set(c["vlans"])
    if ok:
        return True, ""  # the reason is only ever read for a check that fails
    shown = "all" if allowed is None else ",".join(str(v) for v in sorted(allowed))
    return ok, f"{c['dev']} {c['if']}: mode {mode}, allowed VLANs {shown}"


def _isolation(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    da = net.domain.get((c["a"], "Ethernet0"))
    db = net.domain.get((c["b"], "Ethernet0"))
    return da is None or da != db, f"{c['a']} and {c['b']} share a broadcast domain"


def _nat(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    there, back = net.ping(c["src"], ip(c["dst"]))
    if not (there.status == "delivered" and back is not None and back.status == "delivered"):
        return False, f"ping {c['src']} -> {c['dst']} fails"
    if "seen" in c:
        if there.packet[0] == ip(c["seen"]):
            return True, ""  # the reason is only ever read for a check that fails
        if _RUN.quiet:
            return False, ""
        return False, f"{c['dst']} sees source {A(there.packet[0])}, expected {c['seen']}"
    if "at" in c:
        ok = there.at == c["at"]
        return ok, f"traffic to {c['dst']} reaches {there.at}, expected {c['at']}"
    return True, ""


def _nat_inside(net: Network, c: dict, ref: Ref) -> tuple[bool, str]:
    """An echo from an inside address no host has (arriving on its inside interface, like
    the ACL flows) leaves with the required source, and the reply is translated back to
    that address and sent onto its LAN: the rule covers the whole inside network, and
    several inside hosts translate at once (pool bindings persist across the checks)."""
    dev, inif = c["inject"]
    src, dst = ip(c["src"]), ip(c["dst"])
    xlate: dict = {}
    there = net.walk((src, dst, 1, 0, 0, False), dev, xlate, inif)
    if there.status != "delivered":
        return False, f"traffic from inside address {c['src']} to {c['dst']} is {there.status}"
    if there.packet[0] != ip(c["seen"]):
        return False, (f"{c['dst']} sees source {A(there.packet[0])} for inside address "
                       f"{c['src']}, expected {c['seen']}")
    p = there.packet
    back = net.walk((p[1], p[0], 1, 0, 0, False), there.at, xlate)
    last = back.hops[-1] if back.hops else (None, None, None)
    ok = back.packet[1] == src and last[0] == dev and last[2] == inif
    return ok, f"the reply to inside address {c['src']} is not translated back onto {inif}"


Check = Callable[[Network, dict, Ref], tuple[bool, str]]
CHECKS: dict[str, Check] = {
    "addressing": _addressing,
    "reach": _reach,
    "flows": _flow,
    "boundary": _flow,
    "collateral": _flow,
    "acl_equiv": _acl_equiv,
    "routing": _routing,
    "static_only": static_only,
    "passive": _passive,
    "ospf_area": _ospf_area,
    "adjacency": _adjacency,
    "router_ids": _router_ids,
    "router_id": _router_id,
    "bgp_session": _bgp_session,
    "no_route": _no_route,
    "waypoint": _waypoint,
    "vlan": _vlan,
    "trunk": _trunk,
    "isolation": _isolation,
    "nat": _nat,
    "nat_inside": _nat_inside,
    "fhrp": _fhrp,
    **CHECKS6,
}
WEIGHTS = {"addressing": 2, "reach": 2, "flows": 2, "boundary": 1, "collateral": 1,
           "acl_equiv": 2, "routing": 2, "static_only": 2, "passive": 1, "ospf_area": 1,
           "adjacency": 1, "router_ids": 1, "router_id": 1, "waypoint": 1, "vlan": 1, "trunk": 1,
           "isolation": 1, "nat": 2, "nat_inside": 2, "fhrp": 2, "bgp_session": 1, "no_route": 1,
           **WEIGHTS6}


def run(net: Network, checks: list[dict], ref: Ref, skip=(),
        quiet: bool = False) -> list[tuple[dict, bool, str]]:
    """Every check's (check, passed, why not), groups in ``skip`` left out. The reason is
    built only for a check that fails (empty otherwise: formatting addresses for checks that
    pass was a measurable share of a submission's cost); ``quiet``, the costlier ones are
    left empty too (for a caller that reads only which checks pass: the starting network
    fails many, and nobody reads why)."""
    table = CHECKS
    out = []
    state = _RUN
    outer, was_quiet = state.walks, state.quiet
    if outer is None:
        state.walks = {}
    state.quiet = quiet
    try:
        for c in checks:
            g = c["g"]
            if g not in skip:
                ok, msg = table[g](net, c, ref)
                out.append((c, ok, msg))
    finally:
        state.quiet = was_quiet
        if outer is None:
            state.walks = None
    return out


def normalize_item(item: str) -> str:
    """An analysis answer item: ``B -- A`` -> ``A--B``; device names stripped."""
    if "--" in item:
        a, _, b = item.partition("--")
        return "--".join(sorted((a.strip(), b.strip())))
    return item.strip()
