"""A strict MT103 parser and validator (own code).

:func:`parse` splits a message into its blocks and block-4 fields, or returns None when it
is not an MT message at all (the verifier then scores 0). :func:`validate` checks what SWIFT's
network validation checks: block headers, tag order and repetition, field formats (lines x
characters, option letters, the subfields of option F), the X character set, and the network
validated rules C1-C9 of MT103. Each problem is an :class:`Issue` with a SWIFT-style code:

=====  =========================================================================
H01    basic header (block 1) malformed        H02  application header malformed
U01    block 3 missing or without a valid {121:UETR}
T13    tag unknown, out of order or misplaced   T14  non-repeatable tag repeated
T15    mandatory field missing; 13C sign       T26  20: starts/ends with "/" or has "//"
T16    13C time offset out of range            T38  13C malformed or time not HHMM
T27    BIC malformed                           T32  character outside the X set
T33    line too long                           T34  too many lines / empty field
T36    code not allowed (23B, 71A)             T40  amount/rate without exactly one ","
T43    amount or number malformed or too long  T47  23E: unknown code or bad subfield
T50    invalid date                            T52  invalid currency code
T56    option F structure (numbered lines)     C03  more decimals than the currency has
D97    23E: additional information not allowed for this code
D98    23E: codes out of the prescribed order
=====  =========================================================================

Network validated rules: C1 D75 (33B/36), C2 D49 (33B between EU-list countries), C3 E01/E02
(23B vs 23E), C4 E06 (55a needs 53a and 54a), C5 C81 (56a needs 57a), C6 E16/E17 (23B vs
56a), C7 E13/D50/E15 (71A vs 71F/71G), C8 D51 (71F/71G need 33B), C9 C02 (71G currency), C10 E44
(TELI/PHOI need 56a), C11 E45 (TELE/PHON need 57a), C12 E18 (CHQB: no 59a account), C13 E10
(59a account with SPRI/SSTD/SPAY), E03/E05/E07/E09 (options of 53a/54a/55a/57a with
SPRI/SSTD/SPAY; E09 also a 57D without its party identifier), E04 (53B without its party
identifier with SPRI/SSTD/SPAY); 23E: D67 (forbidden code pairs), E46 (a code repeated), D98
(order).
"""

from __future__ import annotations

import datetime
import re
from typing import NamedTuple

from textgyms.envs.iso20022.charset import X_CHARS
from textgyms.envs.iso20022.currencies import MINOR_UNITS, minor_units
from textgyms.envs.iso20022.translate import EU_RULE, INFO_23E, ORDER_23E

BIC_RE = re.compile(r"[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?")
_MESSAGE = re.compile(
    r"\{1:([^{}]*)\}\{2:([^{}]*)\}(\{3:((?:\{[^{}]*\})*)\})?\{4:\n(.*?)\n-\}(\{5:(?:\{[^{}]*\})*\})?",
    re.S,
)
_FIELD = re.compile(r":(\d\d[A-Z]?):(.*)")
_B1 = re.compile(r"F01([A-Z0-9]{8})[A-Z0-9]([A-Z0-9]{3})\d{10}")
_B2_IN = re.compile(r"I103([A-Z0-9]{8})[A-Z0-9]([A-Z0-9]{3})(?:[UNS](?:[123](?:\d{3})?)?)?")
_B2_OUT = re.compile(r"O103\d{4}\d{6}([A-Z0-9]{8})[A-Z0-9]([A-Z0-9]{3})\d{10}\d{6}\d{4}[UNS]?")
# 13C: /code/ + time HHMM + sign + offset HHMM (the offset hours 00-13); the codes the
# translation rules map (CLSTIME, RNCTIME, SNDTIME) with valid values only.
TIME_13C = re.compile(r"/(CLSTIME|RNCTIME|SNDTIME)/([01]\d|2[0-3])([0-5]\d)([+-])"
                      r"(0\d|1[0-3])([0-5]\d)")
_UETR = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
# Pairs of 23E codes that must not appear together (error D67).
EXCLUSIVE_23E = frozenset(frozenset(p.split()) for p in (
    "SDVA HOLD", "SDVA CHQB", "INTC HOLD", "INTC CHQB", "REPA HOLD", "REPA CHQB", "REPA CORT",
    "CORT HOLD", "CORT CHQB", "HOLD CHQB", "PHOB TELB", "PHON TELE", "PHOI TELI"))
# Block-4 tags of MT103 in their prescribed order; the value is the base tag (option group).
ORDER = ("20", "13C", "23B", "23E", "26T", "32A", "33B", "36", "50", "51A", "52", "53", "54",
         "55", "56", "57", "59", "70", "71A", "71F", "71G", "72", "77B", "77T")
