"""Work the verifier skips or shares gives the answers it would compute afresh: the reach
check's walks, reused on a plain network (the reply of one ping is the echo of the reverse
one), answer as ``Network.ping_all_paths`` does, in any order; an interface renders every
rare setting although the rendering calls their helpers only where one is set; a quiet
check run (reasons left out) passes the checks a full one does."""

from __future__ import annotations

import ipaddress
import random

import numpy as np
import pytest

from textgyms.envs.netconfig import checks, show, verify
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, generate
from textgyms.envs.netconfig.model import Fhrp, Interface, V6Addr
from textgyms.envs.netconfig.verify import text_network


def _ping_ok(net, src: str, dst: int) -> bool:
    """The reach check's question, answered by the simulator directly."""
    return all(back is not None and back.status == "delivered"
               for _there, back in net.ping_all_paths(src, dst))


def _networks(task):
    """The start and reference networks of ``task``, and each with a link failed."""
    for texts in (dict(task.start), dict(task.reference)):
        net = text_network(task, texts)
        yield net
        links = sorted(task.links)
        if links:
            a, ai, _b, _bi = links[len(links) // 2]
            yield checks.failed(net, a, ai)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("diagnosis", "analysis")])
def test_shared_pings_answer_as_ping_all_paths(family):
    rng = random.Random(7)
    for level in LEVELS:
        task = generate(np.random.default_rng(11), family, level)
        for net in _networks(task):
            addrs = sorted({i.ip for ifs in net.l3.values() for i in ifs})
            pairs = [(d, a) for d in sorted(net.devices) for a in addrs]
            rng.shuffle(pairs)
            checks._RUN.walks = {}  # as in checks.run: walks are shared until it ends
            try:
                for dev, addr in pairs[:150]:
                    # a fresh view each time: the simulator's answer never sees a shared walk
                    assert checks._pings(net, dev, addr) == _ping_ok(net.view(), dev, addr), (
                        family, level, dev, addr)
            finally:
                checks._RUN.walks = None


_RARE = {  # interface settings rendered by helpers that the rendering calls only when set
    "ospf_cost": 5, "ospf_hello": 3, "ospf_dead": 12, "ospf_area": (1, 0),
    "ospf_auth": "md5", "ospf_key": "k", "ospf_md5": {1: "s"}, "ospf_priority": 0,
    "ospf_network": "point-to-point", "ipv6_enable": True,
    "ipv6_ll": ipaddress.IPv6Address("fe80::1"),
    "ipv6": [V6Addr(ipaddress.IPv6Interface("2001:db8::1/64"))],
    "ospf6_area": (1, 0), "ospf6_cost": 7, "ospf6_hello": 2, "ospf6_dead": 8,
    "hsrp_version": 2, "fhrp": {("hsrp", 1): Fhrp("hsrp", 1, priority=110)},
    "extra": ["carrier-delay 2"], "ospf_auth_unknown": None,
}


@pytest.mark.parametrize("field", sorted(_RARE))
def test_an_interface_renders_each_rare_setting(field):
    """Every rare setting, set alone, renders as its helper renders it."""
    itf = Interface("GigabitEthernet0/1")
    if field == "ospf_auth_unknown":
        itf.ospf_auth = "bogus"  # a value that renders nothing, as before
    else:
        setattr(itf, field, _RARE[field])
    want = [*show._ospf_if_lines(" ip ospf", itf.ospf_cost, itf.ospf_hello, itf.ospf_dead,
                                 itf.ospf_area),
            *show._ospf_opt_lines(itf), *show._ipv6_iface_lines(itf),
            *([f" standby version {itf.hsrp_version}"] if itf.hsrp_version != 1 else []),
            *(line for (p, g), grp in sorted(itf.fhrp.items())
              for line in show._fhrp_lines(p, g, grp)),
            *(f" {x}" for x in itf.extra)]
    lines = show._iface_lines(itf)
    assert lines[:2] == ["interface GigabitEthernet0/1", " no ip address"]
    assert lines[2:-2] == want and lines[-2:] == [" no shutdown", "!"]


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("diagnosis", "analysis")])
def test_a_quiet_run_passes_the_same_checks(family):
    """A quiet run (the baseline's: reasons left out) passes exactly the checks a full run
    does, and reasons asked for later, once a quiet run is memoized, are the full run's."""
    for level in LEVELS:
        task = generate(np.random.default_rng(5), family, level)
        cs, ref = verify._checks(task), verify._reference(task)
        for texts in (dict(task.start), dict(task.reference)):
            net = text_network(task, texts)
            loud = checks.run(net.view(), cs, ref)
            quiet = checks.run(net.view(), cs, ref, quiet=True)
            assert [ok for _c, ok, _m in quiet] == [ok for _c, ok, _m in loud]
            assert verify._results(task, net.view(), quiet=True)[0] == tuple(
                ok for _c, ok, _m in loud)
            assert verify._results(task, net.view()) == (
                tuple(ok for _c, ok, _m in loud), tuple(m for _c, _ok, m in loud))
