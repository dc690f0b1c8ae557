"""The network validated rules of MT103 (own code): the rules FIN checks across fields, on
top of each field's format (:mod:`mt103`). Each broken rule is an :class:`Issue` with SWIFT's
error code:

C1 D75 (33B/36), C2 D49 (33B between EU-list countries), C3 E01/E02 (23B vs 23E), C4 E06 (55a
needs 53a and 54a), C5 C81 (56a needs 57a), C6 E16/E17 (23B vs 56a), C7 E13/D50/E15 (71A vs
71F/71G), C8 D51 (71F/71G need 33B), C9 C02 (71G currency), C10 E44 (TELI/PHOI need 56a), C11
E45 (TELE/PHON need 57a), C12 E18 (CHQB: no 59a account), C13 E10 (59a account with
SPRI/SSTD/SPAY), E03/E05/E07/E09 (options of 53a/54a/55a/57a with SPRI/SSTD/SPAY; E09 also a
57D without its party identifier), E04 (53B without its party identifier with
SPRI/SSTD/SPAY); 23E: D67 (forbidden code pairs), E46 (a code repeated), D98 (order).
"""

from __future__ import annotations

from textgyms.envs.iso20022.mtparse import Issue, Message, base_tag, parties
from textgyms.envs.iso20022.translate import EU_RULE, ORDER_23E

# Pairs of 23E codes that must not appear together (error D67).
EXCLUSIVE_23E = frozenset(frozenset(p.split()) for p in (
    "SDVA HOLD", "SDVA CHQB", "INTC HOLD", "INTC CHQB", "REPA HOLD", "REPA CHQB", "REPA CORT",
    "CORT HOLD", "CORT CHQB", "HOLD CHQB", "PHOB TELB", "PHON TELE", "PHOI TELI"))


def _ccy(msg: Message, tag: str) -> str | None:
    values = msg.get(tag)
    return values[0][6:9] if tag == "32A" and values else (values[0][:3] if values else None)


def check_network(msg: Message) -> list[Issue]:
    """Every network validated rule of MT103 (see the module docstring) ``msg`` breaks."""
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
