"""IOS behaviours of round 4: multiprotocol BGP for IPv6, route tags through redistribution,
``match`` of OSPF route types on ``redistribute ospf`` into BGP, outbound ACLs and the
router's own packets, and ACL entries for OSPF; each test names the Cisco document the
behaviour comes from."""

from __future__ import annotations

import ipaddress
import re

import numpy as np
import pytest
from test_netconfig_grading import bgp_address_family, edit, score
from test_netconfig_ios import _bgp_net, _gi, _net, _routes, square

from textgyms.envs.netconfig.acl import parse_ace
from textgyms.envs.netconfig.generate import LEVELS, generate
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.scenario import ip
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.sim import Network

V6 = ipaddress.IPv6Address

# --- multiprotocol BGP for IPv6 -----------------------------------------------------------


def _mp(r1_af: str, r2_af: str, r1_top: str = "", r2_top: str = "") -> Network:
    """R1 (AS 65001) and R2 (AS 65002) on one link, each with a loopback in IPv4 and IPv6,
    peering over both address families; ``*_af`` is the rest of ``router bgp``."""
    def router(n: int, asn: int, peer: int, peer_as: int, top: str, af: str) -> str:
        return (f"hostname R{n}\nipv6 unicast-routing\ninterface Loopback0\n"
                f" ip address 10.{n}.0.1 255.255.255.0\n ipv6 address 2001:DB8:{n}::1/64\n"
                f"interface Gi0/1\n ip address 10.0.12.{n} 255.255.255.252\n"
                f" ipv6 address 2001:DB8:12::{n}/64\n"
                f"router bgp {asn}\n bgp router-id {n}.{n}.{n}.{n}\n{top}"
                f" neighbor 10.0.12.{peer} remote-as {peer_as}\n"
                f" neighbor 2001:DB8:12::{peer} remote-as {peer_as}\n{af}")
    devices = {"R1": ("router", router(1, 65001, 2, 65002, r1_top, r1_af)),
               "R2": ("router", router(2, 65002, 1, 65001, r2_top, r2_af))}
    return _net(devices, [(("R1", _gi(1)), ("R2", _gi(1)))])


def _af6(n: int, peer: int, activate: bool = True) -> str:
    act = f"  neighbor 2001:DB8:12::{peer} activate\n" if activate else ""
    return f" address-family ipv6\n{act}  network 2001:DB8:{n}::/64\n exit-address-family\n"


def _v6_routes(net: Network, dev: str, prefix: str):
    p = ipaddress.IPv6Network(prefix)
    want = (int(p.network_address), p.prefixlen)
    return [RouteFields(*r) for r in net.v6.rib[dev] if r[:2] == want]


def test_ipv6_prefixes_are_exchanged_only_where_address_family_ipv6_activates_them():
    """Cisco IOS IPv6 Configuration Guide, "Implementing Multiprotocol BGP for IPv6": IPv6
    neighbors are named by their IPv6 addresses, ``neighbor ... activate`` in ``address-family
    ipv6`` enables the exchange of IPv6 prefixes with them (IPv6 unicast is not activated by
    default), ``network`` in that family advertises an IPv6 prefix in the routing table."""
    net = _mp(_af6(1, 2), _af6(2, 1))
    assert {t.state for t in net.v6.bgp_attempts} == {"Established"}
    got = _v6_routes(net, "R1", "2001:db8:2::/64")
    assert [(r.proto, r.ad) for r in got] == [("B", 20)]
    assert got[0].nexthop == int(V6("2001:db8:12::2"))
    assert net.v6.ping("R1", int(V6("2001:db8:2::1")))[1].status == "delivered"
    # Not activated at one end: the session is up (IPv4 unicast, the default) but carries
    # no IPv6 prefix either way.
    net = _mp(_af6(1, 2, activate=False), _af6(2, 1))
    assert _v6_routes(net, "R1", "2001:db8:2::/64") == []
    assert _v6_routes(net, "R2", "2001:db8:1::/64") == []
    # IPv4 is unaffected by the IPv6 family.
    assert [r.proto for r in _routes(net, "R1", "10.2.0.0/24")] == []  # no IPv4 network line


