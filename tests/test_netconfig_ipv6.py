"""IPv6: the parser as IOS takes IPv6, the IPv6 plane of the simulator (longest
prefix match, ECMP, link-local next hops, router advertisements, OSPFv3 areas and router
IDs), the IOS-format tools, and the ``ipv6`` family graded on behaviour: the oracle and
IOS-equivalent rewrites score 1.0, each violated requirement at most 0.5, an unchanged or
empty submission at most 0.1."""

from __future__ import annotations

import ipaddress
import json
import re
import zlib

import numpy as np
import pytest

from textgyms.envs.netconfig.generate import LEVELS, NetTask, generate
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.routing import RouteFields, all_paths
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.show6 import show_ipv6_route
from textgyms.envs.netconfig.sim import Network
from textgyms.envs.netconfig.verify import _reference, network, verify_submission

V6 = ipaddress.IPv6Address


def task(level: str, seed: int) -> NetTask:
    return generate(np.random.default_rng(seed), "ipv6", level)


def score(t: NetTask, configs: dict[str, str]) -> float:
    body = "\n".join(f"! device {d}\n{text}" for d, text in configs.items())
    return verify_submission(t, body).score


def edit(t: NetTask, fn) -> dict[str, str]:
    return {d: fn(d, text) for d, text in t.reference}


# --- parser -------------------------------------------------------------------------------

CONFIG = """\
hostname R1
ipv6 unicast-routing
interface GigabitEthernet0/0
 ipv6 address 2001:DB8:1::1/64
 ipv6 address 2001:DB8:2::/64 eui-64
 ipv6 address FE80::1 link-local
 ipv6 ospf cost 10
 ipv6 ospf 1 area 0.0.0.1
interface Loopback0
 ipv6 enable
ipv6 route 2001:DB8:9::/64 GigabitEthernet0/0 FE80::2 5 name VIA-LL
ipv6 route ::/0 2001:DB8:1::2
ipv6 router ospf 1
 router-id 1.1.1.1
 passive-interface default
 no passive-interface GigabitEthernet0/0
"""


def test_ipv6_config_round_trips_through_show_run():
    cfg, issues, _n = parse_config(CONFIG, "R1")
    assert issues == []
    again, issues2, _n = parse_config(render_config(cfg), "R1")
    assert issues2 == [] and again == cfg
    itf = cfg.interfaces["GigabitEthernet0/0"]
    assert [a.eui64 for a in itf.ipv6] == [False, True] and itf.ospf6_area == (1, 1)
    assert cfg.routes6[0].nexthop == V6("fe80::2") and cfg.routes6[0].ad == 5
    assert cfg.ospf6.router_id == ipaddress.IPv4Address("1.1.1.1") and cfg.ospf6.passive_default


def test_compressed_expanded_and_upper_case_forms_are_one_address():
    forms = ("2001:db8:0:a::1/64", "2001:0DB8:0000:000A:0000:0000:0000:0001/64",
             "2001:DB8::A:0:0:0:1/64")
    parsed = [parse_config(f"interface gi0/0\n ipv6 add {f}")[0] for f in forms]
    assert len({p.interfaces["GigabitEthernet0/0"].ipv6[0] for p in parsed}) == 1


