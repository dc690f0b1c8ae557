"""First-hop redundancy (HSRP, VRRP): which router answers for each virtual IP.

* Routers only elect together when they understand each other's hellos: the same protocol
  and group number on the subnet, and for HSRP the same version (v1 and v2 use different
  packet formats, multicast groups and virtual MACs) and authentication (plain text
  ``cisco`` by default, or an MD5 key); for VRRP the same authentication and advertisement
  interval (RFC 3768 7.1 discards others). Routers that do not hear each other each
  become active: both answer for the virtual IP (a dual-active, which the checks refuse).
* The network is taken to have come up with every link up, so the router that won then (the
  highest priority, ties to the highest interface address; a VRRP address owner has priority
  255) is the incumbent, unless an ``incumbent`` state from an earlier moment is given (the
  router that took over during a failure). The current failures then apply: the incumbent,
  if still up, stays active unless another member now has a higher priority and
  ``preempt`` (HSRP priorities drop by the decrement of each tracked interface that is down;
  VRRP preempts by default). If it is down, the highest remaining priority takes over.
"""

from __future__ import annotations

from collections.abc import Mapping

from textgyms.envs.netconfig.model import DeviceConfig, Fhrp, Interface

Member = tuple[str, str, int, Fhrp]  # (device, interface, interface address, group)


def hears(itf: Interface, g: Fhrp) -> tuple:
    """What two members must share to understand each other's hellos (beyond protocol,
    group and subnet)."""
    if g.proto == "hsrp":
        return (itf.hsrp_version, g.auth_key())
    return (g.auth_key(), (g.timers or (1000, 3000))[0])


def _priority(g: Fhrp, ip: int, status, dev: str, live: bool) -> int:
    if g.proto == "vrrp" and g.vip is not None and int(g.vip) == ip:
        return 255  # the address owner
    if not live:
        return g.priority
    down = sum(dec for name, dec in g.track.items()
               if status.get((dev, name), ("down", "down"))[1] != "up")
    return max(0, g.priority - down)


def _groups(configs: Mapping[str, DeviceConfig],
            members: Mapping[str, list] | None = None) -> dict[tuple, list[Member]]:
    """Members per (protocol, group, virtual IP, subnet, what the hellos must agree on);
    HSRP members with ``standby G ip`` and no address join the group they hear (without
    one they never learn the address, and stay out). ``members``: each device's
    :func:`device_members`, where the caller has them."""
    groups: dict[tuple, list[Member]] = {}
    learners = []
    for dev, cfg in configs.items():
        for has_vip, key, name, ip, g in (members[dev] if members is not None
                                          else device_members(cfg)):
            m = (dev, name, ip, g)
            if has_vip:
                groups.setdefault(key, []).append(m)
            else:
                learners.append((key, m))
    for want, m in learners:
        key = next((k for k in groups if (k[0], k[1], k[3], k[4]) == want), None)
        if key is not None:
            groups[key].append(m)
    return groups


def device_members(cfg: DeviceConfig) -> list[tuple[bool, tuple, str, int, Fhrp]]:
    """One router's FHRP groups in configuration order: (whether it names the virtual IP,
    its group key or what a learner must match, interface, interface address, group)."""
    out = []
    for name, itf in cfg.interfaces.items():
        if itf.ip is None or not itf.fhrp:
            continue
        net = int(itf.ip.network.network_address)
        ip = int(itf.ip)
        for g in itf.fhrp.values():
            if g.vip is not None:
                out.append((True, (g.proto, g.group, int(g.vip), net, hears(itf, g)), name, ip, g))
            elif g.learn:
                out.append((False, (g.proto, g.group, net, hears(itf, g)), name, ip, g))
    return out


def _elect(members: list[Member], up: list[Member], status, incumbent) -> Member:
    # The incumbent may come from another compiled network: matched by device and interface.
    boot = next((m for m in members if incumbent is not None and m[:2] == incumbent[:2]),
                None) or max(members, key=lambda m: (_priority(m[3], m[2], status, m[0], False),
                                                     m[2]))
    rank = {id(m): (_priority(m[3], m[2], status, m[0], True), m[2]) for m in up}
    if boot not in up:
        return max(up, key=lambda m: rank[id(m)])
    takers = [m for m in up if m[3].preempt and rank[id(m)] > rank[id(boot)]]
    return max(takers, key=lambda m: rank[id(m)]) if takers else boot


def elect(configs: Mapping[str, DeviceConfig], domain: Mapping[tuple[str, str], tuple],
          status, incumbent: Mapping[tuple, Member] | None = None,
          members: Mapping[str, list] | None = None):
    """(state, actives): ``state`` maps each group (see :func:`_groups`) to its active
    member, ``actives`` each (broadcast domain, virtual IP) to every active router's
    (device, interface), in election order (more than one: a dual-active). ``members``:
    each device's :func:`device_members`, where the caller has them."""
    state: dict[tuple, Member] = {}
    actives: dict[tuple, list[tuple[str, str]]] = {}
    for key, group in _groups(configs, members).items():
        up = [m for m in group if (m[0], m[1]) in domain]
        if not up:
            continue
        before = (incumbent or {}).get(key)
        winner = _elect(group, up, status, before)
        state[key] = winner
        who = (winner[0], winner[1])
        actives.setdefault((domain[who], key[2]), []).append(who)
    return state, actives
