"""The tolerant MT103 parser: what is unambiguous is read (a stray closing brace after the
last block, as real files carry), and a refusal says exactly what is wrong and where."""

from __future__ import annotations

from pathlib import Path

import pytest

import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022.env import validate_report
from textgyms.envs.iso20022.mt103 import parse, parse_error, validate_text

INPUTS = Path(__file__).parent / "golden" / "iso20022" / "real" / "inputs"
REAL = (INPUTS / "paymsg_full_valid.mt").read_text(encoding="utf-8").strip()
BARE = REAL.rsplit("{5:", 1)[0]  # without its trailer block


@pytest.mark.parametrize("tail", ["}", "}}", "\n}", "{5:{CHK:123456789ABC}}}", "{S:{SAC:}}"])
def test_a_stray_closing_brace_or_trailer_after_block_4_is_read(tail):
    assert BARE.endswith("\n-}")
    text = BARE + tail
    assert parse(text) is not None and parse_error(text) is None
    assert parse(text).fields == parse(REAL).fields
    assert validate_text(text) == validate_text(REAL)
    assert iso.translate_mt(text) == iso.translate_mt(REAL)


BROKEN = [
    (lambda m: "hello", "must start with block 1"),
    (lambda m: m.replace("{2:", "{7:", 1), "block 2"),
    (lambda m: m.replace("{4:\n", "{4:", 1), "'{4:' and a line break"),
    (lambda m: m.rsplit("\n-}", 1)[0], "not closed"),
    (lambda m: m.replace("{4:\n:", "{4:\n", 1), "line 1 of block 4"),
    (lambda m: m + "{", "unexpected text after block 4"),
    (lambda m: m + "\nTRAILING TEXT", "unexpected text after block 4"),
]


@pytest.mark.parametrize(("breaker", "says"), BROKEN)
def test_a_refusal_says_what_is_wrong_and_where(breaker, says):
    text = breaker(REAL)
    assert parse(text) is None
    assert says in parse_error(text)
    with pytest.raises(ValueError, match="not an MT message: .*" + says.split("'")[0]):
        iso.translate_mt(text)
    assert says in iso.score(REAL, text).feedback
    assert says in validate_report(text)


def test_the_real_message_ending_in_an_open_brace_is_refused_with_its_reason():
    raw = (INPUTS / "prowide_MT103-out-ack.rje").read_text(encoding="utf-8")
    bad = [m.strip() for m in raw.split("$") if m.strip() and parse(m.strip()) is None]
    assert len(bad) == 1 and "unexpected text after block 4" in parse_error(bad[0])
