"""The IOS-lite parser: a subset of Cisco IOS configuration, applied line by line.

:func:`apply_lines` applies configuration text to a :class:`DeviceConfig` (as ``configure
terminal`` would), so a whole config and an incremental edit go through the same code.
Keywords may be abbreviated as IOS allows; lines IOS accepts that change nothing modelled
(logging, ``line vty``, port speed...) are kept verbatim; every line IOS would reject, or
that is outside the dialect, is returned as an :class:`Issue` with its line number and IOS's
message. :func:`split_devices` cuts a multi-device answer into per-device sections
(``! device R1`` markers or ``hostname`` lines).
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import re

from textgyms.envs.netconfig import parse_bgp, parse_fhrp, parse_v6
from textgyms.envs.netconfig.acl import parse_ace
from textgyms.envs.netconfig.model import (
    Acl,
    DeviceConfig,
    Issue,
    NatPool,
    NatRule,
    Ospf,
)
from textgyms.envs.netconfig.parse_fast import GLOBAL_FAST, MODE_FAST, SLOW, outer_only
from textgyms.envs.netconfig.parse_if import (
    iface_cmd,
    ip4,
    normalize_ifname,
    number,
    ospf_cmd,
    parse_mask,
)
from textgyms.envs.netconfig.parse_route import static_route
from textgyms.envs.netconfig.vocab import (
    ACL,
    GLOBAL,
    INCOMPLETE,
    INVALID,
    MODE_TREES,
    expand,
    harmless,
)

__all__ = ["apply_counted", "apply_lines", "normalize_ifname", "parse_config", "parse_mask",
           "split_devices"]
_NOOPS = {"configure terminal", "conf t", "enable"}
_NOOP_LEN = max(map(len, _NOOPS))
_DEVICE_MARK = re.compile(r"^\s*!\s*device\s+(\S+)\s*$", re.I)
_TREES = MODE_TREES
# Global commands a line may go to directly when every mode on the stack refuses it.
_GLOBAL_WORDS = frozenset(GLOBAL) - {"end", "exit"}


@functools.lru_cache(maxsize=16384)
def _expanded(mode: str, words: tuple[str, ...]) -> tuple[str, ...] | str:
    """:func:`vocab.expand` in ``mode``, cached: configurations repeat their lines."""
    out = expand(list(words), _TREES[mode])
    return out if isinstance(out, str) else tuple(out)


def _expand(mode: str, words: list[str]) -> list[str] | str:
    """:func:`vocab.expand` in ``mode``: a copy of ``words`` when its keywords are already
    written out in lower case (what generated configs hold: no cache entry per address),
    else the cached expansion."""
    node = _TREES[mode]
    i = 1 if words[0] == "no" else 0
    while node is not None and i < len(words):
        node = node.get(words[i], _NOT_KEY)
        if node is _NOT_KEY:
            out = _expanded(mode, tuple(words))
            return out if isinstance(out, str) else list(out)
        i += 1
    return words[:]


_NOT_KEY: dict = {}  # a word that is no keyword of its tree as written


def _acl_number_kind(name: str) -> str | None:
    n = number(name, 1, 2699)
    if n is None:
        return None
    if 1 <= n <= 99 or 1300 <= n <= 1999:
        return "standard"
    if 100 <= n <= 199 or 2000 <= n <= 2699:
        return "extended"
    return None


def _add_ace(acl: Acl, words: list[str]) -> str | None:
    seq = None
    if words[0].isdigit():
        seq, words = int(words[0]), words[1:]
    if not words:
        return INCOMPLETE
    if words[0] == "remark":
        acl.remarks.append(" ".join(words[1:]))
        return None
    ace = parse_ace(words, acl.kind)
    if isinstance(ace, str):
        return f"{INVALID} ({ace})"
    last = acl.entries[-1].seq if acl.entries else 0
    if seq is None:
        seq = (last // 10 + 1) * 10
    elif any(e.seq == seq for e in acl.entries):
        return "% Duplicate sequence number"
    acl.entries.append(dataclasses.replace(ace, seq=seq))
    if seq < last:
        acl.entries.sort(key=lambda e: e.seq)
    return None


def _numbered_acl(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    kind = _acl_number_kind(w[1]) if len(w) > 1 else None
    if kind is None:
        return INVALID if len(w) > 1 else INCOMPLETE
    if neg:
        dev.acls.pop(w[1], None)
        return None
    if len(w) < 3:
        return INCOMPLETE
    acl = dev.acls.get(w[1]) or Acl(w[1], kind)
    words = expand(w[2:], ACL)
    reason = words if isinstance(words, str) else _add_ace(acl, words)
    if reason is None:
        dev.acls[w[1]] = acl
    return reason


def _nat_pool(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    """``ip nat pool NAME START END {netmask M | prefix-length N}``."""
    if neg and len(w) == 4:
        dev.nat_pools.pop(w[3], None)
        return None
    if len(w) != 8:
        return INCOMPLETE if len(w) < 8 else INVALID
    start, end = ip4(w[4]), ip4(w[5])
    plen = None
    if w[6] == "netmask" and ip4(w[7]) is not None:
        try:
            plen = ipaddress.IPv4Network(f"0.0.0.0/{w[7]}").prefixlen
        except ValueError:
            plen = None
    elif w[6] == "prefix-length":
        plen = number(w[7], 1, 32)
    if start is None or end is None or plen is None:
        return INVALID
    if int(end) < int(start):
        return "%End address less than starting address"
    if ipaddress.IPv4Interface(f"{start}/{plen}").network != ipaddress.IPv4Interface(
        f"{end}/{plen}"
    ).network:
        return "%Start and end addresses on different subnets"
    if neg:
        dev.nat_pools.pop(w[3], None)
    else:
        dev.nat_pools[w[3]] = NatPool(w[3], start, end, plen)
    return None


def _nat_static(tail: list[str]) -> NatRule | str:
    """``static L G [extendable]`` or ``static tcp|udp L LP {G | interface IF} GP [...]``."""
    ext = tail[-1] == "extendable"
    t = tail[1:-1] if ext else tail[1:]
    if len(t) == 2 and ip4(t[0]) and ip4(t[1]):
        return NatRule("static", local=ip4(t[0]), global_=ip4(t[1]), extendable=ext)
    if len(t) in (5, 6) and t[0] in ("tcp", "udp") and ip4(t[1]):
        lport = number(t[2], 1, 65535)
        gport = number(t[-1], 1, 65535)
        iface = normalize_ifname(t[4]) if len(t) == 6 and t[3] == "interface" else None
        glob = ip4(t[3]) if len(t) == 5 else None
        if lport is None or gport is None or (glob is None and iface is None):
            return INVALID
        return NatRule("static", local=ip4(t[1]), global_=glob, proto=6 if t[0] == "tcp" else 17,
                       lport=lport, gport=gport, extendable=ext, global_iface=iface)
    return INVALID if len(t) >= 2 else INCOMPLETE


def _nat(dev: DeviceConfig, w: list[str], neg: bool) -> str | None:
    if len(w) > 2 and w[2] == "pool":
        return _nat_pool(dev, w, neg)
    tail = w[4:]
    if w[2:4] != ["inside", "source"] or not tail:
        return INVALID if len(w) > 4 else INCOMPLETE
    if tail[0] == "list" and len(tail) in (4, 5) and tail[2] in ("interface", "pool"):
        if len(tail) == 5 and tail[4] != "overload":
            return INVALID
        if tail[2] == "interface":
            ifname = normalize_ifname(tail[3])
            if ifname is None:
                return INVALID
            # IOS always overloads the interface address (and writes ``overload``).
            rule = NatRule("dynamic", acl=tail[1], iface=ifname, overload=True)
        else:
            rule = NatRule("dynamic", acl=tail[1], pool=tail[3], overload=len(tail) == 5)
    elif tail[0] == "static":
        rule = _nat_static(tail)
        if isinstance(rule, str):
            return rule
        clash = _static_clash(dev, rule)
        if clash and not neg:
            return clash
    else:
        return INVALID if len(tail) > 1 else INCOMPLETE
    dev.nat = [r for r in dev.nat if _nat_key(r) != _nat_key(rule)]
    if not neg:
        dev.nat.append(rule)
    return None


def _nat_key(r: NatRule) -> tuple:
    if r.kind == "dynamic":
        return ("dynamic", r.acl)
    return ("static", r.proto, r.local, r.lport, r.global_, r.gport, r.global_iface)


def _static_clash(dev: DeviceConfig, rule: NatRule) -> str | None:
    """IOS refuses a second static mapping of the same inside address unless both are
    ``extendable``."""
    for r in dev.nat:
        if r.kind != "static" or _nat_key(r) == _nat_key(rule):
            continue
        if (r.proto, r.local, r.lport) == (rule.proto, rule.local, rule.lport):
            if not (r.extendable and rule.extendable):
                return f"% similar static entry ({r.local} -> {r.global_}) already exists"
    return None


def _global_cmd(dev: DeviceConfig, words: list[str]) -> tuple[str | None, tuple | None]:
    """Apply one global command; return (IOS's message or None, the new mode or None)."""
    words = _expand("global", words)
    if isinstance(words, str):
        return words, None
    neg = words[0] == "no"
    w = words[1:] if neg else words
    if not w:
        return INCOMPLETE, None
    head = w[0]
    if harmless("global", words):
        dev.extra.append(" ".join(words))
        return None, None
    if head == "line":
        if len(w) < 2:
            return INCOMPLETE, None
        dev.extra.append(" ".join(words))
        return None, ("line",)
    if head == "hostname" and len(w) == 2 and not neg:
        dev.hostname = w[1]
    elif head == "interface":
        return _interface(dev, w, neg)
    elif head == "vlan":
        return _vlan(dev, w, neg)
    elif head == "router" and len(w) >= 2 and w[1] == "bgp":
        reason = parse_bgp.router_bgp(dev, w, neg)
        return reason, (("bgp",) if reason is None and not neg else None)
    elif head == "route-map":
        return parse_bgp.route_map(dev, w, neg)
    elif head == "router" and len(w) == 3 and w[1] == "ospf":
        pid = number(w[2], 1, 65535)
        if pid is None:
            return INVALID, None
        if neg:
            dev.ospf = None
            return None, None
        if dev.ospf is None or dev.ospf.pid != pid:
            dev.ospf = Ospf(pid)
        return None, ("ospf",)
    elif head == "access-list":
        return _numbered_acl(dev, w, neg), None
    elif head == "ip" and len(w) >= 2:
        return _ip_global(dev, w, neg)
    elif head == "ipv6":
        return parse_v6.global_ipv6(dev, w, neg)
    else:
        return INCOMPLETE if len(w) == 1 and head in GLOBAL else INVALID, None
    return None, None


def _interface(dev: DeviceConfig, w: list[str], neg: bool) -> tuple[str | None, tuple | None]:
    """``[no] interface NAME``: the mode it enters holds the interface object too (see
    :mod:`parse_fast`)."""
    if len(w) < 2:
        return INCOMPLETE, None
    name = normalize_ifname("".join(w[1:]))
    if name is None:
        return INVALID, None
    if neg:
        dev.interfaces.pop(name, None)
        return None, None
    return None, ("if", name, dev.iface(name))


def _vlan(dev: DeviceConfig, w: list[str], neg: bool) -> tuple[str | None, tuple | None]:
    vid = number(w[1], 1, 4094) if len(w) == 2 else None
    if vid is None:
        return (INCOMPLETE if len(w) < 2 else INVALID), None
    if neg:
        dev.vlans.pop(vid, None)
        return None, None
    dev.vlans.setdefault(vid, f"VLAN{vid:04d}")
    return None, ("vlan", vid)


def _ip_global(dev: DeviceConfig, w: list[str], neg: bool) -> tuple[str | None, tuple | None]:
    if w[1] == "route":
        return static_route(dev, w, neg), None
    if w[1] == "nat":
        return _nat(dev, w, neg), None
    if w[1] == "prefix-list":
        return parse_bgp.prefix_list(dev, w, neg), None
    if w[1] == "routing" and len(w) == 2:
        dev.ip_routing = not neg
        return None, None
    if w[1] == "default-gateway" and len(w) == 3 and ip4(w[2]):
        dev.gateway = None if neg else ip4(w[2])
        return None, None
    if w[1] == "access-list" and len(w) == 4 and w[2] in ("standard", "extended"):
        if _acl_number_kind(w[3]) not in (None, w[2]):
            return INVALID, None
        if neg:
            dev.acls.pop(w[3], None)
            return None, None
        if w[3] not in dev.acls or dev.acls[w[3]].kind != w[2]:
            dev.acls[w[3]] = Acl(w[3], w[2])
        return None, ("acl", w[3])
    return (INCOMPLETE if len(w) <= 2 else INVALID), None


# A number int() refuses: past its 4,300-digit limit, or a digit that is not decimal ("²" is
# isdigit() but not int()-able). The commands check words with isdigit() then call int(), so such
# a line is refused here, before any command sees it.
_LONG_NUMBER = re.compile(r"\d{100}")


def _bad_number(line: str) -> bool:
    """Whether ``line`` holds a number :func:`int` refuses (only a long or non-ASCII line can)."""
    if len(line) >= 100 and _LONG_NUMBER.search(line) is not None:
        return True
    return not line.isascii() and any(c.isdigit() and not c.isdecimal() for c in line)


def apply_lines(dev: DeviceConfig, text: str, device: str = "", first_line: int = 1) -> list[Issue]:
    """Apply IOS-lite ``text`` to ``dev`` in place; return the rejected lines.

    The configuration modes form a stack, as on IOS: ``!`` is a comment that never changes
    mode, ``exit`` leaves one level (address-family -> router bgp -> global), ``end`` leaves
    them all, and a line that is not a command of the current mode is tried in each
    enclosing mode in turn (IOS leaves the sub-modes for the one that takes it)."""
    return _apply_text(dev, text, device, first_line)[0]


def apply_counted(dev: DeviceConfig, text: str, device: str = "") -> tuple[list[Issue], int]:
    """:func:`apply_lines`, and how many lines of ``text`` are commands: neither blank nor
    ``!`` comments (an edit's report counts them; the parser has them counted already)."""
    return _apply_text(dev, text, device, 1)


def _apply_text(dev: DeviceConfig, text: str, device: str,
                first_line: int) -> tuple[list[Issue], int]:
    """:func:`apply_lines`, and how many lines were commands (neither blank nor comments)."""
    issues: list[Issue] = []
    stack: list[tuple] = []
    top = fast = None  # the mode on top of the stack and its fast paths (see parse_fast)
    lines = text.splitlines()
    skipped = 0  # blank lines and comments: every other line counts as a command
    # Only a long or non-ASCII line may hold a number int() refuses (see _bad_number): the
    # text is asked once whether it is ASCII, each line only its length.
    odd = not text.isascii()
    # Each line is split once, as written: split() and strip() skip the same whitespace,
    # so the words say whether the stripped line is blank or a comment.
    for lineno, raw in enumerate(lines, first_line):
        words = raw.split()
        if not words:
            skipped += 1
            continue
        first = words[0]
        c = first[0]
        if c == "!":
            skipped += 1
            continue
        # Only short lines starting with c or e can be ``end`` or a no-op.
        if c in "ceCE" and len(words) <= 2:
            line = raw.strip()
            if len(line) <= _NOOP_LEN:
                low = line.lower()
                if low == "end":
                    stack.clear()
                    top = fast = None
                    continue
                if low in _NOOPS:
                    continue
        if (odd or len(raw) >= 100) and _bad_number(raw):
            issues.append(Issue(device or dev.hostname or "?", lineno, raw, INVALID))
            continue
        if fast is not None:  # the commonest lines of the current mode
            handler = fast.get(first)
            if handler is not None and handler(dev, top, words) is not SLOW:
                continue
        if first in _GLOBAL_WORDS and (top is None or outer_only(dev, stack, words)):
            glob = GLOBAL_FAST.get(first)
            mode = SLOW if glob is None else glob(dev, words)
            if mode is not SLOW:
                stack.clear()
                if mode is not None:
                    stack.append(mode)
                top = mode
                fast = None if mode is None else MODE_FAST.get(mode[0])
                continue
            reason = _global_only(dev, stack, words)
        else:
            reason = _apply(dev, stack, words)
        if reason is not None:
            issues.append(Issue(device or dev.hostname or "?", lineno, raw, reason))
        top = stack[-1] if stack else None
        fast = None if top is None else MODE_FAST.get(top[0])
    return issues, len(lines) - skipped


def _is_exit(words: list[str]) -> bool:
    """``exit`` or a prefix of it IOS takes (``ex`` is ambiguous with ``exec-timeout``
    only in line mode, where ``exit`` is meant anyway)."""
    return len(words) == 1 and len(words[0]) >= 2 and "exit".startswith(words[0].lower())


def _leaves_af(words: list[str]) -> bool:
    """``exit-address-family`` (any unique prefix: ``exit-a``)."""
    w = words[0].lower() if len(words) == 1 else ""
    return len(w) > 5 and "exit-address-family".startswith(w)


def _apply(dev: DeviceConfig, stack: list[tuple], words: list[str]) -> str | None:
    """One line in the mode ``stack`` (changed in place): None, or IOS's message. (The
    caller has tried the current mode's fast path, :data:`parse_fast.MODE_FAST`, and the
    direct route to global configuration, :func:`_global_only`.)"""
    if _is_exit(words) or (stack and stack[-1][0] == "af" and _leaves_af(words)):
        if stack:
            stack.pop()
        return None
    reasons: list[str] = []
    for depth in range(len(stack), -1, -1):
        if depth:
            reason, new_mode = _in_mode(dev, stack[depth - 1], words)
        else:
            reason, new_mode = _global_cmd(dev, words)
        if reason is None:
            del stack[depth:]
            if new_mode is not None:
                stack.append(new_mode)
            return None
        reasons.append(reason)
    # A line no mode takes: the global message if it says more than "invalid", else the
    # innermost mode's.
    outer = reasons[-1]
    return outer if outer not in (INVALID, INCOMPLETE) or len(reasons) == 1 else reasons[0]


def _global_only(dev: DeviceConfig, stack: list[tuple], words: list[str]) -> str | None:
    """:func:`_apply` of a line every mode on ``stack`` refuses as invalid, changing nothing
    (:func:`parse_fast.outer_only`): global configuration decides."""
    first = words[0]
    if first == "interface":
        reason, new_mode = _interface(dev, words, False)
    elif first == "hostname" and len(words) == 2:
        dev.hostname = words[1]
        reason, new_mode = None, None
    else:
        reason, new_mode = _global_cmd(dev, words)
    if reason is None:
        stack.clear()
        if new_mode is not None:
            stack.append(new_mode)
        return None
    # As _apply's fallback: the global message unless it is a bare invalid/incomplete under
    # a sub-mode, whose own "% Invalid input" then stands.
    return reason if not stack or reason not in (INVALID, INCOMPLETE) else INVALID


def _in_mode(dev: DeviceConfig, mode: tuple, words: list[str]) -> tuple[str | None, tuple | None]:
    """One line in a sub-mode: (None or IOS's message, the mode it enters or None)."""
    tree = _TREES[mode[0]]
    expanded = _expand(mode[0], words)
    if isinstance(expanded, str):
        return expanded, None
    head = expanded[1] if expanded[0] == "no" and len(expanded) > 1 else expanded[0]
    if head not in tree and not (mode[0] == "acl" and head.isdigit()):
        return INVALID, None
    if mode[0] in ("bgp", "af"):
        if dev.bgp is None:
            return INVALID, None
        return parse_bgp.bgp_mode_cmd(dev, expanded, mode[1] if mode[0] == "af" else None)
    return _sub_cmd(dev, mode, expanded), None


def _sub_cmd(dev: DeviceConfig, mode: tuple, expanded: list[str]) -> str | None:
    """A command of a sub-mode that enters no further mode."""
    head = expanded[1] if expanded[0] == "no" and len(expanded) > 1 else expanded[0]
    if mode[0] == "if" and head == "ipv6":
        itf = dev.iface(mode[1])
        neg = expanded[0] == "no"
        if harmless("if", expanded):
            itf.extra.append(" ".join(expanded))
            return None
        return parse_v6.iface_ipv6(dev, itf, expanded[neg:], neg)
    if mode[0] == "if" and head in ("standby", "vrrp"):
        neg = expanded[0] == "no"
        return parse_fhrp.fhrp_cmd(dev.iface(mode[1]), expanded[neg:], neg)
    if mode[0] == "if":
        return iface_cmd(dev, mode[1], expanded)
    if mode[0] == "ospf6":
        return ospf_cmd(dev, expanded, v3=True) if dev.ospf6 is not None else INVALID
    if mode[0] == "ospf":
        return ospf_cmd(dev, expanded) if dev.ospf is not None else INVALID
    if mode[0] == "rmap":
        return parse_bgp.rmap_cmd(dev, mode[1], mode[2], expanded) if mode[1] in \
            dev.route_maps else INVALID
    if mode[0] == "line":
        dev.extra.append(" " + " ".join(expanded))
        return None
    if mode[0] == "vlan":
        if expanded[0] == "name" and len(expanded) == 2:
            dev.vlans[mode[1]] = expanded[1]
            return None
        return None if expanded[0] == "state" else INCOMPLETE
    acl = dev.acls.get(mode[1])
    if acl is None:
        return INVALID
    if expanded[0] == "no" and len(expanded) == 2 and expanded[1].isdigit():
        acl.entries = [e for e in acl.entries if e.seq != int(expanded[1])]
        return None
    return _add_ace(acl, expanded)


def parse_config(text: str, device: str = "") -> tuple[DeviceConfig, list[Issue], int]:
    """A whole device configuration: (config, rejected lines, number of accepted lines)."""
    dev = DeviceConfig()
    issues, lines = _apply_text(dev, text, device, 1)
    return dev, issues, lines - len(issues)


def split_devices(text: str) -> list[tuple[str, str, int]]:
    """Cut a multi-device answer into ``(device, text, first line number)`` sections.

    A section starts at a ``! device NAME`` marker, or at a ``hostname NAME`` line when no
    marker opened the current section. Text before the first section gets device ``""``.
    """
    lines = text.splitlines()
    # Only a line holding "hostname", or "!" and at least 9 characters (``!device X``), can
    # start a section: the others are passed over in one comprehension, and each section is
    # a slice of ``lines``.
    maybe = [i for i, raw in enumerate(lines)
             if "hostname" in raw or ("!" in raw and len(raw) > 8)]
    starts: list[tuple[str, int, int]] = []  # (device, index of its first line, first line no.)
    ends: list[int] = []  # where each section ends (the next one's marker or hostname line)
    named = False  # whether the current section already had its hostname line
    for i in maybe:
        raw = lines[i]
        mark = _DEVICE_MARK.match(raw) if "!" in raw and len(raw) > 8 else None
        if mark:
            new = (mark.group(1), i + 1, i + 2)
        else:
            words = raw.split() if "hostname" in raw else ()
            if len(words) != 2 or words[0] != "hostname":
                continue
            if starts and starts[-1][0] == words[1] and not named:
                named = True  # the marker's own device: the line stays in its section
                continue
            new = (words[1], i, i + 1)
        if not starts and i:  # lines before the first section
            starts.append(("", 0, 1))
        if starts:
            ends.append(i)
        starts.append(new)
        named = not mark
    if not starts and lines:
        starts.append(("", 0, 1))
    ends.append(len(lines))
    return [(name, "\n".join(lines[lo:hi]), first)
            for (name, lo, first), hi in zip(starts, ends)]
