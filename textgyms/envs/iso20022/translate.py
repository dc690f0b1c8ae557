"""The reference translator: pacs.008.001.08-.13 (CBPR+) -> SWIFT MT103, own code.

It implements the CBPR+ MX -> MT mapping, with the choices the public rules leave open fixed
as stated in :data:`textgyms.envs.iso20022.rulecard.RULE_CARD` (the same text the agent is
shown). :func:`translate` is total on the messages :mod:`generate` writes and on any pacs.008
of a supported version with the mandatory elements; it raises ``ValueError`` on XML that is
not one. :func:`translate_with_losses` also names what the MT103 cannot carry.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from decimal import Decimal

from textgyms.envs.iso20022.charset import (
    NotCbprError,
    chunks,
    clean,
    fit,
    placeholder_only,
    safe_line,
)
from textgyms.envs.iso20022.currencies import mt_amount, mt_decimal
from textgyms.envs.iso20022.identifiers import has_identification, id_lines, identifiers
from textgyms.envs.iso20022.mx import Loaded, find, findall, load, text

EU_RULE = frozenset(
    "AD AT BE BG BV CH CY CZ DE DK EE ES FI FR GB GF GI GP GR HR HU IE IS IT LI LT LU LV MC "
    "MQ MT NL NO PL PM PT RE RO SE SI SJ SK SM TF VA".split()
)
SVC_23E = {"SDVA": "SDVA"}
CTGY_23E = {"INTC": "INTC", "CORT": "CORT"}
NEXT_23E = {"PHOA": "PHON", "TELA": "TELE"}
ORDER_23E = ("SDVA", "INTC", "REPA", "CORT", "HOLD", "CHQB", "PHOB", "TELB", "PHON", "TELE",
             "PHOI", "TELI")
INFO_23E = frozenset({"HOLD", "PHOB", "TELB", "PHON", "TELE", "PHOI", "TELI", "REPA"})
# 23E codes with no ISO 20022 instruction code: the MT -> MX translation keeps them, with
# their information, as "/CODE/info" in InstrForNxtAgt/InstrInf, and this reads them back.
KEPT_23E = re.compile(r"/(REPA|PHOI|TELI)/(.{0,30})", re.S)
CHARGES_71A = {"SHAR": "SHA", "DEBT": "OUR", "CRED": "BEN", "SLEV": "SHA"}
# ISO clearing system ids -> the MT party-identifier codes of 52a/56a/57a ("//FW...").
CLEARING = {"USABA": "FW", "USPID": "CP", "GBDSC": "SC", "IENCC": "IE", "CACPA": "CC",
            "AUBSB": "AU", "DEBLZ": "BL", "ATBLZ": "AT", "CHBCC": "SW", "CHSIC": "SW",
            "ITNCC": "IT", "ESNCC": "ES", "PTNCC": "PT", "GRBIC": "GR", "HKNCC": "HK",
            "INFSC": "IN", "NZNCC": "NZ", "PLKNR": "PL", "RUCBC": "RU", "ZANCC": "ZA",
            "CNAPS": "CN"}
# Elements of a transaction the MT103 has no place for (reported, never dropped silently):
# the ultimate parties, the initiating party and tax have no MT103 field, and /INTA/ in 72
# has no room for the second intermediary's account.
UNCARRIED = ("UltmtDbtr", "UltmtCdtr", "InitgPty", "IntrmyAgt3", "Tax", "RltdRmtInf",
             "PrvsInstgAgt2", "PrvsInstgAgt3", "SplmtryData", "IntrmyAgt2Acct")
# The translation losses of field 70's cuts (see :func:`field_70`).
RMT_CUT = "RmtInf (beyond field 70's 4*35x: cut, '+')"
ROC_CUT = "PmtId/EndToEndId (beyond the 35 characters of the 70 /ROC/ line: cut, '+')"
# 13C codes and the pacs.008 times they carry, in the order of the message.
TIMES_13C = (("SNDTIME", "SttlmTmIndctn/DbtDtTm"), ("RNCTIME", "SttlmTmIndctn/CdtDtTm"),
             ("CLSTIME", "SttlmTmReq/CLSTm"))
_ISO_TIME = re.compile(r"(?:^|T)(\d\d):(\d\d):\d\d(?:\.\d+)?(Z|[+-]\d\d:\d\d)?$")
_TYPE_26T = re.compile(r"[A-Z0-9]{3}")
_CODE_72 = re.compile(r"/[A-Z0-9]{1,8}/")


def bic11(bic: str) -> str:
    """A BIC in its 11-character form (head office: branch "XXX")."""
    return bic if len(bic) == 11 else bic + "XXX"


def _bic(node: ET.Element | None, path: str) -> str | None:
    return text(node, f"{path}/FinInstnId/BICFI")


def header(sender: str, receiver: str, uetr: str | None, gpi: bool = False) -> str:
    """Blocks 1-3 in the input form: LT addresses are BIC8 + LT code + branch. ``gpi`` (the
    service level G001) adds the service type identifier {111:001}, which block 3 puts
    before the {121:} it needs."""
    s, r = bic11(sender), bic11(receiver)
    b3 = f"{{3:{'{111:001}' if gpi else ''}{{121:{uetr}}}}}" if uetr else ""
    return f"{{1:F01{s[:8]}A{s[8:]}0000000000}}{{2:I103{r[:8]}X{r[8:]}N}}{b3}"


def address_lines(adr: ET.Element | None) -> list[str]:
    """Unstructured lines of a postal address (AdrLine, else street/town built up)."""
    if adr is None:
        return []
    lines = [clean(a.text or "") for a in adr.findall("AdrLine")]
    return [a for a in lines if a]


def party_name(party: ET.Element | None) -> str:
    """The X-set name of a party. A name with no letter or digit once cleaned (only
    symbols outside X, which become dots) is refused: dots are no name, and a reference
    made of them would score a dotted answer as faithful."""
    raw = text(party, "Nm") or ""
    name = clean(raw)
    if placeholder_only(name):
        raise NotCbprError(f"the party name {raw[:60]!r} has no Latin letter or digit: CBPR+ "
                           "names are Latin-script text, and dots would not name the party")
    return name


def party_lines(party: ET.Element | None, acct: str | None,
                debtor: bool = False) -> tuple[str, list[str]]:
    """Option letter ("A", "F" or "" for K/no letter) and lines of a 50a/59a party. A
    debtor with identifiers or birth data (which only 50F can carry) is 50F too; a 50F
    without an account starts with its party identifier, else /NOTPROVIDED (the line is
    mandatory; see :mod:`identifiers`)."""
    first = [f"/{acct}"] if acct else []
    anybic = text(party, "Id/OrgId/AnyBIC")
    if anybic:
        return "A", first + [anybic]
    name = party_name(party)
    town, ctry = text(party, "PstlAdr/TwnNm"), text(party, "PstlAdr/Ctry")
    if (town and ctry) or (debtor and has_identification(party)):
        return "F", option_f(party, acct, debtor)[0]
    lines = [fit(name, 35)] if name else []
    adr = address_lines(party.find("PstlAdr") if party is not None else None)
    if len(adr) > 3:
        adr = adr[:2] + [adr[2][:34] + "+"]
    elif ctry and len(adr) < 3 and ctry not in adr[-1:]:
        # A country next to unstructured lines: its code on the last line, if there is room.
        adr.append(ctry)
    lines += [fit(a, 35) for a in adr]
    return "", first + [safe_line(line) for line in lines]


def option_f(party: ET.Element, acct: str | None, debtor: bool) -> tuple[list[str], list[str]]:
    """50F/59F lines (a structured or hybrid address, or a debtor's identification) and
    the identification lines the 5 lines of the field leave no room for: line 1 (account,
    else a debtor's party identifier or /NOTPROVIDED), 1/ name, up to two 2/ address lines,
    3/ country and town, then 4/-8/ (see :mod:`identifiers`) while there is room."""
    line1, numbered, lost = id_lines(party, acct is not None) if debtor else (None, [], [])
    lines = [f"/{acct}"] if acct else ([line1] if line1 else [])
    lines.append(f"1/{fit(party_name(party), 33)}")
    ctry, town = text(party, "PstlAdr/Ctry"), text(party, "PstlAdr/TwnNm")
    if ctry:
        street = " ".join(filter(None, (text(party, "PstlAdr/StrtNm"),
                                        text(party, "PstlAdr/BldgNb"))))
        extra = address_lines(party.find("PstlAdr"))  # hybrid: AdrLine next to the town
        for line in (([clean(street)] if street else []) + extra)[:2]:
            lines.append(f"2/{fit(line, 33)}")
        place = " ".join(filter(None, (text(party, "PstlAdr/PstCd"), town)))
        lines.append(f"3/{ctry}/{fit(clean(place), 30)}" if place else f"3/{ctry}")
    room = 5 - len(lines)
    if len(numbered) > room:  # keep 4/ with its 5/: both or neither
        keep = numbered[:room]
        if keep and keep[-1].startswith("4/"):
            keep = keep[:-1]
        lost += [f"Id ({n[:2]} line)" for n in numbered[len(keep):]]
        numbered = keep
    return lines + numbered, lost


def party_losses(tx: ET.Element) -> list[str]:
    """Identification of the parties that 50a/59a have no line for: a creditor's
    identifiers (59F has none); a debtor's that are not a 50F code with a country issuer,
    or beyond what 50F carries (see :func:`identifiers.id_lines`), or next to a BIC (50A
    names the BIC only); and the lines of a 50F address without a country."""
    out = []
    cdtr, dbtr = tx.find("Cdtr"), tx.find("Dbtr")
    if cdtr is not None and (find(cdtr, "Id/PrvtId") is not None
                             or find(cdtr, "Id/OrgId/Othr") is not None):
        out.append("Cdtr/Id")
    if dbtr is None:
        return out
    others = findall(dbtr, "Id/PrvtId/Othr") + findall(dbtr, "Id/OrgId/Othr")
    if text(dbtr, "Id/OrgId/AnyBIC"):
        return out + (["Dbtr/Id/Othr"] if others or has_identification(dbtr) else [])
    if len(identifiers(dbtr)) < len(others):
        out.append("Dbtr/Id/Othr")
    if has_identification(dbtr):
        out += ["Dbtr/" + x for x in option_f(dbtr, _account(tx, "DbtrAcct"), True)[1]]
        if not text(dbtr, "PstlAdr/Ctry") and address_lines(dbtr.find("PstlAdr")):
            out.append("Dbtr/PstlAdr/AdrLine")
    return out


def field_26t(tx: ET.Element) -> list[str]:
    """26T from Purp/Prtry when it is a 3-character transaction type code (26T is 3!c; the
    4-letter ISO purpose codes of Purp/Cd do not fit it and are reported as lost)."""
    prtry = text(tx, "Purp/Prtry")
    return [prtry] if prtry and _TYPE_26T.fullmatch(prtry) else []


def unnamed_agents(gh: ET.Element | None, tx: ET.Element) -> list[str]:
    """The instructing and instructed agents given without a BIC (CBPR+ requires one): the
    MT103 header names banks by BIC only, so what identifies such an agent (a name, a
    clearing member id) has no place; the sender or receiver is then the header's Fr/To or
    the next agent with a BIC (see :func:`translate_with_losses`)."""
    return [f"{scope}{role}" for node, scope in ((gh, "GrpHdr/"), (tx, ""))
            if node is not None for role in ("InstgAgt", "InstdAgt")
            if node.find(role) is not None and _bic(node, role) is None]


def losses(tx: ET.Element, gh: ET.Element | None = None) -> list[str]:
    """The elements of ``tx`` (and its group header ``gh``) no MT103 field carries:
    :data:`UNCARRIED`, a purpose that is not a 26T code, the country of a 50K/59 party whose
    lines leave it no room, and instructing/instructed agents without a BIC."""
    out = [name for name in UNCARRIED if tx.find(name) is not None]
    if tx.find("Purp") is not None and not field_26t(tx):
        out.append("Purp")
    # 13C has codes for the CLS time and the central-bank debit/credit times only.
    out += [f"SttlmTmReq/{t}" for t in ("TillTm", "FrTm", "RjctTm")
            if find(tx, f"SttlmTmReq/{t}") is not None]
    out += [path for code, path in TIMES_13C
            if find(tx, path) is not None and _time_13c(code, text(tx, path)) is None]
    for role in ("Dbtr", "Cdtr"):
        party, ctry = tx.find(role), text(tx, f"{role}/PstlAdr/Ctry")
        option, lines = party_lines(party, None, role == "Dbtr")
        if ctry and option == "" and ctry not in lines[-1:]:
            out.append(f"{role}/PstlAdr/Ctry")
    return out + party_losses(tx) + unnamed_agents(gh, tx)


def _account(tx: ET.Element, path: str) -> str | None:
    return text(tx, f"{path}/Id/IBAN") or text(tx, f"{path}/Id/Othr/Id")


def clearing_line(fin: ET.Element | None) -> str | None:
    """"//" + MT clearing code + member id of a ClrSysMmbId (None when absent/unmapped)."""
    code, member = text(fin, "ClrSysMmbId/ClrSysId/Cd"), text(fin, "ClrSysMmbId/MmbId")
    if member and code in CLEARING:
        return fit(f"//{CLEARING[code]}{clean(member)}", 35)
    return None


def agent_option(agt: ET.Element | None, options: str,
                 acct: str | None = None) -> tuple[str, list[str]] | None:
    """Option and lines of an agent field: A (BIC, after an optional //clearing line),
    C (clearing line only) or D (clearing line, then name and address, 4 lines). The
    party-identifier line is the clearing code, else "/" + the agent's account ``acct``."""
    fin = agt.find("FinInstnId") if agt is not None else None
    if fin is None:
        return None
    bic, code, name = text(fin, "BICFI"), clearing_line(fin), text(fin, "Nm")
    code = code or (fit("/" + clean(acct), 35) if acct else None)
    first = [code] if code else []
    if bic:
        return "A", first + [bic]
    if name and "D" in options:
        adr = address_lines(fin.find("PstlAdr"))
        town = " ".join(filter(None, (text(fin, "PstlAdr/PstCd"), text(fin, "PstlAdr/TwnNm"))))
        ctry = text(fin, "PstlAdr/Ctry")
        if not adr and town:
            adr = [clean(f"{town} {ctry or ''}".strip())]
        return "D", first + [safe_line(fit(v, 35)) for v in [clean(name)] + adr][:4]
    if code and "C" in options:
        return "C", [code]
    return None


def service_levels(tx: ET.Element) -> list[str]:
    """The codes of every PmtTpInf/SvcLvl."""
    return [c.text.strip() for c in findall(tx, "PmtTpInf/SvcLvl/Cd") if c.text]


def _time_13c(code: str, value: str | None) -> str | None:
    """One 13C value from an ISO time or date-time; None without a UTC offset the 13C
    can hold (hours 00-13), since 13C has no place for a time of unknown zone."""
    m = _ISO_TIME.search(value or "")
    if m is None or (m.group(3) and m.group(3) != "Z" and m.group(3)[1:3] > "13"):
        return None
    offset = "+0000" if m.group(3) == "Z" else (m.group(3) or "").replace(":", "")
    return f"/{code}/{m.group(1)}{m.group(2)}{offset}" if offset else None


def field_13c(tx: ET.Element) -> list[str]:
    """13C time indications: SttlmTmIndctn/DbtDtTm -> /SNDTIME/, CdtDtTm -> /RNCTIME/,
    SttlmTmReq/CLSTm -> /CLSTIME/, time and UTC offset as given."""
    found = (_time_13c(code, text(tx, path)) for code, path in TIMES_13C)
    return [v for v in found if v]


def codes_23e(tx: ET.Element) -> tuple[list[str], list[str]]:
    """23E instruction codes (with /info where the code takes one), in SWIFT order, and the
    creditor-agent texts that 23E cannot carry (they go to 72 as /ACC/)."""
    codes: dict[str, str] = {}
    to_72: list[str] = []
    ctgy = text(tx, "PmtTpInf/CtgyPurp/Cd")
    for svc in service_levels(tx):  # SvcLvl repeats (G001 and SDVA may come together)
        if svc in SVC_23E:
            codes[SVC_23E[svc]] = ""
    if ctgy in CTGY_23E:
        codes[CTGY_23E[ctgy]] = ""
    for ins in tx.findall("InstrForCdtrAgt"):
        code, info = text(ins, "Cd"), text(ins, "InstrInf")
        if code in ORDER_23E:
            codes[code] = f"/{fit(clean(info), 30)}" if info and code in INFO_23E else ""
        if info and (code not in INFO_23E):
            to_72.append(clean(info))
    for ins in tx.findall("InstrForNxtAgt"):
        code, info = text(ins, "Cd"), text(ins, "InstrInf")
        coded = KEPT_23E.fullmatch(info or "") if not code else None
        if code in NEXT_23E:  # PHON/TELE keep their additional information
            codes[NEXT_23E[code]] = f"/{fit(clean(info), 30)}" if info else ""
        elif coded:  # a 23E code with no ISO code, kept as "/CODE/info" (see reverse)
            codes[coded.group(1)] = f"/{fit(clean(coded.group(2)), 30)}" if coded.group(
                2) else ""
    return [c + codes[c] for c in ORDER_23E if c in codes], to_72


def remittance_codes(tx: ET.Element) -> list[str]:
    """Structured remittance as 70 codes: /INV/ invoice number, /RFB/ creditor reference."""
    out = []
    for strd in findall(tx, "RmtInf/Strd"):
        for doc in strd.findall("RfrdDocInf"):
            if text(doc, "Tp/CdOrPrtry/Cd") == "CINV" and text(doc, "Nb"):
                out.append("/INV/" + clean(text(doc, "Nb") or ""))
        ref = text(strd, "CdtrRefInf/Ref")
        if ref:
            out.append("/RFB/" + clean(ref))
    return out


def field_70(tx: ET.Element) -> tuple[list[str], list[str]]:
    """/ROC/ + end-to-end id on line 1, then structured codes, then the text (Ustrd, or the
    AddtlRmtInf of structured remittance) in 35-character pieces; at most 4 lines. Also
    what the cuts dropped: field 70 is 4*35x, so what does not fit is cut, its last kept
    character a "+" (the SWIFT translation practice), and named as a translation loss."""
    e2e = text(tx, "PmtId/EndToEndId")
    roc = "/ROC/" + clean(e2e or "")
    lines = [fit(roc, 35)] if e2e and e2e != "NOTPROVIDED" else []
    lost = [ROC_CUT] if lines and len(roc) > 35 else []
    lines += [fit(c, 35) for c in remittance_codes(tx)]
    # The text: Ustrd, or the AddtlRmtInf next to structured references.
    texts = findall(tx, "RmtInf/Ustrd") + findall(tx, "RmtInf/Strd/AddtlRmtInf")
    ustrd = clean(" ".join(u.text or "" for u in texts))
    lines += chunks(ustrd, 35, 99)
    if len(lines) > 4:
        lines = lines[:3] + [lines[3][:34] + "+"]
        lost.append(RMT_CUT)
    return lines, lost


def _code_prefix(info: str, default: str) -> tuple[str, str]:
    """(first-line prefix, continuation prefix) of a 72 text: a text that already starts
    with a 72 code ("/BNF/...", as an MT -> MX translation leaves it) keeps it as is."""
    return ("", "//") if _CODE_72.match(info) else (default, "//")


def field_72(tx: ET.Element, to_acc: list[str]) -> list[str]:
    """/INS/ previous instructing agent, /INTA/ second intermediary (each its BIC, else its
    name), /ACC/ creditor-agent
    text 23E cannot carry, /REC/ next-agent text; at most 6 lines."""
    lines = []
    for code, role in (("INS", "PrvsInstgAgt1"), ("INTA", "IntrmyAgt2")):
        bic, name = _bic(tx, role), text(tx, f"{role}/FinInstnId/Nm")
        if bic:
            lines.append(f"/{code}/{bic}")
        elif name:  # an agent named in words (real messages do): the name, "//" continued
            lines += chunks(clean(name), 35, 99, f"/{code}/", "//")
    for info in to_acc:
        lines += chunks(info, 35, 99, *_code_prefix(info, "/ACC/"))
    for ins in tx.findall("InstrForNxtAgt"):
        info = text(ins, "InstrInf")
        if info and not text(ins, "Cd") and not KEPT_23E.fullmatch(info):
            lines += chunks(clean(info), 35, 99, *_code_prefix(info, "/REC/"))
    if len(lines) > 6:
        lines = lines[:5] + [lines[5][:34] + "+"]
    return lines


def field_77b(tx: ET.Element) -> list[str]:
    """/ORDERRES/ (DEBT, BOTH) or /BENEFRES/ (CRED) + country + // + code, then the
    details text as // continuation lines; 3 lines at most."""
    reg = tx.find("RgltryRptg")
    if reg is None:
        return []
    word = "BENEFRES" if text(reg, "DbtCdtRptgInd") == "CRED" else "ORDERRES"
    ctry, code = text(reg, "Dtls/Ctry") or "", text(reg, "Dtls/Cd") or ""
    lines = [fit(f"/{word}/{ctry}//{clean(code)}", 35)]
    info = clean(" ".join(i.text or "" for i in findall(reg, "Dtls/Inf")))
    lines += chunks(info, 35, 99, "//", "//")
    if len(lines) > 3:
        lines = lines[:2] + [lines[2][:34] + "+"]
    return lines


def _amount(node: ET.Element | None) -> tuple[str, Decimal] | None:
    if node is None or node.text is None:
        return None
    return node.get("Ccy", ""), Decimal(node.text.strip())


def charges(tx: ET.Element) -> tuple[str, list[tuple[str, Decimal]]]:
    """The 71A code and the ChrgsInf amounts."""
    code = CHARGES_71A.get(text(tx, "ChrgBr") or "SHAR", "SHA")
    found = [_amount(c.find("Amt")) for c in tx.findall("ChrgsInf")]
    return code, [a for a in found if a is not None]


def amount_fields(tx: ET.Element, gh: ET.Element, sender: str,
                  receiver: str) -> list[tuple[str, list[str]]]:
    """32A, 33B and 36. The value date is IntrBkSttlmDt (else the creation date). 33B is
    InstdAmt; without one it is still required between EU-list countries (rule C2) and
    whenever 71F/71G is present (C8): then 32A plus the charges deducted (71F) or minus the
    charges added (71G). 36 is XchgRate, else (33B in another currency) 32A / 33B."""
    ccy, amt = _amount(tx.find("IntrBkSttlmAmt"))
    day = text(tx, "IntrBkSttlmDt") or (text(gh, "CreDtTm") or "")[:10]
    date = day.replace("-", "")[2:]
    out = [("32A", [f"{date}{ccy}{mt_amount(amt, ccy)}"])]
    instd = _amount(tx.find("InstdAmt"))
    code, fees = charges(tx)
    if instd is None and (fees or code == "BEN" or {sender[4:6], receiver[4:6]} <= EU_RULE):
        same = sum((a for c, a in fees if c == ccy), Decimal(0))
        instd = (ccy, amt - same if code == "OUR" else amt + same)
    if instd is not None:
        out.append(("33B", [f"{instd[0]}{mt_amount(instd[1], instd[0])}"]))
        rate = text(tx, "XchgRate")
        if instd[0] != ccy and instd[1]:
            value = Decimal(rate) if rate else round(amt / instd[1], 10)
            out.append(("36", [mt_decimal(value)]))
    return out


def charge_fields(tx: ET.Element, ccy: str) -> list[tuple[str, list[str]]]:
    """71A from the charge bearer; ChrgsInf to 71F (SHA, BEN) or to one summed 71G (OUR).
    BEN needs a 71F (rule E15): with no ChrgsInf it is 71F of zero in the 32A currency."""
    code, fees = charges(tx)
    out = [("71A", [code])]
    if code == "OUR":
        total = sum((a for c, a in fees if c == ccy), Decimal(0))
        if total:
            out.append(("71G", [f"{ccy}{mt_amount(total, ccy)}"]))
    else:
        out += [("71F", [f"{c}{mt_amount(a, c)}"]) for c, a in fees]
        if code == "BEN" and not fees:
            out.append(("71F", [f"{ccy}{mt_amount(Decimal(0), ccy)}"]))
    return out


def agent_fields(tx: ET.Element, gh: ET.Element, sender: str, receiver: str) -> list:
    """52a (debtor agent other than the sender, or with its account), 53A/54A (reimbursement
    agents) or 53B (SttlmAcct, the account between sender and receiver), 56a (intermediary 1)
    and 57a (creditor agent other than the receiver, with its account, or after 56a)."""
    out = []
    dbtr_acct, cdtr_acct = _account(tx, "DbtrAgtAcct"), _account(tx, "CdtrAgtAcct")
    dbtr = agent_option(tx.find("DbtrAgt"), "AD", dbtr_acct)
    if dbtr and (dbtr_acct or not (dbtr[0] == "A" and bic11(dbtr[1][-1]) == bic11(sender))):
        out.append(("52" + dbtr[0], dbtr[1]))
    for tag, path in (("53A", "SttlmInf/InstgRmbrsmntAgt"), ("54A", "SttlmInf/InstdRmbrsmntAgt")):
        bic = _bic(gh, path)
        if bic:
            out.append((tag, [bic]))
    acct = _account(gh, "SttlmInf/SttlmAcct")
    if acct and not any(tag == "53A" for tag, _ in out):  # the account to settle over: 53B
        out.insert(len(out) - sum(t == "54A" for t, _ in out), ("53B", [f"/{acct}"]))
    intrmy = agent_option(tx.find("IntrmyAgt1"), "ACD", _account(tx, "IntrmyAgt1Acct"))
    if intrmy:
        out.append(("56" + intrmy[0], intrmy[1]))
    cdtr = agent_option(tx.find("CdtrAgt"), "ACD", cdtr_acct)
    if cdtr and (intrmy or cdtr_acct
                 or not (cdtr[0] == "A" and bic11(cdtr[1][-1]) == bic11(receiver))):
        out.append(("57" + cdtr[0], cdtr[1]))
    return out


def _transaction(loaded: Loaded) -> tuple[ET.Element, ET.Element, str, str]:
    """The one transaction of a pacs.008, its group header, and the MT sender and receiver:
    the header's Fr/To, else the instructing/instructed agents, else the debtor/creditor
    agents. Raises ``ValueError`` for what no MT103 can be made of."""
    txs = findall(loaded.doc, "FIToFICstmrCdtTrf/CdtTrfTxInf")
    gh = find(loaded.doc, "FIToFICstmrCdtTrf/GrpHdr")
    if not txs or gh is None:
        raise ValueError("the Document has no GrpHdr or CdtTrfTxInf")
    if len(txs) > 1:  # translating the first alone would drop the others silently
        raise ValueError(f"the pacs.008 holds {len(txs)} transactions (CdtTrfTxInf); an MT103 "
                         "carries one (CBPR+ allows one per message): split it first")
    tx = txs[0]
    sender = (loaded.head_from or _bic(tx, "InstgAgt") or _bic(gh, "InstgAgt")
              or _bic(tx, "DbtrAgt") or "")
    receiver = (loaded.head_to or _bic(tx, "InstdAgt") or _bic(gh, "InstdAgt")
                or _bic(tx, "CdtrAgt") or "")
    if not sender or not receiver:
        raise ValueError("no sender or receiver BIC (AppHdr Fr/To or InstgAgt/InstdAgt)")
    return tx, gh, sender, receiver


def translate_with_losses(pacs008_xml: str) -> tuple[str, list[str]]:
    """The MT103 (blocks 1-4, LF line ends) of a pacs.008 and the names of the elements of
    the message that no MT103 field carries."""
    loaded = load(pacs008_xml)
    tx, gh, sender, receiver = _transaction(loaded)
    ref = text(tx, "PmtId/InstrId") or text(tx, "PmtId/TxId") or "NONREF"
    codes, to_acc = codes_23e(tx)
    fields = [("20", [fit(clean(ref), 16)])] + [("13C", [v]) for v in field_13c(tx)]
    fields += [("23B", ["CRED"])] + [("23E", [c]) for c in codes]
    fields += [("26T", ls) for ls in (field_26t(tx),) if ls]
    amounts = amount_fields(tx, gh, sender, receiver)
    fields += amounts
    opt, lines = party_lines(tx.find("Dbtr"), _account(tx, "DbtrAcct"), debtor=True)
    fields.append(("50" + (opt or "K"), lines))
    fields += agent_fields(tx, gh, sender, receiver)
    opt, lines = party_lines(tx.find("Cdtr"), _account(tx, "CdtrAcct"))
    fields.append(("59" + opt, lines))
    lines, cut = field_70(tx)
    fields += [("70", lines)] if lines else []
    fields += charge_fields(tx, amounts[0][1][0][6:9])
    fields += [(t, ls) for t, ls in (("72", field_72(tx, to_acc)), ("77B", field_77b(tx))) if ls]
    body = "\n".join(f":{tag}:" + "\n".join(lines) for tag, lines in fields)
    gpi = "G001" in service_levels(tx)
    head = header(sender, receiver, text(tx, "PmtId/UETR"), gpi)
    return f"{head}{{4:\n{body}\n-}}", losses(tx, gh) + cut


def translate(pacs008_xml: str) -> str:
    """The MT103 (blocks 1-4, LF line ends) equivalent to a pacs.008 message."""
    return translate_with_losses(pacs008_xml)[0]
