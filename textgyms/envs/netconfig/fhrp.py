"""First-hop redundancy (HSRP, VRRP): which router answers for each virtual IP.

The network is taken to have come up with every link up, so the router that won then (the
highest priority, ties to the highest interface address; a VRRP address owner has priority
255) was active; the current failures then apply. If that router is still up it stays active
unless another member now has a higher priority and ``preempt`` (HSRP priorities drop by the
decrement of each tracked interface that is down; VRRP preempts by default). If it is down,
the highest remaining priority takes over.
"""

from __future__ import annotations

from collections.abc import Mapping

from textgyms.envs.netconfig.model import DeviceConfig, Fhrp


def _priority(g: Fhrp, ip: int, status, dev: str, live: bool) -> int:
    if g.proto == "vrrp" and g.vip is not None and int(g.vip) == ip:
        return 255  # the address owner
    if not live:
        return g.priority
    down = sum(dec for name, dec in g.track.items()
               if status.get((dev, name), ("down", "down"))[1] != "up")
    return max(0, g.priority - down)


def _add_learners(configs: Mapping[str, DeviceConfig], groups: dict) -> None:
    """HSRP members configured with ``standby G ip`` and no address join the group of the
    same number on their subnet whose members configure the virtual IP (without one they
    never learn it, and stay out)."""
    for dev, cfg in configs.items():
        for name, itf in cfg.interfaces.items():
            for g in itf.fhrp.values() if itf.ip is not None else ():
                if g.vip is None and g.learn:
                    net = int(itf.ip.network.network_address)
                    key = next((k for k in groups if (k[0], k[1], k[3]) ==
                                (g.proto, g.group, net)), None)
                    if key is not None:
                        groups[key].append((dev, name, int(itf.ip.ip), g))


def active(configs: Mapping[str, DeviceConfig], domain: Mapping[tuple[str, str], tuple],
           status) -> dict[tuple, tuple[str, str, int]]:
    """(broadcast domain, virtual IP) -> (device, interface, virtual IP) of the active
    router, for every group with at least one member up."""
    groups: dict[tuple, list] = {}
    for dev, cfg in configs.items():
        for name, itf in cfg.interfaces.items():
            if itf.ip is None:
                continue
            for g in itf.fhrp.values():
                if g.vip is not None:
                    key = (g.proto, g.group, int(g.vip), int(itf.ip.network.network_address))
                    groups.setdefault(key, []).append((dev, name, int(itf.ip.ip), g))
    _add_learners(configs, groups)
    out = {}
    for (_proto, _grp, vip, _net), members in groups.items():
        boot = max(members, key=lambda m: (_priority(m[3], m[2], status, m[0], False), m[2]))
        up = [m for m in members if (m[0], m[1]) in domain]
        if not up:
            continue
        rank = {id(m): (_priority(m[3], m[2], status, m[0], True), m[2]) for m in up}
        if boot in up:
            winner = boot
            takers = [m for m in up if m[3].preempt and rank[id(m)] > rank[id(boot)]]
            if takers:
                winner = max(takers, key=lambda m: rank[id(m)])
        else:
            winner = max(up, key=lambda m: rank[id(m)])
        out[(domain[(winner[0], winner[1])], vip)] = (winner[0], winner[1], vip)
    return out
