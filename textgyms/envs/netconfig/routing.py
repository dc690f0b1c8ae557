"""Layer 3 control plane: connected routes, OSPF (adjacencies, areas, inter-area and
external routes, equal-cost multipath), static routes, and the RIB chosen by administrative
distance. The OSPF computation itself is in :mod:`ospf`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from textgyms.envs.netconfig.model import DeviceConfig


class L3If(NamedTuple):
    """An interface that is up and has an address."""

    name: str
    ip: int
    net: int
    plen: int
    domain: tuple


class RouteFields(NamedTuple):
    """A route's fields by name, for code that reads a few routes (tests, debugging):
    ``RouteFields(*route)``. A route (a RIB entry) is a plain tuple of these fields in this
    order, read in the simulator by the ``R_*`` indices: the cyclic garbage collector stops
    tracking a tuple of ints and strings the first time it looks at it, but tracks a
    NamedTuple (a tuple subclass) for life, and the compiled networks the memos keep hold tens
    of thousands of routes, each scanned again at every full collection. ``nexthop`` is the
    next hop as displayed ("via ..."), ``fwd`` the one packets are sent to (None: the
    destination); ``proto`` is ``C``, ``S``, ``O``, ``O IA``, ``O E1``, ``O E2``, ``O N1``,
    ``O N2`` or ``B`` (IPv6 adds ``L``); ``tag`` is the route tag (``ip route ... tag N``, or
    the one an OSPF external carries; 0: none)."""

    net: int
    plen: int
    proto: str
    ad: int
    metric: int
    nexthop: int | None
    iface: str
    fwd: int | None
    tag: int


Route = tuple  # a plain tuple shaped as RouteFields
R_NET, R_PLEN, R_PROTO, R_AD, R_METRIC, R_NEXTHOP, R_IFACE, R_FWD, R_TAG = range(9)


MASKS = tuple((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF for plen in range(33))
MASKS6 = tuple(((1 << 128) - 1) ^ ((1 << (128 - plen)) - 1) for plen in range(129))


class Walk(NamedTuple):
    """The fate of one packet: ``status`` is delivered, denied, no_route, unreachable, loop
    or ttl; ``hops`` are (device, in interface, out interface); ``packet`` is the packet as
    last seen (after NAT); ``hits`` are the ACL entries that matched (device, acl, index);
    ``fanout`` is the number of equal-cost routes at each forwarding decision taken."""

    status: str
    hops: tuple[tuple[str, str | None, str | None], ...]
    packet: tuple
    hits: tuple[tuple[str, str, int], ...]
    reason: str
    at: str  # the device where the walk ended
    fanout: tuple[int, ...] = ()


def mask(plen: int) -> int:
    """The netmask of a prefix length, as an int."""
    return MASKS[plen]


def ospf_area(cfg: DeviceConfig, ip: int, ifname: str | None = None) -> int | None:
    """The OSPF area of an interface: ``ip ospf PID area A`` on the interface wins over the
    first ``network`` statement that matches its address (None: OSPF not enabled on it)."""
    if cfg.ospf is None:
        return None
    itf = cfg.interfaces.get(ifname) if ifname is not None else None
    if itf is not None and itf.ospf_area is not None and itf.ospf_area[0] == cfg.ospf.pid:
        return itf.ospf_area[1]
    for net, wc, area in cfg.ospf.networks:
        w = int(wc)
        if (ip | w) == (int(net) | w):
            return area
    return None


def network_ints(process) -> list[tuple[int, int, int]]:
    """An OSPF process's ``network`` statements as (address | wildcard, wildcard, area):
    an address ``ip`` matches the first one with ``ip | wildcard == address | wildcard``
    (as :func:`ospf_area` reads them; callers that test many interfaces convert once)."""
    out = []
    for net, wc, area in process.networks:
        w = int(wc)
        out.append((int(net) | w, w, area))
    return out


def network_area(nets: list[tuple[int, int, int]], ip: int) -> int | None:
    """The area of the first of :func:`network_ints` that matches ``ip`` (None: none)."""
    for net, w, area in nets:
        if (ip | w) == net:
            return area
    return None


def router_id(cfg: DeviceConfig, l3: list[L3If], process=None) -> int:
    """Configured router-id, else the highest loopback IPv4 address, else the highest IPv4
    address of an interface that is up (0: OSPF cannot start). ``process`` is the OSPF
    process (default ``router ospf``; OSPFv3 picks its 32-bit ID by the same rule)."""
    process = cfg.ospf if process is None else process
    if process is not None and process.router_id is not None:
        return int(process.router_id)
    loops = [i.ip for i in l3 if i.name.startswith("Loopback")]
    return max(loops or [i.ip for i in l3] or [0])


def connected_routes(ifs: list[L3If]) -> list[Route]:
    """The connected route of each up interface."""
    return [(i.net, i.plen, "C", 0, 0, None, i.name, None, 0) for i in ifs]


def lookup(fib: tuple, dst: int) -> Sequence[Route]:
    """Longest-prefix match: the best routes for ``dst`` (a FIB bucket; empty if none)."""
    for m, bucket in fib[2]:
        hit = bucket.get(dst & m)
        if hit:
            return hit
    return []


def static_routes(routes: Sequence, ifs: list[L3If], base: list[Route],
                  bits: int = 32) -> list[Route]:
    """Installed static routes (``ip route`` or, with ``bits`` 128, ``ipv6 route``): an exit
    interface must be up (``Null0`` always is); a next hop alone resolves recursively
    through the connected, OSPF and other static routes."""
    up = {i.name for i in ifs} | {"Null0"}
    out: list[Route] = []
    pending = []
    for r in routes:
        # (the ints of the prefix and next hop without ipaddress's Python-level accessors)
        net, plen = r.prefix.network_address._ip, r.prefix._prefixlen
        nh = r.nexthop._ip if r.nexthop is not None else None
        tag = r.tag or 0
        if r.iface is not None:
            if r.iface in up:
                out.append((net, plen, "S", r.ad, 0, nh, r.iface, nh, tag))
        else:
            pending.append((net, plen, r.ad, nh, tag))
    if not pending:  # nothing to resolve: skip building a table to resolve through
        return out
    for _round in range(3):  # recursion through other statics, bounded as IOS bounds it
        fib = build_fib(select(base + out), bits)
        left = []
        for net, plen, ad, nh, tag in pending:
            via = [v for v in lookup(fib, nh) if (v[R_NET], v[R_PLEN]) != (net, plen)]
            if via:
                for v in via:
                    fwd = nh if v[R_PROTO] == "C" else v[R_FWD]
                    out.append((net, plen, "S", ad, 0, nh, v[R_IFACE], fwd, tag))
            else:
                left.append((net, plen, ad, nh, tag))
        if len(left) == len(pending):
            break
        pending = left
    return out


def _best(candidates: list[Route]) -> dict[tuple[int, int], list[Route]]:
    """Per prefix, the candidates of the lowest administrative distance in their order."""
    best: dict[tuple[int, int], list[Route]] = {}
    get = best.get
    for r in candidates:  # (fields by index: this runs for every route of every compile)
        key = (r[0], r[1])
        cur = get(key)
        if cur is None or r[3] < cur[0][3]:
            best[key] = [r]
        elif r[3] == cur[0][3] and r not in cur:
            cur.append(r)
    return best


def select(candidates: list[Route]) -> list[Route]:
    """The RIB: for each prefix, the routes of the lowest administrative distance (all of
    them when several tie: equal-cost multipath)."""
    best = _best(candidates)
    return [r for key in sorted(best) for r in best[key]]


def build_fib(rib: list[Route], bits: int = 32) -> tuple:
    """Index a RIB by prefix length for longest-prefix match: (prefix lengths, table,
    [(netmask, routes by network)] longest first); ``bits`` 128 for IPv6."""
    masks = MASKS if bits == 32 else MASKS6
    table: dict[int, dict[int, list[Route]]] = {}
    for r in rib:
        plen = r[1]
        by_net = table.get(plen)
        if by_net is None:
            by_net = table[plen] = {}
        same = by_net.get(r[0])
        if same is None:
            by_net[r[0]] = [r]
        else:
            same.append(r)
    for by_net in table.values():  # buckets as tuples: untracked, as their routes are
        for net, same in by_net.items():
            by_net[net] = tuple(same)
    plens = sorted(table, reverse=True)
    return plens, table, [(masks[p], table[p]) for p in plens]


def rib_fib(candidates: list[Route]) -> tuple[list[Route], tuple]:
    """(:func:`select`, :func:`build_fib` of it) of IPv4 candidates in one pass over the
    prefixes: a RIB lists each prefix's routes together, so its FIB bucket is a tuple of them."""
    best = _best(candidates)
    rib: list[Route] = []
    table: dict[int, dict[int, tuple[Route, ...]]] = {}
    for key in sorted(best):
        routes = best[key]
        rib += routes
        by_net = table.get(key[1])
        if by_net is None:
            by_net = table[key[1]] = {}
        by_net[key[0]] = tuple(routes)
    plens = sorted(table, reverse=True)
    return rib, (plens, table, [(MASKS[p], table[p]) for p in plens])


