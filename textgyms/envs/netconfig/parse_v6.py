"""IPv6 commands of the IOS-lite parser: ``ipv6 unicast-routing``, ``ipv6 route``, ``ipv6
router ospf`` (OSPFv3) and the interface commands ``ipv6 address`` (global, ``eui-64``,
``link-local``), ``ipv6 enable`` and ``ipv6 ospf``.

Addresses are parsed with :mod:`ipaddress`, so compressed, expanded and upper- or lower-case
forms of one address are the same address. IOS semantics kept here: several global
addresses per interface (``no ipv6 address`` alone removes them all); a link-local next hop
needs the exit interface; OSPFv3 (process or interface) needs ``ipv6 unicast-routing``
first, and IOS answers ``% IPv6 routing not enabled`` otherwise.
"""

from __future__ import annotations

import functools
import ipaddress
import socket

from textgyms.envs.netconfig.ipobj import address6, clash6, interface6
from textgyms.envs.netconfig.model import DeviceConfig, Interface, Ospf, StaticRoute, V6Addr
from textgyms.envs.netconfig.parse_if import (
    iface_ospf,
    normalize_ifname,
    number,
    pton_int,
    route_options,
)
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID, IPV6_OFF

LINK_LOCAL = ipaddress.IPv6Network("fe80::/10")


# The int of a text as inet_pton reads an IPv6 address (None where it refuses it): a tenth
# of the cost of ``ipaddress``'s parser.
_pton6 = functools.partial(pton_int, socket.AF_INET6)


# Where ``inet_pton`` takes a text, ``ipaddress`` takes it too, as the same int (every hex
# form: compressed or not, any case, up to four digits a group); it refuses a scope
# (``%eth0``), which then goes to ``ipaddress``, as does any text with an IPv4 tail. C
# libraries differ in such details: inet_pton is used only where, on these probes, every
# text it takes is the same address to ``ipaddress``.
_V6_PROBES = ("::", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8",
              "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6::7:8", ":1::2", "1::2:", ":::", "1:::2", ":",
              "12345::", "0001::", "00001::", "g::", "1:2:3:4:5:6:7", "fe80::1%1", "FFFF::ab",
              " ::1", "::1 ", "", "1::2::3", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1:2",
              "\uff11::", "1::\x00", "::0x1", "-1::", "+1::", "1_2::", "2001:DB8:0:0:0:0:0:1",
              "2001:db8::1/64", "fd00:0:0:1::", "::ffff", "0:0:0:0:0:0:0:0", "0::0", "1: :2")


def _v6_agrees(text: str) -> bool:
    """Whether ``inet_pton`` refuses ``text`` or reads it as ``ipaddress`` does."""
    n = _pton6(text)
    if n is None:
        return True
    try:
        return int(ipaddress.IPv6Address(text)) == n
    except ValueError:
        return False


_FAST6 = all(_v6_agrees(t) for t in _V6_PROBES)


def v6_int(text: str) -> int:
    """``int(ipaddress.IPv6Address(text))``, raising ValueError where that does."""
    n = _pton6(text) if _FAST6 and "." not in text else None
    return int(ipaddress.IPv6Address(text)) if n is None else n


def ip6(text: str) -> ipaddress.IPv6Address | None:
    """An IPv6 address in any textual form, or None."""
    n = _pton6(text) if _FAST6 and "." not in text else None
    if n is not None:
        return address6(n)
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def _v6_iface(text: str) -> ipaddress.IPv6Interface | None:
    """``X/L`` as an interface address, or None when ``ipaddress`` refuses it or it is no
    unicast address (see :func:`_unicast`) or link-local. The address text is parsed once
    (``IPv6Interface`` of the text parses it twice, the slow part of ``ipv6 address``)."""
    addr, sep, plen = text.partition("/")
    try:
        if sep and "/" not in plen and "%" not in addr and plen.isascii() and plen.isdigit() \
                and int(plen) <= 128:
            iface = interface6(v6_int(addr), int(plen))
        else:
            iface = ipaddress.IPv6Interface(text)
    except ValueError:
        return None
    n = int(iface)
    # _unicast and LINK_LOCAL in ints: multicast ff00::/8, ::, ::1, ::ffff:0:0/96, fe80::/10.
    if n >> 120 == 0xFF or n in (0, 1) or n >> 32 == 0xFFFF or n >> 118 == 0xFE80 >> 6:
        return None
    return iface


def _unicast(addr: ipaddress.IPv6Address) -> bool:
    """Whether ``addr`` can be an interface address or a next hop (not multicast, ``::``,
    ``::1`` or an IPv4-mapped address)."""
    return not (addr.is_multicast or addr.is_unspecified or addr.is_loopback
                or addr.ipv4_mapped is not None)


