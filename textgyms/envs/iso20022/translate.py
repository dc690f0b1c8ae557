"""The reference translator: pacs.008.001.08 (CBPR+) -> SWIFT MT103, own code.

It implements the core CBPR+ MX -> MT mapping, with the choices the public rules leave open
fixed as stated in :data:`textgyms.envs.iso20022.rulecard.RULE_CARD` (the same text the agent
is shown). :func:`translate` is total on the messages :mod:`generate` writes and on any
pacs.008 with the mandatory elements; it raises ``ValueError`` on XML that is not one.
"""

from __future__ import annotations

import unicodedata
import xml.etree.ElementTree as ET
from decimal import Decimal
from functools import cache

from textgyms.envs.iso20022.currencies import mt_amount, mt_decimal

NS = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"
X_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ ")
# Letters NFKD does not decompose into a base letter and a mark.
SPECIAL = {"ß": "ss", "Ø": "O", "ø": "o", "Ł": "L", "ł": "l", "Æ": "AE", "æ": "ae",
           "Œ": "OE", "œ": "oe", "Đ": "D", "đ": "d", "ı": "i", "Þ": "TH", "þ": "th"}
EU_RULE = frozenset(
    "AD AT BE BG BV CH CY CZ DE DK EE ES FI FR GB GF GI GP GR HR HU IE IS IT LI LT LU LV MC "
    "MQ MT NL NO PL PM PT RE RO SE SI SJ SK SM TF VA".split()
)
SVC_23E = {"SDVA": "SDVA"}
CTGY_23E = {"INTC": "INTC", "CORT": "CORT"}
NEXT_23E = {"PHOA": "PHON", "TELA": "TELE"}
ORDER_23E = ("SDVA", "INTC", "REPA", "CORT", "HOLD", "CHQB", "PHOB", "TELB", "PHON", "TELE",
             "PHOI", "TELI")
CHARGES_71A = {"SHAR": "SHA", "DEBT": "OUR", "CRED": "BEN", "SLEV": "SHA"}


@cache
def q(path: str) -> str:
    """An ElementTree path with every step in the pacs.008 namespace."""
    return "/".join(f"{{{NS}}}{step}" for step in path.split("/"))


def clean(value: str) -> str:
    """``value`` in the SWIFT X character set: accents dropped, a few letters spelled out,
    every other character outside X replaced by ".", whitespace runs collapsed."""
    out = []
    for ch in unicodedata.normalize("NFKD", value):
        if ch in X_CHARS:
            out.append(ch)
        elif ch in SPECIAL:
            out.append(SPECIAL[ch])
        elif ch.isspace():
            out.append(" ")
        elif not unicodedata.combining(ch):
            out.append(".")
    return " ".join("".join(out).split())


def fit(value: str, width: int) -> str:
    """``value`` cut to ``width`` characters, the last one replaced by "+" when cut."""
    return value if len(value) <= width else value[: width - 1] + "+"


def safe_line(line: str) -> str:
    """A continuation line may not start with ":" or "-" (it would read as a new field or
    the end of the block): that first character becomes "."."""
    return "." + line[1:] if line[:1] in (":", "-") else line


def chunks(value: str, width: int, max_lines: int, first: str = "", cont: str = "") -> list[str]:
    """``value`` cut into lines of ``width`` (the first prefixed by ``first``, the others by
    ``cont``); beyond ``max_lines`` the last kept line ends with "+"."""
    lines, rest = [], value
    while rest:
        prefix = first if not lines else cont
        take = width - len(prefix)
        lines.append(prefix + rest[:take])
        rest = rest[take:]
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + [lines[max_lines - 1][: width - 1] + "+"]
    return [safe_line(line) for line in lines]


def bic11(bic: str) -> str:
    """A BIC in its 11-character form (head office: branch "XXX")."""
    return bic if len(bic) == 11 else bic + "XXX"


def _text(node: ET.Element | None, path: str) -> str | None:
    if node is None:
        return None
    found = node.find(q(path))
    return None if found is None or found.text is None else found.text.strip()


def _bic(node: ET.Element, path: str) -> str | None:
    return _text(node, f"{path}/FinInstnId/BICFI")


def document(xml: str) -> ET.Element:
    """The pacs.008 ``Document`` element of ``xml`` (bare, or inside an envelope)."""
    try:
        root = ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from exc
    if root.tag == f"{{{NS}}}Document":
        return root
    doc = root.find(f".//{{{NS}}}Document")
    if doc is None:
        raise ValueError("no pacs.008.001.08 Document element found")
    return doc


def header(sender: str, receiver: str, uetr: str | None) -> str:
    """Blocks 1-3 in the input form: LT addresses are BIC8 + LT code + branch."""
    s, r = bic11(sender), bic11(receiver)
    b3 = f"{{3:{{121:{uetr}}}}}" if uetr else ""
    return f"{{1:F01{s[:8]}A{s[8:]}0000000000}}{{2:I103{r[:8]}X{r[8:]}N}}{b3}"


