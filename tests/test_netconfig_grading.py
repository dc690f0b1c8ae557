"""Grading by behaviour: for every configuration family and level over many seeds, the
oracle and IOS-equivalent rewrites of it score 1.0, and each violated requirement, an
unchanged and an empty submission stay under the stated bounds."""

from __future__ import annotations

import ipaddress
import json
import re

import numpy as np
import pytest

from textgyms.envs.netconfig.acl import evaluate
from textgyms.envs.netconfig.generate import LEVELS, NetTask, generate
from textgyms.envs.netconfig.model import PROTO_NUM
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.verify import _reference, network, verify_submission

SEEDS = range(10)
CONFIG_FAMILIES = ("addressing", "routing", "acl", "vlan", "nat", "ospf_areas", "fhrp", "bgp",
                   "redistribution", "ibgp", "bgp_ospf", "vrrp", "nssa")


def task(family: str, level: str, seed: int) -> NetTask:
    return generate(np.random.default_rng(seed), family, level)


def score(t: NetTask, configs: dict[str, str]) -> float:
    body = "\n".join(f"! device {d}\n{text}" for d, text in configs.items())
    return verify_submission(t, body).score


def edit(t: NetTask, fn) -> dict[str, str]:
    return {d: fn(d, text) for d, text in t.reference}


# --- IOS-equivalent rewrites ---------------------------------------------------------------

ABBREV = [(r"^interface ", "int "), (r"^ ip address ", " ip add "), (r"^ no shutdown", " no shut"),
          (r"^ description ", " desc "), (r"^router ospf ", "router os "),
          (r"^ passive-interface ", " passive "), (r"^ network ", " net "),
          (r"^ switchport mode access", " sw mo acc"), (r"^ switchport access vlan ", " sw acc vl "),
          (r"^ encapsulation dot1Q ", " encap dot1q "), (r"^ ip access-group ", " ip access-g "),
          (r"^ip nat inside source ", "ip nat ins so ")]


def abbreviated(_d: str, text: str) -> str:
    for pat, rep in ABBREV:
        text = re.sub(pat, rep, text, flags=re.M)
    return re.sub(r"GigabitEthernet", "gi", text)


def with_harmless_lines(_d: str, text: str) -> str:
    text = re.sub(r"^(hostname .*)$", r"\1\nservice timestamps log datetime msec\n"
                  r"no ip domain-lookup\nip cef", text, count=1, flags=re.M)
    text = re.sub(r"^(interface GigabitEthernet\S+)$", r"\1\n duplex auto\n speed auto", text,
                  flags=re.M)
    text = re.sub(r"^(router ospf \d+)$", r"\1\n log-adjacency-changes", text, flags=re.M)
    return text + "\nline con 0\n exec-timeout 0 0\nline vty 0 4\n login local\n transport input ssh"


def _iface_for(text: str, nh: str) -> str:
    cfg = parse_config(text)[0]
    addr = ipaddress.IPv4Address(nh)
    return next(i.name for i in cfg.interfaces.values() if i.ip is not None and addr in i.ip.network)


def static_fully_specified(_d: str, text: str) -> str:
    def rep(m: re.Match) -> str:
        return (f"ip route {m.group(1)} {_iface_for(text, m.group(2))} {m.group(2)} "
                f"name TO-LAN permanent")
    return re.sub(r"^ip route (\S+ \S+) (\d+\.\d+\.\d+\.\d+)$", rep, text, flags=re.M)


def static_exit_interface(_d: str, text: str) -> str:
    """Point-to-point exit interfaces: the neighbour answers ARP by proxy, as on IOS."""
    return re.sub(r"^ip route (\S+ \S+) (\d+\.\d+\.\d+\.\d+)$",
                  lambda m: f"ip route {m.group(1)} {_iface_for(text, m.group(2))}", text,
                  flags=re.M)


def static_default(_d: str, text: str) -> str:
    """One default route instead of per-LAN routes, where they all share a next hop."""
    hops = set(re.findall(r"^ip route \S+ \S+ (\S+)$", text, flags=re.M))
    if len(hops) != 1:
        return text
    text = re.sub(r"^ip route .*\n?", "", text, flags=re.M)
    return text.rstrip() + f"\nip route 0.0.0.0 0.0.0.0 {hops.pop()}"


def ospf_interface_mode(_d: str, text: str) -> str:
    """``ip ospf 7 area A`` (dotted) on every interface instead of network statements."""
    cfg = parse_config(text)[0]
    if cfg.ospf is None:
        return text
    from textgyms.envs.netconfig.routing import ospf_area

    areas = {n: ospf_area(cfg, int(i.ip.ip), n) for n, i in cfg.interfaces.items() if i.ip}
    text = re.sub(r"^ network .*\n?", "", text, flags=re.M)
    text = re.sub(r"^router ospf 1$", "router ospf 7", text, flags=re.M)
    for name, area in areas.items():
        if area is None:
            continue  # an interface OSPF does not run on
        dotted = str(ipaddress.IPv4Address(area))
        text = re.sub(rf"^(interface {re.escape(name)}\n(?: .*\n)*? ip address .*)$",
                      rf"\1\n ip ospf 7 area {dotted}", text, count=1, flags=re.M)
    return text


