"""Each simulator feature: L2 domains, connected/static/OSPF routes, AD, LPM, the packet walk
with ACLs, NAT, loops and ARP failures."""

from __future__ import annotations

from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.sample import BR1, CORE1, SW1, sample_network
from textgyms.envs.netconfig.scenario import ip
from textgyms.envs.netconfig.sim import Network


def _net(configs: dict[str, tuple[str, str]], links) -> Network:
    return Network({d: (k, parse_config(t, d)[0]) for d, (k, t) in configs.items()}, links)


def _host(name, addr, gw):
    return ("host", f"hostname {name}\ninterface Ethernet0\n ip address {addr} 255.255.255.0\n"
                    f"ip default-gateway {gw}")


def _triangle(costs: str = "", extra: dict[str, str] | None = None) -> Network:
    """R1-R2-R3 in a triangle (OSPF area 0), a host on R1 and on R3."""
    cfg = {
        "R1": "interface Gi0/0\n ip address 10.0.1.1 255.255.255.0\n"
              "interface Gi0/1\n ip address 10.12.0.1 255.255.255.252\n" + costs +
              "interface Gi0/2\n ip address 10.13.0.1 255.255.255.252\n",
        "R2": "interface Gi0/1\n ip address 10.12.0.2 255.255.255.252\n"
              "interface Gi0/2\n ip address 10.23.0.1 255.255.255.252\n",
        "R3": "interface Gi0/0\n ip address 10.0.3.1 255.255.255.0\n"
              "interface Gi0/1\n ip address 10.23.0.2 255.255.255.252\n"
              "interface Gi0/2\n ip address 10.13.0.2 255.255.255.252\n",
    }
    ospf = "router ospf 1\n network 10.0.0.0 0.255.255.255 area 0\n passive-interface Gi0/0\n"
    devices = {r: ("router", f"hostname {r}\n{t}{ospf}{(extra or {}).get(r, '')}")
               for r, t in cfg.items()}
    devices["H1"] = _host("H1", "10.0.1.10", "10.0.1.1")
    devices["H3"] = _host("H3", "10.0.3.10", "10.0.3.1")
    links = [(("R1", "GigabitEthernet0/1"), ("R2", "GigabitEthernet0/1")),
             (("R2", "GigabitEthernet0/2"), ("R3", "GigabitEthernet0/1")),
             (("R1", "GigabitEthernet0/2"), ("R3", "GigabitEthernet0/2")),
             (("R1", "GigabitEthernet0/0"), ("H1", "Ethernet0")),
             (("R3", "GigabitEthernet0/0"), ("H3", "Ethernet0"))]
    return _net(devices, links)


def _path(walk) -> list[str]:
    return [h[0] for h in walk.hops]


# --- layer 2 ------------------------------------------------------------------------------

def test_vlans_make_separate_broadcast_domains_joined_by_the_trunk():
    net = sample_network()
    pc1, pc2 = net.domain[("PC1", "Ethernet0")], net.domain[("PC2", "Ethernet0")]
    assert pc1 != pc2
    assert pc1 == net.domain[("BR1", "GigabitEthernet0/0.10")]
    assert pc2 == net.domain[("BR1", "GigabitEthernet0/0.20")]


def test_vlan_missing_on_trunk_or_in_the_database_cuts_the_host_off():
    no_trunk = sample_network({"SW1": SW1.replace("allowed vlan 10,20", "allowed vlan 10")})
    assert no_trunk.domain[("PC2", "Ethernet0")] != no_trunk.domain[
        ("BR1", "GigabitEthernet0/0.20")]
    assert no_trunk.ping("PC2", ip("10.10.20.1"))[0].status == "unreachable"
    # "switchport access vlan 20" creates VLAN 20 when it is missing, as IOS does ...
    auto = sample_network({"SW1": SW1.replace("vlan 20\n name ENG\n", "")})
    assert auto.config("SW1").vlans[20] == "VLAN0020"
    assert auto.ping("PC2", ip("10.10.20.1"))[1].status == "delivered"
    # ... but deleting the VLAN afterwards leaves its access ports inactive.
    no_vlan = sample_network({"SW1": SW1 + "no vlan 20\n"})
    assert no_vlan.ping("PC2", ip("10.10.20.1"))[0].status == "unreachable"
    assert no_vlan.ping("PC1", ip("10.10.10.1"))[1].status == "delivered"


