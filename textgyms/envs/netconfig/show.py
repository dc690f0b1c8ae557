"""IOS-formatted tool outputs, rendered from a compiled :class:`Network` (the agent's own
candidate state): ``show running-config``, ``show ip route``, ``show ip interface brief``,
``show ip ospf neighbor``, ``show access-lists``, ``show vlan brief``, ping and traceroute."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from textgyms.envs.netconfig.model import Acl, DeviceConfig
from textgyms.envs.netconfig.routing import (
    R_IFACE,
    R_NET,
    R_NEXTHOP,
    R_PLEN,
    R_PROTO,
    Route,
    mask,
)
from textgyms.envs.netconfig.show_bgp import bgp_lines
from textgyms.envs.netconfig.sim import Network
from textgyms.envs.netconfig.topologies import dotted


@functools.lru_cache(maxsize=4096)
def _natural(name: str) -> tuple:
    """A sort key that orders the numbers in a name numerically (cached: the same
    interface and ACL names come back in every rendering)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _vlan_ranges(vlans) -> str:
    out, run = [], []
    for v in sorted(vlans):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [v]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _iface_lines(itf) -> list[str]:
    lines = [f"interface {itf.name}"]
    if itf.description:
        lines.append(f" description {itf.description}")
    if itf.dot1q is not None:
        lines.append(f" encapsulation dot1Q {itf.dot1q}")
    if itf.mode == "trunk":
        if itf.trunk_allowed is not None:
            lines.append(f" switchport trunk allowed vlan {_vlan_ranges(itf.trunk_allowed)}")
        lines.append(" switchport mode trunk")
    elif itf.mode == "access" or itf.access_vlan != 1:
        if itf.access_vlan != 1:
            lines.append(f" switchport access vlan {itf.access_vlan}")
        if itf.mode == "access":
            lines.append(" switchport mode access")
    if itf.ip is not None:
        lines.append(f" ip address {dotted(int(itf.ip))} {dotted(int(itf.ip.netmask))}")
    else:
        lines.append(" no ip address")
    if itf.acl_in:
        lines.append(f" ip access-group {itf.acl_in} in")
    if itf.acl_out:
        lines.append(f" ip access-group {itf.acl_out} out")
    if itf.nat:
        lines.append(f" ip nat {itf.nat}")
    if itf.native_vlan != 1:
        lines.append(f" switchport trunk native vlan {itf.native_vlan}")
    if itf.bandwidth is not None:
        lines.append(f" bandwidth {itf.bandwidth}")
    if not itf.proxy_arp:
        lines.append(" no ip proxy-arp")
    # The rarer settings below are rendered by helpers, called only where one is set (most
    # interfaces have none: a rendering per locked or repaired device per submission).
    if (itf.ospf_cost is not None or itf.ospf_hello is not None or itf.ospf_dead is not None
            or itf.ospf_area is not None):
        lines += _ospf_if_lines(" ip ospf", itf.ospf_cost, itf.ospf_hello, itf.ospf_dead,
                                itf.ospf_area)
    if (itf.ospf_auth or itf.ospf_key is not None or itf.ospf_md5
            or itf.ospf_priority is not None or itf.ospf_network):
        lines += _ospf_opt_lines(itf)
    if (itf.ipv6_enable or itf.ipv6_ll is not None or itf.ipv6 or itf.ospf6_cost is not None
            or itf.ospf6_hello is not None or itf.ospf6_dead is not None
            or itf.ospf6_area is not None):
        lines += _ipv6_iface_lines(itf)
    if itf.hsrp_version != 1:
        lines.append(f" standby version {itf.hsrp_version}")
    if itf.fhrp:
        for (proto, grp), g in sorted(itf.fhrp.items()):
            lines += _fhrp_lines(proto, grp, g)
    if itf.extra:
        lines += [f" {x}" for x in itf.extra]
    lines.append(" shutdown" if itf.shutdown else " no shutdown")
    lines.append("!")
    return lines