def ospf_passive_default(_d: str, text: str) -> str:
    cfg = parse_config(text)[0]
    if cfg.ospf is None or not cfg.ospf.passive:
        return text
    active = [n for n, i in cfg.interfaces.items() if i.ip and n not in cfg.ospf.passive]
    text = re.sub(r"^ passive-interface .*\n?", "", text, flags=re.M)
    lines = "\n passive-interface default" + "".join(f"\n no passive-interface {a}"
                                                    for a in active)
    return re.sub(r"^(router ospf \d+)$", r"\1" + lines, text, flags=re.M)


def ospf_catch_all(_d: str, text: str) -> str:
    text = re.sub(r"^ network .*\n?", "", text, flags=re.M)
    return re.sub(r"^(router ospf \d+)$", r"\1\n network 0.0.0.0 255.255.255.255 area 0", text,
                  flags=re.M)


def ospf_md5_everywhere(_d: str, text: str) -> str:
    """MD5 authentication with one key on every OSPF router's interfaces: both ends agree."""
    if "router ospf" not in text:
        return text
    return text.replace(" no shutdown", " ip ospf authentication message-digest\n"
                                        " ip ospf message-digest-key 1 md5 S3cr3t\n no shutdown")


def nat_without_overload_keyword(_d: str, text: str) -> str:
    """IOS always overloads the interface address: ``overload`` is implied."""
    return re.sub(r"(ip nat inside source list \S+ interface \S+) overload", r"\1", text)


def nat_pool_of_the_outside_address(_d: str, text: str) -> str:
    m = re.search(r"ip nat inside source list (\S+) interface (\S+) overload", text)
    if not m:
        return text
    addr = parse_config(text)[0].interfaces[m.group(2)].ip
    pool = f"ip nat pool OUT {addr.ip} {addr.ip} netmask {addr.netmask}"
    return text.replace(m.group(0), f"{pool}\nip nat inside source list {m.group(1)} pool OUT "
                                    "overload")


def nat_static_extendable(_d: str, text: str) -> str:
    return re.sub(r"^(ip nat inside source static \S+ \S+)$", r"\1 extendable", text, flags=re.M)


def trunk_add(_d: str, text: str) -> str:
    def rep(m: re.Match) -> str:
        first, *rest = m.group(2).split(",")
        tail = f"\n{m.group(1)} add {','.join(rest)}" if rest else ""
        return f"{m.group(1)} {first}{tail}"
    return re.sub(r"^( switchport trunk allowed vlan) (\S+)$", rep, text, flags=re.M)


def hsrp_other_numbers(_d: str, text: str) -> str:
    """Other priorities and a larger decrement that elect the same routers."""
    text = re.sub(r"^ standby (\d+) priority 110$", r" standby \1 priority 150", text, flags=re.M)
    text = re.sub(r"^( standby \d+ ip \S+)$", r"\1\n standby version 2", text, flags=re.M)
    return re.sub(r"^ standby (\d+) track (\S+) 20$", r" standby \1 track \2 60", text,
                  flags=re.M)


def bgp_other_numbers(_d: str, text: str) -> str:
    """A higher local preference, a longer prepend and the usual housekeeping lines."""
    text = text.replace(" set local-preference 200", " set local-pref 300")
    text = re.sub(r"^( set as-path prepend (\d+) .*)$", r"\1 \2", text, flags=re.M)
    return re.sub(r"^(router bgp \d+)$", r"\1\n bgp log-neighbor-changes\n no synchronization"
                  r"\n no auto-summary", text, count=1, flags=re.M)


def bgp_address_family(_d: str, text: str) -> str:
    """The IPv4 family written out (``no bgp default ipv4-unicast``, ``activate``), with
    harmless neighbor options and an inbound prefix-list that permits every prefix."""
    m = re.search(r"^router bgp (\d+)\n(?: .*\n?)*", text, flags=re.M)
    if not m:
        return text
    block = m.group(0)
    peers = re.findall(r"^ neighbor (\S+) remote-as \d+$", block, flags=re.M)
    inner = re.findall(r"^ ((?:network|redistribute|neighbor \S+ (?:route-map|next-hop-self))"
                       r".*)$", block, flags=re.M)
    kept = re.sub(r"^ (network|redistribute|neighbor \S+ (route-map|next-hop-self)).*\n?", "",
                  block, flags=re.M)
    af = "".join(f"  neighbor {p} activate\n  neighbor {p} soft-reconfiguration inbound\n"
                 f"  neighbor {p} send-community both\n  neighbor {p} prefix-list ALL in\n"
                 for p in peers) + "".join(f"  {x}\n" for x in inner)
    kept = kept.replace(f"router bgp {m.group(1)}\n",
                        f"router bgp {m.group(1)}\n no bgp default ipv4-unicast\n", 1)
    text = text[:m.start()] + kept.rstrip("\n") + "\n" + text[m.end():].lstrip("\n")
    return (text.rstrip() + f"\nrouter bgp {m.group(1)}\n address-family ipv4 unicast\n{af}"
            " exit-address-family\nip prefix-list ALL seq 5 permit 0.0.0.0/0 le 32")


