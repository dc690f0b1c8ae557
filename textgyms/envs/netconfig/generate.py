"""NetConfig task generation: the family dispatch. The families live on top of the scenario
model (:mod:`l3tasks` for addressing and routing, :mod:`families` for ACL, VLAN and NAT,
:mod:`areas` for multi-area OSPF and NSSA, :mod:`gateways` for HSRP and VRRP,
:mod:`peering` for eBGP, :mod:`ibgp` for iBGP and OSPF<->BGP redistribution,
:mod:`redistribution` for redistribution into OSPF, :mod:`ipv6tasks` for IPv6,
:mod:`faults` for repair and diagnosis, :mod:`analysis` for topology questions); nothing
below imports this module."""

from __future__ import annotations

import numpy as np

from textgyms.envs.netconfig import (
    analysis,
    areas,
    families,
    faults,
    gateways,
    ibgp,
    ipv6tasks,
    l3tasks,
    peering,
    redistribution,
)
from textgyms.envs.netconfig.task import NetTask, freeze

FAMILIES = ("addressing", "acl", "routing", "vlan", "nat", "repair", "diagnosis", "analysis",
            "ospf_areas", "fhrp", "bgp", "redistribution", "ipv6", "ibgp", "bgp_ospf", "vrrp",
            "nssa")
LEVELS = ("easy", "medium", "hard")
__all__ = ["FAMILIES", "LEVELS", "NetTask", "generate"]


def generate(rng: np.random.Generator, family: str, level: str) -> NetTask:
    """Draw a task of ``family`` at ``level`` using only ``rng``."""
    if family == "addressing":
        return freeze(family, level, l3tasks.addressing(rng, level))
    if family == "routing":
        return freeze(family, level, l3tasks.routing(rng, level))
    if family in ("acl", "vlan", "nat"):
        return freeze(family, level, getattr(families, family)(rng, level))
    if family == "redistribution":
        return freeze(family, level, redistribution.redistribution(rng, level))
    if family == "bgp":
        return freeze(family, level, peering.peering(rng, level))
    if family == "fhrp":
        return freeze(family, level, gateways.fhrp(rng, level))
    if family in ("ibgp", "bgp_ospf"):
        return freeze(family, level, getattr(ibgp, family)(rng, level))
    if family == "vrrp":
        return freeze(family, level, gateways.fhrp(rng, level, "vrrp"))
    if family == "nssa":
        return freeze(family, level, areas.nssa(rng, level))
    if family == "ipv6":
        return freeze(family, level, ipv6tasks.ipv6(rng, level))
    if family == "ospf_areas":
        return freeze(family, level, areas.ospf_areas(rng, level))
    if family in ("repair", "diagnosis"):
        return getattr(faults, family)(rng, level)
    return analysis.analysis(rng, level)
