"""Common valid IOS syntax the dialect accepts and models: the BGP IPv4 address family and
``activate``, neighbor prefix-lists, harmless neighbor options, HSRP learning the virtual IP,
``standby track IF decrement N`` and route-maps on ``redistribute``."""

from __future__ import annotations

import numpy as np
from test_netconfig_ios import _active, _bgp_net, _gateway_pair, _gi, _via, square

from textgyms.envs.netconfig.checks import failed
from textgyms.envs.netconfig.generate import generate
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.prompt import render_prompt
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.show import render_config

SYNTAX = """hostname R1
interface Gi0/0
 ip address 10.1.0.2 255.255.255.0
 standby 5 ip
 standby 5 track Gi0/1 decrement 30
route-map LEGACY permit 10
 match ip address 7
router ospf 1
 redistribute static subnets route-map LEGACY
router bgp 65001
 no bgp default ipv4-unicast
 neighbor 10.0.1.2 remote-as 65010
 address-family ipv4 unicast
  neighbor 10.0.1.2 activate
  neighbor 10.0.1.2 soft-reconfiguration inbound
  neighbor 10.0.1.2 send-community both
  neighbor 10.0.1.2 prefix-list IN in
  network 10.1.0.0 mask 255.255.255.0
 exit-address-family
ip prefix-list IN seq 5 permit 10.3.0.0/16 le 24
access-list 7 permit 10.250.0.0 0.0.255.255
"""


def test_the_syntax_parses_models_and_round_trips():
    cfg, issues, _n = parse_config(SYNTAX, "R1")
    assert issues == []
    n = cfg.bgp.neighbors[next(iter(cfg.bgp.neighbors))]
    assert (cfg.bgp.default_ipv4, n.activate, n.prefix_list_in) == (False, True, "IN")
    g = cfg.interfaces["GigabitEthernet0/0"].fhrp[("hsrp", 5)]
    assert g.learn and g.vip is None and g.track == {"GigabitEthernet0/1": 30}
    assert cfg.ospf.redistribute_maps == {"static": "LEGACY"}
    assert cfg.route_maps["LEGACY"][0].acl == "7"
    text = render_config(cfg)
    again, issues, _n = parse_config(text, "R1")
    assert issues == [] and render_config(again) == text
    bad = parse_config("router bgp 1\n address-family ipv6\n neighbor 10.0.0.1 remote-as 2\n"
                       " neighbor 10.0.0.1 send-community bogus\n")[1]
    # address-family ipv6 is taken (round 4); a neighbor option IOS refuses is still refused.
    assert [i.line.strip() for i in bad] == ["neighbor 10.0.0.1 send-community bogus"]


def test_bgp_neighbors_need_activate_without_the_default_family():
    assert "ISP1" in _via(_bgp_net(), "H1", "10.3.0.10") or "ISP2" in _via(_bgp_net(), "H1",
                                                                              "10.3.0.10")
    off = _bgp_net(" no bgp default ipv4-unicast\n")
    assert not any("R1" in (s.a, s.b) for s in off.bgp_sessions)
    on = _bgp_net(" no bgp default ipv4-unicast\n address-family ipv4\n"
                  "  neighbor 10.0.1.2 activate\n exit-address-family\n")
    peers = {s.b for s in on.bgp_sessions if s.a == "R1"}
    assert peers == {"ISP1"}  # ISP2 was not activated


def test_a_neighbor_prefix_list_filters_and_an_undefined_one_permits():
    # ISP2 has the lower router ID, so R1 prefers it on equal paths; deny R3's LAN from it.
    deny = " neighbor 10.0.2.2 prefix-list NO-R3 in\nip prefix-list NO-R3 deny 10.3.0.0/24\n" \
           "ip prefix-list NO-R3 permit 0.0.0.0/0 le 32\n"
    assert "ISP2" in _via(_bgp_net(), "H1", "10.3.0.10")
    assert "ISP1" in _via(_bgp_net(deny), "H1", "10.3.0.10")
    undefined = " neighbor 10.0.2.2 prefix-list MISSING in\n"
    assert "ISP2" in _via(_bgp_net(undefined), "H1", "10.3.0.10")


def test_hsrp_standby_ip_without_an_address_learns_the_vip():
    track = (" standby 1 ip 10.1.0.1\n standby 1 track Gi0/1 decrement 20\n"
             " standby 1 priority 110\n standby 1 preempt\n")
    net = _gateway_pair(track, " standby 1 ip\n standby 1 preempt\n")
    assert _active(net) == "R1"
    assert _active(failed(net, "R1", _gi(0))) == "R2"
    assert _active(failed(net, "R1", _gi(1))) == "R2"  # 110 - 20 < 100, and R2 preempts
    alone = _gateway_pair(" standby 2 ip\n", " standby 2 ip\n")  # nobody knows the VIP
    assert _active(alone) is None


def test_redistribute_through_a_route_map():
    statics = "ip route 172.20.5.0 255.255.255.0 Null0\nip route 192.0.2.0 255.255.255.0 Null0\n"

    def externals(extra: str) -> set[str]:
        net = square(r4=statics + "router ospf 1\n redistribute static subnets route-map M\n"
                     + extra)
        return {f"{r.net >> 24}" for r in map(RouteFields._make, net.rib["R1"])
                if r.proto.startswith("O E")}
    only = "route-map M permit 10\n match ip address prefix-list P\n" \
           "ip prefix-list P permit 172.20.0.0/16 le 24\n"
    assert externals(only) == {"172"}
    assert externals("route-map M permit 10\n") == {"172", "192"}
    assert externals("route-map M deny 10\n match ip address 9\naccess-list 9 permit "
                     "172.20.5.0\nroute-map M permit 20\n") == {"192"}
    assert externals("") == set()  # an undefined route-map redistributes nothing


def test_the_prompt_dialect_names_the_accepted_syntax():
    """The dialect summary the agent reads lists what the parser accepts here, OSPF
    authentication and priority included, so a model is not steered away from valid IOS."""
    dialect = render_prompt(generate(np.random.default_rng(0), "routing", "easy"))
    dialect = " ".join(dialect.split("Dialect:")[1].split("Tools")[0].split())
    for words in ("address-family ipv4", "activate", "prefix-list", "[subnets] [metric N] "
                  "[metric-type N] [tag N] [route-map]", "standby G ip [A]",
                  "track IF [decrement] N", "authentication [message-digest]",
                  "message-digest-key", "priority", "peer-group", "password", "update-source",
                  "ebgp-multihop", "nssa", "standby version 1|2", "priority 0-255",
                  "timers advertise N", "set local-preference|as-path prepend|metric"):
        assert words in dialect, words
    ospf = ("hostname R1\ninterface Gi0/1\n ip address 10.0.0.1 255.255.255.252\n"
            " ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K\n"
            " ip ospf priority 0\nrouter ospf 1\n area 0 authentication\n"
            " network 10.0.0.0 0.0.0.3 area 0\n")
    assert parse_config(ospf, "R1")[1] == [] and parse_config(SYNTAX, "R1")[1] == []
