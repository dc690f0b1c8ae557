"""Fault injection, syslog derivation and topology analysis answers."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from textgyms.envs.netconfig import faults
from textgyms.envs.netconfig.checks import CHECKS, normalize_item
from textgyms.envs.netconfig.checks import run as run_checks
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, generate
from textgyms.envs.netconfig.memo import parsed_config
from textgyms.envs.netconfig.model import _SHARED_AS_IS, Interface, copied_fields
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.scenario import build
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.task import NetTask
from textgyms.envs.netconfig.verify import verify_submission
from textgyms.errors import ConfigError

PROTOCOL_CAUSES = ("redistribute_no_subnets", "default_not_originated", "bgp_missing_network",
                   "hsrp_wrong_priority")


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


@pytest.mark.parametrize("cause", faults.CAUSES)
def test_a_cause_changes_only_its_labelled_device(cause):
    """The contract fault injection relies on to restore only labelled devices between
    attempts: a cause changes only the device its label names, and nothing when it returns
    None (checked on the whole parsed state, not just the rendered text)."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        _base, sc = faults._base(rng, "hard", cause)
        for name in faults.BASES[_base]:  # every cause its base offers, this one included
            cfgs = {d: parse_config(t, d)[0] for d, t in sc.reference.items()}
            before = {d: repr(c) for d, c in cfgs.items()}
            label = faults.FAULTS[name](rng, cfgs, sc.topo.kinds)
            changed = {d for d, c in cfgs.items() if repr(c) != before[d]}
            assert changed == (set() if label is None else {label["device"]}), (name, label)


def _submit(t: NetTask, configs) -> float:
    return verify_submission(t, "\n".join(f"! device {d}\n{x}" for d, x in configs)).score


def _broken_requirements(cause: str, sc, faulty: dict[str, str]) -> set[str]:
    """The stated requirement kinds the faulty network violates, read from its failing
    checks (each check comes from one requirement of the base family)."""
    net = build(sc.topo.kinds, sc.topo.links, {**sc.fixed_configs(), **faulty})
    failing = [c for c, ok, _m in run_checks(net, sc.checks, None, ("collateral",))
               if not ok]
    kinds = set()
    for c in failing:
        if c["g"] == "routing" and c["prefix"] == "0.0.0.0/0":
            kinds.add("default_route")
        elif c["g"] == "routing" and c["prefix"].startswith("10.250."):
            kinds.add("legacy")
        elif c["g"] in ("routing", "reach") and cause == "bgp_missing_network":
            kinds.add("bgp")
        elif c["g"] == "fhrp" and c["fail"] is None:
            kinds.add("fhrp")
    return kinds


@pytest.mark.parametrize("cause", PROTOCOL_CAUSES)
def test_protocol_faults_break_a_stated_requirement_over_many_seeds(cause):
    """The fault is the one named (the faulty device's config lost or changed exactly that
    setting) and it violates the requirement the base states for it."""
    want = {"redistribute_no_subnets": "legacy", "default_not_originated": "default_route",
            "bgp_missing_network": "bgp", "hsrp_wrong_priority": "fhrp"}[cause]
    for level in ("easy", "medium", "hard"):
        for seed in range(12):
            base, sc, labels, faulty, _ = faults.inject(np.random.default_rng(seed), level, 1,
                                                        cause)
            dev = labels[0]["device"]
            assert any(r["type"] == want for r in sc.reqs), (level, seed)
            assert want in _broken_requirements(cause, sc, faulty), (level, seed)
            ref = render_config(parse_config(sc.reference[dev], dev)[0])
            changed = set(faulty[dev].splitlines()) ^ set(ref.splitlines())
            marker = {"redistribute_no_subnets": "redistribute static",
                      "default_not_originated": "default-information originate",
                      "bgp_missing_network": " network ",
                      "hsrp_wrong_priority": " priority "}[cause]
            assert changed and all(marker in ln for ln in changed), (level, seed, changed)


