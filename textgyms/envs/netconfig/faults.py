"""Fault injection for the repair and root-cause diagnosis families.

A working scenario (static or OSPF routing, ACL, VLAN, NAT, multi-area OSPF, NSSA, eBGP,
iBGP, OSPF<->BGP redistribution, HSRP, VRRP, redistribution into OSPF, IPv6) is broken by
1-3 faults from a closed set of causes (the protocol ones live in :mod:`protofaults`); the
first cause is drawn uniformly. A fault must matter: the broken network must fail at least
one behavioural check (ping, flow, route, translation), and those failures are the symptoms
the prompt shows. Repair asks for fixed
configs (devices without a fault are locked); diagnosis asks for ``{device, component,
cause}`` given the symptoms and the syslog messages the devices would have logged when the
fault happened (both derived from the simulator).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json

import numpy as np

from textgyms.envs.netconfig import (
    areas,
    checks,
    families,
    gateways,
    ibgp,
    ipv6tasks,
    peering,
    redistribution,
)
from textgyms.envs.netconfig.acl import difference, overlap
from textgyms.envs.netconfig.bounded import Memo
from textgyms.envs.netconfig.l3tasks import routing
from textgyms.envs.netconfig.memo import PARSED, parsed_config
from textgyms.envs.netconfig.model import Acl, DeviceConfig, V6Addr
from textgyms.envs.netconfig.protofaults import PROTOCOL_FAULTS
from textgyms.envs.netconfig.routing import ospf_area
from textgyms.envs.netconfig.scenario import (
    Scenario,
    build,
    fill_expectations,
    reference_network,
)
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.sim import Network
from textgyms.envs.netconfig.task import NetTask, freeze
from textgyms.errors import ConfigError

CAUSES = (
    "wrong_mask",
    "interface_shutdown",
    "missing_route",
    "acl_order",
    "passive_ospf",
    "area_mismatch",
    "vlan_missing_on_trunk",
    "nat_sides_swapped",
    "bgp_remote_as",
    "bgp_missing_network",
    "hsrp_no_preempt",
    "hsrp_wrong_priority",
    "redistribute_no_subnets",
    "default_not_originated",
    "bgp_password_mismatch",
    "hsrp_version_mismatch",
    "ospf_network_mismatch",
    "ibgp_no_next_hop_self",
    "bgp_no_update_source",
    "bgp_not_redistributed",
    "vrrp_auth_mismatch",
    "nssa_flag_mismatch",
    "ipv6_routing_off",
    "ipv6_wrong_prefix",
    "ospfv3_missing_area",
    "ospfv3_no_router_id",
)
COMPONENT_HELP = ("an interface name, 'router ospf', 'router bgp', 'ip route', "
                  "'access-list <name>', 'ip nat', 'ipv6 unicast-routing' or "
                  "'ipv6 router ospf'")


def _pick(rng: np.random.Generator, items: list | tuple):
    """One item drawn uniformly (the draw ``rng.choice(items)`` makes), or None if empty."""
    return items[int(rng.integers(len(items)))] if items else None


def _choose(rng: np.random.Generator, items: tuple | list, size: int) -> list:
    """``size`` items drawn with replacement: what ``rng.choice(items, size=size)`` draws (the
    same generator calls), without turning ``items`` into a numpy array each time."""
    return [items[int(i)] for i in rng.integers(len(items), size=size)]


def _ifaces(cfgs: dict[str, DeviceConfig], pred) -> list[tuple[str, str]]:
    return [
        (d, n)
        for d, c in sorted(cfgs.items())
        for n, i in sorted(c.interfaces.items())
        if pred(c, i)
    ]


def wrong_mask(rng, cfgs, kinds):
    pick = _pick(rng, _ifaces(cfgs, lambda c, i: i.ip is not None and i.ip.network.prefixlen < 30))
    if pick is None:
        return None
    d, n = pick
    itf = cfgs[d].interfaces[n]
    plen = itf.ip.network.prefixlen
    for new in (plen + 4, plen + 3, plen + 2, plen + 1, plen - 1):
        cand = ipaddress.IPv4Interface(f"{itf.ip.ip}/{new}")
        if cand.ip not in (cand.network.network_address, cand.network.broadcast_address):
            itf.ip = cand
            return {"device": d, "cause": "wrong_mask", "components": [n]}
    return None


def interface_shutdown(rng, cfgs, kinds):
    pick = _pick(
        rng,
        _ifaces(
            cfgs,
            lambda c, i: (
                "." not in i.name
                and not i.shutdown
                and (i.ip is not None or i.mode == "trunk" or i.name.startswith("Gi"))
            ),
        ),
    )
    if pick is None:
        return None
    cfgs[pick[0]].interfaces[pick[1]].shutdown = True
    return {"device": pick[0], "cause": "interface_shutdown", "components": [pick[1]]}


def missing_route(rng, cfgs, kinds):
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.routes])
    if dev is None:
        return None
    cfgs[dev].routes.pop(int(rng.integers(len(cfgs[dev].routes))))
    return {"device": dev, "cause": "missing_route", "components": ["ip route"]}


def acl_order(rng, cfgs, kinds):
    """Swap two adjacent entries of an ACL where the order matters. The ACLs are read
    through ``items()``: only the device whose ACL changes is looked up (so cloned by the
    fault bench), not each one tried."""
    options = [(d, a, c.acls[a]) for d, c in sorted(cfgs.items()) for a in sorted(c.acls)
               if len(c.acls[a].entries) >= 2]
    for k in rng.permutation(len(options)):
        dev, name, acl = options[int(k)]
        matters = _SWAPS.get(tuple(acl.entries), dict)
        for i in rng.permutation(len(acl.entries) - 1):
            i = int(i)
            if i not in matters:
                matters[i] = _swap_matters(acl, i)
            if matters[i]:
                cfgs[dev].acls[name] = _swapped(acl, i)
                return {"device": dev, "cause": "acl_order",
                        "components": [f"access-list {name}", name]}
    return None


# An ACL's entries -> {i: whether swapping entries i and i+1 changes a decision}: the fault
# attempts on one scenario (up to ten, several causes each) ask about the same ACLs again.
_SWAPS = Memo(256)


def _swap_matters(acl: Acl, i: int) -> bool:
    """Whether swapping entries ``i`` and ``i + 1`` changes what ``acl`` decides for some
    packet. Two entries with one action, or that no packet matches both, decide the same in
    either order: only otherwise can the swap matter (:func:`difference` then decides)."""
    a, b = acl.entries[i], acl.entries[i + 1]
    if a.permit == b.permit or not overlap(a, b):
        return False
    return difference(acl, _swapped(acl, i)) is not None


def _swapped(acl: Acl, i: int) -> Acl:
    """``acl`` with entries ``i`` and ``i + 1`` swapped (each keeps its place's number), a
    new ACL sharing no list with ``acl`` (which may be a shared parsed config's)."""
    es = list(acl.entries)
    a, b = es[i], es[i + 1]
    es[i] = dataclasses.replace(b, seq=a.seq)
    es[i + 1] = dataclasses.replace(a, seq=b.seq)
    return Acl(acl.name, acl.kind, es, list(acl.remarks))


def _ospf_ifaces(cfgs, passive: bool):
    return _ifaces(
        cfgs,
        lambda c, i: (
            c.ospf is not None
            and i.ip is not None
            and ospf_area(c, int(i.ip.ip), i.name) is not None
            and c.ospf.is_passive(i.name) == passive
            and i.ip.network.prefixlen == 30
        ),
    )


def passive_ospf(rng, cfgs, kinds):
    pick = _pick(rng, _ospf_ifaces(cfgs, False))
    if pick is None:
        return None
    cfgs[pick[0]].ospf.passive.add(pick[1])
    return {"device": pick[0], "cause": "passive_ospf", "components": ["router ospf", pick[1]]}


def area_mismatch(rng, cfgs, kinds):
    pick = _pick(rng, _ospf_ifaces(cfgs, False))
    if pick is None:
        return None
    d, n = pick
    ospf, addr = cfgs[d].ospf, int(cfgs[d].interfaces[n].ip.ip)
    for k, (net, wc, area) in enumerate(ospf.networks):
        if (addr | int(wc)) == (int(net) | int(wc)):
            ospf.networks[k] = (net, wc, area + 1)
            return {"device": d, "cause": "area_mismatch", "components": ["router ospf", n]}
    return None


def vlan_missing_on_trunk(rng, cfgs, kinds):
    pick = _pick(rng, _ifaces(cfgs, lambda c, i: i.mode == "trunk" and bool(i.trunk_allowed)))
    if pick is None:
        return None
    itf = cfgs[pick[0]].interfaces[pick[1]]
    drop = _pick(rng, sorted(itf.trunk_allowed))
    itf.trunk_allowed = itf.trunk_allowed - {drop}
    return {"device": pick[0], "cause": "vlan_missing_on_trunk", "components": [pick[1]]}


def nat_sides_swapped(rng, cfgs, kinds):
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.nat])
    if dev is None:
        return None
    sides = [i for i in cfgs[dev].interfaces.values() if i.nat]
    for i in sides:
        i.nat = "outside" if i.nat == "inside" else "inside"
    return {
        "device": dev,
        "cause": "nat_sides_swapped",
        "components": ["ip nat"] + sorted(i.name for i in sides),
    }


