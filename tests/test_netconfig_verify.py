"""The verifier against the known hacks, the parse gate and partial credit."""

from __future__ import annotations

import ipaddress
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, NetTask, generate
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.verify import _reference, network, verify_submission


def task(family: str, level: str, seed: int = 0) -> NetTask:
    return generate(np.random.default_rng(seed), family, level)


def body(configs: dict[str, str]) -> str:
    return "\n".join(f"! device {d}\n{text}" for d, text in configs.items())


def reference(t: NetTask) -> dict[str, str]:
    return dict(t.reference)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("diagnosis", "analysis")])
@pytest.mark.parametrize("level", LEVELS)
def test_reference_scores_one_and_start_does_not(family, level):
    for seed in range(3):
        t = task(family, level, seed)
        assert verify_submission(t, body(reference(t))).score == 1.0
        start = verify_submission(t, body(dict(t.start)))
        assert start.score < 1.0 and not start.solved


def test_permit_ip_any_any_fails_equivalence_with_a_counterexample():
    for seed in range(4):
        t = task("acl", "medium", seed)
        (dev, text), = t.reference
        name = json.loads(t.spec)[0]["name"]
        lines = [ln for ln in text.splitlines() if not ln.startswith(f"access-list {name} ")]
        hacked = "\n".join(lines + [f"access-list {name} permit ip any any"])
        v = verify_submission(t, body({dev: hacked}))
        assert v.parts["acl_equiv"] == 0.0 and v.score < 0.8
        assert re.search(r"(tcp|udp|icmp) \d+\.\d+\.\d+\.\d+", v.feedback)
        assert "access-list" not in v.feedback  # the reference config is never shown


def test_shutting_interfaces_to_satisfy_isolation_does_not_pay():
    t = task("vlan", "easy", 1)
    ref = reference(t)
    sw = next(d for d, k in t.devices if k == "switch")
    ref[sw] = ref[sw].replace(" switchport mode access", " switchport mode access\n shutdown")
    v = verify_submission(t, body(ref))
    assert v.parts["isolation"] == 1.0 and v.parts["reach"] < 0.5 and v.score < 0.7


def test_static_routes_where_ospf_is_required_fail_provenance():
    t = task("routing", "medium", 2)
    ref = reference(t)
    net = network(t, _reference(t))
    # On top of the OSPF config, every router gets a static route to each remote LAN along
    # the OSPF path: traffic still flows, but statics win by administrative distance.
    for c in json.loads(t.checks):
        if c["g"] == "routing":
            route = next(r for r in map(RouteFields._make, net.rib[c["dev"]])
                         if f"{_ip(r.net)}/{r.plen}" == c["prefix"])
            pfx = ipaddress.IPv4Network(c["prefix"])
            ref[c["dev"]] += f"\nip route {pfx.network_address} {pfx.netmask} {_ip(route.fwd)}"
    v = verify_submission(t, body(ref))
    assert v.parts["reach"] == 1.0 and v.parts["routing"] == 0.0 and v.score < 0.8
    assert "no OSPF route" in v.feedback


def _ip(n: int) -> str:
    return str(ipaddress.IPv4Address(n))


def test_several_alternative_configs_in_one_answer_score_zero():
    t = task("acl", "easy", 3)
    (dev, text), = t.reference
    (_, start), = t.start
    v = verify_submission(t, body({dev: start}) + "\n" + body({dev: text}))
    assert v.score == 0.0 and v.error == "ambiguous"
    v = verify_submission(t, f"! device {dev}\n{start}\nhostname {dev}\n{text}")
    assert v.score == 0.0 and v.error == "ambiguous"


def test_editing_locked_devices_is_penalised():
    for seed in range(20):
        t = task("repair", "easy", seed)
        if t.locked:
            break
    else:
        pytest.fail("no repair task with a locked device")
    ref = reference(t)
    assert verify_submission(t, body(ref)).score == 1.0
    locked = t.locked[0]
    ref[locked] += "\ninterface Loopback99\n ip address 192.0.2.99 255.255.255.255"
    v = verify_submission(t, body(ref))
    assert v.parts["locked"] == 0.0 and v.score <= 0.25 and locked in v.feedback


