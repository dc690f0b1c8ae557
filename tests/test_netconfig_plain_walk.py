"""The packet walk's short path for networks where nothing filters or translates
(``Network._walk_plain``) gives exactly the walk of the general path, on the starting and
reference networks of generated tasks: every source, destination, injection port and
equal-cost choice."""

from __future__ import annotations

from support import netconfig_networks

import textgyms  # noqa: F401  (registers the ids)

FAMILIES = ("routing", "addressing", "ospf_areas", "bgp", "fhrp", "redistribution", "repair")


def _networks():
    return netconfig_networks(FAMILIES, 3)


def _walks(net):
    """Every (packet, source, injection port, choices) the test sends through ``net``."""
    addrs = sorted({ip for own in net.own.values() for ip in own})
    for dev in net.devices:
        for dst in addrs:
            src = net.source_ip(dev, dst) or 0
            for choices in (None, (1,), (0, 1, 1)):
                yield (src, dst, 1, 0, 0, False), dev, None, choices
    for dev in sorted(net.routers):
        for i in net.l3[dev]:
            for dst in addrs[::3]:
                yield (i.ip ^ 1, dst, 6, 49152, 22, False), dev, i.name, None


def test_the_plain_walk_is_the_general_walk():
    plain = 0
    for net in _networks():
        if not net._plain():
            continue
        plain += 1
        general = net.view()
        general._is_plain = False  # the general path, on the same compiled network
        for pkt, dev, inif, choices in _walks(net):
            assert net.walk(pkt, dev, None, inif, choices) == \
                general.walk(pkt, dev, None, inif, choices), (pkt, dev, inif, choices)
    assert plain >= 20  # most generated networks filter and translate nothing
