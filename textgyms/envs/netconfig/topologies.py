"""Topology templates with sampled address plans and hostnames: chain, star (one edge
router with several LANs), hub-and-spoke, two-tier campus and a small WAN (a ring with chords).

A :class:`Topo` lists devices, cables, per-interface addresses and descriptions, and hosts;
:func:`base_config` renders a device's addressing-only configuration, the starting point the
task families add features to.
"""

from __future__ import annotations

import ctypes
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from textgyms.envs.netconfig.ipobj import address4, interface4, network4

N = ipaddress.IPv4Network
I = ipaddress.IPv4Interface  # noqa: E741
SITES = ("NYC", "LON", "FRA", "SYD", "TOK", "PAR", "AMS", "SFO", "BER", "MAD", "OSL", "SEA")
GI = "GigabitEthernet0/{}"
FA = "FastEthernet0/{}"
ETH = "Ethernet0"


_MASKS = tuple((0xFFFFFFFF << (32 - p)) & 0xFFFFFFFF for p in range(33))


_LAST: tuple = (None, None, None, None)  # the last bit generator, its state, its functions


def _hooks(rng: np.random.Generator) -> tuple:
    """(bit generator, its state pointer, its next_uint32, its next_double) from numpy's
    documented ``BitGenerator.ctypes`` interface (built once per bit generator, and an env
    re-seeds one bit generator at every reset); kept for the last generator, which draws the
    whole task."""
    global _LAST
    bg = rng.bit_generator
    if _LAST[0] is not bg:
        c = bg.ctypes
        _LAST = (bg, ctypes.c_void_p(c.state_address), c.next_uint32, c.next_double)
    return _LAST


def _lemire(rng: np.random.Generator, lo: int, hi: int, m: int | None = None) -> int:
    # numpy's bounded draw for a range of at most 2**32 - 1 values (Lemire's method on the
    # bit generator's 32-bit outputs), made on the bit generator itself: a Generator call
    # costs about four times its one draw in argument handling (``m``: the first output
    # times the range, already drawn)
    _bg, state, next32, _next_double = _hooks(rng)
    n = hi - lo
    if m is None:
        m = next32(state) * n
    if m & 0xFFFFFFFF < n:  # rarely: reject the draws of the biased remainder
        threshold = (0x100000000 - n) % n
        while m & 0xFFFFFFFF < threshold:
            m = next32(state) * n
    return lo + (m >> 32)


def draw(rng: np.random.Generator, lo: int, hi: int | None = None) -> int:
    """``int(rng.integers(lo, hi))`` (``int(rng.integers(lo))`` without ``hi``): the same
    value, the generator left in the same state, at a fraction of the cost where this
    numpy is checked to draw so (:data:`_FAST_DRAW`)."""
    if hi is None:
        lo, hi = 0, lo
    n = hi - lo
    if not (_FAST_DRAW and 1 < n < 0xFFFFFFFF):
        return int(rng.integers(lo, hi))
    _bg, state, next32, _next_double = _LAST if _LAST[0] is rng.bit_generator else _hooks(rng)
    m = next32(state) * n  # as _lemire, inlined: a task draws a few dozen times
    if m & 0xFFFFFFFF < n:
        return _lemire(rng, lo, hi, m)
    return lo + (m >> 32)


def uniform(rng: np.random.Generator) -> float:
    """``rng.random()``: the bit generator's own next double (what ``random`` returns),
    without the generator method's argument handling."""
    if _FAST_DRAW:
        _bg, state, _next32, next_double = _hooks(rng)
        return next_double(state)
    return rng.random()


def _draw_is_integers() -> bool:
    """Whether :func:`draw` and :func:`uniform` give what the generator's methods give,
    with the same generator state after, for small ranges, ranges that reject often, and
    draws mixed with the generator's other calls (which share its buffered 32-bit half)."""
    bounds = [(0, 2), (0, 3), (1, 250), (9, 200), (100, 199), (0, 191), (5, 50),
              (0, 0xC0000001), (7, 0xFFFFFFF0), (0, 0x80000001)] * 6
    for seed in (1, 7, 2024):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for k, (lo, hi) in enumerate(bounds):
            if int(a.integers(lo, hi)) != draw(b, lo, hi):
                return False
            if k % 3 == 0 and a.random() != uniform(b):
                return False
            if k % 7 == 0 and a.permutation(9).tolist() != b.permutation(9).tolist():
                return False
        if a.bit_generator.state != b.bit_generator.state:
            return False
    return True


