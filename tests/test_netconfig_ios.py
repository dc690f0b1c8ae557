"""IOS behaviours of the simulator and parser: ECMP, OSPF areas and ABRs, router IDs,
redistribution, statics (exit interface, floating), NAT pools/overload/port forwarding,
undefined ACLs, abbreviations, IOS error messages and configuration round trips."""

from __future__ import annotations

import ipaddress

import pytest

from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.sample import sample_network
from textgyms.envs.netconfig.scenario import ip
from textgyms.envs.netconfig.show import render_config, show_ip_route
from textgyms.envs.netconfig.sim import Network

A = ipaddress.IPv4Address


def _host(name: str, addr: str, gw: str) -> tuple[str, str]:
    return ("host", f"hostname {name}\ninterface Ethernet0\n ip address {addr} 255.255.255.0\n"
                    f"ip default-gateway {gw}")


def _net(configs: dict[str, tuple[str, str]], links) -> Network:
    return Network({d: (k, parse_config(t, d)[0]) for d, (k, t) in configs.items()}, links)


def _gi(n: int) -> str:
    return f"GigabitEthernet0/{n}"


def square(r1: str = "", r2: str = "", r3: str = "", r4: str = "", area2: int = 0,
           area3: int = 0) -> Network:
    """R1 - R2 - R4 and R1 - R3 - R4 (two equal-cost paths), a host on R1 and on R4.
    R2's links are in ``area2`` except R1-R2 (area 0); same for R3 with ``area3``."""
    cfg = {
        "R1": f"interface Gi0/0\n ip address 10.1.0.1 255.255.255.0\n"
              f"interface Gi0/1\n ip address 10.0.12.1 255.255.255.252\n"
              f"interface Gi0/2\n ip address 10.0.13.1 255.255.255.252\n"
              f"router ospf 1\n network 10.0.0.0 0.255.255.255 area 0\n{r1}",
        "R2": f"interface Gi0/1\n ip address 10.0.12.2 255.255.255.252\n"
              f"interface Gi0/2\n ip address 10.0.24.1 255.255.255.252\n"
              f"router ospf 1\n network 10.0.12.0 0.0.0.3 area 0\n"
              f" network 10.0.24.0 0.0.0.3 area {area2}\n{r2}",
        "R3": f"interface Gi0/1\n ip address 10.0.13.2 255.255.255.252\n"
              f"interface Gi0/2\n ip address 10.0.34.1 255.255.255.252\n"
              f"router ospf 1\n network 10.0.13.0 0.0.0.3 area 0\n"
              f" network 10.0.34.0 0.0.0.3 area {area3}\n{r3}",
        "R4": f"interface Gi0/0\n ip address 10.4.0.1 255.255.255.0\n"
              f"interface Gi0/1\n ip address 10.0.24.2 255.255.255.252\n"
              f"interface Gi0/2\n ip address 10.0.34.2 255.255.255.252\n"
              f"router ospf 1\n network 10.4.0.0 0.0.0.255 area {area2}\n"
              f" network 10.0.24.0 0.0.0.3 area {area2}\n network 10.0.34.0 0.0.0.3 area {area3}\n"
              f"{r4}",
    }
    devices = {r: ("router", f"hostname {r}\n{t}") for r, t in cfg.items()}
    devices["H1"] = _host("H1", "10.1.0.10", "10.1.0.1")
    devices["H4"] = _host("H4", "10.4.0.10", "10.4.0.1")
    links = [(("R1", _gi(1)), ("R2", _gi(1))), (("R1", _gi(2)), ("R3", _gi(1))),
             (("R2", _gi(2)), ("R4", _gi(1))), (("R3", _gi(2)), ("R4", _gi(2))),
             (("R1", _gi(0)), ("H1", "Ethernet0")), (("R4", _gi(0)), ("H4", "Ethernet0"))]
    return _net(devices, links)


def _routes(net: Network, dev: str, prefix: str):
    p = ipaddress.IPv4Network(prefix)
    want = (int(p.network_address), p.prefixlen)
    return [RouteFields(*r) for r in net.rib[dev] if r[:2] == want]


