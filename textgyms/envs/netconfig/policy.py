"""Route policy shared by BGP and redistribution: prefix-lists and route-map entries matched
against a route's prefix, as IOS does it.

* A prefix-list is searched in sequence order; the first entry the prefix falls in decides,
  and a prefix no entry covers is denied (the implicit deny).
* A route-map entry matches when every ``match`` clause does (none: it matches everything):
  ``match ip address prefix-list NAME`` by the list, ``match ip address ACL`` by the
  prefix's network address against the (standard) access list, ``match tag N...`` by the
  route's tag (a static route's ``tag``, an OSPF external's). The first matching entry
  decides (permit with its ``set`` clauses, or deny); no match, or a route-map that is not
  defined, denies.
"""

from __future__ import annotations

from textgyms.envs.netconfig.acl import evaluate
from textgyms.envs.netconfig.model import DeviceConfig, RouteMapEntry


def prefix_list_permits(cfg: DeviceConfig, name: str, net: int, plen: int) -> bool:
    """Whether prefix-list ``name`` permits ``net/plen`` (a list with no entries denies)."""
    entries = cfg.prefix_lists.get(name, [])
    hit = next((e for e in entries if e.matches(net, plen)), None)
    return hit is not None and hit.permit


def _matches(cfg: DeviceConfig, e: RouteMapEntry, net: int, plen: int, tag: int) -> bool:
    if e.prefix_list is not None and not prefix_list_permits(cfg, e.prefix_list, net, plen):
        return False
    if e.match_tag and tag not in e.match_tag:
        return False  # ``match tag A B``: the route's tag is one of them
    if e.acl is not None:
        acl = cfg.acls.get(e.acl)
        # An undefined or empty list matches nothing here (it is not an applied filter).
        if acl is None or not acl.entries or not evaluate(acl, (net, 0, 0, 0, 0, False))[0]:
            return False
    return True


def route_map_entry(cfg: DeviceConfig, name: str, net: int, plen: int,
                    tag: int = 0) -> RouteMapEntry | None:
    """The permit entry of route-map ``name`` that accepts ``net/plen`` with route tag
    ``tag`` (None: denied)."""
    for e in cfg.route_maps.get(name, []):
        if _matches(cfg, e, net, plen, tag):
            return e if e.permit else None
    return None
