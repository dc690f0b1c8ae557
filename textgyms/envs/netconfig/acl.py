"""Access-control entries: parsing, first-match evaluation and exact equivalence.

A packet is the tuple ``(src, dst, proto, sport, dport, established)`` with integer addresses.
Every ACE is a box of intervals over these six dimensions, so two ACLs are compared exactly by
splitting the header space at every boundary either of them uses and evaluating one packet
per atom (:func:`difference`), pruning every box that both ACLs decide with one entry.
"""

from __future__ import annotations

import functools
import ipaddress

from textgyms.envs.netconfig.model import ANY_IP, ANY_PORT, PROTO_NAME, PROTO_NUM, Ace, Acl

Packet = tuple[int, int, int, int, int, bool]
PORT_NAMES = {
    "ftp": 21,
    "ssh": 22,
    "telnet": 23,
    "smtp": 25,
    "domain": 53,
    "bootps": 67,
    "tftp": 69,
    "www": 80,
    "pop3": 110,
    "ntp": 123,
    "snmp": 161,
    "https": 443,
}


@functools.lru_cache(maxsize=8192)
def _int_ip(text: str) -> int:
    """Dotted quad -> int (raises ValueError), cached: configs repeat addresses."""
    return int(ipaddress.IPv4Address(text))


def _addr(words: list[str], i: int) -> tuple[tuple[int, int] | str, int]:
    """Parse ``any`` | ``host A`` | ``A W`` (contiguous wildcard) at ``words[i]``."""
    if i >= len(words):
        return "missing address", i
    if words[i] == "any":
        return ANY_IP, i + 1
    try:
        if words[i] == "host":
            a = _int_ip(words[i + 1])
            return (a, a), i + 2
        a = _int_ip(words[i])
        if i + 1 < len(words) and words[i + 1].count(".") == 3:
            wc = _int_ip(words[i + 1])
            if wc & (wc + 1):
                return "non-contiguous wildcard masks are outside the dialect", i
            return (a & ~wc & 0xFFFFFFFF, (a & ~wc & 0xFFFFFFFF) | wc), i + 2
        return (a, a), i + 1
    except (ValueError, IndexError):
        return "bad address", i


def _port(text: str) -> int | None:
    value = PORT_NAMES.get(text, int(text) if text.isdigit() else -1)
    return value if 0 <= value <= 65535 else None


def _ports(words: list[str], i: int) -> tuple[tuple[int, int] | str, int]:
    """Parse an optional ``eq P`` | ``lt P`` | ``gt P`` | ``range A B``."""
    op = words[i] if i < len(words) else ""
    if op in ("eq", "lt", "gt") and i + 1 < len(words):
        p = _port(words[i + 1])
        if p is None:
            return "bad port", i
        box = {"eq": (p, p), "lt": (0, p - 1), "gt": (p + 1, 65535)}[op]
        return (box if box[0] <= box[1] else "empty port range"), i + 2
    if op == "range" and i + 2 < len(words):
        a, b = _port(words[i + 1]), _port(words[i + 2])
        if a is None or b is None or b < a:
            return "bad port range", i
        return (a, b), i + 3
    if op in ("neq", "eq", "lt", "gt", "range"):
        return f"bad or unsupported port operator {op!r}", i
    return ANY_PORT, i


def _protocol(word: str) -> int | None:
    """An extended ACE's protocol: a name IOS knows or a number (``89`` is ``ospf``)."""
    if word.isdecimal() and word.isascii():
        return int(word) if 1 <= int(word) <= 255 else None
    return PROTO_NUM.get(word.lower())


def parse_ace(words: list[str], kind: str) -> Ace | str:
    """One ``permit|deny ...`` entry of a standard or extended ACL, or the reason it is not."""
    if not words or words[0] not in ("permit", "deny"):
        return "an entry starts with permit, deny or remark"
    text = " ".join(words)
    if words[-1] == "log":
        words = words[:-1]
    permit = words[0] == "permit"
    if kind == "standard":
        src, i = _addr(words, 1)
        if isinstance(src, str) or i != len(words):
            return src if isinstance(src, str) else "extra words after the source"
        return Ace(permit, 0, src, text=text)
    proto = _protocol(words[1]) if len(words) > 1 else None
    if proto is None:
        return "protocol must be ip, tcp, udp, icmp, ospf or a number 1-255"
    ported = words[1].lower() in ("tcp", "udp")  # ports follow a name, not a number
    src, i = _addr(words, 2)
    sport, i = _ports(words, i) if ported and not isinstance(src, str) else (ANY_PORT, i)
    dst, i = _addr(words, i)
    dport, i = _ports(words, i) if ported and not isinstance(dst, str) else (ANY_PORT, i)
    for part in (src, sport, dst, dport):
        if isinstance(part, str):
            return part
    est = i < len(words) and words[i] == "established"
    if est and proto != 6:
        return "established applies to tcp only"
    if i + est != len(words):
        return f"unexpected {words[i + est]!r}"
    return Ace(permit, proto, src, dst, sport, dport, est, text)


