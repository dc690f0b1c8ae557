"""The typed twins of generated configuration texts (twins.py) are exactly what the parser
makes of those texts, over every family and level and many seeds."""

from __future__ import annotations

import numpy as np
import pytest

from textgyms.core import generate_in_split
from textgyms.envs.netconfig import memo, parser, twins
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, generate

SEEDS = range(20)


def _same(cfg, text: str, device: str, lines: int | None = None) -> None:
    want, issues, accepted = parser.parse_config(text, device)
    assert cfg == want, text
    assert repr(cfg) == repr(want), text
    for name, itf in cfg.interfaces.items():  # the parser's own (memoized) address objects
        assert itf.ip is want.interfaces[name].ip, text
    assert cfg.gateway is want.gateway, text
    assert issues == [], text
    if lines is not None:
        assert lines == accepted, text


@pytest.mark.parametrize("family", FAMILIES)
def test_twins_equal_the_parse_of_their_text(family: str, monkeypatch) -> None:
    seeded: list[tuple[str, str, object, int]] = []
    built: list[str] = []
    put, base = twins._put, twins.parsed_base

    def spy_put(text, device, make):
        twin = make()
        assert twin is not None, text  # generated addresses are all ones the parser takes
        seeded.append((text, device, *twin))
        put(text, device, make)

    def spy_base(t, dev):
        cfg = base(t, dev)
        _same(cfg, twins.base_config(t, dev), dev)  # now: the caller goes on to edit it
        built.append(dev)
        return cfg

    monkeypatch.setattr(twins, "_put", spy_put)
    monkeypatch.setattr(twins, "parsed_base", spy_base)
    memo.PARSED.clear()  # every seed builds its twin, none is a leftover of another test
    for level in LEVELS:
        for s in SEEDS:
            rng = np.random.default_rng(4100 + s)
            generate_in_split(lambda r=rng, lv=level: generate(r, family, lv), "all")
    if family not in ("analysis", "ipv6"):  # answers; IPv6 hosts have their own texts
        assert any("ip default-gateway" in text for text, *_ in seeded)  # hosts seeded
    for text, device, cfg, lines in seeded:
        _same(cfg, text, device, lines)
    if family == "ipv6":
        assert built


def test_seeded_text_is_a_parse_memo_hit(monkeypatch) -> None:
    """The compile of the reference finds the twin: ``parse_config`` never sees its text."""
    memo.PARSED.clear()
    seeded: list[str] = []
    put = twins._put
    monkeypatch.setattr(twins, "_put", lambda text, d, make: (seeded.append(text), put(text, d, make)))
    parsed: list[str] = []
    real = memo.parse_config
    monkeypatch.setattr(memo, "parse_config", lambda text, d="": (parsed.append(text), real(text, d))[1])
    rng = np.random.default_rng(5)
    generate(rng, "routing", "easy")
    assert any("default-gateway" not in text for text in seeded)  # a router start config
    assert seeded and not set(seeded) & set(parsed)
