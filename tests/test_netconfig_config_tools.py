"""``show running-config`` and ``show access-lists`` read one device's config and nothing
else, so they answer from the candidate's configs without compiling the network: the output
must be exactly what the compiled network's config gives, before any compile, after one, and
after an edit, for every device of every family (fixed devices and hosts included)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.netconfig import show
from textgyms.envs.netconfig.generate import FAMILIES


def _env(family: str, seed: int):
    env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="hard",
                   max_turns=1_000).unwrapped
    env.reset(seed=seed)
    return env


def _looks(env) -> dict[str, str]:
    """Every device's ``show running-config`` and ``show access-lists``, through the env."""
    out = {}
    for dev in env.state.devices:
        out[f"run {dev}"] = env.step(f'<show_run device="{dev}"/>')[0]
        out[f"acl {dev}"] = env.step(f'<show_access_lists device="{dev}"/>')[0]
    return out


def _from_network(env) -> dict[str, str]:
    """The same outputs rendered from the compiled candidate network."""
    net, hits = env.state.net, env.state.hits
    out = {}
    for dev in net.devices:
        out[f"run {dev}"] = f"{dev}#show running-config\n{show.show_run(net, dev)}"
        acls = show.show_access_lists(net, dev, hits)
        out[f"acl {dev}"] = f"{dev}#show access-lists\n{acls}"
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_config_tools_answer_without_compiling_and_match_the_network(family):
    env = _env(family, 41)
    looks = _looks(env)
    assert env.state._net is None  # nothing compiled for them
    assert set(env.state.devices) == set(env.state.net.devices)
    assert looks == _from_network(env)
    assert _looks(env) == looks  # and the same once the network is compiled


@pytest.mark.parametrize("family", ("acl", "nat", "routing", "repair"))
def test_config_tools_show_the_edited_candidate(family):
    """After ``apply_config`` (which drops the compiled network) the edited device's own copy
    is shown, with the ACL counters a ping left."""
    env = _env(family, 7)
    dev, _text = env.state.task.start[0]
    before = env.step(f'<show_run device="{dev}"/>')[0]
    obs = env.step(f'<apply_config device="{dev}">ip access-list extended TG_EDIT\n'
                   " permit ip any any</apply_config>")[0]
    assert "2 of 2 line(s) applied" in obs, obs
    assert env.state._net is None
    looks = _looks(env)
    assert "TG_EDIT" in looks[f"run {dev}"] and looks[f"run {dev}"] != before
    assert "TG_EDIT" in looks[f"acl {dev}"]
    assert looks == _from_network(env)
    target = next(ln.split()[2] for _d, t in env.state.task.fixed for ln in t.splitlines()
                  if ln.startswith(" ip address "))
    env.step(f'<ping device="{dev}" target="{target}"/>')  # counts ACL matches on the way
    assert _looks(env) == _from_network(env)


def test_an_unknown_device_is_refused_without_compiling():
    env = _env("routing", 3)
    obs, _r, term, _tr, info = env.step('<show_run device="R99"/>')
    assert not term and info["error"] == "invalid"
    assert obs.startswith("% Unknown device 'R99'; devices: ")
    assert obs.endswith(", ".join(sorted(env.state.devices)))
    assert env.state._net is None
