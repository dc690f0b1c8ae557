"""The configuration model of IOS-lite: plain mutable dataclasses a parser fills and the
simulator reads. Addresses are kept as ``ipaddress`` objects for display and as ints for the
hot paths (ACL matching, forwarding)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field, fields

from textgyms.envs.netconfig.bounded import NO_ITEMS, NO_MEMBERS, NoItems, NoMembers

# The IP protocols of the dialect's extended ACLs by name (``ip`` is any protocol); any
# protocol can also be given by number (1-255), as IOS allows.
PROTO_NUM = {"ip": 0, "icmp": 1, "tcp": 6, "udp": 17, "ospf": 89}
PROTO_NAME = {v: k for k, v in PROTO_NUM.items()}
ANY_IP = (0, 0xFFFFFFFF)
ANY_PORT = (0, 65535)


@dataclass(slots=True)
class Fhrp:
    """One HSRP (``standby``) or VRRP group on an interface."""

    proto: str  # "hsrp" | "vrrp"
    group: int
    vip: ipaddress.IPv4Address | None = None
    priority: int = 100
    preempt: bool = False
    track: dict[str, int] = field(default_factory=dict)  # HSRP: interface -> decrement
    learn: bool = False  # HSRP ``standby G ip`` with no address: learnt from the active router
    auth: tuple[str, str] | None = None  # ("text" | "md5", key); None: the default
    timers: tuple[int, int] | None = None  # (hello, hold) in ms; None: the default
    extra: list[str] = field(default_factory=list)  # accepted options nothing depends on

    def auth_key(self) -> tuple[str, str]:
        """What the hellos carry: HSRP sends the text ``cisco`` unless configured, VRRP
        nothing."""
        if self.auth is not None:
            return self.auth
        return ("text", "cisco") if self.proto == "hsrp" else ("none", "")


@dataclass(frozen=True)
class V6Addr:
    """``ipv6 address P/L [eui-64]``: with ``eui64`` the interface ID comes from the MAC."""

    iface: ipaddress.IPv6Interface
    eui64: bool = False


@dataclass(slots=True)
class Interface:
    """One interface (physical, subinterface, loopback or SVI) and its settings."""

    name: str
    ip: ipaddress.IPv4Interface | None = None
    shutdown: bool = False
    description: str = ""
    acl_in: str | None = None
    acl_out: str | None = None
    nat: str | None = None  # "inside" | "outside"
    mode: str | None = None  # switchport mode: "access" | "trunk"
    access_vlan: int = 1
    trunk_allowed: frozenset[int] | None = None  # None: all VLANs
    dot1q: int | None = None
    ospf_cost: int | None = None
    ospf_area: tuple[int, int] | None = None  # ``ip ospf PID area AREA``: (pid, area)
    ospf_hello: int | None = None
    ospf_dead: int | None = None
    ospf_auth: str | None = None  # ``ip ospf authentication [message-digest|null]``
    ospf_key: str | None = None  # ``ip ospf authentication-key`` (simple password)
    ospf_md5: dict[int, str] = field(default_factory=dict)  # message-digest-key ID -> key
    ospf_priority: int | None = None  # DR election; 0: never DR (1 when unset)
    ospf_network: str | None = None  # ``ip ospf network TYPE`` (None: by interface type)
    bandwidth: int | None = None  # kbit/s; the OSPF cost derives from it
    native_vlan: int = 1
    proxy_arp: bool = True
    fhrp: dict[tuple[str, int], Fhrp] = field(default_factory=dict)
    hsrp_version: int = 1  # ``standby version 1|2``
    extra: list[str] = field(default_factory=list)  # accepted lines the model ignores
    ipv6: list[V6Addr] = field(default_factory=list)  # global/unique-local addresses
    ipv6_ll: ipaddress.IPv6Address | None = None  # ``ipv6 address FE80::X link-local``
    ipv6_enable: bool = False  # ``ipv6 enable``: a link-local address and nothing else
    ospf6_area: tuple[int, int] | None = None  # ``ipv6 ospf PID area AREA``
    ospf6_cost: int | None = None
    ospf6_hello: int | None = None
    ospf6_dead: int | None = None

    def ipv6_on(self) -> bool:
        """Whether IPv6 runs on the interface (any address, or ``ipv6 enable``)."""
        return bool(self.ipv6) or self.ipv6_enable or self.ipv6_ll is not None


@dataclass(frozen=True)
class Ace:
    """One access-control entry, compiled to intervals: ``proto`` 0 means any IP protocol."""

    permit: bool
    proto: int
    src: tuple[int, int]
    dst: tuple[int, int] = ANY_IP
    sport: tuple[int, int] = ANY_PORT
    dport: tuple[int, int] = ANY_PORT
    established: bool = False
    text: str = ""
    seq: int = 0


@dataclass(slots=True)
class Acl:
    """A standard or extended ACL, numbered or named; entries in sequence order."""

    name: str
    kind: str  # "standard" | "extended"
    entries: list[Ace] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StaticRoute:
    """``ip route PREFIX MASK NEXTHOP|INTERFACE [AD]``, or with IPv6 addresses ``ipv6 route
    PREFIX/LEN NEXTHOP|INTERFACE [AD]``."""

    prefix: ipaddress.IPv4Network | ipaddress.IPv6Network
    nexthop: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    iface: str | None
    ad: int = 1
    name: str = ""
    permanent: bool = False
    tag: int | None = None


@dataclass(slots=True)
class Ospf:
    """``router ospf PID``: network statements (first match wins), passive interfaces (all
    but ``active`` under ``passive-interface default``)."""

    pid: int
    router_id: ipaddress.IPv4Address | None = None
    networks: list[tuple[ipaddress.IPv4Address, ipaddress.IPv4Address, int]] = field(
        default_factory=list
    )
    passive: set[str] = field(default_factory=set)
    passive_default: bool = False
    active: set[str] = field(default_factory=set)  # ``no passive-interface X`` under default
    extra: list[str] = field(default_factory=list)  # log-adjacency-changes, timers, ...
    ref_bw: int = 100  # auto-cost reference-bandwidth, Mbit/s
    originate: tuple[bool, int, int] | None = None  # default-information: (always, metric, type)
    redistribute: dict[str, tuple[bool, int, int]] = field(default_factory=dict)
    # source ("static" | "connected") -> (subnets, metric, metric type)
    redistribute_maps: dict[str, str] = field(default_factory=dict)  # source -> route-map
    stubs: dict[int, bool] = field(default_factory=dict)  # ``area A stub``: A -> no-summary
    nssa: dict[int, tuple[bool, bool, bool]] = field(default_factory=dict)
    # ``area A nssa``: A -> (no-summary, default-information-originate, no-redistribution)
    redistribute_tags: dict[str, int] = field(default_factory=dict)  # ``... tag N``
    bgp_asn: int | None = None  # ``redistribute bgp ASN``
    area_auth: dict[int, str] = field(default_factory=dict)  # ``area A authentication``

    def stub_kind(self, area: int) -> int:
        """0 for a normal area, 1 for ``stub``, 2 for ``stub no-summary`` (totally stubby),
        3 for ``nssa``, 4 for ``nssa no-summary`` (totally NSSA)."""
        if area in self.nssa:
            return 3 + self.nssa[area][0]
        return 0 if area not in self.stubs else 1 + self.stubs[area]

    def is_passive(self, iface: str) -> bool:
        """Whether ``iface`` sends no hellos (IOS ``passive-interface`` semantics)."""
        return iface not in self.active if self.passive_default else iface in self.passive


@dataclass(frozen=True)
class NatRule:
    """``ip nat inside source list ACL interface IF|pool NAME [overload]`` or ``... static
    [tcp|udp] LOCAL [LPORT] GLOBAL [GPORT] [extendable]``."""

    kind: str  # "dynamic" | "static"
    acl: str | None = None
    iface: str | None = None
    overload: bool = False
    local: ipaddress.IPv4Address | None = None
    global_: ipaddress.IPv4Address | None = None
    pool: str | None = None
    proto: int = 0  # static port forwarding: 6 or 17 (0: every protocol and port)
    lport: int = 0
    gport: int = 0
    extendable: bool = False
    global_iface: str | None = None  # ``static tcp L LP interface IF GP``: IF's address


@dataclass(frozen=True)
class NatPool:
    """``ip nat pool NAME START END netmask M | prefix-length N``."""

    name: str
    start: ipaddress.IPv4Address
    end: ipaddress.IPv4Address
    plen: int

    def addresses(self) -> list[int]:
        """The pool's addresses in allocation order."""
        return list(range(int(self.start), int(self.end) + 1))


