"""The IOS-lite parser: a strict subset of Cisco IOS configuration, applied line by line.

:func:`apply_lines` applies configuration text to a :class:`DeviceConfig` (as ``configure
terminal`` would), so a whole config and an incremental edit go through the same code.
Every line that is outside the dialect or invalid is returned as an :class:`Issue` with its
line number; nothing is silently ignored. :func:`split_devices` cuts a multi-device answer
into per-device sections (``! device R1`` markers or ``hostname`` lines).
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import re

from textgyms.envs.netconfig.acl import parse_ace
from textgyms.envs.netconfig.model import (
    Acl,
    DeviceConfig,
    Issue,
    NatRule,
    Ospf,
    StaticRoute,
)

IFACE_TYPES = (
    "GigabitEthernet",
    "FastEthernet",
    "Ethernet",
    "TenGigabitEthernet",
    "Serial",
    "Loopback",
    "Vlan",
)
_IFNAME = re.compile(r"^([A-Za-z-]+)\s*(\d+(?:/\d+)*(?:\.\d+)?)$")
_NOOPS = {"!", "end", "exit", "configure terminal", "conf t", "enable", "ip routing"}
_DEVICE_MARK = re.compile(r"^\s*!\s*device\s+(\S+)\s*$", re.I)


@functools.lru_cache(maxsize=4096)
def normalize_ifname(text: str) -> str | None:
    """``gi0/1`` -> ``GigabitEthernet0/1`` (any unambiguous prefix, as IOS accepts); None if
    the name is not an interface of the dialect."""
    m = _IFNAME.match(text.strip())
    if not m:
        return None
    prefix = m.group(1).lower()
    hits = [t for t in IFACE_TYPES if t.lower().startswith(prefix)]
    if prefix.startswith("te"):
        hits = ["TenGigabitEthernet"]
    if len(hits) != 1:
        return None
    return hits[0] + m.group(2)


@functools.lru_cache(maxsize=8192)
def parse_mask(addr: str, mask: str) -> ipaddress.IPv4Interface | str:
    """``A M`` -> an interface address, or the IOS-style reason it is rejected."""
    try:
        iface = ipaddress.IPv4Interface(f"{addr}/{mask}")
    except ValueError:
        return f"bad address or mask {addr} {mask}"
    net = iface.network
    if net.prefixlen < 31 and iface.ip in (net.network_address, net.broadcast_address):
        return f"Bad mask /{net.prefixlen} for address {addr}"
    return iface


def _ip(text: str) -> ipaddress.IPv4Address | None:
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        return None


# --- interface sub-commands -----------------------------------------------------------------


def _iface_cmd(dev: DeviceConfig, name: str, words: list[str]) -> str | None:
    """Apply one interface sub-command; return None or the reason it is rejected."""
    itf = dev.iface(name)
    neg = words[0] == "no"
    w = words[1:] if neg else words
    key = " ".join(w[:2])
    if w == ["shutdown"]:
        itf.shutdown = not neg
    elif w[0] == "description":
        itf.description = "" if neg else " ".join(w[1:])
    elif key == "ip address" and (neg or len(w) == 4):
        if neg:
            itf.ip = None
            return None
        addr = parse_mask(w[2], w[3])
        if isinstance(addr, str):
            return addr
        itf.ip = addr
    elif key == "ip access-group" and len(w) == 4 and w[3] in ("in", "out"):
        setattr(itf, f"acl_{w[3]}", None if neg else w[2])
    elif key == "ip nat" and len(w) == 3 and w[2] in ("inside", "outside"):
        itf.nat = None if neg else w[2]
    elif key == "ip ospf" and len(w) == 4 and w[2] == "cost" and w[3].isdigit():
        itf.ospf_cost = None if neg else max(1, min(65535, int(w[3])))
    elif w[0] == "switchport":
        return _switchport(itf, w, neg)
    elif w[0] == "encapsulation" and len(w) == 3 and w[1].lower() == "dot1q" and w[2].isdigit():
        itf.dot1q = None if neg else int(w[2])
    else:
        return "unknown interface command"
    return None


def _switchport(itf, w: list[str], neg: bool) -> str | None:
    if w[1:3] == ["mode", "access"] or w[1:3] == ["mode", "trunk"]:
        itf.mode = None if neg else w[2]
    elif w[1:3] == ["access", "vlan"] and len(w) == 4 and w[3].isdigit():
        itf.access_vlan = 1 if neg else _vlan_id(w[3])
        return None if itf.access_vlan else "bad VLAN id"
    elif w[1:4] == ["trunk", "allowed", "vlan"] and len(w) >= 5:
        return _trunk_allowed(itf, w[4:], neg)
    elif len(w) == 1:
        return None  # "switchport" alone: layer-2 mode, already the default on switches
    else:
        return "unknown switchport command"
    return None


def _vlan_id(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    return value if 1 <= value <= 4094 else 0


def _vlan_list(text: str) -> frozenset[int] | None:
    """``10,20,30-32`` -> the set of VLAN ids, or None if malformed."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = _vlan_id(lo), _vlan_id(hi or lo)
        if not a or not b or b < a:
            return None
        out.update(range(a, b + 1))
    return frozenset(out)


