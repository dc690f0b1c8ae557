"""Interface, switchport, VLAN and ``router ospf`` sub-commands of the IOS-lite parser.

Each function applies one expanded line (keywords written out, see :mod:`vocab`) and returns
None or the message IOS would print for it.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket

from textgyms.envs.netconfig import ospf_opts
from textgyms.envs.netconfig.ipobj import address4, clash4, interface4
from textgyms.envs.netconfig.ipobj import network4 as network_of
from textgyms.envs.netconfig.model import DeviceConfig, Interface, Ospf
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID, IPV6_OFF, harmless

IFACE_TYPES = (
    "GigabitEthernet",
    "FastEthernet",
    "Ethernet",
    "TenGigabitEthernet",
    "Serial",
    "Loopback",
    "Vlan",
    "Null",
)
_IFNAME = re.compile(r"^([A-Za-z-]+)\s*(\d+(?:/\d+)*(?:\.\d+)?)$")


@functools.lru_cache(maxsize=4096)
def normalize_ifname(text: str) -> str | None:
    """``gi0/1`` -> ``GigabitEthernet0/1`` (any unambiguous prefix, as IOS accepts); None if
    the name is not an interface of the dialect."""
    m = _IFNAME.match(text.strip())
    if not m:
        return None
    prefix = m.group(1).lower()
    hits = [t for t in IFACE_TYPES if t.lower().startswith(prefix)]
    if prefix.startswith("te"):
        hits = ["TenGigabitEthernet"]
    if len(hits) != 1:
        return None
    return hits[0] + m.group(2)


# A dotted quad exactly as ``ipaddress`` accepts one is four decimal octets 0-255 without
# leading zeros: exactly the keys of this table. Such text is converted here, without
# ``ipaddress``'s slower general parser.
_OCTETS = {str(n): n for n in range(256)}
_OCTET = _OCTETS.get
# A netmask's int -> its prefix length (``ipaddress`` reads a mask as a netmask first).
_PLEN = {(0xFFFFFFFF << (32 - p)) & 0xFFFFFFFF: p for p in range(33)}


def _split_quad(text: str) -> int | None:
    """The int of a dotted quad ``ipaddress`` accepts; None for any other text (the caller
    then asks ``ipaddress``, which decides)."""
    try:
        a, b, c, d = text.split(".")
    except ValueError:  # not four parts
        return None
    a, b, c, d = _OCTET(a), _OCTET(b), _OCTET(c), _OCTET(d)
    if a is None or b is None or c is None or d is None:
        return None
    return (a << 24) | (b << 16) | (c << 8) | d


_PTON = socket.inet_pton
_FROM_BYTES = int.from_bytes


def pton_int(family: int, text: str) -> int | None:
    """The int of ``text`` as the C library's ``inet_pton`` reads an address of ``family``
    (``socket.AF_INET`` or ``AF_INET6``), or None where it refuses it."""
    try:
        return _FROM_BYTES(_PTON(family, text), "big")
    except (OSError, ValueError):  # not an address; NUL or a lone surrogate (ValueError)
        return None


# :func:`_split_quad` by inet_pton, which takes exactly the same texts (four decimal octets
# 0-255 without leading zeros) at a third of the cost.
_pton_quad = functools.partial(pton_int, socket.AF_INET)


# inet_pton's leniency differs between C libraries: it is used only where it agrees with
# _split_quad on the texts where they could differ.
_QUAD_PROBES = ("0.0.0.0", "255.255.255.255", "10.1.2.3", "01.2.3.4", "1.2.3.04", "1.2.3.00",
                "256.1.1.1", "1.2.3.256", "1.2.3", "1.2.3.4.5", "1.2.3.4.", ".1.2.3.4", "1..2.3",
                " 1.2.3.4", "1.2.3.4 ", "1.2.3.4\n", "0x1.2.3.4", "1.2.3.0x4", "+1.2.3.4",
                "-1.2.3.4", "1.2.3.4/24", "\uff11.2.3.4", "1.2.3.\u0664", "1.2.3.4\x00", "",
                "1234.1.1.1", "1.2.3.\ud800", "1e2.1.1.1", "1_0.1.1.1", "0.0.0.00")
_quad = _pton_quad if all(_pton_quad(t) == _split_quad(t) for t in _QUAD_PROBES) \
    else _split_quad


# The dotted quad of each netmask (the only text _quad reads as one) -> (prefix length, host
# bits), so that a line's netmask takes one lookup.
_NETMASKS = {".".join(str(m >> s & 255) for s in (24, 16, 8, 0)): (p, ~m & 0xFFFFFFFF)
             for m, p in _PLEN.items()}


@functools.lru_cache(maxsize=8192)
def parse_mask(addr: str, mask: str) -> ipaddress.IPv4Interface | str:
    """``A M`` -> an interface address, or the message IOS prints when it rejects it."""
    known = _NETMASKS.get(mask)
    a = _quad(addr) if known is not None else None
    if a is not None:  # the usual case: the same checks in ints, then the object
        plen, hostbits = known
        host = a & hostbits
        if plen < 31 and (host == 0 or host == hostbits):  # the subnet's own or broadcast address
            return f"Bad mask /{plen} for address {addr}"
        return interface4(a, plen)
    try:
        iface = ipaddress.IPv4Interface(f"{addr}/{mask}")
    except ValueError:
        return f"{INVALID} (bad address or mask {addr} {mask})"
    net = iface.network
    if net.prefixlen < 31 and iface.ip in (net.network_address, net.broadcast_address):
        return f"Bad mask /{net.prefixlen} for address {addr}"
    return iface


@functools.lru_cache(maxsize=4096)
def network4(addr: str, mask: str) -> ipaddress.IPv4Network | None:
    """``ipaddress.IPv4Network(f"{addr}/{mask}")`` (strict: no host bits), or None where that
    raises ValueError. A dotted quad and a netmask go by ints, the same object faster."""
    known = _NETMASKS.get(mask)
    a = _quad(addr) if known is not None else None
    if a is not None:  # ``ipaddress`` reads a mask as a netmask first
        # The only thing the strict constructor refuses in (int, prefix length): host bits.
        return None if a & known[1] else network_of(a, known[0])
    try:
        return ipaddress.IPv4Network(f"{addr}/{mask}")
    except ValueError:
        return None


@functools.lru_cache(maxsize=8192)
def ip4(text: str) -> ipaddress.IPv4Address | None:
    """A dotted quad, or None (cached: addresses are immutable and configs repeat them)."""
    n = _quad(text)
    if n is not None:
        return address4(n)
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        return None


def number(text: str, lo: int, hi: int) -> int | None:
    """A decimal in ``[lo, hi]``, or None."""
    return int(text) if text.isdigit() and lo <= int(text) <= hi else None


def route_options(args: list[str]) -> dict | str:
    """The tail of ``ip route``: ``[DISTANCE] [name NAME] [permanent] [tag N]``."""
    out: dict = {}
    i = 0
    while i < len(args):
        key = args[i]
        if "ad" not in out and number(key, 1, 255) is not None and not out:
            out["ad"] = int(key)
            i += 1
        elif key in ("name", "tag") and i + 1 < len(args):
            value = args[i + 1] if key == "name" else number(args[i + 1], 0, 4294967295)
            if value is None:
                return INVALID
            out[key] = value
            i += 2
        elif key == "permanent":
            out["permanent"] = True
            i += 1
        else:
            return INVALID
    return out


def _negation(words: list[str], mode: str, extra: list[str]):
    """(negated, the words after ``no``, outcome): outcome ``""`` when the line is a harmless
    one (kept verbatim in ``extra``), IOS's message for a bare ``no``, else None."""
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if not w:
        return neg, w, INCOMPLETE
    if harmless(mode, words):
        extra.append(" ".join(words))
        return neg, w, ""
    return neg, w, None


