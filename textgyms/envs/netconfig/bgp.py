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
  ``address-family ipv4``) exchange routes; a neighbor activated for no family stays down.
* Best path: a reachable next hop, then the highest local preference (100 by default),
  locally originated, the shortest AS path, eBGP over iBGP, the lowest router ID.
* Installed as ``B`` with distance 20 (eBGP) or 200 (iBGP), next hop resolved recursively.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import NamedTuple

from textgyms.envs.netconfig import policy
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.routing import L3If, Route, lookup, mask

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


def _source(l3: list[L3If], fib, peer_ip: int) -> int | None:
    """The address a router sources its session to ``peer_ip`` from."""
    for i in l3:
        if peer_ip & mask(i.plen) == i.net:
            return i.ip
    routes = lookup(fib, peer_ip) if fib is not None else []
    if routes:
        return next((i.ip for i in l3 if i.name == routes[0].iface), None)
    return None


def sessions(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]], fibs,
             owner: Mapping[int, str]) -> list[Session]:
    """Every established session, once per direction."""
    out = []
    for a, cfg in configs.items():
        if cfg.bgp is None:
            continue
        for ip_b, n in cfg.bgp.neighbors.items():
            b = owner.get(int(ip_b))
            peer = configs.get(b) if b is not None else None
            if peer is None or peer.bgp is None or n.remote_as != peer.bgp.asn:
                continue
            ebgp = cfg.bgp.asn != peer.bgp.asn
            direct = any(int(ip_b) & mask(i.plen) == i.net for i in l3[a])
            src = _source(l3[a], fibs.get(a), int(ip_b))
            if src is None or (ebgp and not direct):
                continue
            back = peer.bgp.neighbors.get(_addr(src))
            if back is None or back.remote_as != cfg.bgp.asn:
                continue
            if not (cfg.bgp.active(ip_b) and peer.bgp.active(_addr(src))):
                continue  # no address family activated: the session never comes up
            out.append(Session(a, b, src, int(ip_b), ebgp))
    return out


def _addr(ip: int) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(ip)


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
    return path._replace(local_pref=lp, as_path=e.prepend + path.as_path)


def _best(paths: list[Path], reachable) -> Path | None:
    ok = [p for p in paths if p.next_hop == 0 or reachable(p.next_hop)]
    if not ok:
        return None
    return max(ok, key=lambda p: (p.local_pref, p.next_hop == 0, -len(p.as_path), p.ebgp,
                                  -p.peer_rid, -p.next_hop))


def compute(configs: Mapping[str, DeviceConfig], l3: Mapping[str, list[L3If]],
            ribs: Mapping[str, list[Route]], fibs, owner: Mapping[int, str]):
    """(sessions, best paths per router: prefix -> Path) from the IGP/static RIBs."""
    sess = sessions(configs, l3, fibs, owner)
    rids = {d: router_id(c, l3[d]) for d, c in configs.items() if c.bgp is not None}
    adj_in: dict[str, dict[tuple, Path]] = {d: {} for d in rids}
    for d in rids:
        have = {(r.net, r.plen) for r in ribs.get(d, [])}
        for net in configs[d].bgp.networks:
            key = (int(net.network_address), net.prefixlen)
            if key in have:
                adj_in[d][(key, "")] = Path(*key, (), 100, 0, False, 0, "")
    best: dict[str, dict[tuple, Path]] = {}
    for _round in range(MAX_ROUNDS):
        best = {d: _select(adj_in[d], fibs.get(d)) for d in rids}
        changed = False
        for s in sess:
            for key, path in best[s.a].items():
                got = _advertise(configs, s, path)
                slot = (key, s.a)
                if got is None:
                    changed |= adj_in[s.b].pop(slot, None) is not None
                elif adj_in[s.b].get(slot) != got._replace(peer_rid=rids[s.a]):
                    adj_in[s.b][slot] = got._replace(peer_rid=rids[s.a])
                    changed = True
        if not changed:
            break
    return sess, best


def _select(adj: dict[tuple, Path], fib) -> dict[tuple, Path]:
    by_prefix: dict[tuple, list[Path]] = {}
    for (key, _peer), p in adj.items():
        by_prefix.setdefault(key, []).append(p)

    def reachable(nh: int) -> bool:
        return fib is not None and bool(lookup(fib, nh))

    out = {}
    for key, paths in sorted(by_prefix.items()):
        b = _best(paths, reachable)
        if b is not None:
            out[key] = b
    return out


def _advertise(configs, s: Session, path: Path) -> Path | None:
    """What ``s.a`` sends ``s.b`` for its best ``path``, after both route-maps."""
    a, b = configs[s.a], configs[s.b]
    if path.peer and not path.ebgp and not s.ebgp:
        return None  # iBGP split horizon
    n_out = a.bgp.neighbors[_addr(s.b_ip)]
    out = _route_map(a, n_out.route_map_out, n_out.prefix_list_out, path)
    if out is None:
        return None
    if s.ebgp:
        if b.bgp.asn in (a.bgp.asn,) + out.as_path:
            return None
        out = out._replace(as_path=(a.bgp.asn,) + out.as_path, next_hop=s.a_ip,
                           local_pref=100)
    else:
        nh = s.a_ip if (out.next_hop == 0 or n_out.next_hop_self) else out.next_hop
        out = out._replace(next_hop=nh)
    out = out._replace(ebgp=s.ebgp, peer=s.a)
    n_in = b.bgp.neighbors[_addr(s.a_ip)]
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
        fwd = p.next_hop if r.proto == "C" else r.fwd
        out.append(Route(net, plen, "B", 20 if p.ebgp else 200, 0, p.next_hop, r.iface, fwd))
    return out
