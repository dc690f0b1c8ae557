"""OSPF authentication and DR election decide adjacencies as on IOS: the type and a key must
match on both ends, and a broadcast segment whose routers all have priority 0 elects no DR,
so none of them reaches FULL."""

from __future__ import annotations

import pytest
from test_netconfig_ios import square

from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.show import render_config

R1_R2 = "interface Gi0/1\n"  # the R1 - R2 link in ``square``


def _adjacent(net, a: str = "R1", b: str = "R2") -> bool:
    return any(x.neighbor == b for x in net.adjacencies[a])


@pytest.mark.parametrize("r1, r2, up", [
    (" ip ospf authentication message-digest\n", "", False),  # one side only
    (" ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K1\n",
     " ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K1\n", True),
    (" ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K1\n",
     " ip ospf authentication message-digest\n ip ospf message-digest-key 2 md5 K1\n", False),
    (" ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K1\n",
     " ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K2\n", False),
    # A rollover: R1 has the old and the new key, R2 still only the old one.
    (" ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 OLD\n"
     " ip ospf message-digest-key 2 md5 NEW\n",
     " ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 OLD\n", True),
    (" ip ospf authentication message-digest\n", " ip ospf authentication message-digest\n",
     True),  # no key on either end: key ID 0 on both
    (" ip ospf authentication\n ip ospf authentication-key SECRET\n",
     " ip ospf authentication\n ip ospf authentication-key SECRET\n", True),
    (" ip ospf authentication\n ip ospf authentication-key SECRET\n",
     " ip ospf authentication\n ip ospf authentication-key OTHER\n", False),
    (" ip ospf authentication\n ip ospf authentication-key K\n",
     " ip ospf authentication message-digest\n ip ospf message-digest-key 1 md5 K\n", False),
    (" ip ospf authentication-key SECRET\n", "", True),  # a key with no type: no authentication
    (" ip ospf authentication null\n", "", True),
])
def test_authentication_type_and_key_must_match(r1, r2, up):
    net = square(r1=R1_R2 + r1, r2=R1_R2 + r2)
    assert _adjacent(net) is up
    assert _adjacent(net, "R1", "R3")  # the other links are untouched


def test_area_authentication_applies_to_every_interface_of_the_area_unless_overridden():
    area = "router ospf 1\n area 0 authentication message-digest\n"
    keys = "interface Gi0/1\n ip ospf message-digest-key 1 md5 K\n"
    net = square(r1=area + keys, r2=area + keys)
    assert _adjacent(net) and not _adjacent(net, "R1", "R3")  # R3 runs no authentication
    # The interface setting wins over the area's: null on both ends of R1 - R3.
    null = "interface Gi0/2\n ip ospf authentication null\n"
    net = square(r1=area + keys + null, r2=area + keys, r3="interface Gi0/1\n"
                 " ip ospf authentication null\n")
    assert _adjacent(net) and _adjacent(net, "R1", "R3")


def test_priority_zero_on_every_router_of_a_segment_means_no_dr_and_no_adjacency():
    zero = R1_R2 + " ip ospf priority 0\n"
    assert not _adjacent(square(r1=zero, r2=zero))
    assert _adjacent(square(r1=zero))  # R2 (priority 1) becomes DR
    p2p = zero + " ip ospf network point-to-point\n"
    assert _adjacent(square(r1=p2p, r2=p2p))  # no DR on a point-to-point network
    # No adjacency on R1 - R2: R4's LAN is only reached through R3.
    net = square(r1=zero, r2=zero)
    rib = map(RouteFields._make, net.rib["R1"])
    assert {r.fwd for r in rib if r.proto == "O" and r.plen == 24} == {
        int.from_bytes(bytes([10, 0, 13, 2]), "big")}


def test_the_options_round_trip_and_abbreviations_follow_ios():
    text = ("hostname R1\ninterface Gi0/1\n ip address 10.0.0.1 255.255.255.0\n"
            " ip ospf authentication message-d\n ip ospf message-digest-key 3 md5 0 Key 1\n"
            " ip ospf authentication-key 7 0822455D0A16\n ip ospf priority 0\n"
            " ip ospf network point-to-m\nrouter ospf 1\n area 0.0.0.1 authentication\n")
    cfg, issues, _n = parse_config(text, "R1")
    assert issues == []
    itf = cfg.interfaces["GigabitEthernet0/1"]
    assert (itf.ospf_auth, itf.ospf_md5, itf.ospf_key) == ("md5", {3: "Key 1"}, "7 0822455D0A16")
    assert (itf.ospf_priority, itf.ospf_network) == (0, "point-to-multipoint")
    assert cfg.ospf.area_auth == {1: "simple"}
    assert parse_config("interface Gi0/1\n ip ospf authentication-key 123456789\n")[0] \
        .interfaces["GigabitEthernet0/1"].ospf_key == "12345678"  # IOS keeps 8 characters
    out = render_config(cfg)
    again, issues, _n = parse_config(out, "R1")
    assert issues == [] and render_config(again) == out
    bad = parse_config("interface Gi0/1\n ip ospf auth\n ip ospf priority 256\n"
                       " ip ospf network hub\n ip ospf message-digest-key 1 sha K\n")[1]
    assert [i.reason[:12] for i in bad] == ["% Ambiguous ", "% Invalid in", "% Invalid in",
                                            "% Invalid in"]
    undone = parse_config("interface Gi0/1\n ip ospf authentication\n ip ospf priority 0\n"
                          " no ip ospf authentication\n no ip ospf priority\n")[0]
    itf = undone.interfaces["GigabitEthernet0/1"]
    assert itf.ospf_auth is None and itf.ospf_priority is None
