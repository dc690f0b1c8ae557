"""IOS behaviours of configuration modes, BGP sessions, HSRP/VRRP elections, OSPF network
types and NSSA areas; each test names the Cisco document the behaviour comes from."""

from __future__ import annotations

from test_netconfig_ios import _bgp_net, _gateway_pair, _gi, _net, _routes, square

from textgyms.envs.netconfig.checks import failed, recovered
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.scenario import ip
from textgyms.envs.netconfig.show import render_config, show_ip_route
from textgyms.envs.netconfig.sim import Network

# --- the mode stack -----------------------------------------------------------------------


def test_bang_is_a_comment_and_exit_goes_up_one_level():
    """Cisco IOS Configuration Fundamentals Configuration Guide, "Using the Cisco IOS
    Command-Line Interface" (command modes): ``exit`` returns to the next higher mode,
    ``end`` to privileged EXEC; ``!`` starts a comment. Cisco IOS IP Routing: BGP Command
    Reference, ``address-family ipv4`` and ``exit-address-family``."""
    text = ("router bgp 65001\n !\n no bgp default ipv4-unicast\n neighbor 10.0.0.2 remote-as 2\n"
            " !\n address-family ipv4\n  !\n  network 10.1.0.0 mask 255.255.255.0\n  exit\n"
            " neighbor 10.0.0.2 description after exit: still router bgp\n"
            " address-family ipv4 unicast\n  neighbor 10.0.0.2 activate\n"
            " exit-address-family\n bgp router-id 1.1.1.1\n!\n"
            "interface Gi0/1.20\n !\n encapsulation dot1Q 20\n exit\n"
            "route-map M permit 10\n !\n set metric 50\n exit\n"
            "ip access-list standard A\n !\n permit any\n exit\nline vty 0 4\n !\n login\n exit\n"
            "router ospf 1\n !\n network 10.0.0.0 0.255.255.255 area 0\n exit\n"
            "ipv6 unicast-routing\nipv6 router ospf 1\n !\n router-id 1.1.1.1\n exit\n"
            "vlan 10\n !\n name USERS\n exit\ninterface Gi0/2\n !\n description up\nend\n")
    cfg, issues, _n = parse_config(text)
    assert issues == []
    n = cfg.bgp.neighbor(ip_("10.0.0.2"))
    assert n.activate and cfg.bgp.networks and str(cfg.bgp.router_id) == "1.1.1.1"
    assert cfg.interfaces["GigabitEthernet0/1.20"].dot1q == 20
    assert cfg.route_maps["M"][0].metric == 50 and cfg.acls["A"].entries
    assert cfg.ospf.networks and str(cfg.ospf6.router_id) == "1.1.1.1"
    assert cfg.vlans[10] == "USERS" and cfg.interfaces["GigabitEthernet0/2"].description == "up"
    # In address-family mode, exit-address-family outside it is refused as IOS does.
    bad = parse_config("router bgp 1\n exit-address-family\n")[1]
    assert [i.reason for i in bad] == ["% Invalid input detected at '^' marker."]


def ip_(text: str):
    import ipaddress

    return ipaddress.IPv4Address(text)


def test_show_run_with_an_address_family_pastes_back_to_the_same_config():
    """IOS prints the IPv4 unicast settings in an ``address-family ipv4`` block (``!``
    separated) once ``no bgp default ipv4-unicast`` is set (BGP Configuration Guide,
    "Configuring Multiprotocol BGP"): render, paste, compare."""
    text = ("hostname R1\nrouter bgp 65001\n no bgp default ipv4-unicast\n"
            " neighbor PG peer-group\n"
            " neighbor PG remote-as 65002\n neighbor PG password s3cret\n"
            " neighbor 10.0.0.2 peer-group PG\n address-family ipv4\n neighbor PG activate\n"
            " neighbor 10.0.0.2 activate\n network 10.1.0.0 mask 255.255.255.0\n"
            " neighbor PG route-map OUT out\n exit-address-family\n")
    cfg, issues, _n = parse_config(text)
    assert issues == []
    out = render_config(cfg)
    assert " !\n address-family ipv4\n" in out and " exit-address-family\n" in out
    again, issues, _n = parse_config(out)
    assert issues == [] and render_config(again) == out


# --- BGP ----------------------------------------------------------------------------------


