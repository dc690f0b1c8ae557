"""BGP in IOS's formats: the ``router bgp`` and policy sections of ``show running-config``
(from a configuration), and ``show ip bgp summary`` (from a compiled network: one row per
configured neighbor with its state, ``Idle``, ``Idle (Admin)`` or ``Active``, or, when
established, the number of prefixes received from it)."""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig import bgp
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.sim import Network

A = ipaddress.IPv4Address


def show_ip_bgp_summary(net: Network, dev: str) -> str:
    """``show ip bgp summary``."""
    cfg = net.config(dev)
    if cfg.bgp is None:
        return "% BGP not active"
    rid = bgp.router_id(cfg, net.l3[dev])
    best = net.bgp_best.get(dev, {})
    rows = [f"BGP router identifier {A(rid)}, local AS number {cfg.bgp.asn}",
            f"BGP table version is {len(best) + 1}, main routing table version {len(best) + 1}",
            f"{len(best)} network entries using {len(best) * 144} bytes of memory", "",
            f"{'Neighbor':<16}{'V':<5}{'AS':>8} MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  "
            "State/PfxRcd"]
    for t in sorted((t for t in net.bgp_attempts if t.dev == dev), key=lambda t: t.peer_ip):
        n = cfg.bgp.neighbor(A(t.peer_ip))
        asn = n.remote_as if n is not None and n.remote_as is not None else 0
        if t.state == "Established":
            got = sum(1 for p in best.values() if p.peer == t.peer)
            up, msgs, state = "00:12:31", 17, str(got)
        else:
            up, msgs, state = "never", 0, t.state
        rows.append(f"{str(A(t.peer_ip)):<16}{4:<5}{asn:>8} {msgs:>7} {msgs:>7} "
                    f"{len(best) + 1:>8} {0:>4} {0:>4} {up:<8} {state}")
    return "\n".join(rows)


def bgp_lines(cfg: DeviceConfig) -> list[str]:
    """``router bgp``, prefix-lists and route-maps as ``show running-config`` prints them."""
    b = cfg.bgp
    return (_bgp_router(b) if b is not None else []) + _policy_lines(cfg)


def _bgp_router(b) -> list[str]:
    """``router bgp`` as IOS shows it: session settings at router level, and with ``no bgp
    default ipv4-unicast`` the IPv4 unicast settings in their ``address-family`` block
    (separated by IOS's indented ``!``)."""
    lines = [f"router bgp {b.asn}"]
    if b.router_id is not None:
        lines.append(f" bgp router-id {b.router_id}")
    if not b.default_ipv4:
        lines.append(" no bgp default ipv4-unicast")
    # Neighbor options come after the neighbor's remote-as, or IOS refuses them.
    per_neighbor = [x for x in b.extra if x.startswith(("neighbor ", "no neighbor "))]
    lines += [f" {x}" for x in b.extra if x not in per_neighbor]
    peers = [(name, g) for name, g in b.groups.items()] + [(_name(ip), n) for ip, n in
                                                           b.neighbors.items()]
    for name, n in peers:
        lines += _session_lines(name, n)
    lines += [f" {x}" for x in per_neighbor]
    af = [f"network {n.network_address} mask {n.netmask}" for n in b.networks]
    af += [f"redistribute {src}" + _match(b, src) + (f" route-map {m}" if m else "")
           for src, m in b.redistribute.items()]
    for name, n in peers:
        af += _family_lines(b, name, n)
    af6 = _ipv6_family(b, peers)
    if b.default_ipv4 and not af6:
        return lines + [f" {x}" for x in af] + ["!"]
    return lines + [" !", " address-family ipv4"] + [f"  {x}" for x in af] + [
        " exit-address-family"] + af6 + ["!"]


def _name(ip) -> str:
    """A neighbor address as IOS prints it (IPv6 in upper case)."""
    return str(ip).upper()


def _match(b, src: str) -> str:
    """`` match ...`` of ``redistribute ospf N`` (nothing for IOS's default, internal)."""
    types = b.redistribute_match.get(src)
    return "" if types is None or types == ("internal",) else " match " + " ".join(types)


def _ipv6_family(b, peers) -> list[str]:
    """The ``address-family ipv6`` block (empty when nothing is set in it)."""
    body = [f"network {str(n).upper()}" for n in b.networks6]
    body += [f"neighbor {name} activate" for name, n in peers if n.activate6]
    body += [f"neighbor {name} next-hop-self" for name, n in peers if n.next_hop_self6]
    body += b.extra6
    if not body:
        return []
    return [" !", " address-family ipv6"] + [f"  {x}" for x in body] + [
        " exit-address-family"]


def _session_lines(name: str, n) -> list[str]:
    """A neighbor's (or peer-group's) session settings."""
    out = [f" neighbor {name} peer-group"] if n.ip is None else []
    if n.remote_as is not None:
        out.append(f" neighbor {name} remote-as {n.remote_as}")
    if n.peer_group is not None:
        out.append(f" neighbor {name} peer-group {n.peer_group}")
    if n.shutdown:
        out.append(f" neighbor {name} shutdown")
    if n.password is not None:
        out.append(f" neighbor {name} password {n.password}")
    if n.multihop is not None:
        out.append(f" neighbor {name} ebgp-multihop {n.multihop}")
    if n.disable_connected_check:
        out.append(f" neighbor {name} disable-connected-check")
    if n.update_source is not None:
        out.append(f" neighbor {name} update-source {n.update_source}")
    return out


def _family_lines(b, name: str, n) -> list[str]:
    """A neighbor's IPv4 unicast settings (activation and policy)."""
    out = []
    if n.activate is not None and (n.ip is None or n.activate != b.default_ipv4):
        out.append(f"{'' if n.activate else 'no '}neighbor {name} activate")
    if n.next_hop_self:
        out.append(f"neighbor {name} next-hop-self")
    return out + [f"neighbor {name} {kind} {m} {d}" for kind, d, m in
                  (("route-map", "in", n.route_map_in), ("route-map", "out", n.route_map_out),
                   ("prefix-list", "in", n.prefix_list_in),
                   ("prefix-list", "out", n.prefix_list_out)) if m]


def _policy_lines(cfg: DeviceConfig) -> list[str]:
    lines = []
    for name, entries in cfg.prefix_lists.items():
        for e in entries:
            bounds = (f" ge {e.ge}" if e.ge is not None else "") + (
                f" le {e.le}" if e.le is not None else "")
            action = "permit" if e.permit else "deny"
            lines.append(f"ip prefix-list {name} seq {e.seq} {action} {e.prefix}{bounds}")
    for name, entries in cfg.route_maps.items():
        for e in entries:
            lines.append(f"route-map {name} {'permit' if e.permit else 'deny'} {e.seq}")
            if e.prefix_list:
                lines.append(f" match ip address prefix-list {e.prefix_list}")
            if e.acl:
                lines.append(f" match ip address {e.acl}")
            if e.match_tag:
                lines.append(" match tag " + " ".join(str(t) for t in e.match_tag))
            if e.metric is not None:
                lines.append(f" set metric {e.metric}")
            if e.metric_type is not None:
                lines.append(f" set metric-type type-{e.metric_type}")
            if e.tag is not None:
                lines.append(f" set tag {e.tag}")
            if e.local_pref is not None:
                lines.append(f" set local-preference {e.local_pref}")
            if e.prepend:
                lines.append(" set as-path prepend " + " ".join(str(a) for a in e.prepend))
            lines.append("!")
    return lines