def _ospf_opt_lines(itf) -> list[str]:
    """Interface OSPF authentication, keys, priority and network type."""
    kind = {"simple": "", "md5": " message-digest", "null": " null"}.get(itf.ospf_auth or "")
    lines = [f" ip ospf authentication{kind}"] if kind is not None else []
    if itf.ospf_key is not None:
        lines.append(f" ip ospf authentication-key {itf.ospf_key}")
    lines += [f" ip ospf message-digest-key {k} md5 {v}" for k, v in sorted(itf.ospf_md5.items())]
    if itf.ospf_priority is not None:
        lines.append(f" ip ospf priority {itf.ospf_priority}")
    return lines + ([f" ip ospf network {itf.ospf_network}"] if itf.ospf_network else [])


@functools.lru_cache(maxsize=4096, typed=True)
def _upper(obj) -> str:
    """An IPv6 address, interface or prefix as IOS shows it (upper case), cached by value:
    formatting one is slow and a configuration is rendered again for every check of it."""
    return str(obj).upper()


def _ipv6_iface_lines(itf) -> list[str]:
    """An interface's IPv6 lines as IOS shows them (upper-case, compressed)."""
    lines = [" ipv6 enable"] if itf.ipv6_enable else []
    if itf.ipv6_ll is not None:
        lines.append(f" ipv6 address {_upper(itf.ipv6_ll)} link-local")
    lines += [f" ipv6 address {_upper(a.iface)}" + (" eui-64" if a.eui64 else "")
              for a in itf.ipv6]
    return lines + _ospf_if_lines(" ipv6 ospf", itf.ospf6_cost, itf.ospf6_hello,
                                  itf.ospf6_dead, itf.ospf6_area)


def _ospf_if_lines(cmd: str, cost, hello, dead, area) -> list[str]:
    """Interface OSPF (``ip ospf``) or OSPFv3 (``ipv6 ospf``) settings."""
    lines = [f"{cmd} {key} {value}" for key, value in
             (("cost", cost), ("hello-interval", hello), ("dead-interval", dead))
             if value is not None]
    return lines + ([f"{cmd} {area[0]} area {area[1]}"] if area is not None else [])


def _ipv6_global_lines(cfg: DeviceConfig) -> list[str]:
    """``ipv6 route`` lines and the ``ipv6 router ospf`` block."""
    lines = []
    for r in cfg.routes6:
        via = " ".join(_upper(x) if x == r.nexthop else str(x)
                       for x in (r.iface, r.nexthop) if x is not None)
        tail = (f" {r.ad}" if r.ad != 1 else "") + (f" name {r.name}" if r.name else "")
        tail += (" permanent" if r.permanent else "") + (
            f" tag {r.tag}" if r.tag is not None else "")
        lines.append(f"ipv6 route {_upper(r.prefix)} {via}{tail}")
    if cfg.ospf6 is not None:
        block = _ospf_lines(cfg.ospf6)
        lines += ["ipv6 " + block[0], *block[1:]]
    return lines


def _fhrp_lines(proto: str, grp: int, g) -> list[str]:
    cmd = f" standby {grp}" if proto == "hsrp" else f" vrrp {grp}"
    out = [f"{cmd} ip {g.vip}"] if g.vip is not None else [f"{cmd} ip"] if g.learn else []
    if g.priority != 100:
        out.append(f"{cmd} priority {g.priority}")
    if g.preempt != (proto == "vrrp"):
        out.append(f"{cmd} preempt" if g.preempt else f" no{cmd} preempt")
    out += [f"{cmd} track {name} {dec}" for name, dec in sorted(g.track.items())]
    if g.timers is not None:
        hello, hold = g.timers
        if proto == "vrrp":
            out.append(f"{cmd} timers advertise " + (f"{hello // 1000}" if hello % 1000 == 0
                                                     else f"msec {hello}"))
        else:
            out.append(f"{cmd} timers " + " ".join(
                f"{v // 1000}" if v % 1000 == 0 else f"msec {v}" for v in (hello, hold)))
    if g.auth is not None:
        kind, key = g.auth
        out.append(f"{cmd} authentication " + (f"text {key}" if kind == "text" else
                                               f"md5 key-chain {key}" if kind == "md5-chain"
                                               else f"md5 key-string {key}"))
    return out + [f"{cmd} {x}" for x in g.extra]


