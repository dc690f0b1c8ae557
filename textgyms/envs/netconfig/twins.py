"""Typed twins of configuration texts the generator renders from a :class:`Topo`.

A host's configuration (:func:`topologies.host_config`) and a router's addressing-only one
(:func:`topologies.base_config` without extra interface lines) are rendered from typed data,
so the :class:`DeviceConfig` they parse to can be built from that data directly. :func:`seed`
puts those configs into the shared parse memo under exactly the text they stand for, so the
compile of the reference network and the episode's candidate find them there instead of
parsing the text. tests/test_netconfig_twins.py checks every twin against the parser over
all families and levels.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from ipaddress import IPv4Interface

from textgyms.envs.netconfig.bounded import share
from textgyms.envs.netconfig.memo import PARSED
from textgyms.envs.netconfig.model import DeviceConfig, Interface
from textgyms.envs.netconfig.parse_if import ip4, normalize_ifname, parse_mask
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.topologies import ETH, Topo, base_config, dotted, netmask_text

# (port, description, IPv4Interface or None) of each interface, in rendering order
Ports = tuple[tuple[str, str, object], ...]


def plain(name: str, desc: str) -> bool:
    """Whether ``interface NAME`` and ``description DESC`` read back as exactly these
    strings (a canonical interface name; no runs of blanks the parser would collapse)."""
    return normalize_ifname(name) == name and desc == " ".join(desc.split()) and desc != ""


def _address(a: IPv4Interface) -> IPv4Interface | None:
    """The object the parser makes of ``a``'s ``ip address`` line: its memoized one, so a
    twin shares address objects with every parsed config that names the same address (and
    compares by identity with them, as parsed configs do); None if the line is refused."""
    got = parse_mask(dotted(int(a)), netmask_text(a.network.prefixlen))
    return None if isinstance(got, str) else got


def base_twin(dev: str, ports: Ports) -> tuple[DeviceConfig, int] | None:
    """The config :func:`topologies.base_config` text of ``dev`` with ``ports`` parses to,
    and its number of command lines (None: an address the parser refuses; parse it)."""
    cfg = DeviceConfig(hostname=dev)
    lines = 1
    for name, desc, addr in ports:
        ip = None if addr is None else _address(addr)
        if addr is not None and ip is None:
            return None
        cfg.interfaces[name] = Interface(name, ip, False, desc)
        lines += 3 if addr is None else 4
    return cfg, lines


def host_twin(t: Topo, name: str) -> tuple[DeviceConfig, int] | None:
    """The config :func:`topologies.host_config` text of host ``name`` parses to, and its
    number of command lines (None: an address the parser refuses; parse it)."""
    ip, gw = t.hosts[name]
    addr = _address(ip)
    if addr is None:
        return None
    cfg = DeviceConfig(hostname=name, interfaces={ETH: Interface(ETH, addr)},
                       gateway=ip4(dotted(int(gw))))
    return cfg, 5


def parsed_base(t: Topo, dev: str) -> DeviceConfig:
    """``parse_config(base_config(t, dev), dev)[0]``, a fresh config the caller may edit,
    built from ``t`` without parsing where every port reads back as written."""
    text = base_config(t, dev)
    ports = t.rendered[text][1]
    twin = base_twin(dev, ports) if all(plain(p, d) for p, d, _a in ports) else None
    return parse_config(text, dev)[0] if twin is None else twin[0]


def _put(text: str, device: str, make: Callable[[], tuple[DeviceConfig, int] | None]) -> None:
    """parsed_config's entry for ``text``: the shared twin ``make`` builds, no rejected
    lines (built only when the memo does not hold the text already; parsed if ``make``
    finds the text is not one a twin stands for)."""

    def entry():
        twin = make()
        if twin is None:
            cfg, issues, lines = parse_config(text, device)
            return share(cfg), tuple(issues), lines
        return share(twin[0]), (), twin[1]

    PARSED.get((text, device), entry)


def seed(t: Topo, configs: Iterable[dict[str, str]], fixed: dict[str, str],
         own: Container[str]) -> None:
    """Seed the parse memo with the twins of texts rendered from ``t``: the whole
    :func:`topologies.base_config` texts among ``configs`` (device -> text dicts), and the
    host configs in ``fixed`` (:meth:`Scenario.fixed_configs`) of hosts not in ``own`` (the
    devices whose fixed text the family wrote itself)."""
    for texts in configs:
        for dev, text in texts.items():
            got = t.rendered.get(text)
            if got is not None and got[0] == dev and _word(dev) \
                    and all(plain(p, d) for p, d, _a in got[1]):
                _put(text, dev, lambda dev=dev, ports=got[1]: base_twin(dev, ports))
    for h in t.hosts:
        if h not in own and _word(h):
            _put(fixed[h], h, lambda h=h: host_twin(t, h))


def _word(name: str) -> bool:
    """Whether ``hostname NAME`` reads back as ``NAME`` (a single word)."""
    return name.split() == [name]