def hsrp_learnt_vip_and_decrement(_d: str, text: str) -> str:
    """The standby router learns the virtual IP; tracking written with ``decrement``."""
    if not re.search(r"^ standby \d+ priority", text, flags=re.M):
        text = re.sub(r"^( standby \d+ ip) \S+$", r"\1", text, flags=re.M)
    return re.sub(r"^( standby \d+ track \S+) (\d+)$", r"\1 decrement \2", text, flags=re.M)


def redistribution_route_map(_d: str, text: str) -> str:
    """The statics redistributed through a route-map: permit-all, or matching them."""
    statics = re.findall(r"^ip route (\S+) (\S+) \S+", text, flags=re.M)
    if not statics or " redistribute static" not in text:
        return text
    nets = [ipaddress.IPv4Network(f"{a}/{m}") for a, m in statics if a != "0.0.0.0"]
    text = text.replace(" redistribute static subnets", " redistribute static subnets "
                        "route-map LEGACY")
    text += "\nroute-map LEGACY permit 10\n match ip address prefix-list LEGACY-LANS"
    text += "".join(f"\nip prefix-list LEGACY-LANS permit {n}" for n in nets)
    return text + "\nroute-map LEGACY permit 20\n match ip address 7\naccess-list 7 permit any"


def redistribution_options(_d: str, text: str) -> str:
    """E1 with a metric, and an unconditional default: the same forwarding here."""
    text = text.replace(" redistribute static subnets", " redistribute static metric-type 1 "
                                                       "metric 30 subnets")
    return text.replace(" default-information originate", " default-information originate always")


def pasted_show_run(d: str, text: str) -> str:
    """What ``show running-config`` prints (the BGP address family with its indented ``!``
    lines, a section ``!`` after every block) pasted back as the answer."""
    return render_config(parse_config(bgp_address_family(d, text), d)[0])


def with_exits(_d: str, text: str) -> str:
    """``exit`` after every sub-mode block and ``!`` comments inside them, as people type."""
    text = re.sub(r"^( .*)\n(?=\S)", r"\1\n !\n exit\n", text + "\n", flags=re.M)
    return text.replace("\n address-family ipv4 unicast\n", "\n address-family ipv4 unicast\n  !\n")


def bgp_peer_groups(_d: str, text: str) -> str:
    """Every neighbor in a peer-group of its own that carries its remote-as and policy."""
    peers = re.findall(r"^ neighbor (\S+) remote-as (\d+)$", text, flags=re.M)
    for k, (peer, asn) in enumerate(peers):
        pg = f"PEERS{k}"
        text = text.replace(f" neighbor {peer} remote-as {asn}\n",
                            f" neighbor {pg} peer-group\n neighbor {pg} remote-as {asn}\n"
                            f" neighbor {peer} peer-group {pg}\n")
        text = re.sub(rf"^ neighbor {re.escape(peer)} (route-map|next-hop-self)",
                      rf" neighbor {pg} \1", text, flags=re.M)
    return text


def bgp_sessions_hardened(t: NetTask) -> dict[str, str]:
    """Where the agent owns both ends: the same MD5 password on both, and loopback peering
    is not used (the session stays on the link); elsewhere an explicit ebgp-multihop 1."""
    mine = {d for d, _x in t.start}

    def rewrite(d: str, text: str) -> str:
        cfg = parse_config(text, d)[0]
        if cfg.bgp is None:
            return text
        extra = ""
        for addr in cfg.bgp.neighbors:
            owner = next((o for o, x in t.reference if o != d and f" ip address {addr} " in x),
                         None)
            extra += (f" neighbor {addr} password S3cr3t Key\n" if owner in mine else
                      f" neighbor {addr} ebgp-multihop 1\n")
        return text.rstrip() + f"\nrouter bgp {cfg.bgp.asn}\n" + extra
    return edit(t, rewrite)


def hsrp_ranges_and_group_forms(_d: str, text: str) -> str:
    """Priority at the top of HSRP's range, version 2 on both routers, group-numbered
    timers and MD5 authentication with the same key on both."""
    text = re.sub(r"^ standby (\d+) priority 110$", r" standby \1 priority 255", text,
                  flags=re.M)
    # Tracking must still bring it below the peer's 100: 255 - 200.
    text = re.sub(r"^( standby \d+ track \S+) \d+$", r"\1 decrement 200", text, flags=re.M)
    return re.sub(r"^( standby (\d+) ip \S+)$", r" standby version 2\n\1\n standby \2 timers 1 3"
                  r"\n standby \2 authentication md5 key-string Gr0up\2", text, flags=re.M)


def redistribution_tag_and_metric_map(_d: str, text: str) -> str:
    """``subnets tag 250`` and a route-map that sets the metric and metric type."""
    if " redistribute static subnets" not in text:
        return text
    text = text.replace(" redistribute static subnets", " redistribute static subnets tag 250 "
                        "route-map SEED")
    return text + "\nroute-map SEED permit 10\n set metric 50\n set metric-type type-1\n set tag 9"


def vrrp_forms(_d: str, text: str) -> str:
    """VRRP's range top (254), the same MD5 key and advertisement interval on both routers,
    an explicit ``preempt`` (the default) and a description."""
    text = re.sub(r"^ vrrp (\d+) priority 110$", r" vrrp \1 priority 254", text, flags=re.M)
    return re.sub(r"^( vrrp (\d+) ip \S+)$", r"\1\n vrrp \2 timers advertise 2\n vrrp \2 "
                  r"authentication md5 key-string V\2\n vrrp \2 preempt\n vrrp \2 description "
                  r"gateway", text, flags=re.M)