def ipv6_routing_off(rng, cfgs, kinds):
    """``ipv6 unicast-routing`` missing on a static-routed router: it neither forwards IPv6
    nor sends router advertisements (OSPFv3 routers are left alone: IOS would refuse their
    ``ipv6 router ospf`` without it)."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.ipv6_routing and c.ospf6 is None])
    if dev is None:
        return None
    cfgs[dev].ipv6_routing = False
    return {"device": dev, "cause": "ipv6_routing_off", "components": ["ipv6 unicast-routing"]}


def ipv6_wrong_prefix(rng, cfgs, kinds):
    """An interface's IPv6 address moved to another /64 (a mistyped subnet ID)."""
    picks = _ifaces(cfgs, lambda c, i: any(not a.eui64 for a in i.ipv6))
    for k in rng.permutation(len(picks)):
        d, n = picks[int(k)]
        itf = cfgs[d].interfaces[n]
        a = next(x for x in itf.ipv6 if not x.eui64)
        new = ipaddress.IPv6Interface((int(a.iface.ip) ^ (int(rng.integers(1, 0x100)) << 64),
                                       a.iface.network.prefixlen))
        if any(x.iface.network.overlaps(new.network) for i in cfgs[d].interfaces.values()
               for x in i.ipv6):
            continue
        itf.ipv6 = [V6Addr(new) if x == a else x for x in itf.ipv6]
        return {"device": d, "cause": "ipv6_wrong_prefix", "components": [n]}
    return None