def _acl_lines(acl: Acl) -> list[str]:
    if acl.name.isdigit():
        out = [f"access-list {acl.name} remark {r}" for r in acl.remarks]
        return out + [f"access-list {acl.name} {e.text}" for e in acl.entries]
    out = [f"ip access-list {acl.kind} {acl.name}"]
    out += [f" remark {r}" for r in acl.remarks]
    return out + [f" {e.seq} {e.text}" for e in acl.entries] + ["!"]


def _ospf_lines(ospf) -> list[str]:
    lines = [f"router ospf {ospf.pid}"]
    if ospf.router_id is not None:
        lines.append(f" router-id {ospf.router_id}")
    if ospf.ref_bw != 100:
        lines.append(f" auto-cost reference-bandwidth {ospf.ref_bw}")
    lines += [f" area {a} stub" + (" no-summary" if nos else "")
              for a, nos in sorted(ospf.stubs.items())]
    lines += [f" area {a} nssa" + (" no-summary" if nos else "") + (
        " default-information-originate" if dio else "") + (" no-redistribution" if nor else "")
        for a, (nos, dio, nor) in sorted(ospf.nssa.items())]
    lines += [f" area {a} authentication" + (" message-digest" if k == "md5" else "")
              for a, k in sorted(ospf.area_auth.items())]
    lines += [f" {x}" for x in ospf.extra]
    for source, (subnets, metric, mtype) in sorted(ospf.redistribute.items()):
        opts = (f" metric {metric}" if metric != (1 if source == "bgp" else 20) else "") + (
            f" metric-type {mtype}" if mtype != 2 else "") + (" subnets" if subnets else "") + (
            f" route-map {ospf.redistribute_maps[source]}"
            if source in ospf.redistribute_maps else "") + (
            f" tag {ospf.redistribute_tags[source]}" if source in ospf.redistribute_tags else "")
        src = f"bgp {ospf.bgp_asn}" if source == "bgp" else source
        lines.append(f" redistribute {src}{opts}")
    if ospf.passive_default:
        lines.append(" passive-interface default")
        lines += [f" no passive-interface {p}" for p in sorted(ospf.active, key=_natural)]
    lines += [f" passive-interface {p}" for p in sorted(ospf.passive, key=_natural)]
    lines += [f" network {dotted(int(n))} {dotted(int(w))} area {a}" for n, w, a in ospf.networks]
    if ospf.originate is not None:
        always, metric, mtype = ospf.originate
        lines.append(" default-information originate" + (" always" if always else "")
                     + (f" metric {metric}" if metric != 1 else "")
                     + (f" metric-type {mtype}" if mtype != 2 else ""))
    return lines + ["!"]


def _nat_lines(cfg: DeviceConfig) -> list[str]:
    lines = [f"ip nat pool {p.name} {p.start} {p.end} prefix-length {p.plen}"
             for p in cfg.nat_pools.values()]
    for rule in cfg.nat:
        ext = " extendable" if rule.extendable else ""
        if rule.kind == "static" and rule.proto:
            proto = "tcp" if rule.proto == 6 else "udp"
            glob = (f"interface {rule.global_iface}" if rule.global_iface
                    else str(rule.global_))
            lines.append(f"ip nat inside source static {proto} {rule.local} {rule.lport} "
                         f"{glob} {rule.gport}{ext}")
        elif rule.kind == "static":
            lines.append(f"ip nat inside source static {rule.local} {rule.global_}{ext}")
        else:
            target = f"interface {rule.iface}" if rule.iface else f"pool {rule.pool}"
            tail = " overload" if rule.overload else ""
            lines.append(f"ip nat inside source list {rule.acl} {target}{tail}")
    return lines


def _route_line(r) -> str:
    via = " ".join(str(x) for x in (r.iface, r.nexthop) if x is not None)
    tail = (f" {r.ad}" if r.ad != 1 else "") + (f" name {r.name}" if r.name else "")
    tail += (" permanent" if r.permanent else "") + (f" tag {r.tag}" if r.tag is not None else "")
    pfx = r.prefix
    return f"ip route {dotted(int(pfx.network_address))} {dotted(int(pfx.netmask))} {via}{tail}"


