"""The IOS-lite parser on real-looking configurations, including lines outside the dialect."""

from __future__ import annotations

import copy
import ipaddress
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.envs.netconfig.parser import (
    apply_lines,
    normalize_ifname,
    parse_config,
    split_devices,
)
from textgyms.envs.netconfig.sample import CONFIGS
from textgyms.envs.netconfig.show import render_config

REAL = """\
!
version 15.2
service timestamps debug datetime msec
hostname EDGE-RTR1
!
ip domain-name example.net
!
interface Gi0/0
 description WAN uplink
 ip address 192.0.2.2 255.255.255.252
 duplex auto
 no shutdown
!
interface g0/1.30
 encapsulation dot1Q 30
 ip address 10.30.0.1 255.255.255.0
 ip access-group 110 in
!
interface Loopback0
 ip address 1.1.1.1 255.255.255.255
!
router ospf 10
 router-id 1.1.1.1
 passive-interface gi0/1.30
 network 10.30.0.0 0.0.0.255 area 0
 network 192.0.2.0 0.0.0.3 area 0
!
ip route 0.0.0.0 0.0.0.0 192.0.2.1
ip route 10.99.0.0 255.255.0.0 Null0
access-list 110 remark allow web only
access-list 110 permit tcp 10.30.0.0 0.0.0.255 any eq www
access-list 110 permit udp any host 10.30.0.53 eq domain
access-list 110 deny ip any any log
!
line vty 0 4
 transport input ssh
end
"""


def test_real_config_is_accepted_whole_as_ios_accepts_it():
    cfg, issues, accepted = parse_config(REAL, "EDGE-RTR1")
    assert issues == []
    assert accepted == 29
    # Lines that change nothing modelled are kept verbatim (and shown back by show run).
    assert "service timestamps debug datetime msec" in cfg.extra
    assert "line vty 0 4" in cfg.extra and " transport input ssh" in cfg.extra
    assert cfg.interfaces["GigabitEthernet0/0"].extra == ["duplex auto"]
    assert cfg.routes[1].iface == "Null0"
    assert cfg.hostname == "EDGE-RTR1"
    sub = cfg.interfaces["GigabitEthernet0/1.30"]
    assert sub.dot1q == 30 and sub.acl_in == "110"
    assert str(sub.ip) == "10.30.0.1/24"
    assert cfg.ospf.pid == 10 and "GigabitEthernet0/1.30" in cfg.ospf.passive
    assert [e.dport for e in cfg.acls["110"].entries] == [(80, 80), (53, 53), (0, 65535)]
    assert cfg.acls["110"].remarks == ["allow web only"]
    assert str(cfg.routes[0].nexthop) == "192.0.2.1"


@pytest.mark.parametrize(
    "raw, full",
    [
        ("gi0/1", "GigabitEthernet0/1"),
        ("G0/0.10", "GigabitEthernet0/0.10"),
        ("Fa0/3", "FastEthernet0/3"),
        ("fastethernet 0/3", "FastEthernet0/3"),
        ("Te1/0/1", "TenGigabitEthernet1/0/1"),
        ("e0", "Ethernet0"),
        ("lo0", "Loopback0"),
        ("Vlan10", "Vlan10"),
        ("se0/0/0", "Serial0/0/0"),
        ("Null0", "Null0"),
        ("gi", None),
        ("xyz0/1", None),
    ],
)
def test_interface_names_are_normalised(raw, full):
    assert normalize_ifname(raw) == full


@pytest.mark.parametrize(
    "line, reason",
    [
        ("ip address 10.0.0.0 255.255.255.0", "Bad mask"),
        ("ip address 10.0.0.255 255.255.255.0", "Bad mask"),
        ("ip address 10.0.0.1 255.0.255.0", "Invalid input"),
        ("ip access-group 101 sideways", "Invalid input"),
        ("switchport access vlan 5000", "Invalid input"),
        ("switchport trunk allowed vlan 10,x", "Invalid input"),
        ("ip address 10.0.0.1", "Incomplete command"),
    ],
)
def test_invalid_interface_lines_are_rejected(line, reason):
    issues = apply_lines(parse_config("hostname R")[0], f"interface Gi0/0\n {line}", "R")
    assert len(issues) == 1 and reason in issues[0].reason and issues[0].lineno == 2