@pytest.mark.parametrize("cause", PROTOCOL_CAUSES)
def test_protocol_fault_repairs_score_one_and_the_start_at_most_a_tenth(cause):
    for level in ("easy", "medium", "hard"):
        for seed in range(10):
            t = faults.repair(np.random.default_rng(seed), level, cause)
            assert json.loads(t.answer)[0]["cause"] == cause
            assert _submit(t, t.reference) == 1.0, (level, seed)
            assert _submit(t, t.start) <= 0.1, (level, seed)


@pytest.mark.parametrize("cause", PROTOCOL_CAUSES)
def test_protocol_fault_diagnosis_names_device_component_and_cause(cause):
    for seed in range(10):
        t = faults.diagnosis(np.random.default_rng(seed), "medium", cause)
        label = json.loads(t.answer)
        assert label["cause"] == cause and cause in t.context
        answer = {"device": label["device"], "component": label["components"][0],
                  "cause": cause}
        assert verify_submission(t, json.dumps(answer)).score == 1.0
        other = next(c for c in faults.CAUSES if c != cause)
        wrong = verify_submission(t, json.dumps({**answer, "cause": other}))
        assert wrong.score < 1.0 and wrong.parts["cause"] == 0.0


def test_an_unknown_cause_is_refused_with_the_valid_ones():
    with pytest.raises(ConfigError, match="redistribute_no_subnets"):
        faults.repair(np.random.default_rng(0), "easy", "no_such_cause")


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


ROUND3_CAUSES = ("bgp_password_mismatch", "hsrp_version_mismatch", "ospf_network_mismatch",
                 "ibgp_no_next_hop_self", "bgp_no_update_source", "bgp_not_redistributed",
                 "vrrp_auth_mismatch", "nssa_flag_mismatch")
# The show command that exposes each fault on the faulty device or its peers.
EXPOSED_BY = {"bgp_password_mismatch": "show_ip_bgp_summary",
              "hsrp_version_mismatch": "show_standby_brief",
              "ospf_network_mismatch": "show_ip_route",
              "ibgp_no_next_hop_self": "show_ip_route",
              "bgp_no_update_source": "show_ip_bgp_summary",
              "bgp_not_redistributed": "show_ip_route",
              "vrrp_auth_mismatch": "show_standby_brief",
              "nssa_flag_mismatch": "show_ip_ospf_neighbor"}


@pytest.mark.parametrize("cause", ROUND3_CAUSES)
def test_round3_faults_repair_to_one_diagnose_and_show_up_in_show_commands(cause):
    """Repair: the oracle scores 1.0 and the broken start at most 0.1; diagnosis: the label
    scores 1.0; and the fault is visible in a show command's output (what the agent reads)
    on some router of the network, against the working network."""
    from textgyms.envs.netconfig.tools import SHOW_CMDS

    fn = SHOW_CMDS[EXPOSED_BY[cause]][1]
    for level in ("easy", "medium", "hard"):
        for seed in range(4):
            t = faults.repair(np.random.default_rng(seed), level, cause)
            assert json.loads(t.answer)[0]["cause"] == cause
            assert _submit(t, t.reference) == 1.0, (level, seed)
            assert _submit(t, t.start) <= 0.1, (level, seed)
    for seed in range(4):
        t = faults.diagnosis(np.random.default_rng(seed), "medium", cause)
        label = json.loads(t.answer)
        answer = {"device": label["device"], "component": label["components"][0],
                  "cause": cause}
        assert verify_submission(t, json.dumps(answer)).score == 1.0
        kinds = dict(t.devices)
        ref = build(kinds, [((a, ai), (b, bi)) for a, ai, b, bi in t.links],
                    {**dict(t.fixed), **dict(t.reference)})
        now = build(kinds, [((a, ai), (b, bi)) for a, ai, b, bi in t.links],
                    {**dict(t.fixed), **dict(t.start)})
        routers = [d for d, k in kinds.items() if k == "router"]
        assert any(fn(ref, d) != fn(now, d) for d in routers), (cause, seed)


