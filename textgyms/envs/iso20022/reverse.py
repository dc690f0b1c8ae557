"""The reference translator in the other direction: SWIFT MT103 -> pacs.008.001.08 (CBPR+).

:func:`translate_mt` follows the MT -> MX mapping of the CBPR+ translation rules for the
fields an MT103 carries (see :data:`RULES`); the result is one ``Document`` (the sender and
receiver are its InstgAgt and InstdAgt), or with ``header=True`` an ``Envelope`` of the CBPR+
business application header (head.001.001.02) and the Document; both are valid against the
vendored XSDs. Choices the rules leave open are fixed: CreDtTm (and the header's CreDt) is the
value date at 00:00 UTC (a translation has no clock), TxId repeats field 20, the EndToEndId
is the /ROC/ reference of field 70 (else NOTPROVIDED), a 32A year YY is 20YY below 80 and
19YY from 80, and a {121:} that is not a UUID version 4 (which FIN rejects) gives no UETR.
It raises ``ValueError`` on text that is not an MT103 with the mandatory fields.
"""

from __future__ import annotations

import re
from decimal import Decimal

from textgyms.envs.iso20022.charset import NotCbprError, fit, placeholder_only
from textgyms.envs.iso20022.countries import ISO_COUNTRIES
from textgyms.envs.iso20022.currencies import xml_amount
from textgyms.envs.iso20022.identifiers import NOT_PROVIDED, id_xml
from textgyms.envs.iso20022.mtparse import (
    BIC_RE,
    TIME_13C,
    Message,
    parse,
    parse_error,
    parties,
    service_type,
    uetr,
    valid_uetr,
)
from textgyms.envs.iso20022.translate import CLEARING, bic11
from textgyms.envs.iso20022.xmlbuild import el, text
from textgyms.envs.iso20022.xsd import HEAD_NS, PACS_NS

RULES = """\
20 -> GrpHdr/MsgId, PmtId/InstrId, PmtId/TxId; {121:} -> PmtId/UETR; 70 /ROC/ -> EndToEndId
  (else NOTPROVIDED; longer than 35: 34 characters + "+", the whole /ROC/ reference then
  first in the text); 26T -> Purp/Prtry; {111:001} (gpi) -> SvcLvl G001
13C /SNDTIME/ -> SttlmTmIndctn/DbtDtTm, /RNCTIME/ -> CdtDtTm (value date + time + offset);
  /CLSTIME/ -> SttlmTmReq/CLSTm (time + offset)
23E SDVA -> SvcLvl (after G001); INTC, CORT -> CtgyPurp; HOLD CHQB PHOB TELB ->
  InstrForCdtrAgt (/info -> InstrInf); PHON -> InstrForNxtAgt PHOA; TELE -> TELA (/info
  -> InstrInf); REPA PHOI TELI (no ISO code) -> InstrForNxtAgt InstrInf "/CODE/info"
32A -> IntrBkSttlmDt, IntrBkSttlmAmt; 33B -> InstdAmt; 36 -> XchgRate; 71A -> ChrgBr
71F -> ChrgsInf (Agt = sender); 71G -> ChrgsInf (Agt = receiver)
50a/59a -> Dbtr/Cdtr (+ DbtrAcct/CdtrAcct: IBAN when the account is one, else Othr/Id);
  50K/59: Nm, then AdrLine per line; a last line that is a bare country code -> Ctry
  50F: line 1 /NOTPROVIDED = no account; CODE/CC[/issuer]/id -> Dbtr/Id/PrvtId/Othr (Id,
  SchmeNm/Cd CODE, Issr CC[/issuer]; OrgId for CUST EMPL TXID without 4/ 5/); 4/ + 5/ ->
  PrvtId/DtAndPlcOfBirth; 6/CC/issuer/id -> Othr CUST; 7/CC/id -> Othr NIDN; 8/ continues
  the identifier
52a -> DbtrAgt (else the sender); 57a -> CdtrAgt (else the receiver); 56a -> IntrmyAgt1;
  an agent's "/account" line -> DbtrAgtAcct, CdtrAgtAcct, IntrmyAgt1Acct
53A, 54A -> SttlmInf InstgRmbrsmntAgt, InstdRmbrsmntAgt (SttlmMtd COVE, else INDA);
  53B /account -> SttlmAcct (a /C/ or /D/ mark has no place: reported lost)
72 /INS/ -> PrvsInstgAgt1; /INTA/ -> IntrmyAgt2; /ACC/ -> InstrForCdtrAgt; /REC/ -> InstrForNxtAgt;
  /BNF/ -> InstrForCdtrAgt, other codes -> InstrForNxtAgt (InstrInf keeps "/CODE/")
77B /ORDERRES/ or /BENEFRES/CC//code + text -> RgltryRptg (DEBT or CRED)
70 /INV/ -> Strd RfrdDocInf CINV; /RFB/ -> Strd CdtrRefInf SCOR; other text -> Ustrd, its
  lines joined: directly after a full 35-character line (a cut word), else with a blank
"""
HEADER_RULES = """\
Envelope = AppHdr (head.001.001.02) + Document. AppHdr: Fr and To = the MT sender and receiver
  BIC11 (FIId/FinInstnId/BICFI), BizMsgIdr = 20, MsgDefIdr pacs.008.001.08,
  BizSvc swift.cbprplus.02, CreDt = the 32A value date at 00:00 UTC
"""
CHARGE_BEARER = {"SHA": "SHAR", "OUR": "DEBT", "BEN": "CRED"}
# The CBPR+ business service of the head.001.001.02 header (the same value the generator's
# headers carry).
BIZ_SVC = "swift.cbprplus.02"
CLEARING_ISO = {mt: iso for iso, mt in reversed(CLEARING.items())}
_IBAN = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}")
_CODE = re.compile(r"/([A-Z]{3,8})/")
KNOWN_23E = ("SDVA", "INTC", "REPA", "CORT", "HOLD", "CHQB", "PHOB", "TELB", "PHON", "TELE",
             "PHOI", "TELI")