@pytest.mark.parametrize(
    "line",
    [
        "access-list 10 permit 10.0.0.0 0.0.255.0",  # non-contiguous wildcard
        "access-list 10 permit tcp any any",  # a standard ACL has no protocol
        "access-list 101 permit tcp any any eq 70000",
        "access-list 101 permit udp any any established",
        "access-list 101 permit tcp any any neq 80",
        "access-list 101 permit gre any any",
        "access-list 300 permit any",
        "ip route 10.0.0.1 255.255.255.0 10.1.1.1",  # host bits set
        "ip nat outside source static 1.1.1.1 2.2.2.2",
        "router eigrp 100",
    ],
)
def test_lines_outside_the_dialect_are_counted(line):
    cfg, issues, accepted = parse_config(f"hostname R\n{line}")
    assert accepted == 1 and len(issues) == 1 and issues[0].lineno == 2


def test_extended_acl_ports_ranges_and_established():
    cfg, issues, _ = parse_config(
        "ip access-list extended EDGE\n"
        " 20 permit tcp any host 10.0.0.5 range 8000 8080\n"
        " 10 deny tcp 10.1.0.0 0.0.255.255 gt 1023 any lt 1024\n"
        " permit tcp any any established\n"
        " no 20\n"
    )
    assert issues == []
    acl = cfg.acls["EDGE"]
    assert [e.seq for e in acl.entries] == [10, 30]
    first = acl.entries[0]
    assert first.sport == (1024, 65535) and first.dport == (0, 1023) and not first.permit
    assert acl.entries[1].established


def test_negations_remove_what_they_name():
    cfg, _, _ = parse_config(CONFIGS["CORE1"][1], "CORE1")
    issues = apply_lines(
        cfg,
        "no ip route 0.0.0.0 0.0.0.0 203.0.113.1\nno ip nat inside source static 10.20.0.10 "
        "203.0.113.10\ninterface gi0/1\n no ip access-group SERVERS out\nno access-list 1\n"
        "router ospf 1\n no passive-interface Gi0/1",
    )
    assert issues == []
    assert cfg.routes == [] and len(cfg.nat) == 1 and "1" not in cfg.acls
    assert cfg.interfaces["GigabitEthernet0/1"].acl_out is None
    assert cfg.ospf.passive == set()


def test_switchport_trunk_allowed_add_remove():
    cfg, issues, _ = parse_config(
        "interface Gi0/1\n switchport mode trunk\n switchport trunk allowed vlan 10,20-22\n"
        " switchport trunk allowed vlan add 30\n switchport trunk allowed vlan remove 21"
    )
    assert issues == []
    assert cfg.interfaces["GigabitEthernet0/1"].trunk_allowed == {10, 20, 22, 30}


def test_split_devices_by_markers_and_hostnames():
    text = "! device R1\nhostname R1\nx\nhostname R2\ny\n! device R3\nz"
    assert split_devices(text) == [("R1", "hostname R1\nx", 2), ("R2", "hostname R2\ny", 4),
                                   ("R3", "z", 7)]
    assert [s[0] for s in split_devices("hostname A\nhostname A\n")] == ["A", "A"]
    assert split_devices("junk\nhostname B")[0][0] == ""


@pytest.mark.parametrize("device", sorted(CONFIGS))
def test_render_then_parse_is_a_fixed_point(device):
    cfg = parse_config(CONFIGS[device][1], device)[0]
    text = render_config(cfg)
    again, issues, _ = parse_config(text, device)
    assert issues == [] and render_config(again) == text


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_parser_never_raises_and_accounts_for_every_line(text):
    cfg, issues, accepted = parse_config(text)
    meaningful = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("!")]
    assert accepted + len(issues) == len(meaningful)
    assert all(1 <= i.lineno <= max(1, len(text.splitlines())) for i in issues)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 30))
def test_address_round_trip(addr, plen):
    iface = ipaddress.IPv4Interface((addr, plen))
    net = iface.network
    cfg, issues, _ = parse_config(f"interface Gi0/0\n ip address {iface.ip} {iface.netmask}")
    if iface.ip in (net.network_address, net.broadcast_address):
        assert len(issues) == 1
    else:
        assert issues == [] and cfg.interfaces["GigabitEthernet0/0"].ip == iface