def nssa_no_summary(_d: str, text: str) -> str:
    """A totally NSSA: the ABR's type-3 default replaces the type-7 one."""
    return text.replace(" nssa default-information-originate", " nssa no-summary")


def ibgp_interface_ospf(_d: str, text: str) -> str:
    """next-hop-self written with ``all`` and the iBGP neighbours in one peer-group."""
    text = text.replace(" next-hop-self", " next-hop-self all")
    return bgp_peer_groups(_d, text)


def bgp_ospf_other_maps(_d: str, text: str) -> str:
    """Deny-then-permit route-maps that select the same routes, and an E1 seed metric."""
    text = text.replace(" redistribute ospf 1\n", " redistribute ospf 1 match internal\n")
    text = text.replace("route-map BGP-TO-OSPF permit 10\n", "route-map BGP-TO-OSPF permit 20\n")
    if "route-map BGP-TO-OSPF" in text:
        text += ("\nroute-map BGP-TO-OSPF deny 10\n match ip address prefix-list NOT-ALLOWED"
                 "\nip prefix-list NOT-ALLOWED seq 5 deny " + re.search(
                     r"PARTNER-ALLOWED permit (\S+)", text).group(1) +
                 "\nip prefix-list NOT-ALLOWED seq 10 permit 0.0.0.0/0 le 32")
    return text.replace(" set metric 50", " set metric 20\n set metric-type type-1")


REWRITES = {
    "ibgp": [abbreviated, with_harmless_lines, with_exits, pasted_show_run, bgp_peer_groups,
             ibgp_interface_ospf],
    "bgp_ospf": [abbreviated, with_harmless_lines, with_exits, pasted_show_run,
                 bgp_ospf_other_maps],
    "vrrp": [abbreviated, with_harmless_lines, with_exits, pasted_show_run, vrrp_forms],
    "nssa": [abbreviated, with_harmless_lines, with_exits, pasted_show_run, nssa_no_summary,
             ospf_interface_mode],
    "redistribution": [abbreviated, with_harmless_lines, redistribution_options,
                       ospf_md5_everywhere, redistribution_route_map, with_exits,
                       pasted_show_run, redistribution_tag_and_metric_map],
    "bgp": [abbreviated, with_harmless_lines, bgp_other_numbers, bgp_address_family,
            pasted_show_run, with_exits, bgp_peer_groups],
    "fhrp": [abbreviated, with_harmless_lines, hsrp_other_numbers,
             hsrp_learnt_vip_and_decrement, hsrp_ranges_and_group_forms, with_exits,
             pasted_show_run],
    "addressing": [abbreviated, with_harmless_lines, with_exits, pasted_show_run],
    "routing": [abbreviated, with_harmless_lines, static_fully_specified, static_exit_interface,
                static_default, ospf_interface_mode, ospf_passive_default, ospf_catch_all,
                ospf_md5_everywhere, with_exits, pasted_show_run],
    "acl": [abbreviated, with_harmless_lines, with_exits, pasted_show_run],
    "vlan": [abbreviated, with_harmless_lines, trunk_add, with_exits, pasted_show_run],
    "ospf_areas": [abbreviated, with_harmless_lines, ospf_interface_mode, ospf_passive_default,
                   ospf_md5_everywhere, with_exits, pasted_show_run],
    "nat": [abbreviated, with_harmless_lines, nat_without_overload_keyword,
            nat_pool_of_the_outside_address, nat_static_extendable, with_exits,
            pasted_show_run],
}


def acl_dst_any(t: NetTask) -> dict[str, str]:
    """Destination ``any`` for a rule whose destination is the whole server LAN: outbound on
    that LAN, the two decide every packet the interface carries the same way."""
    host = next(text for d, text in t.fixed if d == "SRV1")
    srv = ipaddress.IPv4Interface("/".join(re.search(r"ip address (\S+) (\S+)", host).groups()))
    subnet = f"{srv.network.network_address} {srv.network.hostmask}"
    return edit(t, lambda d, text: text.replace(f" {subnet}", " any")
                if "access-list" in text else text)


@pytest.mark.parametrize("family", CONFIG_FAMILIES)
@pytest.mark.parametrize("level", LEVELS)
def test_oracle_and_ios_equivalent_rewrites_score_one(family, level):
    for seed in SEEDS:
        t = task(family, level, seed)
        assert score(t, dict(t.reference)) == 1.0
        for fn in REWRITES[family]:
            assert score(t, edit(t, fn)) == 1.0, (fn.__name__, seed)
        if family == "acl" and level != "easy":
            assert score(t, acl_dst_any(t)) == 1.0, seed
        if family == "bgp":
            assert score(t, bgp_sessions_hardened(t)) == 1.0, seed


# --- wrong variants ------------------------------------------------------------------------

def _first_address_changed(_d: str, text: str) -> str:
    return re.sub(r"^( ip address \d+\.\d+\.\d+\.)(\d+)", lambda m: m.group(1)
                  + str(int(m.group(2)) % 250 + 2), text, count=1, flags=re.M)


