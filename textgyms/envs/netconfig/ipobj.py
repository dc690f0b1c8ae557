"""IPv4 and IPv6 address objects built from ints without ``ipaddress``'s general
constructors: the generators sample thousands of addresses per task and the parser reads one
on every ``ip address`` line.

``ipaddress.IPv4Interface((a, plen))`` re-parses its argument, builds a network through the
network constructor and checks it again: about ten times the work of setting the handful of
attributes it ends with. :func:`network4`, :func:`interface4` (and :func:`interface6`) set
exactly those attributes (the same names, values, order and shared netmask objects), so the
object compares, hashes, prints, pickles and copies as the constructor's would. That relies
on how CPython's ``ipaddress`` stores its state, so it is checked against the constructors at
import (:data:`FAST`); where a Python stores it differently every call takes the constructor.
tests/test_netconfig_parser.py and tests/test_netconfig_topologies.py compare them for every
prefix length.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from typing import Any

from textgyms.envs.netconfig.bounded import Memo

__all__ = ["FAST", "address4", "address6", "clash4", "clash6", "from_text", "interface4",
           "interface6", "network4", "span4"]

_Address = ipaddress.IPv4Address
_Network = ipaddress.IPv4Network
_Interface = ipaddress.IPv4Interface
_new = object.__new__
# ``ipaddress`` keeps one netmask object per prefix length and hands it to every network.
_NETMASK = [_Network((0, plen)).netmask for plen in range(33)]
_MASK = [(0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF for plen in range(33)]
_HOST = [~m & 0xFFFFFFFF for m in _MASK]
_Address6 = ipaddress.IPv6Address
_Network6 = ipaddress.IPv6Network
_Interface6 = ipaddress.IPv6Interface
_ALL6 = (1 << 128) - 1
_NETMASK6 = [_Network6((0, plen)).netmask for plen in range(129)]
_HOST6 = [(1 << (128 - plen)) - 1 for plen in range(129)]
_MASK6 = [_ALL6 ^ h for h in _HOST6]


@functools.lru_cache(maxsize=16384)
def from_text(cls: type, text: str) -> Any:
    """``cls(text)`` for an ``ipaddress`` class, cached: the verifier's checks name the same
    interfaces and prefixes in every submission of a task."""
    return cls(text)


def address4(n: int) -> ipaddress.IPv4Address:
    """``ipaddress.IPv4Address(n)`` for an int ``n`` in ``[0, 2**32)`` (the caller's check)."""
    if not FAST:
        return _Address(n)
    addr = _new(_Address)
    addr._ip = n
    return addr


# (network, prefix length) -> its network object, shared: a network is immutable, both ends
# of a link and the tasks drawn on one addressing plan name the same subnets, and every
# object kept in the parse memo is one more for the garbage collector to scan.
_NETWORKS = Memo(1024)


def network4(a: int, plen: int) -> ipaddress.IPv4Network:
    """``ipaddress.IPv4Network((a & mask, plen))``: the network of an int address ``a`` in
    ``[0, 2**32)`` with a prefix length in ``[0, 32]`` (the caller's checks); one shared
    object per network while it is among the last 1,024 asked for."""
    a &= _MASK[plen]
    if not FAST:
        return _Network((a, plen))
    key = (a, plen)
    net = _NETWORKS._d.get(key)
    if net is None:
        net = _new_network4(a, plen)
        _NETWORKS.put(key, net)
    return net


def _new_network4(a: int, plen: int) -> ipaddress.IPv4Network:
    net = _new(_Network)
    addr = _new(_Address)
    addr._ip = a
    net.network_address = addr
    net.netmask = _NETMASK[plen]
    net._prefixlen = plen
    if plen == 31:  # as IPv4Network.__init__: /31 and /32 list their hosts differently
        net.hosts = net.__iter__
    elif plen == 32:
        net.hosts = lambda: [_Address(a)]
    return net


def interface4(a: int, plen: int) -> ipaddress.IPv4Interface:
    """``ipaddress.IPv4Interface((a, plen))`` for an int address ``a`` in ``[0, 2**32)``
    and a prefix length in ``[0, 32]`` (the caller's checks)."""
    if not FAST:
        return _Interface((a, plen))
    net = network4(a, plen)
    itf = _new(_Interface)
    itf._ip = a
    itf.network = net
    itf.netmask = net.netmask
    itf._prefixlen = plen
    return itf


def span4(itf: ipaddress.IPv4Interface) -> tuple[int, int]:
    """The first and last address of ``itf``'s subnet, as ints (no objects built)."""
    lo = itf._ip & _MASK[itf._prefixlen]
    return lo, lo | _HOST[itf._prefixlen]


def clash4(interfaces: Iterable[Any], name: str,
           itf: ipaddress.IPv4Interface) -> Any | None:
    """The first of ``interfaces`` (``model.Interface``) other than ``name``, enabled, whose
    IPv4 subnet overlaps ``itf``'s; None if there is none."""
    plen = itf._prefixlen
    lo = itf._ip & _MASK[plen]
    hi = lo | _HOST[plen]
    for other in interfaces:
        ip = other.ip
        if ip is not None and not other.shutdown and other.name != name:
            o_lo = ip._ip & _MASK[ip._prefixlen]
            if o_lo <= hi and lo <= o_lo | _HOST[ip._prefixlen]:
                return other
    return None


def address6(n: int) -> ipaddress.IPv6Address:
    """``ipaddress.IPv6Address(n)`` for an int ``n`` in ``[0, 2**128)`` (the caller's check)."""
    if not FAST:
        return _Address6(n)
    addr = _new(_Address6)
    addr._ip = n
    addr._scope_id = None
    return addr


def interface6(a: int, plen: int) -> ipaddress.IPv6Interface:
    """``ipaddress.IPv6Interface((a, plen))`` for an int address ``a`` in ``[0, 2**128)``
    and a prefix length in ``[0, 128]`` (the caller's checks)."""
    if not FAST:
        return _Interface6((a, plen))
    net = _new(_Network6)
    net.network_address = address6(a & _MASK6[plen])
    net.netmask = netmask = _NETMASK6[plen]
    net._prefixlen = plen
    if plen == 127:  # as IPv6Network.__init__
        net.hosts = net.__iter__
    elif plen == 128:
        net.hosts = lambda: [_Address6(a)]
    itf = _new(_Interface6)
    itf._ip = a
    itf._scope_id = None
    itf.network = net
    itf.netmask = netmask
    itf._prefixlen = plen
    return itf


def clash6(interfaces: Iterable[Any], name: str, net: ipaddress.IPv6Network) -> Any | None:
    """The first of ``interfaces`` other than ``name``, enabled, with an IPv6 address
    (``model.V6Addr``) whose prefix overlaps ``net``; None if there is none.
    (``IPv6Network.overlaps`` in ints: aligned prefixes overlap when their ranges meet.)"""
    lo = net.network_address._ip
    hi = lo | _HOST6[net._prefixlen]
    for other in interfaces:
        if other.ipv6 and not other.shutdown and other.name != name:
            for entry in other.ipv6:
                itf = entry.iface
                o_lo = itf._ip & _MASK6[itf._prefixlen]
                if o_lo <= hi and lo <= o_lo | _HOST6[itf._prefixlen]:
                    return other
    return None


def _state(obj: Any) -> dict:
    """An address object's attributes: its ``__dict__`` (networks, interfaces) or its slots
    (addresses); a bound ``hosts`` is compared by name only."""
    if hasattr(obj, "__dict__"):
        return {k: (v if k != "hosts" else "hosts") for k, v in vars(obj).items()}
    slots = (s for c in type(obj).__mro__ for s in getattr(c, "__slots__", ()))
    return {s: getattr(obj, s) for s in slots if s != "__weakref__" and hasattr(obj, s)}


def _same(fast: Any, real: Any) -> bool:
    return (fast == real and type(fast) is type(real) and repr(fast) == repr(real)
            and hash(fast) == hash(real) and _state(fast) == _state(real))


def _fast_is_exact() -> bool:
    """Whether the shortcuts make what this Python's constructors make."""
    for a in (0, 0x0A2D0701, 0xAC10FE02, 0xFFFFFFFF):
        for plen in (0, 8, 24, 30, 31, 32):
            itf, ref = interface4(a, plen), _Interface((a, plen))
            if not (_same(itf, ref) and _same(itf.network, ref.network)
                    and _same(address4(a), _Address(a))):
                return False
        for plen in (0, 64, 127, 128):
            itf6, ref6 = interface6(a << 96 | a, plen), _Interface6((a << 96 | a, plen))
            if not (_same(itf6, ref6) and _same(itf6.network, ref6.network)):
                return False
    return True


FAST = True
FAST = _fast_is_exact()  # else every call above takes ipaddress's own constructor
