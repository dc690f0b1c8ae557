"""The fault families' shortcuts give what the full computation gives: the syslog of an
IPv4-only network without its IPv6 plane, and the faulty network the symptoms came from."""

from __future__ import annotations

import ipaddress

import numpy as np
import pytest

from textgyms.envs.netconfig import faults
from textgyms.envs.netconfig.memo import parsed_config
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.scenario import build
from textgyms.envs.netconfig.show import render_config


def _full_syslog(before, after) -> list[str]:
    """:func:`faults.syslog` as written before its shortcut: the IPv6 plane always read."""
    out = []
    for (dev, name), (status, proto) in sorted(after.status.items()):
        was = before.status.get((dev, name), ("down", "down"))
        if was[1] == "up" and proto == "down":
            if status == "administratively down":
                out.append((dev, f"%LINK-5-CHANGED: Interface {name}, changed state to "
                                 "administratively down"))
            else:
                out.append((dev, f"%LINK-3-UPDOWN: Interface {name}, changed state to down"))
            out.append((dev, f"%LINEPROTO-5-UPDOWN: Line protocol on Interface {name}, "
                             "changed state to down"))
    for dev, adjs in sorted(before.adjacencies.items()):
        now = set(after.adjacencies.get(dev, ()))
        for a in adjs:
            if a not in now:
                rid = ipaddress.IPv4Address(a.neighbor_rid)
                out.append((dev, f"%OSPF-5-ADJCHG: Process 1, Nbr {rid} on {a.iface} from "
                                 "FULL to DOWN, Neighbor Down: Dead timer expired"))
    for dev, adjs in sorted(before.v6.adjacencies.items()):
        now = set(after.v6.adjacencies.get(dev, ()))
        for a in adjs:
            if a not in now:
                rid = ipaddress.IPv4Address(a.neighbor_rid)
                out.append((dev, f"%OSPFv3-5-ADJCHG: Process 1, Nbr {rid} on {a.iface} from "
                                 "FULL to DOWN, Neighbor Down: Dead timer expired"))
    out += faults._bgp_down(before, after)
    out += sorted(set(after.events) | set(after.v6.events))
    return [
        f"{dev}: *Mar  1 00:{10 + k // 60:02d}:{k % 60:02d}.{(137 * k) % 1000:03d}: {msg}"
        for k, (dev, msg) in enumerate(out)
    ]


@pytest.mark.parametrize("cause", faults.CAUSES)
def test_syslog_matches_the_full_derivation(cause):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        _base, sc, _labels, faulty, symptoms, net = faults._inject(rng, "medium", 1, cause)
        fixed = sc.fixed_configs()
        before = build(sc.topo.kinds, sc.topo.links, {**fixed, **sc.reference})
        after = build(sc.topo.kinds, sc.topo.links, {**fixed, **faulty})
        assert faults.syslog(before, net) == faults.syslog(before, after)
        assert faults.syslog(before, after) == _full_syslog(before, after)
        assert symptoms == faults._symptoms(sc, faulty)


def test_inject_is_inject_with_its_network():
    for seed in range(6):
        a = faults.inject(np.random.default_rng(seed), "hard", 2)
        b = faults._inject(np.random.default_rng(seed), "hard", 2, None)
        assert a[1].reference == b[1].reference and a[2:] == b[2:5]


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_pristine_configs_parse_back_from_their_rendering(level):
    """What :meth:`faults._Bench._render` records as the parse of a pristine config's text:
    the config itself (equal, every dict and list in the same order), every line accepted."""
    seen = set()
    for seed in range(12):
        for cause in faults.CAUSES:
            base, sc = faults._base(np.random.default_rng(seed), level, cause)
            seen.add(base)
            for d, text in sc.reference.items():
                cfg = parse_config(text, d)[0]
                rendered = render_config(cfg)
                again, issues, accepted = parse_config(rendered, d)
                assert again == cfg and repr(again) == repr(cfg), (base, d)
                assert not issues and accepted == faults._commands(rendered)
    assert seen == set(faults.BASES)


def test_a_recorded_pristine_parse_is_the_parse():
    for seed in range(20):
        _base, sc = faults._base(np.random.default_rng(seed), "hard", faults.CAUSES[seed % 26])
        bench = faults._Bench(sc)
        for d in sc.reference:
            text = bench._render(d)
            cfg, issues, accepted = parsed_config(text, d)
            fresh = parse_config(text, d)
            assert (cfg, list(issues), accepted) == fresh and repr(cfg) == repr(fresh[0])


def test_diagnosis_symptoms_are_the_first_of_a_full_search():
    """A diagnosis stops its checks at its third symptom: the same three come first in the
    repair-style search (whole batches of eight, four symptoms)."""
    for seed in range(30):
        for cause in (None, "acl_order", "interface_shutdown"):
            a = faults._inject(np.random.default_rng(seed), "medium", 1, cause)
            b = faults._inject(np.random.default_rng(seed), "medium", 1, cause,
                               faults.DIAGNOSIS_SHOWN, 1)
            assert a[2:4] == b[2:4] and a[4][:3] == b[4]
