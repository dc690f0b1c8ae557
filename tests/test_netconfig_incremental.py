"""The simulator's reuse of work between compiles: layer 2 shared between networks that
differ only above it, per-device facts of shared configs, and the bounded memos and keys
behind them. Each reuse must give exactly what
a fresh computation gives."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from textgyms.envs.netconfig import fhrp, l2, verify
from textgyms.envs.netconfig.bounded import Key, Memo
from textgyms.envs.netconfig.checks import failed
from textgyms.envs.netconfig.generate import generate
from textgyms.envs.netconfig.memo import compiled, parsed_config
from textgyms.envs.netconfig.routing import RouteFields
from textgyms.envs.netconfig.scenario import ip
from textgyms.envs.netconfig.sim import Network

R1 = ("hostname R1\ninterface Gi0/0\n ip address 10.0.1.1 255.255.255.0\n"
      "interface Gi0/1\n ip address 10.12.0.1 255.255.255.252\n"
      "router ospf 1\n network 10.0.0.0 0.255.255.255 area 0\n")
R2 = ("hostname R2\ninterface Gi0/0\n ip address 10.0.2.1 255.255.255.0\n"
      "interface Gi0/1\n ip address 10.12.0.2 255.255.255.252\n"
      "router ospf 1\n network 10.0.0.0 0.255.255.255 area 0\n")
H1 = ("hostname H1\ninterface Ethernet0\n ip address 10.0.1.10 255.255.255.0\n"
      "ip default-gateway 10.0.1.1")
H2 = ("hostname H2\ninterface Ethernet0\n ip address 10.0.2.10 255.255.255.0\n"
      "ip default-gateway 10.0.2.1")
LINKS = ((("R1", "GigabitEthernet0/1"), ("R2", "GigabitEthernet0/1")),
         (("R1", "GigabitEthernet0/0"), ("H1", "Ethernet0")),
         (("R2", "GigabitEthernet0/0"), ("H2", "Ethernet0")))


def _devices(r1: str = R1) -> dict:
    texts = {"R1": ("router", r1), "R2": ("router", R2), "H1": ("host", H1), "H2": ("host", H2)}
    return {d: (k, parsed_config(t, d)[0]) for d, (k, t) in texts.items()}


def _fresh_layer2(devices: dict) -> tuple[dict, dict]:
    status = l2.oper_status(devices, l2.peers(list(LINKS)))
    return status, l2.domains(devices, list(LINKS), status)


def test_networks_that_differ_above_layer_2_share_status_and_domains():
    a = Network(_devices(), list(LINKS))
    other = R1.replace("10.0.1.1 255.255.255.0", "10.0.1.1 255.255.255.0\n ip ospf cost 7")
    b = Network(_devices(other), list(LINKS))
    assert b.status is a.status and b.domain is a.domain
    assert (b.status, b.domain) == _fresh_layer2(_devices(other))


def test_a_port_shut_down_is_a_different_layer_2():
    a = Network(_devices(), list(LINKS))
    down = R1.replace("interface Gi0/1\n", "interface Gi0/1\n shutdown\n")
    b = Network(_devices(down), list(LINKS))
    assert b.status is not a.status
    assert b.status[("R1", "GigabitEthernet0/1")] == ("administratively down", "down")
    assert b.status[("R2", "GigabitEthernet0/1")] == ("down", "down")
    assert (b.status, b.domain) == _fresh_layer2(_devices(down))
    assert b.ping("H1", ip("10.0.2.10"))[0].status != "delivered"


def test_an_edited_copy_of_a_shared_config_is_compiled_from_its_own_settings():
    devices = _devices()
    Network(devices, list(LINKS))  # the shared configs' facts are cached now
    cfg = copy.deepcopy(devices["R1"][1])
    cfg.interfaces["GigabitEthernet0/0"].ip = parsed_config(
        "interface Gi0/0\n ip address 10.0.9.1 255.255.255.0", "X")[0].interfaces[
        "GigabitEthernet0/0"].ip
    cfg.interfaces["GigabitEthernet0/1"].shutdown = True
    net = Network({**devices, "R1": ("router", cfg)}, list(LINKS))
    assert [i.ip for i in net.l3["R1"]] == [ip("10.0.9.1")]
    assert (net.status, net.domain) == _fresh_layer2({**devices, "R1": ("router", cfg)})


def test_a_failed_link_network_sees_the_failure():
    net = compiled(tuple((d, k, t) for d, k, t in (
        ("R1", "router", R1), ("R2", "router", R2), ("H1", "host", H1), ("H2", "host", H2))),
        LINKS)
    assert net.ping("H1", ip("10.0.2.10"))[1].status == "delivered"
    down = failed(net, "R1", "GigabitEthernet0/1")
    assert down.status[("R1", "GigabitEthernet0/1")] == ("administratively down", "down")
    assert down.ping("H1", ip("10.0.2.10"))[0].status != "delivered"
    assert net.ping("H1", ip("10.0.2.10"))[1].status == "delivered"


def test_fhrp_members_given_or_derived_elect_the_same():
    task = generate(np.random.default_rng(5), "fhrp", "hard")
    net = verify.text_network(task, dict(task.reference))
    assert net.fhrp_actives
    assert fhrp.elect(net._router_cfgs, net.domain, net.status) == (
        net.fhrp_state, net.fhrp_actives)


def test_memo_drops_its_oldest_entry_when_full():
    memo = Memo(2)
    for k in "abc":
        memo.get(k, lambda k=k: k.upper())
    assert len(memo) == 2
    assert memo.get("a", lambda: "again") == "again"  # dropped, made again
    assert memo.get("c", lambda: "stale") == "C"


def test_key_hashes_and_compares_by_its_parts_only_with_keys():
    parts = (("R1", "router", "text"), (("a", "b"),))
    assert Key(parts) == Key(tuple(parts)) and hash(Key(parts)) == hash(parts)
    assert Key(parts) != parts and Key(parts) != Key(parts[:1])


def test_a_tasks_derived_data_is_shared_by_equal_task_objects():
    task = generate(np.random.default_rng(3), "acl", "easy")
    twin = dataclasses.replace(task)
    assert twin is not task and twin == task
    assert verify._checks(twin) is verify._checks(task)
    assert verify._canonical(twin) is verify._canonical(task)


def test_a_router_whose_inputs_did_not_change_keeps_its_routing_table():
    a = Network(_devices(), list(LINKS))
    acl = R1 + "access-list 10 permit any\n"
    b = Network(_devices(acl), list(LINKS))
    assert b.rib["R2"] is a.rib["R2"] and b.fib["R2"] is a.fib["R2"]
    # Unshared copies are compiled from scratch: the same tables.
    fresh = Network({d: (k, copy.deepcopy(c)) for d, (k, c) in _devices(acl).items()},
                    list(LINKS))
    assert fresh.rib == b.rib and fresh.rib["R2"] is not b.rib["R2"]
    # A static route on R2 is a new table there (and nowhere else).
    static = R2 + "ip route 192.0.2.0 255.255.255.0 10.12.0.1\n"
    devices = {**_devices(), "R2": ("router", parsed_config(static, "R2")[0])}
    c = Network(devices, list(LINKS))
    assert c.rib["R2"] is not a.rib["R2"] and c.rib["R1"] is a.rib["R1"]
    assert any(r.proto == "S" and r.plen == 24 for r in map(RouteFields._make, c.rib["R2"]))