@dataclass(slots=True)
class BgpNeighbor:
    """``neighbor A remote-as N`` (or a peer-group ``neighbor PG peer-group``) and its
    options; None means "not set here" (a member then takes its peer-group's value)."""

    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None  # None: a peer-group
    remote_as: int | None = None
    route_map_in: str | None = None
    route_map_out: str | None = None
    next_hop_self: bool | None = None
    prefix_list_in: str | None = None  # ``neighbor A prefix-list NAME in``
    prefix_list_out: str | None = None
    activate: bool | None = None  # ``[no] neighbor A activate`` (None: the default)
    peer_group: str | None = None  # ``neighbor A peer-group PG``
    password: str | None = None  # ``neighbor A password [0|7] KEY`` (TCP MD5)
    update_source: str | None = None  # ``neighbor A update-source IF``
    multihop: int | None = None  # ``neighbor A ebgp-multihop [TTL]`` (255 without TTL)
    shutdown: bool | None = None  # ``neighbor A shutdown``: administratively down
    disable_connected_check: bool | None = None
    activate6: bool | None = None  # ``neighbor A activate`` in ``address-family ipv6``
    next_hop_self6: bool | None = None  # ``neighbor A next-hop-self`` there


# The options a member takes from its peer-group when it does not set them itself.
NEIGHBOR_OPTIONS = ("remote_as", "route_map_in", "route_map_out", "next_hop_self",
                    "prefix_list_in", "prefix_list_out", "activate", "password",
                    "update_source", "multihop", "shutdown", "disable_connected_check",
                    "activate6", "next_hop_self6")