def global_ipv6(dev: DeviceConfig, w: list[str], neg: bool) -> tuple[str | None, tuple | None]:
    """A global ``ipv6 ...`` command (``w`` expanded, without ``no``): (message, new mode)."""
    if len(w) < 2:
        return INCOMPLETE, None
    if w[1] == "unicast-routing" and len(w) == 2:
        dev.ipv6_routing = not neg
        return None, None
    if w[1] == "route":
        return _route(dev, w[2:], neg), None
    if w[1:3] == ["router", "ospf"]:
        pid = number(w[3], 1, 65535) if len(w) == 4 else None
        if pid is None:
            return (INCOMPLETE if len(w) < 4 else INVALID), None
        if neg:
            dev.ospf6 = None
            return None, None
        if not dev.ipv6_routing:
            return IPV6_OFF, None
        if dev.ospf6 is None or dev.ospf6.pid != pid:
            dev.ospf6 = Ospf(pid)
        return None, ("ospf6",)
    return (INCOMPLETE if len(w) == 2 else INVALID), None


def _route(dev: DeviceConfig, args: list[str], neg: bool) -> str | None:
    """``ipv6 route P/L {NEXTHOP | INTERFACE [NEXTHOP]} [AD] [name N] [tag N] [permanent]``."""
    if len(args) < 2:
        return INCOMPLETE
    try:
        prefix = ipaddress.IPv6Network(args[0], strict=False) if "/" in args[0] else None
    except ValueError:
        prefix = None
    if prefix is None:
        return INVALID
    ifname = normalize_ifname(args[1])
    nh = ip6(args[1]) if ifname is None else (ip6(args[2]) if len(args) > 2 else None)
    if nh is None and ifname is None:
        return INVALID
    if nh is not None and not _unicast(nh):
        return INVALID
    if nh is not None and nh in LINK_LOCAL and ifname is None:
        return "% Interface has to be specified for a link-local nexthop"
    opts = route_options(args[2 + (ifname is not None and nh is not None):])
    if isinstance(opts, str):
        return opts
    if nh is not None and not neg and any(
        nh == a.iface.ip for i in dev.interfaces.values() for a in i.ipv6 if not a.eui64
    ):
        return "%Invalid next hop address (it's this router)"
    route = StaticRoute(prefix, nh, ifname, opts.get("ad", 1), opts.get("name", ""),
                         opts.get("permanent", False), opts.get("tag"))
    dev.routes6 = [r for r in dev.routes6 if (r.prefix, r.nexthop, r.iface)
                   != (prefix, nh, ifname)]
    if not neg:
        dev.routes6.append(route)
    return None


def iface_ipv6(dev: DeviceConfig, itf: Interface, w: list[str], neg: bool) -> str | None:
    """An interface ``ipv6 ...`` command (``w`` expanded, without ``no``)."""
    key = w[1] if len(w) > 1 else ""
    if key == "enable" and len(w) == 2:
        itf.ipv6_enable = not neg
    elif key == "address":
        return _address(dev, itf, w[2:], neg)
    elif key == "ospf" and len(w) >= 3:
        return iface_ospf(dev, itf, w[2:], neg, v3=True)
    else:
        return INCOMPLETE if len(w) < 3 and key in ("address", "ospf", "") else INVALID
    return None


def _address(dev: DeviceConfig, itf: Interface, args: list[str], neg: bool) -> str | None:
    """``ipv6 address X/L [eui-64]`` or ``ipv6 address FE80::X link-local``."""
    if not args:
        if not neg:
            return INCOMPLETE
        itf.ipv6, itf.ipv6_ll = [], None
        return None
    if len(args) == 2 and args[1] == "link-local":
        ll = ip6(args[0])
        if ll is None or ll not in LINK_LOCAL:
            return INVALID
        itf.ipv6_ll = None if neg else ll
        return None
    eui = len(args) == 2 and args[1] == "eui-64"
    if len(args) != 1 + eui or "/" not in args[0]:
        return INVALID
    addr = _v6_iface(args[0])
    if addr is None or (eui and addr.network.prefixlen > 64):
        return INVALID
    entry = V6Addr(ipaddress.IPv6Interface(f"{addr.network.network_address}/"
                                           f"{addr.network.prefixlen}") if eui else addr, eui)
    itf.ipv6 = [a for a in itf.ipv6 if a != entry]
    if neg:
        return None
    clash = _overlap(dev, itf.name, addr.network)
    if clash is not None:
        return clash
    itf.ipv6.append(entry)
    return None


def _overlap(dev: DeviceConfig, name: str, net: ipaddress.IPv6Network) -> str | None:
    """IOS refuses a prefix that overlaps one on another interface."""
    other = clash6(dev.interfaces.values(), name, net)
    return None if other is None else f"% {net.compressed.upper()} overlaps with {other.name}"


def add_address(dev: DeviceConfig, itf: Interface, text: str) -> bool:
    """``ipv6 address X/L`` (``text``) on ``itf`` as :func:`iface_ipv6` applies it, when it
    is accepted; False, with nothing changed, when it is not (the caller then asks
    :func:`iface_ipv6` for IOS's message)."""
    addr = _v6_iface(text) if "/" in text else None
    if addr is None or _overlap(dev, itf.name, addr.network) is not None:
        return False
    entry = V6Addr(addr, False)
    itf.ipv6 = [a for a in itf.ipv6 if a != entry]
    itf.ipv6.append(entry)
    return True
