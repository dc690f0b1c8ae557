"""Work task generation skips without changing a task: no reference compile without a flow
check, and fault attempts that clone only the devices their causes look up."""

from __future__ import annotations

import numpy as np
import pytest

from textgyms.envs.netconfig import faults, memo
from textgyms.envs.netconfig.generate import LEVELS, generate
from textgyms.envs.netconfig.memo import parsed_config
from textgyms.envs.netconfig.scenario import Scenario, fill_expectations, flow_check
from textgyms.envs.netconfig.topologies import Topo


@pytest.mark.parametrize("family", ["analysis", "addressing", "bgp"])
def test_a_task_without_flow_checks_compiles_no_network(family):
    """Only a flow check's expectation needs the reference network: generating a task
    without one compiles nothing (its network is compiled when a submission needs it)."""
    memo.NETWORKS.clear()
    for level in LEVELS:
        generate(np.random.default_rng(5), family, level)
    assert len(memo.NETWORKS) == 0


def test_fill_expectations_still_walks_every_flow_check():
    t = Topo("empty", kinds={"H1": "host", "H2": "host"})
    sc = Scenario(t, {}, {}, checks=[flow_check("flows", "10.0.0.1", "10.0.0.2"),
                                     {"g": "reach", "src": "H1", "dst": "10.0.0.2"}])
    fill_expectations(sc)
    assert sc.checks[0]["expect"] == "unreachable" and "expect" not in sc.checks[1]


@pytest.mark.parametrize("cause", faults.CAUSES)
def test_a_cause_edits_only_configs_it_looks_up(cause):
    """The contract :class:`faults._Attempt` relies on: a cause changes a config only
    through ``cfgs[device]`` (its own clone), never the shared parsed reference it reads
    through ``items()``; the labelled device is one it looked up."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        _base, sc = faults._base(rng, "hard", cause)
        shared = {d: parsed_config(t, d)[0] for d, t in sc.reference.items()}
        before = {d: repr(c) for d, c in shared.items()}
        for name in faults.BASES[_base]:
            cfgs = faults._Attempt(shared)
            label = faults.FAULTS[name](rng, cfgs, sc.topo.kinds)
            assert {d: repr(c) for d, c in shared.items()} == before, name
            if label is not None:
                assert label["device"] in cfgs.owned, (name, label)
                assert repr(dict.__getitem__(cfgs, label["device"])) != before[label["device"]]


@pytest.mark.parametrize("family", ["fhrp", "vrrp"])
def test_a_network_without_gateway_groups_fails_fhrp_checks_as_after_the_failure(
        family, monkeypatch):
    """A starting network with no HSRP or VRRP group fails each failover check with the
    message the network with the link failed gives (which it no longer compiles)."""
    from textgyms.envs.netconfig import checks
    from textgyms.envs.netconfig.verify import _checks, text_network

    for level in LEVELS:
        for seed in range(3):
            task = generate(np.random.default_rng(seed), family, level)
            net = text_network(task, dict(task.start))
            assert not checks._any_fhrp(net)
            todo = [c for c in _checks(task) if c["g"] == "fhrp" and c["fail"]]
            assert todo
            fast = [checks._fhrp(net, c, None) for c in todo]
            monkeypatch.setattr(checks, "_any_fhrp", lambda _net: True)
            assert [checks._fhrp(net, c, None) for c in todo] == fast
            monkeypatch.undo()


def test_the_candidate_is_parsed_on_first_use_not_at_reset():
    """A reset parses none of the agent's starting configs; the first read of the candidate
    (an edit, an empty submission) gives the memoized parse of each starting text."""
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the ids)

    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    env.reset(seed=2_024)
    state = env.state
    assert state._mine is None
    dev, text = state.task.start[0]
    env.step(f'<show_run device="{dev}"/>')  # reads the unedited starting text itself
    assert state._mine is None
    env.step("<submit/>")  # an empty submission scores the candidate as it stands
    assert state._mine is not None and state.mine[dev] is parsed_config(text, dev)[0]
    assert set(state.mine) == {d for d, _t in state.task.start}