_FAST_DRAW = True
try:
    _FAST_DRAW = _draw_is_integers()  # else every draw asks the generator itself
except Exception:  # noqa: BLE001 - a numpy or Python without the interface: ask it
    _FAST_DRAW = False


def _floyd(rng: np.random.Generator, n: int, k: int) -> list[int]:
    # numpy's own sampling without replacement for a small population: Floyd's algorithm,
    # one bounded draw per pick, then a Fisher-Yates shuffle of the picks, all of them the
    # bounded draws ``integers`` makes (a tenth of the cost of ``choice``'s array set-up)
    out: list[int] = []
    seen: set[int] = set()
    for j in range(n - k, n):
        val = draw(rng, j + 1)
        if val in seen:
            val = j
        seen.add(val)
        out.append(val)
    for i in range(k - 1, 0, -1):
        j = draw(rng, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def _floyd_is_choice() -> bool:
    for seed, n, k in ((3, 191, 1), (5, 191, 2), (8, 12, 4), (13, 7, 7), (21, 180, 3)):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        if a.choice(n, size=k, replace=False).tolist() != _floyd(b, n, k) \
                or a.bit_generator.state != b.bit_generator.state:
            return False
    return True


_FLOYD = _floyd_is_choice()  # else this numpy samples differently: always ask it


def choose(rng: np.random.Generator, n: int, k: int) -> list[int]:
    """``rng.choice(n, size=k, replace=False).tolist()``: the same picks in the same order,
    the generator left in the same state, at a fraction of the cost where this numpy's
    ``choice`` is checked to draw as :func:`_floyd` does (populations up to 10000)."""
    if _FLOYD and 0 < k <= n <= 10_000:
        return _floyd(rng, n, k)
    return rng.choice(n, size=k, replace=False).tolist()


def net4(x: int, plen: int) -> N:
    """``IPv4Network((x, plen))`` (``x`` a network address), made cheaply (:mod:`ipobj`)."""
    return network4(x, plen)


def iface4(x: int, plen: int) -> I:
    """``IPv4Interface((x, plen))``, made cheaply (:mod:`ipobj`)."""
    return interface4(x, plen)


_OCTETS = tuple(str(k) for k in range(256))  # each octet's text, made once


def dotted(x: int) -> str:
    """An IPv4 address given as an int, as a dotted quad: ``str(IPv4Address(x))`` without
    building the object (the generator writes thousands per task; the octets' texts are
    looked up, half the cost of formatting four ints)."""
    o = _OCTETS
    return f"{o[x >> 24]}.{o[(x >> 16) & 255]}.{o[(x >> 8) & 255]}.{o[x & 255]}"


def net_text(net: N) -> str:
    """``str(net)`` ("A.B.C.D/N") by arithmetic: the generator writes every LAN's prefix."""
    return f"{dotted(net.network_address._ip)}/{net._prefixlen}"


def wildcard(net: N) -> str:
    """``A.B.C.D W.X.Y.Z``: a network's address and wildcard (host) mask, as OSPF ``network``
    and ACL lines write them (by arithmetic, no address objects)."""
    return f"{dotted(int(net.network_address))} {_WILD_TEXT[net.prefixlen]}"


_MASK_TEXT = tuple(dotted(m) for m in _MASKS)  # the dotted netmask of each prefix length
_WILD_TEXT = tuple(dotted(m ^ 0xFFFFFFFF) for m in _MASKS)  # and wildcard mask


def quad_int(text: str) -> int:
    """A dotted quad the generator wrote (:func:`dotted`) as an int, without ipaddress's
    general parser."""
    a, b, c, d = text.split(".")
    return (int(a) << 24) | (int(b) << 16) | (int(c) << 8) | int(d)


_OCTET_VALUE = {text: k for k, text in enumerate(_OCTETS)}  # "0".."255", no other spelling
_PLEN_VALUE = {str(k): k for k in range(33)}


def canonical_quad(text: str) -> int | None:
    """A dotted quad as an int where written exactly as ``str(IPv4Address)`` writes one
    (four octets 0-255 in decimal, no leading zeros), else None: the caller then asks
    ``ipaddress`` (its parsing, its errors). A dict lookup per octet is the whole check."""
    try:
        a, b, c, d = text.split(".")
        o = _OCTET_VALUE
        return o[a] << 24 | o[b] << 16 | o[c] << 8 | o[d]
    except (ValueError, KeyError):
        return None


def canonical_plen(text: str) -> int | None:
    """A prefix length 0-32 written as ``str`` writes it, else None."""
    return _PLEN_VALUE.get(text)


def netmask_text(plen: int) -> str:
    """The netmask of a prefix length as a dotted quad, as the generator writes it."""
    return _MASK_TEXT[plen]


def hostmask_text(plen: int) -> str:
    """The wildcard (host) mask of a prefix length as a dotted quad."""
    return _WILD_TEXT[plen]


def _base_int(base: str) -> int:
    """A plan's ``base`` (the first two octets, "10.45") as the int of ``base.0.0``."""
    a, b = base.split(".")
    return (int(a) << 24) | (int(b) << 16)


def own_addrs(t: Topo, dev: str) -> list[tuple[str, I]]:
    """``dev``'s (interface, address) pairs by interface name: the order of
    ``sorted(t.addr.items())`` restricted to ``dev``, without sorting every device's."""
    return sorted((i, a) for (d, i), a in t.addr.items() if d == dev)


TEST_NET_3 = 0xCB007100  # 203.0.113.0, the documentation block provider links come from
BRANCH_WANS = ipaddress.IPv4Network("192.168.250.0/24")  # WAN blocks of the fixed plans
LEGACY_WANS = ipaddress.IPv4Network("10.250.250.0/24")


def link_ends(net: N) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]:
    """The two usable addresses of a /30, as ``list(net.hosts())`` gives them."""
    lo = int(net.network_address)
    return address4(lo + 1), address4(lo + 2)


