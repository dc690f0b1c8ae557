"""HSRP (``standby``) and VRRP (``vrrp``) interface commands of the IOS-lite parser, in the
forms and ranges of IOS's First Hop Redundancy Protocols command reference.

Each function applies one expanded line and returns None or the message IOS would print.
"""

from __future__ import annotations

from textgyms.envs.netconfig.model import Fhrp, Interface
from textgyms.envs.netconfig.parse_if import ip4, normalize_ifname, number
from textgyms.envs.netconfig.vocab import INCOMPLETE, INVALID

# Group numbers: HSRP version 1 takes 0-255, version 2 0-4095; VRRP 1-255.
_GROUPS = {("hsrp", 1): 255, ("hsrp", 2): 4095, ("vrrp", 1): 255}
_FHRP_KEYWORDS = {"hsrp": ("ip", "priority", "preempt", "track", "timers", "authentication",
                           "name", "mac-address", "follow", "description"),
                  "vrrp": ("ip", "priority", "preempt", "track", "timers", "authentication",
                           "description", "shutdown")}


def fhrp_cmd(itf: Interface, w: list[str], neg: bool) -> str | None:
    """``standby [G] ...`` (HSRP, group 0 by default) and ``vrrp G ...`` (VRRP preempts by
    default), in the forms and ranges of IOS's First Hop Redundancy Protocols command
    reference."""
    proto = "hsrp" if w[0] == "standby" else "vrrp"
    args = w[1:]
    if not args:
        return INCOMPLETE
    if proto == "hsrp" and args[0] in ("version", "use-bia", "delay", "redirect", "bfd"):
        return _hsrp_interface(itf, args, neg)
    top = _GROUPS[(proto, itf.hsrp_version if proto == "hsrp" else 1)]
    group = number(args[0], 0 if proto == "hsrp" else 1, top) if args[0].isdigit() else None
    if args[0].isdigit() and group is None:
        return INVALID
    if group is None and proto == "vrrp":
        return INVALID
    args = args[1:] if group is not None else args
    group = group or 0
    if not args:
        return INCOMPLETE
    hits = [k for k in _FHRP_KEYWORDS[proto] if k == args[0]] or \
        [k for k in _FHRP_KEYWORDS[proto] if k.startswith(args[0])]
    if len(hits) != 1:
        return INVALID
    args = [hits[0], *args[1:]]
    key = (proto, group)
    g = itf.fhrp.get(key) or Fhrp(proto, group, preempt=proto == "vrrp")
    reason = _fhrp_field(g, args, neg)
    if reason is None:
        itf.fhrp[key] = g
        if neg and args[0] == "ip":
            itf.fhrp.pop(key)
    return reason


def _hsrp_interface(itf: Interface, args: list[str], neg: bool) -> str | None:
    """Interface-wide HSRP settings: ``standby version 1|2`` (the two versions do not
    understand each other's hellos) and options nothing here depends on."""
    if args[0] == "version":
        v = number(args[1], 1, 2) if len(args) == 2 else None
        if v is None and not neg:
            return INCOMPLETE if len(args) == 1 else INVALID
        if v == 1 and any(g.group > 255 for g in itf.fhrp.values() if g.proto == "hsrp"):
            return "% Group numbers above 255 need HSRP version 2"
        itf.hsrp_version = 1 if neg else v
        return None
    itf.extra.append(" ".join(["no", "standby", *args] if neg else ["standby", *args]))
    return None


def _timer(args: list[str], lo: int, hi: int, mlo: int, mhi: int) -> tuple[int | None, list]:
    """``[msec] N`` -> (milliseconds or None, the rest)."""
    if args[:1] == ["msec"] and len(args) > 1:
        v = number(args[1], mlo, mhi)
        return v, args[2:]
    v = number(args[0], lo, hi) if args else None
    return (v * 1000 if v is not None else None), args[1:]


