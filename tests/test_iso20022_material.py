"""Scoring classes of the ISO 20022 family, both directions, over every level and several
seeds: the one table of material elements (textgyms.envs.iso20022.material) drives both
verifiers, so a probe per table row must fail; every accepted alternative (with the rule
that allows it) must score 1.0; the reverse direction's schema gate, and the junk floor
(another payment's correct translation)."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import material, xsd
from textgyms.envs.iso20022.generate import generate, generate_mt
from textgyms.envs.iso20022.mt103 import parse, parties, validate_text
from textgyms.envs.iso20022.verify import ORDER_CAP, segments
from textgyms.envs.iso20022.verify_mx import SCHEMA_GATE
from textgyms.seeding import seeded_generator

LEVELS = (1, 2, 3, 4)
SEEDS = (0, 1, 2, 3, 4, 5)
CASES = [(level, seed) for level in LEVELS for seed in SEEDS]
OTHER_BIC = "ZZZZDEZZXXX"  # a BIC no generated payment uses


def forward(level: int, seed: int) -> str:
    return generate(seeded_generator(seed), level).reference


def reverse(level: int, seed: int):
    return generate_mt(seeded_generator(seed), level)


# --- MT103 text surgery -----------------------------------------------------------------------


def with_field(mt: str, base: str, value: str | None, tag: str | None = None) -> str:
    """``mt`` with its first field of option group ``base`` replaced by ``tag``/``value``
    (None: dropped), or the field inserted in MT103 order when there is none."""
    from textgyms.envs.iso20022.mtparse import ORDER, base_tag

    msg = parse(mt)
    fields = list(msg.fields)
    idx = next((i for i, (t, _) in enumerate(fields) if base_tag(t) == base), None)
    if idx is None:
        if value is None:
            return mt
        rank = ORDER.index(base)
        idx = next((i for i, (t, _) in enumerate(fields)
                    if ORDER.index(base_tag(t)) > rank), len(fields))
        fields.insert(idx, (tag or base, value))
    elif value is None:
        del fields[idx]
    else:
        fields[idx] = (tag or fields[idx][0], value)
    head = mt[: mt.index("{4:\n") + 4]
    return head + "".join(f":{t}:{v}\n" for t, v in fields) + "-}"


def field(mt: str, base: str) -> tuple[str, str] | None:
    return parse(mt).first(base)


def toggle_bic(bic: str) -> str:
    """The other form of a head-office BIC (BIC8 <-> BIC8 + XXX)."""
    return bic[:8] if bic.endswith("XXX") else (bic + "XXX" if len(bic) == 8 else bic)


# --- the table itself ---------------------------------------------------------------------------


def test_one_material_table_names_both_directions():
    keys = [m.key for m in material.MATERIAL]
    assert len(keys) == len(set(keys))
    both = [m for m in material.MATERIAL if m.mt and m.mx]
    # who pays, who is paid, through whom, how much, when, and the chain's references
    for must in ("settlement", "instructed", "rate", "charges", "debtor", "creditor",
                 "debtor_account", "creditor_account", "creditor_agent", "intermediary",
                 "uetr", "end_to_end", "remittance"):
        assert must in [m.key for m in both], must
    assert all(m.rule and m.kind in ("value", "agent", "present") for m in material.MATERIAL)
    assert material.cap(0) == 1.0 and material.cap(1) == 0.5 and material.cap(4) <= 0.1


def test_the_docs_list_every_material_element_and_alternative():
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "envs" / "iso20022.md").read_text()
    for row in material.MATERIAL:
        assert row.what in doc, row.what
    for _, form, rule in material.ALTERNATIVES:
        assert form in doc and rule in doc, form


# --- forward (pacs.008 -> MT103) ----------------------------------------------------------------


def forward_alternatives(ref: str) -> dict[str, str]:
    """Answers the MT103 standard accepts as the same payment (name -> answer)."""
    msg = parse(ref)
    sender, receiver = parties(msg)
    out = {}
    if field(ref, "57") is None:  # 57a usage rule: absent = the receiver
        out["57A names the receiver"] = with_field(ref, "57", receiver, "57A")
    if field(ref, "52") is None:  # 52a usage rule: absent = the sender
        out["52A names the sender"] = with_field(ref, "52", sender, "52A")
    bic8 = ref
    for tag, value in msg.fields:  # BIC8 = BIC8 + XXX in every option-A field
        if tag.endswith("A") and tag[:2] in ("50", "52", "53", "54", "56", "57", "59"):
            lines = value.split("\n")
            lines[-1] = toggle_bic(lines[-1])
            bic8 = with_field(bic8, tag[:2], "\n".join(lines), tag)
    if field(ref, "72"):  # and in the /INS/ and /INTA/ lines of 72
        bic8 = with_field(bic8, "72", re.sub(r"^(/(?:INS|INTA)/)(\w+)$", lambda m: m.group(1)
                                             + toggle_bic(m.group(2)), field(ref, "72")[1],
                                             flags=re.M))
    out["BIC8/BIC11 everywhere"] = bic8
    if field(ref, "70") is not None:  # 70: lines are a width limit
        text = " ".join(field(ref, "70")[1].split("\n")[1:]) if field(ref, "70")[1].startswith(
            "/ROC/") else ""
        if text and len(text) <= 3 * 30 and "/" not in text[:1]:
            first = field(ref, "70")[1].split("\n")[0]
            words = [text[i:i + 30] for i in range(0, len(text), 30)]
            out["70 rewrapped"] = with_field(ref, "70", "\n".join([first, *words]))
    return out


def test_the_alternatives_score_one_through_the_envs():
    env = gym.make("textgyms/ISO20022-MT103-v4", difficulty=2)
    for seed in SEEDS:
        env.reset(seed=seed)
        ref = env.unwrapped.task.reference
        for name, alt in forward_alternatives(ref).items():
            env.reset(seed=seed)
            *_, info = env.step(f"<answer>{alt}</answer>")
            assert info["score"] == 1.0, name
    env.close()
    env = gym.make("textgyms/MT103ToISO20022-v3", difficulty=3)
    env.reset(seed=1)
    *_, info = env.step(f"<answer>{iso.translate_mt(env.unwrapped.task.mt, header=True)}"
                        "</answer>")
    assert info["score"] == 1.0 and info["solved"]
    env.close()


@pytest.mark.parametrize(("level", "seed"), CASES)
def test_forward_accepted_alternatives_score_one(level, seed):
    ref = forward(level, seed)
    for name, alt in forward_alternatives(ref).items():
        assert validate_text(alt) == [], (name, validate_text(alt))
        assert iso.score(ref, alt).score == 1.0, (name, iso.score(ref, alt).feedback)


def forward_wrong(ref: str) -> dict[str, str]:
    """One answer per MT103 material element, that element changed (place -> answer)."""
    msg = parse(ref)
    sender, receiver = parties(msg)
    out: dict[str, str] = {}
    v32 = field(ref, "32A")[1]
    out["32A"] = with_field(ref, "32A", v32[:9] + "9" + v32[9:])
    if field(ref, "33B"):
        v = field(ref, "33B")[1]
        out["33B"] = with_field(ref, "33B", v[:3] + "9" + v[3:])
    if field(ref, "36"):
        out["36"] = with_field(ref, "36", "9" + field(ref, "36")[1])
    code = field(ref, "71A")[1]
    out["71A"] = with_field(ref, "71A", "OUR" if code != "OUR" else "SHA")
    out["sender"] = ref.replace(f"F01{sender[:8]}A{sender[8:]}", "F01ZZZZDEZZAXXX", 1)
    out["receiver"] = ref.replace(f"I103{receiver[:8]}X{receiver[8:]}", "I103ZZZZDEZZXXXX", 1)
    out["52"] = with_field(ref, "52", OTHER_BIC, "52A")
    out["57"] = with_field(ref, "57", OTHER_BIC, "57A")
    if field(ref, "56"):
        out["56"] = with_field(ref, "56", OTHER_BIC, "56A")
    for base in ("50", "59"):
        tag, value = field(ref, base)
        lines = value.split("\n")
        acct = lines[0].startswith("/") or re.match(r"[A-Z]{4}/[A-Z]{2}/", lines[0])
        if acct:
            lines[0] = lines[0][:-3] + ("999" if lines[0][-3:] != "999" else "888")
            out[f"{base}.account"] = with_field(ref, base, "\n".join(lines), tag)
            lines = value.split("\n")
        i = 1 if acct else 0
        if tag.endswith("A"):
            lines[-1] = OTHER_BIC
        else:
            lines[i] = ("1/" if tag.endswith("F") else "") + "SOMEONE ELSE ENTIRELY"
        out[base] = with_field(ref, base, "\n".join(lines), tag)
    out["121"] = ref.replace(re.search(r"\{121:([^}]*)\}", ref).group(1),
                             "00000000-0000-4000-8000-000000000000")
    v70 = field(ref, "70")
    if v70:
        lines = v70[1].split("\n")
        if not lines[0].startswith("/ROC/") or len(lines) > 1:  # remittance text to drop
            out["70"] = with_field(ref, "70", None)
        if lines[0].startswith("/ROC/") and len(lines) > 1:
            out["70./ROC/"] = with_field(ref, "70", "\n".join(lines[1:]))
    return out


@pytest.mark.parametrize(("level", "seed"), CASES)
def test_forward_each_material_element_fails(level, seed):
    ref = forward(level, seed)
    wrong = forward_wrong(ref)
    places = {m.mt for m in material.MT_MATERIAL}
    assert set(wrong) <= places
    for place, answer in wrong.items():
        v = iso.score(ref, answer)
        assert v.score <= 0.5 and v.parts["material"] == 0.0, (place, v.feedback)
        assert f"{place} (" in v.feedback, (place, v.feedback)


def test_forward_probes_cover_every_mt_row():
    seen = set()
    for level, seed in CASES:
        seen |= set(forward_wrong(forward(level, seed)))
    assert seen == {m.mt for m in material.MT_MATERIAL}


def reorder(value: str) -> str | None:
    """The lines of a field in another order (None when it has one distinct line)."""
    lines = value.split("\n")
    new = lines[::-1]
    return None if new == lines else "\n".join(new)


@pytest.mark.parametrize(("level", "seed"), CASES)
def test_forward_line_order_costs_clearly(level, seed):
    ref = forward(level, seed)
    for base in ("50", "59", "70", "72", "77B"):
        f = field(ref, base)
        if f is None or reorder(f[1]) is None:
            continue
        v = iso.score(ref, with_field(ref, base, reorder(f[1]), f[0]))
        if base in ("72", "77B") and sorted(segments(f[1])) == sorted(segments(reorder(f[1]))):
            assert v.score == 1.0, (base, v.feedback)  # whole code segments: order is free
            continue
        assert v.score <= ORDER_CAP, (base, v.feedback)


def test_forward_line_order_probes_of_the_issue():
    ref = forward(2, 1)
    for base in ("50", "59"):
        tag, value = field(ref, base)
        lines = value.split("\n")
        if tag[2:] in ("", "K") and lines[0].startswith("/") and len(lines) > 2:
            moved = with_field(ref, base, "\n".join(lines[1:] + lines[:1]), tag)
            assert validate_text(moved), base  # the account line must come first
            assert iso.score(ref, moved).score <= 0.5
            late = with_field(ref, base, "\n".join([lines[0], *lines[2:], lines[1]]), tag)
            assert iso.score(ref, late).score <= 0.5  # the name after the address lines
    seg = ":72:/REC/PLEASE ADVISE THE\n//BENEFICIARY\n/ACC/CALL FIRST\n"
    base = with_field(ref, "72", seg.strip()[4:])
    moved = with_field(ref, "72", "/REC/PLEASE ADVISE THE\n/ACC/CALL FIRST\n//BENEFICIARY")
    assert iso.score(base, moved).score <= ORDER_CAP
    # whole code segments in another order say the same: 72 has no order between codes
    swapped = with_field(ref, "72", "/ACC/CALL FIRST\n/REC/PLEASE ADVISE THE\n//BENEFICIARY")
    assert validate_text(swapped) == validate_text(base) and iso.score(base, swapped).score == 1


# --- reverse (MT103 -> pacs.008) --------------------------------------------------------------


def sub1(pattern: str, repl, xml: str) -> str:
    new = re.sub(pattern, repl, xml, count=1, flags=re.S)
    assert new != xml, pattern
    return new


def reverse_alternatives(task) -> dict[str, str]:
    ref = task.reference
    return {
        "AppHdr + Document for a Document-only task": iso.translate_mt(task.mt, header=True),
        "BIC8/BIC11 everywhere": re.sub(r"<BICFI>(\w{8})(XXX)?</BICFI>",
                                        lambda m: f"<BICFI>{m.group(1)}"
                                                  f"{'' if m.group(2) else 'XXX'}</BICFI>", ref),
        "names in lower case": re.sub(r"<Nm>([^<]*)</Nm>", lambda m: f"<Nm>{m.group(1).lower()}"
                                      "</Nm>", ref),
        "no indentation": re.sub(r">\s+<", "><", ref),
        "another creation time": re.sub(r"<CreDtTm>[^<]*", "<CreDtTm>2031-01-01T08:09:10Z", ref),
    }


@pytest.mark.parametrize(("level", "seed"), CASES)
def test_reverse_accepted_alternatives_score_one(level, seed):
    task = reverse(level, seed)
    for name, alt in reverse_alternatives(task).items():
        assert xsd.validate_xml(alt) == [], name
        assert iso.score_mx(task.reference, alt).score == 1.0, (
            name, iso.score_mx(task.reference, alt).feedback)


def _tag(name: str, xml: str) -> str:
    return re.search(rf"<{name}\b.*?</{name}>", xml, re.S).group(0)


def reverse_wrong(ref: str) -> dict[str, str]:
    """One XSD-valid answer per pacs.008 material element, that element changed."""
    out = {"settlement": sub1(r'(<IntrBkSttlmAmt Ccy="\w+">)(\d)', r"\g<1>9\2", ref),
           "charges": sub1(r"<ChrgBr>(\w+)</ChrgBr>", lambda m: "<ChrgBr>" + (
               "CRED" if m.group(1) != "CRED" else "DEBT") + "</ChrgBr>", ref)}
    if "<InstdAmt" in ref:
        out["instructed"] = sub1(r'(<InstdAmt Ccy="\w+">)(\d)', r"\g<1>9\2", ref)
    if "<XchgRate>" in ref:
        out["rate"] = sub1(r"<XchgRate>", "<XchgRate>9", ref)
    for key, element in (("sender", "InstgAgt"), ("receiver", "InstdAgt"),
                         ("debtor_agent", "DbtrAgt"), ("creditor_agent", "CdtrAgt"),
                         ("intermediary", "IntrmyAgt1")):
        if f"<{element}>" in ref:
            block = _tag(element, ref)
            new = re.sub(r"<BICFI>\w+</BICFI>", f"<BICFI>{OTHER_BIC}</BICFI>", block)
            if new == block:  # an agent without a BIC: another member id
                new = re.sub(r"<MmbId>(\w)", r"<MmbId>9\1", block)
            out[key] = ref.replace(block, new)
    for key, element in (("debtor", "Dbtr"), ("creditor", "Cdtr")):
        block = _tag(element, ref)
        if "<Nm>" in block:
            new = re.sub(r"<Nm>[^<]*</Nm>", "<Nm>SOMEONE ELSE ENTIRELY</Nm>", block, count=1)
        else:
            new = re.sub(r"<AnyBIC>\w+</AnyBIC>", f"<AnyBIC>{OTHER_BIC}</AnyBIC>", block)
        out[key] = ref.replace(block, new)
    for key, element in (("debtor_account", "DbtrAcct"), ("creditor_account", "CdtrAcct")):
        if f"<{element}>" in ref:
            block = _tag(element, ref)
            new = re.sub(r"<(IBAN|Id)>(\w+)(\w\w)</", lambda m: f"<{m.group(1)}>{m.group(2)}"
                         f"{'00' if m.group(3) != '00' else '11'}</", block)
            out[key] = ref.replace(block, new)
    if "<UETR>" in ref:
        out["uetr"] = sub1(r"\s*<UETR>[^<]*</UETR>", "", ref)
    out["end_to_end"] = sub1(r"<EndToEndId>[^<]*</EndToEndId>",
                             "<EndToEndId>SOMETHING-ELSE</EndToEndId>", ref)
    if "<RmtInf>" in ref:
        out["remittance"] = sub1(r"\s*<RmtInf>.*?</RmtInf>", "", ref)
    return out


@pytest.mark.parametrize(("level", "seed"), CASES)
def test_reverse_each_material_element_fails(level, seed):
    task = reverse(level, seed)
    ref = task.reference
    for key, answer in reverse_wrong(ref).items():
        assert xsd.validate_xml(answer) == [], (key, xsd.validate_xml(answer))
        v = iso.score_mx(ref, answer)
        assert v.score <= 0.5 and v.parts["material"] == 0.0, (key, v.feedback)
        assert f"{key} (" in v.feedback, (key, v.feedback)
    header = iso.translate_mt(task.mt, header=True)
    to = _tag("To", header)
    wrong_to = header.replace(to, re.sub(r"<BICFI>\w+<", f"<BICFI>{OTHER_BIC}<", to))
    assert iso.score_mx(ref, wrong_to).score <= 0.5  # a header there must be right


def test_reverse_probes_cover_every_mx_row():
    seen = set()
    for level, seed in CASES:
        seen |= set(reverse_wrong(reverse(level, seed).reference))
    assert seen | {"header"} == {m.key for m in material.MX_MATERIAL}


def test_names_swapped_with_their_accounts_kept_fail():
    for level, seed in CASES:
        ref = reverse(level, seed).reference
        names = re.search(r"<Dbtr>\s*<Nm>([^<]*)</Nm>.*<Cdtr>\s*<Nm>([^<]*)</Nm>", ref, re.S)
        if names is None:
            continue
        a, b = names.group(1), names.group(2)
        swapped = ref.replace(f"<Nm>{a}</Nm>", "<Nm>@A@</Nm>").replace(
            f"<Nm>{b}</Nm>", f"<Nm>{a}</Nm>").replace("<Nm>@A@</Nm>", f"<Nm>{b}</Nm>")
        assert iso.score_mx(ref, swapped).score <= 0.5, (level, seed)
        mt = reverse(level, seed).mt
        d, c = field(mt, "50"), field(mt, "59")
        if d[0] == "50K" and c[0] == "59" and d[1].startswith("/") and c[1].startswith("/"):
            dl, cl = d[1].split("\n"), c[1].split("\n")
            dl[1], cl[1] = cl[1], dl[1]
            mt2 = with_field(with_field(mt, "50", "\n".join(dl), "50K"), "59", "\n".join(cl))
            assert iso.score(mt, mt2).score <= 0.5


# --- the schema gate ---------------------------------------------------------------------------


def schema_breakers(ref: str) -> dict[str, str]:
    """The issue's schema-invalid answers: each must score at most SCHEMA_GATE."""
    amount = re.search(r'<IntrBkSttlmAmt Ccy="(\w+)">([\d.]+)<', ref)
    return {
        "missing mandatory element": sub1(r"\s*<NbOfTxs>1</NbOfTxs>", "", ref),
        "renamed element": sub1(r"<ChrgBr>(\w+)</ChrgBr>", r"<ChargeBearer>\1</ChargeBearer>",
                                ref),
        "currency in the amount": ref.replace(amount.group(0), amount.group(0).replace(
            f">{amount.group(2)}<", f">{amount.group(1)} {amount.group(2)}<")),
        "decimal comma": ref.replace(amount.group(0), amount.group(0).replace(
            f">{amount.group(2)}<", f">{amount.group(2).replace('.', ',')}<"))
        if "." in amount.group(2) else ref.replace(amount.group(0), amount.group(0).replace(
            f">{amount.group(2)}<", f">{amount.group(2)},00<")),
        "sequence order": _unordered(ref),
        "9-character BIC": sub1(r"<BICFI>(\w{8})(XXX)?</BICFI>", r"<BICFI>\g<1>X</BICFI>", ref),
        "lower-case Ccy": sub1(r'Ccy="(\w+)"', lambda m: f'Ccy="{m.group(1).lower()}"', ref),
        "upper-case UETR": sub1(r"<UETR>([^<]*)</UETR>",
                                lambda m: f"<UETR>{m.group(1).upper()}</UETR>", ref)
        if "<UETR>" in ref else _unordered(ref),
    }


