"""Topology analysis tasks: single points of failure (bridges, articulation points) and
redundant paths, computed with networkx on the router graph (hosts left out)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np

from textgyms.envs.netconfig.l3tasks import _graph, _ospf_lines
from textgyms.envs.netconfig.scenario import Scenario
from textgyms.envs.netconfig.task import NetTask, freeze
from textgyms.envs.netconfig.topologies import BRANCH_WANS, GI, add_lan, add_wan, base_config, wan

QUESTIONS = {
    "easy": (
        "List every link between two network devices whose failure would disconnect "
        'some devices from others (bridges). Write a link as "A--B".'
    ),
    "medium": (
        "List every network device whose failure would disconnect the remaining "
        "network devices (articulation points)."
    ),
    "hard": (
        "List every network device, other than {root}, that still has a path to {root} "
        "after any single link fails (at least two edge-disjoint paths)."
    ),
}


def _grow(rng: np.random.Generator, t, n_stubs: int) -> None:
    """Hang stub routers (with a LAN each) off random routers: they add bridges and
    articulation points to the ring."""
    from textgyms.envs.netconfig.topologies import Plan

    plan = Plan(rng)
    # The ring uses 10/8 or 172.16/12: stubs take 192.168/16, so nothing overlaps.
    plan.base, plan.wan_block = "192.168", BRANCH_WANS
    routers = t.routers()
    ports = {r: 1 + sum(1 for (d, p) in t.desc if d == r) for r in routers}
    for k in range(n_stubs):
        stub = f"STUB{k + 1}"
        t.kinds[stub] = "router"
        hub = routers[int(rng.integers(len(routers)))]
        add_wan(t, plan, hub, GI.format(ports[hub]), stub, GI.format(1))
        ports[hub] += 1
        add_lan(t, rng, plan, stub, GI.format(0), [f"HS{k + 1}"])
        routers.append(stub)
        ports[stub] = 2


def analysis(rng: np.random.Generator, level: str) -> NetTask:
    """A ring with chords and stub routers; the question depends on the level."""
    n = {"easy": 4, "medium": 5, "hard": 6}[level]
    t = wan(rng, n, int(rng.integers(0, 2)))
    _grow(rng, t, int(rng.integers(1, 3)))
    g = _graph(t)
    reference = {}
    for r in t.routers():
        lines, extra = _ospf_lines(t, r, True, {})
        reference[r] = base_config(t, r, extra) + "\n" + "\n".join(lines)
    root = sorted(g.nodes)[0]
    if level == "easy":
        items = ["--".join(sorted(e)) for e in nx.bridges(g)]
    elif level == "medium":
        items = list(nx.articulation_points(g))
    else:
        # Two edge-disjoint paths to root (Menger) exactly when no bridge separates v from
        # root: root's component once the bridges are cut (one pass, not a flow per node).
        cut = g.copy()
        cut.remove_edges_from(nx.bridges(g))
        near = nx.node_connected_component(cut, root)
        items = [v for v in g.nodes if v != root and v in near]
    question = QUESTIONS[level].format(root=root)
    sc = Scenario(t, reference, dict(reference), [], [])
    context = (
        f"Question: {question}\nAnswer with a JSON list of strings inside <submit>, "
        'e.g. <submit>["R1--R2"]</submit> or <submit>["R3"]</submit> ([] if none).'
    )
    return freeze("analysis", level, sc, json.dumps(sorted(items)), (), context)
