"""The parser's shortcuts against what they stand for: ``inet_pton`` against ``ipaddress`` (and
the split reader) for IPv4 and IPv6 address texts, and :func:`split_devices` against the
line-by-line splitter it replaced."""

from __future__ import annotations

import ipaddress
import random
import re

from textgyms.envs.netconfig import parse_if, parse_v6
from textgyms.envs.netconfig.parse_bgp6 import peer_addr
from textgyms.envs.netconfig.parser import split_devices


def _v4_texts(rng: random.Random, n: int) -> list[str]:
    """Dotted texts near the valid ones: 3-5 parts of 0-4 digits, sometimes odd characters."""
    out = list(parse_if._QUAD_PROBES)
    for _ in range(n):
        parts = ["".join(rng.choice("0123456789") for _ in range(rng.choice([0, 1, 1, 2, 3, 3, 4])))
                 for _ in range(rng.choice([3, 4, 4, 4, 5]))]
        text = ".".join(parts)
        if rng.random() < 0.1:
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice([" ", "x", "\u0664", "\uff11", "+", "-", "\n"]) + text[i:]
        out.append(text)
    return out


def test_pton_quad_reads_what_the_split_reader_reads():
    for text in _v4_texts(random.Random("v4"), 10000):
        assert parse_if._pton_quad(text) == parse_if._split_quad(text), repr(text)


def test_ip4_matches_ipaddress():
    for text in _v4_texts(random.Random("ip4"), 3000):
        try:
            expected = ipaddress.IPv4Address(text)
        except ValueError:
            expected = None
        assert parse_if.ip4.__wrapped__(text) == expected, repr(text)


def _v6_texts(rng: random.Random, n: int) -> list[str]:
    out = list(parse_v6._V6_PROBES)
    for k in range(n):
        if k % 2:
            text = "".join(rng.choice("0123456789abcdefABCDEF:::::g.% ") for _ in range(rng.randint(0, 20)))
        else:
            groups = ["".join(rng.choice("0123456789abcdefABCDEF")
                              for _ in range(rng.choice([0, 0, 1, 2, 3, 4, 4, 5])))
                      for _ in range(rng.randint(1, 9))]
            text = ":".join(groups)
            if rng.random() < 0.3:
                text = text.replace(":", "::", 1)
        out.append(text)
    return out


def _v6_reference(text: str) -> ipaddress.IPv6Address | None:
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def test_ipv6_texts_read_as_ipaddress_reads_them():
    for text in _v6_texts(random.Random("v6"), 10000):
        expected = _v6_reference(text)
        got = parse_v6.ip6(text)
        assert repr(got) == repr(expected), repr(text)
        if got is not None:
            assert (got._ip, got._scope_id) == (expected._ip, expected._scope_id)
        n = parse_v6._pton6(text)
        assert n is None or (expected is not None and n == int(expected)), repr(text)


def test_peer_addr_refuses_names_without_parsing():
    for text in ("IBGP", "PEERS", "rr-clients", "10.0.0.1", "2001:db8::1", "fe80::1", "ff02::1",
                 "::", "1.2.3", "x:y"):
        v4 = parse_if.ip4(text)
        v6 = _v6_reference(text)
        expected = v4 if v4 is not None else (
            None if v6 is None or v6.is_link_local or v6.is_multicast or v6.is_unspecified else v6)
        assert peer_addr(text) == expected, text


_MARK = re.compile(r"^\s*!\s*device\s+(\S+)\s*$", re.I)


def _split_reference(text: str) -> list[tuple[str, str, int]]:
    """The line-by-line splitter :func:`split_devices` replaced (its specification)."""
    sections: list[tuple[str, list[str], int]] = []
    named: list[bool] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        mark = _MARK.match(raw)
        if mark:
            sections.append((mark.group(1), [], lineno + 1))
            named.append(False)
            continue
        words = raw.split()
        if len(words) == 2 and words[0] == "hostname":
            if not sections or sections[-1][0] != words[1] or named[-1]:
                sections.append((words[1], [], lineno))
                named.append(False)
            named[-1] = True
        elif not sections:
            sections.append(("", [], lineno))
            named.append(False)
        sections[-1][1].append(raw)
    return [(name, "\n".join(lines), first) for name, lines, first in sections]


def test_split_devices_matches_the_line_by_line_splitter():
    rng = random.Random("split")
    pieces = ["! device R1", "! device R2", "!device R1", "!device X", "!device ", "!DEVICE Y\t",
              "  ! DEVICE  R1 ", "! device", "hostname R1", "hostname R2", " hostname R1",
              "hostname R1 x", "hostname", "!", "", " ip address 1.2.3.4 255.0.0.0",
              "interface Gi0/0", "x ! hostname R1", "!hostname R1", "! device R1 x", "\r",
              "end", "! device H1\x85hostname H1", "\u2028", "!devic X", "!\tdevice\tX",
              "!device\u3000X"]
    for _ in range(5000):
        text = rng.choice(["\n", "\r\n", "\n\n"]).join(
            rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.3:
            text += "\n"
        assert split_devices(text) == _split_reference(text), repr(text)