def _trunk_allowed(itf, args: list[str], neg: bool) -> str | None:
    if neg:
        itf.trunk_allowed = None
        return None
    if args == ["all"]:
        itf.trunk_allowed = None
        return None
    op = args[0] if args[0] in ("add", "remove", "none") else None
    if op == "none":
        itf.trunk_allowed = frozenset()
        return None
    vl = _vlan_list(args[1] if op else args[0]) if len(args) == (2 if op else 1) else None
    if vl is None:
        return "bad VLAN list"
    current = itf.trunk_allowed if itf.trunk_allowed is not None else frozenset(range(1, 4095))
    itf.trunk_allowed = current | vl if op == "add" else current - vl if op == "remove" else vl
    return None


# --- other modes ----------------------------------------------------------------------------


def _ospf_cmd(ospf: Ospf, words: list[str]) -> str | None:
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if w[0] == "network" and len(w) == 5 and w[3] == "area" and w[4].isdigit():
        a, wc = _ip(w[1]), _ip(w[2])
        if a is None or wc is None:
            return "bad network statement"
        entry = (a, wc, int(w[4]))
        if neg:
            ospf.networks = [n for n in ospf.networks if n != entry]
        elif entry not in ospf.networks:
            ospf.networks.append(entry)
    elif w[0] == "passive-interface" and len(w) == 2:
        name = normalize_ifname(w[1])
        if name is None:
            return "bad interface name"
        (ospf.passive.discard if neg else ospf.passive.add)(name)
    elif w[0] == "router-id" and len(w) == 2 and _ip(w[1]) is not None:
        ospf.router_id = None if neg else _ip(w[1])
    else:
        return "unknown router ospf command"
    return None


def _acl_number_kind(name: str) -> str | None:
    if not name.isdigit():
        return None
    n = int(name)
    if 1 <= n <= 99 or 1300 <= n <= 1999:
        return "standard"
    if 100 <= n <= 199 or 2000 <= n <= 2699:
        return "extended"
    return None