def party_lines(party: ET.Element | None, acct: str | None) -> tuple[str, list[str]]:
    """Option letter ("A", "F" or "" for K/no letter) and lines of a 50a/59a party."""
    first = [f"/{acct}"] if acct else []
    anybic = _text(party, "Id/OrgId/AnyBIC")
    if anybic:
        return "A", first + [anybic]
    name = clean(_text(party, "Nm") or "")
    town, ctry = _text(party, "PstlAdr/TwnNm"), _text(party, "PstlAdr/Ctry")
    if town and ctry:  # structured address: option F, numbered lines of 1!n/33x
        lines = [f"1/{fit(name, 33)}"]
        street = " ".join(filter(None, (_text(party, "PstlAdr/StrtNm"),
                                        _text(party, "PstlAdr/BldgNb"))))
        if street:
            lines.append(f"2/{fit(clean(street), 33)}")
        place = " ".join(filter(None, (_text(party, "PstlAdr/PstCd"), town)))
        lines.append(f"3/{ctry}/{fit(clean(place), 30)}")
        return "F", first + lines
    lines = [fit(name, 35)] if name else []
    adr = [clean(a.text or "") for a in party.findall(q("PstlAdr/AdrLine"))] if party else []
    adr = [a for a in adr if a]
    if len(adr) > 3:
        adr = adr[:2] + [adr[2][:34] + "+"]
    lines += [fit(a, 35) for a in adr]
    return "", first + [safe_line(line) for line in lines]


def _account(tx: ET.Element, path: str) -> str | None:
    return _text(tx, f"{path}/Id/IBAN") or _text(tx, f"{path}/Id/Othr/Id")


def codes_23e(tx: ET.Element) -> list[str]:
    """23E instruction codes (with /info where the pacs.008 gives one), in SWIFT order."""
    codes: dict[str, str] = {}
    svc, ctgy = _text(tx, "PmtTpInf/SvcLvl/Cd"), _text(tx, "PmtTpInf/CtgyPurp/Cd")
    if svc in SVC_23E:
        codes[SVC_23E[svc]] = ""
    if ctgy in CTGY_23E:
        codes[CTGY_23E[ctgy]] = ""
    for ins in tx.findall(q("InstrForCdtrAgt")):
        code, info = _text(ins, "Cd"), _text(ins, "InstrInf")
        if code in ORDER_23E:
            codes[code] = f"/{fit(clean(info), 30)}" if info else ""
    for ins in tx.findall(q("InstrForNxtAgt")):
        code = _text(ins, "Cd")
        if code in NEXT_23E:
            codes[NEXT_23E[code]] = ""
    return [c + codes[c] for c in ORDER_23E if c in codes]


def field_70(tx: ET.Element) -> list[str]:
    """/ROC/ + end-to-end id on line 1, then the remittance text in 35-character pieces."""
    e2e = _text(tx, "PmtId/EndToEndId")
    lines = [fit("/ROC/" + clean(e2e), 35)] if e2e and e2e != "NOTPROVIDED" else []
    ustrd = clean(" ".join(u.text or "" for u in tx.findall(q("RmtInf/Ustrd"))))
    lines += chunks(ustrd, 35, 99)
    if len(lines) > 4:
        lines = lines[:3] + [lines[3][:34] + "+"]
    return lines


def field_72(tx: ET.Element) -> list[str]:
    """/INS/ previous instructing agent, /INTA/ second intermediary, /REC/ next-agent text."""
    lines = []
    prev, intrmy2 = _bic(tx, "PrvsInstgAgt1"), _bic(tx, "IntrmyAgt2")
    if prev:
        lines.append(f"/INS/{prev}")
    if intrmy2:
        lines.append(f"/INTA/{intrmy2}")
    for ins in tx.findall(q("InstrForNxtAgt")):
        info = _text(ins, "InstrInf")
        if info and not _text(ins, "Cd"):
            lines += chunks(clean(info), 35, 99, "/REC/", "//")
    if len(lines) > 6:
        lines = lines[:5] + [lines[5][:34] + "+"]
    return lines


def field_77b(tx: ET.Element) -> list[str]:
    """/ORDERRES/ (DEBT, BOTH) or /BENEFRES/ (CRED) + country + // + code, then the
    details text as // continuation lines; 3 lines at most."""
    reg = tx.find(q("RgltryRptg"))
    if reg is None:
        return []
    word = "BENEFRES" if _text(reg, "DbtCdtRptgInd") == "CRED" else "ORDERRES"
    ctry, code = _text(reg, "Dtls/Ctry") or "", _text(reg, "Dtls/Cd") or ""
    lines = [fit(f"/{word}/{ctry}//{clean(code)}", 35)]
    info = clean(" ".join(i.text or "" for i in reg.findall(q("Dtls/Inf"))))
    lines += chunks(info, 35, 99, "//", "//")
    if len(lines) > 3:
        lines = lines[:2] + [lines[2][:34] + "+"]
    return lines