def test_ibgp_keeps_the_ipv6_next_hop_unless_next_hop_self_in_the_family():
    """The same guide (iBGP peers keep the eBGP next hop; ``neighbor next-hop-self`` in
    ``address-family ipv6`` makes the router the next hop): R3, an iBGP peer of R2 that has
    no route to the R1-R2 link, installs R1's prefix only with next-hop-self on R2."""
    def net(nhs: str) -> Network:
        r2 = (" neighbor 2001:DB8:23::3 remote-as 65002\n address-family ipv6\n"
              "  neighbor 2001:DB8:12::1 activate\n  neighbor 2001:DB8:23::3 activate\n"
              f"{nhs}  network 2001:DB8:2::/64\n exit-address-family\n")
        base = _mp(_af6(1, 2), r2)
        devices = {d: base.devices[d] for d in ("R1", "R2")}
        r2cfg = parse_config("interface Gi0/2\n ipv6 address 2001:DB8:23::2/64\n")[0]
        devices["R2"][1].interfaces["GigabitEthernet0/2"] = r2cfg.interfaces[
            "GigabitEthernet0/2"]
        r3 = ("hostname R3\nipv6 unicast-routing\ninterface Gi0/2\n ip address 10.0.23.3 "
              "255.255.255.0\n ipv6 address 2001:DB8:23::3/64\nrouter bgp 65002\n"
              " bgp router-id 3.3.3.3\n neighbor 2001:DB8:23::2 remote-as 65002\n"
              " address-family ipv6\n  neighbor 2001:DB8:23::2 activate\n"
              " exit-address-family\n")
        devices["R3"] = ("router", parse_config(r3, "R3")[0])
        return Network(devices, [(("R1", _gi(1)), ("R2", _gi(1))), (("R2", _gi(2)), ("R3", _gi(2)))])
    assert _v6_routes(net(""), "R3", "2001:db8:1::/64") == []  # next hop 2001:db8:12::1
    got = _v6_routes(net("  neighbor 2001:DB8:23::3 next-hop-self\n"), "R3", "2001:db8:1::/64")
    assert [(r.proto, r.ad, r.nexthop) for r in got] == [("B", 200, int(V6("2001:db8:23::2")))]


def test_no_bgp_default_ipv4_unicast_leaves_ipv6_only_neighbours_without_ipv4_routes():
    """Cisco IOS IP Routing: BGP Command Reference, ``bgp default ipv4-unicast``: with the
    ``no`` form a neighbor exchanges IPv4 unicast routes only when activated in ``address-family
    ipv4``; activation in ``address-family ipv6`` does not carry IPv4 prefixes."""
    v4 = " address-family ipv4\n  network 10.{n}.0.0 mask 255.255.255.0\n{act}" \
         " exit-address-family\n"
    six = " address-family ipv6\n  neighbor 10.0.12.{p} activate\n" \
          "  neighbor 2001:DB8:12::{p} activate\n exit-address-family\n"
    off = " no bgp default ipv4-unicast\n"
    only6 = _mp(v4.format(n=1, act="") + six.format(p=2), v4.format(n=2, act="") + six.format(p=1),
                off, off)
    assert _routes(only6, "R1", "10.2.0.0/24") == []
    assert {t.state for t in only6.bgp_attempts} == {"Established"}  # up for IPv6 alone
    both = _mp(v4.format(n=1, act="  neighbor 10.0.12.2 activate\n") + six.format(p=2),
               v4.format(n=2, act="  neighbor 10.0.12.1 activate\n") + six.format(p=1), off, off)
    assert [r.proto for r in _routes(both, "R1", "10.2.0.0/24")] == ["B"]


def test_address_family_ipv6_parses_and_show_run_pastes_back():
    """Cisco IOS IP Routing: BGP Command Reference, ``address-family ipv6 [unicast]`` and
    ``exit-address-family``; IOS prints an ``address-family ipv4`` block next to it."""
    text = ("hostname R1\nrouter bgp 65001\n neighbor 2001:db8:12::2 remote-as 65002\n"
            " address-family ipv6 unicast\n  neighbor 2001:db8:12::2 activate\n"
            "  neighbor 2001:db8:12::2 route-map OUT out\n  network 2001:db8:1::/64\n"
            "  redistribute connected\n exit-address-family\n")
    cfg, issues, _n = parse_config(text, "R1")
    assert issues == []
    n = cfg.bgp.neighbors[V6("2001:db8:12::2")]
    assert n.activate6 and n.activate is None and cfg.bgp.networks6
    out = render_config(cfg)
    assert " address-family ipv6\n  network 2001:DB8:1::/64\n" in out
    again, issues, _n = parse_config(out, "R1")
    assert issues == [] and render_config(again) == out
    gone = parse_config(text + "router bgp 65001\n no address-family ipv6\n", "R1")[0]
    assert not gone.bgp.networks6 and not gone.bgp.neighbors[V6("2001:db8:12::2")].activate6
    bad = parse_config("router bgp 1\n address-family ipv6\n neighbor 2001:db8::9 activate\n"
                       " network 2001:db8:1::\n address-family ipv6 multicast\n")[1]
    assert [i.reason for i in bad] == ["% Specify remote-as or peer-group commands first",
                                       "% Invalid input detected at '^' marker.",
                                       "% Invalid input detected at '^' marker."]