def host_ints(x: int, plen: int) -> range:
    """The usable addresses of network ``x``/``plen`` as ints, as ``hosts()`` lists them."""
    hi = x | ((1 << (32 - plen)) - 1)  # the broadcast, by arithmetic
    return range(x + 1, hi) if plen < 31 else range(x, hi + 1)


class Hosts(Sequence):
    """``list(net.hosts())`` without building it: the usable addresses of ``net`` (all of a
    /31 or /32, as ``hosts()``), each made when indexed. A /24 has 254; a task reads two."""

    def __init__(self, net: ipaddress.IPv4Network) -> None:
        self.ints = host_ints(int(net.network_address), net.prefixlen)

    def __len__(self) -> int:
        return len(self.ints)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [ipaddress.IPv4Address(x) for x in self.ints[k]]
        return ipaddress.IPv4Address(self.ints[k])


@dataclass
class Topo:
    """Devices (name -> kind), cables, addresses and hosts of one sampled network."""

    name: str
    kinds: dict[str, str] = field(default_factory=dict)
    links: list[tuple[tuple[str, str], tuple[str, str]]] = field(default_factory=list)
    addr: dict[tuple[str, str], I] = field(default_factory=dict)
    desc: dict[tuple[str, str], str] = field(default_factory=dict)
    hosts: dict[str, tuple[I, ipaddress.IPv4Address]] = field(default_factory=dict)
    lans: list[tuple[str, str, N]] = field(default_factory=list)  # (router, iface, subnet)
    wans: list[tuple[str, str, str, str, N]] = field(default_factory=list)

    def link(self, a: str, ai: str, b: str, bi: str) -> None:
        self.links.append(((a, ai), (b, bi)))
        self.desc.setdefault((a, ai), f"to {b} {bi}")
        self.desc.setdefault((b, bi), f"to {a} {ai}")

    def routers(self) -> list[str]:
        return [d for d, k in self.kinds.items() if k in ("router", "l3switch")]