def iface_cmd(dev: DeviceConfig, name: str, words: list[str]) -> str | None:
    """Apply one interface sub-command; return None or IOS's message."""
    itf = dev.iface(name)
    neg, w, done = _negation(words, "if", itf.extra)
    if done is not None:
        return done or None
    if w == ["shutdown"]:
        itf.shutdown = not neg
    elif w[0] == "description":
        itf.description = "" if neg else " ".join(w[1:])
    elif w[0] == "ip":
        return _iface_ip(dev, itf, w, neg)

    elif w[0] == "switchport":
        return _switchport(dev, itf, w, neg)
    elif w[0] == "encapsulation" and len(w) == 3 and w[1] == "dot1q":
        vid = number(w[2], 1, 4094)
        if vid is None:
            return INVALID
        itf.dot1q = None if neg else vid
    elif w[0] == "bandwidth" and (neg or (len(w) == 2 and number(w[1], 1, 10**7))):
        itf.bandwidth = None if neg else int(w[1])
    else:
        return INVALID if len(w) > 1 or w[0] not in ("encapsulation", "bandwidth") else INCOMPLETE
    return None


def _iface_ip(dev: DeviceConfig, itf: Interface, w: list[str], neg: bool) -> str | None:
    key = w[1] if len(w) > 1 else ""
    if key == "address" and neg:
        itf.ip = None
    elif key == "address" and len(w) == 4:
        return iface_address(dev, itf, w[2], w[3])
    elif key == "access-group" and len(w) == 4 and w[3] in ("in", "out"):
        setattr(itf, f"acl_{w[3]}", None if neg else w[2])
    elif key == "nat" and len(w) == 3 and w[2] in ("inside", "outside"):
        itf.nat = None if neg else w[2]
    elif key == "proxy-arp" and len(w) == 2:
        itf.proxy_arp = not neg
    elif key == "ospf" and len(w) >= 3:
        return iface_ospf(dev, itf, w[2:], neg)
    else:
        short = len(w) < {"address": 4, "access-group": 4, "nat": 3}.get(key, 0)
        return INCOMPLETE if short or len(w) < 2 else INVALID
    return None


