"""``show ip bgp summary`` in IOS's format, rendered from a compiled network: one row per
configured neighbor with its state (``Idle``, ``Idle (Admin)``, ``Active``) or, when
established, the number of prefixes received from it."""

from __future__ import annotations

import ipaddress

from textgyms.envs.netconfig import bgp
from textgyms.envs.netconfig.sim import Network

A = ipaddress.IPv4Address


def show_ip_bgp_summary(net: Network, dev: str) -> str:
    """``show ip bgp summary``."""
    cfg = net.config(dev)
    if cfg.bgp is None:
        return "% BGP not active"
    rid = bgp.router_id(cfg, net.l3[dev])
    best = net.bgp_best.get(dev, {})
    rows = [f"BGP router identifier {A(rid)}, local AS number {cfg.bgp.asn}",
            f"BGP table version is {len(best) + 1}, main routing table version {len(best) + 1}",
            f"{len(best)} network entries using {len(best) * 144} bytes of memory", "",
            f"{'Neighbor':<16}{'V':<5}{'AS':>8} MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  "
            "State/PfxRcd"]
    for t in sorted((t for t in net.bgp_attempts if t.dev == dev), key=lambda t: t.peer_ip):
        n = cfg.bgp.neighbor(A(t.peer_ip))
        asn = n.remote_as if n is not None and n.remote_as is not None else 0
        if t.state == "Established":
            got = sum(1 for p in best.values() if p.peer == t.peer)
            up, msgs, state = "00:12:31", 17, str(got)
        else:
            up, msgs, state = "never", 0, t.state
        rows.append(f"{str(A(t.peer_ip)):<16}{4:<5}{asn:>8} {msgs:>7} {msgs:>7} "
                    f"{len(best) + 1:>8} {0:>4} {0:>4} {up:<8} {state}")
    return "\n".join(rows)