def render_config(cfg: DeviceConfig) -> str:
    """The canonical running configuration (the body of ``show running-config``)."""
    line_blocks = [x for x in cfg.extra if x.startswith(("line ", " "))]
    lines = ["!", f"hostname {cfg.hostname}", "!"]
    lines += [x for x in cfg.extra if x not in line_blocks]
    if cfg.ip_routing is not None:
        lines.append("ip routing" if cfg.ip_routing else "no ip routing")
    if cfg.ipv6_routing:
        lines.append("ipv6 unicast-routing")
    for vid in sorted(cfg.vlans):
        lines += [f"vlan {vid}", f" name {cfg.vlans[vid]}", "!"]
    for name in sorted(cfg.interfaces, key=_natural):
        lines += _iface_lines(cfg.interfaces[name])
    if cfg.ospf is not None:
        lines += _ospf_lines(cfg.ospf)
    lines += bgp_lines(cfg)
    lines += _nat_lines(cfg)
    lines += [_route_line(r) for r in cfg.routes]
    lines += _ipv6_global_lines(cfg)
    if cfg.gateway is not None:
        lines.append(f"ip default-gateway {cfg.gateway}")
    for name in sorted(cfg.acls, key=_natural):
        lines += _acl_lines(cfg.acls[name])
    lines += line_blocks
    lines += ["!", "end"]
    return "\n".join(lines)


def show_run(net: Network, dev: str) -> str:
    """``show running-config``."""
    return running_config(net.config(dev))


def running_config(cfg: DeviceConfig) -> str:
    """``show running-config`` of a device configured as ``cfg`` (nothing else is read)."""
    body = render_config(cfg)
    return f"Building configuration...\n\nCurrent configuration : {len(body)} bytes\n{body}"


_CODES = (
    "Codes: L - local, C - connected, S - static, R - RIP, M - mobile, B - BGP\n"
    "       D - EIGRP, EX - EIGRP external, O - OSPF, IA - OSPF inter area\n"
    "       N1 - OSPF NSSA external type 1, N2 - OSPF NSSA external type 2\n"
    "       E1 - OSPF external type 1, E2 - OSPF external type 2\n"
    "       i - IS-IS, su - IS-IS summary, L1 - IS-IS level-1, L2 - IS-IS level-2\n"
    "       * - candidate default, U - per-user static route, o - ODR\n"
    "       P - periodic downloaded static route\n"
)


def show_ip_route(net: Network, dev: str) -> str:
    """``show ip route``."""
    if dev not in net.routers:
        gw = net.config(dev).gateway
        return f"Default gateway is {gw}" if gw else "Default gateway is not set"
    rib = net.rib[dev]
    default = [r for r in rib if r[R_PLEN] == 0]
    last = (
        f"Gateway of last resort is {dotted(default[0][R_NEXTHOP])} to network 0.0.0.0"
        if default and default[0][R_NEXTHOP] is not None
        else "Gateway of last resort is not set"
    )
    return "\n".join([_CODES, last, "", *_route_lines(net, dev)])


def _route_text(r: Route) -> str:
    _net, _plen, proto, ad, metric, nexthop, iface, _fwd, _tag = r
    if proto == "C" or nexthop is None:
        return f"is directly connected, {iface}"
    ospf = proto.startswith("O")
    age = ", 00:00:12" if ospf or proto == "B" else ""
    tail = f", {iface}" if ospf else ""
    return f"[{ad}/{metric}] via {dotted(nexthop)}{age}{tail}"


def _code(proto: str, plen: int) -> str:
    if plen != 0:
        return proto
    return proto[0] + "*" + proto[2:].replace(" ", "")


