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