def ospfv3_missing_area(rng, cfgs, kinds):
    """``ipv6 ospf PID area A`` missing on a transit interface: no adjacency there."""
    pick = _pick(rng, _ifaces(cfgs, lambda c, i: c.ospf6 is not None and i.ospf6_area is not None
                              and not c.ospf6.is_passive(i.name)))
    if pick is None:
        return None
    cfgs[pick[0]].interfaces[pick[1]].ospf6_area = None
    return {"device": pick[0], "cause": "ospfv3_missing_area", "components": [pick[1]]}


def ospfv3_no_router_id(rng, cfgs, kinds):
    """The router-id of an IPv6-only router removed: OSPFv3 cannot pick one and stays down."""
    dev = _pick(rng, [d for d, c in sorted(cfgs.items()) if c.ospf6 is not None
                      and c.ospf6.router_id is not None
                      and not any(i.ip for i in c.interfaces.values())])
    if dev is None:
        return None
    cfgs[dev].ospf6.router_id = None
    return {"device": dev, "cause": "ospfv3_no_router_id", "components": ["ipv6 router ospf"]}


FAULTS = {
    f.__name__: f
    for f in (
        wrong_mask,
        interface_shutdown,
        missing_route,
        acl_order,
        passive_ospf,
        area_mismatch,
        vlan_missing_on_trunk,
        nat_sides_swapped,
        *PROTOCOL_FAULTS,
        ipv6_routing_off,
        ipv6_wrong_prefix,
        ospfv3_missing_area,
        ospfv3_no_router_id,
    )
}
BASES = {  # base scenario -> the faults that apply to it
    "static": ("wrong_mask", "interface_shutdown", "missing_route"),
    "ospf": ("wrong_mask", "interface_shutdown", "passive_ospf", "area_mismatch",
             "ospf_network_mismatch"),
    "acl": ("acl_order", "interface_shutdown"),
    "vlan": ("vlan_missing_on_trunk", "interface_shutdown", "wrong_mask"),
    "nat": ("nat_sides_swapped", "interface_shutdown"),
    "ospf_areas": ("area_mismatch", "passive_ospf", "interface_shutdown",
                   "ospf_network_mismatch"),
    "bgp": ("bgp_remote_as", "bgp_missing_network", "interface_shutdown",
            "bgp_password_mismatch"),
    "fhrp": ("hsrp_no_preempt", "hsrp_wrong_priority", "interface_shutdown",
             "hsrp_version_mismatch"),
    "redistribution": ("redistribute_no_subnets", "default_not_originated", "missing_route",
                       "passive_ospf", "interface_shutdown"),
    "ibgp": ("ibgp_no_next_hop_self", "bgp_no_update_source", "bgp_password_mismatch",
             "interface_shutdown"),
    "bgp_ospf": ("bgp_not_redistributed", "bgp_password_mismatch", "interface_shutdown"),
    "vrrp": ("vrrp_auth_mismatch", "interface_shutdown"),
    "nssa": ("nssa_flag_mismatch", "area_mismatch", "interface_shutdown"),
    "ipv6_static": ("ipv6_routing_off", "ipv6_wrong_prefix", "interface_shutdown"),
    "ospfv3": ("ospfv3_missing_area", "ospfv3_no_router_id", "ipv6_wrong_prefix",
               "interface_shutdown"),
}


