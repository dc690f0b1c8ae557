"""IOS-formatted tool outputs, rendered from a compiled :class:`Network` (the agent's own
candidate state): ``show running-config``, ``show ip route``, ``show ip interface brief``,
``show ip ospf neighbor``, ``show access-lists``, ``show vlan brief``, ping and traceroute."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from textgyms.envs.netconfig.model import Acl, DeviceConfig
from textgyms.envs.netconfig.routing import mask
from textgyms.envs.netconfig.sim import ROUTERS, Network

A = ipaddress.IPv4Address


def _natural(name: str) -> tuple:
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
        lines.append(f" ip address {itf.ip.ip} {itf.ip.netmask}")
    else:
        lines.append(" no ip address")
    for d in ("in", "out"):
        if getattr(itf, f"acl_{d}"):
            lines.append(f" ip access-group {getattr(itf, f'acl_{d}')} {d}")
    if itf.nat:
        lines.append(f" ip nat {itf.nat}")
    if itf.ospf_cost is not None:
        lines.append(f" ip ospf cost {itf.ospf_cost}")
    lines.append(" shutdown" if itf.shutdown else " no shutdown")
    return lines + ["!"]


def _acl_lines(acl: Acl) -> list[str]:
    if acl.name.isdigit():
        out = [f"access-list {acl.name} remark {r}" for r in acl.remarks]
        return out + [f"access-list {acl.name} {e.text}" for e in acl.entries]
    out = [f"ip access-list {acl.kind} {acl.name}"]
    out += [f" remark {r}" for r in acl.remarks]
    return out + [f" {e.seq} {e.text}" for e in acl.entries] + ["!"]


def render_config(cfg: DeviceConfig) -> str:
    """The canonical running configuration (the body of ``show running-config``)."""
    lines = ["!", f"hostname {cfg.hostname}", "!"]
    for vid in sorted(cfg.vlans):
        lines += [f"vlan {vid}", f" name {cfg.vlans[vid]}", "!"]
    for name in sorted(cfg.interfaces, key=_natural):
        lines += _iface_lines(cfg.interfaces[name])
    if cfg.ospf is not None:
        lines.append(f"router ospf {cfg.ospf.pid}")
        if cfg.ospf.router_id is not None:
            lines.append(f" router-id {cfg.ospf.router_id}")
        lines += [f" passive-interface {p}" for p in sorted(cfg.ospf.passive, key=_natural)]
        lines += [f" network {n} {w} area {a}" for n, w, a in cfg.ospf.networks]
        lines.append("!")
    for rule in cfg.nat:
        if rule.kind == "static":
            lines.append(f"ip nat inside source static {rule.local} {rule.global_}")
        else:
            tail = " overload" if rule.overload else ""
            lines.append(f"ip nat inside source list {rule.acl} interface {rule.iface}{tail}")
    for r in cfg.routes:
        via = r.iface if r.iface is not None else str(r.nexthop)
        ad = f" {r.ad}" if r.ad != 1 else ""
        lines.append(f"ip route {r.prefix.network_address} {r.prefix.netmask} {via}{ad}")
    if cfg.gateway is not None:
        lines.append(f"ip default-gateway {cfg.gateway}")
    for name in sorted(cfg.acls, key=_natural):
        lines += _acl_lines(cfg.acls[name])
    lines += ["!", "end"]
    return "\n".join(lines)


def show_run(net: Network, dev: str) -> str:
    """``show running-config``."""
    body = render_config(net.config(dev))
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
    if net.kind(dev) not in ROUTERS:
        gw = net.config(dev).gateway
        return f"Default gateway is {gw}" if gw else "Default gateway is not set"
    rib = net.rib[dev]
    default = [r for r in rib if r.plen == 0]
    last = (
        f"Gateway of last resort is {A(default[0].nexthop)} to network 0.0.0.0"
        if default and default[0].nexthop is not None
        else "Gateway of last resort is not set"
    )
    return "\n".join([_CODES, last, "", *_route_lines(net, dev)])


def _route_text(r) -> str:
    if r.proto == "C" or r.nexthop is None:
        return f"is directly connected, {r.iface}"
    age = ", 00:00:12" if r.proto == "O" else ""
    tail = f", {r.iface}" if r.proto == "O" else ""
    return f"[{r.ad}/{r.metric}] via {A(r.nexthop)}{age}{tail}"


def _route_lines(net: Network, dev: str) -> list[str]:
    """RIB entries (with the local /32 of every connected subnet) grouped under their
    classful network the way IOS prints them."""
    own = {(i.net, i.plen): i.ip for i in net.l3[dev]}
    entries = []
    for r in net.rib[dev]:
        entries.append((r.net, r.plen, r.proto + ("*" if r.plen == 0 else ""), _route_text(r)))
        if r.proto == "C" and r.plen < 32 and (r.net, r.plen) in own:
            entries.append((own[(r.net, r.plen)], 32, "L", f"is directly connected, {r.iface}"))
    groups: dict[tuple[int, int], list] = {}
    for e in sorted(entries):
        first = e[0] >> 24
        clen = 8 if first < 128 else 16 if first < 192 else 24
        key = (e[0] & mask(clen), clen, True) if e[1] > clen else (e[0], e[1], False)
        groups.setdefault(key, []).append(e)
    lines = []
    for (major, clen, subnetted), members in sorted(groups.items()):
        if not subnetted:  # a classful network or a supernet (e.g. the default route)
            lines += [f"{c.ljust(6)}{A(n)}/{p} {t}" for n, p, c, t in members]
            continue
        masks = sorted({p for _n, p, _c, _t in members})
        if len(masks) == 1:
            head = f"      {A(major)}/{masks[0]} is subnetted, {len(members)} subnets"
        else:
            head = (f"      {A(major)}/{clen} is variably subnetted, {len(members)} subnets, "
                    f"{len(masks)} masks")
        lines.append(head)
        lines += [f"{c.ljust(9)}{A(n)}/{p} {t}" for n, p, c, t in members]
    return lines


def show_ip_int_brief(net: Network, dev: str) -> str:
    """``show ip interface brief``."""
    head = f"{'Interface':<27}{'IP-Address':<16}{'OK?':<4}{'Method':<7}{'Status':<22}Protocol"
    rows = [head]
    cfg = net.config(dev)
    names = sorted({n for (d, n) in net.status if d == dev}, key=_natural)
    for name in names:
        itf = cfg.interfaces.get(name)
        ip = str(itf.ip.ip) if itf is not None and itf.ip is not None else "unassigned"
        method = "manual" if ip != "unassigned" else "unset"
        status, proto = net.status[(dev, name)]
        rows.append(f"{name:<27}{ip:<16}{'YES':<4}{method:<7}{status:<22}{proto}")
    return "\n".join(rows)


def show_ip_ospf_neighbor(net: Network, dev: str) -> str:
    """``show ip ospf neighbor``."""
    rows = [f"{'Neighbor ID':<16}{'Pri':<5}{'State':<16}{'Dead Time':<12}{'Address':<16}Interface"]
    for a in sorted(net.adjacencies.get(dev, ()), key=lambda a: a.neighbor_rid):
        rows.append(
            f"{str(A(a.neighbor_rid)):<16}{1:<5}{'FULL/  -':<16}{'00:00:35':<12}"
            f"{str(A(a.neighbor_ip)):<16}{a.iface}"
        )
    return "\n".join(rows)


def show_access_lists(net: Network, dev: str, hits: Mapping[tuple[str, str, int], int]) -> str:
    """``show access-lists`` with per-entry match counters."""
    out = []
    for name in sorted(net.config(dev).acls, key=_natural):
        acl = net.config(dev).acls[name]
        label = "Standard" if acl.kind == "standard" else "Extended"
        kind = f"{label} IP access list {name}"
        out.append(kind)
        for i, e in enumerate(acl.entries):
            n = hits.get((dev, name, i), 0)
            count = f" ({n} match{'es' if n != 1 else ''})" if n else ""
            out.append(f"    {e.seq} {e.text}{count}")
    return "\n".join(out) if out else ""


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


def ping_text(dst: int, ok: bool, why: str) -> str:
    """The output of ``ping``: five echoes, all answered or none (the network is static)."""
    marks = "!!!!!" if ok else "....."
    rate = "100 percent (5/5), round-trip min/avg/max = 1/1/2 ms" if ok else "0 percent (0/5)"
    text = (
        "Type escape sequence to abort.\n"
        f"Sending 5, 100-byte ICMP Echos to {A(dst)}, timeout is 2 seconds:\n"
        f"{marks}\nSuccess rate is {rate}"
    )
    return text if ok else f"{text}\n% {why}" if why else text


def traceroute_text(net: Network, dst: int, hops) -> str:
    """The output of ``traceroute``: the ingress address of every hop after the source."""
    lines = ["Type escape sequence to abort.", f"Tracing the route to {A(dst)}", ""]
    n = 0
    for dev, inif, _out in hops[1:]:
        n += 1
        ip = next((i.ip for i in net.l3[dev] if i.name == inif), None)
        lines.append(f"  {n} {A(ip) if ip is not None else '*'} 1 msec 1 msec 1 msec")
    return "\n".join(lines)


def net_of(ip: int, plen: int) -> str:
    """``10.1.2.0/24`` for an address and prefix length."""
    return f"{A(ip & mask(plen))}/{plen}"
