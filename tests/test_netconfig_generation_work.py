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