def _edge(r1: str = "", isp1: str = "") -> Network:
    return _bgp_net(r1_extra=r1, isp1_extra=isp1)


def _up(net: Network, a: str, b: str) -> bool:
    return any({s.a, s.b} == {a, b} for s in net.bgp_sessions)


def test_peer_groups_give_members_their_settings():
    """BGP Configuration Guide, "Configuring BGP Peer Groups": ``neighbor PG peer-group``,
    settings on the group, ``neighbor A peer-group PG``; a member inherits the group's
    remote-as and policy."""
    r1 = ("router bgp 65001\n neighbor ISP peer-group\n neighbor ISP remote-as 65010\n"
          " neighbor ISP route-map LP in\n no neighbor 10.0.1.2 remote-as 65010\n"
          " neighbor 10.0.1.2 peer-group ISP\n"
          "route-map LP permit 10\n set local-preference 300\n")
    net = _edge(r1)
    assert _up(net, "R1", "ISP1")
    assert net.bgp_best["R1"][(ip("10.3.0.0"), 24)].local_pref == 300
    bad = parse_config("router bgp 1\n neighbor 10.0.0.1 peer-group NOPE\n")[1]
    assert bad[0].reason == "% Create the peer-group NOPE first"


def test_password_on_one_side_or_different_prevents_the_session():
    """BGP Command Reference, ``neighbor password``: TCP MD5 authentication; "if the case
    is not the same, or the password is missing on one side, the session does not come up"
    (%TCP-6-BADAUTH)."""
    assert not _up(_edge("router bgp 65001\n neighbor 10.0.1.2 password K1\n"), "R1", "ISP1")
    both = _edge("router bgp 65001\n neighbor 10.0.1.2 password K1\n",
                 "router bgp 65010\n neighbor 10.0.1.1 password K1\n")
    assert _up(both, "R1", "ISP1")
    assert not _up(_edge("router bgp 65001\n neighbor 10.0.1.2 password K1\n",
                         "router bgp 65010\n neighbor 10.0.1.1 password k1\n"), "R1", "ISP1")


def test_neighbor_shutdown_is_admin_down():
    """BGP Command Reference, ``neighbor shutdown``: the session is disabled ("Idle
    (Admin)") and its routes withdrawn."""
    net = _edge("router bgp 65001\n neighbor 10.0.1.2 shutdown\n")
    assert not _up(net, "R1", "ISP1")
    assert any(t.state == "Idle (Admin)" for t in net.bgp_attempts if t.dev == "R1")


def _loopback_pair(r1: str, r2: str, ibgp: bool = False, igp: bool = True) -> Network:
    """R1 and R2 on one link, each with Loopback0 (1.1.1.1, 2.2.2.2) and static routes to
    the other's loopback; BGP between the loopbacks."""
    asn2 = 65001 if ibgp else 65002

    def router(name: str, me: str, peer: str, lo: str, peer_lo: str, asn: int, peer_as: int,
               extra: str) -> tuple[str, str]:
        route = f"ip route {peer_lo} 255.255.255.255 {peer}\n" if igp else ""
        return "router", (f"hostname {name}\ninterface Loopback0\n ip address {lo} "
                          f"255.255.255.255\ninterface Gi0/1\n ip address {me} 255.255.255.252\n"
                          f"{route}router bgp {asn}\n neighbor {peer_lo} remote-as {peer_as}\n"
                          f"{extra}")
    devices = {"R1": router("R1", "10.0.0.1", "10.0.0.2", "1.1.1.1", "2.2.2.2", 65001, asn2, r1),
               "R2": router("R2", "10.0.0.2", "10.0.0.1", "2.2.2.2", "1.1.1.1", asn2, 65001, r2)}
    return _net(devices, [(("R1", _gi(1)), ("R2", _gi(1)))])


