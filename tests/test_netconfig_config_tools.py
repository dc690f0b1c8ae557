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


def _counting_compiles(monkeypatch) -> list[int]:
    """A list that grows by one at every network compile (``Network.__init__``)."""
    from textgyms.envs.netconfig.sim import Network

    made: list[int] = []
    init = Network.__init__

    def counted(self, *args, **kwargs):
        made.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(Network, "__init__", counted)
    return made


def _edits(env) -> list[str]:
    """Two edits of the first device the agent configures, a line rejected in the second."""
    dev = env.state.task.start[0][0]
    text = dict(env.state.task.reference)[dev]  # (a start may have no interface yet)
    iface = next(ln.split()[1] for ln in text.splitlines() if ln.startswith("interface "))
    return [f'<apply_config device="{dev}">interface {iface}\n description tg edit</apply_config>',
            f'<apply_config device="{dev}">ip access-list extended TG_EDIT\n permit ip any any\n'
            " frobnicate</apply_config>"]


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("diagnosis", "analysis")])
def test_edits_compile_nothing(family, monkeypatch):
    """An edit makes the compiled candidate stale, so it compiles none: not on a fresh reset,
    not after a look compiled the network, not after another edit."""
    env = _env(family, 5)
    made = _counting_compiles(monkeypatch)
    first, second = _edits(env)
    assert "2 of 2 line(s) applied" in env.step(first)[0]
    assert made == [] and env.state._net is None
    dev = env.state.task.start[0][0]
    env.step(f'<show_ip_route device="{dev}"/>')  # compiles the edited candidate once
    assert len(made) == 1 and env.state._net is not None
    obs, _r, _term, _tr, info = env.step(second)
    assert "2 of 3 line(s) applied" in obs and info["error"] == "invalid", obs
    assert len(made) == 1 and env.state._net is None
    env.step(first)
    assert len(made) == 1


@pytest.mark.parametrize("family", ("acl", "fhrp", "repair", "ipv6"))
def test_an_episode_with_edits_reads_as_when_each_edit_compiled_first(family):
    """Every output of an episode of looks and edits, and its score, are those of the same
    episode where the candidate network is compiled before each edit (as every tool step
    once did): the compile an edit skips was never observable."""
    def play(compile_first: bool) -> list:
        env = _env(family, 11)
        dev = env.state.task.start[0][0]
        target = next(ln.split()[2] for _d, t in env.state.task.fixed for ln in t.splitlines()
                      if ln.startswith(" ip address "))
        looks = [f'<show_ip_route device="{dev}"/>', f'<ping device="{dev}" target="{target}"/>',
                 f'<get_logs device="{dev}"/>', f'<show_access_lists device="{dev}"/>']
        out = []
        for edit in _edits(env):
            for action in looks:
                out.append(env.step(action)[0])
            if compile_first:
                assert env.state.net is not None
            out.append(env.step(edit)[0])
        out += [env.step(action)[0] for action in looks]
        _obs, reward, term, _tr, info = env.step("<submit></submit>")
        assert term
        return out + [reward, info["score"]]

    assert play(False) == play(True)