OPTIONS = {"50": "AFK", "52": "AD", "53": "ABD", "54": "ABD", "55": "ABD", "56": "ACD",
           "57": "ABCD", "59": "AF "}
REPEATABLE = frozenset({"13C", "23E", "71F"})
MANDATORY = ("20", "23B", "32A", "50", "59", "71A")
CODES_23B = ("CRED", "CRTS", "SPAY", "SPRI", "SSTD")


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


def parse(text: str) -> Message | None:
    """The blocks and fields of an MT103, or None if ``text`` is not an MT message.

    CRLF and LF are both accepted; surrounding whitespace and one code fence are ignored.
    """
    if not isinstance(text, str) or len(text) > 100_000:
        return None
    body = text.replace("\r\n", "\n").strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0].strip()
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


def parties(msg: Message) -> tuple[str | None, str | None]:
    """Sender and receiver BIC11 from the headers (input or output form of block 2)."""
    b1 = _B1.fullmatch(msg.block1)
    b2in, b2out = _B2_IN.fullmatch(msg.block2), _B2_OUT.fullmatch(msg.block2)
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
    return _UETR.fullmatch(value) is not None


# --- field formats --------------------------------------------------------------------------


def _lines(tag: str, value: str, max_lines: int, width: int) -> list[Issue]:
    """Line count, line width and the X character set of a free-text field."""
    lines = value.split("\n")
    out = []
    if not value.strip() or len(lines) > max_lines:
        out.append(Issue("T34", tag, f"needs 1 to {max_lines} lines, got {len(lines)}"))
    for line in lines:
        if len(line) > width:
            out.append(Issue("T33", tag, f"line longer than {width}: {line[:40]!r}"))
        bad = sorted({c for c in line if c not in X_CHARS})
        if bad:
            out.append(Issue("T32", tag, f"characters outside the X set: {''.join(bad)[:10]!r}"))
    return out


def _amount(tag: str, text: str) -> list[Issue]:
    """A ``15d`` amount of currency ``text[:3]``."""
    ccy, amt = text[:3], text[3:]
    out = [] if ccy in MINOR_UNITS else [Issue("T52", tag, f"unknown currency {ccy!r}")]
    if amt.count(",") != 1:
        return out + [Issue("T40", tag, "the amount needs exactly one decimal comma")]
    if not re.fullmatch(r"\d[\d,]{0,14}", amt):
        return out + [Issue("T43", tag, f"malformed amount {amt[:20]!r}")]
    if ccy in MINOR_UNITS and len(amt.split(",")[1]) > minor_units(ccy):
        out.append(Issue("C03", tag, f"{ccy} allows {minor_units(ccy)} decimals"))
    return out


def _bic_lines(tag: str, value: str, account_re: str = r"/(?:[CD]/)?[^\n]{1,34}") -> list[Issue]:
    """Option A: an optional account line, then a BIC."""
    lines = value.split("\n")
    out = _lines(tag, value, 2, 35)
    if len(lines) == 2 and not re.fullmatch(account_re, lines[0]):
        out.append(Issue("T34", tag, "the first of two lines must be /account"))
    if not BIC_RE.fullmatch(lines[-1]):
        out.append(Issue("T27", tag, f"not a BIC: {lines[-1][:20]!r}"))
    return out


def _option_f(tag: str, value: str, max_n: int) -> list[Issue]:
    """50F/59F: a party identifier (50F) or optional account (59F), then n/33x lines."""
    lines = value.split("\n")
    out = _lines(tag, value, 5, 35)
    numbered = lines[1:] if lines[0].startswith("/") or tag == "50F" else lines
    if tag == "50F" and not re.fullmatch(r"/[^\n]{1,34}|[A-Z]{4}/[A-Z]{2}/[^\n]{1,27}", lines[0]):
        out.append(Issue("T56", tag, "line 1 must be /account or a code/country/identifier"))
    nums = []
    for line in numbered:
        m = re.fullmatch(rf"([1-{max_n}])/(.{{1,33}})", line)
        if m is None:
            out.append(Issue("T56", tag, f"line must be n/text (n=1..{max_n}): {line[:30]!r}"))
            continue
        nums.append(m.group(1))
        if m.group(1) == "3" and not re.fullmatch(r"[A-Z]{2}(/.+)?", m.group(2)):
            out.append(Issue("T56", tag, "a 3/ line starts with the country code: 3/CC/town"))
    if nums and (nums[0] != "1" or nums != sorted(nums)):
        out.append(Issue("T56", tag, "numbered lines start with 1/ and are in ascending order"))
    if "2" in nums and "3" not in nums:
        out.append(Issue("T56", tag, "a 2/ address line must be followed by a 3/ line"))
    return out


