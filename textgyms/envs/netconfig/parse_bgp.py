"""``router bgp``, ``route-map`` and ``ip prefix-list`` commands of the IOS-lite parser.

Each function applies one expanded line and returns None or the message IOS would print.
"""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig.model import (
    Bgp,
    BgpNeighbor,
    DeviceConfig,
    PrefixListEntry,
    RouteMapEntry,
)
from textgyms.envs.netconfig.parse_if import ip4, number
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID

MAX_AS = 4294967295


def router_bgp(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    """``router bgp ASN`` (one BGP process per router, as on IOS)."""
    asn = number(w[2], 1, MAX_AS) if len(w) == 3 else None
    if asn is None:
        return INCOMPLETE if len(w) < 3 else INVALID
    if neg:
        dev.bgp = None if dev.bgp is not None and dev.bgp.asn == asn else dev.bgp
        return None
    if dev.bgp is not None and dev.bgp.asn != asn:
        return f"BGP is already running; AS is {dev.bgp.asn}"
    dev.bgp = dev.bgp or Bgp(asn)
    return None


def bgp_cmd(dev: DeviceConfig, words: list[str]) -> str | None:
    """One ``router bgp`` sub-command."""
    bgp = dev.bgp
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if not w:
        return INCOMPLETE
    if w[0] in ("synchronization", "auto-summary", "timers") or w[:2] == [
        "bgp", "log-neighbor-changes"
    ]:
        bgp.extra.append(" ".join(words))
        return None
    if w[:2] == ["bgp", "router-id"] and len(w) == 3 and ip4(w[2]) is not None:
        bgp.router_id = None if neg else ip4(w[2])
    elif w == ["bgp", "default", "ipv4-unicast"]:
        bgp.default_ipv4 = not neg
    elif w[0] in ("address-family", "exit-address-family"):
        return _address_family(w, neg)
    elif w[0] == "network" and len(w) in (2, 4):
        return _network(bgp, w, neg)
    elif w[0] == "neighbor" and len(w) >= 3:
        return _neighbor(bgp, w, neg)
    else:
        return INCOMPLETE if len(w) < 3 else INVALID
    return None


def _address_family(w: list[str], neg: bool) -> str | None:
    """``address-family ipv4 [unicast]`` ... ``exit-address-family``: the IPv4 unicast
    commands inside are the router-mode ones, so the parser stays in ``router bgp`` (other
    families are not modelled, and refused)."""
    if w[0] == "exit-address-family":
        return None if len(w) == 1 and not neg else INVALID
    if [x.lower() for x in w[1:]] in (["ipv4"], ["ipv4", "unicast"]) and not neg:
        return None
    return INCOMPLETE if len(w) == 1 else INVALID


def _network(bgp: Bgp, w: list[str], neg: bool) -> str | None:
    """``network A mask M`` (or ``network A``: its classful network)."""
    addr = ip4(w[1])
    if addr is None or (len(w) == 4 and (w[2] != "mask" or ip4(w[3]) is None)):
        return INVALID
    if len(w) == 4:
        mask = w[3]
    else:
        first = int(addr) >> 24
        mask = "255.0.0.0" if first < 128 else "255.255.0.0" if first < 192 else "255.255.255.0"
    try:
        net = ipaddress.IPv4Network(f"{addr}/{mask}")
    except ValueError:
        return "% Inconsistent address and mask"
    bgp.networks = [n for n in bgp.networks if n != net]
    if not neg:
        bgp.networks.append(net)
    return None


def _neighbor(bgp: Bgp, w: list[str], neg: bool) -> str | None:
    addr = ip4(w[1])
    if addr is None:
        return INVALID
    n = bgp.neighbors.get(addr)
    opt = w[2]
    if opt == "remote-as" and len(w) == 4 and number(w[3], 1, MAX_AS) is not None:
        if neg:
            bgp.neighbors.pop(addr, None)
            return None
        n = n or BgpNeighbor(addr)
        n.remote_as = int(w[3])
        bgp.neighbors[addr] = n
        return None
    if n is None:
        return "% Specify remote-as or peer-group commands first"
    if opt in ("route-map", "prefix-list") and len(w) == 5 and w[4] in ("in", "out"):
        setattr(n, f"{opt.replace('-', '_')}_{w[4]}", None if neg else w[3])
    elif opt == "next-hop-self" and len(w) == 3:
        n.next_hop_self = not neg
    elif opt == "activate" and len(w) == 3:
        n.activate = not neg
    elif opt in ("description", "update-source", "timers", "password") or _harmless(w):
        bgp.extra.append(" ".join(["no", *w] if neg else w))
    else:
        return INCOMPLETE if len(w) < 4 else INVALID
    return None


def _harmless(w: list[str]) -> bool:
    """Neighbor options that change no route here: keeping updates for a soft reset, and
    sending communities (no policy reads them)."""
    return w[2:] == ["soft-reconfiguration", "inbound"] or (
        w[2] == "send-community" and w[3:] in ([], ["both"], ["standard"], ["extended"]))


def route_map(dev: DeviceConfig, w: list[str], neg: bool) -> tuple[str | None, tuple | None]:
    """``route-map NAME [permit|deny] [SEQ]``: (message, the new mode)."""
    if len(w) < 2:
        return INCOMPLETE, None
    action = w[2] if len(w) > 2 else "permit"
    seq = number(w[3], 0, 65535) if len(w) > 3 else 10
    if action not in ("permit", "deny") or seq is None or len(w) > 4:
        return INVALID, None
    entries = dev.route_maps.setdefault(w[1], [])
    if neg:
        if len(w) == 2:
            dev.route_maps.pop(w[1], None)
        else:
            entries[:] = [e for e in entries if e.seq != seq]
        return None, None
    entry = next((e for e in entries if e.seq == seq), None)
    if entry is None:
        entry = RouteMapEntry(seq, action == "permit")
        entries.append(entry)
        entries.sort(key=lambda e: e.seq)
    entry.permit = action == "permit"
    return None, ("rmap", w[1], seq)


def rmap_cmd(dev: DeviceConfig, name: str, seq: int, words: list[str]) -> str | None:
    """``match ip address prefix-list P``, ``set local-preference N``, ``set as-path
    prepend AS...`` inside a route-map entry."""
    entry = next(e for e in dev.route_maps[name] if e.seq == seq)
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if w[:4] == ["match", "ip", "address", "prefix-list"] and len(w) == 5:
        entry.prefix_list = None if neg else w[4]
    elif w[:3] == ["match", "ip", "address"] and len(w) == 4:
        entry.acl = None if neg else w[3]
    elif w[:2] == ["set", "local-preference"] and len(w) == 3 and number(w[2], 0, MAX_AS):
        entry.local_pref = None if neg else int(w[2])
    elif w[:3] == ["set", "as-path", "prepend"] and len(w) > 3:
        asns = [number(x, 1, MAX_AS) for x in w[3:]]
        if None in asns:
            return INVALID
        entry.prepend = () if neg else tuple(asns)
    elif w[0] == "description":
        return None
    else:
        return INCOMPLETE if len(w) < 3 else INVALID
    return None


def prefix_list(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    """``ip prefix-list NAME [seq N] permit|deny P/L [ge G] [le L]``."""
    if len(w) < 3:
        return INCOMPLETE
    name, rest = w[2], w[3:]
    if neg and not rest:
        dev.prefix_lists.pop(name, None)
        return None
    entries = dev.prefix_lists.setdefault(name, [])
    seq = None
    if rest[:1] == ["seq"] and len(rest) > 1:
        seq, rest = number(rest[1], 1, 4294967294), rest[2:]
        if seq is None:
            return INVALID
    if len(rest) < 2 or rest[0] not in ("permit", "deny"):
        return INCOMPLETE if len(rest) < 2 else INVALID
    try:
        prefix = ipaddress.IPv4Network(rest[1])
    except ValueError:
        return INVALID
    bounds = _bounds(rest[2:], prefix.prefixlen)
    if isinstance(bounds, str):
        return bounds
    seq = seq if seq is not None else (max((e.seq for e in entries), default=0) // 5 + 1) * 5
    entry = PrefixListEntry(seq, rest[0] == "permit", prefix, *bounds)
    entries[:] = sorted([e for e in entries if e.seq != seq] + ([] if neg else [entry]),
                        key=lambda e: e.seq)
    return None


def _bounds(args: list[str], plen: int) -> tuple[int | None, int | None] | str:
    ge = le = None
    while args:
        if args[0] in ("ge", "le") and len(args) > 1 and number(args[1], 1, 32) is not None:
            if args[0] == "ge":
                ge = int(args[1])
            else:
                le = int(args[1])
            args = args[2:]
        else:
            return INVALID
    if (ge is not None and ge <= plen) or (le is not None and le < max(plen, ge or 0)):
        return "% Invalid prefix range"
    return ge, le
