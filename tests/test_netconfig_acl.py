"""Exact ACL equivalence: counterexamples are real disagreements, equivalents have none."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.envs.netconfig.acl import (
    difference,
    evaluate,
    format_packet,
    matches,
    overlap,
    parse_ace,
)
from textgyms.envs.netconfig.model import Acl
from textgyms.envs.netconfig.scenario import ip


def acl(*lines: str, kind: str = "extended") -> Acl:
    entries = [parse_ace(line.split(), kind) for line in lines]
    assert all(not isinstance(e, str) for e in entries), entries
    return Acl("t", kind, entries)


def test_equivalent_acls_written_differently_have_no_counterexample():
    a = acl("permit tcp 10.0.0.0 0.0.0.255 host 10.9.9.9 eq 80", "deny ip any any")
    b = acl(
        "permit tcp 10.0.0.0 0.0.0.127 10.9.9.9 0.0.0.0 range 80 80",
        "permit tcp 10.0.0.128 0.0.0.127 host 10.9.9.9 eq www",
    )
    assert difference(a, b) is None


def test_order_matters_and_the_counterexample_disagrees():
    a = acl("deny tcp host 10.0.0.5 any eq 22", "permit tcp 10.0.0.0 0.0.0.255 any")
    b = acl("permit tcp 10.0.0.0 0.0.0.255 any", "deny tcp host 10.0.0.5 any eq 22")
    p = difference(a, b)
    assert p is not None
    assert p[0] == ip("10.0.0.5") and p[2] == 6 and p[4] == 22
    assert evaluate(a, p)[0] != evaluate(b, p)[0]
    assert format_packet(p).startswith("tcp 10.0.0.5:")


def test_permit_any_any_differs_from_a_policy():
    policy = acl("permit udp any host 10.1.1.53 eq 53")
    hack = acl("permit ip any any")
    p = difference(hack, policy)
    assert p is not None and evaluate(hack, p)[0] and not evaluate(policy, p)[0]


def test_port_boundaries_and_established():
    a = acl("permit tcp any any range 1000 2000")
    b = acl("permit tcp any any gt 999", "deny tcp any any gt 2000")
    c = acl("deny tcp any any gt 2000", "permit tcp any any gt 999")
    assert difference(a, c) is None
    p = difference(a, b)
    assert p is not None and p[4] == 2001
    est = acl("permit tcp any any established")
    p = difference(est, acl("permit tcp any any"))
    assert p is not None and p[2] == 6 and p[5] is False


def test_standard_acl_against_extended_and_no_acl():
    std = acl("deny 10.0.0.0 0.0.0.255", "permit any", kind="standard")
    ext = acl("deny ip 10.0.0.0 0.0.0.255 any", "permit ip any any")
    assert difference(std, ext) is None
    p = difference(std, None)  # no ACL applied permits everything
    assert p is not None and ip("10.0.0.0") <= p[0] <= ip("10.0.0.255")
    # An ACL with no entries permits everything once applied, as on IOS.
    assert difference(Acl("e", "extended"), None) is None
    assert difference(Acl("e", "extended"), acl("deny ip any any")) is not None


_ADDRS = ["any", "host 10.0.0.1", "host 10.0.0.2", "10.0.0.0 0.0.0.3", "10.0.0.0 0.0.0.255"]
_PORTS = ["", "eq 80", "eq 81", "range 79 81", "gt 80", "lt 81"]
_entry = st.builds(
    lambda act, proto, s, d, port, est: " ".join(
        x for x in (act, proto, s, d, port if proto in ("tcp", "udp") else "",
                    "established" if est and proto == "tcp" else "") if x
    ),
    st.sampled_from(["permit", "deny"]),
    st.sampled_from(["ip", "tcp", "udp", "icmp"]),
    st.sampled_from(_ADDRS),
    st.sampled_from(_ADDRS),
    st.sampled_from(_PORTS),
    st.booleans(),
)
_packets = [
    (ip(f"10.0.0.{s}"), ip(f"10.0.0.{d}"), proto, 1000, port, est)
    for s in (0, 1, 2, 3, 9) for d in (1, 2, 4) for proto in (1, 6, 17, 47)
    for port in (79, 80, 81, 82) for est in (False, True)
]


@settings(max_examples=200, deadline=None)
@given(st.lists(_entry, max_size=4), st.lists(_entry, max_size=4))
def test_difference_is_exact_on_random_acls(xs, ys):
    a, b = acl(*xs), acl(*ys)
    p = difference(a, b)
    if p is None:  # equivalent: no packet of a dense sample tells them apart
        assert all(evaluate(a, q)[0] == evaluate(b, q)[0] for q in _packets)
    else:
        assert evaluate(a, p)[0] != evaluate(b, p)[0]
        assert difference(a, a) is None and difference(b, b) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(_entry, min_size=2, max_size=5), st.data())
def test_a_swap_of_same_action_or_disjoint_entries_changes_nothing(xs, data):
    """What fault injection relies on to skip difference(): swapping two adjacent entries
    with one action, or that no packet matches both, leaves every decision as it was; and
    overlap() is true whenever some packet matches both entries."""
    a = acl(*xs)
    i = data.draw(st.integers(0, len(a.entries) - 2))
    x, y = a.entries[i], a.entries[i + 1]
    if any(matches(x, q) and matches(y, q) for q in _packets):
        assert overlap(x, y)
    swapped = Acl(a.name, a.kind, [*a.entries[:i], y, x, *a.entries[i + 2:]])
    if x.permit == y.permit or not overlap(x, y):
        assert difference(a, swapped) is None