# --- OSPF ----------------------------------------------------------------------------------

def test_ecmp_installs_both_paths_and_the_walk_explores_both():
    net = square()
    routes = _routes(net, "R1", "10.4.0.0/24")
    assert len(routes) == 2 and {r.proto for r in routes} == {"O"}
    assert {r.metric for r in routes} == {3}
    paths = {tuple(h[0] for h in w.hops) for _c, w in
             net.walks((ip("10.1.0.10"), ip("10.4.0.10"), 1, 0, 0, False), "H1")}
    assert paths == {("H1", "R1", "R2", "R4", "H4"), ("H1", "R1", "R3", "R4", "H4")}
    text = show_ip_route(net, "R1")
    assert text.count("[110/3] via") == 2  # both next hops listed under the prefix


def test_cost_breaks_the_tie_and_reference_bandwidth_changes_costs():
    net = square(r1="interface Gi0/1\n ip ospf cost 50\n")
    (route,) = _routes(net, "R1", "10.4.0.0/24")
    assert route.nexthop == ip("10.0.13.2")
    # auto-cost reference-bandwidth 10000: a GigabitEthernet costs 10.
    net = square(*(["router ospf 1\n auto-cost reference-bandwidth 10000\n"] * 4))
    assert {r.metric for r in _routes(net, "R1", "10.4.0.0/24")} == {30}


def test_inter_area_routes_through_abrs_and_an_island_area():
    net = square(area2=1, area3=1)  # R2, R3 are ABRs; R4 is inside area 1
    assert {r.proto for r in _routes(net, "R1", "10.4.0.0/24")} == {"O IA"}
    assert {r.proto for r in _routes(net, "R4", "10.1.0.0/24")} == {"O IA"}
    assert "O IA" in show_ip_route(net, "R1")
    there, back = net.ping("H1", ip("10.4.0.10"))
    assert there.status == back.status == "delivered"
    # Area 2 attached to area 1 only (no ABR to area 0): its routes never reach area 0.
    island = square(area2=1, area3=1,
                    r4="interface Loopback9\n ip address 10.9.0.1 255.255.255.0\n"
                       "router ospf 1\n network 10.9.0.0 0.0.0.255 area 2\n")
    assert _routes(island, "R4", "10.9.0.0/24")[0].proto == "C"
    assert _routes(island, "R2", "10.9.0.1/32") == _routes(island, "R1", "10.9.0.1/32") == []
    linked = square(area2=1, area3=1,
                    r2="interface Loopback9\n ip address 10.9.0.1 255.255.255.0\n"
                       "router ospf 1\n network 10.9.0.0 0.0.0.255 area 2\n")
    assert {r.proto for r in _routes(linked, "R4", "10.9.0.1/32")} == {"O IA"}


def test_area_mismatch_refuses_the_adjacency_and_logs_it():
    bad = square(r4="interface Gi0/1\n ip ospf 1 area 5\n")
    assert not any(a.neighbor == "R2" for a in bad.adjacencies["R4"])
    assert any("mismatched area ID" in m for d, m in bad.events if d in ("R2", "R4"))


def test_router_id_selection_and_duplicates():
    net = square(r1="interface Loopback0\n ip address 1.1.1.1 255.255.255.255\n")
    # The highest loopback wins over higher physical addresses; router-id wins over both.
    assert net.rids["R1"] == ip("1.1.1.1")
    assert net.rids["R2"] == ip("10.0.24.1")
    net = square(r2="router ospf 1\n router-id 7.7.7.7\n")
    assert net.rids["R2"] == ip("7.7.7.7")
    # Loopbacks are advertised as /32 host routes.
    net = square(r1="interface Loopback0\n ip address 1.1.1.1 255.255.255.255\n"
                    "router ospf 1\n network 1.1.1.1 0.0.0.0 area 0\n")
    assert _routes(net, "R4", "1.1.1.1/32")
    dup = square(r1="router ospf 1\n router-id 9.9.9.9\n", r2="router ospf 1\n router-id 9.9.9.9\n")
    assert not any(a.neighbor == "R2" for a in dup.adjacencies["R1"])
    assert any("DUP_RTRID_NBR" in m for _d, m in dup.events)