def iface_address(dev: DeviceConfig, itf: Interface, addr: str, mask: str) -> str | None:
    """``ip address ADDR MASK`` on ``itf``: None once set, or IOS's message (nothing set)."""
    parsed = parse_mask(addr, mask)
    if isinstance(parsed, str):
        return parsed
    # IOS refuses a subnet that overlaps one on another enabled interface.
    other = clash4(dev.interfaces.values(), itf.name, parsed)
    if other is not None:
        return f"% {parsed.network.network_address} overlaps with {other.name}"
    itf.ip = parsed
    return None


def iface_ospf(dev: DeviceConfig, itf: Interface, w: list[str], neg: bool,
               v3: bool = False) -> str | None:
    """The words after ``ip ospf`` (or, with ``v3``, ``ipv6 ospf``): ``cost N``,
    ``hello-interval N``, ``dead-interval N`` or ``PID area AREA``, which starts the process
    as on IOS (OSPFv3 only once ``ipv6 unicast-routing`` is on)."""
    v = "6" if v3 else ""
    if not v3 and w[0] in ospf_opts.OPTIONS:
        return ospf_opts.iface_option(itf, w, neg)
    field_ = {"cost": f"ospf{v}_cost", "hello-interval": f"ospf{v}_hello",
              "dead-interval": f"ospf{v}_dead"}
    if w[0] in field_:
        value = number(w[1], 1, 65535) if len(w) == 2 else None
        if value is None and not neg:
            return INVALID if len(w) == 2 else INCOMPLETE
        setattr(itf, field_[w[0]], None if neg else value)
        return None
    pid = number(w[0], 1, 65535)
    # ``area`` is the only keyword after the PID, so any prefix of it is unique (``ar``).
    area = parse_area(w[2]) if len(w) == 3 and "area".startswith(w[1]) else None
    if pid is None or area is None:
        return INVALID if len(w) >= 3 else INCOMPLETE
    if neg:
        setattr(itf, f"ospf{v}_area", None)
        return None
    if v3 and not dev.ipv6_routing:
        return IPV6_OFF
    if getattr(dev, f"ospf{v}") is None:
        setattr(dev, f"ospf{v}", Ospf(pid))
    setattr(itf, f"ospf{v}_area", (pid, area))
    return None


def parse_area(text: str) -> int | None:
    """An OSPF area as a decimal or dotted quad (``0`` and ``0.0.0.0`` are the backbone)."""
    small = _OCTETS.get(text)  # the usual case: a small number as written
    if small is not None:
        return small
    if text.isdigit():
        return number(text, 0, 2**32 - 1)
    a = ip4(text)
    return int(a) if a is not None else None


def _switchport(dev: DeviceConfig, itf: Interface, w: list[str], neg: bool) -> str | None:
    if len(w) == 1:
        return None  # "switchport" alone: layer-2 mode, already the default on switches
    if w[1] == "mode" and len(w) == 3 and w[2] in ("access", "trunk"):
        itf.mode = None if neg else w[2]
    elif w[1] == "access" and len(w) == 4:
        vid = number(w[3], 1, 4094)
        if vid is None:
            return INVALID
        itf.access_vlan = 1 if neg else vid
        # IOS: "% Access VLAN does not exist. Creating vlan N".
        dev.vlans.setdefault(vid, f"VLAN{vid:04d}")
    elif w[1:3] == ["trunk", "native"] and len(w) == 5:
        vid = number(w[4], 1, 4094)
        if vid is None:
            return INVALID
        itf.native_vlan = 1 if neg else vid
    elif w[1:4] == ["trunk", "allowed", "vlan"] and (len(w) >= 5 or neg):
        return _trunk_allowed(itf, w[4:], neg)
    else:
        complete = {"mode": 3, "access": 4}.get(w[1], 5)
        return INCOMPLETE if len(w) < complete else INVALID
    return None


