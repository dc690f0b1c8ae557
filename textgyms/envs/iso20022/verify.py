"""Scoring an MT103 answer against the reference translation, field by field.

* 0 when the answer does not parse as an MT message (:func:`mt103.parse`).
* A format gate: 1.0 when the answer passes :func:`mt103.validate`, 0.5 when it parses but
  breaks a format or network rule.
* Content: the weighted mean of per-field scores over the fields of the reference (see
  ``WEIGHTS``): exact for 20, 121, the gpi {111:} (only when the reference has one) and the
  header BICs (BIC8 = BIC11 "XXX"); agents by option and BIC (A; a //clearing line next to
  the BIC is optional) or by their lines (C, D);
  thirds for 32A (date, currency, amount compared numerically); halves for 33B/71G
  (currency, amount); numeric for 36; multiset F1 for 23E and 71F. Free-text fields are
  compared in order (line order matters): 50a/59a lines (option F by numbered part, so a
  name continued on a second "1/" line equals one cut with "+"; a wrong option letter caps
  the field at 0.5), 70 as one text (any wrapping into lines is valid), 72 and 77B as
  code segments ("//" continuation lines joined to their code; the segments in any order).
* Precision: every tag the reference does not have, and every extra occurrence of a tag, is
  a false positive: content x ``n_ref / (n_ref + extras)``, so emitting every optional tag
  ("hedging") costs score.
* Accepted alternatives (:data:`material.ALTERNATIVES`): an absent 52a is the sender and an
  absent 57a the receiver (the MT103 usage rules), so naming them in 52A/57A is equal;
  BIC8 = BIC11 "XXX" in every field and header.
* Line order: where the lines of 50a, 59a or 70 are those of the reference in another
  order, or a 72/77B continuation line has moved to another code, the field says something
  else (screening reads the first line as the name,
  remittance text reversed is another text): the score is capped at ``ORDER_CAP``.
* Material errors (the MT column of :data:`material.MATERIAL`, shared with the pacs.008
  direction: 32A, 33B, 36, 71A, sender, receiver, 52a, 56a, 57a, the 50a/59a name or BIC
  and account, the UETR, the /ROC/ reference, 70 dropped) cap the score at
  :func:`material.cap` (0.5, halved for each more). A 50a/59a name of dots (or other
  placeholders, :func:`charset.placeholder_only`) is always a material error: it names no
  party, even where a lossy reference has the same dots. They are listed in the ``material``
  part (1.0 when there is none) and in the feedback.

Score = min(gate x content x precision, cap); solved means score 1.0.
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal, InvalidOperation

from textgyms.core import Verdict
from textgyms.envs.iso20022.charset import placeholder_only
from textgyms.envs.iso20022.material import MT_MATERIAL, cap
from textgyms.envs.iso20022.mt103 import (
    Message,
    base_tag,
    parse,
    parse_error,
    parties,
    service_type,
    uetr,
    validate,
)

WEIGHTS = {"sender": 1.0, "receiver": 1.0, "121": 1.0, "20": 1.0, "23B": 0.5, "23E": 1.0,
           "32A": 3.0, "33B": 1.0, "36": 1.0, "50": 2.0, "52": 1.0, "53": 1.0, "54": 1.0,
           "55": 1.0, "56": 1.0, "57": 1.0, "59": 2.0, "70": 1.5, "71A": 1.0, "71F": 1.0,
           "71G": 1.0, "72": 1.0, "77B": 1.0, "13C": 0.5, "26T": 0.5, "77T": 0.5, "51A": 0.5,
           "111": 0.5}
WRONG_OPTION_CAP = 0.5
ORDER_CAP = 0.75
ORDERED = ("50", "59", "70", "72", "77B")
REPEATABLE_GROUPS = ("23E", "71F", "13C")
_CODE = re.compile(r"/[A-Z0-9]{2,10}/")


def number(text: str) -> Decimal | None:
    """A SWIFT ``d`` number ("1234,5") as a Decimal, or None."""
    try:
        return Decimal(text.strip().replace(",", "."))
    except (InvalidOperation, ValueError):
        return None


def bic_key(text: str | None) -> str:
    """The BIC on the last line of an option-A field, in its 11-character form."""
    line = (text or "").strip().split("\n")[-1].strip().upper()
    return line + "XXX" if len(line) == 8 else line


def norm_lines(text: str) -> list[str]:
    """Lines compared case-insensitively, with surrounding and repeated blanks ignored."""
    return [" ".join(line.split()).upper() for line in text.split("\n") if line.strip()]


def lcs_f1(ref: list, cand: list) -> float:
    """2 x longest common subsequence / (len(ref) + len(cand)): F1 that respects order."""
    if not ref and not cand:
        return 1.0
    prev = [0] * (len(cand) + 1)
    for a in ref:
        row = [0]
        for j, b in enumerate(cand):
            row.append(prev[j] + 1 if a == b else max(prev[j + 1], row[j]))
        prev = row
    return 2 * prev[-1] / (len(ref) + len(cand))


def squash(text: str) -> str:
    """Upper case without any whitespace: equal for every wrapping of the same text."""
    return "".join(text.split()).upper()


def same_text(ref: str, cand: str) -> bool:
    """Equal texts, or both cut ("+") at different points of the same text."""
    if ref == cand:
        return True
    if ref.endswith("+") and cand.endswith("+"):
        return ref[:-1].startswith(cand[:-1]) or cand[:-1].startswith(ref[:-1])
    if ref.endswith("+"):  # the candidate carries on where the reference was cut
        return cand.startswith(ref[:-1])
    return False


_BIC_SEGMENT = re.compile(r"/(?:INS|INTA)/([A-Z0-9]{8})")


def segments(value: str) -> list[str]:
    """72/77B as code segments: a "//" line continues the segment before it; the BIC of an
    /INS/ or /INTA/ segment in its 11-character form (BIC8 = BIC8 + "XXX")."""
    out: list[str] = []
    for line in value.split("\n"):
        line = line.strip()
        if line.startswith("//") and out:
            out[-1] += line[2:]
        elif line:
            out.append(line)
    return [squash(s) + ("XXX" if _BIC_SEGMENT.fullmatch(squash(s)) else "") for s in out]


def numbered(value: str) -> dict[str, str]:
    """50F/59F by part: "id" (the /account or identifier line) and each line number, the
    lines of one number joined (a name may go on over several "1/" lines)."""
    out: dict[str, str] = {}
    for line in value.split("\n"):
        m = re.fullmatch(r"\s*([1-8])/(.*)", line)
        key, text = (m.group(1), m.group(2)) if m else ("id", line)
        out[key] = out.get(key, "") + squash(text)
    return out


def party_score(rtag: str, rval: str, ctag: str, cval: str) -> float:
    """50a/59a: in order, by numbered part for option F; wrong option capped."""
    if rtag[2:] == "F" and ctag == rtag:
        r, c = numbered(rval), numbered(cval)
        return sum(same_text(v, c.get(k, "")) for k, v in r.items()) / max(len(r), len(c))
    if rtag[2:] == "A" and ctag == rtag:  # the BIC in either form, after the same account
        return (0.5 * (account_line(rval) == account_line(cval))
                + 0.5 * (bic_key(rval) == bic_key(cval)))
    f1 = lcs_f1(norm_lines(rval), norm_lines(cval))
    return f1 if rtag == ctag else min(f1, WRONG_OPTION_CAP)


def agent_score(rtag: str, rval: str, ctag: str, cval: str) -> float:
    """52a-57a: option A by BIC (an extra or missing //clearing line is equivalent), other
    options by their lines in order."""
    if rtag != ctag:
        return 0.0
    if rtag.endswith("A"):
        return float(bic_key(rval) == bic_key(cval))
    return lcs_f1(norm_lines(rval), norm_lines(cval))


def line_f1(ref: list[str], cand: list[str]) -> float:
    """F1 of the multisets of lines."""
    if not ref and not cand:
        return 1.0
    common = sum((Counter(ref) & Counter(cand)).values())
    return 0.0 if common == 0 else 2 * common / (len(ref) + len(cand))


def ccy_amount(ref: str, cand: str) -> float:
    """Half for the currency, half for the amount (numeric)."""
    a, b = number(ref[3:]), number(cand[3:])
    return 0.5 * (ref[:3] == cand[:3]) + 0.5 * (a is not None and a == b)


def score_32a(ref: str, cand: str) -> tuple[float, dict[str, float]]:
    """Thirds: value date, currency, amount."""
    a, b = number(ref[9:]), number(cand[9:])
    parts = {"32A.date": float(ref[:6] == cand[:6]), "32A.ccy": float(ref[6:9] == cand[6:9]),
             "32A.amount": float(a is not None and a == b)}
    return sum(parts.values()) / 3, parts


def groups(msg: Message) -> dict[str, list[tuple[str, str]]]:
    """Fields by option group, in order ("50" -> [("50K", value)])."""
    out: dict[str, list[tuple[str, str]]] = {}
    for tag, value in msg.fields:
        out.setdefault(base_tag(tag), []).append((tag, value))
    return out


def field_score(group: str, ref: list[tuple[str, str]], cand: list[tuple[str, str]]) -> float:
    """The score of one option group of the reference (``cand`` may be empty)."""
    if not cand:
        return 0.0
    (rtag, rval), (ctag, cval) = ref[0], cand[0]
    if group in REPEATABLE_GROUPS:
        if group == "71F":
            key = lambda v: (v[:3], number(v[3:]))  # noqa: E731
            return line_f1([key(v) for _, v in ref], [key(v) for _, v in cand])
        return line_f1([v.upper() for _, v in ref], [v.upper() for _, v in cand])
    if group == "32A":
        return score_32a(rval, cval)[0]
    if group in ("33B", "71G"):
        return ccy_amount(rval, cval)
    if group == "36":
        return float(number(rval) is not None and number(rval) == number(cval))
    if group in ("52", "53", "54", "55", "56", "57"):
        return agent_score(rtag, rval, ctag, cval)
    if group in ("50", "59"):
        return party_score(rtag, rval, ctag, cval)
    if group == "70":
        return 1.0 if same_text(squash(rval), squash(cval)) else 0.5 * lcs_f1(
            _CODE.split(squash(rval)), _CODE.split(squash(cval)))
    if group in ("72", "77B"):  # each /CODE/ segment stands alone: their order is free
        return line_f1(segments(rval), segments(cval))
    return float(rval.strip() == cval.strip())


def account_line(value: str | None) -> str | None:
    """The first line of a 50a/59a when it is the account or (50F) the party identifier:
    "/account" or "CODE/CC/identifier" (None without one)."""
    first = (value or "").split("\n")[0].strip()
    if first == "/NOTPROVIDED":  # 50F's placeholder when there is neither (no account)
        return None
    return squash(first) if re.match(r"/|[A-Z]{4}/[A-Z]{2}/", first) else None


def party_name(tag: str, value: str) -> str:
    """Who a 50a/59a names: the BIC (option A, in its 11-character form), the "1/" name
    lines joined (option F), else the first line after the account."""
    if tag.endswith("A"):
        return "BIC " + bic_key(value)
    if tag.endswith("F"):
        return numbered(value).get("1", "")
    lines = value.split("\n")
    return squash(lines[1] if account_line(value) is not None and len(lines) > 1 else lines[0])


def agent_key(tag: str, value: str) -> str:
    """Which bank a 52a-57a names: the BIC (option A), else its lines."""
    return bic_key(value) if tag.endswith("A") else "|".join(norm_lines(value))


def roc(value: str | None) -> str | None:
    """The /ROC/ reference on the first line of a 70 (None without one)."""
    m = re.match(r"/ROC/(.*)", (value or "").split("\n")[0])
    return squash(m.group(1)) if m else None


def material_value(place: str, g: dict, heads: tuple) -> object:
    """The comparable value of the material element at MT103 ``place`` (see
    :data:`material.MATERIAL`) in the groups ``g`` of a message with header BICs ``heads``."""
    if place in ("sender", "receiver"):
        head = heads[place == "receiver"]
        return bic_key(head) if head else None
    if place == "121":
        return heads[2]
    group = place.split(".")[0]
    field = (g.get(group) or [None])[0]
    if field is None:
        return None
    tag, value = field
    if place.endswith(".account"):
        return account_line(value)
    if place == "70./ROC/":
        return roc(value)
    if place == "70":  # the remittance text: what is left beside the /ROC/ reference
        rest = value.split("\n")[1:] if roc(value) is not None else value.split("\n")
        return squash("".join(rest)) or None
    if place in ("50", "59"):
        return party_name(tag, value)
    if place in ("52", "56", "57"):
        return agent_key(tag, value)
    if place == "32A":
        return value[:9], number(value[9:])
    if place in ("33B",):
        return value[:3], number(value[3:])
    return number(value) if place == "36" else value.strip()


def material_errors(rg: dict, cg: dict, ref_heads: tuple, cand_heads: tuple) -> list[str]:
    """The MT103 places of the material elements the candidate gets wrong."""
    wrong = []
    for row in MT_MATERIAL:
        r, c = material_value(row.mt, rg, ref_heads), material_value(row.mt, cg, cand_heads)
        if row.kind == "present":
            bad = r is not None and c is None
        elif row.mt in ("50", "59") and placeholder_only(c):
            bad = True  # dots for a name say nothing of the party, whatever the reference
        elif row.mt in ("50", "59") and r is not None and c is not None:
            bad = not (same_text(r, c) or same_text(c, r))  # a name cut with "+" is the name
        else:
            bad = r != c
        if bad:
            wrong.append(row.mt)
    return wrong


def order_errors(rg: dict, cg: dict) -> list[str]:
    """Ordered fields whose lines are the reference's in another order."""
    out = []
    for group in ORDERED:
        if group in rg and group in cg:
            r, c = norm_lines(rg[group][0][1]), norm_lines(cg[group][0][1])
            if group in ("72", "77B"):  # code segments in any order are the same text
                r, c = segments(rg[group][0][1]), segments(cg[group][0][1])
                if Counter(r) != Counter(c) and Counter(norm_lines(rg[group][0][1])) == Counter(
                        norm_lines(cg[group][0][1])):
                    out.append(group)
            elif r != c and Counter(r) == Counter(c):
                out.append(group)
    return out


def with_implied_agents(g: dict, sender: str | None, receiver: str | None) -> dict:
    """The groups with the agents an MT103 leaves implied written out: no 52a is the
    sender, no 57a the receiver (the MT103 field 52a and 57a usage rules)."""
    out = dict(g)
    if "52" not in out and sender:
        out["52"] = [("52A", sender)]
    if "57" not in out and receiver:
        out["57"] = [("57A", receiver)]
    return out


def content(ref: Message, cand: Message) -> tuple[float, dict[str, float], int, list[str]]:
    """Weighted per-field content score, the parts, the number of false positives and the
    material errors (order errors among them, as "order 70")."""
    parts: dict[str, float] = {}
    (rs, rr), (cs, cr) = parties(ref), parties(cand)
    parts["sender"] = float(cs is not None and bic_key(cs) == bic_key(rs))
    parts["receiver"] = float(cr is not None and bic_key(cr) == bic_key(rr))
    parts["121"] = float(uetr(cand) == uetr(ref))
    if service_type(ref) is not None:  # {111:001}: a gpi payment (scored only when there)
        parts["111"] = float(service_type(cand) == service_type(ref))
    rg = with_implied_agents(groups(ref), rs, rr)
    cg = with_implied_agents(groups(cand), cs, cr)
    for group, fields in rg.items():
        parts[group] = field_score(group, fields, cg.get(group, []))
    if "32A" in rg and "32A" in cg:
        parts.update(score_32a(rg["32A"][0][1], cg["32A"][0][1])[1])
    material = material_errors(rg, cg, (rs, rr, uetr(ref)), (cs, cr, uetr(cand)))
    material += [f"order {g}" for g in order_errors(rg, cg)]
    total = sum(WEIGHTS.get(k, 1.0) for k in parts if "." not in k)
    got = sum(WEIGHTS.get(k, 1.0) * v for k, v in parts.items() if "." not in k)
    extras = sum(len(v) for g, v in cg.items() if g not in rg)
    extras += sum(max(0, len(v) - 1) for g, v in cg.items() if g in rg and g not in
                  REPEATABLE_GROUPS)
    parts["material"] = 0.0 if any(not m.startswith("order") for m in material) else 1.0
    return got / total, parts, extras, material


def limit(material: list[str]) -> float:
    """The cap of a candidate's material and line-order errors."""
    n = sum(not m.startswith("order") for m in material)
    return min(cap(n), ORDER_CAP if len(material) > n else 1.0)


def score(reference_mt: str, candidate_mt: str) -> Verdict:
    """Score ``candidate_mt`` against ``reference_mt`` (see the module docstring)."""
    ref = parse(reference_mt)
    if ref is None:
        raise ValueError("the reference is not a parseable MT message")
    cand = parse(candidate_mt) if isinstance(candidate_mt, str) else None
    if cand is None:
        return Verdict(0.0, False, "The answer is not an MT message (blocks {1:}{2:}{3:}{4:...-}"
                       f"): {parse_error(candidate_mt)}.", {"format": 0.0}, "format")
    issues = validate(cand)
    gate = 0.5 if issues else 1.0
    value, parts, extras, material = content(ref, cand)
    n_ref = len(ref.fields) + 3
    precision = n_ref / (n_ref + extras)
    total = min(gate * value * precision, limit(material))
    parts = {"format": gate, "content": value, "precision": precision, **parts}
    solved = total >= 1.0 - 1e-9
    wrong = sorted(k for k, v in parts.items() if v < 1.0 and k not in ("format", "content",
                                                                       "precision", "material"))
    lines = [f"Score {total:.3f}: format {gate}, content {value:.3f}, precision {precision:.3f}."]
    if material:
        names = {m.mt: m.what for m in MT_MATERIAL}
        lines.append(f"Material errors (score capped at {limit(material)}): " + ", ".join(
            f"{m} ({names.get(m, 'lines out of order')})" for m in material))
    if issues:
        lines.append("Validation errors: " + "; ".join(str(i) for i in issues[:8]))
    if wrong:
        lines.append("Fields not matching the reference: " + ", ".join(wrong))
    error = None if solved else ("invalid" if issues else "wrong")
    return Verdict(1.0 if solved else total, solved, "\n".join(lines), parts, error)