def is_iban(acct: str) -> bool:
    """True for an IBAN with a valid ISO 7064 mod-97 check."""
    if not _IBAN.fullmatch(acct):
        return False
    digits = "".join(str(int(c, 36)) for c in acct[4:] + acct[:4])
    return int(digits) % 97 == 1


def bic(line: str) -> str:
    """A BIC from an MT line; a 12-character LT address (BIC8 + terminal code + branch)
    loses its terminal code."""
    line = line.strip()
    return line[:8] + line[9:] if len(line) == 12 else line


def amount(text_: str) -> tuple[str, str]:
    """("EUR", "1234.50") of a ccy + MT amount."""
    ccy = text_[:3]
    return ccy, xml_amount(Decimal(text_[3:].replace(",", ".")), ccy)


def coded(lines: list[str]) -> list[tuple[str, str]]:
    """72/77B/70 lines as (code, text) segments; "//" lines continue the previous one,
    directly after a full 35-character line (a cut word), else after a blank."""
    out: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        blank = "" if i and len(lines[i - 1]) == 35 else " "
        if line.startswith("//") and out:
            out[-1] = (out[-1][0], out[-1][1] + blank + line[2:])
            continue
        m = _CODE.match(line)
        if m:
            out.append((m.group(1), line[m.end():]))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + " " + line)
        else:
            out.append(("", line))
    return out


def account_xml(tag: str, acct: str | None) -> list[str]:
    if not acct:
        return []
    body = text("IBAN", acct) if is_iban(acct) else el("Othr", text("Id", acct[:34]))
    return [el(tag, el("Id", body))]


def agent_xml(tag: str, field: tuple[str, str] | None, default: str | None) -> list[str]:
    """An agent from option A, C or D of a 52a-57a field (or the default BIC), followed by
    its account (``<tag>Acct``) when the field's first line is "/" + account."""
    if field is None:
        return [el(tag, el("FinInstnId", text("BICFI", default)))] if default else []
    acct = re.fullmatch(r"/(?:[CD]/)?([^/].*)", field[1].split("\n")[0])
    return _agent(tag, field) + account_xml(tag + "Acct", acct.group(1) if acct else None)