def vlan_list(text: str) -> frozenset[int] | None:
    """``10,20,30-32`` -> the set of VLAN ids, or None if malformed."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = number(lo, 1, 4094), number(hi or lo, 1, 4094)
        if a is None or b is None or b < a:
            return None
        out.update(range(a, b + 1))
    return frozenset(out)


def _trunk_allowed(itf: Interface, args: list[str], neg: bool) -> str | None:
    if neg or args == ["all"]:
        itf.trunk_allowed = None
        return None
    op = args[0] if args[0] in ("add", "remove", "none", "except") else None
    if op == "none":
        itf.trunk_allowed = frozenset()
        return None
    vl = vlan_list(args[1] if op else args[0]) if len(args) == (2 if op else 1) else None
    if vl is None:
        return INVALID
    if op is None:
        itf.trunk_allowed = vl
        return None
    every = _ALL_VLANS
    current = itf.trunk_allowed if itf.trunk_allowed is not None else every
    itf.trunk_allowed = {"add": current | vl, "remove": current - vl, "except": every - vl}[op]
    return None


_ALL_VLANS = frozenset(range(1, 4095))


def ospf_cmd(dev: DeviceConfig, words: list[str], v3: bool = False) -> str | None:
    """Apply one ``router ospf`` (or, with ``v3``, ``ipv6 router ospf``) sub-command; return
    None or IOS's message. OSPFv3 has no ``network`` statements or redistribution here: its
    mode's keyword tree refuses them before this is called."""
    ospf = dev.ospf6 if v3 else dev.ospf
    neg, w, done = _negation(words, "ospf6" if v3 else "ospf", ospf.extra)
    if done is not None:
        return done or None
    if w[0] == "network":
        return ospf_network(ospf, w, neg)
    if w[0] == "passive-interface" and len(w) == 2:
        return ospf_passive(ospf, w[1], neg)
    if w[0] == "router-id" and len(w) == 2 and ip4(w[1]) is not None:
        ospf.router_id = None if neg else ip4(w[1])
    elif w[:2] == ["auto-cost", "reference-bandwidth"] and len(w) == 3:
        value = number(w[2], 1, 4294967)
        if value is None:
            return INVALID
        ospf.ref_bw = 100 if neg else value
    elif w[:2] == ["default-information", "originate"]:
        return _originate(ospf, w[2:], neg)
    elif w[0] == "area" and len(w) >= 3 and "stub".startswith(w[2]) and len(w[2]) > 1:
        return _stub(ospf, w, neg)
    elif w[0] == "area" and len(w) >= 3 and "authentication".startswith(w[2]) and not v3:
        area = parse_area(w[1])
        return INVALID if area is None else ospf_opts.area_auth(ospf, area, w[3:], neg)
    elif w[0] == "area" and len(w) >= 3 and len(w[2]) > 1 and "nssa".startswith(w[2]) \
            and not v3:
        return _nssa(ospf, w, neg)
    elif w[0] == "redistribute" and len(w) >= 2 and w[1] in ("static", "connected"):
        return _redistribute(ospf, w[1], w[2:], neg)
    elif w[0] == "redistribute" and len(w) >= 3 and w[1] == "bgp" and not v3:
        asn = number(w[2], 1, 4294967295)
        if asn is None:
            return INVALID
        ospf.bgp_asn = asn
        return _redistribute(ospf, "bgp", w[3:], neg)
    else:
        return INCOMPLETE if len(w) == 1 else INVALID
    return None


def ospf_network(ospf: Ospf, w: list[str], neg: bool) -> str | None:
    """``[no] network A WILDCARD area N`` (``w`` without the ``no``): None once applied, or
    IOS's message (nothing changed)."""
    if len(w) < 5:
        return INCOMPLETE
    a, wc, area = ip4(w[1]), ip4(w[2]), parse_area(w[4])
    if a is None or wc is None or w[3] != "area" or area is None or len(w) != 5:
        return INVALID
    entry = (a, wc, area)
    if neg:
        ospf.networks = [n for n in ospf.networks if n != entry]
    elif entry not in ospf.networks:
        ospf.networks.append(entry)
    return None


def _stub(ospf: Ospf, w: list[str], neg: bool) -> str | None:
    """``area A stub [no-summary]``: no external routes in the area, a default route from
    its ABRs instead (and, with ``no-summary`` on an ABR, no inter-area routes either)."""
    area = parse_area(w[1])
    tail = w[3:]  # ``no-s`` is the shortest unique prefix (``no-ext-capability`` is the other)
    if area is None or not (tail == [] or (len(tail) == 1 and tail[0].startswith("no-s")
                                           and "no-summary".startswith(tail[0]))):
        return INVALID
    if area == 0:
        return "% OSPF: Backbone can not be configured as stub area"
    if neg and tail:  # ``no area A stub no-summary`` keeps the area a stub
        ospf.stubs[area] = False
    elif neg:
        ospf.stubs.pop(area, None)
    else:
        ospf.nssa.pop(area, None)
        ospf.stubs[area] = bool(tail)
    return None


