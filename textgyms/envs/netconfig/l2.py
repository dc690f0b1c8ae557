"""Layer 1/2: interface status and broadcast domains from links, access ports, trunks and
VLAN databases (a VLAN a switch does not know is not forwarded, as on IOS)."""

from __future__ import annotations

from collections.abc import Mapping

from textgyms.envs.netconfig.bounded import Key, Memo
from textgyms.envs.netconfig.model import DeviceConfig, Interface

Link = tuple[tuple[str, str], tuple[str, str]]
SWITCHES = ("switch", "l3switch")


def parent(name: str) -> str:
    """The physical interface of a subinterface (``Gi0/0.10`` -> ``Gi0/0``)."""
    return name.split(".", 1)[0]


def peers(links: list[Link]) -> dict[tuple[str, str], tuple[str, str]]:
    """Each linked port -> the port at the other end of its cable."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for a, b in links:
        out[a], out[b] = b, a
    return out


UP = ("up", "up")
DOWN = ("down", "down")
ADMIN_DOWN = ("administratively down", "down")


def oper_status(
    devices: Mapping[str, tuple[str, DeviceConfig]], peer: Mapping[tuple[str, str], tuple]
) -> dict[tuple[str, str], tuple[str, str]]:
    """(device, interface) -> (status, protocol) as ``show ip interface brief`` prints them,
    for every configured or cabled interface."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    cabled: dict[str, set[str]] = {}  # device -> its cabled ports (one pass, not one per device)
    for d, p in peer:
        cabled.setdefault(d, set()).add(p)
    for dev, (kind, cfg) in devices.items():
        ifs = cfg.interfaces
        ports = cabled.get(dev)
        names = sorted(ifs) if ports is None or ports <= ifs.keys() else sorted(ports.union(ifs))
        # Subinterfaces after every physical port (they take their parent's status).
        subs = [n for n in names if "." in n]
        for name in [n for n in names if "." not in n] + subs if subs else names:
            itf = ifs.get(name)
            if itf is not None and itf.shutdown:
                st = ADMIN_DOWN
            elif name.startswith(("Loopback", "Vlan")):
                st = _virtual(kind, cfg, name)
            elif "." in name:
                st = out.get((dev, parent(name)), DOWN)
            else:
                other = peer.get((dev, name))
                if other is None or other[0] not in devices:
                    st = DOWN
                else:  # up unless the far end is shut down
                    far = devices[other[0]][1].interfaces.get(other[1])
                    st = UP if far is None or not far.shutdown else DOWN
            out[(dev, name)] = st
    return out


def _virtual(kind: str, cfg: DeviceConfig, name: str) -> tuple[str, str]:
    """The status of a loopback (always up) or an SVI (up on a switch that knows its VLAN;
    VLAN 1 always exists)."""
    if name.startswith("Loopback"):
        return UP
    vid = int(name[4:]) if name[4:].isdigit() else 0
    return UP if kind in SWITCHES and (vid == 1 or vid in cfg.vlans) else DOWN


def _subinterfaces(cfg: DeviceConfig) -> dict[str, list[tuple[str, Interface]]]:
    """A router's tagged subinterfaces by physical port, in configuration order."""
    out: dict[str, list[tuple[str, Interface]]] = {}
    for name, itf in cfg.interfaces.items():
        if "." in name and itf.dot1q:
            out.setdefault(parent(name), []).append((name, itf))
    return out


def _channels(dev: str, kind: str, cfg: DeviceConfig, port: str, up,
              subs: dict | None = None) -> dict:
    """What one end of a cable carries: ``"u"`` (untagged) or a VLAN tag -> L2 node;
    ``subs`` is the device's :func:`_subinterfaces` (computed when not given)."""
    if kind in SWITCHES:
        itf = cfg.interfaces.get(port) or Interface(port)
        known = set(cfg.vlans) | {1}
        if itf.mode == "trunk":
            allowed = known if itf.trunk_allowed is None else known & itf.trunk_allowed
            native = itf.native_vlan
            chans: dict = {v: ("vl", dev, v) for v in allowed if v != native}
            if native in allowed:
                chans["u"] = ("vl", dev, native)
            return chans
        return {"u": ("vl", dev, itf.access_vlan)} if itf.access_vlan in known else {}
    chans = {"u": ("if", dev, port)}
    for name, itf in (_subinterfaces(cfg) if subs is None else subs).get(port, ()):
        if up.get((dev, name)):
            chans[itf.dot1q] = ("if", dev, name)
    return chans


