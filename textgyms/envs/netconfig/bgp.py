"""BGP-4 as IOS runs it, for the paths a small network needs.

* A session comes up when both ends name each other (the address the peer sources from,
  the right ``remote-as``); eBGP peers must share a subnet (TTL 1), iBGP peers need a route.
* ``network P mask M`` originates P only if the RIB has exactly that prefix.
* Updates: eBGP prepends the sender's AS and sets the next hop to itself; iBGP keeps both
  (``next-hop-self`` changes the next hop) and is not re-advertised to iBGP peers; a path
  carrying the receiver's own AS is dropped. A neighbor's prefix-list, then its route-map
  (``match ip address prefix-list|ACL``, ``set local-preference``, ``set as-path
  prepend``) apply in and out (see :mod:`policy`).
* ``no bgp default ipv4-unicast``: only neighbors with ``neighbor A activate`` (in
  ``address-family ipv4``) exchange IPv4 routes; a neighbor activated for no family stays
  down, one activated for IPv6 alone comes up and carries no IPv4 prefixes. IPv6 unicast
  (neighbors by IPv6 address) is in :mod:`bgp6`.
* Best path: a reachable next hop, then the highest local preference (100 by default),
  locally originated, the shortest AS path, eBGP over iBGP, the lowest router ID.
* Installed as ``B`` with distance 20 (eBGP) or 200 (iBGP), next hop resolved recursively.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping
from typing import NamedTuple

from textgyms.envs.netconfig import policy
from textgyms.envs.netconfig.model import BgpNeighbor, DeviceConfig
from textgyms.envs.netconfig.routing import (
    MASKS,
    MASKS6,
    R_FWD,
    R_IFACE,
    R_NET,
    R_PLEN,
    R_PROTO,
    R_TAG,
    L3If,
    Route,
    lookup,
    ospf_area,
)

MAX_ROUNDS = 16


class Path(NamedTuple):
    net: int
    plen: int
    as_path: tuple[int, ...]
    local_pref: int
    next_hop: int  # 0: originated here
    ebgp: bool
    peer_rid: int
    peer: str  # the device it was learned from ("" if originated)


_new_path = functools.partial(tuple.__new__, Path)  # Path(*fields), every field given


class Session(NamedTuple):
    a: str
    b: str
    a_ip: int  # a's address as b sees it
    b_ip: int
    ebgp: bool


def router_id(cfg: DeviceConfig, l3: list[L3If]) -> int:
    if cfg.bgp is not None and cfg.bgp.router_id is not None:
        return int(cfg.bgp.router_id)
    loops = [i.ip for i in l3 if i.name.startswith("Loopback")]
    return max(loops or [i.ip for i in l3] or [0])


def _source(cfg: DeviceConfig, l3: list[L3If], fib, peer_ip: int,
            update_source: str | None) -> int | None:
    """The address a router sources its session to ``peer_ip`` from: the ``update-source``
    interface's (None if it has no address or is down), else the egress interface's."""
    if update_source is not None:
        return next((i.ip for i in l3 if i.name == update_source), None)
    for i in l3:
        if _on(peer_ip, i):
            return i.ip
    routes = lookup(fib, peer_ip) if fib is not None else []
    if routes:
        return next((i.ip for i in l3 if i.name == routes[0][R_IFACE]), None)
    return None


class Attempt(NamedTuple):
    """One configured neighbor and why its session is not up ("" when it is)."""

    dev: str
    peer_ip: int
    peer: str | None  # the device owning the address (None: nobody)
    state: str  # "Established", "Idle", "Idle (Admin)", "Active"
    why: str


def _one_way(cfg: DeviceConfig, n, l3: list[L3If], src: int | None, peer_ip: int,
             ebgp: bool, hops) -> str:
    """Why packets from ``src`` never reach ``peer_ip`` as a BGP session needs ("" if they
    do): the TCP connection must be delivered, and an eBGP session must pass the connected
    check (the peer on a shared subnet, unless ``ebgp-multihop`` 2 or more, or
    ``disable-connected-check``) and the TTL (1, or the multihop TTL) must cover the routers
    on the way."""
    if src is None:
        return "no source address (update-source interface down or without an address)"
    between = hops(src, peer_ip)
    if between is None:
        return f"no route from {_addr(src)} to {_addr(peer_ip)}"
    if not ebgp:
        return ""
    direct = any(_on(peer_ip, i) for i in l3)
    # The connected check stays on with TTL 1 (no ebgp-multihop, or ebgp-multihop 1).
    if (n.multihop or 1) < 2 and not direct and not n.disable_connected_check:
        return f"eBGP peer {_addr(peer_ip)} is not directly connected (no ebgp-multihop)"
    if between >= (n.multihop or 1):
        return f"TTL {n.multihop or 1} expires {between} router(s) before {_addr(peer_ip)}"
    return ""


def _on(ip: int, i: L3If) -> bool:
    """Whether address ``ip`` (IPv4, or IPv6 past 32 bits) is on interface ``i``'s subnet."""
    return ip & (MASKS6[i.plen] if ip >> 32 else MASKS[i.plen]) == i.net