# --- route tags ---------------------------------------------------------------------------

def _border(r1: str = "", r2: str = "") -> Network:
    """EXT1 (AS 65010) - R1 - R2 - EXT2 (AS 65020): R1 and R2 (AS 65001, no iBGP between
    them) run OSPF on their link; R2 has a loopback in OSPF and two static routes to Null0,
    192.168.77.0/24 tagged 77 and 192.168.88.0/24; EXT1 and EXT2 announce 10.91/10.92."""
    def ext(n: int, addr: str, peer: str) -> tuple[str, str]:
        return "router", (f"hostname EXT{n}\ninterface Loopback0\n ip address 10.9{n}.0.1 "
                          f"255.255.255.0\ninterface Gi0/1\n ip address {addr} 255.255.255.252\n"
                          f"router bgp 650{n}0\n network 10.9{n}.0.0 mask 255.255.255.0\n"
                          f" neighbor {peer} remote-as 65001\n")
    devices = {
        "EXT1": ext(1, "10.0.1.2", "10.0.1.1"), "EXT2": ext(2, "10.0.2.2", "10.0.2.1"),
        "R1": ("router", "hostname R1\ninterface Gi0/0\n ip address 10.0.1.1 255.255.255.252\n"
                         "interface Gi0/1\n ip address 10.0.12.1 255.255.255.252\n"
                         "router ospf 1\n network 10.0.12.0 0.0.0.3 area 0\n"
                         "router bgp 65001\n neighbor 10.0.1.2 remote-as 65010\n" + r1),
        "R2": ("router", "hostname R2\ninterface Loopback0\n ip address 10.2.0.1 255.255.255.0\n"
                         "interface Gi0/0\n ip address 10.0.2.1 255.255.255.252\n"
                         "interface Gi0/1\n ip address 10.0.12.2 255.255.255.252\n"
                         "ip route 192.168.77.0 255.255.255.0 Null0 tag 77\n"
                         "ip route 192.168.88.0 255.255.255.0 Null0\n"
                         "router ospf 1\n network 10.0.12.0 0.0.0.3 area 0\n"
                         " network 10.2.0.0 0.0.0.255 area 0\n"
                         "router bgp 65001\n neighbor 10.0.2.2 remote-as 65020\n" + r2),
    }
    for name, (_k, text) in devices.items():
        assert parse_config(text, name)[1] == [], name
    links = [(("EXT1", _gi(1)), ("R1", _gi(0))), (("R1", _gi(1)), ("R2", _gi(1))),
             (("R2", _gi(0)), ("EXT2", _gi(1)))]
    return _net(devices, links)


def _bgp_has(net: Network, dev: str) -> set[str]:
    return {str(ipaddress.IPv4Network((n, p))) for (n, p) in net.bgp_best.get(dev, {})}


def _tag(net: Network, dev: str, prefix: str) -> list[tuple[str, int]]:
    return [(r.proto, r.tag) for r in _routes(net, dev, prefix)]


STATIC_INTO_OSPF = "router ospf 1\n redistribute static subnets{opts}\n"