def test_passive_interface_default_and_hello_mismatch():
    net = square(r1="router ospf 1\n passive-interface default\n no passive-interface gi0/1\n")
    assert [a.neighbor for a in net.adjacencies["R1"]] == ["R2"]
    net = square(r1="interface Gi0/2\n ip ospf hello-interval 5\n")
    assert not any(a.neighbor == "R3" for a in net.adjacencies["R1"])


def test_redistribution_subnets_pitfall_and_default_origination():
    extra = "ip route 172.20.5.0 255.255.255.0 Null0\nip route 192.0.2.0 255.255.255.0 Null0\n"
    net = square(r4=extra + "router ospf 1\n redistribute static\n")
    # Without "subnets" classic IOS redistributes classful networks only.
    assert _routes(net, "R1", "172.20.5.0/24") == []
    (e2,) = {r.proto for r in _routes(net, "R1", "192.0.2.0/24")}
    assert e2 == "O E2" and _routes(net, "R1", "192.0.2.0/24")[0].metric == 20
    net = square(r4=extra + "router ospf 1\n redistribute static subnets metric-type 1\n")
    assert {r.proto for r in _routes(net, "R1", "172.20.5.0/24")} == {"O E1"}
    net = square(r4="router ospf 1\n default-information originate always\n")
    assert {r.proto for r in _routes(net, "R1", "0.0.0.0/0")} == {"O E2"}
    assert "O*E2" in show_ip_route(net, "R1")


def test_stub_and_totally_stubby_areas():
    ext = "ip route 192.0.2.0 255.255.255.0 Null0\nrouter ospf 1\n redistribute static subnets\n"
    stub = "router ospf 1\n area 1 stub\n"
    plain = square(r1=ext, area2=1, area3=1)
    assert {r.proto for r in _routes(plain, "R4", "192.0.2.0/24")} == {"O E2"}
    net = square(r1=ext, r2=stub, r3=stub, r4=stub, area2=1, area3=1)
    assert _routes(net, "R4", "192.0.2.0/24") == []  # no externals in a stub area
    default = _routes(net, "R4", "0.0.0.0/0")
    assert {r.proto for r in default} == {"O IA"} and len(default) == 2  # one per ABR
    assert {r.metric for r in default} == {2}  # the ABR's default cost 1 plus the link
    assert {r.proto for r in _routes(net, "R4", "10.1.0.0/24")} == {"O IA"}
    assert "O*IA" in show_ip_route(net, "R4")
    assert net.ping("H4", ip("192.0.2.1"))[0].at == "R1"  # the default leads to the ASBR
    totally = "router ospf 1\n area 1 stub no-summary\n"
    net = square(r1=ext, r2=totally, r3=totally, r4=stub, area2=1, area3=1)
    assert _routes(net, "R4", "10.1.0.0/24") == [] and _routes(net, "R4", "0.0.0.0/0")
    assert net.ping("H4", ip("10.1.0.10"))[1].status == "delivered"
    # The stub flag travels in the hellos: a router that disagrees gets no neighbour.
    mismatch = square(r1=ext, r2=stub, r3=stub, area2=1, area3=1)
    assert mismatch.adjacencies["R4"] == []
    assert parse_config("router ospf 1\n area 0 stub")[1][0].reason == \
        "% OSPF: Backbone can not be configured as stub area"


# --- static routes -------------------------------------------------------------------------