def test_ebgp_between_loopbacks_needs_update_source_and_multihop():
    """BGP Configuration Guide, "Configuring eBGP multihop" and ``neighbor update-source``:
    an eBGP peer must be directly connected unless ``ebgp-multihop`` (TTL, 255 without a
    value) or ``disable-connected-check``; the session comes from the update-source
    address, which the peer must name; without it the source is the egress interface."""
    src = " neighbor {} update-source Loopback0\n"
    hop = " neighbor {} ebgp-multihop 2\n"
    assert not _up(_loopback_pair("", ""), "R1", "R2")
    assert not _up(_loopback_pair(src.format("2.2.2.2"), src.format("1.1.1.1")), "R1", "R2")
    def full(peer: str) -> str:
        return src.format(peer) + hop.format(peer)

    assert _up(_loopback_pair(full("2.2.2.2"), full("1.1.1.1")), "R1", "R2")
    assert not _up(_loopback_pair(full("2.2.2.2"), hop.format("1.1.1.1")), "R1", "R2")
    # ebgp-multihop 1 keeps TTL 1 and the connected check (a TTL of 2 or more lifts it).
    one = " neighbor {0} update-source Loopback0\n neighbor {0} ebgp-multihop 1\n".format
    assert not _up(_loopback_pair(one("2.2.2.2"), one("1.1.1.1")), "R1", "R2")
    def check(peer: str) -> str:
        return src.format(peer) + f" neighbor {peer} disable-connected-check\n"

    assert _up(_loopback_pair(check("2.2.2.2"), check("1.1.1.1")), "R1", "R2")
    # No route to the peer's loopback: nothing to source from, no session.
    assert not _up(_loopback_pair(full("2.2.2.2"), full("1.1.1.1"), igp=False), "R1", "R2")
    # iBGP needs no multihop: TTL 255 (BGP Configuration Guide, iBGP with loopbacks).
    assert _up(_loopback_pair(src.format("2.2.2.2"), src.format("1.1.1.1"), ibgp=True),
               "R1", "R2")


def test_bgp_neighbor_forms_and_ranges():
    """BGP Command Reference: ``ebgp-multihop [1-255]``, ``password`` up to 25
    characters, abbreviated keywords."""
    ok = ("router bgp 1\n neighbor 10.0.0.2 remote-as 2\n neighbor 10.0.0.2 ebgp-multihop\n"
          " neighbor 10.0.0.2 ebgp 255\n neighbor 10.0.0.2 update-so lo0\n"
          " neighbor 10.0.0.2 next-hop-self all\n neighbor 10.0.0.2 timers 10 30\n")
    assert parse_config(ok)[1] == []
    for bad in (" neighbor 10.0.0.2 ebgp-multihop 256\n", " neighbor 10.0.0.2 password "
                + "x" * 26 + "\n"):
        assert parse_config("router bgp 1\n neighbor 10.0.0.2 remote-as 2\n" + bad)[1]


def test_ospf_redistributed_into_bgp_and_bgp_into_ospf():
    """BGP Configuration Guide, "redistribute (IP)": OSPF routes into BGP (internal ones by
    default), and BGP into OSPF with a seed metric of 1 (OSPF Command Reference,
    ``redistribute``)."""
    text = ("router bgp 1\n redistribute ospf 1 match internal route-map O2B\n"
            "router ospf 1\n redistribute bgp 1 subnets metric 30 tag 7\n"
            "route-map O2B permit 10\n set metric 5\n")
    cfg, issues, _n = parse_config(text)
    assert issues == [] and cfg.bgp.redistribute == {"ospf 1": "O2B"}
    assert cfg.ospf.redistribute["bgp"] == (True, 30, 2) and cfg.ospf.redistribute_tags
    out = render_config(cfg)
    assert render_config(parse_config(out)[0]) == out and "redistribute bgp 1" in out


def test_redistribute_static_subnets_tag_and_route_map_set_metric():
    """OSPF Command Reference, ``redistribute``: ``subnets``, ``tag``, ``route-map``; the
    route-map's ``set metric`` and ``set metric-type`` decide the external's metric and
    type (IP Routing: Protocol-Independent, "route-map" and "set metric")."""
    r1 = ("ip route 10.50.0.0 255.255.255.0 Null0\nrouter ospf 1\n"
          " redistribute static subnets tag 250 route-map SM\n"
          "route-map SM permit 10\n set metric 77\n set metric-type type-1\n")
    net = square(r1=r1)
    routes = _routes(net, "R4", "10.50.0.0/24")
    assert routes and routes[0].proto == "O E1" and routes[0].metric == 77 + 2


# --- HSRP and VRRP ------------------------------------------------------------------------


def _actives(net: Network) -> list[str]:
    return [d for d, _i in net.fhrp_actives.get((net.domain[("PC", "Ethernet0")],
                                                 ip("10.1.0.1")), [])]


