"""Seeded pacs.008 messages (CBPR+ usage, versions pacs.008.001.08 to .13) at four levels.

:func:`draw_payment` draws a payment (a plain dict) from an explicit numpy ``rng``;
:func:`to_xml` renders it as a pacs.008 ``Document`` of the drawn version (optionally inside
an envelope with a head.001.001.02-.04 business application header). Every message keeps to
the CBPR+ usage guideline: InstrId of at most 16 characters without a leading, trailing or
double "/", one Ustrd of at most 140 characters, at most 3 address lines of 35 (2 next to a
town and country), the CBPR+ character set (no accented letters), a postal address for
every debtor, customers that are not banks. Levels are cumulative:

* L1: pacs.008.001.08; single hop (sender = debtor agent, receiver = creditor agent), BIC
  agents, parties with a name and an IBAN, debtors with an unstructured address, charge
  bearer SHAR; never both agents in the SWIFT EU country list (so 33B is not required).
* L2: versions .08 to .10, sometimes in an envelope; structured, unstructured and no creditor
  addresses, a same-currency instructed amount, both agents in the EU list (33B then
  required), a correspondent receiver with an intermediary agent, unstructured remittance
  information, charge bearer DEBT.
* L3: every version .08 to .13; FX (instructed amount in another currency with an exchange
  rate), charges (71F/71G, a zero 71F for CRED), hybrid addresses, names needing
  truncation, CBPR+ characters outside the X set, corporate AnyBIC parties, instruction
  codes for 23E, structured remittance (invoice number, creditor reference), creditor
  agents identified by a clearing-system member id (with a BIC, or by name and address
  without one), 0- and 3-decimal currencies, NOTPROVIDED end-to-end id.
* L4: a previous instructing agent (multi-hop), reimbursement agents (cover method), a second
  intermediary agent, regulatory reporting, envelopes with head.001.001.02-.04 and
  namespace prefixes.

The MT103 -> pacs.008 tasks (:func:`generate_mt`) add, at L3+, the SWIFT gpi service level
G001 and settlement time indications (13C); the pacs.008 -> MT103 tasks never draw them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from textgyms.core import Task
from textgyms.envs.iso20022 import banks, names
from textgyms.envs.iso20022.charset import clean
from textgyms.envs.iso20022.currencies import quantize, xml_amount
from textgyms.envs.iso20022.timezones import CLS_COUNTRY, utc_offset
from textgyms.envs.iso20022.xmlbuild import el, text
from textgyms.envs.iso20022.xsd import HEAD_NS, PACS_NS, PACS_VERSIONS

LEVELS = (1, 2, 3, 4)
VERSIONS = {1: ("08",), 2: ("08", "09", "10"), 3: PACS_VERSIONS, 4: PACS_VERSIONS}
GEN_HEAD_VERSIONS = ("02", "03", "04")  # CBPR+ headers (head.001.001.01 predates CBPR+)
# SWIFT's list of EU/EEA country codes for MT103 network rule C2 (error D49).
EU_COUNTRIES = frozenset(
    "AD AT BE BG BV CH CY CZ DE DK EE ES FI FR GB GF GI GP GR HR HU IE IS IT LI LT LU LV MC "
    "MQ MT NL NO PL PM PT RE RO SE SI SJ SK SM TF VA".split()
)
# Approximate USD value of one unit (for plausible exchange rates; not market data).
USD_VALUE = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "CHF": 1.12, "SEK": 0.095, "NOK": 0.094,
             "PLN": 0.25, "AED": 0.2723, "TRY": 0.031, "JPY": 0.0067, "SGD": 0.74,
             "HKD": 0.128, "CAD": 0.73, "AUD": 0.66, "CNY": 0.138, "INR": 0.012,
             "KWD": 3.25, "BHD": 2.65, "OMR": 2.6}
EASY_COUNTRIES = ("DE", "FR", "NL", "IT", "ES", "BE", "AT", "GB", "IE", "LU", "FI", "PT")
NON_EU_IBAN = ("AE", "TR")
NON_IBAN = ("US", "JP", "SG", "HK", "CA", "AU", "CN", "IN")
THREE_DEC = ("KW", "BH", "OM")


@dataclass(frozen=True)
class IsoTask(Task):
    """One translation task: the pacs.008 XML, its level, the reference MT103 and what the
    MT103 cannot carry (``losses``, element names)."""

    level: int
    xml: str
    reference: str
    rule_card: bool = True
    multi_turn: bool = False
    losses: tuple[str, ...] = ()


@dataclass(frozen=True)
class MtTask(Task):
    """One task of the other direction: the MT103, its level and the reference pacs.008."""

    level: int
    mt: str
    reference: str


def pick(rng: np.random.Generator, seq):
    """A uniformly drawn element of ``seq``."""
    return seq[int(rng.integers(len(seq)))]


def chance(rng: np.random.Generator, p: float) -> bool:
    """True with probability ``p``."""
    return bool(rng.random() < p)


def bank_in(rng: np.random.Generator, country: str) -> banks.Bank:
    """A random bank of ``country`` (registry banks first, else the own table)."""
    pool = banks.registry_banks().get(country)
    if pool:
        return pick(rng, pool)
    return pick(rng, [b for b in banks.OTHER_BANKS if b.country == country])


def _countries(rng: np.random.Generator, level: int) -> tuple[str, str]:
    """Debtor-agent and creditor-agent countries for ``level``."""
    if level == 1:  # one side outside the EU list: C2 (33B) does not apply
        pair = (pick(rng, EASY_COUNTRIES), pick(rng, NON_EU_IBAN))
        return pair if chance(rng, 0.5) else pair[::-1]
    if level == 2:
        if chance(rng, 0.4):
            return pick(rng, EASY_COUNTRIES), pick(rng, EASY_COUNTRIES)
        pool = banks.REGISTRY_COUNTRIES + NON_IBAN[:2] + NON_IBAN[2:6]
        return pick(rng, pool), pick(rng, pool)
    pool = banks.REGISTRY_COUNTRIES + NON_IBAN + NON_IBAN[:2]
    creditor = pick(rng, pool + ("JP", "JP") + THREE_DEC + THREE_DEC)
    return pick(rng, pool), creditor


def _ids(rng: np.random.Generator, level: int) -> dict[str, str]:
    """Message, instruction and end-to-end ids and the UETR."""
    n = int(rng.integers(10**5, 10**9))
    # CBPR+: InstrId has at most 16 characters, no leading/trailing "/" and no "//".
    instr = f"TRF{n}" if level < 3 or chance(rng, 0.5) else f"{n}/26-{n % 97}"
    e2e = f"E2E{int(rng.integers(10**6, 10**10))}"
    if level >= 3 and chance(rng, 0.25):
        e2e = "NOTPROVIDED"
    elif level >= 3 and chance(rng, 0.3):
        e2e = f"CUSTOMER-REFERENCE-{n}-{n % 89:02d}-LONG-ID"[:35]
    hexd = "".join("0123456789abcdef"[d] for d in rng.integers(0, 16, size=32))
    variant = "89ab"[int(rng.integers(4))]
    uetr = f"{hexd[:8]}-{hexd[8:12]}-4{hexd[13:16]}-{variant}{hexd[17:20]}-{hexd[20:]}"
    return {"msg": f"MSG{n}{int(rng.integers(1000))}", "instr": instr, "e2e": e2e,
            "tx": f"TX{n}", "uetr": uetr}


def _name(rng: np.random.Generator, country: str, level: int) -> str:
    """A company or person name; hard levels add CBPR+ characters outside X and over-long
    names."""
    if level >= 3 and chance(rng, 0.35):
        return pick(rng, names.NAMES_INTL if chance(rng, 0.6) else names.LONG_NAMES)
    if chance(rng, 0.4):
        return f"{pick(rng, names.FIRST)} {pick(rng, names.LAST)}"
    suffix = names.SUFFIX.get(country, "LTD")
    return f"{pick(rng, names.ROOTS)} {pick(rng, names.TRADES)} {suffix}"


def _address(rng: np.random.Generator, country: str, level: int,
             required: bool) -> dict[str, Any] | None:
    """A postal address of ``country`` (a town of that country, a street of that town):
    unstructured lines (L1), structured, or hybrid (town and country plus up to 2 lines, L3+); None
    sometimes when not ``required`` (CBPR+ requires the debtor's)."""
    if not required and (level == 1 or chance(rng, 0.2)):
        return None
    town, postcode = pick(rng, names.TOWNS[country])
    street, number = pick(rng, names.STREETS[town]), str(int(rng.integers(1, 250)))
    if level == 1 or chance(rng, 0.4):
        lines = [f"{street} {number}", f"{postcode} {town}"]
        if level >= 3 and chance(rng, 0.4):
            lines = [f"{street} {number}, BUILDING C"[:35], "FLOOR 12, SUITE 1204 (RECEPTION)",
                     f"{postcode} {town}"]
        return {"AdrLine": lines}
    if level >= 3 and chance(rng, 0.4):
        extra = [f"{street} {number}", "BUILDING C, FLOOR 12"][: int(rng.integers(1, 3))]
        return {"PstCd": postcode, "TwnNm": town, "Ctry": country, "AdrLine": extra}
    return {"StrtNm": street, "BldgNb": number, "PstCd": postcode, "TwnNm": town,
            "Ctry": country}


def _party(rng: np.random.Generator, bank: banks.Bank, level: int,
           debtor: bool) -> dict[str, Any]:
    """A debtor or creditor with its account at ``bank``; at L3+ sometimes a company with
    its own (non-bank, corporate) BIC."""
    country = bank.country
    account, is_iban = banks.make_account(bank, rng)
    party = {"name": _name(rng, country, level), "account": account, "iban": is_iban,
             "address": _address(rng, country, level, debtor), "anybic": None}
    if level >= 3 and chance(rng, 0.2):
        party["anybic"] = f"{pick(rng, names.CORPORATE_BIC_STEMS)}{country}22"
    return party


def _correspondent(rng: np.random.Generator, exclude: set[str]) -> str:
    """A correspondent BIC not in ``exclude``."""
    return pick(rng, [b.bic for b in banks.CORRESPONDENTS if b.bic not in exclude])


def _bic(rng: np.random.Generator, bic11: str) -> str:
    """``bic11`` as written in the message: head offices often appear as BIC8."""
    return bic11[:8] if bic11.endswith("XXX") and chance(rng, 0.5) else bic11


def _routing(rng: np.random.Generator, level: int, dbtr_agt: str, cdtr_agt: str,
             via_correspondent: bool = False) -> dict:
    """Sender, receiver and the agents between them (``via_correspondent``: the creditor
    agent cannot be the receiver, e.g. it has no BIC)."""
    used = {dbtr_agt, cdtr_agt}
    r: dict[str, Any] = {"instg": dbtr_agt, "instd": cdtr_agt, "prev": None, "intrmy1": None,
                         "intrmy2": None, "rmb_instg": None, "rmb_instd": None}
    if via_correspondent or (level >= 2 and chance(rng, 0.5)):
        r["instd"] = _correspondent(rng, used)
        used.add(r["instd"])
        if chance(rng, 0.6):
            r["intrmy1"] = _correspondent(rng, used)
            used.add(r["intrmy1"])
            if level >= 4 and chance(rng, 0.5):
                r["intrmy2"] = _correspondent(rng, used)
                used.add(r["intrmy2"])
    if level >= 4 and chance(rng, 0.5):  # multi-hop: this message comes from a second hop
        r["prev"] = _correspondent(rng, used)
        used.add(r["prev"])
        r["instg"] = _correspondent(rng, used)
        used.add(r["instg"])
    if level >= 4 and chance(rng, 0.4):  # cover method with reimbursement agents
        r["rmb_instg"] = _correspondent(rng, used) if chance(rng, 0.7) else None
        if r["rmb_instg"] is None or chance(rng, 0.5):
            r["rmb_instd"] = _correspondent(rng, used | {r["rmb_instg"]})
    return r


def _amounts(rng: np.random.Generator, level: int, ccy: str, debtor_ccy: str) -> dict:
    """Settlement amount, instructed amount, rate, charge bearer and charges."""
    usd = float(np.exp(rng.uniform(np.log(50), np.log(2_000_000 if level > 1 else 50_000))))
    a: dict[str, Any] = {"ccy": ccy, "instd": None, "rate": None, "bearer": "SHAR", "charges": []}
    base = quantize(Decimal(str(round(usd / USD_VALUE[ccy], 3))), ccy)
    settle = max(base, Decimal(1))
    if level >= 3 and debtor_ccy != ccy and chance(rng, 0.6):
        rate = USD_VALUE[debtor_ccy] / USD_VALUE[ccy] * float(rng.uniform(0.97, 1.03))
        a["rate"] = Decimal(f"{rate:.6g}")
        instd = quantize(settle / a["rate"], debtor_ccy)
        a["instd"] = (debtor_ccy, max(instd, Decimal(1)))
        settle = quantize(a["instd"][1] * a["rate"], ccy)
    elif level >= 2 and chance(rng, 0.3):
        a["instd"] = (ccy, settle)
    if level >= 2 and chance(rng, 0.3):
        a["bearer"] = "DEBT"
    if level >= 3 and chance(rng, 0.5):
        a["bearer"] = pick(rng, ("DEBT", "CRED", "SHAR"))
        fee = quantize(Decimal(str(round(float(rng.uniform(5, 60)) / USD_VALUE[ccy], 3))), ccy)
        fee = max(min(fee, quantize(settle / 20, ccy)), Decimal(1))  # at most 5 % of the amount
        two = a["bearer"] != "DEBT" and chance(rng, 0.5)
        fees = [fee, max(quantize(fee / 2, ccy), Decimal(1))] if two else [fee]
        if a["bearer"] == "CRED" and chance(rng, 0.25):  # no deduction: a zero ChrgsInf
            fees = [Decimal(0)]
        a["charges"] = fees
        if a["instd"] is None:
            a["instd"] = (ccy, settle)
        sign = 1 if a["bearer"] == "DEBT" else -1
        settle = settle + sign * sum(fees, Decimal(0))
    a["settle"] = settle
    return a


def _instructions(rng: np.random.Generator, level: int) -> dict[str, Any]:
    """Service level, category purpose and instructions for the creditor and next agent."""
    ins: dict[str, Any] = {"svclvl": None, "ctgy": None, "cdtr_agt": None, "next_cd": None,
                           "next_info": None}
    if level < 3:
        return ins
    if chance(rng, 0.2):
        ins["svclvl"] = "SDVA"
    elif chance(rng, 0.2):
        ins["ctgy"] = pick(rng, ("INTC", "CORT"))
    if chance(rng, 0.35):  # HOLD excludes SDVA, INTC and CORT (network rule D67)
        code = pick(rng, ("PHOB", "TELB") if ins["svclvl"] or ins["ctgy"] else
                    ("HOLD", "PHOB", "TELB"))
        info = pick(rng, ("ID CARD REQUIRED", "CALL +44 20 7946 0958", "PASSPORT NO 12345678"))
        ins["cdtr_agt"] = (code, info if chance(rng, 0.6) else None)
    if chance(rng, 0.2):
        ins["next_cd"] = pick(rng, ("PHOA", "TELA"))
    if chance(rng, 0.3):
        ins["next_info"] = pick(rng, names.NEXT_AGENT_INFO)
    return ins


def _remittance(rng: np.random.Generator, level: int) -> dict[str, Any] | None:
    """Remittance information (none at L1): one unstructured text of at most 140 characters
    (CBPR+ allows a single Ustrd) or, at L3+, structured (invoice number and/or creditor
    reference; CBPR+ allows one form or the other)."""
    if level == 1 or chance(rng, 0.3):
        return None
    n = int(rng.integers(10**4, 10**8))
    if level >= 3 and chance(rng, 0.3):
        inv = f"INV-{n}" if chance(rng, 0.7) else None
        ref = f"RF{int(rng.integers(10, 99))}{n}" if inv is None or chance(rng, 0.4) else None
        return {"strd": {"inv": inv, "ref": ref}}
    day = f"{int(rng.integers(1, 29)):02d}.0{int(rng.integers(1, 10))}.2026"
    pool = names.REMITTANCE_INTL if level >= 3 and chance(rng, 0.4) else names.REMITTANCE
    text = pick(rng, pool).format(n=n, d=day, q=int(rng.integers(1, 5)))
    if level >= 3 and chance(rng, 0.4):
        text += f" BALANCE OF ORDER {n + 17} AND FREIGHT CHARGES, SEE STATEMENT {day}"
    return {"ustrd": text[:140]}


def _regulatory(rng: np.random.Generator, level: int, country: str) -> dict | None:
    if level < 4 or not chance(rng, 0.4):
        return None
    return {"ind": pick(rng, ("DEBT", "CRED", "BOTH")), "ctry": country,
            "cd": str(int(rng.integers(100, 999))),
            "inf": list(names.REG_INFO[: int(rng.integers(1, 4))])}


def draw_payment(rng: np.random.Generator, level: int) -> dict[str, Any]:
    """A random pacs.008 payment (a plain dict; see :func:`to_xml`)."""
    dc, cc = _countries(rng, level)
    dbank, cbank = bank_in(rng, dc), bank_in(rng, cc)
    if dbank.bic == cbank.bic:  # a payment between two accounts of one bank is not an MT103
        cbank = pick(rng, [b for b in banks.OTHER_BANKS if b.bic != dbank.bic and b.country
                           in ("US", "SG", "HK", "CA", "AU")])
    ccy = banks.CURRENCY[cbank.country]
    if level <= 2 and chance(rng, 0.4):
        ccy = pick(rng, ("EUR", "USD"))
    p = {"level": level, "ids": _ids(rng, level), "dbtr_agt": dbank.bic, "cdtr_agt": cbank.bic,
         "dbtr": _party(rng, dbank, level, True), "cdtr": _party(rng, cbank, level, False),
         "amount": _amounts(rng, level, ccy, banks.CURRENCY[dbank.country]),
         "instructions": _instructions(rng, level), "remittance": _remittance(rng, level),
         "regulatory": _regulatory(rng, level, dbank.country),
         "date": f"2026-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}",
         "time": f"{int(rng.integers(6, 20)):02d}:{int(rng.integers(60)):02d}:00",
         "version": pick(rng, VERSIONS[level])}
    p["envelope"] = chance(rng, (0.0, 0.2, 0.3, 0.6)[level - 1])
    p["head"] = pick(rng, GEN_HEAD_VERSIONS) if level >= 3 else "02"
    p["prefix"] = level >= 4 and chance(rng, 0.3)
    p["cdtr_agt_id"] = _agent_id(rng, level, cbank)
    no_bic = p["cdtr_agt_id"] is not None and not p["cdtr_agt_id"]["bic"]
    p["routing"] = _routing(rng, level, dbank.bic, cbank.bic, no_bic)
    cover = p["routing"]["rmb_instg"] or p["routing"]["rmb_instd"]
    # Direct settlement over the sender's account with the receiver (53B), L4.
    p["sttlm_acct"] = banks.make_account(banks.OTHER_BANKS[0], rng)[0] if (
        level >= 4 and not cover and chance(rng, 0.3)) else None
    if p["routing"]["instd"] == cbank.bic and not p["routing"]["intrmy1"]:
        p["instructions"]["next_cd"] = None  # PHON/TELE need a 57a (rule E45)
    p["bics"] = {k: _bic(rng, v) for k, v in _all_bics(p).items()}
    return p


def _agent_id(rng: np.random.Generator, level: int, bank: banks.Bank) -> dict | None:
    """How the creditor agent is identified beyond its BIC (L3+): its clearing-system member
    id next to the BIC, or the member id with name and town and no BIC (CBPR+ wants name
    and address when there is no BIC); None for the BIC alone."""
    clearing = banks.clearing_id(bank)
    if level < 3 or clearing is None or not chance(rng, 0.4):
        return None
    town = bank.city or pick(rng, names.TOWNS[bank.country])[0]
    # CBPR+ text has no accented letters: registry names are written in the X set.
    return {"clr": clearing, "bic": chance(rng, 0.4), "name": clean(bank.name)[:140], "town": town,
            "ctry": bank.country}


def _all_bics(p: dict) -> dict[str, str]:
    r = p["routing"]
    out = {k: v for k, v in r.items() if v}
    out.update(dbtr_agt=p["dbtr_agt"], cdtr_agt=p["cdtr_agt"])
    return out


# --- XML ----------------------------------------------------------------------------------


def agent(tag: str, bic: str, ident: dict | None = None) -> str:
    """A ``BranchAndFinancialInstitutionIdentification6``: the BIC, or per ``ident`` (see
    :func:`_agent_id`) a clearing member id with the BIC or with name and address."""
    if ident is None:
        return el(tag, el("FinInstnId", text("BICFI", bic)))
    code, member = ident["clr"]
    parts = [text("BICFI", bic)] if ident["bic"] else []
    parts.append(el("ClrSysMmbId", el("ClrSysId", text("Cd", code)), text("MmbId", member)))
    if not ident["bic"]:
        parts += [text("Nm", ident["name"]),
                  el("PstlAdr", text("TwnNm", ident["town"]), text("Ctry", ident["ctry"]))]
    return el(tag, el("FinInstnId", *parts))


def account(tag: str, party: dict) -> str:
    acct = party["account"]
    body = text("IBAN", acct) if party["iban"] else el("Othr", text("Id", acct))
    return el(tag, el("Id", body))


def party_xml(tag: str, party: dict) -> str:
    """A ``PartyIdentification135``: name, postal address and AnyBIC."""
    parts = [text("Nm", party["name"])]
    adr = party["address"]
    if adr is not None:  # structured elements first, AdrLine last (the XSD's order)
        keys = ("StrtNm", "BldgNb", "PstCd", "TwnNm", "Ctry")
        parts.append(el("PstlAdr", *(text(k, adr[k]) for k in keys if adr.get(k)),
                        *(text("AdrLine", line) for line in adr.get("AdrLine", ()))))
    if party["anybic"]:
        parts.append(el("Id", el("OrgId", text("AnyBIC", party["anybic"]))))
    return el(tag, *parts)


def _amount(tag: str, ccy: str, value: Decimal) -> str:
    return text(tag, xml_amount(value, ccy), Ccy=ccy)


def _group_header(p: dict) -> str:
    b, r = p["bics"], p["routing"]
    sttlm = [text("SttlmMtd", "COVE" if r["rmb_instg"] or r["rmb_instd"] else "INDA")]
    if p.get("sttlm_acct"):
        sttlm.append(el("SttlmAcct", el("Id", el("Othr", text("Id", p["sttlm_acct"])))))
    if r["rmb_instg"]:
        sttlm.append(agent("InstgRmbrsmntAgt", b["rmb_instg"]))
    if r["rmb_instd"]:
        sttlm.append(agent("InstdRmbrsmntAgt", b["rmb_instd"]))
    return el("GrpHdr", text("MsgId", p["ids"]["msg"]),
              text("CreDtTm", f"{p['date']}T{p['time']}+00:00"), text("NbOfTxs", "1"),
              el("SttlmInf", *sttlm))


def _payment_type(ins: dict, gpi: bool = False) -> list[str]:
    # SWIFT gpi (G001) comes first: the MT103 -> pacs.008 rules put it before SDVA.
    parts = [el("SvcLvl", text("Cd", "G001"))] if gpi else []
    if ins["svclvl"]:
        parts.append(el("SvcLvl", text("Cd", ins["svclvl"])))
    if ins["ctgy"]:
        parts.append(el("CtgyPurp", text("Cd", ins["ctgy"])))
    return [el("PmtTpInf", *parts)] if parts else []


def _amount_block(p: dict) -> list[str]:
    a, b = p["amount"], p["bics"]
    out = [_amount("IntrBkSttlmAmt", a["ccy"], a["settle"]), text("IntrBkSttlmDt", p["date"])]
    out += _settlement_times(p)
    if a["instd"]:
        out.append(_amount("InstdAmt", *a["instd"]))
    if a["rate"] is not None:
        out.append(text("XchgRate", f"{a['rate']:f}"))
    out.append(text("ChrgBr", a["bearer"]))
    # Charges are taken by the instructing agent (71F) or owed to the receiver (71G).
    by = b["instd"] if a["bearer"] == "DEBT" else b["instg"]
    out += [el("ChrgsInf", _amount("Amt", a["ccy"], c), agent("Agt", by)) for c in a["charges"]]
    return out


def _settlement_times(p: dict) -> list[str]:
    """SttlmTmIndctn (the debit and credit times at the central banks) and SttlmTmReq (the
    CLS time) of ``p["times"]`` (see :func:`draw_gpi_and_times`); none for most payments."""
    times = p.get("times") or {}
    indctn = [text(tag, f"{p['date']}T{times[code]}")
              for tag, code in (("DbtDtTm", "SNDTIME"), ("CdtDtTm", "RNCTIME")) if code in times]
    out = [el("SttlmTmIndctn", *indctn)] if indctn else []
    return out + ([el("SttlmTmReq", text("CLSTm", times["CLSTIME"]))]
                  if "CLSTIME" in times else [])


def _agents_block(p: dict) -> list[str]:
    b = p["bics"]
    out = [agent("PrvsInstgAgt1", b["prev"])] if "prev" in b else []
    out += [agent("InstgAgt", b["instg"]), agent("InstdAgt", b["instd"])]
    out += [agent(t, b[k]) for t, k in (("IntrmyAgt1", "intrmy1"), ("IntrmyAgt2", "intrmy2"))
            if k in b]
    return out


def _tail_block(p: dict) -> list[str]:
    ins, out = p["instructions"], []
    if ins["cdtr_agt"]:
        code, info = ins["cdtr_agt"]
        out.append(el("InstrForCdtrAgt", text("Cd", code), *([text("InstrInf", info)] if info
                                                              else [])))
    if ins["next_cd"]:
        out.append(el("InstrForNxtAgt", text("Cd", ins["next_cd"])))
    if ins["next_info"]:
        out.append(el("InstrForNxtAgt", text("InstrInf", ins["next_info"])))
    reg = p["regulatory"]
    if reg:
        dtls = el("Dtls", text("Ctry", reg["ctry"]), text("Cd", reg["cd"]),
                  *(text("Inf", i) for i in reg["inf"]))
        out.append(el("RgltryRptg", text("DbtCdtRptgInd", reg["ind"]), dtls))
    rmt = p["remittance"]
    if rmt and "ustrd" in rmt:
        out.append(el("RmtInf", text("Ustrd", rmt["ustrd"])))
    elif rmt:
        out.append(el("RmtInf", el("Strd", *_structured(rmt["strd"]))))
    return out


def _structured(strd: dict) -> list[str]:
    """An invoice reference (CINV) and/or a structured creditor reference (SCOR)."""
    out = []
    if strd["inv"]:
        out.append(el("RfrdDocInf", el("Tp", el("CdOrPrtry", text("Cd", "CINV"))),
                      text("Nb", strd["inv"])))
    if strd["ref"]:
        out.append(el("CdtrRefInf", el("Tp", el("CdOrPrtry", text("Cd", "SCOR"))),
                      text("Ref", strd["ref"])))
    return out


def document_xml(p: dict) -> str:
    """The pacs.008.001.08 ``Document`` of payment ``p``."""
    ids, b = p["ids"], p["bics"]
    pmt_id = el("PmtId", text("InstrId", ids["instr"]), text("EndToEndId", ids["e2e"]),
                text("TxId", ids["tx"]), text("UETR", ids["uetr"]))
    tx = el("CdtTrfTxInf", pmt_id, *_payment_type(p["instructions"], p.get("gpi", False)),
            *_amount_block(p),
            *_agents_block(p), party_xml("Dbtr", p["dbtr"]), account("DbtrAcct", p["dbtr"]),
            agent("DbtrAgt", b["dbtr_agt"]), agent("CdtrAgt", b["cdtr_agt"], p["cdtr_agt_id"]),
            party_xml("Cdtr", p["cdtr"]), account("CdtrAcct", p["cdtr"]), *_tail_block(p))
    return el("Document", el("FIToFICstmrCdtTrf", _group_header(p), tx),
              xmlns=PACS_NS + p["version"])


def app_header_xml(p: dict) -> str:
    """A business application header (head.001.001.02-.04; CBPR+ business service)."""
    b = p["bics"]
    fi = lambda tag, bic: el(tag, el("FIId", el("FinInstnId", text("BICFI", bic))))  # noqa: E731
    return el("AppHdr", fi("Fr", b["instg"]), fi("To", b["instd"]),
              text("BizMsgIdr", p["ids"]["msg"]),
              text("MsgDefIdr", f"pacs.008.001.{p['version']}"),
              text("BizSvc", "swift.cbprplus.02"), text("CreDt", f"{p['date']}T{p['time']}Z"),
              xmlns=HEAD_NS + p["head"])


def prefixed(xml: str, prefix: str) -> str:
    """``xml`` with every element name and its default namespace declaration prefixed."""
    return re.sub(r"<(/?)(\w)", rf"<\1{prefix}:\2", xml).replace("xmlns=", f"xmlns:{prefix}=", 1)


def to_xml(p: dict) -> str:
    """The message text: the Document, or an envelope of header and Document, with or
    without namespace prefixes."""
    doc, head = document_xml(p), app_header_xml(p) if p["envelope"] else None
    if p["prefix"]:
        doc, head = prefixed(doc, "Doc"), head and prefixed(head, "head")
    if head is not None:
        doc = el("Envelope", head, doc)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + doc + "\n"


def generate(rng: np.random.Generator, level: int, *, rule_card: bool | None = None,
             multi_turn: bool = False) -> IsoTask:
    """A task: a random pacs.008 of ``level`` and its reference MT103."""
    from textgyms.envs.iso20022.translate import translate_with_losses

    xml = to_xml(draw_payment(rng, level))
    card = level < 4 if rule_card is None else rule_card
    reference, losses = translate_with_losses(xml)
    return IsoTask(level, xml, reference, card, multi_turn, tuple(losses))


def generate_mt(rng: np.random.Generator, level: int, *, header: bool = False) -> MtTask:
    """A task of the MT103 -> pacs.008 direction: a random payment of ``level`` as an MT103
    (the reference translation of a generated pacs.008, so every field and network rule
    holds; at L3+ sometimes with {111:001} and 13C, see :func:`draw_gpi_and_times`) and its
    reference pacs.008.001.08 (with ``header``: in an envelope with its head.001.001.02
    business application header)."""
    from textgyms.envs.iso20022.reverse import translate_mt
    from textgyms.envs.iso20022.translate import translate

    p = draw_payment(rng, level)
    p.update(draw_gpi_and_times(rng, p))
    mt = translate(to_xml(p))
    return MtTask(level, mt, translate_mt(mt, header=header))


def draw_gpi_and_times(rng: np.random.Generator, p: dict) -> dict[str, Any]:
    """What only the MT103 -> pacs.008 tasks draw, at L3+: the SWIFT gpi service level
    (``gpi``: {111:001} in the MT103) and 13C time indications (``times``: code -> "HH:MM:SS"
    + UTC offset). Drawn after the payment, from the same ``rng``, so that the pacs.008 ->
    MT103 tasks (which never call this) keep their messages. SNDTIME is a local time at the
    central bank of the sender (the instructing agent), RNCTIME at the receiver's, CLSTIME
    in CLS's time zone (CET); each during business hours."""
    if p["level"] < 3:
        return {}
    out: dict[str, Any] = {"gpi": chance(rng, 0.5)}
    if not chance(rng, 0.35):
        return out
    month = int(p["date"][5:7])
    r = p["routing"]
    places = {"SNDTIME": (r["instg"][4:6], 7), "RNCTIME": (r["instd"][4:6], 9),
              "CLSTIME": (CLS_COUNTRY, 6)}
    codes = [c for c, odds in (("SNDTIME", 0.5), ("RNCTIME", 0.4), ("CLSTIME", 0.25))
             if chance(rng, odds)] or [pick(rng, tuple(places))]
    times = {}
    for code in codes:
        country, first_hour = places[code]
        hour, minute = first_hour + int(rng.integers(0, 9)), int(rng.integers(0, 60))
        times[code] = f"{hour:02d}:{minute:02d}:00{utc_offset(country, month)}"
    out["times"] = times
    return out
