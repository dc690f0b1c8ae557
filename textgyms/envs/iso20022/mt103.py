"""A strict MT103 validator (own code), and the one import for reading and checking MT103s.

:func:`parse` (from :mod:`mtparse`) splits a message into its blocks and block-4 fields, or
returns None when it is not an MT message at all (the verifier then scores 0).
:func:`validate` checks what SWIFT's network validation checks: block headers, tag order and
repetition, field formats (lines x characters, option letters, the subfields of option F)
and the X character set (here), and the network validated rules of MT103 (:mod:`network`).
Each problem is an :class:`Issue` with a SWIFT-style code; those of this module:

=====  =========================================================================
H01    basic header (block 1) malformed        H02  application header malformed
U01    block 3 missing or without a valid {121:UETR}
T13    tag unknown, out of order or misplaced   T14  non-repeatable tag repeated
T15    mandatory field missing; 13C sign       T26  20: starts/ends with "/" or has "//"
T16    13C time offset out of range            T38  13C malformed or time not HHMM
T27    BIC malformed                           T32  character outside the X set, or a
                                                    line starting with ":" or "-"
T33    line too long                           T34  too many lines / empty field; an
                                                    /account line that is not the first
T36    code not allowed (23B, 71A)             T40  amount/rate without exactly one ","
T43    amount or number malformed or too long  T47  23E: unknown code or bad subfield
T50    invalid date                            T52  invalid currency code
T56    option F structure (numbered lines)     C03  more decimals than the currency has
D97    23E: additional information not allowed for this code
=====  =========================================================================

The network rules and their codes (C81, D49-D98, E01-E46) are listed in :mod:`network`.
"""

from __future__ import annotations

import datetime
import re

from textgyms.envs.iso20022.charset import X_CHARS
from textgyms.envs.iso20022.currencies import MINOR_UNITS, minor_units
from textgyms.envs.iso20022.mtparse import (
    BIC_RE,
    BLOCK1,
    BLOCK2_IN,
    BLOCK2_OUT,
    OPTIONS,
    ORDER,
    TIME_13C,
    UETR_RE,
    Issue,
    Message,
    base_tag,
    parse,
    parse_error,
    parties,
    service_type,
    uetr,
    valid_uetr,
)
from textgyms.envs.iso20022.network import check_network
from textgyms.envs.iso20022.translate import INFO_23E, ORDER_23E

REPEATABLE = frozenset({"13C", "23E", "71F"})
MANDATORY = ("20", "23B", "32A", "50", "59", "71A")
CODES_23B = ("CRED", "CRTS", "SPAY", "SPRI", "SSTD")


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
    # In block 4 a line starting with ":" opens a field and one starting with "-" ends the
    # block, so no line of a field's text may start with either (the first line starts
    # after the tag and is checked as well: ":70::..." is the same ambiguity).
    for n, line in enumerate(lines, 1):
        if line[:1] in (":", "-"):
            out.append(Issue("T32", tag, f"line {n} must not start with {line[0]!r}"))
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
    # The format is [/34x] then 4*35x: the optional account comes first, and a later line
    # starting with "/" would be read as a misplaced account.
    for n, line in enumerate(lines[1:], 2):
        if line.startswith("/"):
            out.append(Issue("T34", tag, f"line {n} starts with '/': the /account line must "
                             "be the first"))
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
    if not BLOCK1.fullmatch(msg.block1):
        out.append(Issue("H01", "block 1", "expected F01 + 12-character LT address + 10 digits"))
    if not (BLOCK2_IN.fullmatch(msg.block2) or BLOCK2_OUT.fullmatch(msg.block2)):
        out.append(Issue("H02", "block 2", "expected I103 + 12-character address [+ priority]"))
    value = uetr(msg)
    if value is None or not UETR_RE.fullmatch(value):
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


# Callers read and check MT103s through this module: the parser's names are re-exported.
__all__ = ["BIC_RE", "TIME_13C", "Issue", "Message", "base_tag", "check_field",
           "check_network", "check_structure", "parse", "parse_error", "parties",
           "service_type", "uetr", "valid_uetr", "validate", "validate_text"]
