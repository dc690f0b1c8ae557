"""The generator's cheap constructions equal what they replace: address objects made from
ints, host ranges, and sampling without replacement (the same picks and generator state)."""

from __future__ import annotations

import ipaddress

import numpy as np
import pytest

from textgyms.envs.netconfig import topologies as T

INTS = (0, 1, 0x0A2D0701, 0xAC10FE02, 0xC0A8FAFF, 0xFFFFFFFF)


@pytest.mark.parametrize("plen", range(33))
def test_net4_and_iface4_equal_the_constructors(plen: int) -> None:
    mask = (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
    for x in INTS:
        net, want = T.net4(x & mask, plen), ipaddress.IPv4Network((x & mask, plen))
        assert (net, repr(net), str(net), hash(net), type(net)) == \
            (want, repr(want), str(want), hash(want), type(want))
        if plen < 31:  # a /31 or /32 holds its own bound ``hosts``: made by the constructor
            assert vars(net) == vars(want)
        got, ref = T.iface4(x, plen), ipaddress.IPv4Interface((x, plen))
        assert (got, repr(got), str(got), hash(got), got.network, got.netmask) == \
            (ref, repr(ref), str(ref), hash(ref), ref.network, ref.netmask)
        assert vars(got) == vars(ref) and int(got) == int(ref)
        assert list(T.host_ints(x & mask, plen)) == [int(a) for a in want.hosts()] \
            if plen >= 20 else len(T.host_ints(x & mask, plen)) == want.num_addresses - 2


@pytest.mark.parametrize("n,k", [(191, 1), (191, 2), (191, 4), (180, 2), (12, 3), (5, 5),
                                 (3, 2), (1, 1), (7, 0), (2, 2), (10_000, 3), (10_001, 2)])
def test_choose_is_numpy_choice(n: int, k: int) -> None:
    for seed in range(300):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        want = a.choice(n, size=k, replace=False).tolist()
        assert T.choose(b, n, k) == want
        assert a.bit_generator.state == b.bit_generator.state
    assert T._FLOYD  # this numpy draws as the shortcut does: it is in use


def test_choose_refuses_what_choice_refuses() -> None:
    with pytest.raises(ValueError):
        T.choose(np.random.default_rng(0), 3, 4)


def test_the_int_shortcuts_are_checked_at_import_and_fall_back(monkeypatch) -> None:
    """On this Python the shortcuts are exact (so the generator and parser use them); with
    them switched off every call gives the constructor's own object."""
    from textgyms.envs.netconfig import ipobj

    assert ipobj.FAST and ipobj._fast_is_exact()
    monkeypatch.setattr(ipobj, "FAST", False)
    for plen in (0, 24, 31, 32):
        x = 0x0A2D0701
        assert ipobj._same(ipobj.interface4(x, plen), ipaddress.IPv4Interface((x, plen)))
        assert ipobj._same(ipobj.network4(x, plen), ipaddress.IPv4Network((x, plen), False))
        assert ipobj._same(ipobj.interface6(x << 100, plen * 4),
                           ipaddress.IPv6Interface((x << 100, plen * 4)))
    assert ipobj._same(ipobj.address4(7), ipaddress.IPv4Address(7))
    assert not ipobj._same(ipobj.network4(x, 24), ipaddress.IPv4Network((x, 25), False))


def test_from_text_is_the_cached_constructor_of_its_class():
    from textgyms.envs.netconfig.ipobj import from_text

    for cls, text in ((ipaddress.IPv4Interface, "10.1.2.3/24"),
                      (ipaddress.IPv4Network, "10.1.2.3/24"),
                      (ipaddress.IPv6Interface, "2001:db8::1/64")):
        if cls is ipaddress.IPv4Network:
            with pytest.raises(ValueError):  # host bits set: refused as the constructor does
                from_text(cls, text)
            continue
        got = from_text(cls, text)
        assert type(got) is cls and got == cls(text)
        assert from_text(cls, text) is got  # cached
    # the class is part of the key: the same text as a network is a network
    assert type(from_text(ipaddress.IPv4Network, "10.1.2.0/24")) is ipaddress.IPv4Network
    assert type(from_text(ipaddress.IPv4Interface, "10.1.2.0/24")) is ipaddress.IPv4Interface