def pick(routes: Sequence[Route], pkt: tuple, choices, fanout: list[int]) -> Route:
    """One of several equal-cost routes: the k-th decision of a walk takes ``choices[k]``
    (0 past its end), or without ``choices`` the one a per-destination CEF hash would."""
    if len(routes) == 1:
        return routes[0]
    k = len(fanout)
    fanout.append(len(routes))
    if choices is None:  # per-destination load sharing: a fixed hash of the addresses
        return routes[(pkt[0] ^ pkt[1] ^ (pkt[1] >> 8)) % len(routes)]
    return routes[choices[k] if k < len(choices) else 0]


def all_paths(walk: Callable[[tuple[int, ...]], Walk],
              limit: int = 64) -> list[tuple[tuple[int, ...], Walk]]:
    """Every path a packet may take over equal-cost routes (up to ``limit``): ``walk(ch)``
    replays one choice vector; each path comes with the vector that replays it."""
    out: list[tuple[tuple[int, ...], Walk]] = []
    stack: list[tuple[int, ...]] = [()]
    while stack and len(out) < limit:
        ch = stack.pop()
        w = walk(ch)
        out.append((ch, w))
        taken = ch + (0,) * (len(w.fanout) - len(ch))
        for k in range(len(ch), len(w.fanout)):
            stack += [taken[:k] + (alt,) for alt in range(1, w.fanout[k])]
    return out