def test_a_static_routes_tag_is_carried_into_ospf_and_matched_by_route_maps():
    """Cisco IOS IP Routing: Protocol-Independent Command Reference, ``ip route ... tag``
    (a tag "used as a match value for controlling redistribution via route maps"),
    ``match tag`` and ``set tag``; the external LSA carries the route tag (RFC 2328 A.4.5).
    A deny entry matching tag 77 keeps the tagged route out, a permit one takes only it."""
    net = _border(r2=STATIC_INTO_OSPF.format(opts=""))
    assert _tag(net, "R1", "192.168.77.0/24") == [("O E2", 77)]
    assert _tag(net, "R1", "192.168.88.0/24") == [("O E2", 0)]
    deny = "route-map NO77 deny 10\n match tag 77\nroute-map NO77 permit 20\n"
    net = _border(r2=STATIC_INTO_OSPF.format(opts=" route-map NO77") + deny)
    assert _routes(net, "R1", "192.168.77.0/24") == []
    assert _tag(net, "R1", "192.168.88.0/24") == [("O E2", 0)]
    only = "route-map ONLY77 permit 10\n match tag 77 78\n set tag 500\n"
    net = _border(r2=STATIC_INTO_OSPF.format(opts=" route-map ONLY77") + only)
    assert _tag(net, "R1", "192.168.77.0/24") == [("O E2", 500)]  # set tag wins
    assert _routes(net, "R1", "192.168.88.0/24") == []
    net = _border(r2=STATIC_INTO_OSPF.format(opts=" tag 9"))
    assert _tag(net, "R1", "192.168.77.0/24") == [("O E2", 9)]  # redistribute ... tag N


def test_set_tag_on_one_redistribution_and_match_tag_on_the_other_stop_the_loop():
    """Cisco, "Redistributing Routing Protocols" (IP Routing configuration guide, route
    tags to avoid redistribution loops): routes of BGP tagged on the way into OSPF at one
    border are denied by ``match tag`` on the way back into BGP at the other."""
    b2o = ("router ospf 1\n redistribute bgp 65001 subnets route-map B2O\n"
           "route-map B2O permit 10\n set tag 65001\n")
    o2b = " redistribute ospf 1 match internal external 2{rm}\n"
    guard = "route-map O2B deny 10\n match tag 65001\nroute-map O2B permit 20\n"
    leak = _border(r1=o2b.format(rm="") + b2o, r2=o2b.format(rm="") + b2o)
    assert _tag(leak, "R2", "10.91.0.0/24") == [("O E2", 65001)]
    assert "10.91.0.0/24" in _bgp_has(leak, "EXT2")  # EXT1's prefix leaks to EXT2
    held = _border(r1=o2b.format(rm=" route-map O2B") + b2o + guard,
                   r2=o2b.format(rm=" route-map O2B") + b2o + guard)
    assert "10.91.0.0/24" not in _bgp_has(held, "EXT2")
    assert "10.92.0.0/24" not in _bgp_has(held, "EXT1")
    assert "10.2.0.1/32" in _bgp_has(held, "EXT1")  # the OSPF domain's own prefix still goes


# --- redistribute ospf ... match ----------------------------------------------------------

def test_redistribute_ospf_into_bgp_takes_internal_routes_unless_match_says_otherwise():
    """Cisco Tech Note 5242, "Understanding Redistribution of OSPF Routes into BGP": by
    default only internal (intra- and inter-area) OSPF routes are redistributed into BGP;
    ``match external [1|2]`` (and ``nssa-external``) add the external ones. Cisco IOS IP
    Routing: Protocol-Independent Command Reference, ``redistribute``: ``match {internal |
    external 1 | external 2}``."""
    r2 = STATIC_INTO_OSPF.format(opts="")
    # R2's loopback is a /32 host route in OSPF (as IOS advertises a loopback).
    cases = {"": {"10.2.0.1/32", "10.0.12.0/30"},
             " match external": {"192.168.77.0/24", "192.168.88.0/24"},
             " match external 1": set(),
             " match internal external 2": {"10.2.0.1/32", "10.0.12.0/30", "192.168.77.0/24",
                                            "192.168.88.0/24"}}
    for match, want in cases.items():
        net = _border(r1=f" redistribute ospf 1{match}\n", r2=r2)
        assert _bgp_has(net, "EXT1") - {"10.91.0.0/24"} == want, match
    cfg = parse_config("router bgp 1\n redistribute ospf 1 match external 2 internal\n")[0]
    assert "redistribute ospf 1 match internal external 2" in render_config(cfg)


# --- outbound ACLs and the router's own packets -------------------------------------------

