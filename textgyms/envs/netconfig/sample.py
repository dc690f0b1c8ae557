"""A hand-written example network (used by the docs, golden tests and benchmarks).

Branch router BR1 routes two VLANs of switch SW1 (router-on-a-stick) and runs OSPF with the
core router CORE1, which filters traffic to the server LAN with a named ACL and translates
the inside networks to its Internet address (PAT) towards the provider ISP.
"""

from __future__ import annotations

from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.sim import Network

BR1 = """\
hostname BR1
!
interface GigabitEthernet0/0
 description trunk to SW1
 no ip address
 no shutdown
!
interface GigabitEthernet0/0.10
 encapsulation dot1Q 10
 ip address 10.10.10.1 255.255.255.0
!
interface GigabitEthernet0/0.20
 encapsulation dot1Q 20
 ip address 10.10.20.1 255.255.255.0
!
interface GigabitEthernet0/1
 description to CORE1
 ip address 10.255.0.1 255.255.255.252
 ip ospf cost 10
!
router ospf 1
 router-id 1.1.1.1
 passive-interface GigabitEthernet0/0.10
 passive-interface GigabitEthernet0/0.20
 network 10.10.0.0 0.0.255.255 area 0
 network 10.255.0.0 0.0.0.3 area 0
!
ip route 0.0.0.0 0.0.0.0 10.255.0.2
"""

SW1 = """\
hostname SW1
vlan 10
 name SALES
vlan 20
 name ENG
interface FastEthernet0/1
 switchport mode access
 switchport access vlan 10
interface FastEthernet0/2
 switchport mode access
 switchport access vlan 20
interface GigabitEthernet0/1
 switchport trunk allowed vlan 10,20
 switchport mode trunk
"""

CORE1 = """\
hostname CORE1
interface Gi0/0
 description to BR1
 ip address 10.255.0.2 255.255.255.252
 ip nat inside
interface Gi0/1
 description servers
 ip address 10.20.0.1 255.255.255.0
 ip access-group SERVERS out
 ip nat inside
interface Gi0/2
 description to ISP
 ip address 203.0.113.2 255.255.255.252
 ip nat outside
router ospf 1
 router-id 2.2.2.2
 network 10.0.0.0 0.255.255.255 area 0
 passive-interface Gi0/1
ip route 0.0.0.0 0.0.0.0 203.0.113.1
access-list 1 permit 10.0.0.0 0.255.255.255
ip nat inside source list 1 interface Gi0/2 overload
ip nat inside source static 10.20.0.10 203.0.113.10
ip access-list extended SERVERS
 remark web and ssh from the branch only
 permit tcp 10.10.10.0 0.0.0.255 host 10.20.0.10 eq www
 permit tcp 10.10.0.0 0.0.255.255 host 10.20.0.10 range 8000 8080
 deny   tcp any any eq 22
 permit icmp any any
 permit tcp any any established
"""

ISP = """\
hostname ISP
interface Gi0/0
 ip address 203.0.113.1 255.255.255.252
interface Gi0/1
 ip address 198.51.100.1 255.255.255.0
ip route 203.0.113.8 255.255.255.248 203.0.113.2
"""


def _host(name: str, ip: str, gw: str) -> str:
    return (f"hostname {name}\ninterface Ethernet0\n ip address {ip} 255.255.255.0\n"
            f"ip default-gateway {gw}\n")


CONFIGS = {
    "BR1": ("router", BR1),
    "SW1": ("switch", SW1),
    "CORE1": ("router", CORE1),
    "ISP": ("router", ISP),
    "PC1": ("host", _host("PC1", "10.10.10.11", "10.10.10.1")),
    "PC2": ("host", _host("PC2", "10.10.20.12", "10.10.20.1")),
    "SRV1": ("host", _host("SRV1", "10.20.0.10", "10.20.0.1")),
    "WEB1": ("host", _host("WEB1", "198.51.100.80", "198.51.100.1")),
}
LINKS = [
    (("BR1", "GigabitEthernet0/0"), ("SW1", "GigabitEthernet0/1")),
    (("SW1", "FastEthernet0/1"), ("PC1", "Ethernet0")),
    (("SW1", "FastEthernet0/2"), ("PC2", "Ethernet0")),
    (("BR1", "GigabitEthernet0/1"), ("CORE1", "GigabitEthernet0/0")),
    (("CORE1", "GigabitEthernet0/1"), ("SRV1", "Ethernet0")),
    (("CORE1", "GigabitEthernet0/2"), ("ISP", "GigabitEthernet0/0")),
    (("ISP", "GigabitEthernet0/1"), ("WEB1", "Ethernet0")),
]


