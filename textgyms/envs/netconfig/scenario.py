"""The building block every task family produces, and the helpers to compile it.

A :class:`Scenario` is a sampled network (topology, fixed devices such as hosts and provider
routers), the configurations the agent starts from, the hidden reference configurations, the
typed requirements shown to the agent and the hidden checks the verifier runs. Flow checks
get their expected outcome by walking the *reference* network, so the oracle passes every
check by construction and the expectation is always what the reference really does.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from textgyms.envs.netconfig.memo import Memo, compiled
from textgyms.envs.netconfig.model import PROTO_NUM
from textgyms.envs.netconfig.sim import Network
from textgyms.envs.netconfig.topologies import (
    Topo,
    canonical_quad,
    choose,
    dotted,
    draw,
    host_config,
)


@dataclass
class Scenario:
    """Everything a family decides about one task before it is frozen into a NetTask."""

    topo: Topo
    reference: dict[str, str]
    start: dict[str, str]
    reqs: list[dict] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    fixed: dict[str, str] = field(default_factory=dict)  # provider devices (not hosts)

    def fixed_configs(self) -> dict[str, str]:
        """Configurations the agent cannot change: hosts and provider devices."""
        out = {h: host_config(self.topo, h) for h in self.topo.hosts}
        out.update(self.fixed)
        return out


_IPS = Memo(4096)


def ip(text: str) -> int:
    """A dotted quad as an int: read by arithmetic where written canonically (as the
    generators write addresses), else parsed by ``ipaddress`` (memoized: checks name the
    same addresses again and again)."""
    value = canonical_quad(text)
    if value is not None:
        return value
    return _IPS.get(text, lambda: int(ipaddress.IPv4Address(text)))


def build(kinds: dict[str, str], links, configs: dict[str, str]) -> Network:
    """Compile configuration texts (assumed valid) into a Network (memoized: the verifier
    and the oracle's submission compile the same texts again)."""
    texts = tuple((name, kind, configs.get(name)) for name, kind in kinds.items())
    return compiled(texts, tuple(links))


def reference_network(sc: Scenario, fixed: dict[str, str] | None = None) -> Network:
    """The reference network; ``fixed`` is ``sc.fixed_configs()`` when the caller has it."""
    fixed = sc.fixed_configs() if fixed is None else fixed
    return build(sc.topo.kinds, sc.topo.links, {**fixed, **sc.reference})


def flow_check(
    group: str,
    src: str,
    dst: str,
    proto: str = "tcp",
    dport: int = 80,
    est: bool = False,
    inject: tuple[str, str] | None = None,
) -> dict:
    """A flow check whose ``expect`` is filled in later from the reference network."""
    return {
        "g": group,
        "src": src,
        "dst": dst,
        "proto": proto,
        "dport": dport,
        "est": est,
        "inject": list(inject) if inject else None,
    }


def run_flow(net: Network, c: dict):
    """Walk one flow check's packet through ``net``."""
    pkt = (ip(c["src"]), ip(c["dst"]), PROTO_NUM[c["proto"]], 49152, int(c["dport"]), c["est"])
    if c["inject"]:
        dev, inif = c["inject"]
        if dev not in net.devices:
            return None
        return net.walk(pkt, dev, None, inif)
    dev = net.owner(pkt[0])
    if dev is None:
        return None
    return net.walk(pkt, dev)


def fill_expectations(sc: Scenario, fixed: dict[str, str] | None = None) -> None:
    """Set every flow check's expected status from the reference network (``fixed`` as for
    :func:`reference_network`). Without a flow check the reference is not compiled: most
    families have none, and their reference network is only ever needed for an oracle's
    submission (the verifier compiles it then, the same network)."""
    flows = [c for c in sc.checks if c["g"] in _FLOW_GROUPS]
    if not flows:
        return
    net = reference_network(sc, fixed)
    for c in flows:
        w = run_flow(net, c)
        c["expect"] = w.status if w is not None else "unreachable"


_FLOW_GROUPS = frozenset({"flows", "boundary", "collateral"})  # checks with an expectation


SERVICES = (("tcp", 80), ("tcp", 443), ("tcp", 22), ("udp", 53), ("tcp", 25), ("udp", 123),
            ("tcp", 3389), ("tcp", 8080))


def host_collateral(rng, hosts: dict, n: int = 4) -> list[dict]:
    """A hidden sample of ``n`` unmentioned host-to-host flows (random services): whatever
    the reference does with them, a submission must do too."""
    names = sorted(hosts)
    out = []
    for _ in range(n):  # indices into the list: the draws of choosing from the list itself
        a, b = (names[k] for k in choose(rng, len(names), 2))
        proto, port = SERVICES[draw(rng, len(SERVICES))]
        out.append(flow_check("collateral", dotted(int(hosts[a][0])), dotted(int(hosts[b][0])),
                              proto, port))
    return out