def _option_c(tag: str, value: str) -> list[Issue]:
    """Option C: one party-identifier line, /34x."""
    out = _lines(tag, value, 1, 35)
    if not re.fullmatch(r"/[^\n]{1,34}", value):
        out.append(Issue("T34", tag, "option C is one line /34x (for example //FW021000021)"))
    return out


def _option_d(tag: str, value: str) -> list[Issue]:
    """Option D: an optional /party-identifier line, then 1 to 4 lines of name and address
    (the layout of 50K/59, which must also have a name after the identifier)."""
    out = _party_k(tag, value)
    if value.startswith("/") and "\n" not in value:
        out.append(Issue("T34", tag, "option D needs a name and address after the identifier"))
    return out


def _party_k(tag: str, value: str) -> list[Issue]:
    """50K/59: optional /account line, then up to 4 lines of 35x."""
    lines = value.split("\n")
    has_acct = lines[0].startswith("/")
    out = _lines(tag, value, 5 if has_acct else 4, 35)
    if has_acct and len(lines[0]) > 35:
        out.append(Issue("T33", tag, "account line longer than /34x"))
    return out


def _date(tag: str, yymmdd: str) -> list[Issue]:
    try:
        datetime.datetime.strptime(yymmdd, "%y%m%d")
    except ValueError:
        return [Issue("T50", tag, f"invalid date {yymmdd!r}")]
    return []


def _check_20(tag: str, value: str) -> list[Issue]:
    out = _lines(tag, value, 1, 16)
    if value.startswith("/") or value.endswith("/") or "//" in value:
        out.append(Issue("T26", tag, "must not start or end with '/' or contain '//'"))
    return out


def _check_code(tag: str, value: str) -> list[Issue]:
    """23B and 71A: one code from a fixed list."""
    allowed = CODES_23B if tag == "23B" else ("BEN", "OUR", "SHA")
    return [] if value in allowed else [Issue("T36", tag, f"code must be one of {allowed}")]


def _check_23e(tag: str, value: str) -> list[Issue]:
    m = re.fullmatch(r"([A-Z]{4})(/[^\n]{1,30})?", value)
    if m is None or m.group(1) not in ORDER_23E:
        return [Issue("T47", tag, f"not a valid instruction code: {value[:20]!r}")]
    if m.group(2) and m.group(1) not in INFO_23E:
        return [Issue("D97", tag, f"{m.group(1)} takes no additional information")]
    return _lines(tag, value, 1, 35)


def _check_32a(tag: str, value: str) -> list[Issue]:
    if not re.fullmatch(r"\d{6}[A-Z]{3}[^\n]+", value):
        return [Issue("T43", tag, "format is YYMMDD + currency + amount")]
    return _date(tag, value[:6]) + _amount(tag, value[6:])


def _check_ccy_amount(tag: str, value: str) -> list[Issue]:
    """33B, 71F, 71G: currency + amount."""
    if not re.fullmatch(r"[A-Z]{3}[^\n]+", value):
        return [Issue("T43", tag, "format is currency + amount")]
    return _amount(tag, value)


def _check_13c(tag: str, value: str) -> list[Issue]:
    """13C: /8c/4!n1!x4!n, code, time indication, sign and time offset. The code list
    (CLSTIME, RNCTIME, SNDTIME) is one that "may be used": FIN does not reject others."""
    m = re.fullmatch(r"/([A-Z0-9]{1,8})/(\d{4})(.)(\d{4})", value)
    if m is None:
        return [Issue("T38", tag, "format is /CODE/HHMM+HHMM (code: 1-8 letters or digits)")]
    out, time, offset = [], m.group(2), m.group(4)
    if time[:2] > "23" or time[2:] > "59":
        out.append(Issue("T38", tag, f"time indication {time!r} is not a valid HHMM"))
    if m.group(3) not in "+-":
        out.append(Issue("T15", tag, "the sign is + or -"))
    if offset[:2] > "13" or offset[2:] > "59":
        out.append(Issue("T16", tag, f"time offset {offset!r}: hours 00-13, minutes 00-59"))
    return out


def _check_36(tag: str, value: str) -> list[Issue]:
    if value.count(",") != 1:
        return [Issue("T40", tag, "the rate needs exactly one decimal comma")]
    ok = re.fullmatch(r"\d[\d,]{0,11}", value) and value.strip("0,")
    return [] if ok else [Issue("T43", tag, f"malformed rate {value[:20]!r}")]