_BASES_OF = {c: [b for b in sorted(BASES) if c in BASES[b]] for c in CAUSES}  # by name


def _base(rng: np.random.Generator, level: str, cause: str) -> tuple[str, Scenario]:
    """A working scenario of a kind ``cause`` can break, sized by ``level``."""
    name = _pick(rng, _BASES_OF[cause])  # the one draw rng.choice would make
    if name in ("static", "ospf"):
        return name, routing(rng, level, name)
    if name == "vlan":
        return name, families.vlan(rng, "easy" if level == "easy" else "hard")
    if name == "ospf_areas":
        return name, areas.ospf_areas(rng, level)
    if name == "bgp":
        return name, peering.peering(rng, level)
    if name in ("ibgp", "bgp_ospf"):
        return name, getattr(ibgp, name)(rng, level)
    if name == "vrrp":
        return name, gateways.fhrp(rng, level, "vrrp")
    if name == "nssa":
        return name, areas.nssa(rng, level)
    if name == "fhrp":
        return name, gateways.fhrp(rng, "medium" if level != "hard" else "hard")
    if name == "redistribution":  # medium and up have the default route a fault can drop
        return name, redistribution.redistribution(rng, "medium" if level != "hard" else "hard")
    if name in ("ipv6_static", "ospfv3"):  # IPv6-only networks: the two lower levels
        return name, ipv6tasks.ipv6(rng, "easy" if name == "ipv6_static" else "medium")
    return name, getattr(families, name)(rng, "medium" if level != "hard" else "hard")


SYMPTOMS = ("reach", "flows", "boundary", "nat", "waypoint", "routing", "isolation", "fhrp",
            "bgp_session", "no_route", "reach6", "routing6")


SHOWN = 4  # symptoms a repair prompt lists at most
DIAGNOSIS_SHOWN = 3  # and a diagnosis prompt