def _add_ospf(_d: str, text: str) -> str:
    return text + "\nrouter ospf 1\n network 0.0.0.0 255.255.255.255 area 0"


def _add_ibgp(_d: str, text: str) -> str:
    """iBGP to every static next hop: a dynamic protocol, whatever it advertises."""
    hops = sorted(set(re.findall(r"^ip route \S+ \S+ (\S+)$", text, flags=re.M)))
    return text + "\nrouter bgp 65000\n" + "".join(f" neighbor {h} remote-as 65000\n"
                                                   for h in hops)


def _add_ospfv3(_d: str, text: str) -> str:
    return text + "\nipv6 unicast-routing\nipv6 router ospf 1\n router-id 9.9.9.9"


def _one_router_in_area_1(t: NetTask) -> dict[str, str]:
    first = next(d for d, text in t.reference if " area 0" in text)
    return edit(t, lambda d, text: text.replace(" area 0", " area 1") if d == first else text)


def _auth_on_first(t: NetTask) -> dict[str, str]:
    """IOS refuses the adjacency when only one end authenticates."""
    first = next(d for d, text in t.reference if "router ospf" in text)
    return edit(t, lambda d, x: x.replace(" no shutdown", " ip ospf authentication "
                                          "message-digest\n no shutdown") if d == first else x)


def _same_router_id(_d: str, text: str) -> str:
    pid = re.search(r"^router ospf (\d+)$", text, flags=re.M)
    return text + f"\nrouter ospf {pid.group(1)}\n router-id 9.9.9.9" if pid else text


def _statics_for_ospf(t: NetTask) -> dict[str, str]:
    """Static routes along the reference's OSPF paths: reachability holds, provenance not."""
    net = network(t, _reference(t))
    out = {}
    for d, text in t.start:
        lines = [f"ip route {ipaddress.IPv4Address(r.net)} {ipaddress.IPv4Address(mask(r.plen))} "
                 f"{ipaddress.IPv4Address(r.fwd)}" for r in map(RouteFields._make, net.rib[d])
                 if r.proto == "O"]
        out[d] = text + "\n" + "\n".join(lines)
    return out