Peers = dict[str, dict[int, BgpNeighbor]]


def peer_table(configs: Mapping[str, DeviceConfig]) -> Peers:
    """Each BGP router's neighbor settings in force (``Bgp.neighbor``: its own, else its
    peer-group's) by the int of the neighbor's address, for the addresses :func:`_addr`
    gives back from their ints: what ``neighbor(_addr(ip))`` finds, looked up once per
    BGP run (``Bgp.neighbor`` hashes an ipaddress object, and merges a peer-group's
    settings afresh, on every call; a session asks for each end's settings many times)."""
    out: Peers = {}
    for d, cfg in configs.items():
        b = cfg.bgp
        if b is None:
            continue
        table = out[d] = {}
        for ip in b.neighbors:
            k = int(ip)
            if _addr(k) == ip:
                table[k] = b.neighbor(ip)
    return out


def attempts(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]], fibs,
             owner: Mapping[int, str], hops, family: int = 4,
             peers: Peers | None = None) -> list[Attempt]:
    """Every configured neighbor's session state and the reason it is down: the neighbors
    named by IPv4 addresses (``family`` 4, over ``l3`` and ``fibs`` of IPv4) or by IPv6
    ones (6, over the IPv6 plane's). ``hops(src, dst)`` is the number of routers between
    two addresses (None: undeliverable); ``peers`` is :func:`peer_table` (built when not
    given)."""
    peers = peer_table(configs) if peers is None else peers
    out = []
    for a, cfg in configs.items():
        if cfg.bgp is None:
            continue
        for ip_b in cfg.bgp.neighbors:
            if ip_b.version != family:
                continue
            n = cfg.bgp.neighbor(ip_b)
            b = owner.get(int(ip_b))
            state, why = _state(configs, l3, fibs, a, n, b, hops, peers)
            out.append(Attempt(a, int(ip_b), b, state, why))
    return out


def _state(configs, l3, fibs, a: str, n, b: str | None, hops,
           peers: Peers) -> tuple[str, str]:
    cfg = configs[a]
    ip_b = int(n.ip)
    if n.remote_as is None:
        return "Idle", "no remote-as (neither on the neighbor nor on its peer-group)"
    if n.shutdown:
        return "Idle (Admin)", "neighbor shutdown"
    peer = configs.get(b) if b is not None else None
    if peer is None or peer.bgp is None:
        return "Active", f"nothing runs BGP at {_addr(ip_b)}"
    if n.remote_as != peer.bgp.asn:
        return "Idle", f"remote-as {n.remote_as} but {b} is in AS {peer.bgp.asn}"
    ebgp = cfg.bgp.asn != peer.bgp.asn
    src = _source(cfg, l3[a], fibs.get(a), ip_b, n.update_source)
    why = _one_way(cfg, n, l3[a], src, ip_b, ebgp, hops)
    if why:
        return "Active", why
    back = peers[b].get(src)  # peer.bgp.neighbor(_addr(src))
    if back is None:
        return "Active", f"{b} has no neighbor {_addr(src)} (the address sessions come from)"
    if back.remote_as != cfg.bgp.asn or back.shutdown:
        return "Active", f"{b} refuses the session from {_addr(src)}"
    their_src = _source(peer, l3[b], fibs.get(b), int(src), back.update_source)
    why = _one_way(peer, back, l3[b], their_src, int(src), ebgp, hops)
    if why or their_src != ip_b:
        return "Active", why or f"{b} sources its session from another address"
    if (n.password or None) != (back.password or None):
        return "Active", "TCP MD5 authentication fails (the passwords differ)"
    # (activated(cfg.bgp, n.ip) and activated(peer.bgp, _addr(src)): the settings in
    # force for those addresses are n and back)
    if not (_activated(cfg.bgp, n) and _activated(peer.bgp, back)):
        return "Idle", "no address family activated"
    return "Established", ""


