"""The MT103 message read as SWIFT writes it (own code): blocks 1-3, the block-4 fields in
order, the sender and receiver of the headers, and the block-3 UETR and service type.

:func:`parse` returns None for text that is not an MT message at all; everything that checks
a parsed message (field formats, tag order, network rules) is in :mod:`mt103` and
:mod:`network`, which both build on this module.
"""

from __future__ import annotations

import re
from typing import NamedTuple

BIC_RE = re.compile(r"[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?")
# Blocks 1-4, an optional trailer block 5 and an optional S block; a stray closing brace
# after them (as some real files carry) is unambiguous and accepted.
_MESSAGE = re.compile(
    r"\{1:([^{}]*)\}\{2:([^{}]*)\}(\{3:((?:\{[^{}]*\})*)\})?\{4:\n(.*?)\n-\}"
    r"(\{5:(?:\{[^{}]*\})*\})?(\{S:(?:\{[^{}]*\})*\})?(?:\s*\})*",
    re.S,
)
_FIELD = re.compile(r":(\d\d[A-Z]?):(.*)")
BLOCK1 = re.compile(r"F01([A-Z0-9]{8})[A-Z0-9]([A-Z0-9]{3})\d{10}")
BLOCK2_IN = re.compile(r"I103([A-Z0-9]{8})[A-Z0-9]([A-Z0-9]{3})(?:[UNS](?:[123](?:\d{3})?)?)?")
BLOCK2_OUT = re.compile(r"O103\d{4}\d{6}([A-Z0-9]{8})[A-Z0-9]([A-Z0-9]{3})\d{10}\d{6}\d{4}[UNS]?")
# 13C: /code/ + time HHMM + sign + offset HHMM (the offset hours 00-13); the codes the
# translation rules map (CLSTIME, RNCTIME, SNDTIME) with valid values only.
TIME_13C = re.compile(r"/(CLSTIME|RNCTIME|SNDTIME)/([01]\d|2[0-3])([0-5]\d)([+-])"
                      r"(0\d|1[0-3])([0-5]\d)")
UETR_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
# Block-4 tags of MT103 in their prescribed order; the value is the base tag (option group).
ORDER = ("20", "13C", "23B", "23E", "26T", "32A", "33B", "36", "50", "51A", "52", "53", "54",
         "55", "56", "57", "59", "70", "71A", "71F", "71G", "72", "77B", "77T")
OPTIONS = {"50": "AFK", "52": "AD", "53": "ABD", "54": "ABD", "55": "ABD", "56": "ACD",
           "57": "ABCD", "59": "AF "}


class Issue(NamedTuple):
    """One validation problem: SWIFT-style code, the tag (or block) and a message."""

    code: str
    tag: str
    text: str

    def __str__(self) -> str:
        return f"{self.code} {self.tag}: {self.text}"


class Message(NamedTuple):
    """A parsed MT message: raw blocks 1-3 and the block-4 fields in order."""

    block1: str
    block2: str
    block3: str | None
    fields: list[tuple[str, str]]  # (tag, value with "\n" between lines)

    def get(self, tag: str) -> list[str]:
        """Values of every occurrence of ``tag``."""
        return [v for t, v in self.fields if t == tag]

    def first(self, base: str) -> tuple[str, str] | None:
        """The first field whose tag starts with ``base`` (any option letter)."""
        return next(((t, v) for t, v in self.fields if base_tag(t) == base), None)


def base_tag(tag: str) -> str:
    """The option group of ``tag`` ("50K" -> "50", "59" -> "59", "32A" -> "32A")."""
    return tag[:2] if tag[:2] in OPTIONS else tag


def _body(text: str) -> str:
    """The message text with CRLF as LF, surrounding blanks and one code fence removed."""
    body = text.replace("\r\n", "\n").strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0].strip()
    return body


def parse(text: str) -> Message | None:
    """The blocks and fields of an MT103, or None if ``text`` is not an MT message
    (:func:`parse_error` says what is wrong and where).

    CRLF and LF are both accepted; surrounding whitespace, one code fence and stray closing
    braces after the last block are ignored.
    """
    if not isinstance(text, str) or len(text) > 100_000:
        return None
    body = _body(text)
    m = _MESSAGE.fullmatch(body)
    if m is None:
        return None
    fields: list[tuple[str, str]] = []
    for line in m.group(5).split("\n"):
        f = _FIELD.fullmatch(line)
        if f is not None:
            fields.append((f.group(1), f.group(2)))
        elif fields:
            fields[-1] = (fields[-1][0], fields[-1][1] + "\n" + line)
        else:
            return None
    return Message(m.group(1), m.group(2), m.group(4), fields)


_STEPS = (
    (re.compile(r"\{1:[^{}]*\}"), "it must start with block 1, '{1:F01' + LT address + "
     "session and sequence numbers + '}'"),
    (re.compile(r"\{2:[^{}]*\}"), "block 2 ('{2:I103' + receiver + '}') must follow block 1"),
    (re.compile(r"(\{3:(?:\{[^{}]*\})*\})?"), ""),
    (re.compile(r"\{4:\n"), "block 4 must start with '{4:' and a line break"),
)


def parse_error(text: object) -> str | None:
    """What keeps ``text`` from being an MT message, with where (None when it parses)."""
    if not isinstance(text, str):
        return f"the message is a {type(text).__name__}, not text"
    if len(text) > 100_000:
        return "the message is longer than 100,000 characters"
    body, pos = _body(text), 0
    if parse(text) is not None:
        return None
    for pattern, message in _STEPS:
        m = pattern.match(body, pos)
        if m is None:
            if body.startswith("{3:", pos):
                return (f"block 3 at character {pos} must be '{{3:' + fields like "
                        "'{121:uetr}' + '}'")
            return f"{message} (at character {pos}: {body[pos:pos + 20]!r})"
        pos = m.end()
    end = body.find("\n-}", pos - 1)
    if end < 0:
        return "block 4 is not closed: its last line must be '-}'"
    first = body[pos:end].split("\n")[0]
    if not _FIELD.fullmatch(first):
        return f"line 1 of block 4 must be a field ':tag:value', got {first[:30]!r}"
    rest = body[end + 3:]
    return (f"unexpected text after block 4 (character {end + 3}): {rest[:30]!r}; only "
            "blocks {5:...} and {S:...} may follow")


def parties(msg: Message) -> tuple[str | None, str | None]:
    """Sender and receiver BIC11 from the headers (input or output form of block 2)."""
    b1 = BLOCK1.fullmatch(msg.block1)
    b2in, b2out = BLOCK2_IN.fullmatch(msg.block2), BLOCK2_OUT.fullmatch(msg.block2)
    first = b1.group(1) + b1.group(2) if b1 else None
    if b2in:
        return first, b2in.group(1) + b2in.group(2)
    if b2out:  # output form: block 1 is the receiver, the MIR in block 2 names the sender
        return b2out.group(1) + b2out.group(2), first
    return first, None


def uetr(msg: Message) -> str | None:
    """The {121:} value of block 3, if any."""
    m = re.search(r"\{121:([^{}]*)\}", msg.block3 or "")
    return m.group(1) if m else None


def service_type(msg: Message) -> str | None:
    """The {111:} service type identifier of block 3 ("001": SWIFT gpi), if any."""
    m = re.search(r"\{111:([^{}]*)\}", msg.block3 or "")
    return m.group(1) if m else None


def valid_uetr(value: str) -> bool:
    """True for a UETR FIN accepts in {121:}: a lower-case UUID version 4."""
    return UETR_RE.fullmatch(value) is not None