@dataclass(slots=True)
class Bgp:
    """``router bgp ASN``: neighbors (IPv4 or IPv6 addresses), peer-groups and the prefixes
    it originates in the IPv4 and the IPv6 unicast families."""

    asn: int
    router_id: ipaddress.IPv4Address | None = None
    neighbors: dict[ipaddress.IPv4Address | ipaddress.IPv6Address, BgpNeighbor] = field(
        default_factory=dict)
    groups: dict[str, BgpNeighbor] = field(default_factory=dict)  # peer-groups by name
    networks: list[ipaddress.IPv4Network] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    default_ipv4: bool = True  # ``no bgp default ipv4-unicast``: neighbors need ``activate``
    redistribute: dict[str, str | None] = field(default_factory=dict)
    # source ("ospf N" | "static" | "connected") -> route-map name or None
    redistribute_match: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # "ospf N" -> the OSPF route types of ``match ...`` ("internal", "external 1", ...);
    # absent: IOS's default, internal routes only
    networks6: list[ipaddress.IPv6Network] = field(default_factory=list)
    extra6: list[str] = field(default_factory=list)  # other ``address-family ipv6`` lines

    def ipv6_peers(self) -> list[ipaddress.IPv6Address]:
        """The neighbors configured by IPv6 address."""
        return [a for a in self.neighbors if a.version == 6]

    def neighbor(self, ip: ipaddress.IPv4Address) -> BgpNeighbor | None:
        """The settings in force for neighbor ``ip``: its own, else its peer-group's."""
        n = self.neighbors.get(ip)
        group = self.groups.get(n.peer_group) if n is not None and n.peer_group else None
        if n is None or group is None:
            return n
        merged = BgpNeighbor(n.ip, peer_group=n.peer_group)
        for name in NEIGHBOR_OPTIONS:
            own = getattr(n, name)
            setattr(merged, name, own if own is not None else getattr(group, name))
        return merged

    def active(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        """Whether the IPv4 unicast family is activated for neighbor ``ip`` (by default
        every neighbor, IPv6-addressed ones too, unless ``no bgp default ipv4-unicast``)."""
        n = self.neighbor(ip)
        return n is not None and (n.activate if n.activate is not None else self.default_ipv4)

    def active6(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        """Whether the IPv6 unicast family is activated for neighbor ``ip`` (only by
        ``neighbor A activate`` in ``address-family ipv6``)."""
        n = self.neighbor(ip)
        return n is not None and bool(n.activate6)


@dataclass(slots=True)
class RouteMapEntry:
    """``route-map NAME permit|deny SEQ`` with its match and set clauses."""

    seq: int
    permit: bool
    prefix_list: str | None = None
    acl: str | None = None  # ``match ip address ACL``
    local_pref: int | None = None
    prepend: tuple[int, ...] = ()
    metric: int | None = None  # ``set metric N`` (MED in BGP, the seed metric in OSPF)
    tag: int | None = None  # ``set tag N``
    metric_type: int | None = None  # ``set metric-type type-1|type-2`` (OSPF externals)
    match_tag: tuple[int, ...] = ()  # ``match tag N...``


@dataclass(frozen=True)
class PrefixListEntry:
    """``ip prefix-list NAME seq N permit|deny P/L [ge G] [le L]``."""

    seq: int
    permit: bool
    prefix: ipaddress.IPv4Network
    ge: int | None = None
    le: int | None = None

    def matches(self, net: int, plen: int) -> bool:
        """Whether a route's prefix falls in this entry."""
        lo = self.ge if self.ge is not None else self.prefix.prefixlen
        hi = self.le if self.le is not None else (32 if self.ge is not None else lo)
        m = (0xFFFFFFFF << (32 - self.prefix.prefixlen)) & 0xFFFFFFFF
        return lo <= plen <= hi and (net & m) == int(self.prefix.network_address)


@dataclass(slots=True)
class DeviceConfig:
    """Everything one device's configuration says."""

    hostname: str = ""
    interfaces: dict[str, Interface] = field(default_factory=dict)
    vlans: dict[int, str] = field(default_factory=dict)
    routes: list[StaticRoute] = field(default_factory=list)
    ospf: Ospf | None = None
    acls: dict[str, Acl] = field(default_factory=dict)
    nat: list[NatRule] = field(default_factory=list)
    nat_pools: dict[str, NatPool] = field(default_factory=dict)
    gateway: ipaddress.IPv4Address | None = None  # ip default-gateway (hosts, L2 switches)
    ip_routing: bool | None = None  # None: the platform default (routers on, switches off)
    bgp: Bgp | None = None
    route_maps: dict[str, list[RouteMapEntry]] = field(default_factory=dict)
    prefix_lists: dict[str, list[PrefixListEntry]] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)  # accepted global lines the model ignores
    ipv6_routing: bool = False  # ``ipv6 unicast-routing`` (off by default, as on IOS)
    routes6: list[StaticRoute] = field(default_factory=list)  # ``ipv6 route``
    ospf6: Ospf | None = None  # ``ipv6 router ospf PID`` (OSPFv3: no network statements)

    def iface(self, name: str) -> Interface:
        """The interface ``name``, created on first mention (as IOS does)."""
        found = self.interfaces.get(name)
        if found is None:
            found = self.interfaces[name] = Interface(name)
        return found

    def clone(self) -> DeviceConfig:
        """An independent copy to edit, equal to this config with every dict and list in the
        same order (a set's iteration order may differ: sets are only asked for membership
        or sorted), several times cheaper than :func:`copy.deepcopy` or parsing the text
        again. Each mutable part (list, dict, set, slotted dataclass) is copied; immutable
        values (strings, numbers, addresses, frozensets, frozen dataclasses, and tuples,
        which the model fills with immutable values only) are shared. A type the model does
        not hold raises TypeError."""
        return _clone(self)


def _clone(value):
    """:meth:`DeviceConfig.clone` of any value a config holds."""
    kind = type(value)
    if kind in _SHARED_AS_IS:
        return value
    if kind is dict:  # keys are strings, numbers, addresses or tuples of them
        return {k: v if type(v) in _SHARED_AS_IS else _clone(v) for k, v in value.items()}
    if kind is list:
        return [x if type(x) in _SHARED_AS_IS else _clone(x) for x in value]
    copier = _CLONERS.get(kind)
    if copier is not None:
        return copier(value)
    if kind is NoItems:
        return []
    if kind is NoMembers:
        return set()
    if kind is set:
        return set(value)
    raise TypeError(f"cannot clone a {kind.__name__} held by a config")


@dataclass(frozen=True)
class Issue:
    """A line the parser rejected: where it is and why."""

    device: str
    lineno: int
    line: str
    reason: str

    def __str__(self) -> str:
        return f"{self.device} line {self.lineno}: {self.line.strip()!r}: {self.reason}"


# What :meth:`DeviceConfig.clone` shares (immutable) and copies field by field (the model's
# mutable dataclasses, all slotted: every field is in ``__slots__``).
_SHARED_AS_IS = frozenset({
    str, int, bool, float, type(None), tuple, frozenset,
    ipaddress.IPv4Address, ipaddress.IPv4Interface, ipaddress.IPv4Network,
    ipaddress.IPv6Address, ipaddress.IPv6Interface, ipaddress.IPv6Network,
    V6Addr, Ace, StaticRoute, NatRule, NatPool, PrefixListEntry, Issue,
})
_MUTABLE_SLOTS = {
    cls: tuple(cls.__slots__)
    for cls in (DeviceConfig, Interface, Fhrp, Acl, Ospf, BgpNeighbor, Bgp, RouteMapEntry)
}


# A field whose annotation names a list, dict, set or one of the mutable classes may hold
# something to copy; every other field holds an immutable value, shared as it is (the test
# suite checks this of every field of every parsed config of every family).
_MUTABLE_NAMES = "|".join(cls.__name__ for cls in _MUTABLE_SLOTS)
_HOLDS_MUTABLE = re.compile(rf"\b(list|dict|set)\[|(?<![\w.])({_MUTABLE_NAMES})\b")


def copied_fields(cls: type) -> tuple[str, ...]:
    """The fields of a mutable model class that :meth:`DeviceConfig.clone` copies (the rest
    it shares)."""
    return tuple(f.name for f in fields(cls) if _HOLDS_MUTABLE.search(f.type))


def _cloner(cls: type):
    """A function that clones one ``cls`` field by field, written out for that class:
    attribute reads and writes by name, not ``getattr``/``setattr`` by string, and no type
    test for a field that only ever holds immutable values (about twice as fast, and the
    first edit of a device is an agent's tool step)."""
    copied = copied_fields(cls)
    body = ["def clone(v):", "    o = new(cls)"]
    for name in _MUTABLE_SLOTS[cls]:
        if name in copied:
            body.append(f"    x = v.{name}; o.{name} = x if type(x) in shared else copy(x)")
        else:
            body.append(f"    o.{name} = v.{name}")
    body.append("    return o")
    scope = {"new": object.__new__, "cls": cls, "shared": _SHARED_AS_IS, "copy": _clone}
    exec("\n".join(body), scope)  # (generated from the class's own field names only)
    return scope["clone"]


_CLONERS = {cls: _cloner(cls) for cls in _MUTABLE_SLOTS}


def _deepcopy(self, _memo: dict):
    return _clone(self)


def _getstate(self) -> list:
    """The fields' values as the slotted dataclass pickles them, with a fresh empty list or
    set for each shared one (pickle would otherwise give every field that held the same
    shared object one and the same new list)."""
    return [[] if v is NO_ITEMS else set() if v is NO_MEMBERS else v
            for v in (getattr(self, name) for name in _MUTABLE_SLOTS[type(self)])]


def _setstate(self, state: list) -> None:
    for name, v in zip(_MUTABLE_SLOTS[type(self)], state, strict=True):
        setattr(self, name, v)


for _cls in _MUTABLE_SLOTS:  # copies to edit get plain, unaliased empty lists and sets
    _cls.__deepcopy__ = _deepcopy
    _cls.__getstate__, _cls.__setstate__ = _getstate, _setstate


# The list and set fields of each model class that :func:`compact` shares when empty.
EMPTYABLE = {
    DeviceConfig: ("routes", "nat", "extra", "routes6"),
    Interface: ("extra", "ipv6"),
    Fhrp: ("extra",),
    Ospf: ("networks", "extra", "passive", "active"),
    Bgp: ("networks", "extra", "networks6", "extra6"),
    Acl: ("entries", "remarks"),
}


def compact(cfg: DeviceConfig) -> None:
    """Point every empty list and set field of a config about to be shared (see
    :func:`bounded.share`), and of its parts, at :data:`NO_ITEMS` or :data:`NO_MEMBERS`:
    equal to what was there, and read-only."""
    _share_empty(cfg, EMPTYABLE[DeviceConfig])
    for itf in cfg.interfaces.values():
        _share_empty(itf, EMPTYABLE[Interface])
        for group in itf.fhrp.values():
            _share_empty(group, EMPTYABLE[Fhrp])
    for ospf in (cfg.ospf, cfg.ospf6):
        if ospf is not None:
            _share_empty(ospf, EMPTYABLE[Ospf])
    if cfg.bgp is not None:
        _share_empty(cfg.bgp, EMPTYABLE[Bgp])
    for acl in cfg.acls.values():
        _share_empty(acl, EMPTYABLE[Acl])


def _share_empty(obj, names: tuple[str, ...]) -> None:
    for name in names:
        v = getattr(obj, name)
        if not v:
            setattr(obj, name, NO_ITEMS if type(v) is list else NO_MEMBERS)
