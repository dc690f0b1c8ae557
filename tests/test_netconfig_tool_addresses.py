"""The tools read the addresses an agent types (``ping``, ``traceroute`` and ``test_flow``
targets) exactly as ``ipaddress`` does, though a quad written the usual way skips its parser,
and ``test_flow`` answers as when it read both kinds of address of both ends first."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.envs.netconfig import tools
from textgyms.envs.netconfig.model import PROTO_NUM
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


def _eager_flow(state, args) -> tuple[str, str | None]:
    """``test_flow`` as it was: both ends read as both kinds of address before anything."""
    src, dst = tools._addr(args.get("src", "")), tools._addr(args.get("dst", ""))
    src6, dst6 = tools._addr6(args.get("src", "")), tools._addr6(args.get("dst", ""))
    if (src is None or dst is None) and (src6 is None or dst6 is None):
        return "% test_flow needs IPv4 (or IPv6) src and dst addresses", "invalid"
    proto = PROTO_NUM.get(str(args.get("proto", "tcp")), 6)
    port = int(args.get("port") or 0)
    if not 0 <= port <= 65535:
        return "% port must be 0-65535", "invalid"
    if src is None:
        flow = tools._flow6(state.net.v6, src6, dst6, proto, port)
        return tools._flow_text(flow, tools.show6.a6), None
    walk = state.net.flow(src, dst, proto, port)
    tools._count(state, walk)
    return tools._flow_text(walk, None), None


ENDS = ["10.10.10.10", "10.20.0.10", "198.51.100.7", " 10.10.20.5", "2001:db8::1", "fe80::1",
        "::ffff:10.10.10.10", "10.10.10.010", "x", "", "10.10.10"]


def test_test_flow_answers_as_when_it_read_every_kind_first():
    state, eager = SampleState(), SampleState()
    seen = set()
    for src in ENDS:
        for dst in ENDS:
            for proto, port in (("tcp", 80), ("udp", 70000), ("icmp", 0)):
                args = {"src": src, "dst": dst, "proto": proto, "port": port}
                got = tools.run_tool(state, "test_flow", args)
                assert got == _eager_flow(eager, args), args
                seen.add(got[0].split("\n")[0][:12])
    assert state.hits == eager.hits and len(seen) >= 4  # flows of both kinds and both errors
