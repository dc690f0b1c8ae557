"""Real-data regression of the ISO 20022 family: sample messages published by other open-source
ISO 20022 / MT projects (provenance and licence in tests/golden/iso20022/real/PROVENANCE.md),
in both directions, and the agreement with the expected values those projects publish."""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import xsd
from textgyms.envs.iso20022.mt103 import parse, validate_text
from textgyms.envs.iso20022.mx import load, text

REAL = Path(__file__).parent / "golden" / "iso20022" / "real"
MX = sorted(p for p in REAL.glob("*.xml") if "pacs.008.001.07" not in p.name)
MT = sorted(REAL.glob("*.txt"))
PAIRS = REAL / "pairs"
PUBLISHED = json.loads((PAIRS / "published.json").read_text(encoding="utf-8"))
# Agreement floors per direction (measured: MT -> MX 83/94, MX -> MT 28/30; see PROVENANCE.md).
# MT -> MX stays under 0.90 because the publishers do not follow the rules the reference
# does on the fields in DOCUMENTED; every remaining difference must be one of those.
FLOOR = {"mt_to_mx": 0.88, "mx_to_mt": 0.93}
DOCUMENTED = {
    # EndToEndId: /ROC/ of 70, else NOTPROVIDED (publishers copy 20 or the UETR); SttlmMtd:
    # INDA without 53a/54a (the loader defaults to CLRG); a 121 that is no UUID v4 (FIN
    # rejects it) gives no UETR; 50K/59 lines stay AdrLine (no country is read from a
    # country name such as GERMANY).
    "mt_to_mx": ("PmtId/EndToEndId", "GrpHdr/SttlmInf/SttlmMtd", "PmtId/UETR",
                 "Dbtr/PstlAdr/Ctry", "Cdtr/PstlAdr/Ctry", "Dbtr/PstlAdr/AdrLine",
                 "Cdtr/PstlAdr/AdrLine"),
    # 70 starts with /ROC/ + an EndToEndId other than NOTPROVIDED; 71A OUR takes 71G, never
    # 71F (network rule E13).
    "mx_to_mt": (":70:", ":71F:"),
}


