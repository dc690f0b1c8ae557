"""Fault injection, syslog derivation and topology analysis answers."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from textgyms.envs.netconfig import faults
from textgyms.envs.netconfig.checks import normalize_item
from textgyms.envs.netconfig.generate import generate
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.scenario import build
from textgyms.envs.netconfig.show import render_config


@pytest.mark.parametrize("cause", faults.CAUSES)
def test_every_cause_breaks_its_network_and_is_labelled(cause):
    rng = np.random.default_rng(11)
    base, sc, labels, faulty, symptoms = faults.inject(rng, "medium", 1, cause)
    assert cause in faults.BASES[base] and labels[0]["cause"] == cause and symptoms
    dev = labels[0]["device"]
    ref = render_config(parse_config(sc.reference[dev], dev)[0])
    assert faulty[dev] != ref  # the labelled device is the one that changed
    others = [d for d in faulty if d != dev]
    for d in others:
        assert faulty[d] == render_config(parse_config(sc.reference[d], d)[0])


def test_syslog_reports_shutdown_and_lost_adjacencies():
    rng = np.random.default_rng(3)
    base, sc, labels, faulty, _ = faults.inject(rng, "medium", 1, "interface_shutdown")
    fixed = sc.fixed_configs()
    before = build(sc.topo.kinds, sc.topo.links, {**fixed, **sc.reference})
    after = build(sc.topo.kinds, sc.topo.links, {**fixed, **faulty})
    logs = faults.syslog(before, after)
    iface = labels[0]["components"][0]
    assert any(line.startswith(f"{labels[0]['device']}: ") and "administratively down" in line
               and iface in line for line in logs)


def test_area_mismatch_is_logged_by_the_simulator():
    rng = np.random.default_rng(5)
    _, sc, labels, faulty, _ = faults.inject(rng, "medium", 1, "area_mismatch")
    net = build(sc.topo.kinds, sc.topo.links, {**sc.fixed_configs(), **faulty})
    assert any("mismatched area ID" in msg for _d, msg in net.events)


def test_repair_locks_devices_without_faults():
    for seed in range(10):
        t = generate(np.random.default_rng(seed), "repair", "hard")
        faulted = {x["device"] for x in json.loads(t.answer)}
        assert set(t.locked) == {d for d, _ in t.start} - faulted
        assert len(json.loads(t.answer)) == 3


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_analysis_answer_follows_from_the_cabling(level):
    for seed in range(5):
        t = generate(np.random.default_rng(seed), "analysis", level)
        kinds = dict(t.devices)
        g = nx.Graph((a, b) for a, _ai, b, _bi in t.links
                     if kinds[a] != "host" and kinds[b] != "host")
        if level == "easy":
            want = {normalize_item(f"{b}--{a}") for a, b in nx.bridges(g)}
        elif level == "medium":
            want = set(nx.articulation_points(g))
        else:
            root = sorted(g)[0]
            want = {v for v in g if v != root and nx.edge_connectivity(g, v, root) >= 2}
        assert set(json.loads(t.answer)) == want


def test_normalize_item():
    assert normalize_item(" FRA-R1 -- AMS-R1 ") == "AMS-R1--FRA-R1"
    assert normalize_item(" R3 ") == "R3"