def _unordered(xml: str) -> str:
    chrg = re.search(r"\s*<ChrgBr>\w+</ChrgBr>", xml).group(0)
    return xml.replace(chrg, "").replace("<IntrBkSttlmAmt", chrg.strip() + "<IntrBkSttlmAmt", 1)


@pytest.mark.parametrize(("level", "seed"), CASES[::3])
def test_schema_invalid_answers_score_at_most_the_gate(level, seed):
    ref = reverse(level, seed).reference
    for name, answer in schema_breakers(ref).items():
        errors = xsd.validate_xml(answer)
        assert errors, name
        v = iso.score_mx(ref, answer)
        assert v.score <= SCHEMA_GATE and v.parts["format"] == SCHEMA_GATE, name
        assert "Not valid against the XSD" in v.feedback and v.error == "invalid", name


def test_the_schema_gate_reason_is_in_info():
    env = gym.make("textgyms/MT103ToISO20022-v3", difficulty=2)
    env.reset(seed=3)
    ref = env.unwrapped.task.reference
    *_, info = env.step(f"<answer>{_unordered(ref)}</answer>")
    assert info["score"] <= SCHEMA_GATE and info["error"] == "invalid"
    assert info["schema_errors"] and "ChrgBr" in " ".join(info["schema_errors"])
    env.reset(seed=3)
    *_, info = env.step(f"<answer>{env.unwrapped.task.reference}</answer>")
    assert info["score"] == 1.0 and info["schema_errors"] == []
    env.close()