def _state(obj: object) -> tuple:
    """Everything an ``ipaddress`` object holds, with the ``hosts`` of /31 and /32 networks
    (bound methods and closures, which differ by identity) compared by what they return."""
    attrs = dict(vars(obj))
    if "hosts" in attrs:
        attrs["hosts"] = list(attrs["hosts"]())
    return obj._ip if hasattr(obj, "_ip") else None, list(attrs), attrs


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 32))
def test_interface4_is_the_constructors_object(a: int, plen: int) -> None:
    from textgyms.envs.netconfig.ipobj import address4, interface4, span4

    ours, theirs = interface4(a, plen), ipaddress.IPv4Interface((a, plen))
    assert type(ours) is type(theirs) and ours == theirs and hash(ours) == hash(theirs)
    assert (str(ours), repr(ours), ours.network, ours.netmask) == (
        str(theirs), repr(theirs), theirs.network, theirs.netmask)
    assert _state(ours) == _state(theirs)
    assert _state(ours.network) == _state(theirs.network)
    assert ours.netmask is theirs.netmask and ours.network.netmask is theirs.network.netmask
    assert pickle.dumps(ours) == pickle.dumps(theirs)
    fresh = ipaddress.IPv4Interface((a, plen))  # (``theirs`` has cached properties by now)
    assert _state(copy.deepcopy(interface4(a, plen)).network) == _state(fresh.network)
    assert span4(ours) == (int(theirs.network.network_address),
                           int(theirs.network.broadcast_address))
    assert address4(a) == ipaddress.IPv4Address(a) and repr(address4(a)) == repr(
        ipaddress.IPv4Address(a))
    assert type(address4(a)) is ipaddress.IPv4Address


_OCTETISH = st.one_of(st.integers(0, 300).map(str), st.sampled_from(
    ["00", "01", "007", "", " 1", "1 ", "+1", "-1", "²", "१", "1e1", "0x1", "256", "2555"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_OCTETISH, min_size=1, max_size=5).map(".".join))
def test_quad_reads_what_ipaddress_reads(text: str) -> None:
    from textgyms.envs.netconfig.parse_if import _quad

    try:
        expected = int(ipaddress.IPv4Address(text))
    except ValueError:
        expected = None
    assert _quad(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**128 - 1), st.integers(0, 128))
def test_interface6_is_the_constructors_object(a: int, plen: int) -> None:
    from textgyms.envs.netconfig.ipobj import address6, interface6

    ours, theirs = interface6(a, plen), ipaddress.IPv6Interface((a, plen))
    assert type(ours) is type(theirs) and ours == theirs and hash(ours) == hash(theirs)
    assert (str(ours), repr(ours), ours.network, ours.scope_id) == (
        str(theirs), repr(theirs), theirs.network, theirs.scope_id)
    assert _state(ours) == _state(theirs)
    assert _state(ours.network) == _state(theirs.network)
    assert ours.network.network_address.scope_id is None
    assert ours.netmask is theirs.netmask and ours.network.netmask is theirs.network.netmask
    assert pickle.dumps(ours) == pickle.dumps(theirs)
    assert address6(a) == ipaddress.IPv6Address(a) and type(address6(a)) is ipaddress.IPv6Address


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**128 - 1), st.integers(0, 128), st.integers(0, 2**128 - 1),
       st.integers(0, 128))
def test_clash6_is_ipaddress_overlaps(a: int, plen: int, b: int, blen: int) -> None:
    from textgyms.envs.netconfig.ipobj import clash6
    from textgyms.envs.netconfig.model import Interface, V6Addr

    other = Interface("Gi0/1")
    other.ipv6 = [V6Addr(ipaddress.IPv6Interface((b, blen)))]
    net = ipaddress.IPv6Interface((a, plen)).network
    expected = other if other.ipv6[0].iface.network.overlaps(net) else None
    assert clash6([other], "Gi0/0", net) is expected
    assert clash6([other], "Gi0/1", net) is None
