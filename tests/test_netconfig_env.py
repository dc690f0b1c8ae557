"""NetConfig as an environment: oracle on every family and level, multi-turn editing,
tools that read only the candidate, golden tool outputs and kwarg validation."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS
from textgyms.envs.netconfig.memo import parsed_config
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.sample import SCRIPT, golden_outputs
from textgyms.envs.netconfig.show import render_config
from textgyms.errors import ConfigError

GOLDEN = Path(__file__).parent / "golden" / "netconfig"


def make(**kw):
    return gym.make("textgyms/NetConfig-v4", **kw).unwrapped


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("level", LEVELS)
def test_oracle_scores_one_on_every_family_and_level(family, level):
    env = make(family=family, difficulty=level)
    for seed in range(4):
        env.reset(seed=seed)
        for action in env.solve(env.task):
            obs, reward, term, trunc, info = env.step(action)
        assert term and info["score"] == 1.0 and info["solved"], info.get("feedback")


def test_kwargs_are_validated():
    with pytest.raises(ConfigError, match="addressing, acl, routing"):
        make(family="mpls")
    with pytest.raises(ConfigError, match="easy, medium, hard"):
        make(difficulty="expert")


@pytest.mark.parametrize("stem", [s for s, _t, _a in SCRIPT])
def test_tool_outputs_match_golden_files(stem):
    assert golden_outputs()[stem] == (GOLDEN / f"{stem}.txt").read_text()


def test_multi_turn_apply_config_then_submit_the_candidate():
    env = make(family="routing", difficulty="easy")
    env.reset(seed=2)
    task = env.task
    for dev, text in task.reference:
        extra = "\n".join(ln for ln in text.splitlines() if ln.startswith("ip route"))
        obs, _, term, _, info = env.step(f'<apply_config device="{dev}">{extra}</apply_config>')
        assert not term and info["error"] is None and "line(s) applied" in obs
    hosts = [d for d, k in task.devices if k == "host"]
    far = dict(task.fixed)[hosts[-1]].split()[6]  # the last host's address
    obs, *_ = env.step(f'<ping device="{hosts[0]}">{far}</ping>')
    assert "Success rate is 100 percent" in obs
    obs, _, term, _, info = env.step("<submit/>")
    assert term and info["score"] == 1.0


def test_bad_tool_calls_are_feedback_not_exceptions():
    env = make(family="nat", difficulty="easy")
    env.reset(seed=0)
    obs, _, _, _, info = env.step('<show_ip_route device="NOPE"/>')
    assert info["error"] == "invalid" and "Unknown device" in obs
    obs, _, _, _, info = env.step('<apply_config device="ISP">interface Gi0/0\n shutdown'
                                  "</apply_config>")
    assert info["error"] == "invalid" and "not managed by you" in obs
    obs, _, _, _, info = env.step('<ping device="PC1">not-an-ip</ping>')
    assert info["error"] == "invalid"


def test_tools_read_the_candidate_not_the_reference_or_the_label():
    env = make(family="repair", difficulty="easy")
    for seed in range(4):
        env.reset(seed=seed)
        start, ref = dict(env.task.start), dict(env.task.reference)
        for dev in start:
            obs, *_ = env.step(f'<show_run device="{dev}"/>')
            shown = obs.split("bytes\n", 1)[1]
            assert shown == render_config(parse_config(start[dev], dev)[0])
        faulty = [d for d in start if render_config(parse_config(ref[d], d)[0])
                  != render_config(parse_config(start[d], d)[0])]
        assert faulty  # the broken config is what the tools show, not the reference
        logs, *_ = env.step(f'<get_logs device="{faulty[0]}"/>')
        assert all(x["cause"] not in logs for x in json.loads(env.task.answer))


def test_json_tool_calls_and_test_flow():
    env = make(family="acl", difficulty="medium")
    env.reset(seed=1)
    hosts = dict(env.task.fixed)
    src = hosts["PC1"].split()[6]
    dst = hosts["SRV1"].split()[6]
    call = {"name": "test_flow", "arguments": {"src": src, "dst": dst, "proto": "tcp",
                                               "port": 443}}
    obs, _, _, _, info = env.step(json.dumps(call))
    assert info["error"] is None and obs.startswith("flow tcp") and "result: delivered" in obs


def test_unsubmitted_episode_scores_the_candidate_at_half_weight():
    env = make(family="addressing", difficulty="easy", max_turns=2)
    env.reset(seed=0)
    for dev, text in env.task.reference:
        obs, _, term, trunc, info = env.step(f'<apply_config device="{dev}">{text}'
                                             "</apply_config>")
        if trunc:
            break
    assert trunc and info["error"] == "no_submit"
    assert info["score"] == 0.5  # everything configured, but never submitted


def test_only_the_last_submit_of_a_reply_counts():
    env = make(family="routing", difficulty="easy")
    env.reset(seed=3)
    good = env.solve(env.task)[0]
    _, _, term, _, info = env.step(good + "\n<submit>! device X\nnonsense</submit>")
    assert term and info["score"] == 0.0
    env.reset(seed=3)
    _, _, term, _, info = env.step("<submit>garbage</submit>\n" + good)
    assert term and info["score"] == 1.0


def test_easy_prompt_shows_the_requirements_as_json():
    env = make(family="vlan", difficulty="easy")
    obs, _ = env.reset(seed=0)
    spec = obs.split("Requirements as JSON:\n", 1)[1].split("\n", 1)[0]
    assert any(r["type"] == "trunk" for r in json.loads(spec))
    medium, _ = make(family="vlan", difficulty="hard").reset(seed=0)
    assert "Requirements as JSON" not in medium


_TRACE = """
import hashlib, numpy as np
from textgyms.envs.netconfig.generate import generate
from textgyms.envs.netconfig.sample import SampleState
from textgyms.envs.netconfig.show import show_ip_route
from textgyms.envs.netconfig.tools import logs
from textgyms.envs.netconfig.verify import _reference, network
h = hashlib.sha256()
for family in ("analysis", "ospf_areas", "fhrp", "bgp"):
    t = generate(np.random.default_rng(11), family, "hard")
    net = network(t, _reference(t))
    for d in sorted(net.routers):
        h.update((show_ip_route(net, d) + repr(net.adjacencies.get(d))).encode())
