"""``router bgp``, ``route-map`` and ``ip prefix-list`` commands of the IOS-lite parser.

Each function applies one expanded line and returns None or the message IOS would print.
"""

from __future__ import annotations

import copy
import ipaddress

from textgyms.envs.netconfig.model import (
    Bgp,
    BgpNeighbor,
    DeviceConfig,
    PrefixListEntry,
    RouteMapEntry,
)
from textgyms.envs.netconfig.parse_bgp6 import af6_cmd, clear_ipv6_family, peer_addr
from textgyms.envs.netconfig.parse_if import ip4, network4, normalize_ifname, number
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


def bgp_mode_cmd(dev: DeviceConfig, words: list[str],
                 family: str | None) -> tuple[str | None, tuple | None]:
    """One line of ``router bgp`` mode (``family`` None) or of its ``address-family ipv4``
    or ``ipv6`` mode: (None or IOS's message, the mode it enters)."""
    w = words[1:] if words[0] == "no" else words
    if w and w[0] == "address-family" and family is None:
        fam = _address_family(w, words[0] == "no")
        if fam in (INVALID, INCOMPLETE):
            return fam, None
        if words[0] == "no":
            clear_ipv6_family(dev.bgp)
            return None, None
        return None, ("af", fam)
    if w and w[0] == "exit-address-family":
        return INVALID, None  # only in address-family mode, where the parser pops it
    if family == "ipv6":
        if w[:1] == ["neighbor"] and len(w) > 2 and len(w[2]) > 2 and any(
                k.startswith(w[2].lower()) for k in ("remote-as", "peer-group")):
            return bgp_cmd(dev, words), None  # a neighbor may be defined here too
        return af6_cmd(dev.bgp, words, lambda line: bgp_cmd(copy.deepcopy(dev), line)), None
    return bgp_cmd(dev, words), None


def bgp_cmd(dev: DeviceConfig, words: list[str]) -> str | None:
    """One ``router bgp`` sub-command (the IPv4 address-family ones are the same here)."""
    bgp = dev.bgp
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if not w:
        return INCOMPLETE
    if w[0] in ("synchronization", "auto-summary", "timers", "maximum-paths") or w[:2] == [
        "bgp", "log-neighbor-changes"
    ]:
        bgp.extra.append(" ".join(words))
        return None
    if w[:2] == ["bgp", "router-id"] and len(w) == 3 and ip4(w[2]) is not None:
        bgp.router_id = None if neg else ip4(w[2])
    elif w == ["bgp", "default", "ipv4-unicast"]:
        bgp.default_ipv4 = not neg
    elif w[0] == "network" and len(w) in (2, 4):
        return _network(bgp, w, neg)
    elif w[0] == "neighbor" and len(w) >= 3:
        return _neighbor(bgp, w, neg)
    elif w[0] == "redistribute" and len(w) >= 2:
        return _redistribute(bgp, w[1:], neg)
    else:
        return INCOMPLETE if len(w) < 3 else INVALID
    return None


def _address_family(w: list[str], neg: bool) -> str:
    """``address-family ipv4|ipv6 [unicast]``: the family ("ipv4" or "ipv6"), or IOS's
    message. The IPv4 unicast commands inside are the router-mode ones; the IPv6 ones are in
    :mod:`parse_bgp6` (other families, multicast or VPN, are not modelled, and refused)."""
    words = [x.lower() for x in w[1:]]
    if words[:1] in (["ipv4"], ["ipv6"]) and words[1:] in ([], ["unicast"]) and not (
            neg and words[0] == "ipv4"):  # the IPv4 family is the router's own: no removal
        return words[0]
    return INCOMPLETE if len(w) == 1 else INVALID


_REDIST_SOURCES = ("static", "connected", "ospf")


def _redistribute(bgp: Bgp, w: list[str], neg: bool) -> str | None:
    """``redistribute static|connected|ospf PID [match ...] [metric N] [route-map NAME]``
    into BGP (the metric becomes the MED, which no path selection here reads)."""
    hits = [x for x in _REDIST_SOURCES if x.startswith(w[0].lower())]
    if len(hits) != 1:
        return INVALID
    source, rest = hits[0], w[1:]
    if source == "ospf":
        pid = number(rest[0], 1, 65535) if rest else None
        if pid is None:
            return INCOMPLETE if not rest else INVALID
        source, rest = f"ospf {pid}", rest[1:]
        if rest[:1] == ["match"]:
            types, rest = _match_types(rest[1:])
            if not types:
                return INCOMPLETE if not rest else INVALID
            if not neg:
                bgp.redistribute_match[source] = types
        elif not neg:
            bgp.redistribute_match.pop(source, None)
    rmap = None
    while rest:
        if rest[0] == "route-map" and len(rest) >= 2:
            rmap, rest = rest[1], rest[2:]
        elif rest[0] == "metric" and len(rest) >= 2 and number(rest[1], 0, MAX_AS) is not None:
            rest = rest[2:]
        else:
            return INVALID
    if neg:
        bgp.redistribute.pop(source, None)
        bgp.redistribute_match.pop(source, None)
    else:
        bgp.redistribute[source] = rmap
    return None