def _amount(node: ET.Element | None) -> tuple[str, Decimal] | None:
    if node is None or node.text is None:
        return None
    return node.get("Ccy", ""), Decimal(node.text.strip())


def amount_fields(tx: ET.Element, sender: str, receiver: str) -> list[tuple[str, list[str]]]:
    """32A, 33B and 36: settlement, instructed amount (or the EU-rule copy) and rate."""
    ccy, amt = _amount(tx.find(q("IntrBkSttlmAmt")))
    date = (_text(tx, "IntrBkSttlmDt") or "").replace("-", "")[2:]
    out = [("32A", [f"{date}{ccy}{mt_amount(amt, ccy)}"])]
    instd = _amount(tx.find(q("InstdAmt")))
    if instd is None and {sender[4:6], receiver[4:6]} <= EU_RULE:
        instd = (ccy, amt)  # network rule C2: 33B is mandatory between EU-list countries
    if instd is not None:
        out.append(("33B", [f"{instd[0]}{mt_amount(instd[1], instd[0])}"]))
        rate = _text(tx, "XchgRate")
        if instd[0] != ccy and rate:
            out.append(("36", [mt_decimal(Decimal(rate))]))
    return out


def charge_fields(tx: ET.Element, ccy: str) -> list[tuple[str, list[str]]]:
    """71A from the charge bearer; ChrgsInf to 71F (SHA, BEN) or to one summed 71G (OUR)."""
    code = CHARGES_71A.get(_text(tx, "ChrgBr") or "SHAR", "SHA")
    out = [("71A", [code])]
    charges = [_amount(c.find(q("Amt"))) for c in tx.findall(q("ChrgsInf"))]
    if code == "OUR":
        total = sum((a for c, a in charges if c == ccy), Decimal(0))
        if total:
            out.append(("71G", [f"{ccy}{mt_amount(total, ccy)}"]))
    else:
        out += [("71F", [f"{c}{mt_amount(a, c)}"]) for c, a in charges]
    return out


def agent_fields(tx: ET.Element, gh: ET.Element, sender: str, receiver: str) -> list:
    """52A (debtor agent other than the sender), 53A/54A (reimbursement agents), 56A
    (intermediary 1) and 57A (creditor agent other than the receiver, or after 56A)."""
    out = []
    dbtr_agt, cdtr_agt = _bic(tx, "DbtrAgt"), _bic(tx, "CdtrAgt")
    if dbtr_agt and bic11(dbtr_agt) != bic11(sender):
        out.append(("52A", [dbtr_agt]))
    for tag, path in (("53A", "SttlmInf/InstgRmbrsmntAgt"), ("54A", "SttlmInf/InstdRmbrsmntAgt")):
        bic = _bic(gh, path)
        if bic:
            out.append((tag, [bic]))
    intrmy = _bic(tx, "IntrmyAgt1")
    if intrmy:
        out.append(("56A", [intrmy]))
    if cdtr_agt and (intrmy or bic11(cdtr_agt) != bic11(receiver)):
        out.append(("57A", [cdtr_agt]))
    return out


def translate(pacs008_xml: str) -> str:
    """The MT103 (blocks 1-4, LF line ends) equivalent to a pacs.008.001.08 message."""
    doc = document(pacs008_xml)
    tx = doc.find(q("FIToFICstmrCdtTrf/CdtTrfTxInf"))
    gh = doc.find(q("FIToFICstmrCdtTrf/GrpHdr"))
    if tx is None or gh is None:
        raise ValueError("the Document has no GrpHdr or CdtTrfTxInf")
    sender = _bic(tx, "InstgAgt") or _bic(gh, "InstgAgt") or _bic(tx, "DbtrAgt")
    receiver = _bic(tx, "InstdAgt") or _bic(gh, "InstdAgt") or _bic(tx, "CdtrAgt")
    ref = _text(tx, "PmtId/InstrId") or _text(tx, "PmtId/TxId") or "NONREF"
    fields = [("20", [fit(clean(ref), 16)]), ("23B", ["CRED"])]
    fields += [("23E", [c]) for c in codes_23e(tx)]
    amounts = amount_fields(tx, sender, receiver)
    fields += amounts
    opt, lines = party_lines(tx.find(q("Dbtr")), _account(tx, "DbtrAcct"))
    fields.append(("50" + (opt or "K"), lines))
    fields += agent_fields(tx, gh, sender, receiver)
    opt, lines = party_lines(tx.find(q("Cdtr")), _account(tx, "CdtrAcct"))
    fields.append(("59" + opt, lines))
    for tag, lines in (("70", field_70(tx)),):
        if lines:
            fields.append((tag, lines))
    fields += charge_fields(tx, amounts[0][1][0][6:9])
    fields += [(t, ls) for t, ls in (("72", field_72(tx)), ("77B", field_77b(tx))) if ls]
    body = "\n".join(f":{tag}:" + "\n".join(lines) for tag, lines in fields)
    return f"{header(sender, receiver, _text(tx, 'PmtId/UETR'))}{{4:\n{body}\n-}}"