@pytest.mark.parametrize(("lines", "message"), [
    ("ipv6 router ospf 1", "% IPv6 routing not enabled"),
    ("interface gi0/0\n ipv6 ospf 1 area 0", "% IPv6 routing not enabled"),
    ("ipv6 route 2001:db8:9::/64 fe80::2", "% Interface has to be specified for a link-local"),
    ("interface gi0/0\n ipv6 address 2001:db8::1", "% Invalid input"),
    ("interface gi0/0\n ipv6 address FF02::1/64", "% Invalid input"),
    ("interface gi0/0\n ipv6 address ::ffff:192.0.2.1/96", "% Invalid input"),
    ("interface gi0/0\n ipv6 address FE80::1/64", "% Invalid input"),  # needs link-local
    ("ipv6 route ::/0 ::", "% Invalid input"),
    ("interface gi0/0\n ipv6 address 2001:db8::1/64\ninterface gi0/1\n ipv6 address "
     "2001:db8::2/64", "% 2001:DB8::/64 overlaps with GigabitEthernet0/0"),
    ("ipv6 unicast-routing\nipv6 router ospf 1\n network 10.0.0.0 0.0.0.255 area 0",
     "% Invalid input"),
])
def test_lines_ios_rejects_are_issues_with_its_message(lines, message):
    issues = parse_config(lines, "R1")[1]
    assert len(issues) == 1 and issues[0].reason.startswith(message)


# --- simulator ----------------------------------------------------------------------------

R = "hostname {n}\nipv6 unicast-routing\n"


def _iface(name: str, addr: str, area: int | None = None) -> str:
    tail = f"\n ipv6 ospf 1 area {area}" if area is not None else ""
    return f"interface {name}\n ipv6 address {addr}{tail}\n"


def _ospf_net(overrides: dict[str, str] | None = None) -> Network:
    """H1 - R1 = (R2 | R3) = R4 (ABR) - R5 - H5: area 0 around a square, area 1 behind R4."""
    gi = "GigabitEthernet0/{}".format
    texts = {
        "R1": R.format(n="R1") + _iface(gi(0), "2001:db8:1::1/64", 0)
        + _iface(gi(1), "2001:db8:12::1/64", 0) + _iface(gi(2), "2001:db8:13::1/64", 0)
        + "ipv6 router ospf 1\n router-id 1.1.1.1\n passive-interface GigabitEthernet0/0",
        "R2": R.format(n="R2") + _iface(gi(1), "2001:db8:12::2/64", 0)
        + _iface(gi(2), "2001:db8:24::2/64", 0) + "ipv6 router ospf 1\n router-id 2.2.2.2",
        "R3": R.format(n="R3") + _iface(gi(1), "2001:db8:13::3/64", 0)
        + _iface(gi(2), "2001:db8:34::3/64", 0) + "ipv6 router ospf 1\n router-id 3.3.3.3",
        "R4": R.format(n="R4") + _iface(gi(0), "2001:db8:45::4/64", 1)
        + _iface(gi(1), "2001:db8:24::4/64", 0) + _iface(gi(2), "2001:db8:34::4/64", 0)
        + "ipv6 router ospf 1\n router-id 4.4.4.4",
        "R5": R.format(n="R5") + _iface(gi(0), "2001:db8:45::5/64", 1)
        + _iface(gi(1), "2001:db8:5::1/64", 1) + "ipv6 router ospf 1\n router-id 5.5.5.5",
        "H1": "hostname H1\ninterface Ethernet0\n ipv6 address 2001:db8:1::10/64",
        "H5": "hostname H5\ninterface Ethernet0\n ipv6 address 2001:db8:5::10/64",
    }
    texts.update(overrides or {})
    links = [(("R1", gi(0)), ("H1", "Ethernet0")), (("R1", gi(1)), ("R2", gi(1))),
             (("R1", gi(2)), ("R3", gi(1))), (("R2", gi(2)), ("R4", gi(1))),
             (("R3", gi(2)), ("R4", gi(2))), (("R4", gi(0)), ("R5", gi(0))),
             (("R5", gi(1)), ("H5", "Ethernet0"))]
    devices = {d: ("host" if d.startswith("H") else "router", parse_config(t, d)[0])
               for d, t in texts.items()}
    return Network(devices, links)


H5 = int(V6("2001:db8:5::10"))