def ospf_passive(ospf: Ospf, arg: str, neg: bool) -> str | None:
    """``[no] passive-interface IF|default``: None once applied, or IOS's message (nothing
    changed)."""
    if arg == "default":
        ospf.passive_default = not neg
        ospf.passive.clear()
        ospf.active.clear()
        return None
    name = normalize_ifname(arg)
    if name is None:
        return INVALID
    if ospf.passive_default:
        (ospf.active.add if neg else ospf.active.discard)(name)
    else:
        (ospf.passive.discard if neg else ospf.passive.add)(name)
    return None


def _metric_opts(args: list[str], allowed: tuple[str, ...]) -> dict | str:
    """``metric N``, ``metric-type 1|2``, ``subnets``, ``always``, ``route-map NAME`` in any
    order."""
    out: dict = {}
    i = 0
    while i < len(args):
        key = args[i]
        if key in ("subnets", "always") and key in allowed:
            out[key] = True
            i += 1
        elif key == "route-map" and key in allowed and i + 1 < len(args):
            out[key] = args[i + 1]
            i += 2
        elif key in ("metric", "metric-type", "tag") and i + 1 < len(args):
            hi = {"metric": 16777214, "metric-type": 2, "tag": 4294967295}[key]
            value = number(args[i + 1], 0 if key == "tag" else 1, hi)
            if value is None:
                return INVALID
            out[key] = value
            i += 2
        else:
            return INVALID
    return out


def _nssa(ospf: Ospf, w: list[str], neg: bool) -> str | None:
    """``area A nssa [no-summary] [default-information-originate [metric N] [metric-type
    1|2]] [no-redistribution]`` (RFC 3101): no type-5 LSAs in the area; an ASBR inside it
    originates type-7 LSAs (``O N1``/``O N2``), which its ABR translates to type 5; the ABR
    sends a default only with ``default-information-originate`` (type 7) or ``no-summary``
    (a type-3 summary, and no other summaries)."""
    area = parse_area(w[1])
    if area is None:
        return INVALID
    if area == 0:
        return "% OSPF: Backbone can not be configured as NSSA area"
    flags = {"no-summary": False, "default-information-originate": False,
             "no-redistribution": False}
    rest = w[3:]
    while rest:
        hits = [f for f in flags if f.startswith(rest[0])] if len(rest[0]) > 3 else []
        if len(hits) != 1:
            if rest[0] in ("metric", "metric-type") and len(rest) > 1 and \
                    number(rest[1], 1, 16777214 if rest[0] == "metric" else 2) is not None:
                rest = rest[2:]  # the default's metric: the tasks never compare it
                continue
            return INVALID
        flags[hits[0]] = True
        rest = rest[1:]
    if neg:
        ospf.nssa.pop(area, None)
    else:
        ospf.stubs.pop(area, None)
        ospf.nssa[area] = (flags["no-summary"], flags["default-information-originate"],
                           flags["no-redistribution"])
    return None


def _originate(ospf: Ospf, args: list[str], neg: bool) -> str | None:
    opts = _metric_opts(args, ("always",))
    if isinstance(opts, str):
        return opts
    ospf.originate = None if neg else (
        bool(opts.get("always")), opts.get("metric", 1), opts.get("metric-type", 2)
    )
    return None


def _redistribute(ospf: Ospf, source: str, args: list[str], neg: bool) -> str | None:
    opts = _metric_opts(args, ("subnets", "route-map"))
    if isinstance(opts, str):
        return opts
    ospf.redistribute_maps.pop(source, None)
    if neg:
        ospf.redistribute.pop(source, None)
        return None
    ospf.redistribute_tags.pop(source, None)
    if "route-map" in opts:
        ospf.redistribute_maps[source] = opts["route-map"]
    if "tag" in opts:
        ospf.redistribute_tags[source] = opts["tag"]
    ospf.redistribute[source] = (
        bool(opts.get("subnets")), opts.get("metric", seed_metric(source)),
        opts.get("metric-type", 2)
    )
    return None


def seed_metric(source: str) -> int:
    """The metric OSPF gives redistributed routes by default: 1 for BGP, 20 otherwise."""
    return 1 if source == "bgp" else 20