def named_agent_xml(tag: str, value: str | None) -> list[str]:
    """The agent of a 72 /INS/ or /INTA/ line: its BIC, or (a name and address written out,
    as real messages do) that text as the agent's name."""
    if not value or not value.strip():
        return []
    if BIC_RE.fullmatch(bic(value)):
        return [el(tag, el("FinInstnId", text("BICFI", bic(value))))]
    return [el(tag, el("FinInstnId", text("Nm", value.strip()[:140])))]


def _agent(tag: str, field: tuple[str, str]) -> list[str]:
    option, lines = field[0][2:], field[1].split("\n")
    clr = []
    if lines[0].startswith("//") and lines[0][2:4] in CLEARING_ISO:
        code, member = CLEARING_ISO[lines[0][2:4]], lines[0][4:]
        clr = [el("ClrSysMmbId", el("ClrSysId", text("Cd", code)), text("MmbId", member))]
    rest = lines[1:] if lines[0].startswith("/") else lines
    if option == "A":
        return [el(tag, el("FinInstnId", text("BICFI", bic(rest[-1])), *clr))]
    if option == "D" and rest:
        adr = [el("PstlAdr", *(text("AdrLine", a) for a in rest[1:]))] if rest[1:] else []
        return [el(tag, el("FinInstnId", *clr, text("Nm", rest[0]), *adr))]
    return [el(tag, el("FinInstnId", *clr))] if clr else []


def party_xml(tag: str, field: tuple[str, str]) -> tuple[list[str], str | None, list[str]]:
    """Dbtr/Cdtr elements from 50a/59a, the account of its first line ("/NOTPROVIDED" is
    none) and what could not be carried. 50F's party identifier and its 4/-8/ lines
    become ``Dbtr/Id`` (see :mod:`identifiers`)."""
    option, lines = field[0][2:], field[1].split("\n")
    acct = lines[0][1:] if lines[0].startswith("/") else None
    ident = option == "F" and re.match(r"[A-Z]{4}/[A-Z]{2}/", lines[0]) is not None
    rest = lines[1:] if acct is not None or ident else lines
    acct = None if acct == NOT_PROVIDED[1:] else acct
    if option == "A":
        return [el(tag, el("Id", el("OrgId", text("AnyBIC", bic(rest[-1])))))], acct, []
    if option == "F":
        parts: dict[str, list[str]] = {}
        for line in rest:
            if line[:2] in {f"{n}/" for n in "12345678"}:
                parts.setdefault(line[0], []).append(line[2:])
        name = _name(" ".join(parts.get("1", [])) or "NOTPROVIDED")
        adr = [text("AdrLine", a) for a in parts.get("2", [])[:2]]
        place = (parts.get("3") or [""])[0].split("/", 1)
        town = [text("TwnNm", place[1])] if len(place) == 2 and place[1] else []
        ctry = [text("Ctry", place[0])] if re.fullmatch(r"[A-Z]{2}", place[0]) else []
        pstl = [el("PstlAdr", *town, *ctry, *adr)] if town or ctry or adr else []
        ids, lost = id_xml(lines[0] if ident else None, parts)
        return [el(tag, text("Nm", name), *pstl, *ids)], acct, lost
    lines = rest[1:]
    ctry = [text("Ctry", lines.pop())] if lines and lines[-1] in ISO_COUNTRIES else []
    adr = [el("PstlAdr", *ctry, *(text("AdrLine", a) for a in lines))] if lines or ctry else []
    return [el(tag, text("Nm", _name(rest[0] if rest else "NOTPROVIDED")), *adr)], acct, []


def _name(value: str) -> str:
    """A 50a/59a name as the pacs.008 Nm; one of dots or other placeholders alone (what a
    lossy translation leaves of a name) is refused: it names no party."""
    if placeholder_only(value):
        raise NotCbprError(f"the party name {value!r} has no letter or digit: it names no "
                           "party, so the pacs.008 would have no Dbtr or Cdtr name")
    return value