OSPF_TYPES = ("internal", "external 1", "external 2", "nssa-external 1", "nssa-external 2")


def _match_types(words: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """The OSPF route types after ``match`` (``internal``, ``external [1|2]``,
    ``nssa-external [1|2]``; a kind without a number means both types) in IOS's order, and
    the words left."""
    got: set[str] = set()
    while words:
        kind = [k for k in ("internal", "external", "nssa-external")
                if k.startswith(words[0].lower())]
        if len(kind) != 1:
            break
        if kind[0] == "internal":
            got.add("internal")
            words = words[1:]
        elif words[1:2] in (["1"], ["2"]):
            got.add(f"{kind[0]} {words[1]}")
            words = words[2:]
        else:
            got.update({f"{kind[0]} 1", f"{kind[0]} 2"})
            words = words[1:]
    return tuple(t for t in OSPF_TYPES if t in got), words


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
    net = network4(str(addr), mask)
    if net is None:
        return "% Inconsistent address and mask"
    bgp.networks = [n for n in bgp.networks if n != net]
    if not neg:
        bgp.networks.append(net)
    return None


# Neighbor options kept verbatim: they change no route or session modelled here (a
# description, keepalive/hold timers, soft reconfiguration, sending communities, the BGP
# version, private-AS removal, logging).
_HARMLESS_NEIGHBOR = ("description", "timers", "soft-reconfiguration", "send-community",
                      "version", "remove-private-as", "log-neighbor-changes",
                      "advertisement-interval")
_NEIGHBOR_KEYWORDS = ("remote-as", "peer-group", "route-map", "prefix-list", "next-hop-self",
                      "activate", "password", "update-source", "ebgp-multihop", "shutdown",
                      "disable-connected-check") + _HARMLESS_NEIGHBOR


_NEIGHBOR_SET = frozenset(_NEIGHBOR_KEYWORDS)


def _neighbor(bgp: Bgp, w: list[str], neg: bool) -> str | None:
    """``neighbor {A | PG} OPTION ...`` (keywords may be abbreviated, as IOS allows)."""
    low = w[2].lower()
    hits = [low] if low in _NEIGHBOR_SET else [k for k in _NEIGHBOR_KEYWORDS if k.startswith(low)]
    if len(hits) > 1:
        return f'% Ambiguous command:  "neighbor {w[1]} {w[2]}"'
    if not hits:
        return INVALID
    w = [w[0], w[1], hits[0], *w[3:]]
    addr = peer_addr(w[1])
    if addr is None:
        return _group_cmd(bgp, w, neg)
    n = bgp.neighbors.get(addr)
    opt = w[2]
    if opt == "remote-as":
        if neg:
            bgp.neighbors.pop(addr, None)
            return None
        asn = number(w[3], 1, MAX_AS) if len(w) == 4 else None
        if asn is None:
            return INCOMPLETE if len(w) < 4 else INVALID
        n = n or BgpNeighbor(addr)
        n.remote_as = asn
        bgp.neighbors[addr] = n
        return None
    if opt == "peer-group" and len(w) == 4:
        if w[3] not in bgp.groups:
            return f"% Create the peer-group {w[3]} first"
        if neg:
            if n is not None:
                n.peer_group = None
            return None
        n = n or BgpNeighbor(addr)
        n.peer_group = w[3]
        bgp.neighbors[addr] = n
        return None
    if n is None:
        return "% Specify remote-as or peer-group commands first"
    return _option(bgp, n, w, neg)


def _group_cmd(bgp: Bgp, w: list[str], neg: bool) -> str | None:
    """``neighbor PG peer-group`` (create), and options on an existing group."""
    name = w[1]
    if w[2] == "peer-group" and len(w) == 3:
        if neg:
            bgp.groups.pop(name, None)
            for a in [a for a, n in bgp.neighbors.items() if n.peer_group == name]:
                if bgp.neighbors[a].remote_as is None:
                    del bgp.neighbors[a]  # a member that only existed through the group
                else:
                    bgp.neighbors[a].peer_group = None
        else:
            bgp.groups.setdefault(name, BgpNeighbor(None))
        return None
    g = bgp.groups.get(name)
    if g is None:
        return INVALID  # neither an address nor a peer-group: IOS marks the word
    if w[2] == "remote-as":
        asn = number(w[3], 1, MAX_AS) if len(w) == 4 else None
        if asn is None and not neg:
            return INCOMPLETE if len(w) < 4 else INVALID
        g.remote_as = None if neg else asn
        return None
    return _option(bgp, g, w, neg)


def _option(bgp: Bgp, n: BgpNeighbor, w: list[str], neg: bool) -> str | None:
    """A neighbor (or peer-group) option other than ``remote-as`` and ``peer-group``."""
    opt, args = w[2], w[3:]
    if opt in ("route-map", "prefix-list") and len(args) == 2 and args[1] in ("in", "out"):
        setattr(n, f"{opt.replace('-', '_')}_{args[1]}", None if neg else args[0])
    elif opt in ("next-hop-self", "activate", "shutdown", "disable-connected-check") and \
            args in ([], ["all"]) and (opt == "next-hop-self" or not args):
        # ``no neighbor A activate`` is an explicit off; the others go back to the default
        # (or to the peer-group's setting).
        on = (not neg) if opt == "activate" else (None if neg else True)
        setattr(n, opt.replace("-", "_"), on)
    elif opt == "password":
        return _password(n, args, neg)
    elif opt == "update-source" and (neg or len(args) == 1):
        name = normalize_ifname("".join(args)) if args else None
        if name is None and not neg:
            return INVALID
        n.update_source = None if neg else name
    elif opt == "ebgp-multihop" and len(args) <= 1:
        ttl = number(args[0], 1, 255) if args else 255
        if ttl is None:
            return INVALID
        n.multihop = None if neg else ttl
    elif _harmless(opt, args):
        bgp.extra.append(" ".join(["no", *w] if neg else w))
    else:
        return INCOMPLETE if not args else INVALID
    return None


def _harmless(opt: str, args: list[str]) -> bool:
    """A neighbor option of :data:`_HARMLESS_NEIGHBOR` in a form IOS accepts."""
    if opt == "soft-reconfiguration":
        return args == ["inbound"]
    if opt == "send-community":
        return args in ([], ["both"], ["standard"], ["extended"])
    if opt in ("remove-private-as", "log-neighbor-changes"):
        return args in ([], ["all"]) if opt == "remove-private-as" else not args
    if opt == "version":
        return args == ["4"]
    return opt in _HARMLESS_NEIGHBOR and bool(args)


PASSWORD_LEN = 25  # IOS: "a case-sensitive password of up to 25 characters"


def _password(n: BgpNeighbor, args: list[str], neg: bool) -> str | None:
    """``neighbor A password [0|7] KEY`` (the key may contain spaces; type 7 stays in its
    hidden form and equals only the same hidden form)."""
    if neg:
        n.password = None
        return None
    if args[:1] in (["0"], ["7"]) and len(args) > 1:
        key = " ".join(args[1:]) if args[0] == "0" else "7 " + " ".join(args[1:])
    else:
        key = " ".join(args)
    if not key:
        return INCOMPLETE
    if len(key) > PASSWORD_LEN and not key.startswith("7 "):
        return "% Password too long (max 25 characters)"
    n.password = key
    return None


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
    """A ``match`` or ``set`` clause inside a route-map entry: ``match ip address
    prefix-list P`` / ``ACL``, ``match tag N...``, ``set local-preference N``, ``set as-path
    prepend AS...``, ``set metric N``, ``set metric-type type-1|type-2``, ``set tag N``."""
    entry = next(e for e in dev.route_maps[name] if e.seq == seq)
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if w[:4] == ["match", "ip", "address", "prefix-list"] and len(w) == 5:
        entry.prefix_list = None if neg else w[4]
    elif w[:3] == ["match", "ip", "address"] and len(w) == 4:
        entry.acl = None if neg else w[3]
    elif w[:2] == ["match", "tag"] and len(w) > 2:
        tags = [number(x, 0, MAX_AS) for x in w[2:]]
        if None in tags:
            return INVALID
        entry.match_tag = () if neg else tuple(tags)
    elif w[0] == "set" and len(w) >= 2:
        return _set(entry, w[1:], neg)
    elif w[0] == "description":
        return None
    else:
        return INCOMPLETE if len(w) < 3 else INVALID
    return None


def _set(entry: RouteMapEntry, w: list[str], neg: bool) -> str | None:
    """The words after ``set``."""
    value = number(w[1], 0, MAX_AS) if len(w) == 2 else None
    if w[0] in ("local-preference", "metric", "tag") and (value is not None or neg):
        attr = {"local-preference": "local_pref"}.get(w[0], w[0])
        setattr(entry, attr, None if neg else value)
    elif w[:2] == ["as-path", "prepend"] and len(w) > 2:
        asns = [number(x, 1, MAX_AS) for x in w[2:]]
        if None in asns:
            return INVALID
        entry.prepend = () if neg else tuple(asns)
    elif w[0] == "metric-type" and len(w) == 2 and w[1] in ("type-1", "type-2"):
        entry.metric_type = None if neg else int(w[1][-1])
    else:
        return INCOMPLETE if len(w) < 2 else INVALID
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