def test_ospfv3_areas_inter_area_routes_and_ecmp_over_link_local_next_hops():
    p = _ospf_net().v6
    routes = [r for r in map(RouteFields._make, p.rib["R1"]) if r.net == int(V6("2001:db8:5::"))]
    assert {r.proto for r in routes} == {"O IA"} and len(routes) == 2  # two equal paths
    assert all(V6(r.nexthop).is_link_local for r in routes)
    assert {r.iface for r in routes} == {"GigabitEthernet0/1", "GigabitEthernet0/2"}
    paths = {tuple(h[0] for h in w.hops) for w, _back in p.ping_all_paths("H1", H5)}
    assert paths == {("H1", "R1", "R2", "R4", "R5", "H5"), ("H1", "R1", "R3", "R4", "R5", "H5")}
    assert all(back.status == "delivered" for _w, back in p.ping_all_paths("H1", H5))
    assert {o.area for o in p.oifs if o.dev == "R4"} == {0, 1}
    rib5 = map(RouteFields._make, p.rib["R5"])
    assert [r.proto for r in rib5 if r.net == int(V6("2001:db8:12::"))] == ["O IA"]


def test_ospfv3_totally_stubby_area_gets_only_a_default_route():
    net = _ospf_net()
    texts = {d: render_config(net.config(d)).replace(
        "ipv6 router ospf 1\n", "ipv6 router ospf 1\n area 1 stub no-summary\n")
        for d in ("R4", "R5")}
    p = _ospf_net(texts).v6
    rib5 = map(RouteFields._make, p.rib["R5"])
    learned = [(V6(r.net), r.plen, r.proto) for r in rib5 if r.proto.startswith("O")]
    assert learned == [(V6("::"), 0, "O IA")]
    assert p.ping("H5", int(V6("2001:db8:1::10")))[1].status == "delivered"
    assert "OI  ::/0 [110/2]" in show_ipv6_route(_ospf_net(texts), "R5")


def test_ospfv3_needs_a_router_id_when_the_router_has_no_ipv4_address():
    text = R.format(n="R5") + _iface("GigabitEthernet0/0", "2001:db8:45::5/64", 1) \
        + _iface("GigabitEthernet0/1", "2001:db8:5::1/64", 1) + "ipv6 router ospf 1"
    p = _ospf_net({"R5": text}).v6
    assert "R5" not in p.rids and p.adjacencies["R5"] == []
    assert any("NORTRID" in msg for d, msg in p.events if d == "R5")
    assert p.ping("H1", H5)[1] is None
    with_v4 = text.replace(" ipv6 address 2001:db8:5::1/64",
                           " ip address 192.0.2.1 255.255.255.0\n ipv6 address 2001:db8:5::1/64")
    p = _ospf_net({"R5": with_v4}).v6
    assert p.rids["R5"] == int(ipaddress.IPv4Address("192.0.2.1"))
    assert p.ping("H1", H5)[1].status == "delivered"


def test_without_unicast_routing_a_router_neither_forwards_nor_advertises_itself():
    net = _ospf_net()
    text = render_config(net.config("R1")).replace("ipv6 unicast-routing\n", "")
    p = _ospf_net({"R1": text}).v6
    assert "R1" not in p.routers and p.default_router("H1", "Ethernet0") is None
    assert p.ping("H1", H5)[1] is None and "R1" not in p.rids  # no OSPFv3 either
    # Its own table still serves the traffic it sends itself: the directly connected LAN.
    assert p.ping("R1", int(V6("2001:db8:1::10")))[1].status == "delivered"
    transit = p.walk((int(V6("2001:db8:1::10")), H5, 58, 0, 0, False), "H1")
    assert transit.status == "no_route"


