"""Inside source NAT as IOS does it: static one-to-one and port mappings first, then the
dynamic rules (an access list selecting inside sources) translating to the outside
interface's address (always overloaded) or to a pool (one inside host per address without
``overload``, the pool's first address shared with it)."""

from __future__ import annotations

from typing import Protocol

from textgyms.envs.netconfig.acl import Packet, evaluate
from textgyms.envs.netconfig.model import DeviceConfig, NatRule


class Network(Protocol):
    """What NAT needs of the simulated network (``sim.Network`` has it): the pool bindings,
    (device, inside local address) -> global address. A protocol, so this module does not
    import the simulator that imports it."""

    nat_pool_use: dict[tuple[str, int], int]


def _global(cfg: DeviceConfig, rule: NatRule) -> int | None:
    if rule.global_iface is not None:
        itf = cfg.interfaces.get(rule.global_iface)
        return int(itf.ip.ip) if itf is not None and itf.ip is not None else None
    return int(rule.global_)


def _static_out(cfg: DeviceConfig, pkt: Packet) -> Packet | None:
    for rule in cfg.nat:
        if rule.kind != "static" or int(rule.local) != pkt[0]:
            continue
        glob = _global(cfg, rule)
        if glob is None:
            continue
        if rule.proto == 0:
            return (glob,) + pkt[1:]
        if rule.proto == pkt[2] and rule.lport == pkt[3]:
            return (glob, pkt[1], pkt[2], rule.gport) + pkt[4:]
    return None


def _pool_address(net: Network, dev: str, cfg: DeviceConfig, rule: NatRule, src: int):
    """The pool address for ``src`` (None: the pool is exhausted or undefined)."""
    pool = cfg.nat_pools.get(rule.pool or "")
    if pool is None:
        return None
    addrs = pool.addresses()
    if rule.overload:
        return addrs[0]
    have = net.nat_pool_use.get((dev, src))
    if have is not None:
        return have
    used = {g for (d, _s), g in net.nat_pool_use.items() if d == dev}
    free = [a for a in addrs if a not in used]
    if not free:
        return None
    net.nat_pool_use[(dev, src)] = free[0]
    return free[0]


def inside_out(net: Network, dev: str, cfg: DeviceConfig, inif: str | None, out: str,
               pkt: Packet, xlate: dict) -> Packet | None:
    """Translate the source of a packet going from an inside to an outside interface
    (None: it matched a pool rule with no address left, and IOS drops it)."""
    if not cfg.nat or inif is None:
        return pkt
    iin, iout = cfg.interfaces.get(inif), cfg.interfaces.get(out)
    if iin is None or iout is None or iin.nat != "inside" or iout.nat != "outside":
        return pkt
    new = _static_out(cfg, pkt)
    if new is None:
        for rule in cfg.nat:
            acl = cfg.acls.get(rule.acl or "")
            if rule.kind != "dynamic" or acl is None or not acl.entries:
                continue  # an undefined or empty list selects nothing for NAT
            if not evaluate(acl, pkt)[0]:
                continue
            if rule.iface is not None:
                if rule.iface != out or iout.ip is None:
                    continue
                addr = int(iout.ip.ip)
            else:
                addr = _pool_address(net, dev, cfg, rule, pkt[0])
                if addr is None:
                    return None
            new = (addr,) + pkt[1:]
            break
    if new is None:
        return pkt
    xlate[(dev, new[0], pkt[1])] = (pkt[0], pkt[3])
    return new


def outside_in(net: Network, dev: str, cfg: DeviceConfig, pkt: Packet, xlate: dict) -> Packet:
    """Translate the destination of a packet arriving on an outside interface."""
    for rule in cfg.nat:
        if rule.kind != "static" or _global(cfg, rule) != pkt[1]:
            continue
        if rule.proto == 0:
            return (pkt[0], int(rule.local)) + pkt[2:]
        if rule.proto == pkt[2] and rule.gport == pkt[4]:
            return (pkt[0], int(rule.local), pkt[2], pkt[3], rule.lport, pkt[5])
    local = xlate.get((dev, pkt[1], pkt[0]))
    if local is not None:
        port = local[1] if pkt[2] in (6, 17) else pkt[4]
        return (pkt[0], local[0], pkt[2], pkt[3], port, pkt[5])
    for (d, src), glob in net.nat_pool_use.items():
        if d == dev and glob == pkt[1]:
            return (pkt[0], src) + pkt[2:]
    return pkt