def test_hsrp_priority_range_and_group_numbered_forms():
    """First Hop Redundancy Protocols Command Reference: ``standby [group] priority``
    0-255, ``standby [group] timers [msec] hello [msec] hold``, ``standby [group]
    authentication md5 key-string``, ``standby version {1 | 2}`` (groups 0-4095 in v2)."""
    lines = (" standby version 2\n standby 4000 ip 10.1.0.1\n standby 4000 priority 255\n"
             " standby 4000 timers 1 3\n standby 4000 timers msec 200 msec 750\n"
             " standby 4000 authentication md5 key-string K3y\n standby 4000 preempt delay "
             "minimum 30\n")
    cfg, issues, _n = parse_config("interface Gi0/0\n" + lines)
    assert issues == []
    g = cfg.interfaces["GigabitEthernet0/0"].fhrp[("hsrp", 4000)]
    assert (g.priority, g.timers, g.auth, g.preempt) == (255, (200, 750), ("md5", "K3y"), True)
    out = render_config(cfg)
    assert render_config(parse_config(out)[0]) == out
    for bad in (" standby 1 priority 256\n", " standby 300 ip 10.1.0.1\n",
                " standby 1 timers 3 1\n", " vrrp 1 priority 255\n", " vrrp 0 ip 10.1.0.1\n"):
        assert parse_config("interface Gi0/0\n" + bad)[1], bad


def test_hsrp_version_or_authentication_mismatch_makes_both_active():
    """FHRP Configuration Guide, "HSRP Version 2" (v1 and v2 packets and virtual MACs
    differ, so the versions do not interoperate) and "HSRP MD5 Authentication" (a router
    ignores hellos that fail authentication; the default is the text ``cisco``)."""
    base = " standby 1 ip 10.1.0.1\n standby 1 priority 110\n"
    peer = " standby 1 ip 10.1.0.1\n"
    assert _actives(_gateway_pair(base, peer)) == ["R1"]
    assert sorted(_actives(_gateway_pair(" standby version 2\n" + base, peer))) == ["R1", "R2"]
    auth = " standby 1 authentication md5 key-string K\n"
    assert sorted(_actives(_gateway_pair(base + auth, peer))) == ["R1", "R2"]
    assert _actives(_gateway_pair(base + auth, peer + auth)) == ["R1"]
    # The default text string is "cisco": configuring it on one side changes nothing.
    assert _actives(_gateway_pair(base + " standby 1 authentication cisco\n", peer)) == ["R1"]
    # Different group numbers: two groups, each with one router, both active.
    assert sorted(_actives(_gateway_pair(base, peer.replace("standby 1", "standby 2")))) == [
        "R1", "R2"]


def test_vrrp_advertisement_interval_and_authentication_must_match():
    """RFC 3768 7.1 (advertisements with another interval are discarded) and the FHRP
    Configuration Guide, "VRRP MD5 authentication"."""
    base = " vrrp 5 ip 10.1.0.1\n vrrp 5 priority 120\n"
    assert _actives(_gateway_pair(base, " vrrp 5 ip 10.1.0.1\n")) == ["R1"]
    slow = " vrrp 5 ip 10.1.0.1\n vrrp 5 timers advertise 3\n"
    assert sorted(_actives(_gateway_pair(base, slow))) == ["R1", "R2"]
    auth = " vrrp 5 authentication md5 key-string K\n"
    assert sorted(_actives(_gateway_pair(base + auth, " vrrp 5 ip 10.1.0.1\n"))) == ["R1", "R2"]


def test_primary_takes_the_role_back_after_recovering_only_with_preempt():
    """FHRP Configuration Guide, "HSRP preemption": without ``standby preempt`` a router
    with a higher priority does not take over from the active router."""
    net = _gateway_pair(" standby 1 ip 10.1.0.1\n standby 1 priority 110\n",
                        " standby 1 ip 10.1.0.1\n")
    assert _actives(failed(net, "R1", _gi(0))) == ["R2"]
    assert _actives(recovered(net, "R1", _gi(0))) == ["R2"]  # R2 keeps it
    net = _gateway_pair(" standby 1 ip 10.1.0.1\n standby 1 priority 110\n standby 1 preempt\n",
                        " standby 1 ip 10.1.0.1\n")
    assert _actives(recovered(net, "R1", _gi(0))) == ["R1"]