def narrative(lines: list[str], prefix: str = "") -> str:
    """Lines of a narrative field as one text, the way the translation rules join them: a
    line of the full 35 characters was cut by the line width (often inside a word), so the
    next line follows it directly; after a shorter line the writer chose to break, which
    stands for a blank. A ``prefix`` that starts a line (the "//" of 77B continuation lines)
    is dropped from the text but counts in the line's length."""
    text_ = ""
    for i, line in enumerate(lines):
        body = line[len(prefix):] if prefix and line.startswith(prefix) else line
        text_ += body if i == 0 or len(lines[i - 1]) == 35 else " " + body
    return text_.strip()


def remittance_xml(lines: list[str]) -> tuple[str, list[str], list[str]]:
    """The EndToEndId (/ROC/) and RmtInf of field 70, and what was cut. A coded line
    (/ROC/, /INV/, /RFB/) holds one reference; the other lines are the text (see
    :func:`narrative`). /INV/ and /RFB/ make structured remittance (the text then in
    AddtlRmtInf), else one Ustrd. A /ROC/ reference longer than the 35 characters of
    EndToEndId becomes 34 characters and "+", the whole reference then kept at the head of
    the text so that nothing is lost; a text beyond the 140 characters of Ustrd (CBPR+
    allows one) is cut with "+" and reported."""
    e2e, inv, ref, free = "NOTPROVIDED", [], [], []
    for line in lines:
        m = re.match(r"/(ROC|INV|RFB)/", line)
        value = line[m.end():].strip() if m else ""
        if m and m.group(1) == "ROC":
            e2e = fit(value, 35) or e2e
            if len(value) > 35:
                free.insert(0, "/ROC/" + value)
        elif m and m.group(1) == "INV":
            inv.append(value.split("/")[0][:35])
        elif m:
            ref.append(value[:35])
        else:
            free.append(line)
    whole = narrative(free)
    words = fit(whole, 140)
    lost = ["70 text (beyond the 140 characters of RmtInf: cut, '+')"] if whole != words else []
    if not inv and not ref:
        return e2e, [el("RmtInf", text("Ustrd", words))] if words else [], lost
    strd = [el("RfrdDocInf", el("Tp", el("CdOrPrtry", text("Cd", "CINV"))), text("Nb", n))
            for n in inv]
    strd += [el("CdtrRefInf", el("Tp", el("CdOrPrtry", text("Cd", "SCOR"))), text("Ref", r))
             for r in ref[:1]]
    strd += [text("AddtlRmtInf", words)] if words else []
    return e2e, [el("RmtInf", el("Strd", *strd))], lost


def instructions_xml(msg: Message, info72: list[tuple[str, str]]) -> list[str]:
    """InstrForCdtrAgt and InstrForNxtAgt from 23E and the /ACC/ and /REC/ lines of 72."""
    cdtr, nxt = [], []
    for value in msg.get("23E"):
        code, _, info = value.partition("/")
        if code in ("HOLD", "CHQB", "PHOB", "TELB"):
            cdtr.append(el("InstrForCdtrAgt", text("Cd", code),
                           *([text("InstrInf", info)] if info else [])))
        elif code in ("PHON", "TELE"):
            nxt.append(el("InstrForNxtAgt", text("Cd", {"PHON": "PHOA", "TELE": "TELA"}[code]),
                          *([text("InstrInf", info)] if info else [])))
        elif code in ("REPA", "PHOI", "TELI"):  # no ISO code: kept with its code
            nxt.append(el("InstrForNxtAgt", text("InstrInf", f"/{code}/{info}")))
    cdtr += [el("InstrForCdtrAgt", text("InstrInf", v[:140])) for c, v in info72 if c == "ACC"]
    nxt += [el("InstrForNxtAgt", text("InstrInf", v[:140])) for c, v in info72 if c == "REC"]
    # Other codes keep their code in the text: /BNF/ (for the beneficiary) goes with the
    # creditor agent, the rest (/INT/, bilateral codes) to the next agent.
    for code, value in info72:
        if code and code not in ("ACC", "REC", "INS", "INTA"):
            tag = "InstrForCdtrAgt" if code == "BNF" else "InstrForNxtAgt"
            (cdtr if code == "BNF" else nxt).append(el(tag, text("InstrInf",
                                                                 f"/{code}/{value}"[:140])))
    return cdtr[:2] + nxt[:6]