def test_svi_on_a_layer3_switch_routes_between_vlans():
    sw = ("l3switch", "hostname SW\nip routing\nvlan 10\nvlan 20\n"
          "interface Fa0/1\n switchport access vlan 10\ninterface Fa0/2\n switchport access "
          "vlan 20\ninterface Vlan10\n ip address 10.1.10.1 255.255.255.0\n"
          "interface Vlan20\n ip address 10.1.20.1 255.255.255.0\n")
    net = _net({"SW": sw, "A": _host("A", "10.1.10.5", "10.1.10.1"),
                "B": _host("B", "10.1.20.5", "10.1.20.1")},
               [(("SW", "FastEthernet0/1"), ("A", "Ethernet0")),
                (("SW", "FastEthernet0/2"), ("B", "Ethernet0"))])
    there, back = net.ping("A", ip("10.1.20.5"))
    assert there.status == back.status == "delivered" and _path(there) == ["A", "SW", "B"]
    # A Catalyst switch does not route without "ip routing" (off by default).
    off = _net({"SW": ("l3switch", sw[1].replace("ip routing\n", "")),
                "A": _host("A", "10.1.10.5", "10.1.10.1"),
                "B": _host("B", "10.1.20.5", "10.1.20.1")},
               [(("SW", "FastEthernet0/1"), ("A", "Ethernet0")),
                (("SW", "FastEthernet0/2"), ("B", "Ethernet0"))])
    assert off.ping("A", ip("10.1.20.5"))[0].status == "no_route"


def test_shutdown_takes_the_link_and_its_connected_route_down():
    net = sample_network({"BR1": BR1.replace(" ip ospf cost 10\n", " ip ospf cost 10\n shutdown\n")})
    assert net.status[("BR1", "GigabitEthernet0/1")] == ("administratively down", "down")
    assert net.status[("CORE1", "GigabitEthernet0/0")] == ("down", "down")
    assert not any(RouteFields(*r).iface == "GigabitEthernet0/1" for r in net.rib["BR1"])
    assert net.adjacencies["CORE1"] == []


# --- routing ------------------------------------------------------------------------------

def test_ospf_adjacency_needs_same_subnet_area_and_no_passive():
    assert {a.neighbor for a in _triangle().adjacencies["R1"]} == {"R2", "R3"}
    wrong_mask = _triangle(extra={"R2": "interface Gi0/1\n ip address 10.12.0.2 255.255.255.0\n"})
    assert {a.neighbor for a in wrong_mask.adjacencies["R1"]} == {"R3"}
    area = _triangle(extra={"R2": "router ospf 1\n no network 10.0.0.0 0.255.255.255 area 0\n"
                                  " network 10.0.0.0 0.255.255.255 area 1\n"})
    assert area.adjacencies["R2"] == []
    assert any("mismatched area" in msg for dev, msg in area.events if dev == "R1")
    passive = _triangle(extra={"R3": "router ospf 1\n passive-interface Gi0/2\n"})
    assert {a.neighbor for a in passive.adjacencies["R1"]} == {"R2"}


def test_ospf_prefers_the_cheaper_path():
    direct = _triangle()
    assert _path(direct.flow(ip("10.0.1.10"), ip("10.0.3.10"))) == ["H1", "R1", "R3", "H3"]
    costly = _triangle(extra={"R1": "interface Gi0/2\n ip ospf cost 50\n"})
    assert _path(costly.flow(ip("10.0.1.10"), ip("10.0.3.10"))) == ["H1", "R1", "R2", "R3", "H3"]
    route = next(RouteFields(*r) for r in costly.rib["R1"] if r[0] == ip("10.0.3.0"))
    assert route.proto == "O" and route.metric == 3