_CHECKS = {
    "20": _check_20,
    "23B": _check_code,
    "71A": _check_code,
    "23E": _check_23e,
    "32A": _check_32a,
    "33B": _check_ccy_amount,
    "71F": _check_ccy_amount,
    "71G": _check_ccy_amount,
    "36": _check_36,
    "13C": _check_13c,
    "50F": lambda tag, value: _option_f(tag, value, 8),
    "59F": lambda tag, value: _option_f(tag, value, 3),
    "50K": _party_k,
    "59": _party_k,
    "70": lambda tag, value: _lines(tag, value, 4, 35),
    "72": lambda tag, value: _lines(tag, value, 6, 35),
    "77B": lambda tag, value: _lines(tag, value, 3, 35),
    **dict.fromkeys(("56C", "57C"), lambda tag, value: _option_c(tag, value)),
    **dict.fromkeys(("52D", "53D", "54D", "55D", "56D", "57D"), lambda tag, value: _option_d(
        tag, value)),
    **dict.fromkeys(("50A", "59A", "52A", "53A", "54A", "55A", "56A", "57A"), _bic_lines),
}


def check_field(tag: str, value: str) -> list[Issue]:
    """Format problems of one block-4 field (other options: the generic 4*35x)."""
    check = _CHECKS.get(tag)
    return check(tag, value) if check else _lines(tag, value, 4, 35)


def check_structure(msg: Message) -> list[Issue]:
    """Headers, block 3, tag order, repetition and mandatory fields."""
    out = []
    if not _B1.fullmatch(msg.block1):
        out.append(Issue("H01", "block 1", "expected F01 + 12-character LT address + 10 digits"))
    if not (_B2_IN.fullmatch(msg.block2) or _B2_OUT.fullmatch(msg.block2)):
        out.append(Issue("H02", "block 2", "expected I103 + 12-character address [+ priority]"))
    value = uetr(msg)
    if value is None or not _UETR.fullmatch(value):
        out.append(Issue("U01", "block 3", "{3:{121:UETR}} with a lowercase UUIDv4 is required"))
    rank, seen = -1, set()
    for tag, _ in msg.fields:
        base = base_tag(tag)
        opt = tag[2:] or " "
        if base not in ORDER or (base in OPTIONS and opt not in OPTIONS[base]):
            out.append(Issue("T13", tag, "not a field (or option) of MT103"))
            continue
        if ORDER.index(base) < rank:
            out.append(Issue("T13", tag, "field out of order"))
        if base in seen and base not in REPEATABLE:
            out.append(Issue("T14", tag, "field must not be repeated"))
        rank, seen = max(rank, ORDER.index(base)), seen | {base}
    out += [Issue("T15", t, "mandatory field missing") for t in MANDATORY if t not in seen]
    return out


def _ccy(msg: Message, tag: str) -> str | None:
    values = msg.get(tag)
    return values[0][6:9] if tag == "32A" and values else (values[0][:3] if values else None)


def check_network(msg: Message) -> list[Issue]:
    """The network validated rules C1-C9 of MT103."""
    out, has = [], {base_tag(t) for t, _ in msg.fields}
    ccy32, ccy33 = _ccy(msg, "32A"), _ccy(msg, "33B")
    if ccy33 and ccy32 and (ccy33 != ccy32) != ("36" in has):
        out.append(Issue("D75", "36", "36 is required iff 33B's currency differs from 32A's"))
    sender, receiver = parties(msg)
    if sender and receiver and {sender[4:6], receiver[4:6]} <= EU_RULE and "33B" not in has:
        out.append(Issue("D49", "33B", "33B is mandatory between EU-list countries"))
    b23 = (msg.get("23B") or [""])[0]
    codes = [v[:4] for v in msg.get("23E")]
    if b23 == "SPRI" and set(codes) - {"SDVA", "TELB", "PHOB", "INTC"}:
        out.append(Issue("E01", "23E", "with 23B SPRI only SDVA, TELB, PHOB, INTC"))
    if b23 in ("SSTD", "SPAY") and codes:
        out.append(Issue("E02", "23E", f"23E is not allowed with 23B {b23}"))
    if "55" in has and not {"53", "54"} <= has:
        out.append(Issue("E06", "55a", "55a requires both 53a and 54a"))
    if "56" in has and "57" not in has:
        out.append(Issue("C81", "57a", "57a is mandatory when 56a is present"))
    opt56 = (msg.first("56") or ("56A", ""))[0][2:]
    if "56" in has and b23 == "SPRI":
        out.append(Issue("E16", "56a", "56a is not allowed with 23B SPRI"))
    if "56" in has and b23 in ("SSTD", "SPAY") and opt56 not in ("A", "C"):
        out.append(Issue("E17", "56a", "only 56A or 56C with 23B SSTD/SPAY"))
    out += _charges_rules(msg, has, ccy32) + _codes_rules(msg, has, codes)
    return out + _service_rules(msg, b23)


