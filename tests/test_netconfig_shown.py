"""Show commands render once per compiled network (``tools.shown``): a memoized output must
be exactly what rendering the network gives, for every show command, and an edited
candidate (a network with no memo key) must never be answered from the memo."""

from __future__ import annotations

import gymnasium as gym
import pytest

from textgyms.envs.netconfig import tools
from textgyms.envs.netconfig.memo import key_of

FAMILIES = ("routing", "ospf_areas", "fhrp", "bgp", "ipv6", "vlan", "nat")


def _env(family: str, seed: int):
    env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="hard").unwrapped
    env.reset(seed=seed)
    return env


@pytest.mark.parametrize("family", FAMILIES)
def test_every_show_command_memoized_equals_a_fresh_rendering(family):
    env = _env(family, 31)
    net = env.state.net
    assert key_of(net) is not None  # an unedited candidate: compiled from its texts
    for name, (_cmd, fn) in tools.SHOW_CMDS.items():
        for dev in net.devices:
            first = tools.shown(net, name, dev)
            assert first == fn(net, dev)
            assert tools.shown(net, name, dev) is first  # the second look is the memo's


def test_group_members_see_the_same_outputs_as_a_lone_episode():
    """Members of a GRPO group (same seed) read the memo; the outputs are those of an env
    whose memo was cleared first."""
    actions = ['<show_ip_route device="{d}"/>', '<show_ip_int_brief device="{d}"/>',
               '<show_run device="{d}"/>']
    outs = []
    for member in range(3):
        if member == 2:
            tools._SHOWN.clear()
        env = _env("ospf_areas", 5)
        dev = env.task.start[0][0]
        outs.append([env.step(a.format(d=dev))[0] for a in actions])
    assert outs[0] == outs[1] == outs[2]


def test_an_edited_candidate_is_rendered_from_its_edit():
    """After ``apply_config`` the candidate's network has no memo key: ``show ip route``
    shows the new static route, and the unedited network's memoized table is not reused."""
    env = _env("routing", 8)
    dev = env.task.start[0][0]
    before = env.step(f'<show_ip_route device="{dev}"/>')[0]
    assert "203.0.113.0" not in before
    obs = env.step(f'<apply_config device="{dev}">ip route 203.0.113.0 255.255.255.0 Null0'
                   "</apply_config>")[0]
    assert "%" not in obs, obs
    assert key_of(env.state.net) is None
    after = env.step(f'<show_ip_route device="{dev}"/>')[0]
    assert "203.0.113.0/24" in after and after != before


def test_addresses_render_as_ipaddress_writes_them(monkeypatch):
    """Tool outputs write addresses with ``topologies.dotted`` (2.4x faster ``show ip
    route``): every output, for every device of a network of each family, pings and
    traceroutes included, is the one ``str(IPv4Address(x))`` gives, and all 1,060 of them
    hash to what the code wrote before (recorded at bb6a7f8, with ``IPv4Address``)."""
    import hashlib
    import ipaddress

    from textgyms.envs.netconfig import show, topologies

    for x in (0, 1, 255, 256, 0x0A000001, 0x7FFFFFFF, 0xC0A80001, 0xFFFFFFFE, 0xFFFFFFFF):
        assert topologies.dotted(x) == str(ipaddress.IPv4Address(x))
    cases = []
    for family in FAMILIES + ("redistribution", "ibgp", "nssa"):
        net = _env(family, 17).state.net
        for dev in net.devices:
            cases += [(fn, net, dev) for _name, (_cmd, fn) in sorted(tools.SHOW_CMDS.items())]
        dst = next((i.ip for d in sorted(net.routers) for i in net.l3[d]), 0)
        for host in [d for d in net.devices if d not in net.routers][:2]:
            walk, _back = net.ping(host, dst)
            cases.append((lambda n, _d, w=walk, t=dst: show.traceroute_text(n, t, w), net, host))
            cases.append((lambda _n, _d, t=dst: show.ping_text(t, "!!.!!"), net, host))
    fast = [fn(net, dev) for fn, net, dev in cases]
    digest = hashlib.sha256(b"".join(out.encode() + b"\0" for out in fast)).hexdigest()
    assert (len(fast), digest[:16]) == (1060, "7cf05ab8e97bc674")
    monkeypatch.setattr(show, "dotted", lambda x: str(ipaddress.IPv4Address(x)))
    tools._SHOWN.clear()
    assert [fn(net, dev) for fn, net, dev in cases] == fast
    assert any("via " in out for out in fast) and any("Tracing" in out for out in fast)
