"""Scoring a pacs.008 answer (the MT103 -> pacs.008 direction) against the reference.

* 0 when the answer is not well-formed XML with a pacs.008 ``Document`` (``format``).
* A schema gate: 1.0 when the Document is valid against the XSD of its version, else 0.5.
* Content: the leaves of both documents as ISO element paths (``CdtTrfTxInf/Cdtr/Nm``) with
  normalised values (BIC8 = BIC11 "XXX", amounts and rates numeric, text case- and
  blank-insensitive, the lines of one AdrLine, Ustrd or Inf sequence joined so any wrapping
  is valid). Each top-level group of the reference (``Dbtr``, ``CdtrAcct``,
  ``IntrBkSttlmAmt``...) scores the F1 of its path/value pairs; content is their weighted
  mean (``WEIGHTS``). ``GrpHdr/CreDtTm`` is not scored (a translation has no clock).
* Precision: every group the reference does not have lowers the score, as in the MT103
  direction.
* Material errors cap the score at 0.5: a wrong settlement amount, currency or date,
  instructed amount, exchange rate, charge bearer, creditor account, creditor agent or
  intermediary agent.
* A business application header: when the reference has one (the ``header`` variant), its
  ``AppHdr`` leaves are one more group (``AppHdr/Fr/FIId/FinInstnId/BICFI``...; ``CreDt`` not
  scored); a header the reference does not have is an extra group.

Score = min(gate x content x precision, cap); solved means 1.0.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from textgyms.core import Verdict

WEIGHTS = {"IntrBkSttlmAmt": 3.0, "IntrBkSttlmDt": 2.0, "Dbtr": 2.0, "Cdtr": 2.0,
           "CdtrAcct": 2.0, "DbtrAcct": 1.5, "RmtInf": 1.5, "GrpHdr": 0.5}
MATERIAL = ("IntrBkSttlmAmt", "IntrBkSttlmDt", "InstdAmt", "XchgRate", "ChrgBr", "CdtrAcct",
            "CdtrAgt", "IntrmyAgt1")
MATERIAL_CAP = 0.5
JOINED = ("AdrLine", "Ustrd", "Inf", "AddtlRmtInf")
NUMERIC = ("Amt", "IntrBkSttlmAmt", "InstdAmt", "XchgRate")
UNSCORED = ("GrpHdr/CreDtTm", "AppHdr/CreDt")
MAX_CHARS = 200_000


def _value(leaf: str, raw: str) -> str:
    """The normalised text of a leaf element named ``leaf``."""
    value = " ".join(raw.split()).upper()
    if leaf in NUMERIC:
        try:
            return str(Decimal(value).normalize())
        except InvalidOperation:
            return value
    if len(value) == 8 and leaf in ("BICFI", "AnyBIC", "BIC"):
        return value + "XXX"
    return value


def _walk(node, path: str, out: list[tuple[str, str]]) -> None:
    # The hot loop of the verifier (about a hundred elements a message): one pass over the
    # children reading each tag once, local names cut with find, the leaf name passed down.
    for name, val in sorted(node.items()):
        out.append((f"{path}@{name}", val.strip().upper()))
    joined: dict[str, list[str]] = {}
    leaf = True
    for kid in node:
        tag = kid.tag
        if not isinstance(tag, str):  # comments and processing instructions
            continue
        leaf = False
        local = tag[tag.find("}") + 1:]
        if local in JOINED and not len(kid):
            joined.setdefault(local, []).append(kid.text or "")
        else:
            _walk(kid, f"{path}/{local}", out)
    if leaf:
        out.append((path, _value(path[path.rfind("/") + 1:], node.text or "")))
    for local, texts in joined.items():
        out.append((f"{path}/{local}", "".join("".join(texts).split()).upper()))


def leaves(doc, head=None) -> list[tuple[str, str]]:
    """(path under FIToFICstmrCdtTrf, value) of every leaf and attribute of a Document
    (lxml or ElementTree element; namespaces dropped; joined text sequences squashed), and
    of the ``AppHdr`` ``head`` when given (paths under "AppHdr")."""
    out: list[tuple[str, str]] = []
    root = next((k for k in doc if isinstance(k.tag, str)), None)
    if root is not None:
        _walk(root, "", out)
    if head is not None:
        _walk(head, "AppHdr", out)
    return [(p.lstrip("/"), v) for p, v in out if p.lstrip("/") not in UNSCORED]


def group_of(path: str) -> str:
    """The scoring group of a path: the element under CdtTrfTxInf (or GrpHdr)."""
    head, _, rest = path.partition("/")
    if head == "CdtTrfTxInf" and rest:
        return rest.partition("/")[0].partition("@")[0]
    return head.partition("@")[0]


def by_group(pairs: list[tuple[str, str]]) -> dict[str, Counter]:
    """The (path, value) multiset of each scoring group of ``pairs``."""
    grouped: dict[str, Counter] = {}
    for pair in pairs:
        group = group_of(pair[0])
        bag = grouped.get(group)
        if bag is None:
            bag = grouped[group] = Counter()
        bag[pair] = bag.get(pair, 0) + 1
    return grouped


def _f1(ref: Counter, cand: Counter) -> float:
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


@lru_cache(maxsize=256)
def _reference(reference_xml: str) -> dict[str, Counter]:
    """The scoring groups of a reference (cached: an episode scores against one reference,
    a GRPO group many times)."""
    _, doc, head = _root(reference_xml)
    if doc is None:
        raise ValueError("the reference is not a pacs.008 document")
    return by_group(leaves(doc, head))


def score_mx(reference_xml: str, candidate_xml: str) -> Verdict:
    """Score a pacs.008 answer against the reference (see the module docstring)."""
    from textgyms.envs.iso20022.xsd import validate_tree

    rg = _reference(reference_xml)
    ok = isinstance(candidate_xml, str) and len(candidate_xml) <= MAX_CHARS
    root, cand_doc, cand_head = _root(candidate_xml) if ok else (None, None, None)
    if cand_doc is None:
        return Verdict(0.0, False, "The answer is not well-formed XML with a pacs.008 Document.",
                       {"format": 0.0}, "format")
    errors = validate_tree(root)
    gate = 0.5 if errors else 1.0
    cg = by_group(leaves(cand_doc, cand_head))
    empty: Counter = Counter()
    parts = {g: _f1(c, cg.get(g, empty)) for g, c in rg.items()}
    total = sum(WEIGHTS.get(g, 1.0) for g in parts)
    content = sum(WEIGHTS.get(g, 1.0) * v for g, v in parts.items()) / total
    extras = sum(1 for g in cg if g not in rg)
    precision = len(rg) / (len(rg) + extras)
    material = [g for g in MATERIAL if g in rg and parts[g] < 1.0]
    material += [f"{g} added" for g in MATERIAL if g in cg and g not in rg]
    value = gate * content * precision
    if material:
        value = min(value, MATERIAL_CAP)
    solved = value >= 1.0 - 1e-9
    wrong = sorted(g for g, v in parts.items() if v < 1.0)
    lines = [f"Score {value:.3f}: schema {gate}, content {content:.3f}, "
             f"precision {precision:.3f}."]
    if material:
        lines.append(f"Material errors (score capped at {MATERIAL_CAP}): " + ", ".join(material))
    if errors:
        lines.append("XSD errors: " + "; ".join(e[:160] for e in errors[:5]))
    if wrong:
        lines.append("Elements not matching the reference: " + ", ".join(wrong))
    parts = {"format": gate, "content": content, "precision": precision,
             "material": 0.0 if material else 1.0, **parts}
    error = None if solved else ("invalid" if errors else "wrong")
    return Verdict(1.0 if solved else value, solved, "\n".join(lines), parts, error)