def _pair(r1: str, r2: str = "ip route 10.1.0.0 255.255.255.0 10.0.12.1\n") -> Network:
    devices = {
        "R1": ("router", "hostname R1\ninterface Gi0/0\n ip address 10.1.0.1 255.255.255.0\n"
                         "interface Gi0/1\n ip address 10.0.12.1 255.255.255.252\n" + r1),
        "R2": ("router", "hostname R2\ninterface Gi0/0\n ip address 10.2.0.1 255.255.255.0\n"
                         "interface Gi0/1\n ip address 10.0.12.2 255.255.255.252\n" + r2),
        "H1": _host("H1", "10.1.0.10", "10.1.0.1"),
        "H2": _host("H2", "10.2.0.10", "10.2.0.1"),
    }
    links = [(("R1", _gi(1)), ("R2", _gi(1))), (("R1", _gi(0)), ("H1", "Ethernet0")),
             (("R2", _gi(0)), ("H2", "Ethernet0"))]
    return _net(devices, links)


@pytest.mark.parametrize("route", [
    "ip route 10.2.0.0 255.255.255.0 10.0.12.2",
    "ip route 10.2.0.0 255.255.255.0 GigabitEthernet0/1",
    "ip route 10.2.0.0 255.255.255.0 gi0/1 10.0.12.2 name TO-R2 permanent",
    "ip route 0.0.0.0 0.0.0.0 10.0.12.2",
    "ip route 10.0.0.0 255.0.0.0 10.0.12.2 5",
])
def test_every_static_route_form_forwards(route):
    there, back = _pair(route + "\n").ping("H1", ip("10.2.0.10"))
    assert there.status == back.status == "delivered"


def test_floating_static_and_proxy_arp_off():
    net = _pair("ip route 10.2.0.0 255.255.255.0 10.0.12.2 200\n"
                "ip route 10.2.0.0 255.255.255.0 Null0 250\n")
    assert [r.ad for r in _routes(net, "R1", "10.2.0.0/24")] == [200]
    # An exit-interface-only static needs the neighbour's proxy ARP.
    net = _pair("ip route 10.2.0.0 255.255.255.0 gi0/1\n",
                "interface Gi0/1\n no ip proxy-arp\nip route 10.1.0.0 255.255.255.0 10.0.12.1\n")
    assert net.ping("H1", ip("10.2.0.10"))[0].status == "unreachable"


def test_own_address_as_next_hop_and_overlaps_get_ios_messages():
    text = ("interface Gi0/1\n ip address 10.0.12.1 255.255.255.252\n"
            "ip route 10.2.0.0 255.255.255.0 10.0.12.1\n"
            "ip route 10.2.0.1 255.255.255.0 10.0.12.2\n"
            "interface Gi0/2\n ip address 10.0.12.5 255.255.255.0\n")
    _cfg, issues, _n = parse_config(text, "R1")
    assert [i.reason for i in issues] == [
        "%Invalid next hop address (it's this router)",
        "%Inconsistent address and mask",
        "% 10.0.12.0 overlaps with GigabitEthernet0/1",
    ]


# --- NAT and ACLs --------------------------------------------------------------------------

CORE = "hostname CORE1\ninterface Gi0/0\n ip address 10.255.0.2 255.255.255.252\n ip nat inside\n"


def _nat_core(rules: str) -> str:
    from textgyms.envs.netconfig.sample import CORE1

    keep = [ln for ln in CORE1.splitlines() if not ln.startswith("ip nat inside source")]
    return "\n".join(keep) + "\n" + rules


def test_nat_pool_without_overload_translates_one_host_per_address():
    pool = ("ip nat pool P 203.0.113.9 203.0.113.9 prefix-length 29\n"
            "ip nat inside source list 1 pool P\n")
    net = sample_network({"CORE1": _nat_core(pool)})
    first, _ = net.ping("PC1", ip("198.51.100.80"))
    assert first.status == "delivered" and first.packet[0] == ip("203.0.113.9")
    second, _ = net.ping("PC2", ip("198.51.100.80"))
    assert second.status == "denied"  # the only address is taken by PC1
    over = sample_network({"CORE1": _nat_core(pool.replace("pool P\n", "pool P overload\n"))})
    for pc in ("PC1", "PC2"):
        there, back = over.ping(pc, ip("198.51.100.80"))
        assert back is not None and back.status == "delivered"
        assert there.packet[0] == ip("203.0.113.9")