def test_codes_and_identifiers_are_compared_as_written():
    # The XSD catches these; the comparison must not fold them either (ids are case-exact).
    ref = reverse(2, 0).reference
    e2e = re.search(r"<EndToEndId>([^<]*)<", ref).group(1)
    other = ref.replace(f"<EndToEndId>{e2e}<", f"<EndToEndId>{e2e.lower()}<")
    if e2e != e2e.lower():
        assert xsd.validate_xml(other) == [] and iso.score_mx(ref, other).score <= 0.5


# --- the junk floor -------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_another_payments_answer_scores_at_most_a_tenth(level):
    for seed in SEEDS:
        ref = forward(level, seed)
        other = forward(level, seed + 100)
        assert iso.score(ref, other).score <= 0.1, (level, seed, iso.score(ref, other).feedback)
        task, other_mx = reverse(level, seed), reverse(level, seed + 100)
        for header in (False, True):
            answer = iso.translate_mt(other_mx.mt, header=header)
            v = iso.score_mx(task.reference, answer)
            assert v.score <= 0.1, (level, seed, header, v.feedback)


def test_old_ids_are_deprecated_the_gymnasium_way():
    for old, new in (("textgyms/ISO20022-MT103-v2", "ISO20022-MT103-v4"),
                     ("textgyms/ISO20022-MT103-v3", "ISO20022-MT103-v4"),
                     ("textgyms/MT103ToISO20022-v1", "MT103ToISO20022-v3"),
                     ("textgyms/MT103ToISO20022-v2", "MT103ToISO20022-v3")):
        with pytest.warns(DeprecationWarning, match="out of date"), pytest.raises(
                gym.error.DeprecatedEnv, match=new):
            gym.make(old)