def mask(plen: int) -> int:
    return (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF


def _no_costs(_d: str, text: str) -> str:
    return re.sub(r"^ ip ospf cost .*\n?", "", text, flags=re.M)


def _permit_all_acl(_d: str, text: str) -> str:
    text = re.sub(r"^access-list (\d+) .*$", r"access-list \1 permit ip any any", text,
                  flags=re.M)
    return re.sub(r"^ (\d+ )?(permit|deny) .*$", " permit ip any any", text, flags=re.M)


def _acl_not_applied(_d: str, text: str) -> str:
    return re.sub(r"^ ip access-group .*\n?", "", text, flags=re.M)


def _no_nat_outside(_d: str, text: str) -> str:
    return text.replace(" ip nat outside\n", "")


def _nat_acl_host_only(t: NetTask) -> dict[str, str]:
    """The NAT ACL permits the inside PCs' own addresses, not their LANs."""
    pcs = [re.search(r"ip address (\S+)", x).group(1) for h, x in t.fixed if h.startswith("PC")]

    def rewrite(_d: str, text: str) -> str:
        text = re.sub(r"^(?:access-list 1 | )permit \S+ \S+\n?", "", text, flags=re.M)
        named = re.search(r"^ip access-list standard \S+$", text, flags=re.M)
        head, lead = (f"\n{named.group(0)}", " ") if named else ("", "access-list 1 ")
        return text.rstrip() + head + "".join(f"\n{lead}permit host {a}" for a in pcs)
    return edit(t, rewrite)


def _nat_pool_without_overload(_d: str, text: str) -> str:
    """A one-address pool without ``overload``: one inside host at a time."""
    return nat_pool_of_the_outside_address(_d, text).replace(" pool OUT overload", " pool OUT")


def _trunk_all(_d: str, text: str) -> str:
    return re.sub(r"switchport trunk allowed vlan .*", "switchport trunk allowed vlan all", text)


def _acl_entry_lines(text: str) -> list[int]:
    """Indices of a config's ACL entry lines, in entry order (numbered or in a named block)."""
    lines, out, named = text.splitlines(), [], False
    for k, ln in enumerate(lines):
        if not ln.startswith(" "):
            named = ln.startswith("ip access-list ")
        if ln.startswith("access-list ") or (named and re.match(r" (permit|deny) ", ln)):
            out.append(k)
    return out


def _flow_decisions(t: NetTask, text: str, dev: str) -> list[bool]:
    """What the ACL applied on the server LAN decides for each of the task's flows towards
    that LAN (the only packets an outbound ACL there sees), by first match."""
    eq = next(c for c in json.loads(t.checks) if c["g"] == "acl_equiv")
    cfg = parse_config(text, dev)[0]
    acl = cfg.acls.get(getattr(cfg.interfaces[eq["if"]], f"acl_{eq['dir']}"))
    lan = ipaddress.IPv4Network(eq["subnet"])
    return [evaluate(acl, (int(ipaddress.IPv4Address(c["src"])),
                           int(ipaddress.IPv4Address(c["dst"])), PROTO_NUM[c["proto"]], 49152,
                           int(c["dport"]), c["est"]))[0]
            for c in json.loads(t.checks) if c["g"] in ("flows", "boundary", "collateral")
            and ipaddress.IPv4Address(c["dst"]) in lan]


def _acl_rules_swapped(t: NetTask) -> dict[str, str] | None:
    """The first swap of two ACL rules (the closest pairs first; the catch-all ``permit``
    counts as a rule) that changes a decision on the task's flows, or None when no swap
    does (then a wrong order is not observable by the flows and the variant is not used:
    the guard that keeps the test from depending on which policy a seed draws)."""
    dev, text = next((d, x) for d, x in t.reference if "access-list" in x)
    want = _flow_decisions(t, text, dev)
    idx = _acl_entry_lines(text)
    pairs = sorted(((a, b) for a in idx for b in idx if a < b), key=lambda p: (p[1] - p[0], p))
    for a, b in pairs:
        lines = text.splitlines()
        lines[a], lines[b] = lines[b], lines[a]
        swapped = "\n".join(lines)
        if _flow_decisions(t, swapped, dev) != want:
            return {**dict(t.reference), dev: swapped}
    return None


def _wrong_variants(family: str, level: str, t: NetTask) -> list[tuple[str, dict[str, str]]]:
    out = []
    if family == "addressing":
        out += [("wrong address", edit(t, _first_address_changed)),
                ("an interface left shut down", edit(t, lambda d, x: x.replace(
                    " no shutdown", " shutdown", 1)))]
    if family == "vlan" and level == "medium":
        out.append(("SVIs without ip routing", edit(t, lambda d, x: x.replace(
            "\nip routing\n", "\n"))))
    if family == "acl":
        out.append(("ACL applied in instead of out", edit(t, lambda d, x: re.sub(
            r"(ip access-group \S+) out", r"\1 in", x))))
    if family == "routing" and level == "easy":
        out += [("OSPF where static only", edit(t, _add_ospf)),
                ("iBGP where static only", edit(t, _add_ibgp)),
                ("an OSPFv3 process where static only", edit(t, _add_ospfv3))]
    if family == "routing" and level != "easy":
        out += [("area 1 on one router", _one_router_in_area_1(t)),
                ("duplicate router IDs", edit(t, _same_router_id)),
                ("statics where OSPF", _statics_for_ospf(t)),
                ("LANs not passive", edit(t, lambda d, x: re.sub(r"^ passive-interface .*\n?",
                                                                 "", x, flags=re.M)))]
    if family in ("ospf_areas", "routing") and level != "easy":
        out += [("MD5 authentication on one router only", _auth_on_first(t)),
                ("priority 0 on every router (no DR)", edit(t, lambda d, x: x.replace(
                    " no shutdown", " ip ospf priority 0\n no shutdown")))]
    if family == "ospf_areas":
        out += [("one router's backbone interfaces in area 1", _one_router_in_area_1(t)),
                ("everything in area 0", edit(t, lambda d, x: re.sub(r" area \d+", " area 0", x))),
                ("duplicate router IDs", edit(t, _same_router_id))]
    if family == "redistribution":
        out += [("no subnets keyword", edit(t, lambda d, x: x.replace(" subnets", ""))),
                ("connected instead of static", edit(t, lambda d, x: x.replace(
                    "redistribute static", "redistribute connected")))]
    if family == "redistribution" and level != "easy":
        out.append(("no default origination", edit(t, lambda d, x: x.replace(
            " default-information originate", " log-adjacency-changes"))))
    if family == "bgp":
        out += [("LAN advertised with the wrong mask", edit(t, lambda d, x: re.sub(
                    r"^( network \S+ mask) \S+$", r"\1 255.255.0.0", x, flags=re.M))),
                ("wrong remote AS", edit(t, lambda d, x: re.sub(
                    r"^( neighbor \S+ remote-as) (\d+)$", r"\1 65535", x, count=1,
                    flags=re.M)))]
    if family == "bgp":
        out.append(("no bgp default ipv4-unicast without activate", edit(t, lambda d, x: re.sub(
            r"^(router bgp \d+)$", r"\1\n no bgp default ipv4-unicast", x, flags=re.M))))
    if family == "redistribution":
        out.append(("redistribution through a route-map that matches nothing", edit(
            t, lambda d, x: x.replace(" redistribute static subnets", " redistribute static "
                                      "subnets route-map NONE") + "\nroute-map NONE permit 10\n"
                                      " match ip address prefix-list NONE\n"
                                      "ip prefix-list NONE deny 0.0.0.0/0 le 32")))
    if family == "bgp" and level != "easy":
        out.append(("no local preference", edit(t, lambda d, x: x.replace(
            "route-map FROM-ISP1 in", "description no policy"))))
    if family == "bgp" and level == "hard":
        out.append(("no prepend", edit(t, lambda d, x: re.sub(
            r"^ set as-path prepend .*\n?", "", x, flags=re.M))))
    if family == "fhrp":
        out.append(("priorities not set (R1 not active)", edit(t, lambda d, x: re.sub(
            r"^ standby \d+ priority .*\n?", "", x, flags=re.M))))
    if family == "fhrp" and level != "easy":
        out += [("no tracking", edit(t, lambda d, x: re.sub(r"^ standby \d+ track .*\n?", "", x,
                                                             flags=re.M))),
                ("tracking without preempt on the peer", edit(t, lambda d, x: re.sub(
                    r"^ standby \d+ preempt\n?", "", x, flags=re.M)))]
    if family == "routing" and level == "hard":
        out.append(("costs not tuned (waypoint on every path)", edit(t, _no_costs)))
    if family == "acl":
        out += [("permit any", edit(t, _permit_all_acl)),
                ("ACL not applied", edit(t, _acl_not_applied))]
        swapped = _acl_rules_swapped(t)
        if swapped is not None:
            out.append(("two ACL rules in the wrong order", swapped))
    if family == "nat":
        out += [("no outside interface", edit(t, _no_nat_outside)),
                ("NAT ACL permits only the PCs' own addresses", _nat_acl_host_only(t)),
                ("one-address pool without overload", edit(t, _nat_pool_without_overload))]
    if family == "nat" and level != "easy":
        out.append(("static NAT missing", edit(t, lambda d, x: re.sub(
            r"^ip nat inside source static .*\n?", "", x, flags=re.M))))
    if family == "vlan" and level != "medium":
        out.append(("trunks carry every VLAN", edit(t, _trunk_all)))
    out += _round3_variants(family, level, t)
    return out


def _on_first(t: NetTask, pattern: str, fn) -> dict[str, str]:
    """``fn`` applied to the first device whose reference matches ``pattern``."""
    first = next(d for d, x in t.reference if re.search(pattern, x, flags=re.M))
    return edit(t, lambda d, x: fn(x) if d == first else x)


def _first_neighbor(text: str, option: str) -> str:
    m = re.search(r"^router bgp (\d+)$(?:\n .*)*?\n neighbor (\S+) remote-as", text, flags=re.M)
    return text.rstrip() + f"\nrouter bgp {m.group(1)}\n neighbor {m.group(2)} {option}"


def _new_family_variants(family: str, level: str,
                         t: NetTask) -> list[tuple[str, dict[str, str]]]:
    """Broken designs of the iBGP, OSPF<->BGP, VRRP and NSSA tasks."""
    out = []
    if family == "ibgp":
        out += [("no next-hop-self", edit(t, lambda d, x: re.sub(
                    r"^ neighbor \S+ next-hop-self\n?", "", x, flags=re.M))),
                ("no update-source", edit(t, lambda d, x: re.sub(
                    r"^ neighbor \S+ update-source .*\n?", "", x, flags=re.M))),
                ("the provider link in OSPF instead of next-hop-self", edit(t, lambda d, x: re.sub(
                    r"^ neighbor \S+ next-hop-self\n?", "", x, flags=re.M).replace(
                    "router ospf 1\n", "router ospf 1\n network 203.0.113.0 0.0.0.255 area 0\n",
                    1))),
                ("one iBGP session missing", _on_first(t, r"next-hop-self", lambda x: re.sub(
                    r"^ neighbor (\S+) remote-as (\d+)\n(?= neighbor \1 update-source)",
                    r" neighbor \1 remote-as \2\n neighbor \1 shutdown\n", x, count=1,
                    flags=re.M)))]
    if family == "bgp_ospf":
        out += [("BGP not redistributed into OSPF", edit(t, lambda d, x: re.sub(
                    r"^ redistribute bgp .*\n?", "", x, flags=re.M))),
                ("OSPF not redistributed into BGP", edit(t, lambda d, x: re.sub(
                    r"^ redistribute ospf .*\n?", "", x, flags=re.M)))]
        if level != "easy":
            out.append(("every OSPF route to the partner", edit(t, lambda d, x: x.replace(
                " redistribute ospf 1 route-map OSPF-TO-BGP", " redistribute ospf 1"))))
        if level == "hard":
            out.append(("every partner route into OSPF", edit(t, lambda d, x: x.replace(
                " subnets route-map BGP-TO-OSPF", " subnets"))))
    if family == "vrrp":
        out += [("no preempt on the master", _on_first(t, r"^ vrrp \d+ ip", lambda x: re.sub(
                    r"^( vrrp (\d+) ip \S+)$", r"\1\n no vrrp \2 preempt", x, count=1,
                    flags=re.M))),
                ("authentication on one router only", _on_first(t, r"^ vrrp", lambda x: re.sub(
                    r"^( vrrp (\d+) ip \S+)$", r"\1\n vrrp \2 authentication text K", x,
                    flags=re.M))),
                ("another advertisement interval on one router", _on_first(
                    t, r"^ vrrp", lambda x: re.sub(r"^( vrrp (\d+) ip \S+)$",
                                                   r"\1\n vrrp \2 timers advertise 3", x,
                                                   flags=re.M)))]
        if level != "hard":
            out.append(("no priorities (the higher address wins)", edit(t, lambda d, x: re.sub(
                r"^ vrrp \d+ priority .*\n?", "", x, flags=re.M))))
    if family == "nssa":
        out += [("stub instead of NSSA", edit(t, lambda d, x: re.sub(
                    r" nssa( default-information-originate)?$", " stub", x, flags=re.M))),
                ("no NSSA at all", edit(t, lambda d, x: re.sub(
                    r"^ area \d+ nssa.*\n?", "", x, flags=re.M))),
                ("NSSA on the branch router only", edit(t, lambda d, x: re.sub(
                    r"^ area \d+ nssa default-information-originate\n?", "", x, flags=re.M))),
                ("no default into the NSSA", edit(t, lambda d, x: x.replace(
                    " nssa default-information-originate", " nssa")))]
    return out


def _round3_variants(family: str, level: str, t: NetTask) -> list[tuple[str, dict[str, str]]]:
    """The broken designs IOS refuses that a network engineer found scoring 1.0, and their
    siblings."""
    out = []
    if family == "bgp":
        out += [("password on one side only", _on_first(t, r"^router bgp", lambda x: (
                    _first_neighbor(x, "password OnlyHere")))),
                ("neighbor shutdown", _on_first(t, r"^router bgp", lambda x: (
                    _first_neighbor(x, "shutdown")))),
                ("update-source a loopback the eBGP peer cannot reach", _on_first(
                    t, r"^router bgp", lambda x: _first_neighbor(
                        x + "\ninterface Loopback0\n ip address 10.255.254.1 255.255.255.255",
                        "update-source Loopback0")))]
    if family == "fhrp":
        out += [("standby version 2 on one router only", _on_first(t, r"^ standby", lambda x: (
                    x.replace(" standby ", " standby version 2\n standby ", 1)))),
                ("authentication on one router only", _on_first(t, r"^ standby", lambda x: re.sub(
                    r"^( standby (\d+) ip \S+)$", r"\1\n standby \2 authentication md5 "
                    r"key-string K", x, flags=re.M))),
                ("another group number on one router", _on_first(t, r"^ standby", lambda x: re.sub(
                    r"^ standby (\d+) ", lambda m: f" standby {int(m.group(1)) + 100} ", x,
                    flags=re.M))),
                ("no preempt on the primary", _on_first(t, r"^ standby \d+ priority", lambda x: (
                    re.sub(r"^ standby \d+ preempt\n?", "", x, count=1, flags=re.M))))]
    out += _new_family_variants(family, level, t)
    if family in ("ospf_areas", "routing") and level != "easy":
        out.append(("point-to-point on one side of a broadcast link", _on_first(
            t, r"^router ospf", lambda x: re.sub(r"^(interface GigabitEthernet0/1\n)", r"\1 ip "
                                                 r"ospf network point-to-point\n", x, flags=re.M))))
    return out


@pytest.mark.parametrize("family", CONFIG_FAMILIES)
@pytest.mark.parametrize("level", LEVELS)
def test_violated_requirements_unchanged_and_empty_stay_under_the_bounds(family, level):
    for seed in SEEDS:
        t = task(family, level, seed)
        assert score(t, dict(t.start)) <= 0.1
        assert verify_submission(t, "").score == 0.0
        assert score(t, {d: f"hostname {d}" for d, _ in t.start}) <= 0.1
        for name, configs in _wrong_variants(family, level, t):
            assert score(t, configs) <= 0.5, (name, seed)


@pytest.mark.parametrize("level", LEVELS)
def test_acl_rules_in_the_wrong_order_stay_under_half(level):
    """Order decides an ACL (first match): two adjacent rules swapped so that some flow of
    the task is decided differently score at most 0.5, on every seed where such a swap
    exists; enough seeds have one that the check is never vacuous."""
    used = 0
    for seed in range(30):
        t = task("acl", level, seed)
        swapped = _acl_rules_swapped(t)
        if swapped is None:
            continue
        used += 1
        assert score(t, swapped) <= 0.5, seed
    assert used >= 5, used


def test_repair_and_the_gate_give_partial_credit_densely():
    """Half the work earns something (progress), but never more than the gate."""
    t = task("addressing", "medium", 1)
    ref = dict(t.reference)
    half = dict(t.start)
    first = next(iter(ref))
    half[first] = ref[first]
    body = "\n".join(f"! device {d}\n{text}" for d, text in half.items())
    v = verify_submission(t, body)
    assert 0.0 < v.score < 0.5 and 0.0 < v.parts["progress"] < 1.0
    assert 0.0 < v.parts["requirements_met"] < 1.0 and "requirements met" in v.feedback


@pytest.mark.parametrize("family", CONFIG_FAMILIES + ("repair",))
def test_oracle_scores_one_and_the_start_at_most_a_tenth_over_many_seeds(family):
    for level in LEVELS:
        for seed in range(4, 16):
            t = task(family, level, seed)
            assert score(t, dict(t.reference)) == 1.0, (level, seed)
            assert score(t, dict(t.start)) <= 0.1, (level, seed)


@pytest.mark.parametrize("family", CONFIG_FAMILIES)
def test_reference_configs_round_trip_through_show_run_and_still_score_one(family):
    """render -> reparse gives the same configuration, accepted whole, and it still scores
    1.0: what ``show running-config`` prints is valid input that means the same."""
    for level in LEVELS:
        for seed in range(3):
            t = task(family, level, seed)
            rendered = {}
            for d, text in t.reference:
                out = render_config(parse_config(text, d)[0])
                again, issues, _n = parse_config(out, d)
                assert issues == [] and render_config(again) == out, (level, seed, d)
                rendered[d] = out
            assert score(t, rendered) == 1.0, (level, seed)