def test_nat_interface_form_implies_overload_and_static_port_forwarding():
    cfg = parse_config(_nat_core("ip nat inside source list 1 interface gi0/2\n"))[0]
    assert cfg.nat[0].overload
    assert "interface GigabitEthernet0/2 overload" in render_config(cfg)
    fwd = ("ip nat inside source list 1 interface Gi0/2 overload\n"
           "ip nat inside source static tcp 10.20.0.10 80 203.0.113.10 8080\n")
    core = _nat_core(fwd).replace(" ip access-group SERVERS out\n", "")
    net = sample_network({"CORE1": core})
    there, back = net.exchange("WEB1", ip("203.0.113.10"), 6, 8080)
    assert there.status == "delivered" and there.at == "SRV1" and there.packet[4] == 80
    assert back is not None and back.status == "delivered" and back.packet[3] == 8080
    assert net.exchange("WEB1", ip("203.0.113.10"), 6, 22)[0].at != "SRV1"


def test_nat_static_needs_extendable_for_a_second_mapping():
    text = ("ip nat inside source static 10.0.0.5 203.0.113.5\n"
            "ip nat inside source static 10.0.0.5 203.0.113.6\n")
    issues = parse_config(text)[1]
    assert len(issues) == 1 and "similar static entry" in issues[0].reason
    ok = text.replace("203.0.113.5\n", "203.0.113.5 extendable\n").replace(
        "203.0.113.6\n", "203.0.113.6 extendable\n")
    assert parse_config(ok)[1] == [] and len(parse_config(ok)[0].nat) == 2


@pytest.mark.parametrize("acl", ["", "ip access-list extended SERVERS\n"])
def test_an_undefined_or_empty_applied_acl_permits_everything(acl):
    from textgyms.envs.netconfig.sample import CORE1

    core = CORE1[: CORE1.index("ip access-list extended SERVERS")] + acl
    net = sample_network({"CORE1": core})
    w = net.flow(ip("10.10.20.12"), ip("10.20.0.10"), 6, 22)
    assert w.status == "delivered"


# --- parser --------------------------------------------------------------------------------

FULL = """\
hostname EDGE
ip routing
interface gi0/1
 ip add 10.0.12.1 255.255.255.252
 ip ospf 1 area 0.0.0.1
 ip ospf hello-interval 5
 bandwidth 10000
 no ip proxy-arp
 duplex full
 no shut
interface Gi0/2
 switchport trunk native vlan 99
 sw mo tr
 switchport trunk allowed vlan 10,20
interface Fa0/3
 sw acc vl 30
router os 1
 router-id 1.1.1.1
 auto-cost reference-bandwidth 1000
 passive-interface default
 no passive-interface gi0/1
 redistribute static subnets metric 50
 default-information originate always
 log-adjacency-changes
ip nat pool OUT 203.0.113.1 203.0.113.6 netmask 255.255.255.248
ip nat inside source list 1 pool OUT overload
ip nat inside source static tcp 10.0.0.5 443 203.0.113.2 443 extendable
ip route 10.9.0.0 255.255.0.0 gi0/1 10.0.12.2 200 name BACKUP
access-list 1 permit 10.0.0.0 0.255.255.255
line vty 0 4
 transport input ssh
"""


def test_full_syntax_parses_and_round_trips():
    cfg, issues, _n = parse_config(FULL, "EDGE")
    assert issues == []
    assert cfg.ip_routing and cfg.vlans[30] == "VLAN0030"  # created by the access port
    itf = cfg.interfaces["GigabitEthernet0/1"]
    assert itf.ospf_area == (1, 1) and itf.ospf_hello == 5 and not itf.proxy_arp
    assert cfg.ospf.passive_default and cfg.ospf.active == {"GigabitEthernet0/1"}
    assert cfg.routes[0].ad == 200 and cfg.routes[0].name == "BACKUP"
    text = render_config(cfg)
    again, issues, _n = parse_config(text, "EDGE")
    assert issues == [] and render_config(again) == text


