"""Fast paths of the IOS-lite parser for the lines generated configurations are made of.

A mode handler takes one line (split into words) in the mode at the top of the parser's stack.
It applies the line exactly as the general path in :mod:`parser` would, and returns None;
or, for anything else (an abbreviation, odd case, a line IOS rejects, a rarer form), it
returns :data:`SLOW` having changed nothing, and the general path decides. Each handler
takes only words the general path would leave as they are (full keywords in lower case)
and that the current mode accepts, so the mode stack stays as it was. Interface mode is
``("if", NAME, Interface)``: its handlers change the interface object held there, with no
lookup (only ``no interface`` removes one, and that clears the stack).

:func:`outer_only` says when every mode on the stack would refuse a line with
``% Invalid input`` and change nothing, so that the parser may try global configuration
straight away; :data:`GLOBAL_FAST` then takes the commonest global lines (``hostname``,
``interface``, ``router ospf``, ``ip default-gateway``, ``ip route``, ``ipv6
unicast-routing``) as the general path would, returning the mode they enter, or
:data:`SLOW` having changed nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from textgyms.envs.netconfig.model import DeviceConfig, Ospf
from textgyms.envs.netconfig.parse_bgp import bgp_cmd
from textgyms.envs.netconfig.parse_fhrp import fhrp_cmd
from textgyms.envs.netconfig.parse_if import (
    iface_address,
    iface_cmd,
    iface_ospf,
    ip4,
    normalize_ifname,
    number,
    ospf_network,
    ospf_passive,
)
from textgyms.envs.netconfig.parse_route import static_route
from textgyms.envs.netconfig.parse_v6 import add_address
from textgyms.envs.netconfig.vocab import INTERFACE, MODE_TREES, harmless

__all__ = ["GLOBAL_FAST", "MODE_FAST", "SLOW", "outer_only"]

SLOW = object()  # "not handled here, nothing changed": the general path decides


def _no(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``no shutdown`` and ``no ip address``."""
    if len(words) == 2 and words[1] == "shutdown":
        mode[2].shutdown = False
        return None
    if len(words) == 3 and words[1] == "ip" and words[2] == "address":
        mode[2].ip = None
        return None
    return SLOW


def _shutdown(dev: DeviceConfig, mode: tuple, words: list[str]):
    if len(words) == 1:
        mode[2].shutdown = True
        return None
    return SLOW


def _description(dev: DeviceConfig, mode: tuple, words: list[str]):
    mode[2].description = " ".join(words[1:])
    return None