def _codes_rules(msg: Message, has: set[str], codes: list[str]) -> list[Issue]:
    """23E: order (D98), repetition (E46), forbidden pairs (D67), the agents some codes
    need (E44, E45) and CHQB with a beneficiary account (E18)."""
    out = []
    idx = [ORDER_23E.index(c) for c in codes if c in ORDER_23E]
    if idx != sorted(idx):
        out.append(Issue("D98", "23E", f"codes must follow the order {', '.join(ORDER_23E)}"))
    if len(set(codes)) != len(codes):
        out.append(Issue("E46", "23E", "the same code must not be present more than once"))
    pairs = {frozenset((a, b)) for a in codes for b in codes if a != b}
    for pair in sorted(pairs & EXCLUSIVE_23E, key=sorted):
        out.append(Issue("D67", "23E", f"codes {' and '.join(sorted(pair))} exclude each other"))
    if {"TELI", "PHOI"} & set(codes) and "56" not in has:
        out.append(Issue("E44", "23E", "TELI or PHOI require 56a"))
    if {"TELE", "PHON"} & set(codes) and "57" not in has:
        out.append(Issue("E45", "23E", "TELE or PHON require 57a"))
    ben = msg.first("59")
    if "CHQB" in codes and ben and ben[1].startswith("/"):
        out.append(Issue("E18", "59a", "with 23E CHQB the beneficiary has no account line"))
    return out


def _service_rules(msg: Message, b23: str) -> list[Issue]:
    """Options of 53a/54a/55a/57a and the 59a account with 23B SPRI, SSTD or SPAY."""
    if b23 not in ("SPRI", "SSTD", "SPAY"):
        return []
    out, opts = [], {base_tag(t): t[2:] for t, _ in msg.fields}
    if opts.get("53") == "D":
        out.append(Issue("E03", "53a", f"option D is not allowed with 23B {b23}"))
    if opts.get("53") == "B" and not (msg.first("53") or ("", ""))[1].startswith("/"):
        out.append(Issue("E04", "53B", f"the party identifier is mandatory with 23B {b23}"))
    for base, code in (("54", "E05"), ("55", "E07")):
        if opts.get(base, "A") != "A":
            out.append(Issue(code, f"{base}a", f"only option A with 23B {b23}"))
    if opts.get("57", "A") not in ("A", "C", "D"):
        out.append(Issue("E09", "57a", f"only options A, C or D with 23B {b23}"))
    if opts.get("57") == "D" and not (msg.first("57") or ("", ""))[1].startswith("/"):
        out.append(Issue("E09", "57D", f"option D needs its party identifier with 23B {b23}"))
    ben = msg.first("59")
    if ben and not ben[1].startswith("/"):
        out.append(Issue("E10", "59a", f"the beneficiary account is mandatory with 23B {b23}"))
    return out


def _charges_rules(msg: Message, has: set[str], ccy32: str | None) -> list[Issue]:
    """C7 (71A vs 71F/71G), C8 (33B with charges) and C9 (71G currency)."""
    out, code = [], (msg.get("71A") or [""])[0]
    if code == "OUR" and "71F" in has:
        out.append(Issue("E13", "71F", "71F is not allowed with 71A OUR"))
    if code in ("SHA", "BEN") and "71G" in has:
        out.append(Issue("D50", "71G", f"71G is not allowed with 71A {code}"))
    if code == "BEN" and "71F" not in has:
        out.append(Issue("E15", "71F", "71A BEN requires at least one 71F"))
    if ("71F" in has or "71G" in has) and "33B" not in has:
        out.append(Issue("D51", "33B", "33B is mandatory when 71F or 71G is present"))
    ccy71 = _ccy(msg, "71G")
    if ccy71 and ccy32 and ccy71 != ccy32:
        out.append(Issue("C02", "71G", "71G must be in the currency of 32A"))
    return out


def validate(msg: Message) -> list[Issue]:
    """Every format and network-rule problem of a parsed message (empty when valid)."""
    out = check_structure(msg)
    for tag, value in msg.fields:
        out += check_field(tag, value)
    return out + check_network(msg)


def validate_text(text: str) -> list[Issue] | None:
    """:func:`validate` of ``text``, or None when it does not parse as an MT message."""
    msg = parse(text)
    return None if msg is None else validate(msg)