def test_parse_gate_missing_devices_and_invalid_lines():
    t = task("routing", "medium", 4)
    ref = reference(t)
    assert verify_submission(t, "this is not a config").score == 0.0
    assert verify_submission(t, "! device X\nfoo\nbar").score == 0.0
    first = next(iter(ref))
    missing = verify_submission(t, body({first: ref[first]}))
    assert missing.score == 0.0 and missing.error == "missing"
    noisy = dict(ref)
    # Lines IOS accepts that change nothing the task checks cost nothing ...
    noisy[first] += "\nspanning-tree mode rapid-pvst\nip cef\nservice password-encryption"
    assert verify_submission(t, body(noisy)).score == 1.0
    # ... lines IOS rejects cost 10% each, with IOS's own message.
    noisy[first] += "\nfoo"
    v1 = verify_submission(t, body(noisy))
    noisy[first] += "\nbar"
    v2 = verify_submission(t, body(noisy))
    assert 0.0 < v2.score < v1.score < 1.0 and abs(v1.score - 0.9) < 1e-9
    assert "rejected (as IOS would)" in v1.feedback
    assert "% Invalid input detected at '^' marker." in v1.feedback


def test_partial_credit_is_monotone_in_the_work_done():
    t = task("addressing", "easy", 5)
    ref = reference(t)
    half = dict(t.start)
    first = next(iter(ref))
    half[first] = ref[first]
    scores = [verify_submission(t, body(c)).score for c in (dict(t.start), half, ref)]
    assert scores[0] < scores[1] < scores[2] == 1.0


def test_diagnosis_credit_per_field():
    t = task("diagnosis", "medium", 6)
    label = json.loads(t.answer)
    good = {"device": label["device"], "component": label["components"][0],
            "cause": label["cause"]}
    assert verify_submission(t, json.dumps(good)).score == 1.0
    wrong_cause = dict(good, cause="acl_order" if label["cause"] != "acl_order" else "wrong_mask")
    v = verify_submission(t, json.dumps(wrong_cause))
    assert abs(v.score - 2 / 3) < 1e-9 and v.parts["cause"] == 0.0
    assert verify_submission(t, "the router is broken").error == "format"


def test_analysis_set_f1():
    for seed in range(10):
        t = task("analysis", "medium", seed)
        items = json.loads(t.answer)
        if len(items) >= 2:
            break
    assert verify_submission(t, json.dumps(items)).score == 1.0
    v = verify_submission(t, json.dumps(items[:1]))
    assert abs(v.score - 2 / (len(items) + 1)) < 1e-9
    padded = verify_submission(t, json.dumps(items + ["NOT-A-ROUTER"]))
    assert padded.score < 1.0


_LINES = st.sampled_from([
    "interface Gi0/0", " shutdown", " no shutdown", " ip address 10.0.0.1 255.255.255.0",
    "router ospf 1", " network 10.0.0.0 0.255.255.255 area 0", "ip route 0.0.0.0 0.0.0.0 10.0.0.2",
    "access-list 101 permit ip any any", "vlan 10", " name X", "! device R1", "hostname R1",
    "! device FW1", "garbage", "{", "ip nat inside source list 1 interface Gi0/0 overload",
])


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINES, max_size=25), st.sampled_from(FAMILIES), st.integers(0, 3))
def test_verifier_is_total_on_arbitrary_submissions(lines, family, seed):
    t = task(family, "easy", seed)
    names = [d for d, _ in t.start]
    text = "\n".join(lines).replace("R1", names[0]).replace("FW1", names[-1])
    v = verify_submission(t, text)
    assert 0.0 <= v.score <= 1.0 and (v.score < 1.0 or v.solved)


def test_repair_keeps_the_lines_a_fix_does_not_need_to_touch():
    t = task("repair", "medium", 1)
    ref = reference(t)
    faulty = next(d for d, _ in t.start if d not in t.locked)
    assert verify_submission(t, body(ref)).score == 1.0
    rewritten = "\n".join(ln for ln in ref[faulty].splitlines() if "description" not in ln)
    v = verify_submission(t, body(dict(ref, **{faulty: rewritten})))
    assert 0.0 < v.parts["locked_lines"] < 1.0 and v.score == 0.5 * v.parts["locked_lines"]
    assert "locked line(s)" in v.feedback