def regulatory_xml(msg: Message) -> list[str]:
    """RgltryRptg from 77B /ORDERRES/ or /BENEFRES/ + country + // + code and text."""
    values = msg.get("77B")
    if not values:
        return []
    m = re.match(r"/(ORDERRES|BENEFRES)/([A-Z]{2})//([^\n]*)((?:\n.*)*)", values[0])
    if m is None:
        return []
    # Continuation lines join as those of 70 do (see :func:`narrative`).
    info = narrative([line for line in m.group(4).split("\n") if line], "//")
    dtls = el("Dtls", text("Ctry", m.group(2)), *([text("Cd", m.group(3)[:10])]
                                                  if m.group(3) else []),
              *(text("Inf", info[i:i + 35]) for i in range(0, len(info), 35)))
    ind = "CRED" if m.group(1) == "BENEFRES" else "DEBT"
    return [el("RgltryRptg", text("DbtCdtRptgInd", ind), dtls)]


def _group_header(msg: Message, ref: str, date: str) -> str:
    f53, f54 = msg.first("53"), msg.first("54")
    cover = (f53 and f53[0] != "53B") or f54
    sttlm = [text("SttlmMtd", "COVE" if cover else "INDA")]
    if f53 and f53[0] == "53B" and f53[1].startswith("/"):
        # SttlmAcct has no debit/credit mark: a "/C/" or "/D/" is reported lost, not kept
        # inside the account number.
        acct = re.sub(r"^/[CD]/", "/", f53[1].split("\n")[0])
        sttlm += account_xml("SttlmAcct", acct[1:]) if len(acct) > 1 else []
    for tag, base in (("InstgRmbrsmntAgt", "53"), ("InstdRmbrsmntAgt", "54")):
        field = msg.first(base)
        if field and field[0].endswith("A"):
            sttlm += agent_xml(tag, field, None)
    return el("GrpHdr", text("MsgId", ref), text("CreDtTm", f"{date}T00:00:00+00:00"),
              text("NbOfTxs", "1"), el("SttlmInf", *sttlm))


def _payment_type(msg: Message) -> list[str]:
    codes = [v[:4] for v in msg.get("23E")]
    # {111:001} in block 3 marks a SWIFT gpi payment (gCCT): the ISO service level G001.
    svc = ["G001"] if service_type(msg) == "001" else []
    svc += ["SDVA"] if "SDVA" in codes else []
    parts = [el("SvcLvl", text("Cd", c)) for c in svc]
    parts += [el("CtgyPurp", text("Cd", c)) for c in ("INTC", "CORT") if c in codes][:1]
    return [el("PmtTpInf", *parts)] if parts else []


def settlement_time_xml(msg: Message, date: str) -> list[str]:
    """SttlmTmIndctn and SttlmTmReq from the 13C time indications: /SNDTIME/ (debited at
    the sending central bank) -> DbtDtTm, /RNCTIME/ (credited at the receiving one) ->
    CdtDtTm, both on the value date; /CLSTIME/ (CLS funding deadline) -> CLSTm. The offset
    against UTC travels with the time. Other codes and malformed values (which network
    validation rejects) have no place in the pacs.008."""
    found: dict[str, str] = {}
    for value in msg.get("13C"):
        m = TIME_13C.fullmatch(value)
        if m and m.group(1) not in found:
            hhmm, offset = f"{m.group(2)}:{m.group(3)}:00", f"{m.group(4)}{m.group(5)}:{m.group(6)}"
            found[m.group(1)] = hhmm + offset if m.group(1) == "CLSTIME" else (
                f"{date}T{hhmm}{offset}")
    indctn = [text(tag, found[code]) for tag, code in (("DbtDtTm", "SNDTIME"),
                                                        ("CdtDtTm", "RNCTIME")) if code in found]
    out = [el("SttlmTmIndctn", *indctn)] if indctn else []
    return out + ([el("SttlmTmReq", text("CLSTm", found["CLSTIME"]))]
                  if "CLSTIME" in found else [])