def activated(b, ip) -> bool:
    """Whether neighbor ``ip`` is activated in some address family (IPv4 or IPv6 unicast):
    a neighbor activated in none never opens its session."""
    return b.active(ip) or b.active6(ip)


def _active4(b, n: BgpNeighbor | None) -> bool:
    """``b.active(ip)`` where ``n`` is ``b.neighbor(ip)``."""
    return n is not None and (n.activate if n.activate is not None else b.default_ipv4)


def _active6(n: BgpNeighbor | None) -> bool:
    """``b.active6(ip)`` where ``n`` is ``b.neighbor(ip)``."""
    return n is not None and bool(n.activate6)


def _activated(b, n: BgpNeighbor | None) -> bool:
    """:func:`activated` where ``n`` is ``b.neighbor(ip)``."""
    return _active4(b, n) or _active6(n)


def exchanges(configs, s: Session, family: int, peers: Peers | None = None) -> bool:
    """Whether a session carries ``family``'s prefixes: both ends activate that family for
    each other (a session up for IPv6 alone carries no IPv4 prefixes). IPv6 prefixes go
    over IPv6 sessions only: over an IPv4 one their next hop would be an IPv4-mapped
    address, which resolves to nothing here. ``peers``: :func:`peer_table`."""
    peers = peer_table(configs) if peers is None else peers
    n_ab, n_ba = peers[s.a].get(s.b_ip), peers[s.b].get(s.a_ip)
    if family == 4:
        return _active4(configs[s.a].bgp, n_ab) and _active4(configs[s.b].bgp, n_ba)
    return bool(s.b_ip >> 32) and _active6(n_ab) and _active6(n_ba)


def sessions(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]], fibs,
             tried: list[Attempt], peers: Peers | None = None) -> list[Session]:
    """Every established session, once per direction (``peers``: :func:`peer_table`)."""
    peers = peer_table(configs) if peers is None else peers
    out = []
    for t in tried:
        if t.state == "Established":
            cfg, peer = configs[t.dev], configs[t.peer]
            n = peers[t.dev].get(t.peer_ip)  # cfg.bgp.neighbor(_addr(t.peer_ip))
            src = _source(cfg, l3[t.dev], fibs.get(t.dev), t.peer_ip, n.update_source)
            out.append(Session(t.dev, t.peer, src, t.peer_ip, cfg.bgp.asn != peer.bgp.asn))
    return out


