"""``address-family ipv6 [unicast]`` under ``router bgp``: multiprotocol BGP for IPv6.

Modelled, as IOS does it: ``neighbor A|PG activate`` (IPv6 unicast is never on by default:
a neighbor exchanges IPv6 prefixes only where this family activates it), ``neighbor A|PG
next-hop-self [all]``, ``network P/L`` (originated when the IPv6 RIB has exactly that
prefix) and ``exit-address-family``. The family's other lines IOS takes (``neighbor ...
route-map``, ``redistribute ...``, ...) are kept and shown back but change nothing here
(see the docs page's table).
"""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig.model import Bgp
from textgyms.envs.netconfig.parse_if import ip4
from textgyms.envs.netconfig.parse_v6 import ip6
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID

# Lines of the family accepted as IOS takes them, without effect on the simulation.
_KEPT = ("redistribute", "maximum-paths", "synchronization", "auto-summary")
_KEPT_NEIGHBOR = ("route-map", "prefix-list", "next-hop-self", "soft-reconfiguration",
                  "send-community", "remove-private-as", "default-originate", "description")


def peer_addr(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """A neighbor named by address: a dotted quad or a global IPv6 address (None: a
    peer-group name, or a link-local address, which needs an interface and is refused)."""
    v4 = ip4(text)
    if v4 is not None:
        return v4
    # An IPv6 address has colons: a peer-group name is refused without ipaddress's parser.
    v6 = ip6(text) if ":" in text else None
    if v6 is None:
        return None
    return None if v6.is_link_local or v6.is_multicast or v6.is_unspecified else v6


def clear_ipv6_family(bgp: Bgp) -> None:
    """``no address-family ipv6``: every setting of the family goes."""
    bgp.networks6.clear()
    bgp.extra6.clear()
    for n in [*bgp.neighbors.values(), *bgp.groups.values()]:
        n.activate6 = None


def af6_cmd(bgp: Bgp, words: list[str], check) -> str | None:
    """One line of ``address-family ipv6`` mode (``words`` expanded): None or IOS's
    message. ``check(words)`` is what router mode would answer to a neighbor option kept
    here (run on a copy: it only validates the form)."""
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if not w:
        return INCOMPLETE
    if w[0] == "network":
        return _network6(bgp, w[1:], neg)
    if w[0] == "neighbor" and len(w) >= 3:
        return _neighbor6(bgp, w, neg, check)
    if w[0] in _KEPT and (len(w) > 1 or w[0] in ("synchronization", "auto-summary")):
        bgp.extra6.append(" ".join(words))
        return None
    return INCOMPLETE if len(w) < 2 else INVALID


def _network6(bgp: Bgp, args: list[str], neg: bool) -> str | None:
    """``network P/L`` (IOS takes the prefix in its canonical form)."""
    if len(args) != 1:
        return INCOMPLETE if not args else INVALID
    try:
        net = ipaddress.IPv6Network(args[0], strict=False) if "/" in args[0] else None
    except ValueError:
        net = None
    if net is None:
        return INVALID
    bgp.networks6 = [n for n in bgp.networks6 if n != net]
    if not neg:
        bgp.networks6.append(net)
    return None


def _neighbor6(bgp: Bgp, w: list[str], neg: bool, check) -> str | None:
    """``[no] neighbor A|PG activate`` and the kept neighbor options."""
    addr = peer_addr(w[1])
    n = bgp.neighbors.get(addr) if addr is not None else bgp.groups.get(w[1])
    opt = w[2].lower()
    hits = [k for k in ("activate", *_KEPT_NEIGHBOR) if k.startswith(opt)]
    if len(hits) != 1:
        return INVALID
    if n is None:
        return "% Specify remote-as or peer-group commands first" if addr else INVALID
    if hits[0] == "activate":
        if len(w) != 3:
            return INVALID
        n.activate6 = not neg
        return None
    if hits[0] == "next-hop-self":
        if w[3:] not in ([], ["all"]):
            return INVALID
        n.next_hop_self6 = None if neg else True
        return None
    w = [*w[:2], hits[0], *w[3:]]
    line = ["no", *w] if neg else w
    if hits[0] == "default-originate":
        if len(w) > 3:
            return INVALID
    else:
        reason = check(line)
        if reason is not None:
            return reason
    bgp.extra6.append(" ".join(line))
    return None