def _mutable_dataclass(value) -> bool:
    params = getattr(value, "__dataclass_params__", None)
    return params is not None and not params.frozen


def _shape(value):
    """A config as nested tuples, dicts and lists in their order (sets sorted): what must
    survive a clone exactly."""
    if isinstance(value, dict):
        return ("dict", [(k, _shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_shape(v) for v in value])
    if isinstance(value, set):
        return ("set", sorted(value, key=repr))
    if _mutable_dataclass(value):
        return (type(value).__name__, [(n, _shape(getattr(value, n))) for n in value.__slots__])
    return value


def _mutable_ids(value, out: set[int]) -> set[int]:
    """The ids of every mutable object reachable from ``value``."""
    if isinstance(value, dict):
        out.add(id(value))
        for v in value.values():
            _mutable_ids(v, out)
    elif isinstance(value, (list, set)):
        out.add(id(value))
        for v in value:
            _mutable_ids(v, out)
    elif _mutable_dataclass(value):
        out.add(id(value))
        for n in value.__slots__:
            _mutable_ids(getattr(value, n), out)
    return out


def test_a_cloned_config_is_equal_in_order_and_shares_nothing_mutable():
    """Fault injection edits clones of the shared parsed configs: a clone must be the same
    config (dicts and lists in the same order) and editing it must never reach the
    original."""
    seen = 0
    for family in FAMILIES:
        for level in LEVELS:
            t = generate(np.random.default_rng(5), family, level)
            for d, text in (*t.reference, *t.start, *t.fixed):
                cfg = parse_config(text, d)[0]
                twin = cfg.clone()
                assert twin == cfg and _shape(twin) == _shape(cfg), (family, level, d)
                assert render_config(twin) == render_config(cfg)
                assert not _mutable_ids(twin, set()) & _mutable_ids(cfg, set())
                seen += 1
    assert seen > 300


def _shared_fields_hold(value, found: set[str]) -> None:
    """Add to ``found`` each ``Class.field`` that a clone shares as it is (not in
    ``copied_fields``) but that holds a value of a type :func:`model._clone` would copy."""
    if isinstance(value, dict):
        for v in value.values():
            _shared_fields_hold(v, found)
    elif isinstance(value, (list, set)):
        for v in value:
            _shared_fields_hold(v, found)
    elif _mutable_dataclass(value):
        copied = copied_fields(type(value))
        for name in value.__slots__:
            v = getattr(value, name)
            if name not in copied and type(v) not in _SHARED_AS_IS:
                found.add(f"{type(value).__name__}.{name}: {type(v).__name__}")
            _shared_fields_hold(v, found)


# Lines an agent may type that the generators seldom write: each sets a field of its own.
_AGENT_LINES = """hostname R1
interface GigabitEthernet0/0
 ip address 10.0.0.1 255.255.255.0
 switchport trunk allowed vlan 10,20
 ip ospf message-digest-key 1 md5 k1
 ip ospf authentication message-digest
 ip ospf 1 area 0
 standby 1 ip 10.0.0.254
 standby 1 track GigabitEthernet0/1 20
 standby 1 authentication md5 key-string k2
 ipv6 address 2001:db8::1/64
 ipv6 address FE80::1 link-local
router ospf 1
 router-id 1.1.1.1
 area 1 nssa no-summary
 redistribute static subnets route-map RM
 passive-interface default
 no passive-interface GigabitEthernet0/0
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
 neighbor 10.0.0.2 route-map RM in
 network 10.0.0.0 mask 255.255.255.0
route-map RM permit 10
 match ip address prefix-list PL
 set local-preference 200
ip prefix-list PL seq 5 permit 10.0.0.0/8 le 24
ip route 0.0.0.0 0.0.0.0 10.0.0.2
"""


def test_a_clone_shares_only_fields_that_hold_immutable_values():
    """The clone copies the fields whose annotation names a mutable type and shares the rest
    as they are: every one of those holds an immutable value in every parsed config of every
    family and level (the starting, reference and fixed configs) and in a config of lines an
    agent may type that the generators seldom write, and a clone of one with a mutable value there would not be independent."""
    found: set[str] = set()
    for family in FAMILIES:
        for level in LEVELS:
            for seed in (5, 6):
                t = generate(np.random.default_rng(seed), family, level)
                for d, text in (*t.reference, *t.start, *t.fixed):
                    _shared_fields_hold(parse_config(text, d)[0], found)
    typed, rejected, _n = parse_config(_AGENT_LINES, "R1")
    assert not rejected  # (every line sets its field)
    _shared_fields_hold(typed, found)
    assert not found
    shared = {"name", "ip", "description", "trunk_allowed", "ospf_area", "ospf_auth"}
    assert shared.isdisjoint(copied_fields(Interface))
    assert {"fhrp", "extra", "ipv6", "ospf_md5"} <= set(copied_fields(Interface))


@pytest.mark.parametrize("cause", faults.CAUSES)
def test_fault_injection_never_changes_the_shared_parsed_reference(cause):
    """The causes edit private clones: the memoized parse of every reference text (which the
    reference network, the verifier and the env reuse) stays what the text says."""
    rng = np.random.default_rng(21)
    for level, count in (("easy", 1), ("hard", 3)):
        _base, sc, _labels, _faulty, _symptoms = faults.inject(rng, level, count, cause)
        for d, text in sc.reference.items():
            shared = parsed_config(text, d)[0]
            assert _shape(shared) == _shape(parse_config(text, d)[0]), (level, d)


def test_the_symptom_search_skips_only_silent_read_only_checks():
    """The symptoms equal those of running every check the old way (all groups but the two
    left out, in order): the skipped groups never give a symptom and leave no NAT state."""
    assert not faults._SILENT & set(faults.SYMPTOMS)
    assert faults._SILENT <= set(CHECKS) and "nat_inside" not in faults._SILENT
    for cause in faults.CAUSES:
        rng = np.random.default_rng(7)
        _base, sc, _labels, faulty, symptoms = faults.inject(rng, "hard", 1, cause)
        net = build(sc.topo.kinds, sc.topo.links, {**sc.fixed_configs(), **faulty})
        full = [msg for c, ok, msg in run_checks(net, sc.checks, None, ("collateral", "acl_equiv"))
                if not ok and c["g"] in faults.SYMPTOMS]
        assert symptoms == full[:faults.SHOWN], cause


def test_the_cheap_draws_are_the_ones_rng_choice_makes():
    """Fault injection draws causes and bases with ``integers`` instead of ``rng.choice``
    (which converts its list to an array each time): same items, same generator state."""
    for seed in range(50):
        for items in (("a",), ("a", "b", "c"), faults.CAUSES):
            for size in (0, 1, 2):
                a, b = np.random.default_rng(seed), np.random.default_rng(seed)
                assert [str(x) for x in a.choice(items, size=size)] == faults._choose(
                    b, items, size)
                assert a.bit_generator.state == b.bit_generator.state
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            assert str(a.choice(list(items))) == faults._pick(b, items)
            assert a.bit_generator.state == b.bit_generator.state


def test_acl_order_swaps_only_where_the_order_decides_and_remembers_it():
    """The memoized answer (asked again by each fault attempt) is the direct one: swapping
    two adjacent entries matters exactly when some packet is decided differently."""
    from textgyms.envs.netconfig.acl import difference

    seen = 0
    for seed in range(30):  # many of these ACLs have no pair whose order matters
        _base, sc = faults._base(np.random.default_rng(seed), "hard", "acl_order")
        for d, text in sc.reference.items():
            for acl in parse_config(text, d)[0].acls.values():
                for i in range(len(acl.entries) - 1):
                    direct = difference(acl, faults._swapped(acl, i)) is not None
                    assert faults._swap_matters(acl, i) == direct
                    seen += direct
    assert seen