def _route_lines(net: Network, dev: str) -> list[str]:
    """RIB entries (with the local /32 of every connected subnet) grouped under their
    classful network the way IOS prints them; equal-cost paths under their prefix."""
    own = {(i.net, i.plen): i.ip for i in net.l3[dev]}
    entries: dict[tuple[int, int], list] = {}
    for r in net.rib[dev]:
        pfx, proto, iface = (r[R_NET], r[R_PLEN]), r[R_PROTO], r[R_IFACE]
        entries.setdefault(pfx, []).append((_code(proto, pfx[1]), _route_text(r)))
        if proto == "C" and pfx[1] < 32 and pfx in own:
            entries.setdefault((own[pfx], 32), []).append(("L", f"is directly connected, {iface}"))
    def classful(n: int) -> int:
        return 8 if n >> 24 < 128 else 16 if n >> 24 < 192 else 24

    split = {n & mask(classful(n)) for (n, p) in entries if p > classful(n)}
    groups: dict[tuple, list] = {}
    for (n, p), paths in sorted(entries.items()):
        clen = classful(n)
        major = n & mask(clen)
        subnetted = p > clen or (p == clen and major in split)
        key = (major, clen, True) if subnetted else (n, p, False)
        groups.setdefault(key, []).append((n, p, paths))
    lines = []
    for (major, clen, subnetted), members in sorted(groups.items()):
        pad = 9 if subnetted else 6
        if subnetted:
            masks = sorted({p for _n, p, _x in members})
            if len(masks) == 1:
                lines.append(f"      {dotted(major)}/{masks[0]} is subnetted, "
                             f"{len(members)} subnets")
            else:
                lines.append(f"      {dotted(major)}/{clen} is variably subnetted, {len(members)} "
                             f"subnets, {len(masks)} masks")
        for n, p, paths in members:
            head = f"{paths[0][0].ljust(pad)}{dotted(n)}/{p} "
            lines.append(head + paths[0][1])
            lines += [" " * len(head) + text for _c, text in paths[1:]]
    return lines


def show_ip_int_brief(net: Network, dev: str) -> str:
    """``show ip interface brief``."""
    head = f"{'Interface':<27}{'IP-Address':<16}{'OK?':<4}{'Method':<7}{'Status':<22}Protocol"
    rows = [head]
    cfg = net.config(dev)
    names = sorted({n for (d, n) in net.status if d == dev}, key=_natural)
    for name in names:
        itf = cfg.interfaces.get(name)
        ip = dotted(int(itf.ip)) if itf is not None and itf.ip is not None else "unassigned"
        method = "manual" if ip != "unassigned" else "unset"
        status, proto = net.status[(dev, name)]
        rows.append(f"{name:<27}{ip:<16}{'YES':<4}{method:<7}{status:<22}{proto}")
    return "\n".join(rows)


def show_ip_ospf_neighbor(net: Network, dev: str) -> str:
    """``show ip ospf neighbor``."""
    rows = [f"{'Neighbor ID':<16}{'Pri':<5}{'State':<16}{'Dead Time':<12}{'Address':<16}Interface"]
    for a in sorted(net.adjacencies.get(dev, ()), key=lambda a: a.neighbor_rid):
        rows.append(
            f"{dotted(a.neighbor_rid):<16}{1:<5}{'FULL/  -':<16}{'00:00:35':<12}"
            f"{dotted(a.neighbor_ip):<16}{a.iface}"
        )
    return "\n".join(rows)


def show_access_lists(net: Network, dev: str, hits: Mapping[tuple[str, str, int], int]) -> str:
    """``show access-lists`` with per-entry match counters."""
    return access_lists(net.config(dev), dev, hits)


def access_lists(cfg: DeviceConfig, dev: str, hits: Mapping[tuple[str, str, int], int]) -> str:
    """``show access-lists`` of ``dev`` configured as ``cfg``, with the match counters the
    packet walks so far left in ``hits`` (nothing else is read)."""
    out = []
    for name in sorted(cfg.acls, key=_natural):
        acl = cfg.acls[name]
        label = "Standard" if acl.kind == "standard" else "Extended"
        kind = f"{label} IP access list {name}"
        out.append(kind)
        for i, e in enumerate(acl.entries):
            n = hits.get((dev, name, i), 0)
            count = f" ({n} match{'es' if n != 1 else ''})" if n else ""
            out.append(f"    {e.seq} {e.text}{count}")
    return "\n".join(out) if out else ""