# Check groups no symptom comes from that only read the network (no packet walk, so no NAT
# binding a later check would see, no failed-link network): the symptom search skips them,
# their results would be dropped. (``nat_inside`` walks, so it runs.)
_SILENT = frozenset({
    "addressing", "static_only", "passive", "ospf_area", "adjacency", "router_ids",
    "router_id", "vlan", "trunk", "addressing6", "static_only6", "ospf6_area", "adjacency6",
    "router_ids6", "passive6",
    "collateral", "acl_equiv",  # left out (below)
})


def _symptoms(sc: Scenario, configs: dict[str, str]) -> list[str]:
    """The first :data:`SHOWN` messages of the behavioural checks the configs fail (collateral
    flows and ACL equivalence, which needs the frozen task, left out)."""
    return _symptoms_on(sc, configs)[0]


def _symptoms_on(sc: Scenario, configs: dict[str, str], shown: int = SHOWN,
                 batch: int = 8) -> tuple[list[str], Network]:
    """The first ``shown`` symptoms (as :func:`_symptoms`), and the network the checks ran
    on (:func:`diagnosis` reads its syslog from it: its IPv6 plane, compiled by the IPv6
    checks, is then not compiled again). Checks run in order, ``batch`` at a time, and stop
    once enough have failed: on one network each check gives what it would give in a full
    run (the only state a check leaves, NAT bindings, builds up in the same order; the
    checks skipped, :data:`_SILENT`, leave none). (A repair runs whole batches of eight, so
    the failed-link networks compiled here, which its verifier reuses, stay the same; a
    diagnosis, whose checks are never run again, stops at its last symptom shown.)"""
    net = build(sc.topo.kinds, sc.topo.links, {**sc.fixed_configs(), **configs})
    out: list[str] = []
    for k in range(0, len(sc.checks), batch):
        for c in sc.checks[k:k + batch]:
            group = c["g"]
            if group in _SILENT:
                continue
            ok, msg = checks.CHECKS[group](net, c, None)
            if not ok and group in SYMPTOMS:
                out.append(msg)
        if len(out) >= shown:
            break
    return out[:shown], net


class _Attempt(dict):
    """The configs one fault attempt edits, device -> config: the shared reference config
    until the device is looked up with ``[]``, which gives (and keeps) the attempt's own
    clone. The causes read every device through ``items()`` but change only configs they
    look up, so only those are cloned (not every device for every attempt)."""

    def __init__(self, shared: dict[str, DeviceConfig]) -> None:
        super().__init__(shared)
        self.shared = shared
        self.owned: set[str] = set()

    def __getitem__(self, device: str) -> DeviceConfig:
        if device in self.owned:
            return dict.__getitem__(self, device)
        cfg = self.shared[device].clone()
        dict.__setitem__(self, device, cfg)
        self.owned.add(device)
        return cfg