def sample_network(overrides: dict[str, str] | None = None) -> Network:
    """The example network; ``overrides`` replaces some devices' configuration text."""
    texts = {d: text for d, (_k, text) in CONFIGS.items()}
    texts.update(overrides or {})
    devices = {d: (k, parse_config(texts[d], d)[0]) for d, (k, _t) in CONFIGS.items()}
    return Network(devices, LINKS)


class SampleState:
    """A tool state over the example network (what :class:`env.NetState` holds)."""

    def __init__(self) -> None:
        self.mine = {d: parse_config(text, d)[0] for d, (k, text) in CONFIGS.items()
                     if k != "host"}
        self.hits: dict = {}
        self.logs: dict = {}
        self._net: Network | None = None

    def editable(self, device: str) -> DeviceConfig:
        """``device``'s config to edit in place (this state parsed its own)."""
        return self.mine[device]

    @property
    def devices(self) -> dict[str, str]:
        """Every device of the example network and its kind."""
        return {d: k for d, (k, _t) in CONFIGS.items()}

    def config(self, device: str) -> DeviceConfig:
        """``device``'s configuration in the network."""
        return self.net.config(device)

    @property
    def net(self) -> Network:
        if self._net is None:
            hosts = {d: (k, parse_config(t, d)[0]) for d, (k, t) in CONFIGS.items()
                     if k == "host"}
            devices = {d: (CONFIGS[d][0], c) for d, c in self.mine.items()} | hosts
            self._net = Network(devices, LINKS)
        return self._net


SCRIPT = (  # (golden file stem, tool, arguments): run in order on one SampleState
    ("show_run_core1", "show_run", {"device": "CORE1"}),
    ("show_ip_route_br1", "show_ip_route", {"device": "BR1"}),
    ("show_ip_route_core1", "show_ip_route", {"device": "CORE1"}),
    ("show_ip_int_brief_br1", "show_ip_int_brief", {"device": "BR1"}),
    ("show_ip_ospf_neighbor_core1", "show_ip_ospf_neighbor", {"device": "CORE1"}),
    ("show_vlan_brief_sw1", "show_vlan_brief", {"device": "SW1"}),
    ("ping_pc1_web1", "ping", {"device": "PC1", "target": "198.51.100.80"}),
    ("ping_web1_static", "ping", {"device": "WEB1", "target": "203.0.113.10"}),
    ("traceroute_pc2_srv1", "traceroute", {"device": "PC2", "target": "10.20.0.10"}),
    ("test_flow_denied", "test_flow", {"src": "10.10.20.12", "dst": "10.20.0.10",
                                       "proto": "tcp", "port": 22}),
    ("test_flow_permitted", "test_flow", {"src": "10.10.10.11", "dst": "10.20.0.10",
                                          "proto": "tcp", "port": 80}),
    ("show_access_lists_core1", "show_access_lists", {"device": "CORE1"}),
    ("apply_shutdown", "apply_config", {"device": "BR1",
                                        "text": "interface gi0/1\n shutdown\n bogus line"}),
    ("show_ip_int_brief_br1_after", "show_ip_int_brief", {"device": "BR1"}),
    ("get_logs_br1", "get_logs", {"device": "BR1"}),
    ("ping_after_shutdown", "ping", {"device": "PC1", "target": "10.20.0.10"}),
)


def golden_outputs() -> dict[str, str]:
    """Every tool output of :data:`SCRIPT`, run in order on a fresh example network."""
    from textgyms.envs.netconfig.tools import run_tool

    state = SampleState()
    return {stem: run_tool(state, tool, args)[0] + "\n" for stem, tool, args in SCRIPT}