def test_the_files_match_their_recorded_sha256():
    sums = dict(reversed(line.split()) for line in (REAL / "SHA256SUMS").read_text().splitlines())
    shipped = [p for p in (*REAL.iterdir(), *PAIRS.iterdir())
               if p.is_file() and p.name not in ("SHA256SUMS", "PROVENANCE.md")]
    assert sorted(sums) == sorted(str(p.relative_to(REAL)) for p in shipped)
    for name, digest in sums.items():
        assert hashlib.sha256((REAL / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("path", MX, ids=lambda p: p.name)
def test_real_pacs008_translate_to_valid_mt103(path):
    xml = path.read_text(encoding="utf-8")
    assert xsd.validate_xml(xml) == []
    mt = iso.translate(xml)
    assert validate_text(mt) == [], mt
    amount = re.search(r'<IntrBkSttlmAmt Ccy="(\w{3})">([\d.]+)<', xml)
    assert f"{amount.group(1)}{amount.group(2).replace('.', ',')}" in mt


def test_an_unsupported_version_is_refused_clearly():
    xml = (REAL / "prowide_pacs.008.001.07.xml").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"pacs.008.001.07 is not supported.*08 to .13"):
        iso.translate(xml)


@pytest.mark.parametrize("path", MT, ids=lambda p: p.name)
def test_real_mt103_translate_to_xsd_valid_pacs008(path):
    mt = path.read_text(encoding="utf-8")
    assert parse(mt) is not None
    xml = iso.translate_mt(mt)
    assert xsd.validate_xml(xml) == []
    amount = parse(mt).get("32A")[0]
    assert f'Ccy="{amount[6:9]}">{amount[9:].replace(",", ".")}' in xml


def _bic(value: str | None) -> str | None:
    return value + "XXX" if value and len(value) == 8 else value


def _either(tx, gh, path: str) -> str | None:
    return text(tx, path) or text(gh, path)


def mx_fields(xml: str) -> dict[str, str]:
    """The business fields of a pacs.008 (any supported version) as comparable strings:
    amounts as numbers, BICs in their 11-character form, address lines joined by " | ",
    absent fields omitted. GrpHdr/CreDtTm is left out: an MT103 has no creation time, so
    every translator writes its own clock there (the verifier does not score it either)."""
    doc = load(xml).doc
    gh, tx = doc.find("FIToFICstmrCdtTrf/GrpHdr"), doc.find("FIToFICstmrCdtTrf/CdtTrfTxInf")
    out = {"GrpHdr/MsgId": text(gh, "MsgId"), "GrpHdr/NbOfTxs": text(gh, "NbOfTxs"),
           "GrpHdr/SttlmInf/SttlmMtd": text(gh, "SttlmInf/SttlmMtd")}
    for path in ("PmtId/InstrId", "PmtId/EndToEndId", "PmtId/UETR", "IntrBkSttlmDt", "ChrgBr",
                 "Dbtr/Nm", "Dbtr/PstlAdr/Ctry", "Cdtr/Nm", "Cdtr/PstlAdr/Ctry",
                 "InstrForCdtrAgt/InstrInf", "Purp/Prtry"):
        out[path] = text(tx, path)
    for tag in ("IntrBkSttlmAmt", "InstdAmt"):
        node = tx.find(tag)
        if node is not None:
            out[tag], out[f"{tag}@Ccy"] = str(Decimal(node.text).normalize()), node.get("Ccy")
    fees = [f"{c.find('Amt').get('Ccy')} {Decimal(c.find('Amt').text).normalize()}"
            for c in tx.findall("ChrgsInf")]
    out["ChrgsInf/Amt"] = " | ".join(fees) or None
    for role in ("Dbtr", "Cdtr"):
        lines = [a.text or "" for a in tx.findall(f"{role}/PstlAdr/AdrLine")]
        out[f"{role}/PstlAdr/AdrLine"] = " | ".join(lines) or None
    for acct in ("DbtrAcct", "CdtrAcct", "DbtrAgtAcct", "CdtrAgtAcct"):
        out[acct] = text(tx, f"{acct}/Id/IBAN") or text(tx, f"{acct}/Id/Othr/Id")
    for agt in ("DbtrAgt", "CdtrAgt", "IntrmyAgt1", "InstgAgt", "InstdAgt"):
        out[agt] = _bic(_either(tx, gh, f"{agt}/FinInstnId/BICFI"))
    ustrd = [u.text or "" for u in tx.findall("RmtInf/Ustrd")]
    out["RmtInf/Ustrd"] = " ".join(ustrd) or None
    return {k: v for k, v in out.items() if v is not None}


def _published_mx(case: dict) -> dict[str, str]:
    if "expected_xml" in case:
        return mx_fields((PAIRS / case["expected_xml"]).read_text(encoding="utf-8"))
    norm = {k: str(Decimal(v).normalize()) if k in ("IntrBkSttlmAmt", "InstdAmt") else v
            for k, v in case["expected"].items()}
    return {k: _bic(v) if k.endswith("Agt") else v for k, v in norm.items()}


def mt_to_mx_agreement() -> tuple[int, int, list[str]]:
    """(agreeing, published, differences) over every published MT103 -> pacs.008 value."""
    agree, total, diffs = 0, 0, []
    for case in PUBLISHED["mt_to_mx"]:
        ours = mx_fields(iso.translate_mt((PAIRS / case["input"]).read_text(encoding="utf-8")))
        for key, value in _published_mx(case).items():
            total += 1
            if ours.get(key) == value:
                agree += 1
            else:
                diffs.append(f"{case['input']} {key}: published {value!r}, ours {ours.get(key)!r}")
    return agree, total, diffs


def _mt_fields(mt: str) -> list[tuple[str, str]]:
    """Block-4 fields with option-A BIC lines in their 11-character form."""
    out = []
    for tag, value in parse(mt).fields:
        lines = value.split("\n")
        if tag[-1] == "A" and tag[:2] in ("52", "53", "54", "56", "57"):
            lines[-1] = _bic(lines[-1])
        out.append((tag, "\n".join(lines)))
    return out


def mx_to_mt_agreement() -> tuple[int, int, list[str]]:
    """(agreeing, published, differences) over every published pacs.008 -> MT103 field."""
    agree, total, diffs = 0, 0, []
    for case in PUBLISHED["mx_to_mt"]:
        source = case["input"]
        if source.startswith("mt:"):  # a round trip through textgyms' own MT -> MX translation
            ours = iso.translate(iso.translate_mt((PAIRS / source[3:]).read_text(encoding="utf-8")))
            checks = [(v, v in ours) for v in case["expected_lines"] + case["expected_text"]]
        else:
            ours = iso.translate((PAIRS / source).read_text(encoding="utf-8"))
            mine = _mt_fields(ours)
            expected = _mt_fields((PAIRS / case["expected_mt"]).read_text(encoding="utf-8"))
            checks = [(f":{t}:{v}", (t, v) in mine) for t, v in expected]
        for value, ok in checks:
            total += 1
            agree += ok
            if not ok:
                diffs.append(f"{source}: published {value!r} not in ours")
    return agree, total, diffs


@pytest.mark.parametrize("direction", ["mt_to_mx", "mx_to_mt"])
def test_agreement_with_published_translations(direction):
    agree, total, diffs = (mt_to_mx_agreement if direction == "mt_to_mx"
                           else mx_to_mt_agreement)()
    assert total >= 30
    assert agree / total >= FLOOR[direction], "\n".join(diffs)
    undocumented = [d for d in diffs if not any(f" {k}" in d or f"'{k}" in d
                                                for k in DOCUMENTED[direction])]
    assert undocumented == []


def test_every_published_input_translates_to_a_valid_message():
    for case in PUBLISHED["mt_to_mx"]:
        xml = iso.translate_mt((PAIRS / case["input"]).read_text(encoding="utf-8"))
        assert xsd.validate_xml(xml) == [], case["input"]
    for case in PUBLISHED["mx_to_mt"]:
        if not case["input"].startswith("mt:"):
            xml = (PAIRS / case["input"]).read_text(encoding="utf-8")
            # paymsg's samples lack the mandatory SttlmInf (and one has a UETR that is no
            # UUID v4): they translate, but only a valid input can give a valid MT103.
            assert xsd.validate_xml(xml) != [] and parse(iso.translate(xml)) is not None


def test_the_known_differences_are_the_documented_rule_choices():
    # Where the publishers differ from the SWIFT rules the reference follows: the EndToEndId
    # (NOTPROVIDED without a /ROC/ in 70; publishers copy 20 or the UETR), a 121 that is no
    # UUID v4 (FIN rejects it), and 33B between EU-list countries (network rule C2).
    xml = iso.translate_mt((PAIRS / "paymsg_pair1_sepa_transfer.source.mt").read_text())
    assert "<EndToEndId>NOTPROVIDED<" in xml and "<UETR>" not in xml
    mt = iso.translate((PAIRS / "paymsg_pair3_minimal.expected.xml").read_text())
    assert ":33B:EUR500,00" in mt  # DE and FR are both on the EU list (C2, error D49)