def _amounts(msg: Message, sender: str, receiver: str) -> list[str]:
    v32 = msg.get("32A")[0]
    ccy, amt = amount(v32[6:])
    out = [text("IntrBkSttlmAmt", amt, Ccy=ccy), text("IntrBkSttlmDt", _date(v32[:6])),
           *settlement_time_xml(msg, _date(v32[:6]))]
    if msg.get("33B"):
        c, a = amount(msg.get("33B")[0])
        out.append(text("InstdAmt", a, Ccy=c))
    if msg.get("36"):
        out.append(text("XchgRate", f"{Decimal(msg.get('36')[0].replace(',', '.')).normalize():f}"))
    out.append(text("ChrgBr", CHARGE_BEARER.get((msg.get("71A") or ["SHA"])[0], "SHAR")))
    for tag, agt in (("71F", sender), ("71G", receiver)):
        for value in msg.get(tag):
            c, a = amount(value)
            out.append(el("ChrgsInf", text("Amt", a, Ccy=c),
                          el("Agt", el("FinInstnId", text("BICFI", agt)))))
    return out


def _date(yymmdd: str) -> str:
    # FIN dates have no century: the usual window puts 00-79 in 2000-2079, 80-99 in 19xx.
    century = "19" if yymmdd[:2] >= "80" else "20"
    return f"{century}{yymmdd[:2]}-{yymmdd[2:4]}-{yymmdd[4:6]}"


def purpose_xml(msg: Message) -> list[str]:
    """Purp/Prtry from 26T (its 3-character transaction type code has no ISO code list)."""
    code = (msg.get("26T") or [""])[0].strip()
    return [el("Purp", text("Prtry", code))] if code else []


def app_header_xml(msg: Message, sender: str, receiver: str, date: str) -> str:
    """The CBPR+ business application header (head.001.001.02) of the translation: From and
    To the MT sender and receiver, BizMsgIdr field 20, CreDt the value date at 00:00 UTC."""
    fi = lambda tag, b: el(tag, el("FIId", el("FinInstnId", text("BICFI", b))))  # noqa: E731
    return el("AppHdr", fi("Fr", bic11(sender)), fi("To", bic11(receiver)),
              text("BizMsgIdr", msg.get("20")[0]), text("MsgDefIdr", "pacs.008.001.08"),
              text("BizSvc", BIZ_SVC), text("CreDt", f"{date}T00:00:00+00:00"),
              xmlns=HEAD_NS + "02")


def mt_losses(msg: Message) -> list[str]:
    """What of an MT103 no pacs.008 element carries under the rules above (reported as
    the translation loss, never dropped silently): block-3 fields other than {111:} and
    {121:}, a {121:} FIN would reject, 53B's debit/credit mark and location, 53D, 54B/D
    and 55a (the pacs.008 names reimbursement agents by BIC), 57B, 13C codes other than
    SNDTIME/RNCTIME/CLSTIME, a 77B that is not /ORDERRES/ or /BENEFRES/ + country (or whose
    code is longer than Dtls/Cd), 51A (no pacs.008 place), a clearing code the table does
    not map, and 23E codes outside the MT103 list."""
    out = [f"{{{t}:}}" for t in re.findall(r"\{(\d{3}):", msg.block3 or "")
           if t not in ("111", "121")]
    if uetr(msg) and not valid_uetr(uetr(msg) or ""):
        out.append("{121:} (not a UUID version 4)")
    f53 = msg.first("53")
    if f53 and f53[0] == "53B":
        out += ["53B debit/credit mark"] if re.match(r"/[CD]/", f53[1]) else []
        out += ["53B location"] if len(f53[1].split("\n")) > 1 or not f53[1].startswith(
            "/") else []
    out += [t for t, _ in msg.fields if t in ("51A", "53D", "54B", "54D", "55A", "55B",
                                                "55D", "57B")]
    out += [f"{t} //{v[2:4]}" for t, v in msg.fields if t[:2] in ("52", "53", "54", "56", "57")
            and v.startswith("//") and v[2:4] not in CLEARING_ISO]  # an unmapped clearing code
    m77 = re.match(r"/(?:ORDERRES|BENEFRES)/[A-Z]{2}//([^\n]*)", (msg.get("77B") or [""])[0])
    if m77 and len(m77.group(1)) > 10:  # RgltryRptg/Dtls/Cd holds 10 characters
        out.append("77B code beyond 10 characters")
    out += [f"13C {v[:9]}" for v in msg.get("13C") if not TIME_13C.fullmatch(v)]
    if msg.get("77B") and not regulatory_xml(msg):
        out.append("77B")
    out += [f"23E {v[:4]}" for v in msg.get("23E") if v[:4] not in KNOWN_23E]
    return out