def test_administrative_distance_and_floating_static():
    static = _triangle(extra={"R1": "ip route 10.0.3.0 255.255.255.0 10.12.0.2\n"})
    r = next(RouteFields(*r) for r in static.rib["R1"] if r[0] == ip("10.0.3.0"))
    assert (r.proto, r.ad) == ("S", 1)
    floating = _triangle(extra={"R1": "ip route 10.0.3.0 255.255.255.0 10.12.0.2 200\n"})
    assert next(RouteFields(*r) for r in floating.rib["R1"] if r[0] == ip("10.0.3.0")).proto == "O"


def test_longest_prefix_match_wins():
    net = _triangle(extra={"R1": "ip route 10.0.3.10 255.255.255.255 10.12.0.2\n"})
    assert _path(net.flow(ip("10.0.1.10"), ip("10.0.3.10")))[:3] == ["H1", "R1", "R2"]
    assert _path(net.flow(ip("10.0.1.10"), ip("10.0.3.11")))[:3] == ["H1", "R1", "R3"]


def test_static_route_with_unresolvable_next_hop_is_not_installed():
    net = _triangle(extra={"R1": "ip route 172.16.0.0 255.255.0.0 192.0.2.1\n"})
    assert not any(RouteFields(*r).net == ip("172.16.0.0") for r in net.rib["R1"])


# --- the packet walk ----------------------------------------------------------------------

def test_acls_in_and_out_decide_the_walk():
    net = sample_network()
    ok = net.flow(ip("10.10.10.11"), ip("10.20.0.10"), 6, 80)
    assert ok.status == "delivered" and ("CORE1", "SERVERS", 0) in ok.hits
    denied = net.flow(ip("10.10.20.12"), ip("10.20.0.10"), 6, 22)
    assert denied.status == "denied" and "SERVERS out" in denied.reason
    inbound = sample_network({"BR1": BR1.replace(
        " encapsulation dot1Q 20\n", " encapsulation dot1Q 20\n ip access-group 5 in\n")
        + "access-list 5 deny any\n"})
    assert inbound.flow(ip("10.10.20.12"), ip("10.20.0.10"), 6, 8080).status == "denied"


def test_pat_translates_inside_sources_and_replies_come_back():
    there, back = sample_network().ping("PC1", ip("198.51.100.80"))
    assert there.status == "delivered" and there.packet[0] == ip("203.0.113.2")
    assert back.status == "delivered" and back.at == "PC1"


def test_static_nat_publishes_the_server():
    there, back = sample_network().ping("WEB1", ip("203.0.113.10"))
    assert there.at == "SRV1" and there.packet[1] == ip("10.20.0.10")
    out, _ = sample_network().ping("SRV1", ip("198.51.100.80"))
    assert out.packet[0] == ip("203.0.113.10")


def test_nat_sides_swapped_breaks_translation():
    swapped = CORE1.replace("ip nat inside", "ip nat TMP").replace(
        "ip nat outside", "ip nat inside").replace("ip nat TMP", "ip nat outside")
    there, back = sample_network({"CORE1": swapped}).ping("PC1", ip("198.51.100.80"))
    assert there.packet[0] == ip("10.10.10.11") and back is not None
    assert back.status != "delivered"


def test_routing_loop_is_detected():
    net = _triangle(extra={"R1": "ip route 172.16.0.0 255.255.0.0 10.12.0.2\n",
                           "R2": "ip route 172.16.0.0 255.255.0.0 10.12.0.1\n"})
    walk = net.flow(ip("10.0.1.10"), ip("172.16.1.1"))
    assert walk.status == "loop"


def test_no_route_and_failed_arp_are_reported():
    net = _triangle()
    assert net.flow(ip("10.0.1.10"), ip("192.0.2.1")).status == "no_route"
    miss = net.flow(ip("10.0.1.10"), ip("10.0.3.99"))
    assert miss.status == "unreachable" and "no ARP reply" in miss.reason
