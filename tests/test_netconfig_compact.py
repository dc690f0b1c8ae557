"""A shared parsed config holds one read-only empty list (and set) for all of its empty
fields (model.compact): the garbage collector scans each list at every collection, and the
parse memo holds thousands of configs. The compact config equals a fresh parse, refuses
edits, and every way to get an editable copy gives independent plain lists."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle

import pytest

from textgyms.envs.netconfig.bounded import NO_ITEMS, NO_MEMBERS
from textgyms.envs.netconfig.memo import parsed_config
from textgyms.envs.netconfig.model import _MUTABLE_SLOTS, EMPTYABLE, DeviceConfig
from textgyms.envs.netconfig.parser import parse_config

TEXT = """hostname R7
interface GigabitEthernet0/0
 ip address 10.0.0.1 255.255.255.0
 standby 1 ip 10.0.0.254
interface GigabitEthernet0/1
 ip address 10.0.1.1 255.255.255.0
 ip access-group EDGE in
ip access-list extended EDGE
 permit tcp any any eq 22
router ospf 1
 network 10.0.0.0 0.0.255.255 area 0
router bgp 65001
 neighbor 10.0.1.2 remote-as 65002
"""


def _shared() -> DeviceConfig:
    return parsed_config(TEXT + "!\n", "R7")[0]  # (a text of its own: a fresh memo entry)


def _tracked(obj) -> int:
    """Objects the garbage collector tracks among those reachable from ``obj`` (types,
    functions and modules left out)."""
    seen, stack = set(), [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, type) or not gc.is_tracked(o):
            continue
        seen.add(id(o))
        stack.extend(gc.get_referents(o))
    return len(seen)


def test_every_list_and_set_field_of_the_model_is_compacted():
    for cls in _MUTABLE_SLOTS:
        kinds = {f.name for f in dataclasses.fields(cls) if f.default_factory in (list, set)}
        assert set(EMPTYABLE.get(cls, ())) == kinds, cls.__name__


def test_a_shared_config_holds_the_shared_empties_and_equals_a_fresh_parse():
    cfg, fresh = _shared(), parse_config(TEXT + "!\n", "R7")[0]
    itf = cfg.interfaces["GigabitEthernet0/0"]
    assert cfg.routes is NO_ITEMS and cfg.nat is NO_ITEMS and itf.extra is NO_ITEMS
    assert cfg.ospf.passive is NO_MEMBERS and itf.fhrp[("hsrp", 1)].extra is NO_ITEMS
    assert cfg.acls["EDGE"].remarks is NO_ITEMS and cfg.bgp.networks is NO_ITEMS
    assert cfg.acls["EDGE"].entries  # (not emptied: it has an entry)
    assert cfg == fresh and repr(cfg) == repr(fresh)
    assert _tracked(cfg) < _tracked(fresh) - 10  # the empties were most of its lists


@pytest.mark.parametrize("edit", [
    lambda c: c.routes.append(1), lambda c: c.extra.extend(["x"]),
    lambda c: c.interfaces["GigabitEthernet0/1"].ipv6.insert(0, 1),
    lambda c: c.ospf.active.add("Gi0/0"), lambda c: c.ospf.passive.update({"x"}),
])
def test_a_shared_config_refuses_edits_of_its_empty_fields(edit):
    cfg = _shared()
    with pytest.raises(TypeError, match="read-only"):
        edit(cfg)
    assert not NO_ITEMS and not NO_MEMBERS


@pytest.mark.parametrize("copier", [DeviceConfig.clone, copy.deepcopy,
                                    lambda c: pickle.loads(pickle.dumps(c))])
def test_every_editable_copy_has_independent_plain_empties(copier):
    cfg = _shared()
    mine = copier(cfg)
    for name in EMPTYABLE[DeviceConfig]:
        assert type(getattr(mine, name)) is list
    mine.routes.append("r")
    mine.ospf.passive.add("Loopback0")
    mine.interfaces["GigabitEthernet0/0"].extra.append("e")
    assert mine.nat == [] and mine.extra == [] and mine.routes6 == []  # nothing aliased
    assert mine.ospf.active == set() and mine.interfaces["GigabitEthernet0/1"].extra == []
    assert cfg == parse_config(TEXT + "!\n", "R7")[0]  # the shared one is untouched


def test_memoized_ospf_results_are_plain_values_the_collector_stops_tracking():
    """SPF first hops and OSPF table entries are tuples of plain values (shared, never
    changed), and an interface without authentication holds the one shared value: after a
    collection the garbage collector tracks none of them."""
    from support import netconfig_networks

    from textgyms.envs.netconfig import ospf
    from textgyms.envs.netconfig.ospf_opts import NULL_AUTH

    results = []
    for net in netconfig_networks(("ospf_areas", "redistribution"), 2):
        cfgs = net._router_cfgs
        results.append(ospf.compute(cfgs, {d: net.l3[d] for d in cfgs}))  # (memoized)
    for _ in range(3):  # a tuple is untracked once its items are: a collection per level
        gc.collect()
    hops = [h for r in results for _dist, first in r[4].spf.values() for h in first.values()]
    entries = [e for r in results for table in r[5].values() for e in table.values()]
    assert any(hops) and entries
    assert not any(gc.is_tracked(x) for x in hops + entries)
    oifs = [o for r in results for o in r[3]]
    assert sum(o.auth is NULL_AUTH for o in oifs) > len(oifs) // 2


def test_both_ends_of_a_subnet_share_one_network_object():
    """Parsed interfaces on one subnet hold one network object (equal to the constructor's),
    not one each: fewer objects in the parse memo for the collector."""
    import ipaddress

    from textgyms.envs.netconfig import ipobj

    a = parse_config("interface Gi0/0\n ip address 10.9.8.1 255.255.255.252\n", "A")[0]
    b = parse_config("interface Gi0/1\n ip address 10.9.8.2 255.255.255.252\n", "B")[0]
    na = a.interfaces["GigabitEthernet0/0"].ip.network
    nb = b.interfaces["GigabitEthernet0/1"].ip.network
    if ipobj.FAST:
        assert na is nb
    assert na == nb == ipaddress.IPv4Network("10.9.8.0/30") and str(na) == "10.9.8.0/30"