def _static_net(r1_routes: str) -> Network:
    """H1 - R1, with R2 (LAN 2001:db8:9:1::/64) and R3 (LAN 2001:db8:9:2::/64) behind it."""
    gi = "GigabitEthernet0/{}".format
    texts = {
        "R1": R.format(n="R1") + _iface(gi(0), "2001:db8:1::1/64")
        + _iface(gi(1), "2001:db8:12::1/64") + _iface(gi(2), "2001:db8:13::1/64") + r1_routes,
        "R2": R.format(n="R2") + _iface(gi(1), "2001:db8:12::2/64")
        + _iface(gi(0), "2001:db8:9:1::1/64") + "ipv6 route ::/0 2001:db8:12::1",
        "R3": R.format(n="R3") + _iface(gi(1), "2001:db8:13::3/64")
        + _iface(gi(0), "2001:db8:9:2::1/64") + "ipv6 route ::/0 2001:db8:13::1",
        "H1": "hostname H1\ninterface Ethernet0\n ipv6 address 2001:db8:1::10/64",
        "H2": "hostname H2\ninterface Ethernet0\n ipv6 address 2001:db8:9:1::10/64",
        "H3": "hostname H3\ninterface Ethernet0\n ipv6 address 2001:db8:9:2::10/64",
    }
    links = [(("R1", gi(0)), ("H1", "Ethernet0")), (("R1", gi(1)), ("R2", gi(1))),
             (("R1", gi(2)), ("R3", gi(1))), (("R2", gi(0)), ("H2", "Ethernet0")),
             (("R3", gi(0)), ("H3", "Ethernet0"))]
    devices = {d: ("host" if d.startswith("H") else "router", parse_config(t, d)[0])
               for d, t in texts.items()}
    return Network(devices, links)


H2, H3 = int(V6("2001:db8:9:1::10")), int(V6("2001:db8:9:2::10"))


def test_static_longest_prefix_match_and_floating_distance():
    routes = ("ipv6 route 2001:db8:9::/48 2001:db8:13::3\n"
              "ipv6 route 2001:db8:9:1::/64 2001:db8:12::2\n"
              "ipv6 route 2001:db8:9:1::/64 2001:db8:13::3 250\n")
    p = _static_net(routes).v6

    def hops(dst: int) -> list[str]:
        pkt = (int(V6("2001:db8:1::10")), dst, 58, 0, 0, False)
        return [h[0] for h in p.walk(pkt, "H1").hops]

    assert hops(H2) == ["H1", "R1", "R2", "H2"]  # the /64 beats the /48
    assert hops(H3) == ["H1", "R1", "R3", "H3"]
    assert [r.ad for r in map(RouteFields._make, p.rib["R1"])
            if r.net == int(V6("2001:db8:9:1::"))] == [1]


def test_static_ecmp_and_link_local_next_hop_with_its_interface():
    plain = _static_net("").v6
    r3_ll = plain.ll[("R3", "GigabitEthernet0/1")]
    routes = ("ipv6 route 2001:db8:9:2::/64 2001:db8:12::2\n"  # R2 sends it back: a loop
              f"ipv6 route 2001:db8:9:2::/64 GigabitEthernet0/2 {V6(r3_ll)}\n")
    p = _static_net(routes).v6
    walks = [w for _ch, w in all_paths(
        lambda ch: p.walk((int(V6("2001:db8:1::10")), H3, 58, 0, 0, False), "H1", ch))]
    assert {w.status for w in walks} == {"delivered", "loop"}  # both routes are taken
    only_ll = _static_net(f"ipv6 route 2001:db8:9:2::/64 GigabitEthernet0/2 {V6(r3_ll)}\n").v6
    assert only_ll.ping("H1", H3)[1].status == "delivered"
    # An exit interface alone on Ethernet: no proxy ND in IPv6, the destination never answers.
    exit_only = _static_net("ipv6 route 2001:db8:9:2::/64 GigabitEthernet0/2\n").v6
    assert exit_only.ping("H1", H3)[0].status == "unreachable"