def test_outbound_acls_skip_the_routers_own_packets_but_filter_transit():
    """Cisco Catalyst/IOS Security Configuration Guide, "IP Access List Overview" (access
    lists applied to interfaces do not filter traffic the device originates; the outbound
    check is bypassed for locally generated packets, transit traffic is checked)."""
    deny = "access-list 150 deny ip any any\ninterface Gi0/1\n ip access-group 150 out\n"
    net = square(r1=deny)
    # R1's own ping over the filtered uplink (R1-R2) gets its replies.
    there, back = net.ping("R1", ip("10.0.12.2"))
    assert there.status == "delivered" and back is not None and back.status == "delivered"
    # The host's packets are transit at R1: filtered when they leave by Gi0/1.
    walk = net.flow(ip("10.1.0.10"), ip("10.0.12.2"), 1, 0)
    assert walk.status == "denied" and "out on R1" in walk.reason
    # Inbound ACLs still see every packet, the router's own replies included.
    net = square(r2="access-list 150 deny icmp any any\naccess-list 150 permit ip any any\n"
                    "interface Gi0/1\n ip access-group 150 in\n")
    assert net.ping("R1", ip("10.0.12.2"))[0].status == "denied"


def test_an_outbound_acl_denying_bgp_leaves_the_routers_own_session_up():
    """The same guide: the router's own BGP packets bypass its outbound ACLs, so a session
    survives ``deny tcp any any eq bgp`` out; applied inbound it stops the session."""
    acl = ("access-list 150 deny tcp any any eq 179\naccess-list 150 deny tcp any eq 179 any\n"
           "access-list 150 permit ip any any\n")
    out = _bgp_net(r1_extra=acl + "interface Gi0/1\n ip access-group 150 out\n")
    assert any({s.a, s.b} == {"R1", "ISP1"} for s in out.bgp_sessions)
    inbound = _bgp_net(r1_extra=acl + "interface Gi0/1\n ip access-group 150 in\n")
    assert not any({s.a, s.b} == {"R1", "ISP1"} for s in inbound.bgp_sessions)


# --- ACLs and OSPF ------------------------------------------------------------------------

def test_acl_entries_take_ospf_by_name_and_by_protocol_number():
    """Cisco IOS Security Command Reference, ``access-list`` (IP extended) and ``deny``: the
    protocol is a keyword (``ospf`` among them) or an IP protocol number 0-255; OSPF is 89."""
    assert parse_ace("deny ospf any any".split(), "extended").proto == 89
    assert parse_ace("permit 89 host 10.0.0.1 any".split(), "extended").proto == 89
    assert isinstance(parse_ace("permit 256 any any".split(), "extended"), str)
    assert isinstance(parse_ace("permit 89 any eq 80 any".split(), "extended"), str)
    cfg, issues, _n = parse_config("ip access-list extended NO-OSPF\n deny ospf any any\n"
                                   " permit ip any any\naccess-list 101 deny 89 any any\n")
    assert issues == [] and cfg.acls["NO-OSPF"].entries[0].proto == 89
    again = parse_config(render_config(cfg))[0]
    assert [e.proto for e in again.acls["101"].entries] == [89]


def test_an_inbound_acl_denying_ospf_drops_the_adjacency_an_outbound_one_does_not():
    """OSPF is IP protocol 89 (RFC 2328 A.1), hellos to 224.0.0.5: an inbound ACL that
    denies it (explicitly, or by its implicit deny) drops them and the adjacency with them;
    outbound ACLs never filter the router's own hellos (Cisco, "IP Access List Overview")."""
    acl = "ip access-list extended F\n deny ospf any any\n permit ip any any\n"

    def neighbours(r1: str) -> set[str]:
        return {a.neighbor for a in square(r1=r1).adjacencies["R1"]}
    assert neighbours("") == {"R2", "R3"}
    assert neighbours(acl + "interface Gi0/1\n ip access-group F in\n") == {"R3"}
    assert neighbours(acl + "interface Gi0/1\n ip access-group F out\n") == {"R2", "R3"}
    only_web = "access-list 120 permit tcp any any eq 80\ninterface Gi0/2\n ip access-group 120 in\n"
    assert neighbours(only_web) == {"R2"}  # the implicit deny drops OSPF too
    with_ospf = "access-list 120 permit ospf any any\n" + only_web
    assert neighbours(with_ospf) == {"R2", "R3"}


# --- probes: generated tasks scored both ways ---------------------------------------------

PROBE_SEEDS = range(3)


def _task(family: str, level: str, seed: int):
    return generate(np.random.default_rng(seed), family, level)


