"""OSPFv2 interface options that decide, beyond areas and timers, whether two routers on a
segment become fully adjacent, as IOS runs them:

* Authentication: a packet carries the interface's type (``ip ospf authentication`` with no
  keyword: simple password, ``message-digest``: MD5, ``null``: none), or else the area's
  (``area A authentication [message-digest]``), or none. Neighbours must use the same type
  ("Mismatch Authentication type") and the same key: the ``authentication-key`` for a
  simple password (empty when none is set), a (key ID, key) pair of ``message-digest-key``
  both ends have for MD5 (IOS sends with every key during a key rollover; with no key it
  uses key ID 0). A key alone, with no type, authenticates nothing.
* The designated router: on a broadcast or non-broadcast network a router reaches FULL only
  with the DR or BDR, and a router of priority 0 (``ip ospf priority 0``) is never elected,
  so a segment where every router has priority 0 has no DR and no FULL adjacency (they stay
  2WAY). Point-to-point and point-to-multipoint networks elect no DR; Ethernet defaults to
  broadcast and serial links to point-to-point.

Parsing of those lines lives here too, so the parser and the OSPF model read one
definition. Lines are expanded first (see :mod:`vocab`); arguments may still be prefixes.
"""

from __future__ import annotations

from textgyms.envs.netconfig.model import Interface, Ospf
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID

OPTIONS = ("authentication", "authentication-key", "message-digest-key", "priority", "network")
NET_TYPES = ("broadcast", "non-broadcast", "point-to-multipoint", "point-to-point")
DR_TYPES = ("broadcast", "non-broadcast")
SIMPLE_KEY_LEN, MD5_KEY_LEN = 8, 16  # IOS truncates longer keys
Auth = tuple[str, frozenset]
# No authentication, as one shared object: most interfaces have it, the OSPF-interface memo
# holds thousands, and the garbage collector tracks every frozenset and the tuple around it.
NULL_AUTH: Auth = ("null", frozenset())


def _keyword(word: str, choices: tuple[str, ...]) -> str | None:
    """``word`` or the one choice it abbreviates (None: unknown or ambiguous)."""
    hits = [c for c in choices if c == word] or [c for c in choices if c.startswith(word)]
    return hits[0] if len(hits) == 1 else None


def _num(text: str, lo: int, hi: int) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and lo <= int(text) <= hi else None


def _key(words: list[str], limit: int) -> str | None:
    """A key given as ``[0|7] LINE`` (type 7 is kept whole, in its hidden form and marked
    as such: it equals only the same hidden form)."""
    if len(words) > 1 and words[0] == "7":
        return " ".join(words)
    if len(words) > 1 and words[0] == "0":
        words = words[1:]
    return " ".join(words)[:limit] if words else None


def iface_option(itf: Interface, w: list[str], neg: bool) -> str | None:
    """Apply the words after ``ip ospf`` for one of :data:`OPTIONS`; None or IOS's message."""
    head, args = w[0], w[1:]
    if head == "authentication":
        kind = _keyword(args[0], ("message-digest", "null")) if len(args) == 1 else None
        if len(args) > 1 or (args and kind is None):
            return INVALID
        itf.ospf_auth = None if neg else {None: "simple", "message-digest": "md5",
                                          "null": "null"}[kind]
    elif head == "authentication-key":
        key = _key(args, SIMPLE_KEY_LEN)
        if key is None and not neg:
            return INCOMPLETE
        itf.ospf_key = None if neg else key
    elif head == "message-digest-key":
        return _md5_key(itf, args, neg)
    elif head == "priority":
        value = _num(args[0], 0, 255) if len(args) == 1 else None
        if value is None and not neg:
            return INVALID if args else INCOMPLETE
        itf.ospf_priority = None if neg else value
    else:
        return _network(itf, args, neg)
    return None


def _md5_key(itf: Interface, args: list[str], neg: bool) -> str | None:
    """``message-digest-key ID md5 [0|7] KEY`` (``no`` with the ID alone removes it)."""
    kid = _num(args[0], 1, 255) if args else None
    if kid is None:
        return INVALID if args else INCOMPLETE
    if neg:
        itf.ospf_md5.pop(kid, None)
        return None
    if len(args) < 3:
        return INCOMPLETE
    if _keyword(args[1], ("md5",)) is None:
        return INVALID
    key = _key(args[2:], MD5_KEY_LEN)
    if key is None:
        return INCOMPLETE
    itf.ospf_md5[kid] = key
    return None


def _network(itf: Interface, args: list[str], neg: bool) -> str | None:
    kind = _keyword(args[0], NET_TYPES) if args else None
    tail = args[1:]
    ok = kind is not None and (not tail or (kind == "point-to-multipoint" and len(tail) == 1
                                            and _keyword(tail[0], ("non-broadcast",))))
    if neg and not args:
        itf.ospf_network = None
        return None
    if not ok:
        return INVALID if args else INCOMPLETE
    itf.ospf_network = None if neg else kind
    return None


def area_auth(ospf: Ospf, area: int, tail: list[str], neg: bool) -> str | None:
    """``area A authentication [message-digest]`` under ``router ospf``."""
    kind = _keyword(tail[0], ("message-digest",)) if len(tail) == 1 else None
    if len(tail) > 1 or (tail and kind is None):
        return INVALID
    if neg:
        ospf.area_auth.pop(area, None)
    else:
        ospf.area_auth[area] = "md5" if kind else "simple"
    return None


def auth_of(itf: Interface | None, ospf: Ospf, area: int) -> Auth:
    """(type, keys) of the packets an interface sends (see the module docstring)."""
    kind = itf.ospf_auth if itf is not None and itf.ospf_auth is not None else None
    kind = kind or ospf.area_auth.get(area, "null")
    if kind == "simple":
        return kind, frozenset({(0, (itf.ospf_key if itf is not None else None) or "")})
    if kind == "md5":
        keys = frozenset(itf.ospf_md5.items()) if itf is not None else frozenset()
        return kind, keys or frozenset({(0, "")})
    return NULL_AUTH


def authenticates(a: Auth, b: Auth) -> bool:
    """Whether two ends accept each other's packets: same type and a shared key."""
    return a[0] == b[0] and (a[0] == "null" or bool(a[1] & b[1]))


def net_type(itf: Interface | None, name: str) -> str:
    """The OSPF network type: ``ip ospf network``, else point-to-point on serial links and
    broadcast on Ethernet."""
    default = "point-to-point" if name.startswith("Serial") else "broadcast"
    return (itf.ospf_network if itf is not None else None) or default


def default_hello(kind: str) -> int:
    """IOS's hello interval per network type: 10 s on broadcast and point-to-point
    networks, 30 s on non-broadcast and point-to-multipoint ones (dead: four hellos)."""
    return 10 if kind in ("broadcast", "point-to-point") else 30


def dr_role(itf: Interface | None, name: str) -> tuple[bool, int]:
    """(whether the interface's network elects a DR, its priority)."""
    prio = itf.ospf_priority if itf is not None and itf.ospf_priority is not None else 1
    return net_type(itf, name) in DR_TYPES, prio