def translate_mt(mt103: str, *, header: bool = False) -> str:
    """The pacs.008.001.08 Document (CBPR+) equivalent to an MT103 (see :data:`RULES`); with
    ``header`` an ``Envelope`` of the head.001.001.02 AppHdr and the Document."""
    return translate_mt_with_losses(mt103, header=header)[0]


def translate_mt_with_losses(mt103: str, *, header: bool = False) -> tuple[str, list[str]]:
    """:func:`translate_mt` and what of the MT103 the pacs.008 does not carry
    (:func:`mt_losses` and the 50F lines :func:`identifiers.id_xml` cannot map)."""
    msg = parse(mt103)
    if msg is None:
        raise ValueError(f"not an MT message: {parse_error(mt103)}")
    sender, receiver = parties(msg)
    missing = [t for t in ("20", "32A", "50", "59") if msg.first(t) is None]
    if missing or not sender or not receiver:
        raise ValueError(f"the MT103 lacks {', '.join(missing) or 'a sender or receiver'}")
    ref, date = msg.get("20")[0], _date(msg.get("32A")[0][:6])
    info72 = coded((msg.get("72") or [""])[0].split("\n"))
    e2e, rmt, cut = remittance_xml((msg.get("70") or [""])[0].split("\n"))
    ref_121 = uetr(msg)
    pmt_id = el("PmtId", text("InstrId", ref), text("EndToEndId", e2e), text("TxId", ref),
                *([text("UETR", ref_121)] if ref_121 and valid_uetr(ref_121) else []))
    named = {c: v for c, v in info72 if c in ("INS", "INTA")}
    dbtr, dacct, lost = party_xml("Dbtr", msg.first("50"))
    cdtr, cacct, _ = party_xml("Cdtr", msg.first("59"))
    tx = el("CdtTrfTxInf", pmt_id, *_payment_type(msg), *_amounts(msg, sender, receiver),
            *named_agent_xml("PrvsInstgAgt1", named.get("INS")),
            *agent_xml("InstgAgt", None, bic11(sender)), *agent_xml("InstdAgt", None,
                                                                    bic11(receiver)),
            *agent_xml("IntrmyAgt1", msg.first("56"), None),
            *named_agent_xml("IntrmyAgt2", named.get("INTA")),
            *dbtr, *account_xml("DbtrAcct", dacct),
            *agent_xml("DbtrAgt", msg.first("52"), bic11(sender)),
            *agent_xml("CdtrAgt", msg.first("57"), bic11(receiver)),
            *cdtr, *account_xml("CdtrAcct", cacct), *instructions_xml(msg, info72),
            *purpose_xml(msg), *regulatory_xml(msg), *rmt)
    doc = el("Document", el("FIToFICstmrCdtTrf", _group_header(msg, ref, date), tx),
             xmlns=PACS_NS + "08")
    if header:
        doc = el("Envelope", app_header_xml(msg, sender, receiver, date), doc)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + doc + "\n", mt_losses(msg) + lost + cut
