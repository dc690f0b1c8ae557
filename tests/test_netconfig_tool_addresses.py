"""The tools read the addresses an agent types (``ping``, ``traceroute`` and ``test_flow``
targets) exactly as ``ipaddress`` does, though a quad written the usual way skips its parser,
and ``test_flow`` makes an IPv4 flow of two IPv4 ends, an IPv6 flow of two IPv6 ends and an
error of anything else (it reads the ends as IPv6 only when one is no IPv4 address)."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.envs.netconfig import tools
from textgyms.envs.netconfig.sample import SampleState


def ipaddress_reads(text) -> int | None:
    """The tools' reader before the quad path (``ipaddress`` alone)."""
    try:
        return int(ipaddress.IPv4Address(str(text).strip()))
    except ValueError:
        return None


octets = st.one_of(st.integers(0, 300).map(str), st.sampled_from(
    ["00", "01", "010", "0x1", "", " 1", "1 ", "+1", "-1", "\u0661", "\uff11", "1_0", "1e2", "a"]))
quads = st.lists(octets, min_size=3, max_size=5).map(".".join)
padded = st.tuples(st.sampled_from(["", " ", "\t", "\n", "\u00a0"]), quads,
                   st.sampled_from(["", " ", "\n", "/24", "\x00"])).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(quads, padded, st.text(max_size=20), st.integers(-1, 2**33),
                      st.none()))
def test_addr_reads_as_ipaddress_does(text):
    assert tools._addr(text) == ipaddress_reads(text)


def test_the_quad_path_serves_the_usual_spelling():
    """(Else the test above proves nothing about it.)"""
    from textgyms.envs.netconfig.topologies import canonical_quad

    assert canonical_quad("10.20.30.40") == tools._addr(" 10.20.30.40 ") == 0x0A141E28
    assert canonical_quad("10.20.30.040") is None and tools._addr("10.20.30.040") is None


def _kind(src: str, dst: str) -> str:
    """What ``test_flow`` must make of two ends: an IPv4 flow when both are IPv4 addresses,
    an IPv6 one when both are IPv6 addresses (as ``ipaddress`` reads them), else an error."""
    def v6(text: str) -> bool:
        try:
            ipaddress.IPv6Address(text.strip())
            return True
        except ValueError:
            return False

    if ipaddress_reads(src) is not None and ipaddress_reads(dst) is not None:
        return "v4"
    return "v6" if v6(src) and v6(dst) else "bad"


ENDS = ["10.10.10.10", "10.20.0.10", "198.51.100.7", " 10.10.20.5", "2001:db8::1", "fe80::1",
        "::ffff:10.10.10.10", "10.10.10.010", "x", "", "10.10.10"]


def test_test_flow_reads_both_ends_as_one_kind():
    state = SampleState()
    kinds = set()
    for src in ENDS:
        for dst in ENDS:
            for port in (80, 70000):
                out, error = tools.run_tool(state, "test_flow",
                                            {"src": src, "dst": dst, "proto": "tcp", "port": port})
                kind = _kind(src, dst)
                kinds.add(kind)
                if kind == "bad":
                    assert (out, error) == (
                        "% test_flow needs IPv4 (or IPv6) src and dst addresses", "invalid")
                elif port > 65535:
                    assert (out, error) == ("% port must be 0-65535", "invalid")
                else:
                    head = out.split("\n")[0]
                    assert error is None and head.startswith("flow tcp ")
                    assert ("[" in head) == (kind == "v6"), (src, dst, head)
    assert kinds == {"v4", "v6", "bad"}
