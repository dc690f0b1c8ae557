"""What is material in a payment, declared once for both translation directions.

A material element is one whose change makes the answer describe another payment: who pays,
who is paid, through whom, how much, when, and the references the payment chain keys on
(gpi tracking, recalls, duplicate checks and the customer's reconciliation). Each row of
:data:`MATERIAL` names one element, its place in the MT103 (read by :mod:`verify`), its
ISO element paths in the pacs.008 (read by :mod:`verify_mx`), how it is compared, and the
rule that makes it material. The docs and the tests read the same table.

A score with material errors is capped at :func:`cap`: 0.5 for one, halved for each more,
so an answer about another payment (every identity element wrong) scores at most 0.0625.
Everything not in the table is scored for partial credit only.

:data:`ALTERNATIVES` lists the forms the standards accept as equal, each with its rule; the
verifiers normalise them away before comparing.
"""

from __future__ import annotations

from typing import NamedTuple


class Material(NamedTuple):
    """One material element: ``mt`` is its MT103 place (a field group, "sender",
    "receiver", "121", "50.account", "59.account", "70./ROC/"), ``mx`` its paths under
    ``FIToFICstmrCdtTrf`` (or "AppHdr"); ``kind`` is how it is compared: "value" (equal
    values, added or dropped included), "agent" (the BIC when there is one, else every
    identifying leaf) or "present" (dropping it is material, its wording is not)."""

    key: str
    what: str
    mt: str | None
    mx: tuple[str, ...]
    kind: str
    rule: str


MATERIAL: tuple[Material, ...] = (
    Material("settlement", "interbank settlement amount, currency and value date", "32A",
             ("CdtTrfTxInf/IntrBkSttlmAmt", "CdtTrfTxInf/IntrBkSttlmDt"), "value",
             "how much moves and when (MT103 32A; pacs.008 IntrBkSttlmAmt/Dt)"),
    Material("instructed", "instructed amount and currency", "33B",
             ("CdtTrfTxInf/InstdAmt",), "value",
             "the amount the customer ordered (MT103 33B; pacs.008 InstdAmt)"),
    Material("rate", "exchange rate", "36", ("CdtTrfTxInf/XchgRate",), "value",
             "converts the instructed into the settled amount (36; XchgRate)"),
    Material("charges", "charge bearer", "71A", ("CdtTrfTxInf/ChrgBr",), "value",
             "who pays the charges decides what the beneficiary receives (71A; ChrgBr)"),
    Material("sender", "instructing agent (the sender)", "sender",
             ("CdtTrfTxInf/InstgAgt",), "agent",
             "the bank that sends the instruction (MT block 1; InstgAgt)"),
    Material("receiver", "instructed agent (the receiver)", "receiver",
             ("CdtTrfTxInf/InstdAgt",), "agent",
             "the bank the instruction goes to (MT block 2; InstdAgt)"),
    Material("debtor_agent", "ordering institution (debtor agent)", "52",
             ("CdtTrfTxInf/DbtrAgt",), "agent",
             "the debtor's bank; an absent 52a is the sender (MT103 52a usage rule)"),
    Material("intermediary", "intermediary institution", "56", ("CdtTrfTxInf/IntrmyAgt1",),
             "agent", "the bank the funds pass through (56a; IntrmyAgt1)"),
    Material("creditor_agent", "account with institution (creditor agent)", "57",
             ("CdtTrfTxInf/CdtrAgt",), "agent",
             "the beneficiary's bank; an absent 57a is the receiver (MT103 57a usage rule)"),
    Material("debtor", "ordering customer (name or BIC)", "50",
             ("CdtTrfTxInf/Dbtr/Nm", "CdtTrfTxInf/Dbtr/Id/OrgId/AnyBIC"), "value",
             "who pays; sanctions screening reads the first line after the account as the "
             "name (50a; Dbtr)"),
    Material("debtor_account", "ordering customer's account or party identifier",
             "50.account", ("CdtTrfTxInf/DbtrAcct",), "value",
             "the account debited (50a first line; DbtrAcct)"),
    Material("creditor", "beneficiary customer (name or BIC)", "59",
             ("CdtTrfTxInf/Cdtr/Nm", "CdtTrfTxInf/Cdtr/Id/OrgId/AnyBIC"), "value",
             "who is paid (59a; Cdtr)"),
    Material("creditor_account", "beneficiary's account", "59.account",
             ("CdtTrfTxInf/CdtrAcct",), "value", "the account credited (59a first line; CdtrAcct)"),
    Material("uetr", "unique end-to-end transaction reference (UETR)", "121",
             ("CdtTrfTxInf/PmtId/UETR",), "value",
             "gpi tracking, recalls and duplicate checks key on it; CBPR+ makes it mandatory "
             "({121:}; PmtId/UETR)"),
    Material("end_to_end", "end-to-end reference", "70./ROC/",
             ("CdtTrfTxInf/PmtId/EndToEndId",), "value",
             "the ordering customer's reference, returned to it for reconciliation (70 /ROC/; "
             "PmtId/EndToEndId)"),
    Material("remittance", "remittance information", "70", ("CdtTrfTxInf/RmtInf",), "present",
             "what the payment settles; dropping it leaves the beneficiary unable to "
             "reconcile (70; RmtInf)"),
    Material("header", "business application header, when present", None, ("AppHdr",),
             "value", "CBPR+ routes on the header: its From, To, BizMsgIdr and MsgDefIdr "
             "must be those of the message (head.001 usage)"),
)