def test_show_ipv6_route_is_in_ios_format():
    text = show_ipv6_route(_ospf_net(), "R1")
    assert text.startswith("IPv6 Routing Table - default - ")
    assert re.search(r"^OI  2001:DB8:5::/64 \[110/4\]\n     via FE80::\S+, "
                     r"GigabitEthernet0/\d\n     via FE80::", text, flags=re.M)
    assert "L   2001:DB8:1::1/128 [0/0]\n     via GigabitEthernet0/0, receive" in text
    assert text.endswith("L   FF00::/8 [0/0]\n     via Null0, receive")


# --- the ipv6 family: IOS-equivalent rewrites ---------------------------------------------

_ADDR = re.compile(r"(?<=\s)([0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?=/|\s|$)")


def expanded(_d: str, text: str) -> str:
    """Every IPv6 address written out in full, upper-case."""
    return _ADDR.sub(lambda m: V6(m.group(1)).exploded.upper(), text)


def abbreviated(_d: str, text: str) -> str:
    for pat, rep in ((r"^interface ", "int "), (r"^ ipv6 address ", " ipv6 add "),
                     (r"^ipv6 unicast-routing", "ipv6 unicast-r"), (r"^ no shutdown", " no shut"),
                     (r"^ipv6 router ospf ", "ipv6 router os "), (r"^ passive-interface ", " pass "),
                     (r"^ ipv6 ospf (\d+) area", r" ipv6 osp \1 ar")):
        text = re.sub(pat, rep, text, flags=re.M)
    return text.replace("GigabitEthernet", "gi")


def harmless(_d: str, text: str) -> str:
    text = re.sub(r"^(hostname .*)$", r"\1\nipv6 cef\nservice timestamps log datetime msec", text,
                  count=1, flags=re.M)
    text = re.sub(r"^(interface GigabitEthernet\S+)$", r"\1\n ipv6 mtu 1500\n duplex auto",
                  text, flags=re.M)
    text = re.sub(r"^( ipv6 ospf \d+ area .*)$", r"\1\n ipv6 ospf network point-to-point", text,
                  flags=re.M)
    return re.sub(r"^(ipv6 router ospf \d+)$", r"\1\n log-adjacency-changes", text, flags=re.M)


def _plane(t: NetTask):
    return network(t, _reference(t)).v6


def _owner_iface(t: NetTask, d: str, nh: str) -> str:
    cfg = _reference(t)[d]
    return next(n for n, i in cfg.interfaces.items()
                if any(V6(nh) in a.iface.network for a in i.ipv6))


def _neighbor_ll(t: NetTask, nh: str) -> int:
    p = _plane(t)
    dev, name = next(v for dom in p.nd.values() for a, v in dom.items() if a == int(V6(nh)))
    return p.ll[(dev, name)]


def static_via_link_local(t: NetTask) -> dict[str, str]:
    """``ipv6 route P IF FE80::X``: the neighbour's link-local address on the exit interface,
    the usual IOS form (read off ``show ipv6 interface brief``)."""
    def rep(d: str, m: re.Match) -> str:
        ll = str(V6(_neighbor_ll(t, m.group(2)))).upper()
        return f"ipv6 route {m.group(1)} {_owner_iface(t, d, m.group(2))} {ll}"
    return edit(t, lambda d, x: re.sub(r"^ipv6 route (\S+) (\S+)$", lambda m: rep(d, m), x,
                                       flags=re.M))


def static_fully_specified(t: NetTask) -> dict[str, str]:
    return edit(t, lambda d, x: re.sub(
        r"^ipv6 route (\S+) (\S+)$",
        lambda m: f"ipv6 route {m.group(1)} {_owner_iface(t, d, m.group(2))} {m.group(2)} "
                  "name TO-LAN", x, flags=re.M))


def static_default(_d: str, text: str) -> str:
    """One default route where every static shares a next hop (the ends of a chain)."""
    hops = set(re.findall(r"^ipv6 route \S+ (\S+)$", text, flags=re.M))
    if len(hops) != 1:
        return text
    return re.sub(r"^ipv6 route .*\n?", "", text, flags=re.M).rstrip() + \
        f"\nipv6 route ::/0 {hops.pop()}"


