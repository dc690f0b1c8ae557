"""The ordering customer's identification in 50F, both ways (own code).

SWIFT MT103 field 50F (option F, the "party identifier" format) carries, besides the name
(1/), address (2/) and country and town (3/): on line 1 either "/account" or a party
identifier "CODE/country/identifier" (codes ARNU alien registration, CCPT passport, CUST
customer number, DRLC driving licence, EMPL employer number, NIDN national identity, SOSE
social security, TXID tax number), "/NOTPROVIDED" when there is neither, and the numbered
lines 4/ date of birth (YYYYMMDD), 5/ place of birth (country/town), 6/ customer
identification (country/issuer/number), 7/ national identity number (country/number) and 8/
the rest of an identifier that did not fit its line. The pacs.008 holds them in ``Dbtr/Id``:
``PrvtId/DtAndPlcOfBirth`` (BirthDt, CityOfBirth, CtryOfBirth) and ``PrvtId/Othr`` or
``OrgId/Othr`` (Id, SchmeNm/Cd = the code, Issr = the country, or country/issuer).

The translation rules behind this (the CBPR+ MT <-> MX mapping of 50F): the identifier's
code is the scheme name, the part before its last "/" the issuer, the part after it the
identification; 4/ and 5/ are the date and place of birth; 6/ is scheme CUST and 7/ NIDN.
Codes that only persons have (or any identifier next to 4/ and 5/) go to ``PrvtId``, a CUST,
EMPL or TXID of a party without them to ``OrgId``. In the other direction the first
identifier becomes line 1 when there is no account; with an account, CUST and NIDN become 6/
and 7/ and an identifier of another scheme has no line (a translation loss).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from textgyms.envs.iso20022.mx import find, findall
from textgyms.envs.iso20022.mx import text as node_text
from textgyms.envs.iso20022.xmlbuild import el, text

CODES_50F = ("ARNU", "CCPT", "CUST", "DRLC", "EMPL", "NIDN", "SOSE", "TXID")
ORG_CODES = ("CUST", "EMPL", "TXID")
NOT_PROVIDED = "/NOTPROVIDED"
IDENTIFIER = re.compile(r"(ARNU|CCPT|CUST|DRLC|EMPL|NIDN|SOSE|TXID)/([A-Z]{2}(?:/.*)?)/([^/]+)")


def split_identifier(line: str) -> tuple[str, str, str] | None:
    """(code, issuer, identification) of a "CODE/CC[/issuer]/identification" line."""
    m = IDENTIFIER.fullmatch(line.strip())
    return (m.group(1), m.group(2), m.group(3)) if m else None


def _othr(code: str, issuer: str, ident: str) -> str:
    return el("Othr", text("Id", ident[:35]), el("SchmeNm", text("Cd", code)),
              text("Issr", issuer[:35]))


def id_xml(line1: str | None, parts: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """The ``Id`` element of a Dbtr from 50F's line 1 (when it is an identifier) and its
    numbered ``parts`` ("4" -> ["19800101"]...), and what could not be carried."""
    others: list[tuple[str, str, str]] = []
    lost: list[str] = []
    first = split_identifier(line1) if line1 else None
    if first:
        others.append(first)
    for n, code in (("6", "CUST"), ("7", "NIDN")):
        for value in parts.get(n, []):
            issuer, _, ident = value.rpartition("/")
            if issuer and ident:
                others.append((code, issuer, ident))
            else:
                lost.append(f"50F {n}/{value}")
    if parts.get("8") and others:  # 8/ continues the last identifier
        code, issuer, ident = others[-1]
        others[-1] = (code, issuer, ident + "".join(parts["8"]))
    birth = _birth(parts, lost)
    if not others and not birth:
        return [], lost
    person = birth or any(c not in ORG_CODES for c, _, _ in others)
    kind = "PrvtId" if person else "OrgId"
    return [el("Id", el(kind, *birth, *(_othr(*o) for o in others)))], lost


def _birth(parts: dict[str, list[str]], lost: list[str]) -> list[str]:
    """DtAndPlcOfBirth from 4/ (YYYYMMDD) and 5/ (CC/town); the XSD wants all three."""
    day, place = (parts.get("4") or [""])[0], (parts.get("5") or [""])[0]
    m = re.fullmatch(r"(\d{4})(\d\d)(\d\d)", day)
    where = re.fullmatch(r"([A-Z]{2})/(.+)", place)
    if m and where:
        return [el("DtAndPlcOfBirth", text("BirthDt", f"{m.group(1)}-{m.group(2)}-{m.group(3)}"),
                   text("CityOfBirth", where.group(2)[:35]), text("CtryOfBirth", where.group(1)))]
    lost += [f"50F {n}/{v}" for n, v in (("4", day), ("5", place)) if v]
    return []


def identifiers(party: ET.Element | None) -> list[tuple[str, str, str]]:
    """(code, issuer, identification) of every 50F-code ``Othr`` of a party's Id."""
    if party is None:
        return []
    out = []
    for othr in findall(party, "Id/PrvtId/Othr") + findall(party, "Id/OrgId/Othr"):
        code, ident = node_text(othr, "SchmeNm/Cd"), node_text(othr, "Id")
        issuer = node_text(othr, "Issr") or ""
        if code in CODES_50F and ident and re.fullmatch(r"[A-Z]{2}(/.*)?", issuer):
            out.append((code, issuer, ident))
    return out


def has_identification(party: ET.Element | None) -> bool:
    """True when a party has what only 50F can carry (identifiers, birth data)."""
    return bool(identifiers(party)) or (
        party is not None and find(party, "Id/PrvtId/DtAndPlcOfBirth") is not None)


def _cut(line: str, eights: list[str]) -> str:
    """A line of at most 35 characters; the rest of a longer one goes to ``eights`` as 8/
    lines (numbered lines ascend, so they come last)."""
    rest = line[35:]
    eights += ["8/" + rest[i:i + 33] for i in range(0, len(rest), 33)]
    return line[:35]


def id_lines(party: ET.Element | None, has_account: bool) -> tuple[str | None, list[str],
                                                                  list[str]]:
    """50F's line 1 when it is no account (the first identifier, else /NOTPROVIDED; None
    with an account), its 4/ to 8/ lines, and the identifiers 50F has no line for."""
    ids, lines, eights, lost = identifiers(party), [], [], []
    first = None
    if not has_account:
        first = NOT_PROVIDED
        if ids:
            first = _cut("/".join(ids.pop(0)), eights)
    birth = find(party, "Id/PrvtId/DtAndPlcOfBirth") if party is not None else None
    if birth is not None:
        day = (node_text(birth, "BirthDt") or "").replace("-", "")
        lines += [f"4/{day}", f"5/{node_text(birth, 'CtryOfBirth')}/"
                  f"{node_text(birth, 'CityOfBirth')}"[:35]]
    for code, issuer, ident in ids:
        if code in ("CUST", "NIDN"):
            lines.append(_cut(f"{'6' if code == 'CUST' else '7'}/{issuer}/{ident}", eights))
        else:
            lost.append(f"Id/Othr/{code}")
    return first, lines + eights, lost