MT_MATERIAL = tuple(m for m in MATERIAL if m.mt is not None)
MX_MATERIAL = tuple(m for m in MATERIAL if m.mx)
BASE_CAP = 0.5

# Forms the standards accept as equal (normalised away by the verifiers), with the rule.
ALTERNATIVES: tuple[tuple[str, str, str], ...] = (
    ("both", "a BIC8 and the same BIC8 + 'XXX' name the same institution, in every field",
     "ISO 9362: branch code XXX is the primary office"),
    ("mt", "no 52a, or a 52A naming the sender", "MT103 field 52a usage rule: absent, the "
     "ordering institution is the Sender"),
    ("mt", "no 57a, or a 57A naming the receiver", "MT103 field 57a usage rule: absent, the "
     "account with institution is the Receiver"),
    ("mt", "a //clearing party identifier next to a BIC in option A, or none",
     "MT103 52A/56A/57A format: [/1!a][/34x] optional before the BIC"),
    ("mt", "any wrapping of 70, 72 and 77B text into lines; a '//' continuation anywhere",
     "MT103 70 (4*35x), 72/77B narrative: lines are a width limit, not content"),
    ("mt", "the /CODE/ segments of 72 in any order",
     "MT103 field 72: each code starts an instruction of its own"),
    ("mt", "a 50F name continued on a second 1/ line, or cut with '+'",
     "MT103 50F usage rule: line 1/ may repeat for a long name"),
    ("mt", "block 2 in input (I103) or output (O103) form", "FIN header formats"),
    ("mt", "'1500,' and '1500,00'", "SWIFT d format: the decimal comma, digits optional"),
    ("mx", "an AppHdr + Document envelope for a Document-only task (header right)",
     "CBPR+: every message travels with its head.001 business application header"),
    ("mx", "any wrapping of AdrLine, Ustrd and Inf sequences",
     "pacs.008: repeated Max35/140Text lines are one text"),
    ("mx", "amounts and rates in any decimal form ('1500' = '1500.00')",
     "ISO 20022 DecimalNumber"),
    ("mx", "free text (names, addresses, remittance) in any letter case",
     "CBPR+ character set; codes and identifiers are compared as the schema types them"),
    ("mx", "GrpHdr/CreDtTm and AppHdr/CreDt of any time", "a translation has no clock"),
    ("mx", "for a 50F /NOTPROVIDED: no DbtrAcct, or DbtrAcct/Id/Othr/Id NOTPROVIDED",
     "MT103 50F: line 1 is mandatory, /NOTPROVIDED when there is no account; the CBPR+ "
     "pacs.008 DbtrAcct is optional"),
)


def cap(n_errors: int) -> float:
    """The highest score an answer with ``n_errors`` material errors can get."""
    return 1.0 if n_errors <= 0 else BASE_CAP ** n_errors