def passive_default(_d: str, text: str) -> str:
    cfg = parse_config(text)[0]
    if cfg.ospf6 is None:
        return text
    active = [n for n, i in cfg.interfaces.items() if i.ipv6 and n not in cfg.ospf6.passive]
    head, mark, tail = text.partition("ipv6 router ospf")  # OSPFv2's passive lines stay
    tail = re.sub(r"^ passive-interface .*\n?", "", tail, flags=re.M)
    lines = "".join(f"\n no passive-interface {a}" for a in active)
    return head + re.sub(r"^(ipv6 router ospf \d+)$", r"\1\n passive-interface default" + lines,
                         mark + tail, count=1, flags=re.M)


def other_process_and_dotted_areas(_d: str, text: str) -> str:
    text = re.sub(r"^ ipv6 ospf 1 area (\d+)$",
                  lambda m: f" ipv6 ospf 7 area {ipaddress.IPv4Address(int(m.group(1)))}", text,
                  flags=re.M)
    return text.replace("ipv6 router ospf 1\n", "ipv6 router ospf 7\n")


def other_router_ids(_d: str, text: str) -> str:
    return re.sub(r"^ router-id (\d+)\.\d+\.\d+\.\d+$", r" router-id 10.0.0.\1", text,
                  flags=re.M)


def explicit_router_ids(d: str, text: str) -> str:
    rid = ipaddress.IPv4Address(zlib.crc32(d.encode()) | 1)  # any non-zero 32-bit ID

    return text.replace("ipv6 router ospf 1\n", f"ipv6 router ospf 1\n router-id {rid}\n")


def _wan_ifaces(text: str) -> list[str]:
    return re.findall(r"^interface (\S+)\n description to [^H]", text, flags=re.M)


def wan_eui64(_d: str, text: str) -> str:
    """Point-to-point links addressed by EUI-64: OSPFv3 meets over link-local addresses."""
    for name in _wan_ifaces(text):
        text = re.sub(rf"^(interface {re.escape(name)}\n(?: .*\n)*? ipv6 address \S+)::\d+/64$",
                      r"\1::/64 eui-64", text, count=1, flags=re.M)
    return text


def wan_link_local_only(_d: str, text: str) -> str:
    """No global address on the point-to-point links at all (``ipv6 enable``)."""
    for name in _wan_ifaces(text):
        text = re.sub(rf"^(interface {re.escape(name)}\n(?: .*\n)*?) ipv6 address \S+$",
                      r"\1 ipv6 enable", text, count=1, flags=re.M)
    return text


REWRITES = {
    "easy": [expanded, abbreviated, harmless, static_default],
    "medium": [expanded, abbreviated, harmless, passive_default, other_process_and_dotted_areas,
               other_router_ids, wan_eui64, wan_link_local_only],
    "hard": [expanded, abbreviated, harmless, passive_default, other_process_and_dotted_areas,
             explicit_router_ids, wan_eui64],
}
SEEDS = range(6)


@pytest.mark.parametrize("level", LEVELS)
def test_oracle_and_ios_equivalent_rewrites_score_one(level):
    for seed in SEEDS:
        t = task(level, seed)
        assert score(t, dict(t.reference)) == 1.0, seed
        for fn in REWRITES[level]:
            assert score(t, edit(t, fn)) == 1.0, (fn.__name__, seed)
        if level == "easy":
            assert score(t, static_via_link_local(t)) == 1.0, seed
            assert score(t, static_fully_specified(t)) == 1.0, seed


def test_the_oracle_scores_one_over_many_seeds_and_the_start_nothing():
    for level in LEVELS:
        for seed in range(6, 30):
            t = task(level, seed)
            assert score(t, dict(t.reference)) == 1.0, (level, seed)
            assert score(t, dict(t.start)) <= 0.1, (level, seed)