@pytest.mark.parametrize("line, message", [
    ("interface Gi0/0\n ip ad 10.0.0.1", "% Incomplete command."),
    ("ip ro 10.0.0.0 255.0.0.0 10.1.1.1", '% Ambiguous command:  "ip ro"'),
    ("router ospf 1\n area 0 range 10.0.0.0 255.0.0.0", "% Invalid input detected"),
    ("ip nat pool P 10.0.0.9 10.0.0.1 prefix-length 24", "%End address less than starting"),
    ("interface Gi0/0\n switchport mode dynamic", "% Invalid input detected"),
])
def test_rejected_lines_carry_ios_messages(line, message):
    issues = parse_config(line)[1]
    assert len(issues) == 1 and issues[0].reason.startswith(message)


# --- first-hop redundancy ------------------------------------------------------------------

def _gateway_pair(r1: str, r2: str) -> Network:
    """R1 and R2 (.2, .3) share VIP 10.1.0.1 on a switched LAN; both uplink to CORE."""
    def router(name: str, octet: int, up: str, extra: str) -> tuple[str, str]:
        return ("router", f"hostname {name}\ninterface Gi0/0\n ip address 10.1.0.{octet} "
                f"255.255.255.0\n{extra}interface Gi0/1\n ip address {up} 255.255.255.252\n"
                "router ospf 1\n passive-interface Gi0/0\n network 10.0.0.0 0.255.255.255 area 0\n")
    devices = {
        "R1": router("R1", 2, "10.9.0.1", r1), "R2": router("R2", 3, "10.9.0.5", r2),
        "CORE": ("router", "hostname CORE\ninterface Gi0/0\n ip address 10.8.0.1 255.255.255.0\n"
                           "interface Gi0/1\n ip address 10.9.0.2 255.255.255.252\n"
                           "interface Gi0/2\n ip address 10.9.0.6 255.255.255.252\n"
                           "router ospf 1\n network 10.0.0.0 0.255.255.255 area 0\n"),
        "SW": ("switch", "hostname SW"),
        "PC": _host("PC", "10.1.0.50", "10.1.0.1"),
        "SRV": _host("SRV", "10.8.0.10", "10.8.0.1"),
    }
    links = [(("R1", _gi(0)), ("SW", _gi(1))), (("R2", _gi(0)), ("SW", _gi(2))),
             (("SW", "FastEthernet0/1"), ("PC", "Ethernet0")), (("R1", _gi(1)), ("CORE", _gi(1))),
             (("R2", _gi(1)), ("CORE", _gi(2))), (("CORE", _gi(0)), ("SRV", "Ethernet0"))]
    return _net(devices, links)


def _active(net: Network) -> str | None:
    owner = net.fhrp.get((net.domain[("PC", "Ethernet0")], ip("10.1.0.1")))
    return owner[0] if owner else None


def test_hsrp_election_failover_tracking_and_preempt():
    from textgyms.envs.netconfig.checks import failed

    hsrp1 = " standby 1 ip 10.1.0.1\n standby 1 priority 110\n standby 1 track gi0/1 20\n"
    net = _gateway_pair(hsrp1, " standby 1 ip 10.1.0.1\n")
    assert _active(net) == "R1" and net.ping("PC", ip("10.8.0.10"))[1].status == "delivered"
    assert net.ping("PC", ip("10.1.0.1"))[1].status == "delivered"  # the VIP answers
    lan_down = failed(net, "R1", _gi(0))
    assert _active(lan_down) == "R2"
    assert lan_down.ping("PC", ip("10.8.0.10"))[1].status == "delivered"
    # R1's uplink fails: tracking lowers R1 to 90, but R2 only takes over with preempt.
    up_down = failed(net, "R1", _gi(1))
    assert _active(up_down) == "R1" and up_down.ping("PC", ip("10.8.0.10"))[1] is None
    net = _gateway_pair(hsrp1, " standby 1 ip 10.1.0.1\n standby 1 preempt\n")
    assert _active(failed(net, "R1", _gi(1))) == "R2"
    # Equal priorities: the higher interface address wins.
    assert _active(_gateway_pair(" standby 1 ip 10.1.0.1\n", " standby 1 ip 10.1.0.1\n")) == "R2"