def show_standby_brief(net: Network, dev: str) -> str:
    """``show standby brief`` (HSRP groups; VRRP groups are listed the same way)."""
    rows = ["                     P indicates configured to preempt.",
            "                     |",
            f"{'Interface':<12}{'Grp':<5}{'Pri':<4}{'P':<2}{'State':<8}{'Active':<16}"
            f"{'Virtual IP'}"]
    cfg = net.config(dev)
    for name in sorted(cfg.interfaces, key=_natural):
        for (_proto, grp), g in sorted(cfg.interfaces[name].fhrp.items()):
            if g.vip is None:
                continue
            dom = net.domain.get((dev, name))
            owner = net.fhrp.get((dom, int(g.vip))) if dom is not None else None
            actives = net.fhrp_actives.get((dom, int(g.vip)), [])
            state = "Init" if dom is None else "Active" if (dev, name) in actives else "Standby"
            active = "local" if state == "Active" else (
                dotted(next(i.ip for i in net.l3[owner[0]] if i.name == owner[1]))
                if owner else "unknown")
            rows.append(f"{_short(name):<12}{grp:<5}{g.priority:<4}{'P' if g.preempt else ' ':<2}"
                        f"{state:<8}{active:<16}{g.vip}")
    return "\n".join(rows)


def show_vlan_brief(net: Network, dev: str) -> str:
    """``show vlan brief`` (switches only)."""
    if net.kind(dev) not in ("switch", "l3switch"):
        return "% Invalid input detected at '^' marker."
    cfg = net.config(dev)
    ports: dict[int, list[str]] = {}
    names = sorted({n for (d, n) in net.status if d == dev}, key=_natural)
    for name in names:
        itf = cfg.interfaces.get(name)
        if name.startswith(("Vlan", "Loopback")) or (itf is not None and itf.mode == "trunk"):
            continue
        ports.setdefault(itf.access_vlan if itf is not None else 1, []).append(_short(name))
    rows = [
        f"{'VLAN':<5}{'Name':<33}{'Status':<10}Ports",
        f"{'-' * 4} {'-' * 32} {'-' * 9} {'-' * 30}",
    ]
    vlans = {1: "default", **cfg.vlans}
    for vid in sorted(vlans):
        rows.append(f"{vid:<5}{vlans[vid]:<33}{'active':<10}{', '.join(ports.get(vid, []))}")
    return "\n".join(rows)


def _short(name: str) -> str:
    for long, short in (("GigabitEthernet", "Gi"), ("FastEthernet", "Fa"), ("Ethernet", "Et")):
        if name.startswith(long):
            return short + name[len(long) :]
    return name


def ping_text(dst: int | str, marks: str) -> str:
    """The output of ``ping``: five echoes (``!`` answered, ``.`` timed out, ``U`` an
    unreachable from a router) and the success-rate line; the reason is never named."""
    ok = marks.count("!")
    rate = f"{ok * 20} percent ({ok}/5)"
    if ok:
        rate += ", round-trip min/avg/max = 1/1/2 ms"
    return (
        "Type escape sequence to abort.\n"
        f"Sending 5, 100-byte ICMP Echos to {dotted(dst) if isinstance(dst, int) else dst}, "
        "timeout is 2 seconds:\n"
        f"{marks}\nSuccess rate is {rate}"
    )


def traceroute_text(net: Network, dst: int, walk, max_ttl: int = 30) -> str:
    """The output of ``traceroute``: one line per hop that accepted the probe (it answers
    with the address the probe entered by), then ``* * *`` for every hop after replies stop
    (up to ``max_ttl``); why the probes stop is never printed."""
    delivered = walk.status == "delivered"
    hops = walk.hops
    if walk.status == "denied" and " in on " in walk.reason:
        hops = hops[:-1]  # dropped by an inbound ACL: that router never answers
    lines = ["Type escape sequence to abort.", f"Tracing the route to {dotted(dst)}",
             "VRF info: (vrf in name/id, vrf out name/id)"]
    n = 0
    routed = list(hops[1:])
    for k, (dev, inif, _out) in enumerate(routed):
        n += 1
        last = delivered and k == len(routed) - 1
        ip = dst if last else next((i.ip for i in net.l3[dev] if i.name == inif), None)
        lines.append(f"  {n:>2} {dotted(ip)} 1 msec 1 msec 1 msec" if ip is not None
                     else f"  {n:>2}  *  *  *")
    if not delivered:
        lines += [f"  {k:>2}  *  *  *" for k in range(n + 1, max_ttl + 1)]
    return "\n".join(lines)


def net_of(ip: int, plen: int) -> str:
    """``10.1.2.0/24`` for an address and prefix length."""
    return f"{dotted(ip & mask(plen))}/{plen}"