# --- the ipv6 family: wrong variants ------------------------------------------------------

def _no_unicast_routing(_d: str, text: str) -> str:
    return text.replace("ipv6 unicast-routing\n", "")


def _ospf6_where_static(_d: str, text: str) -> str:
    text = re.sub(r"^( ipv6 address .*)$", r"\1\n ipv6 ospf 1 area 0", text, flags=re.M)
    return text + "\nipv6 router ospf 1\n router-id 9.9.9.9"


def _wrong_prefix(t: NetTask) -> dict[str, str]:
    first = t.reference[0][0]
    return edit(t, lambda d, x: re.sub(r"^( ipv6 address [0-9A-F:]+?:)([0-9A-F]+)(::1/64)$",
                                       lambda m: m.group(1) + f"{int(m.group(2), 16) ^ 0x7:X}"
                                       + m.group(3), x, count=1, flags=re.M) if d == first else x)


def _exit_interface_only(t: NetTask) -> dict[str, str]:
    """No proxy ND in IPv6: an Ethernet exit interface alone sends to the destination."""
    return edit(t, lambda d, x: re.sub(r"^ipv6 route (\S+) (\S+)$",
                                       lambda m: f"ipv6 route {m.group(1)} "
                                                 f"{_owner_iface(t, d, m.group(2))}", x,
                                       flags=re.M))


def _no_router_id(_d: str, text: str) -> str:
    return re.sub(r"^ router-id .*\n?", "", text, flags=re.M)


def _one_router_in_area_1(t: NetTask) -> dict[str, str]:
    first = next(d for d, x in t.reference if re.search(r"^ ipv6 ospf \d+ area 0$", x, re.M))
    return edit(t, lambda d, x: re.sub(r"^( ipv6 ospf \d+ area) \d+$", r"\1 1", x, flags=re.M)
                if d == first else x)


def _v6_lans_not_passive(_d: str, text: str) -> str:
    head, mark, tail = text.partition("ipv6 router ospf")
    return head + mark + re.sub(r"^ passive-interface .*\n?", "", tail, flags=re.M)


def _statics_for_ospf6(t: NetTask) -> dict[str, str]:
    """Static routes along the reference's OSPFv3 paths: reachable, but not learned by OSPF."""
    plane = _plane(t)
    out = {}
    for d, text in t.start:
        lines = [f"ipv6 route {V6(r.net)}/{r.plen} {r.iface} {V6(r.fwd)}"
                 for r in map(RouteFields._make, plane.rib[d]) if r.proto.startswith("O")]
        out[d] = text.replace("hostname " + d, f"hostname {d}\nipv6 unicast-routing", 1) + \
            "\n" + "\n".join(lines)
    return out


def _same_router_id(_d: str, text: str) -> str:
    head, mark, tail = text.partition("ipv6 router ospf 1\n")
    return head + mark + " router-id 9.9.9.9\n" + re.sub(r"^ router-id .*\n", "", tail, flags=re.M)


def _ipv4_ospf_removed(_d: str, text: str) -> str:
    return re.sub(r"^router ospf \d+\n(?: .*\n)*", "", text, flags=re.M)