def test_vrrp_preempts_by_default_and_the_address_owner_wins():
    net = _gateway_pair(" vrrp 5 ip 10.1.0.1\n vrrp 5 priority 120\n", " vrrp 5 ip 10.1.0.1\n")
    assert _active(net) == "R1"
    owner = _gateway_pair(" vrrp 5 ip 10.1.0.2\n", " vrrp 5 ip 10.1.0.2\n vrrp 5 priority 254\n")
    got = owner.fhrp.get((owner.domain[("PC", "Ethernet0")], ip("10.1.0.2")))
    assert got is not None and got[0] == "R1"  # R1 owns 10.1.0.2: priority 255
    cfg = parse_config("interface Gi0/0\n vrrp 5 ip 10.1.0.1\n no vrrp 5 preempt\n")[0]
    assert not cfg.interfaces["GigabitEthernet0/0"].fhrp[("vrrp", 5)].preempt
    assert "no vrrp 5 preempt" in render_config(cfg)


# --- BGP -----------------------------------------------------------------------------------

def _bgp_net(r1_extra: str = "", r1_network: str = "10.1.0.0 mask 255.255.255.0",
             isp1_remote: int = 65001, isp1_extra: str = "") -> Network:
    """R1 (AS 65001) dual-homed to ISP1 (AS 65010, router ID 2.2.2.2) and ISP2 (AS 65020,
    router ID 1.1.1.1), both peering with R3 (AS 65030) in front of a server LAN."""
    def router(name: str, ifs: list[tuple[str, str]], bgp: str) -> tuple[str, str]:
        text = f"hostname {name}\n" + "".join(
            f"interface {i}\n ip address {a} 255.255.255.{0 if i.endswith('/0') else 252}\n"
            for i, a in ifs)
        return "router", text + bgp
    devices = {
        "R1": router("R1", [("Gi0/0", "10.1.0.1"), ("Gi0/1", "10.0.1.1"), ("Gi0/2", "10.0.2.1")],
                     f"router bgp 65001\n network {r1_network}\n neighbor 10.0.1.2 remote-as 65010\n"
                     f" neighbor 10.0.2.2 remote-as 65020\n{r1_extra}"),
        "ISP1": router("ISP1", [("Gi0/1", "10.0.1.2"), ("Gi0/2", "10.0.3.1")],
                       f"router bgp 65010\n bgp router-id 2.2.2.2\n neighbor 10.0.1.1 remote-as "
                       f"{isp1_remote}\n neighbor 10.0.3.2 remote-as 65030\n{isp1_extra}"),
        "ISP2": router("ISP2", [("Gi0/1", "10.0.2.2"), ("Gi0/2", "10.0.4.1")],
                       "router bgp 65020\n bgp router-id 1.1.1.1\n neighbor 10.0.2.1 remote-as "
                       "65001\n neighbor 10.0.4.2 remote-as 65030\n"),
        "R3": router("R3", [("Gi0/0", "10.3.0.1"), ("Gi0/1", "10.0.3.2"), ("Gi0/2", "10.0.4.2")],
                     "router bgp 65030\n bgp router-id 3.3.3.3\n network 10.3.0.0 mask "
                     "255.255.255.0\n neighbor 10.0.3.1 remote-as 65010\n"
                     " neighbor 10.0.4.1 remote-as 65020\n"),
        "H1": _host("H1", "10.1.0.10", "10.1.0.1"),
        "H3": _host("H3", "10.3.0.10", "10.3.0.1"),
    }
    links = [(("R1", _gi(1)), ("ISP1", _gi(1))), (("R1", _gi(2)), ("ISP2", _gi(1))),
             (("ISP1", _gi(2)), ("R3", _gi(1))), (("ISP2", _gi(2)), ("R3", _gi(2))),
             (("R1", _gi(0)), ("H1", "Ethernet0")), (("R3", _gi(0)), ("H3", "Ethernet0"))]
    return _net(devices, links)


