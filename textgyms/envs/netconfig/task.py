"""The frozen NetConfig task and :func:`freeze`, which turns a family's :class:`Scenario` into
one. Everything the verifier needs is here, so the verifier never imports a family."""

from __future__ import annotations

import json
from dataclasses import dataclass

from textgyms.core import Task
from textgyms.envs.netconfig import requirements
from textgyms.envs.netconfig.scenario import Scenario, fill_expectations


@dataclass(frozen=True)
class NetTask(Task):
    """One NetConfig task. ``reference``, ``checks`` and ``answer`` are hidden from the agent
    (and from every tool); the rest is what the prompt shows."""

    family: str
    level: str
    topology: str
    devices: tuple[tuple[str, str], ...]  # (name, kind) of every device, hosts included
    links: tuple[tuple[str, str, str, str], ...]
    fixed: tuple[tuple[str, str], ...]  # devices the agent cannot configure, with configs
    start: tuple[tuple[str, str], ...]  # the agent's devices and their starting configs
    reference: tuple[tuple[str, str], ...]
    requirements: str
    spec: str  # the typed requirements as JSON
    checks: str  # hidden checks as JSON
    answer: str = ""  # hidden label (diagnosis, analysis) as JSON
    locked: tuple[str, ...] = ()
    context: str = ""  # extra prompt material: symptoms, logs, the question


def freeze(
    family: str, level: str, sc: Scenario, answer: str = "", locked=(), context: str = "",
    filled: bool = False,
) -> NetTask:
    """Fill flow expectations from the reference network (unless ``filled``: the caller
    already did, on this scenario) and freeze the scenario."""
    fixed = sc.fixed_configs()
    if not filled:
        fill_expectations(sc, fixed)
    links = tuple((a[0], a[1], b[0], b[1]) for a, b in sc.topo.links)
    return NetTask(
        family=family,
        level=level,
        topology=sc.topo.name,
        devices=tuple(sc.topo.kinds.items()),
        links=links,
        fixed=tuple(sorted(fixed.items())),
        start=tuple(sorted(sc.start.items())),
        reference=tuple(sorted(sc.reference.items())),
        requirements=requirements.render(sc.reqs),
        spec=json.dumps(sc.reqs, sort_keys=True),
        checks=json.dumps(sc.checks, sort_keys=True),
        answer=answer,
        locked=tuple(locked),
        context=context,
    )