def _wrong_variants(level: str, t: NetTask) -> list[tuple[str, dict[str, str]]]:
    out = [("no ipv6 unicast-routing", edit(t, _no_unicast_routing)),
           ("a LAN prefix changed", _wrong_prefix(t))]
    if level == "easy":
        out += [("OSPFv3 where static only", edit(t, _ospf6_where_static)),
                ("BGP where static only", edit(t, lambda d, x: x + "\nrouter bgp 65001")),
                ("an IPv4 OSPF process where static only",
                 edit(t, lambda d, x: x + "\nrouter ospf 1\n router-id 9.9.9.9")),
                ("exit interface without a next hop", _exit_interface_only(t))]
    else:
        out += [("one router in area 1", _one_router_in_area_1(t)),
                ("LANs not passive", edit(t, _v6_lans_not_passive)),
                ("statics where OSPFv3", _statics_for_ospf6(t)),
                ("one router ID for all", edit(t, _same_router_id))]
    if level == "medium":
        out.append(("no router IDs on IPv6-only routers", edit(t, _no_router_id)))
    if level == "hard":
        out += [("every interface in area 0", edit(t, lambda d, x: re.sub(
                    r"^( ipv6 ospf \d+ area) \d+$", r"\1 0", x, flags=re.M))),
                ("IPv4 OSPF removed", edit(t, _ipv4_ospf_removed))]
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_violated_requirements_unchanged_and_empty_stay_under_the_bounds(level):
    for seed in SEEDS:
        t = task(level, seed)
        assert score(t, dict(t.start)) <= 0.1
        assert verify_submission(t, "").score == 0.0
        assert score(t, {d: f"hostname {d}" for d, _ in t.start}) <= 0.1
        for name, configs in _wrong_variants(level, t):
            assert configs != dict(t.reference), name  # the edit changed something
            assert score(t, configs) <= 0.5, (name, seed)


# --- the env: tools over IPv6 -------------------------------------------------------------

def test_an_episode_configures_ospfv3_with_apply_config_and_the_ipv6_tools():
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the ids)

    env = gym.make("textgyms/NetConfig-v4", family="ipv6", difficulty="medium").unwrapped
    env.reset(seed=4)
    t = env.task
    hosts = [d for d, k in t.devices if k == "host"]
    far = parse_config(dict(t.fixed)[hosts[-1]])[0].interfaces["Ethernet0"].ipv6[0].iface.ip
    obs, *_ = env.step(f'<ping device="{hosts[0]}">{far.exploded}</ping>')
    assert "Success rate is 0 percent" in obs  # no router advertises yet
    first = t.start[0][0]
    obs, _, _, _, info = env.step(f'<apply_config device="{first}">ipv6 router ospf 1'
                                  "</apply_config>")
    assert info["error"] == "invalid" and "% IPv6 routing not enabled" in obs
    for dev, text in t.reference:
        cfg = parse_config(text, dev)[0]
        lines = ["ipv6 unicast-routing"]
        for name, itf in cfg.interfaces.items():
            lines += [f"interface {name}", f" ipv6 ospf 1 area {itf.ospf6_area[1]}"]
        lines += ["ipv6 router ospf 1", f" router-id {cfg.ospf6.router_id}"]
        lines += [f" passive-interface {p}" for p in sorted(cfg.ospf6.passive)]
        body = "\n".join(lines)
        obs, _, _, _, info = env.step(f'<apply_config device="{dev}">{body}</apply_config>')
        assert info["error"] is None, obs
    obs, *_ = env.step(f'<show_ipv6_ospf_neighbor device="{first}"/>')
    assert "OSPFv3 Router with ID" in obs and "FULL" in obs
    obs, *_ = env.step(f'<ping device="{hosts[0]}">{far}</ping>')
    assert "Success rate is 100 percent (5/5)" in obs
    obs, *_ = env.step(f'<traceroute device="{hosts[0]}">{far}</traceroute>')
    assert obs.rstrip().endswith(f"{str(far).upper()} 1 msec 1 msec 1 msec")
    near = parse_config(dict(t.fixed)[hosts[0]])[0].interfaces["Ethernet0"].ipv6[0].iface.ip
    call = {"name": "test_flow", "arguments": {"src": str(near), "dst": far.exploded,
                                                "proto": "udp", "port": 53}}
    obs, _, _, _, info = env.step(json.dumps(call))
    assert info["error"] is None and "result: delivered" in obs
    assert f"-> [{str(far).upper()}]:53" in obs
    obs, _, term, _, info = env.step("<submit/>")
    assert term and info["score"] == 1.0