def _scores(family: str, fn) -> list[float]:
    return [score(t, edit(t, fn)) for level in LEVELS for seed in PROBE_SEEDS
            for t in [_task(family, level, seed)]]


def _peers(text: str) -> list[str]:
    return re.findall(r"^ neighbor (\S+) remote-as", text, flags=re.M)


def activate_in_ipv6_only(d: str, text: str) -> str:
    """``no bgp default ipv4-unicast`` with the IPv4 neighbors activated in ``address-family
    ipv6`` alone: IOS exchanges no IPv4 route with them."""
    return bgp_address_family(d, text).replace(" address-family ipv4 unicast\n",
                                               " address-family ipv6\n")


def both_families(d: str, text: str) -> str:
    """The IPv4 family written out and the neighbors activated for IPv6 too."""
    six = "".join(f"  neighbor {p} activate\n" for p in _peers(text))
    return bgp_address_family(d, text).replace(
        " exit-address-family\n", f" exit-address-family\n address-family ipv6\n{six}"
        " exit-address-family\n", 1)


def _tag_statics(text: str, rmap: str) -> str:
    text = re.sub(r"^(ip route (?!0\.0\.0\.0)\S+ \S+ \S+)$", r"\1 tag 77", text, flags=re.M)
    if " redistribute static subnets" not in text:
        return text
    return text.replace(" redistribute static subnets",
                        " redistribute static subnets route-map TAGS") + rmap


def tagged_denied(_d: str, text: str) -> str:
    """The legacy statics tagged 77 and a route-map that denies tag 77 first."""
    return _tag_statics(text, "\nroute-map TAGS deny 10\n match tag 77\nroute-map TAGS permit 20")


def tagged_permitted(_d: str, text: str) -> str:
    """The legacy statics tagged 77 and a route-map that permits exactly tag 77."""
    return _tag_statics(text, "\nroute-map TAGS permit 10\n match tag 77")


def _match(types: str):
    def rewrite(_d: str, text: str) -> str:
        return re.sub(r"^ redistribute ospf 1\b", f" redistribute ospf 1 match {types}", text,
                      flags=re.M)
    rewrite.__name__ = f"match {types}"
    return rewrite


def _uplink_acl(acl: str, name: str, direction: str):
    """``acl`` applied ``direction`` on every interface toward another router."""
    def rewrite(_d: str, text: str) -> str:
        ifs = re.findall(r"^interface (\S+)\n description to (?!H)", text, flags=re.M)
        return text + acl + "".join(f"interface {i}\n ip access-group {name} {direction}\n"
                                    for i in ifs)
    return rewrite


NO_BGP = ("\naccess-list 150 deny tcp any any eq 179\naccess-list 150 deny tcp any eq 179 any\n"
          "access-list 150 permit ip any any\n")
NO_OSPF = "\nip access-list extended NO-OSPF\n deny ospf any any\n permit ip any any\n"

PROBES = [  # (family, IOS-accepted form, the wrong form)
    ("bgp", both_families, activate_in_ipv6_only),
    ("redistribution", tagged_permitted, tagged_denied),
    ("bgp_ospf", _match("internal external 1 external 2"), _match("external 1 external 2")),
    ("bgp", _uplink_acl(NO_BGP, "150", "out"), _uplink_acl(NO_BGP, "150", "in")),
    ("ospf_areas", _uplink_acl(NO_OSPF, "NO-OSPF", "out"), _uplink_acl(NO_OSPF, "NO-OSPF", "in")),
]


@pytest.mark.parametrize("family,right,wrong", PROBES,
                         ids=[f"{p[0]}-{p[1].__name__}" for p in PROBES])
def test_probe_the_ios_form_scores_one_and_the_wrong_one_is_capped(family, right, wrong):
    """Each behaviour above on generated tasks at every level: the form IOS accepts scores
    1.0 (an IPv6 family next to IPv4, routes tagged and permitted by tag, OSPF externals
    added by ``match``, ACLs denying BGP or OSPF outbound); the wrong one (IPv4 neighbors
    activated for IPv6 alone, the tagged routes denied, internal routes left out, the same
    ACLs inbound) is capped at 0.5."""
    assert _scores(family, right) == [1.0] * len(LEVELS) * len(PROBE_SEEDS)
    wrong_scores = _scores(family, wrong)
    assert max(wrong_scores) <= 0.5, wrong_scores