def test_a_recovered_network_is_the_full_recompile_whether_or_not_the_election_moves():
    """``with_incumbent`` hands out a view of the network when the incumbent changes no
    election (preempt: R1 takes its role back) and recompiles otherwise; both equal a
    network compiled from scratch with that incumbent."""
    for r1 in (" standby 1 ip 10.1.0.1\n standby 1 priority 110\n standby 1 preempt\n",
               " standby 1 ip 10.1.0.1\n standby 1 priority 110\n"):
        net = _gateway_pair(r1, " standby 1 ip 10.1.0.1\n")
        incumbent = failed(net, "R1", _gi(0)).fhrp_state
        got, want = net.with_incumbent(incumbent), Network(net.devices, net.links, incumbent)
        assert (got.fhrp_state, got.fhrp_actives, got.fhrp, got.arp, got.own, got.rib) == (
            want.fhrp_state, want.fhrp_actives, want.fhrp, want.arp, want.own, want.rib)
        assert (got.fib is net.fib) == ("preempt" in r1)
        assert got.nat_pool_use is not net.nat_pool_use


# --- OSPF network types and NSSA ----------------------------------------------------------


def test_point_to_point_against_broadcast_installs_no_route_across_the_link():
    """OSPF Configuration Guide, ``ip ospf network``: both ends of a link must agree on
    the network type; point-to-point against broadcast goes FULL but the router and
    network LSAs disagree, so SPF uses no path across it. Point-to-multipoint has 30 s
    hellos (no adjacency with a 10 s end)."""
    p2p = "interface Gi0/1\n ip ospf network point-to-point\n"
    net = square(r1=p2p)
    assert any(a.neighbor == "R2" and not a.usable for a in net.adjacencies["R1"])
    assert all(r.iface != _gi(1) for r in _routes(net, "R1", "10.4.0.0/24"))
    both = square(r1=p2p, r2="interface Gi0/1\n ip ospf network point-to-point\n")
    assert any(r.iface == _gi(1) for r in _routes(both, "R1", "10.4.0.0/24"))
    p2mp = square(r1="interface Gi0/1\n ip ospf network point-to-multipoint\n")
    assert not any(a.neighbor == "R2" for a in p2mp.adjacencies["R1"])


def test_nssa_carries_type7_translated_at_the_abr_and_no_type5():
    """OSPF Configuration Guide, "OSPF Not-So-Stubby Areas (NSSA)" (RFC 3101): an ASBR in
    an NSSA originates type-7 LSAs (N1/N2 inside the area), the ABR translates them into
    type 5 for the rest of the domain, type-5 LSAs are not flooded into the NSSA, and the
    ABR sends a default only with ``default-information-originate`` (type 7) or
    ``no-summary`` (type 3)."""
    nssa = " area 2 nssa\n"
    r4 = "ip route 10.60.0.0 255.255.255.0 Null0\nrouter ospf 1\n redistribute static subnets\n"
    r1 = "ip route 10.70.0.0 255.255.255.0 Null0\nrouter ospf 1\n redistribute static subnets\n"
    net = square(r1="router ospf 1\n" + nssa + r1[r1.index("ip"):], r2="router ospf 1\n" + nssa,
                 r4="router ospf 1\n" + nssa + r4, area2=2)
    assert {r.proto for r in _routes(net, "R2", "10.60.0.0/24")} == {"O N2"}
    assert {r.proto for r in _routes(net, "R1", "10.60.0.0/24")} == {"O E2"}  # translated
    assert not _routes(net, "R4", "10.70.0.0/24") or all(
        r.iface != _gi(1) for r in _routes(net, "R4", "10.70.0.0/24"))  # no type 5 via R2
    assert "N2" in show_ip_route(net, "R2")
    # Stub on one end, NSSA on the other: the hello flags differ, no adjacency.
    mixed = square(r2="router ospf 1\n area 2 stub\n", r4="router ospf 1\n area 2 nssa\n",
                   area2=2)
    assert not any(a.neighbor == "R4" for a in mixed.adjacencies["R2"])
    assert parse_config("router ospf 1\n area 0 nssa\n")[1][0].reason.startswith("% OSPF")
    text = "router ospf 1\n area 2 nssa no-summary default-information-originate\n"
    cfg = parse_config(text)[0]
    assert cfg.ospf.nssa == {2: (True, True, False)}
    out = render_config(cfg)
    assert render_config(parse_config(out)[0]) == out