h.update(logs(SampleState(), "CORE1").encode())
print(h.hexdigest())
"""


def test_outputs_do_not_depend_on_the_hash_seed():
    """Two processes with different string hash seeds print the same routes and neighbours
    (iterating a set of device names once made OSPF neighbour order differ)."""
    import os
    import subprocess
    import sys

    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", _TRACE], env=env, capture_output=True,
                             text=True, timeout=120, check=True)
        outs.add(run.stdout)
    assert len(outs) == 1


@pytest.mark.filterwarnings("ignore:.*out of date.*:DeprecationWarning")
@pytest.mark.parametrize("old", ["textgyms/NetConfig-v2", "textgyms/NetConfig-v3"])
def test_the_previous_ids_are_deprecated_the_gymnasium_way(old):
    """v3 changed what seeds generate (gateway recovery checks) and how answers score (BGP
    session preconditions, FHRP mismatches, OSPF network types, NSSA); v4 changed scores
    again (IPv6 address families, route tags, ``redistribute ospf ... match``, outbound ACLs
    and the router's own packets, ACLs on OSPF): the old ids are gone and Gymnasium names
    their successor."""
    import gymnasium

    with pytest.raises(gymnasium.error.DeprecatedEnv, match="NetConfig-v4"):
        gym.make(old)


@pytest.mark.parametrize("family", ["addressing", "acl", "fhrp", "bgp", "ipv6", "nat", "vlan"])
def test_an_edit_changes_the_episodes_copy_only(family):
    """apply_config edits a copy of the shared parsed start config (``DeviceConfig.clone``):
    the next episode of the same seed, and the memo, still hold the untouched start."""

    env = make(family=family, difficulty="hard")
    env.reset(seed=11)
    dev, text = env.task.start[0]
    shared = parsed_config(text, dev)[0]
    before = render_config(shared)
    env.step(f'<apply_config device="{dev}">interface Loopback77\n ip address 10.250.0.1 '
             "255.255.255.255\nhostname X1\nno router ospf 1\n</apply_config>")
    mine = env.unwrapped.state.mine[dev]
    assert mine is not shared and "Loopback77" in mine.interfaces
    assert render_config(shared) == before and "Loopback77" not in shared.interfaces
    env.reset(seed=11)
    assert env.unwrapped.state.mine[dev] is shared