def _via(net: Network, src: str, dst: str) -> list[str]:
    return [h[0] for h in net.ping(src, ip(dst))[0].hops]


def test_bgp_sessions_and_best_path_by_as_path_then_router_id():
    net = _bgp_net()
    assert len(net.bgp_sessions) == 8  # four sessions, each seen from both ends
    routes = _routes(net, "R1", "10.3.0.0/24")
    assert [r.proto for r in routes] == ["B"] and routes[0].ad == 20
    # Equal AS-path lengths (65020 65030 vs 65010 65030): the lower router ID (ISP2) wins.
    assert _via(net, "H1", "10.3.0.10") == ["H1", "R1", "ISP2", "R3", "H3"]
    assert net.bgp_best["R3"][(ip("10.1.0.0"), 24)].as_path == (65020, 65001)
    assert "B        10.3.0.0/24 [20/0] via 10.0.2.2" in show_ip_route(net, "R1")


def test_bgp_local_preference_and_as_path_prepend():
    prefer = ("route-map FROM-ISP1 permit 10\n set local-preference 200\n"
              "router bgp 65001\n neighbor 10.0.1.2 route-map FROM-ISP1 in\n")
    net = _bgp_net(prefer)
    assert net.bgp_best["R1"][(ip("10.3.0.0"), 24)].local_pref == 200
    assert _via(net, "H1", "10.3.0.10")[2] == "ISP1"
    # Inbound: make the path through ISP2 longer so R3 returns through ISP1.
    prepend = ("ip prefix-list LAN seq 5 permit 10.1.0.0/24\n"
               "route-map TO-ISP2 permit 10\n match ip address prefix-list LAN\n"
               " set as-path prepend 65001 65001\n"
               "router bgp 65001\n neighbor 10.0.2.2 route-map TO-ISP2 out\n")
    net = _bgp_net(prepend)
    assert _via(net, "H3", "10.1.0.10")[2] == "ISP1"
    # A route-map whose only entry does not match denies everything (implicit deny).
    deny = prepend.replace("permit 10.1.0.0/24", "permit 192.0.2.0/24")
    net = _bgp_net(deny)
    assert _via(net, "H3", "10.1.0.10")[2] == "ISP1"  # nothing left via ISP2


def test_bgp_network_needs_the_exact_prefix_and_sessions_need_matching_as():
    net = _bgp_net(r1_network="10.1.0.0 mask 255.255.0.0")  # the RIB has only the /24
    assert (ip("10.1.0.0"), 16) not in net.bgp_best["R3"]
    assert net.ping("H3", ip("10.1.0.10"))[1] is None
    wrong = _bgp_net(isp1_remote=65099)  # ISP1 expects another AS: no session with R1
    assert not any({s.a, s.b} == {"R1", "ISP1"} for s in wrong.bgp_sessions)
    assert _via(wrong, "H1", "10.3.0.10")[2] == "ISP2"
    cfg = parse_config("router bgp 65001\n neighbor 10.0.0.2 route-map X in\n")[1]
    assert cfg[0].reason == "% Specify remote-as or peer-group commands first"


def test_bgp_config_round_trips():
    text = ("router bgp 65001\n bgp router-id 1.1.1.1\n bgp log-neighbor-changes\n"
            " network 10.1.0.0 mask 255.255.255.0\n neighbor 10.0.1.2 remote-as 65010\n"
            " neighbor 10.0.1.2 route-map IN in\n neighbor 10.0.1.2 next-hop-self\n"
            "ip prefix-list LAN seq 5 permit 10.1.0.0/16 le 24\n"
            "route-map IN permit 10\n match ip address prefix-list LAN\n set local-preference 150\n")
    cfg, issues, _n = parse_config(text)
    assert issues == []
    again = render_config(cfg)
    assert render_config(parse_config(again)[0]) == again and "set local-preference 150" in again
    entry = cfg.prefix_lists["LAN"][0]
    assert entry.matches(ip("10.1.5.0"), 24) and not entry.matches(ip("10.1.5.0"), 25)