def _add_ace(acl: Acl, words: list[str]) -> str | None:
    seq = None
    if words[0].isdigit():
        seq, words = int(words[0]), words[1:]
    if words and words[0] == "remark":
        acl.remarks.append(" ".join(words[1:]))
        return None
    ace = parse_ace(words, acl.kind)
    if isinstance(ace, str):
        return ace
    last = acl.entries[-1].seq if acl.entries else 0
    if seq is None:
        seq = (last // 10 + 1) * 10
    elif any(e.seq == seq for e in acl.entries):
        return f"duplicate sequence number {seq}"
    acl.entries.append(dataclasses.replace(ace, seq=seq))
    if seq < last:
        acl.entries.sort(key=lambda e: e.seq)
    return None


def _numbered_acl(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    kind = _acl_number_kind(w[1]) if len(w) > 1 else None
    if kind is None:
        return "bad access-list number"
    if neg:
        dev.acls.pop(w[1], None)
        return None
    if len(w) < 3:
        return "incomplete access-list"
    acl = dev.acls.get(w[1]) or Acl(w[1], kind)
    reason = _add_ace(acl, w[2:])
    if reason is None:
        dev.acls[w[1]] = acl
    return reason


def _static_route(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    if len(w) not in (5, 6):
        return "ip route needs PREFIX MASK NEXTHOP|INTERFACE [DISTANCE]"
    try:
        prefix = ipaddress.IPv4Network(f"{w[2]}/{w[3]}")
    except ValueError:
        return "bad prefix or mask (host bits set?)"
    nh, ifname = _ip(w[4]), normalize_ifname(w[4])
    if nh is None and ifname is None:
        return "bad next hop"
    ad = int(w[5]) if len(w) == 6 and w[5].isdigit() and 1 <= int(w[5]) <= 255 else 1
    if len(w) == 6 and ad != int(w[5] if w[5].isdigit() else -1):
        return "bad administrative distance"
    route = StaticRoute(prefix, nh, ifname, ad)
    same = [r for r in dev.routes if (r.prefix, r.nexthop, r.iface) == (prefix, nh, ifname)]
    for r in same:
        dev.routes.remove(r)
    if not neg:
        dev.routes.append(route)
    return None


def _nat(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    tail = w[4:]
    if w[2:4] != ["inside", "source"] or not tail:
        return "only 'ip nat inside source ...' is in the dialect"
    if tail[0] == "list" and len(tail) in (4, 5) and tail[2] == "interface":
        ifname = normalize_ifname(tail[3])
        if ifname is None or (len(tail) == 5 and tail[4] != "overload"):
            return "bad ip nat inside source list command"
        rule = NatRule("dynamic", acl=tail[1], iface=ifname, overload=len(tail) == 5)
    elif tail[0] == "static" and len(tail) == 3 and _ip(tail[1]) and _ip(tail[2]):
        rule = NatRule("static", local=_ip(tail[1]), global_=_ip(tail[2]))
    else:
        return "bad ip nat inside source command"
    if rule in dev.nat:
        dev.nat.remove(rule)
    if not neg:
        dev.nat.append(rule)
    return None


def _global_cmd(dev: DeviceConfig, words: list[str]) -> tuple[str | None, tuple | None]:
    """Apply one global command; return (reason or None, the new mode or None)."""
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if not w:
        return "incomplete command", None
    head = w[0]
    if head == "hostname" and len(w) == 2 and not neg:
        dev.hostname = w[1]
    elif head == "interface" and len(w) >= 2:
        name = normalize_ifname("".join(w[1:]))
        if name is None:
            return "bad interface name", None
        if neg:
            dev.interfaces.pop(name, None)
            return None, None
        dev.iface(name)
        return None, ("if", name)
    elif head == "vlan" and len(w) == 2 and _vlan_id(w[1]):
        vid = _vlan_id(w[1])
        if neg:
            dev.vlans.pop(vid, None)
            return None, None
        dev.vlans.setdefault(vid, f"VLAN{vid:04d}")
        return None, ("vlan", vid)
    elif head == "router" and len(w) == 3 and w[1] == "ospf" and w[2].isdigit():
        if neg:
            dev.ospf = None
            return None, None
        if dev.ospf is None or dev.ospf.pid != int(w[2]):
            dev.ospf = Ospf(int(w[2]))
        return None, ("ospf",)
    elif head == "access-list":
        return _numbered_acl(dev, w, neg), None
    elif head == "ip" and len(w) >= 2:
        return _ip_global(dev, w, neg)
    else:
        return "unknown command", None
    return None, None


def _ip_global(dev: DeviceConfig, w: list[str], neg: bool) -> tuple[str | None, tuple | None]:
    if w[1] == "route":
        return _static_route(dev, w, neg), None
    if w[1] == "nat":
        return _nat(dev, w, neg), None
    if w[1] == "default-gateway" and len(w) == 3 and _ip(w[2]):
        dev.gateway = None if neg else _ip(w[2])
        return None, None
    if w[1] == "access-list" and len(w) == 4 and w[2] in ("standard", "extended"):
        if _acl_number_kind(w[3]) not in (None, w[2]):
            return "ACL number does not match its type", None
        if neg:
            dev.acls.pop(w[3], None)
            return None, None
        if w[3] not in dev.acls or dev.acls[w[3]].kind != w[2]:
            dev.acls[w[3]] = Acl(w[3], w[2])
        return None, ("acl", w[3])
    return "unknown ip command", None


# A number int() refuses: past its 4,300-digit limit, or a digit that is not decimal ("²" is
# isdigit() but not int()-able). The commands check words with isdigit() then call int(), so such
# a line is refused here, before any command sees it.
_LONG_NUMBER = re.compile(r"\d{100}")


def _bad_number(line: str) -> bool:
    if _LONG_NUMBER.search(line) is not None:
        return True
    return not line.isascii() and any(c.isdigit() and not c.isdecimal() for c in line)


def apply_lines(dev: DeviceConfig, text: str, device: str = "", first_line: int = 1) -> list[Issue]:
    """Apply IOS-lite ``text`` to ``dev`` in place; return the rejected lines."""
    issues: list[Issue] = []
    mode: tuple | None = None
    for lineno, raw in enumerate(text.splitlines(), first_line):
        line = raw.strip()
        if not line or line.startswith("!") or line.lower() in _NOOPS:
            mode = None if line.lower() in ("end", "exit") or line.startswith("!") else mode
            continue
        if _bad_number(line):
            issues.append(Issue(device or dev.hostname or "?", lineno, raw, "bad number"))
            continue
        words = line.split()
        reason = _in_mode(dev, mode, words) if mode is not None else "not in a mode"
        if reason is not None:
            in_mode = reason if mode is not None else None
            reason, new_mode = _global_cmd(dev, words)
            mode = new_mode if reason is None else mode
            # A line that fits neither: the mode's reason is the more specific one.
            reason = in_mode if reason is not None and in_mode is not None else reason
        if reason is not None:
            issues.append(Issue(device or dev.hostname or "?", lineno, raw, reason))
    return issues


def _in_mode(dev: DeviceConfig, mode: tuple, words: list[str]) -> str | None:
    if mode[0] == "if":
        return _iface_cmd(dev, mode[1], words)
    if mode[0] == "vlan":
        if words[0] == "name" and len(words) == 2:
            dev.vlans[mode[1]] = words[1]
            return None
        return "unknown vlan command"
    if mode[0] == "ospf":
        return _ospf_cmd(dev.ospf, words)
    acl = dev.acls.get(mode[1])
    if acl is None:
        return "ACL was removed"
    if words[0] == "no" and len(words) == 2 and words[1].isdigit():
        acl.entries = [e for e in acl.entries if e.seq != int(words[1])]
        return None
    return _add_ace(acl, words)


def parse_config(text: str, device: str = "") -> tuple[DeviceConfig, list[Issue], int]:
    """A whole device configuration: (config, rejected lines, number of accepted lines)."""
    dev = DeviceConfig()
    issues = apply_lines(dev, text, device)
    lines = sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("!"))
    return dev, issues, lines - len(issues)


def split_devices(text: str) -> list[tuple[str, str, int]]:
    """Cut a multi-device answer into ``(device, text, first line number)`` sections.

    A section starts at a ``! device NAME`` marker, or at a ``hostname NAME`` line when no
    marker opened the current section. Text before the first section gets device ``""``.
    """
    sections: list[tuple[str, list[str], int]] = []
    named: list[bool] = []  # whether each section already had its hostname line
    for lineno, raw in enumerate(text.splitlines(), 1):
        mark = _DEVICE_MARK.match(raw)
        if mark:
            sections.append((mark.group(1), [], lineno + 1))
            named.append(False)
            continue
        words = raw.split()
        if len(words) == 2 and words[0] == "hostname":
            if not sections or sections[-1][0] != words[1] or named[-1]:
                sections.append((words[1], [], lineno))
                named.append(False)
            named[-1] = True
        elif not sections:
            sections.append(("", [], lineno))
            named.append(False)
        sections[-1][1].append(raw)
    return [(name, "\n".join(lines), first) for name, lines, first in sections]