@functools.lru_cache(maxsize=4096)  # a compile converts each session's two ends many times
def _addr(ip: int) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address from its int: IPv6 past 32 bits (no neighbor has a 32-bit IPv6 one)."""
    return ipaddress.IPv6Address(ip) if ip >> 32 else ipaddress.IPv4Address(ip)


def _route_map(cfg: DeviceConfig, name: str | None, plist: str | None,
               path: Path) -> Path | None:
    """``path`` through a neighbor's prefix-list, then its route-map (None: denied); none
    configured permits as is, and so does a prefix-list that is not defined."""
    if plist is not None and plist in cfg.prefix_lists and \
            not policy.prefix_list_permits(cfg, plist, path.net, path.plen):
        return None
    if name is None:
        return path
    e = policy.route_map_entry(cfg, name, path.net, path.plen)
    if e is None:
        return None
    lp = e.local_pref if e.local_pref is not None else path.local_pref
    return Path(path.net, path.plen, e.prepend + path.as_path, lp, path.next_hop, path.ebgp,
                path.peer_rid, path.peer)


def _best(paths: list[Path], reachable) -> Path | None:
    ok = [p for p in paths if p.next_hop == 0 or reachable(p.next_hop)]
    if len(ok) < 2:  # most prefixes have one path: nothing to compare
        return ok[0] if ok else None
    return max(ok, key=lambda p: (p.local_pref, p.next_hop == 0, -len(p.as_path), p.ebgp,
                                  -p.peer_rid, -p.next_hop))


def compute(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]],
            ribs: Mapping[str, list[Route]], fibs, owner: Mapping[int, str], hops,
            family: int = 4, rids: Mapping[str, int] | None = None):
    """(session attempts, sessions, best paths per router: prefix -> Path) from the
    IGP/static RIBs of ``family`` (4, or 6 for multiprotocol BGP's IPv6 unicast: sessions
    to IPv6 neighbors, ``network`` of ``address-family ipv6``, prefixes exchanged where
    both ends activate the family; ``rids`` then gives the 32-bit router IDs)."""
    peers = peer_table(configs)
    tried = attempts(configs, l3, fibs, owner, hops, family, peers)
    sess = sessions(configs, l3, fibs, tried, peers)
    if rids is None:
        rids = {d: router_id(c, l3[d]) for d, c in configs.items() if c.bgp is not None}
    adj_in: dict[str, dict[tuple, Path]] = {d: {} for d in rids}
    for d in rids:
        have = {(r[R_NET], r[R_PLEN]) for r in ribs.get(d, [])}
        b = configs[d].bgp
        for net in b.networks if family == 4 else b.networks6:
            key = (int(net.network_address), net.prefixlen)
            if key in have:
                adj_in[d][(key, "")] = Path(*key, (), 100, 0, False, 0, "")
        for key in redistributed(configs[d], ribs.get(d, [])) if family == 4 else ():
            adj_in[d].setdefault((key, ""), Path(*key, (), 100, 0, False, 0, ""))
    carry = [s for s in sess if exchanges(configs, s, family, peers)]
    # Each session's neighbor settings at both ends, looked up once (not per path and round).
    ends = [_ends(configs, s, family, peers) for s in carry]
    best = _rounds(configs, carry, ends, adj_in, fibs, rids, family)
    return tried, sess, best


def _rounds(configs, carry: list[Session], ends: list, adj_in: dict[str, dict[tuple, Path]],
            fibs, rids: Mapping[str, int], family: int) -> dict[str, dict[tuple, Path]]:
    """Rounds of best-path selection and advertisement over the ``carry`` sessions (with
    their :func:`_ends`) until nothing changes: the best paths per router (``adj_in``, each
    router's adj-RIB-in keyed by (prefix, sender), is updated in place)."""
    best: dict[str, dict[tuple, Path]] = {}
    # A router's best paths are a pure function of its adj-RIB-in (its FIB is fixed here),
    # and what a session sends of the sender's best paths: a round selects again only where
    # an adj-RIB-in changed, and skips the sessions of senders whose best paths did not
    # (unless two sessions join the same pair of routers: both write the same slots).
    unique = len({(s.a, s.b) for s in carry}) == len(carry)
    dirty = set(rids)
    for _round in range(MAX_ROUNDS):
        best = {d: _select(adj_in[d], fibs.get(d)) if d in dirty else best[d] for d in rids}
        fresh, dirty = dirty, set()
        for s, (n_out, n_in) in zip(carry, ends):
            if unique and s.a not in fresh:
                continue  # it would send what it sent last round
            into, rid = adj_in[s.b], rids[s.a]
            for key, path in best[s.a].items():
                got = _advertise(configs, s, path, family, n_out, n_in)
                slot = (key, s.a)
                if got is None:
                    if into.pop(slot, None) is not None:
                        dirty.add(s.b)
                    continue
                got = _new_path((got[0], got[1], got[2], got[3], got[4], got[5], rid, got[7]))
                if into.get(slot) != got:
                    into[slot] = got
                    dirty.add(s.b)
        if not dirty:
            break
    return best


_CODES = {"static": ("S",), "connected": ("C",)}
# The OSPF route codes of each type ``redistribute ospf N match ...`` names.
_OSPF_CODES = {"internal": ("O", "O IA"), "external 1": ("O E1",), "external 2": ("O E2",),
               "nssa-external 1": ("O N1",), "nssa-external 2": ("O N2",)}


def _in_ospf(cfg: DeviceConfig, r: Route) -> bool:
    """Whether a connected route's interface runs OSPF (``redistribute ospf`` takes it)."""
    itf = cfg.interfaces.get(r[R_IFACE])
    return itf is not None and itf.ip is not None and \
        ospf_area(cfg, int(itf.ip.ip), r[R_IFACE]) is not None


def redistributed(cfg: DeviceConfig, rib: list[Route]) -> list[tuple[int, int]]:
    """The prefixes ``redistribute`` injects into BGP: static, connected or OSPF routes of
    the RIB, never the default route, through the route-map if one is named (``match tag``
    reads the route's tag). OSPF gives the route types of ``match ...``: by default, as on
    IOS, internal ones alone (intra- and inter-area routes and the connected subnets OSPF
    runs on); ``match external 1|2`` and ``nssa-external 1|2`` add the E and N routes."""
    out = set()
    for source, rmap in cfg.bgp.redistribute.items():
        ospf = source.startswith("ospf")
        types = cfg.bgp.redistribute_match.get(source, ("internal",)) if ospf else ()
        codes = sum((_OSPF_CODES[t] for t in types), ()) if ospf else _CODES[source]
        for r in rib:
            net, plen, proto, tag = r[R_NET], r[R_PLEN], r[R_PROTO], r[R_TAG]
            take = proto in codes or ("internal" in types and proto == "C"
                                      and _in_ospf(cfg, r))
            if take and plen and (
                    rmap is None or policy.route_map_entry(cfg, rmap, net, plen, tag)):
                out.add((net, plen))
    return sorted(out)


def _select(adj: dict[tuple, Path], fib) -> dict[tuple, Path]:
    by_prefix: dict[tuple, list[Path]] = {}
    for (key, _peer), p in adj.items():
        by_prefix.setdefault(key, []).append(p)

    seen: dict[int, bool] = {}  # next hop -> reachable (paths share next hops)

    def reachable(nh: int) -> bool:
        ok = seen.get(nh)
        if ok is None:
            ok = seen[nh] = fib is not None and bool(lookup(fib, nh))
        return ok

    out = {}
    for key, paths in sorted(by_prefix.items()):
        b = _best(paths, reachable)
        if b is not None:
            out[key] = b
    return out


def _ends(configs, s: Session, family: int = 4,
          peers: Peers | None = None) -> tuple[BgpNeighbor, BgpNeighbor]:
    """The neighbor settings ``s.a`` has for ``s.b`` (for IPv6 its family's next-hop-self
    alone: the family's policy is not modelled) and those ``s.b`` has for ``s.a``
    (``peers``: :func:`peer_table`, where the caller has it)."""
    if peers is None:
        n_out = configs[s.a].bgp.neighbor(_addr(s.b_ip))
        n_in = configs[s.b].bgp.neighbor(_addr(s.a_ip))
    else:
        n_out, n_in = peers[s.a].get(s.b_ip), peers[s.b].get(s.a_ip)
    if family == 6:
        n_out = BgpNeighbor(n_out.ip, next_hop_self=n_out.next_hop_self6)
    return n_out, n_in


def _advertise(configs, s: Session, path: Path, family: int = 4,
               n_out: BgpNeighbor | None = None, n_in: BgpNeighbor | None = None) -> Path | None:
    """What ``s.a`` sends ``s.b`` for its best ``path``, after both route-maps (IPv4; the
    IPv6 family's policy is not modelled); ``n_out``/``n_in`` are :func:`_ends` (looked up
    when not given)."""
    a, b = configs[s.a], configs[s.b]
    if path.peer and not path.ebgp and not s.ebgp:
        return None  # iBGP split horizon
    if n_out is None or n_in is None:
        n_out, n_in = _ends(configs, s, family)
    out = _route_map(a, n_out.route_map_out, n_out.prefix_list_out, path)
    if out is None:
        return None
    if s.ebgp:
        if b.bgp.asn in (a.bgp.asn,) + out.as_path:
            return None
        # (Paths built field by field: namedtuple._replace is slow, and this runs for
        # every best path on every session in every round.)
        out = _new_path((out.net, out.plen, (a.bgp.asn,) + out.as_path, 100, s.a_ip, s.ebgp,
                         out.peer_rid, s.a))
    else:
        nh = s.a_ip if (out.next_hop == 0 or n_out.next_hop_self) else out.next_hop
        out = _new_path((out.net, out.plen, out.as_path, out.local_pref, nh, s.ebgp,
                         out.peer_rid, s.a))
    if family == 6:
        return out
    return _route_map(b, n_in.route_map_in, n_in.prefix_list_in, out)


def to_routes(best: dict[tuple, Path], fib) -> list[Route]:
    """Best paths as RIB candidates (``B``), next hops resolved through ``fib``."""
    out = []
    for (net, plen), p in best.items():
        if p.next_hop == 0:
            continue
        via = lookup(fib, p.next_hop)
        if not via:
            continue
        r = via[0]
        fwd = p.next_hop if r[R_PROTO] == "C" else r[R_FWD]
        out.append((net, plen, "B", 20 if p.ebgp else 200, 0, p.next_hop, r[R_IFACE], fwd, 0))
    return out
