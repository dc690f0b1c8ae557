"""Scoring a pacs.008 answer (the MT103 -> pacs.008 direction) against the reference.

* 0 when the answer is not well-formed XML with a pacs.008 ``Document`` (``format``).
* A schema gate: the network rejects schema-invalid MX, so an answer that is not valid
  against the XSD of its version (and of its header) scores at most ``SCHEMA_GATE`` (0.1);
  the XSD errors are in the feedback.
* Content: the leaves of both documents as ISO element paths (``CdtTrfTxInf/Cdtr/Nm``) with
  normalised values: free text (names, address lines, remittance and instruction texts)
  case- and blank-insensitive, the lines of one AdrLine, Ustrd or Inf sequence joined so
  any wrapping is valid; codes and identifiers (BICs, IBANs, currencies, the UETR,
  references) compared as written, since the schema types them case-sensitively; BIC8 =
  BIC11 "XXX"; amounts and rates numeric. Each top-level group of the reference
  (``Dbtr``, ``CdtrAcct``, ``IntrBkSttlmAmt``...) scores the F1 of its path/value pairs;
  content is their weighted mean (``WEIGHTS``). ``GrpHdr/CreDtTm`` is not scored (a
  translation has no clock).
* Precision: every group the reference does not have lowers the score, as in the MT103
  direction.
* Material errors (the MX column of :data:`material.MATERIAL`, shared with the MT103
  direction) cap the score at :func:`material.cap` (0.5, halved for each more). A party
  name of dots or other placeholders is always one (it names no party).
* Accepted forms (:func:`accepted_forms`): for 50F's "/NOTPROVIDED", no DbtrAcct and a
  DbtrAcct of ``Othr/Id`` NOTPROVIDED are the same answer.
* A business application header: when the reference has one (the ``header`` variant), its
  ``AppHdr`` leaves are one more group (``CreDt`` not scored). A Document-only task also
  accepts an AppHdr + Document envelope at 1.0 (CBPR+ messages travel with a header), but
  a header that is there must be right: From/To the instructing/instructed agents,
  BizMsgIdr the MsgId and MsgDefIdr the Document's message definition.

Score = min(gate x content x precision, cap); solved means 1.0.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from functools import lru_cache

from textgyms.core import Verdict
from textgyms.envs.iso20022.charset import placeholder_only
from textgyms.envs.iso20022.material import MX_MATERIAL, Material, cap

WEIGHTS = {"IntrBkSttlmAmt": 3.0, "IntrBkSttlmDt": 2.0, "Dbtr": 2.0, "Cdtr": 2.0,
           "CdtrAcct": 2.0, "DbtrAcct": 1.5, "RmtInf": 1.5, "GrpHdr": 0.5}
SCHEMA_GATE = 0.1
JOINED = ("AdrLine", "Ustrd", "Inf", "AddtlRmtInf")
NUMERIC = ("Amt", "IntrBkSttlmAmt", "InstdAmt", "XchgRate")
# Free text: compared without letter case. Everything else is a code or an identifier the
# schema types case-sensitively (BICs, IBANs, currency codes, the UETR, references).
FREE_TEXT = frozenset(("Nm", "StrtNm", "BldgNb", "BldgNm", "Flr", "PstBx", "Room", "PstCd",
                       "TwnNm", "TwnLctnNm", "DstrctNm", "CtrySubDvsn", "Dept", "SubDept",
                       "InstrInf", "AddtlInf", "CityOfBirth", "PrvcOfBirth", "Issr",
                       *JOINED))
UNSCORED = ("GrpHdr/CreDtTm", "AppHdr/CreDt")
# 50F's "/NOTPROVIDED" (no account) may be translated by leaving DbtrAcct out or by carrying
# the placeholder as DbtrAcct/Id/Othr/Id: both say the same (see :func:`accepted_forms`).
NO_ACCOUNT = [("CdtTrfTxInf/DbtrAcct/Id/Othr/Id", "NOTPROVIDED")]
# The header leaves that must be right whenever a header is there.
HEADER_KEYS = ("AppHdr/Fr/FIId/FinInstnId/BICFI", "AppHdr/To/FIId/FinInstnId/BICFI",
               "AppHdr/BizMsgIdr", "AppHdr/MsgDefIdr")
MAX_CHARS = 200_000


def _value(leaf: str, raw: str) -> str:
    """The normalised text of a leaf element named ``leaf``."""
    value = " ".join(raw.split())
    if leaf in FREE_TEXT:
        return value.upper()
    if leaf in NUMERIC:
        try:
            return str(Decimal(value).normalize())
        except InvalidOperation:
            return value
    if len(value) == 8 and leaf in ("BICFI", "AnyBIC", "BIC"):
        return value + "XXX"
    return value


def _walk(node, path: str, name: str, out: list[tuple[str, str]]) -> None:
    # The hot loop of the verifier (about fifty elements a message): one pass over the
    # children reading each tag once, local names cut with find, the leaf's name passed down
    # with its path, attributes sorted only where there are any (most elements have none).
    attrs = node.items()
    if attrs:
        for attr, val in sorted(attrs):
            out.append((f"{path}@{attr}", val.strip()))
    joined: dict[str, list[str]] | None = None
    leaf = True
    for kid in node:
        tag = kid.tag
        if tag.__class__ is not str:  # comments and processing instructions
            continue
        leaf = False
        local = tag[tag.find("}") + 1:]
        if local in JOINED and not len(kid):
            if joined is None:
                joined = {}
            joined.setdefault(local, []).append(kid.text or "")
        else:
            _walk(kid, f"{path}/{local}", local, out)
    if leaf:
        out.append((path, _value(name, node.text or "")))
    elif joined is not None:
        for local, texts in joined.items():
            out.append((f"{path}/{local}", "".join("".join(texts).split()).upper()))


def leaves(doc, head=None) -> list[tuple[str, str]]:
    """(path under FIToFICstmrCdtTrf, value) of every leaf and attribute of a Document
    (lxml or ElementTree element; namespaces dropped; joined text sequences squashed), and
    of the ``AppHdr`` ``head`` when given (paths under "AppHdr"; head.001.001.01's ``BIC``
    read as the later versions' ``BICFI``)."""
    out: list[tuple[str, str]] = []
    root = next((k for k in doc if isinstance(k.tag, str)), None)
    if root is not None:
        _walk(root, "", "", out)
    if head is not None:
        top = len(out)
        _walk(head, "AppHdr", "AppHdr", out)
        out[top:] = [(p[:-4] + "/BICFI" if p.endswith("FinInstnId/BIC") else p, v)
                     for p, v in out[top:]]
    return [(p.lstrip("/"), v) for p, v in out if p.lstrip("/") not in UNSCORED]


def accepted_forms(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``pairs`` with the forms the rules accept as equal made one: a DbtrAcct whose only
    leaf is ``Othr/Id`` NOTPROVIDED is no account (the MT103 50F placeholder carried over
    literally, as a published translator writes it), so it is dropped like an absent one."""
    acct = [p for p in pairs if p[0].startswith("CdtTrfTxInf/DbtrAcct/")]
    return [p for p in pairs if p not in NO_ACCOUNT] if acct == NO_ACCOUNT else pairs


# Cached per path: a message has about a hundred leaves on a few hundred distinct paths, met
# again in every message (agent-written paths are bounded by the cache's size).
@lru_cache(maxsize=4096)
def group_of(path: str) -> str:
    """The scoring group of a path: the element under CdtTrfTxInf (or GrpHdr)."""
    head, _, rest = path.partition("/")
    if head == "CdtTrfTxInf" and rest:
        return rest.partition("/")[0].partition("@")[0]
    return head.partition("@")[0]


Bag = dict[tuple[str, str], int]  # a multiset of (path, value) pairs: pair -> its count


def by_group(pairs: list[tuple[str, str]]) -> dict[str, Bag]:
    """The (path, value) multiset of each scoring group of ``pairs``."""
    # Plain dicts, not Counters: a group is compared whole (``_f1``) with dict's own C
    # equality (no count is ever zero, so it is a multiset's equality).
    grouped: dict[str, Bag] = {}
    group_of_ = group_of
    for pair in pairs:
        group = group_of_(pair[0])
        bag = grouped.get(group)
        if bag is None:
            bag = grouped[group] = {}
        bag[pair] = bag.get(pair, 0) + 1
    return grouped


def _f1(ref: Bag, cand: Bag) -> float:
    if ref == cand:  # most groups of a near answer: compared in C, no counting
        return 1.0
    common = sum(min(n, cand.get(k, 0)) for k, n in ref.items())
    total = sum(ref.values()) + sum(cand.values())
    return 1.0 if total == 0 else 2 * common / total


def _root(xml: str):
    """(lxml root, pacs.008 Document, AppHdr or None) of an answer, or (None, None, None)."""
    from textgyms.envs.iso20022.xsd import HEAD_NS, PACS_NS, _find, parse_xml

    try:
        root = parse_xml(xml.strip())
    except ValueError:
        return None, None, None
    doc = _find(root, PACS_NS, "Document")
    head = None if doc is None or doc is root else _find(root, HEAD_NS, "AppHdr")
    return root, doc, head


class _Ref:
    """A reference's scoring groups, its leaves and its version (cached per reference)."""

    __slots__ = ("groups", "pairs", "has_header", "bags")

    def __init__(self, pairs: list[tuple[str, str]], has_header: bool) -> None:
        self.pairs, self.has_header = pairs, has_header
        self.groups = by_group(pairs)
        self.bags = material_bags(pairs)


@lru_cache(maxsize=256)
def _reference(reference_xml: str) -> _Ref:
    """The scoring groups of a reference (cached: an episode scores against one reference,
    a GRPO group many times)."""
    _, doc, head = _root(reference_xml)
    if doc is None:
        raise ValueError("the reference is not a pacs.008 document")
    return _Ref(accepted_forms(leaves(doc, head)), head is not None)


def _version(doc) -> str:
    """"pacs.008.001.NN" of a Document element."""
    return "pacs.008.001." + doc.tag[1:].split("}")[0].rsplit(".", 1)[-1]


def expected_header(ref: _Ref, definition: str) -> list[tuple[str, str]]:
    """The :data:`HEADER_KEYS` leaves a header must have: the reference's own, or for a
    Document-only reference those its Document implies (From/To the instructing and
    instructed agents, BizMsgIdr the MsgId, MsgDefIdr ``definition``)."""
    if ref.has_header:
        return sorted(p for p in ref.pairs if p[0] in HEADER_KEYS)
    found = dict(ref.pairs)
    implied = (found.get("CdtTrfTxInf/InstgAgt/FinInstnId/BICFI"),
               found.get("CdtTrfTxInf/InstdAgt/FinInstnId/BICFI"), found.get("GrpHdr/MsgId"),
               definition)
    return sorted((k, v) for k, v in zip(HEADER_KEYS, implied) if v is not None)


# ISO path prefix -> the material row (key) it belongs to.
_PREFIX = {prefix: row.key for row in MX_MATERIAL for prefix in row.mx}
_DEPTH = max(p.count("/") + 1 for p in _PREFIX)


def material_bags(pairs: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """The (path, value) pairs of each material row (:data:`material.MX_MATERIAL`), sorted:
    a pair belongs to a row when one of the row's paths is its path or a parent of it."""
    out: dict[str, list[tuple[str, str]]] = {}
    for pair in pairs:
        key = _row_of(pair[0])
        if key is not None:
            out.setdefault(key, []).append(pair)
    for bag in out.values():
        bag.sort()
    return out


@lru_cache(maxsize=4096)
def _row_of(path: str) -> str | None:
    """The material row of a leaf's path: the row of its longest prefix that is one of a
    row's paths (see :func:`material_bags`), or None. Cached as :func:`group_of` is."""
    steps = path.partition("@")[0].split("/")
    for n in range(min(len(steps), _DEPTH), 0, -1):
        key = _PREFIX.get("/".join(steps[:n]))
        if key is not None:
            return key
    return None


def _differs(row: Material, ref: list[tuple[str, str]], cand: list[tuple[str, str]]) -> bool:
    """True when ``cand`` gets the material element ``row`` wrong (see :class:`Material`).
    A party name of dots or other placeholders is always wrong: it names no one."""
    if any(p.endswith("/Nm") and placeholder_only(v) for p, v in cand):
        return True
    if row.kind == "present":
        return bool(ref) and not cand
    if row.kind == "agent":
        bics = [sorted(v for p, v in side if p.endswith("/BICFI")) for side in (ref, cand)]
        if bics[0] or bics[1]:
            return bics[0] != bics[1]
    return ref != cand


def material_errors(ref: _Ref, cand: list[tuple[str, str]], has_header: bool,
                    definition: str) -> list[str]:
    """The keys of the material elements (:data:`material.MX_MATERIAL`) ``cand`` gets
    wrong; the header only when the reference or the answer has one."""
    out, bags, empty = [], material_bags(cand), []
    for row in MX_MATERIAL:
        if row.key == "header":
            if (ref.has_header or has_header) and expected_header(ref, definition) != [
                    p for p in bags.get("header", empty) if p[0] in HEADER_KEYS]:
                out.append(row.key)
        elif _differs(row, ref.bags.get(row.key, empty), bags.get(row.key, empty)):
            out.append(row.key)
    return out


def score_mx(reference_xml: str, candidate_xml: str) -> Verdict:
    """Score a pacs.008 answer against the reference (see the module docstring)."""
    return score_mx_report(reference_xml, candidate_xml)[0]


def score_mx_report(reference_xml: str, candidate_xml: str) -> tuple[Verdict, list[str]]:
    """:func:`score_mx` and the answer's XSD errors (the reason of a schema gate)."""
    from textgyms.envs.iso20022.xsd import validate_tree

    ref = _reference(reference_xml)
    ok = isinstance(candidate_xml, str) and len(candidate_xml) <= MAX_CHARS
    root, cand_doc, cand_head = _root(candidate_xml) if ok else (None, None, None)
    if cand_doc is None:
        return Verdict(0.0, False, "The answer is not well-formed XML with a pacs.008 Document.",
                       {"format": 0.0}, "format"), ["not well-formed XML with a pacs.008 Document"]
    errors = validate_tree(root)
    gate = SCHEMA_GATE if errors else 1.0
    pairs = accepted_forms(leaves(cand_doc, cand_head))
    material = material_errors(ref, pairs, cand_head is not None, _version(cand_doc))
    cg = by_group(pairs if ref.has_header else [p for p in pairs if not p[0].startswith(
        "AppHdr")])  # a Document-only task: a header is checked above, not scored as content
    rg, empty = ref.groups, {}
    parts = {g: _f1(c, cg.get(g, empty)) for g, c in rg.items()}
    total = sum(WEIGHTS.get(g, 1.0) for g in parts)
    content = sum(WEIGHTS.get(g, 1.0) * v for g, v in parts.items()) / total
    extras = sum(1 for g in cg if g not in rg)
    precision = len(rg) / (len(rg) + extras)
    value = min(gate * content * precision, cap(len(material)))
    solved = value >= 1.0 - 1e-9
    return Verdict(1.0 if solved else value, solved,
                   _feedback(value, gate, content, precision, material, errors, parts),
                   {"format": gate, "content": content, "precision": precision,
                    "material": 0.0 if material else 1.0, **parts},
                   None if solved else ("invalid" if errors else "wrong")), errors


def _feedback(value: float, gate: float, content: float, precision: float,
              material: list[str], errors: list[str], parts: dict[str, float]) -> str:
    lines = [f"Score {value:.3f}: schema {gate}, content {content:.3f}, "
             f"precision {precision:.3f}."]
    if errors:
        lines.append(f"Not valid against the XSD (score at most {SCHEMA_GATE}): "
                     + "; ".join(e[:160] for e in errors[:5]))
    if material:
        names = {m.key: m.what for m in MX_MATERIAL}
        lines.append(f"Material errors (score capped at {cap(len(material))}): "
                     + ", ".join(f"{k} ({names[k]})" for k in material))
    wrong = sorted(g for g, v in parts.items() if v < 1.0)
    if wrong:
        lines.append("Elements not matching the reference: " + ", ".join(wrong))
    return "\n".join(lines)