def _fhrp_timers(g: Fhrp, args: list[str], neg: bool) -> str | None:
    """HSRP ``timers [msec] HELLO [msec] HOLD`` (hello 1-254 s or 15-999 ms, hold above
    it); VRRP ``timers advertise [msec] N`` (1-255 s or 50-999 ms)."""
    if neg:
        g.timers = None
        return None
    if g.proto == "vrrp":
        if args[:1] != ["advertise"]:
            return INVALID if args else INCOMPLETE
        adv, rest = _timer(args[1:], 1, 255, 50, 999)
        if adv is None or rest:
            return INVALID
        g.timers = (adv, 3 * adv)
        return None
    hello, rest = _timer(args, 1, 254, 15, 999)
    hold, rest = _timer(rest, 1, 255, 50, 3000) if rest else (None, rest)
    if hello is None or hold is None or rest:
        return INCOMPLETE if hello is not None and hold is None and not rest else INVALID
    if hold <= hello:
        return "% Hold time must be greater than hello time"
    g.timers = (hello, hold)
    return None


def _fhrp_auth(g: Fhrp, args: list[str], neg: bool) -> str | None:
    """``authentication [text] STRING`` (HSRP: 8 characters at most) and ``authentication
    md5 key-string [0|7] KEY [timeout N]`` (or ``md5 key-chain NAME``)."""
    if neg:
        g.auth = None
        return None
    if not args:
        return INCOMPLETE
    if args[0] == "md5":
        if args[1:2] == ["key-chain"] and len(args) == 3:
            g.auth = ("md5-chain", args[2])
            return None
        rest = args[2:] if args[1:2] == ["key-string"] else None
        if not rest:
            return INCOMPLETE if rest is not None or len(args) == 1 else INVALID
        if rest[0] in ("0", "7") and len(rest) > 1:
            rest = rest[1:] if rest[0] == "0" else ["7 " + rest[1]] + rest[2:]
        if len(rest) == 3 and rest[1] == "timeout" and number(rest[2], 0, 32767) is not None:
            rest = rest[:1]
        if len(rest) != 1:
            return INVALID
        g.auth = ("md5", rest[0][:64])
        return None
    if args[0] == "text":
        args = args[1:]
    if len(args) != 1:
        return INCOMPLETE if not args else INVALID
    g.auth = ("text", args[0][:8])  # IOS keeps the first 8 characters
    return None


def _fhrp_field(g: Fhrp, args: list[str], neg: bool) -> str | None:
    head = args[0]
    if head == "ip" and (neg or (len(args) in (2, 3) and ip4(args[1]) is not None
                                 and args[2:] in ([], ["secondary"]))):
        if len(args) == 3:
            g.extra.append(" ".join(args))  # a secondary virtual address: not modelled
        else:
            g.vip = None if neg else ip4(args[1])
    elif head == "ip" and len(args) == 1 and g.proto == "hsrp":
        g.learn = True  # no address: learnt from the active router's hellos
    elif head == "priority" and (neg or len(args) == 2):
        lo, hi = (0, 255) if g.proto == "hsrp" else (1, 254)
        value = number(args[1], lo, hi) if len(args) == 2 else None
        if value is None and not neg:
            return INVALID
        g.priority = 100 if neg else value
    elif head == "preempt":
        return _preempt(g, args[1:], neg)
    elif head == "track" and len(args) in (2, 3, 4):
        return _track(g, args, neg)
    elif head == "timers":
        return _fhrp_timers(g, args[1:], neg)
    elif head == "authentication":
        return _fhrp_auth(g, args[1:], neg)
    elif head in ("name", "mac-address", "follow", "description", "shutdown"):
        g.extra.append(" ".join(["no", *args] if neg else args))
    else:
        return INCOMPLETE if len(args) == 1 and head in ("ip", "priority", "track") else INVALID
    return None


def _preempt(g: Fhrp, rest: list[str], neg: bool) -> str | None:
    """``preempt [delay [minimum] N [reload N] [sync N]]``: the delay only postpones the
    takeover, which the model does not time."""
    if rest and (rest[0] != "delay" or not all(x.isdigit() or x in ("minimum", "reload", "sync")
                                               for x in rest[1:]) or len(rest) < 2):
        return INVALID
    g.preempt = not neg
    return None


def _track(g: Fhrp, args: list[str], neg: bool) -> str | None:
    """``track INTERFACE [decrement] [N]`` (decrement 10 by default)."""
    name = normalize_ifname(args[1])
    if len(args) == 4 and "decrement".startswith(args[2]):  # IOS 12.3+ spelling
        args = args[:2] + args[3:]
    dec = number(args[2], 1, 255) if len(args) == 3 else 10
    if name is None or dec is None:
        return INVALID
    if neg:
        g.track.pop(name, None)
    else:
        g.track[name] = dec
    return None