class Plan:
    """Draws distinct /24 LANs and /30 WAN links from one sampled private block."""

    def __init__(self, rng: np.random.Generator) -> None:
        style = draw(rng, 3)
        if style == 0:
            self.base = f"10.{draw(rng, 1, 250)}"
        elif style == 1:
            self.base = f"172.{draw(rng, 16, 32)}"
        else:
            self.base = f"10.{draw(rng, 100, 200)}"
        # permuting 0..198 and adding 1 draws exactly what permuting 1..199 draws (added to
        # the 40 kept, as ints: cheaper than numpy's slice arithmetic)
        self.octets = [x + 1 for x in rng.permutation(199)[:40].tolist()]
        self.wan_block = net4(self._base_int | draw(rng, 200, 255) << 8, 24)
        self.wan_next = 0
        self.rng = rng

    @property
    def base(self) -> str:
        """The first two octets of the plan's LANs ("10.45"); families may set their own."""
        return self._base

    @base.setter
    def base(self, text: str) -> None:
        self._base, self._base_int = text, _base_int(text)  # read as an int once, not per LAN

    def lan(self, plen: int = 24) -> N:
        # the /24 (or its first subnet of length plen), made from ints instead of parsed text
        return net4(self._base_int | self.octets.pop() << 8, max(plen, 24))

    def wan(self) -> N:
        block = self.wan_block  # its /30s in order, as subnets(new_prefix=30) lists them
        if self.wan_next >= 1 << (30 - block.prefixlen):
            raise IndexError("the plan's WAN block has no /30 left")
        net = net4(int(block.network_address) + 4 * self.wan_next, 30)
        self.wan_next += 1
        return net


def hostnames(rng: np.random.Generator, n: int, kind: str = "R") -> list[str]:
    """``R1..Rn`` or site-prefixed names such as ``FRA-R1``."""
    if uniform(rng) < 0.5:
        return [f"{kind}{i + 1}" for i in range(n)]
    sites = [SITES[k] for k in rng.permutation(len(SITES))[:n].tolist()]  # as of SITES
    return [f"{s}-{kind}1" for s in sites]


def add_lan(
    t: Topo,
    rng: np.random.Generator,
    plan: Plan,
    router: str,
    iface: str,
    hosts: list[str],
    gw_last: bool = False,
) -> N:
    """A LAN on ``router``'s ``iface`` with ``hosts`` (one per cable, so one host when the
    router port is cabled to it directly); the gateway is the first (or last) usable address."""
    net = plan.lan()
    plen = net.prefixlen
    addrs = host_ints(int(net.network_address), plen)
    gw_int = addrs[-1] if gw_last else addrs[0]
    gw = address4(gw_int)
    t.addr[(router, iface)] = iface4(gw_int, plen)
    t.lans.append((router, iface, net))
    # choosing from 191 and adding 9 draws exactly what choosing from arange(9, 200) draws
    picks = sorted(x + 9 for x in choose(rng, 191, len(hosts)))
    for h, k in zip(hosts, picks):
        t.kinds[h] = "host"
        t.hosts[h] = (iface4(addrs[k], plen), gw)
        t.link(router, iface, h, ETH)
    return net


def add_wan(t: Topo, plan: Plan, a: str, ai: str, b: str, bi: str) -> N:
    net = plan.wan()
    lo = int(net.network_address)  # a /30: its two usable addresses
    t.addr[(a, ai)] = iface4(lo + 1, 30)
    t.addr[(b, bi)] = iface4(lo + 2, 30)
    t.wans.append((a, ai, b, bi, net))
    t.link(a, ai, b, bi)
    return net


def chain(rng: np.random.Generator, n: int) -> Topo:
    """R1 - R2 - ... - Rn, a LAN with one host on each end router (and on middle ones)."""
    t, plan = Topo("chain"), Plan(rng)
    names = hostnames(rng, n)
    for r in names:
        t.kinds[r] = "router"
    for k in range(n - 1):
        add_wan(t, plan, names[k], GI.format(1), names[k + 1], GI.format(2))
    for k, r in enumerate(names):
        add_lan(t, rng, plan, r, GI.format(0), [f"H{k + 1}"])
    return t