class _Bench:
    """The reference configs of one scenario, parsed once for all its fault attempts.

    The parse is the shared memoized one (the reference network compiled for the
    expectations reuses it); each attempt edits clones of the devices its causes look up
    (:class:`_Attempt`). A cause changes only the device its label names, and nothing when
    it returns None (the contract every cause keeps; tests check it), so the other devices'
    rendered text is the pristine one, kept."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.shared = {d: parsed_config(t, d)[0] for d, t in sc.reference.items()}
        self._pristine: dict[str, str] = {}

    def _render(self, device: str) -> str:
        """The pristine config's text as the faulty configs show it. Its parse is the
        reference config itself (a parsed config renders to text that parses back to an
        identical one, every line accepted: tests check it for every base), and is recorded
        as such, so the faulty networks neither parse the text again nor miss the per-device
        results the reference network cached by config identity."""
        text = self._pristine.get(device)
        if text is None:
            cfg = self.shared[device]
            text = self._pristine[device] = render_config(cfg)
            PARSED.get((text, device), lambda: (cfg, (), _commands(text)))
        return text

    def attempt(self, rng, causes: list[str]):
        """Apply ``causes`` to the reference: (labels, faulty configs) or None."""
        cfgs = _Attempt(self.shared)
        labels: list[dict] = []
        dirty = set()
        for name in causes:
            label = FAULTS[name](rng, cfgs, self.sc.topo.kinds)
            if label is not None:
                dirty.add(label["device"])
            if label is None or any((label["device"], label["components"][0])
                                    == (x["device"], x["components"][0]) for x in labels):
                return None
            labels.append(label)
        return labels, {d: render_config(c) if d in dirty else self._render(d)
                        for d, c in cfgs.items()}


def _commands(text: str) -> int:
    """How many lines of ``text`` the parser counts as commands (not blank, no comment):
    its count of accepted lines when it rejects none."""
    return sum(1 for line in text.splitlines() if (s := line.strip()) and s[0] != "!")


def inject(rng: np.random.Generator, level: str, count: int, cause: str | None = None):
    """A base scenario and ``count`` faults that break it (the first is ``cause``, by default
    drawn uniformly from :data:`CAUSES`): (base, scenario, labels, faulty configs, the first
    :data:`SHOWN` symptom messages)."""
    return _inject(rng, level, count, cause)[:5]


def _inject(rng: np.random.Generator, level: str, count: int, cause: str | None,
            shown: int = SHOWN, batch: int = 8):
    """:func:`inject`'s tuple and the faulty network its symptoms were found on (the first
    ``shown`` symptoms, checks run ``batch`` at a time: see :func:`_symptoms_on`)."""
    if cause is not None and cause not in CAUSES:
        raise ConfigError(f"unknown fault cause {cause!r}; choose one of: {', '.join(CAUSES)}")
    first = _pick(rng, CAUSES) if cause is None else cause  # rng.choice's one draw
    for _attempt in range(1000):
        base, sc = _base(rng, level, first)
        bench, filled = _Bench(sc), False
        for _ in range(10):
            rest = _choose(rng, BASES[base], count - 1)
            tried = bench.attempt(rng, [first, *rest])
            if tried is None:
                continue
            if not filled:  # the reference is simulated only for a scenario a fault applies to
                fill_expectations(sc)
                filled = True
            symptoms, net = _symptoms_on(sc, tried[1], shown, batch)
            if symptoms:  # a fault must show in the network's behaviour
                return base, sc, tried[0], tried[1], symptoms, net
    raise RuntimeError("no breaking fault found in 1000 draws (a generator bug)")


def repair(rng: np.random.Generator, level: str, cause: str | None = None) -> NetTask:
    """Fix 1 (easy), 2 (medium) or 3 (hard) injected faults, the first of them ``cause``
    (default: drawn uniformly); untouched devices are locked."""
    count = {"easy": 1, "medium": 2, "hard": 3}[level]
    _base_name, sc, labels, faulty, fails, _net = _inject(rng, level, count, cause)
    faulted = {x["device"] for x in labels}
    locked = sorted(d for d in faulty if d not in faulted)
    sc.start = faulty
    for d in locked:
        sc.reqs.append({"type": "preserve", "what": f"the configuration of {d} (locked)"})
    context = "Symptoms observed:\n" + "\n".join(f"- {m}" for m in fails[:SHOWN])
    return freeze("repair", level, sc, json.dumps(labels, sort_keys=True), locked, context,
                  filled=True)  # inject filled them (its symptoms needed them)


def syslog(before: Network, after: Network) -> list[str]:
    """The messages devices would log when the network went from ``before`` to ``after``."""
    out = []
    for (dev, name), (status, proto) in sorted(after.status.items()):
        was = before.status.get((dev, name), ("down", "down"))
        if was[1] == "up" and proto == "down":
            if status == "administratively down":
                out.append(
                    (
                        dev,
                        f"%LINK-5-CHANGED: Interface {name}, changed state to "
                        "administratively down",
                    )
                )
            else:
                out.append((dev, f"%LINK-3-UPDOWN: Interface {name}, changed state to down"))
            out.append(
                (
                    dev,
                    f"%LINEPROTO-5-UPDOWN: Line protocol on Interface {name}, "
                    "changed state to down",
                )
            )
    for dev, adjs in sorted(before.adjacencies.items()):
        now = set(after.adjacencies.get(dev, ()))
        for a in adjs:
            if a not in now:
                rid = ipaddress.IPv4Address(a.neighbor_rid)
                out.append(
                    (
                        dev,
                        f"%OSPF-5-ADJCHG: Process 1, Nbr {rid} on {a.iface} from "
                        "FULL to DOWN, Neighbor Down: Dead timer expired",
                    )
                )
    v6 = _runs_ospf6(before) or _runs_ospf6(after)
    out += _ospfv3_down(before, after) if v6 else []
    out += _bgp_down(before, after)
    out += sorted(set(after.events) | set(after.v6.events if v6 else ()))
    return [
        f"{dev}: *Mar  1 00:{10 + k // 60:02d}:{k % 60:02d}.{(137 * k) % 1000:03d}: {msg}"
        for k, (dev, msg) in enumerate(out)
    ]


def _runs_ospf6(net: Network) -> bool:
    """Whether any device of ``net`` configures OSPFv3. Without one the IPv6 plane has no
    adjacency and logs no event (both come from OSPFv3 processes only), so :func:`syslog`
    need not compile the plane (most networks are IPv4-only)."""
    return any(cfg.ospf6 is not None for _kind, cfg in net.devices.values())


def _bgp_down(before: Network, after: Network) -> list[tuple[str, str]]:
    """BGP sessions lost between ``before`` and ``after``, as IOS logs them (and the TCP MD5
    failure a one-sided password causes)."""
    up = {(s.a, s.b_ip) for s in before.bgp_sessions}
    now = {(s.a, s.b_ip) for s in after.bgp_sessions}
    out = []
    for t in after.bgp_attempts:
        if (t.dev, t.peer_ip) in up - now:
            peer = ipaddress.IPv4Address(t.peer_ip)
            out.append((t.dev, f"%BGP-5-ADJCHANGE: neighbor {peer} Down Peer closed the session"))
            if "MD5" in t.why:
                out.append((t.dev, f"%TCP-6-BADAUTH: Invalid MD5 digest from {peer}(179)"))
    return out


def _ospfv3_down(before: Network, after: Network) -> list[tuple[str, str]]:
    """OSPFv3 neighbours lost between ``before`` and ``after``, as IOS logs them."""
    out = []
    for dev, adjs in sorted(before.v6.adjacencies.items()):
        now = set(after.v6.adjacencies.get(dev, ()))
        for a in adjs:
            if a not in now:
                rid = ipaddress.IPv4Address(a.neighbor_rid)
                out.append((dev, f"%OSPFv3-5-ADJCHG: Process 1, Nbr {rid} on {a.iface} from "
                                 "FULL to DOWN, Neighbor Down: Dead timer expired"))
    return out


def diagnosis(rng: np.random.Generator, level: str, cause: str | None = None) -> NetTask:
    """Find the root cause of one injected fault (``cause``, by default drawn uniformly):
    answer ``{device, component, cause}``."""
    # Checks one at a time: none runs after the last symptom the prompt shows.
    _base_name, sc, labels, faulty, fails, after = _inject(rng, level, 1, cause,
                                                           DIAGNOSIS_SHOWN, 1)
    # ``after`` is the faulty network the symptoms came from (the one ``build`` would give
    # for ``faulty``): syslog reads only what its compile decided, never NAT state.
    before = reference_network(sc)
    logs = syslog(before, after)
    sc.start = faulty
    sc.checks = []
    context = (
        "Symptoms observed:\n"
        + "\n".join(f"- {m}" for m in fails)
        + "\nRecent syslog messages:\n"
        + ("\n".join(logs) if logs else "(none)")
        + f"\nCauses (closed set): {', '.join(CAUSES)}.\nComponent: {COMPONENT_HELP}.\n"
        'Answer with <submit>{"device": "...", "component": "...", "cause": "..."}</submit>.'
    )
    return freeze("diagnosis", level, sc, json.dumps(labels[0], sort_keys=True), (), context)