class _UnionFind:
    """Union-find whose root is always the smallest member of its set (so a domain's id
    does not depend on the order of unions)."""

    def __init__(self) -> None:
        self.up: dict = {}

    def find(self, x):
        up = self.up
        root = up.get(x, x)
        if root == x:  # a root (most lookups): nothing to compress
            return x
        while True:
            nxt = up.get(root, root)
            if nxt == root:
                break
            root = nxt
        up[x] = root
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if ra < rb:
                self.up[rb] = ra
            else:
                self.up[ra] = rb


def _end(dev: str, kind: str, cfg: DeviceConfig, port: str, up, subs: dict) -> dict:
    """:func:`_channels` of one end of a cable, with a router's or host's port that has no
    tagged subinterfaces (most) answered without building its table."""
    if kind in SWITCHES or port in subs:
        return _channels(dev, kind, cfg, port, up, subs)
    return {"u": ("if", dev, port)}


def domains(
    devices: Mapping[str, tuple[str, DeviceConfig]],
    links: list[Link],
    status: Mapping[tuple[str, str], tuple[str, str]],
) -> dict[tuple[str, str], tuple]:
    """(device, L3 interface) -> its broadcast domain id, for every interface that is up."""
    up = {k: v[1] == "up" for k, v in status.items()}
    uf = _UnionFind()
    subs = {d: _subinterfaces(c) for d, (k, c) in devices.items() if k not in SWITCHES}
    for a, b in links:
        if not (up.get(a) and up.get(b)) or a[0] not in devices or b[0] not in devices:
            continue
        (ka, cfa), (kb, cfb) = devices[a[0]], devices[b[0]]
        sa, sb = subs.get(a[0]), subs.get(b[0])
        if sa is not None and sb is not None and a[1] not in sa and b[1] not in sb:
            # Two routed ports without tagged subinterfaces (most cables): each carries its
            # own interface untagged (what _end gives them), so the two join.
            uf.union(("if", a[0], a[1]), ("if", b[0], b[1]))
            continue
        ca = _end(a[0], ka, cfa, a[1], up, sa if sa is not None else _NO_SUBS)
        cb = _end(b[0], kb, cfb, b[1], up, sb if sb is not None else _NO_SUBS)
        if len(ca) == 1 and len(cb) == 1:  # one channel each
            key = next(iter(ca))
            if key in cb:
                uf.union(ca[key], cb[key])
            continue
        for key in ca.keys() & cb.keys():
            uf.union(ca[key], cb[key])
    out: dict[tuple[str, str], tuple] = {}
    # (Finds and the SVI unions interleave in this order: a domain's id is its smallest
    # member at the moment of the find.)
    switches = {d for d, (k, _c) in devices.items() if k in SWITCHES}
    for (dev, name), ok in up.items():
        if not ok:
            continue
        if dev in switches:
            if name.startswith("Vlan"):
                uf.union(("if", dev, name), ("vl", dev, int(name[4:])))
            elif not name.startswith("Loopback"):
                continue  # a switch port is not an L3 interface
        out[(dev, name)] = uf.find(("if", dev, name))
    return out


_NO_SUBS: dict = {}


# Status and domains are a pure function of the cabling and of each device's kind, VLAN
# database and per-interface layer-2 settings: a network that differs from one compiled
# before only in addresses, routing or filtering (a wrong submission, most faults, a start
# configuration with the same ports) reuses them. Both are shared and read-only.
_LAYER2 = Memo(64)  # the last few tasks (few entries: each holds two dicts)


def signature(kind: str, cfg: DeviceConfig) -> Key:
    """Everything :func:`oper_status` and :func:`domains` read of one device (callers
    cache it per shared config)."""
    # (tuple() of a list, not of a generator: faster for these few items)
    if kind not in SWITCHES:  # the VLAN settings of a router's or host's ports are unused
        return Key((kind, tuple([(name, i.shutdown, i.dot1q)
                                 for name, i in cfg.interfaces.items()])))
    ports = tuple([(name, i.shutdown, i.mode, i.access_vlan, i.trunk_allowed, i.native_vlan,
                    i.dot1q) for name, i in cfg.interfaces.items()])
    return Key((kind, tuple(cfg.vlans), ports))


def layer2(devices: Mapping[str, tuple[str, DeviceConfig]], links: list[Link],
           signatures: Mapping[str, Key]) -> tuple[
        dict[tuple[str, str], tuple[str, str]], dict[tuple[str, str], tuple]]:
    """(:func:`oper_status`, :func:`domains`) of a network, shared and read-only: computed
    once per cabling and set of device :func:`signature` s (given per device)."""
    key = Key((tuple([(d, signatures[d]) for d in devices]), tuple(links)))

    def make():
        status = oper_status(devices, peers(links))
        return status, domains(devices, links, status)

    return _LAYER2.get(key, make)