def hub_spoke(rng: np.random.Generator, n: int) -> Topo:
    """A hub router with ``n`` spokes; each router has a LAN with one host."""
    t, plan = Topo("hub-and-spoke"), Plan(rng)
    names = hostnames(rng, n + 1)
    for r in names:
        t.kinds[r] = "router"
    for k, spoke in enumerate(names[1:], 1):
        add_wan(t, plan, names[0], GI.format(k), spoke, GI.format(1))
    for k, r in enumerate(names):
        add_lan(t, rng, plan, r, GI.format(0), [f"H{k + 1}"])
    return t


def wan(rng: np.random.Generator, n: int, chords: int = 1) -> Topo:
    """A ring of ``n`` routers plus ``chords`` extra links; a LAN with a host on each."""
    t, plan = Topo("small-wan"), Plan(rng)
    names = hostnames(rng, n)
    port = {r: 1 for r in names}
    for r in names:
        t.kinds[r] = "router"

    def connect(a: str, b: str) -> None:
        add_wan(t, plan, a, GI.format(port[a]), b, GI.format(port[b]))
        port[a] += 1
        port[b] += 1

    for k in range(n):
        connect(names[k], names[(k + 1) % n])
    pairs = [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 2 :]
        if (a, b) != (names[0], names[-1])
    ]
    for idx in rng.permutation(len(pairs))[:chords]:
        connect(*pairs[int(idx)])
    for k, r in enumerate(names):
        add_lan(t, rng, plan, r, GI.format(0), [f"H{k + 1}"])
    return t


def star(rng: np.random.Generator, lans: int) -> Topo:
    """One edge router (a firewall) with ``lans`` user LANs and a server LAN."""
    t, plan = Topo("star"), Plan(rng)
    fw = hostnames(rng, 1, "FW")[0]
    t.kinds[fw] = "router"
    for k in range(lans):
        add_lan(t, rng, plan, fw, GI.format(k), [f"PC{k + 1}"])
    add_lan(t, rng, plan, fw, GI.format(lans), ["SRV1"])
    return t


def _address_line(a: I) -> str:
    return f" ip address {dotted(a._ip)} {_MASK_TEXT[a._prefixlen]}"


def render_iface(t: Topo, dev: str, iface: str, extra: list[str] = ()) -> list[str]:
    """One interface's section of ``dev``'s configuration: description, address, ``extra``."""
    lines = [f"interface {iface}", f" description {t.desc.get((dev, iface), 'uplink')}"]
    a = t.addr.get((dev, iface))
    if a is not None:
        lines.append(_address_line(a))
    lines += extra
    lines += (" no shutdown", "!")
    return lines


def _ports(t: Topo, dev: str) -> list[str]:
    """``dev``'s described (cabled) ports in name order, from an index of ``t.desc`` kept on
    the topology: a family renders every device, and scanning all descriptions for each was
    quadratic. Descriptions are only ever added, so the same dict of the same size has the
    same ports."""
    desc = t.desc
    held = t.__dict__.get("_port_index")
    if held is None or held[0] is not desc or held[1] != len(desc):
        index: dict[str, list[str]] = {}
        for d, p in desc:
            index.setdefault(d, []).append(p)
        for ports in index.values():
            ports.sort()
        held = t.__dict__["_port_index"] = (desc, len(desc), index)
    return held[2].get(dev, [])


def base_config(t: Topo, dev: str, extra: dict[str, list[str]] | None = None) -> str:
    """``dev``'s addressing-only configuration; ``extra`` adds lines inside interfaces."""
    extra = extra or {}
    desc, addr, mask = t.desc, t.addr, _MASK_TEXT
    out = [f"hostname {dev}\n!"]
    for p in _ports(t, dev):  # its cabled ports, one text each (fewer, larger pieces)
        a = addr.get((dev, p))
        text = f"interface {p}\n description {desc[(dev, p)]}"
        if a is not None:
            text += f"\n ip address {dotted(a._ip)} {mask[a._prefixlen]}"
        more = extra.get(p)
        if more:
            text += "\n" + "\n".join(more)
        out.append(text + "\n no shutdown\n!")
    return "\n".join(out)


def host_config(t: Topo, name: str) -> str:
    ip, gw = t.hosts[name]
    return (
        f"hostname {name}\ninterface {ETH}\n ip address {dotted(ip._ip)} "
        f"{_MASK_TEXT[ip._prefixlen]}\n no shutdown\nip default-gateway {dotted(gw._ip)}"
    )