def _ip(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``ip address A M`` (a rejected address goes the general way for its message), ``ip
    nat inside|outside`` and ``ip access-group ACL in|out``."""
    n = len(words)
    if n == 4 and words[1] == "address":
        return None if iface_address(dev, mode[2], words[2], words[3]) is None \
            else SLOW
    if n == 3 and words[1] == "nat" and words[2] in ("inside", "outside"):
        mode[2].nat = words[2]
        return None
    if n == 4 and words[1] == "access-group" and words[3] in ("in", "out"):
        itf = mode[2]
        if words[3] == "in":
            itf.acl_in = words[2]
        else:
            itf.acl_out = words[2]
        return None
    return SLOW


def _switchport(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``switchport mode access|trunk``, ``switchport access vlan N`` and ``switchport trunk
    allowed|native vlan ...`` (keywords as written, which the keyword tree leaves alone;
    ``iface_cmd`` changes nothing when it rejects a line)."""
    n = len(words)
    if (n == 3 and words[1] == "mode" and words[2] in ("access", "trunk")) or \
            (n == 4 and words[1] == "access" and words[2] == "vlan") or \
            (n == 5 and words[1] == "trunk" and words[2] in ("allowed", "native")
             and words[3] == "vlan"):
        return None if iface_cmd(dev, mode[1], words) is None else SLOW
    return SLOW


def _ipv6(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``ipv6 address X/L`` and ``ipv6 ospf ...`` (what IOS rejects, and the rest, go the
    general way; ``iface_ospf`` changes nothing when it rejects a line)."""
    if len(words) == 3 and words[1] == "address":
        return None if add_address(dev, mode[2], words[2]) else SLOW
    if len(words) >= 3 and words[1] == "ospf" and not harmless("if", words) and \
            iface_ospf(dev, mode[2], words[2:], False, v3=True) is None:
        return None
    return SLOW


def _fhrp(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``standby ...`` and ``vrrp ...`` (``fhrp_cmd`` changes nothing when it rejects a
    line, which then goes the general way for its message)."""
    return None if fhrp_cmd(mode[2], words, False) is None else SLOW


def _bgp(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``neighbor ...``, ``network ...`` and ``bgp ...`` under ``router bgp`` (their
    keyword tree leaves the words after the first as written; ``bgp_cmd`` changes nothing
    when it rejects a line)."""
    return None if dev.bgp is not None and bgp_cmd(dev, words) is None else SLOW


def _network(dev: DeviceConfig, mode: tuple, words: list[str]):
    """``network A WILDCARD area N`` under ``router ospf``."""
    if dev.ospf is not None and ospf_network(dev.ospf, words, False) is None:
        return None
    return SLOW


def _passive(dev: DeviceConfig, mode: tuple, words: list[str]):
    if dev.ospf is not None and len(words) == 2 and ospf_passive(dev.ospf, words[1], False) \
            is None:
        return None
    return SLOW


Handler = Callable[[DeviceConfig, tuple, list[str]], object]
# Mode kind -> first word -> its handler (one lookup per line: the parser keeps the table of
# the mode on top of its stack).
MODE_FAST: dict[str, dict[str, Handler]] = {
    "if": {"no": _no, "shutdown": _shutdown, "description": _description, "ip": _ip,
           "ipv6": _ipv6, "standby": _fhrp, "vrrp": _fhrp, "switchport": _switchport},
    "ospf": {"network": _network, "passive-interface": _passive},
    "bgp": {"neighbor": _bgp, "network": _bgp, "bgp": _bgp},
}


def _hostname(dev: DeviceConfig, words: list[str]):
    if len(words) == 2:
        dev.hostname = words[1]
        return None
    return SLOW


def _interface(dev: DeviceConfig, words: list[str]):
    """``interface NAME`` (a name written apart from its number goes the general way)."""
    name = normalize_ifname(words[1]) if len(words) == 2 else None
    if name is None:
        return SLOW
    return ("if", name, dev.iface(name))


def _router(dev: DeviceConfig, words: list[str]):
    """``router ospf PID`` (``router bgp`` and the rest go the general way)."""
    pid = number(words[2], 1, 65535) if len(words) == 3 and words[1] == "ospf" else None
    if pid is None:
        return SLOW
    if dev.ospf is None or dev.ospf.pid != pid:
        dev.ospf = Ospf(pid)
    return ("ospf",)


def _ipv6_global(dev: DeviceConfig, words: list[str]):
    """``ipv6 unicast-routing``."""
    if len(words) == 2 and words[1] == "unicast-routing":
        dev.ipv6_routing = True
        return None
    return SLOW


def _ip_global(dev: DeviceConfig, words: list[str]):
    """``ip default-gateway A`` (the hosts' commonest line after their address) and ``ip
    route ...`` (``static_route`` changes nothing when it rejects a line)."""
    if len(words) > 1 and words[1] == "route":
        return None if static_route(dev, words, False) is None else SLOW
    gateway = ip4(words[2]) if len(words) == 3 and words[1] == "default-gateway" else None
    if gateway is None:
        return SLOW
    dev.gateway = gateway
    return None


GlobalHandler = Callable[[DeviceConfig, list[str]], object]
# First word -> the handler of a global line every mode on the stack refuses (outer_only):
# the mode the line enters (None: global configuration), or SLOW.
GLOBAL_FAST: dict[str, GlobalHandler] = {
    "hostname": _hostname, "interface": _interface, "router": _router, "ip": _ip_global,
    "ipv6": _ipv6_global,
}

_REFUSED: dict[tuple[str, str], bool] = {}
_IP_REFUSED: dict[str, bool] = {}  # word after ``ip`` -> no interface ``ip`` keyword starts with it


def _refuses(kind: str, word: str) -> bool:
    """Whether mode ``kind`` refuses every line starting with ``word`` (not ``no``) with
    ``% Invalid input`` before changing anything: ``word`` is no keyword of the mode nor a
    prefix of one (so it stays as written), and no ACL sequence number."""
    key = (kind, word)
    found = _REFUSED.get(key)
    if found is None:
        low = word.lower()
        found = _REFUSED[key] = low != "no" and word not in MODE_TREES[kind] and not any(
            k.startswith(low) for k in MODE_TREES[kind]) and not (kind == "acl" and word.isdigit())
        if len(_REFUSED) > 4096:  # agent text can hold any word: stay bounded
            _REFUSED.clear()
    return found


def _if_refuses_ip(dev: DeviceConfig, name: str, words: list[str]) -> bool:
    """Whether interface mode refuses ``ip WORD ...`` with ``% Invalid input`` and no
    change: WORD is no interface ``ip`` keyword nor a prefix of one (``ip route``,
    ``ip default-gateway``...), and the interface exists (the interface commands create
    theirs)."""
    if len(words) < 2 or name not in dev.interfaces:
        return False
    found = _IP_REFUSED.get(words[1])
    if found is None:
        low = words[1].lower()
        found = _IP_REFUSED[words[1]] = not any(k.startswith(low) for k in INTERFACE["ip"])
        if len(_IP_REFUSED) > 4096:  # agent text can hold any word: stay bounded
            _IP_REFUSED.clear()
    return found


def outer_only(dev: DeviceConfig, stack: list[tuple], words: list[str]) -> bool:
    """Whether every mode on ``stack`` refuses ``words`` with ``% Invalid input`` and changes
    nothing (true for an empty stack; the parser asks only about lines that start with a
    global command, never ``exit``, ``end`` or ``no``)."""
    first = words[0]
    for mode in stack:
        kind = mode[0]
        refused = _REFUSED.get((kind, first))
        if refused is None:
            refused = _refuses(kind, first)
        if not refused and not (
                kind == "if" and first == "ip" and _if_refuses_ip(dev, mode[1], words)):
            return False
    return True