def matches(e: Ace, p: Packet) -> bool:
    """True if entry ``e`` matches packet ``p``."""
    return (
        e.src[0] <= p[0] <= e.src[1]
        and e.dst[0] <= p[1] <= e.dst[1]
        and (e.proto == 0 or e.proto == p[2])
        and e.sport[0] <= p[3] <= e.sport[1]
        and e.dport[0] <= p[4] <= e.dport[1]
        and (not e.established or p[5])
    )


def evaluate(acl: Acl | None, p: Packet) -> tuple[bool, int]:
    """(permitted, index of the matching entry or -1 for the implicit deny). An ACL that is
    referenced but not defined, or defined with no entries, permits everything, as on IOS."""
    if acl is None or not acl.entries:
        return True, -1
    for i, e in enumerate(acl.entries):
        if matches(e, p):
            return e.permit, i
    return False, -1


# --- equivalence ----------------------------------------------------------------------------

FULL = _FULL = (ANY_IP, ANY_IP, (0, 255), ANY_PORT, ANY_PORT, (0, 1))


def _box(e: Ace) -> tuple[tuple[int, int], ...]:
    proto = (0, 255) if e.proto == 0 else (e.proto, e.proto)
    return (e.src, e.dst, proto, e.sport, e.dport, (1, 1) if e.established else (0, 1))


def overlap(a: Ace, b: Ace) -> bool:
    """True if some packet matches both entries (their boxes meet in every dimension)."""
    return all(x[0] <= y[1] and y[0] <= x[1] for x, y in zip(_box(a), _box(b)))


def _atoms(boxes: list[tuple], dim: int, lo: int, hi: int) -> list[tuple[int, int]]:
    """Split ``[lo, hi]`` at every boundary the boxes have in dimension ``dim``."""
    cuts = {lo, hi + 1}
    for b in boxes:
        a, z = b[dim]
        if lo < a <= hi:
            cuts.add(a)
        if lo <= z < hi:
            cuts.add(z + 1)
    edges = sorted(cuts)
    return [(edges[k], edges[k + 1] - 1) for k in range(len(edges) - 1)]


def _covers(b: tuple, rest: tuple, dim: int) -> bool:
    return all(b[d][0] <= rest[d][0] and rest[d][1] <= b[d][1] for d in range(dim, 6))


def _diff(a: list, b: list, box: tuple, dim: int) -> tuple | None:
    """A point of ``box`` where the first-match decisions of ``a`` and ``b`` differ."""
    fa = a[0] if a else None
    fb = b[0] if b else None
    decided_a = fa is None or _covers(fa[0], box, dim)
    decided_b = fb is None or _covers(fb[0], box, dim)
    if decided_a and decided_b:
        pa = fa is not None and fa[1]
        pb = fb is not None and fb[1]
        return None if pa == pb else tuple(_pick(iv, d) for d, iv in enumerate(box))
    lo, hi = box[dim]
    for atom in _atoms([x[0] for x in a + b], dim, lo, hi):
        keep_a = [x for x in a if x[0][dim][0] <= atom[0] and atom[1] <= x[0][dim][1]]
        keep_b = [x for x in b if x[0][dim][0] <= atom[0] and atom[1] <= x[0][dim][1]]
        if keep_a == keep_b:  # the same entries in the same order decide alike everywhere
            continue
        found = _diff(keep_a, keep_b, box[:dim] + (atom,) + box[dim + 1 :], dim + 1)
        if found is not None:
            return found
    return None


def _pick(iv: tuple[int, int], dim: int) -> int:
    """A representative of an interval: its first value (the boundary), except that an
    address range avoids its network/zero address when there is room."""
    lo, hi = iv
    if dim == 2:  # prefer a protocol people know
        return next((p for p in (6, 17, 1) if lo <= p <= hi), lo)
    return lo + 1 if dim < 2 and hi - lo >= 2 else lo


def difference(a: Acl | None, b: Acl | None, space: tuple | None = None) -> Packet | None:
    """A packet on which ``a`` and ``b`` decide differently, or None if they are equivalent.
    ``None`` (or an ACL without entries) means no filtering (permit everything). ``space``
    limits the packets compared (a box of intervals, e.g. only destinations an outbound
    interface can carry)."""
    ea = [(_box(e), e.permit) for e in a.entries] if a and a.entries else [(_FULL, True)]
    eb = [(_box(e), e.permit) for e in b.entries] if b and b.entries else [(_FULL, True)]
    point = None if ea == eb else _diff(ea, eb, space or _FULL, 0)
    if point is None:
        return None
    src, dst, proto, sport, dport, est = point
    if proto not in (6, 17):
        sport = dport = 0
    return (src, dst, proto, sport, dport, bool(est) and proto == 6)


def format_packet(p: Packet) -> str:
    """``tcp 10.0.0.1:1024 -> 10.0.0.2:80 (established)`` for feedback."""
    src, dst = ipaddress.IPv4Address(p[0]), ipaddress.IPv4Address(p[1])
    name = PROTO_NAME.get(p[2], f"proto-{p[2]}")
    if p[2] in (6, 17):
        text = f"{name} {src}:{p[3]} -> {dst}:{p[4]}"
    else:
        text = f"{name} {src} -> {dst}"
    return text + (" (established)" if p[5] else "")
